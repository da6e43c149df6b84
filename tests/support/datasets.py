"""A tiny synthetic BEIR dataset (10 documents, judged queries) for eval and bench tests."""

from __future__ import annotations

import json
from pathlib import Path

DOCS = {
    "d1": ("Photosynthesis", "Chloroplasts turn sunlight, water and carbon dioxide into glucose."),
    "d2": ("Volcano eruptions", "Magma rises through the crust and erupts as lava and ash."),
    "d3": ("Honey bee colonies", "Worker bees forage nectar and pollen; the queen lays eggs."),
    "d4": (
        "Vitamin D and bone density",
        "Sunlight exposure makes vitamin D, which helps calcium absorption and bone strength.",
    ),
    "d5": ("Black holes", "A region of spacetime where gravity is so strong light cannot escape."),
    "d6": ("Sourdough bread", "A starter of wild yeast leavens the dough in a long fermentation."),
    "d7": (
        "Chess openings",
        "The Sicilian Defence answers e4 with c5 and leads to sharp asymmetrical positions.",
    ),
    "d8": (
        "Coral reef bleaching",
        "Warm ocean water makes corals expel their symbiotic algae and turn white.",
    ),
    "d9": ("Electric car batteries", "Lithium-ion cells store the energy of electric vehicles."),
    "d10": (
        "Roman aqueducts",
        "Ancient Roman engineers built stone channels that carried water into cities.",
    ),
    "d11": (
        "Insulin and diabetes",
        "The pancreas releases insulin to lower blood glucose; type 1 diabetes kills beta cells.",
    ),
    "d12": ("Jazz improvisation", "Musicians improvise melodies over chord changes and swing."),
}
QUERIES = {
    "q1": "Sicilian Defence chess",  # d7 is the only document with any of these words
    "q2": "how does sunlight affect bone health",
    "q3": "why do corals turn white in warm seas",
    "q4": "pancreas hormone regulating blood sugar",
    "q5": "ancient water engineering",  # judged in train only
}
TEST_QRELS = [("q1", "d7", 1), ("q2", "d4", 2), ("q2", "d1", 0), ("q3", "d8", 1)]
TEST_QRELS += [("q4", "d11", 1), ("q99", "d1", 1)]  # q99 has no text: not evaluated
TRAIN_QRELS = [("q5", "d10", 1), ("q2", "d4", 1)]


def _qrels_tsv(rows: list[tuple[str, str, int]]) -> str:
    return "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{s}\n" for q, d, s in rows)


def make_dataset(root: Path) -> Path:
    """Write the synthetic BEIR dataset under ``root/tiny`` and return its folder."""
    ds = root / "tiny"
    (ds / "qrels").mkdir(parents=True)
    (ds / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, (t, x) in DOCS.items())
    )
    (ds / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items())
    )
    (ds / "qrels" / "test.tsv").write_text(_qrels_tsv(TEST_QRELS))
    (ds / "qrels" / "train.tsv").write_text(_qrels_tsv(TRAIN_QRELS))
    return ds


#: The shared BEIR datasets (SciFact, HotpotQA) beside the repository, where the machine has
#: them (a clone alone does not: tests that need them skip).
SHARED_DATASETS = Path(__file__).resolve().parents[3] / "shared" / "datasets"


def shared_dataset(name: str) -> Path | None:
    """The shared BEIR dataset folder ``name`` (``scifact``, ``hotpotqa``), None when absent."""
    folder = SHARED_DATASETS / name
    return folder if (folder / "corpus.jsonl").is_file() else None
