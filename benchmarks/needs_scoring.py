"""How a record's enrichment needs are best scored against a query: embedded together as one
text (the ``needs`` aspect as built) or one by one, the record scored by its best need.

Usage: python benchmarks/needs_scoring.py [--json]
(with ``PYTHONPATH=layers/core:cli``; a few minutes on two cores, the model already cached)

Dense retrieval only, exact cosine in numpy over the 284 bundled tools records
(``layers/core/agentic_search/data/tools.jsonl``) with the enrichment the first-use index
attaches to them (``data/tools.enrichment.jsonl``: each record's ``kept`` needs and its
``category``, looked up by record id, prompt version and the hash of the text the prompt read,
as the ingest does), embedded by the configured embedder (``build_embedder(Settings())``: the
default is MiniLM int8; documents through ``embed_documents``, each query through
``embed_query``, as the index and a search do). Variants, each a ranking of at most 100 ids:

* ``needs-together``: the ``needs`` aspect's own text (``aspect_text``: category and needs
  joined as the indexer joins them), one vector a record;
* ``best-need``: each kept need embedded alone, a record scored by its best need's cosine
  (``+cat``: the category as one more need);
* ``mean-needs``: the mean of a record's need vectors, L2-normalised, as one vector;
* ``record``: the whole-record aspect's text (no enrichment), the baseline;
* ``X + record``: RRF (k = 60, equal weights, the project's ``logic.fusion.rrf``) of X and
  ``record``.

A record without a vector in a variant is not in its ranking (as a named vector a point lacks
is not searched). Whether the category counts as a need is chosen on the tuning split (higher
nDCG@10 of ``best-need``) and both are printed. nDCG@10 by the project's metric code
(``agentic_search_cli.evaluation.metrics``, pytrec_eval) over the answerable queries of
``benchmarks/tools_queries`` (graded qrels), per split and per query kind.

Prints the count of records with no kept needs and with no needs text at all, then one table
row per variant: tuning all / task, held-out all / task / non-English; ``--json`` prints every
kind of both splits instead.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentic_search.config import Settings
from agentic_search.logic.enrichment import PROMPTS, record_prompt_text, text_sha256
from agentic_search.logic.fusion import DEFAULT_RRF_K, rrf
from agentic_search.logic.schema import load_schema
from agentic_search.logic.text import aspect_text
from agentic_search.sync.shipped_enrichment import shipped_enrichment
from agentic_search.wire import RankedList
from agentic_search.wire.records import CATEGORY_KEY, NEEDS_KEY
from agentic_search.wiring import build_embedder
from agentic_search_cli.evaluation.datasets import read_qrels
from agentic_search_cli.evaluation.metrics import evaluate_rankings, mean_metrics, means_by_type

ROOT = Path(__file__).resolve().parents[1]
QUERIES = ROOT / "benchmarks" / "tools_queries"
CATALOG = ROOT / "layers/core/agentic_search/data/tools.jsonl"
TOP_K = 100
COLUMNS = (
    ("tuning", None),
    ("tuning", "task"),
    ("heldout", None),
    ("heldout", "task"),
    ("heldout", "non-english"),
)


def best_need_scores(
    queries: np.ndarray, needs: np.ndarray, owners: Sequence[int], n_records: int
) -> np.ndarray:
    """Each record's best cosine over its needs, for each query.

    ``queries``: ``(q, dim)`` and ``needs``: ``(n, dim)``, both L2-normalised; ``owners[i]``:
    the record index (``0 <= owner < n_records``) need ``i`` belongs to. Returns ``(q,
    n_records)`` float32, ``-inf`` for a record with no need.

    Raises:
        ValueError: when ``owners`` does not give one record index per need, or one is out of
            range.
    """
    owner = np.asarray(owners, dtype=np.int64)
    if owner.shape != (needs.shape[0],):
        raise ValueError(f"{needs.shape[0]} needs but {owner.shape[0]} owners")
    if owner.size and (owner.min() < 0 or owner.max() >= n_records):
        raise ValueError("an owner index is outside the records")
    out = np.full((queries.shape[0], n_records), -np.inf, dtype=np.float32)
    if owner.size:
        cos = (queries @ needs.T).astype(np.float32)  # (q, n)
        np.maximum.at(out.T, owner, cos.T)
    return out


def mean_vectors(needs: np.ndarray, owners: Sequence[int], n_records: int) -> np.ndarray:
    """Each record's mean need vector, L2-normalised: ``(n_records, dim)``, a zero row for
    a record with no need."""
    owner = np.asarray(owners, dtype=np.int64)
    out = np.zeros((n_records, needs.shape[1]), dtype=np.float32)
    np.add.at(out, owner, needs)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)


def rank(scores: np.ndarray, ids: Sequence[str], present: np.ndarray) -> list[str]:
    """The ids of the ``present`` records by ``scores``, best first (ties by id), top
    :data:`TOP_K`."""
    order = sorted((i for i in range(len(ids)) if present[i]), key=lambda i: (-scores[i], ids[i]))
    return [ids[i] for i in order[:TOP_K]]


def fuse(a: Sequence[str], b: Sequence[str]) -> list[str]:
    """Plain RRF (k = 60, equal weights) of two rankings, top :data:`TOP_K`."""
    fused = rrf([RankedList("a", list(a)), RankedList("b", list(b))], DEFAULT_RRF_K)
    return [f.id for f in fused[:TOP_K]]


def enriched_records(schema: Any, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records with ``_needs`` (the shipped ``kept``) and ``_category`` attached where the
    shipped file answers for the record's current text, as the ingest attaches them."""
    shipped = shipped_enrichment(schema.name)
    if shipped is None:
        raise SystemExit("no valid shipped enrichment for the tools domain")
    out = []
    for rec in records:
        rec = dict(rec)
        text = record_prompt_text(schema, rec)
        answer = shipped.answer_for(
            str(rec[schema.id_field]), text_sha256(text), PROMPTS["catalog"].version
        )
        if answer:
            kept = [str(k) for k in answer.get("kept") or []]
            if kept:
                rec[NEEDS_KEY] = kept
            category = " ".join(str(answer.get("category") or "").split())
            if category:
                rec[CATEGORY_KEY] = category
        out.append(rec)
    return out


def load_qrels(split: str) -> dict[str, dict[str, int]]:
    """{query id: {record id: grade}} of a split's answerable queries (eval's own reader)."""
    return read_qrels(QUERIES / "qrels" / f"{split}.tsv")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="every kind of both splits")
    args = parser.parse_args()

    schema = load_schema("tools")
    raw = [json.loads(x) for x in CATALOG.read_text().splitlines() if x.strip()]
    records = enriched_records(schema, raw)
    ids = [str(r[schema.id_field]) for r in records]
    n = len(records)
    queries = [json.loads(x) for x in (QUERIES / "queries.jsonl").read_text().splitlines()]
    qrels = {s: load_qrels(s) for s in ("tuning", "heldout")}
    judged = [q for q in queries if any(q["_id"] in qrels[s] for s in qrels)]
    kinds = {q["_id"]: q["type"] for q in judged}

    embedder = build_embedder(Settings())
    qv = np.stack([embedder.embed_query(q["text"]) for q in judged])

    together_text = [aspect_text(schema, "needs", r) for r in records]
    record_text = [aspect_text(schema, schema.record_aspect, r) for r in records]
    need_texts: list[str] = []
    need_owner: list[int] = []
    cat_texts: list[str] = []
    cat_owner: list[int] = []
    for i, r in enumerate(records):
        for need in r.get(NEEDS_KEY) or []:
            need_texts.append(need)
            need_owner.append(i)
        if r.get(CATEGORY_KEY):
            cat_texts.append(r[CATEGORY_KEY])
            cat_owner.append(i)

    def embed(texts: list[str]) -> np.ndarray:
        dim = embedder.dim
        return embedder.embed_documents(texts) if texts else np.zeros((0, dim), np.float32)

    has_together = np.array([bool(t) for t in together_text])
    together = embed([t for t in together_text if t])
    together_full = np.zeros((n, together.shape[1]), np.float32)
    together_full[has_together] = together
    record_vecs = embed(record_text)
    need_vecs = embed(need_texts)
    cat_vecs = embed(cat_texts)

    has_needs = np.zeros(n, bool)
    has_needs[need_owner] = True
    has_cat = np.zeros(n, bool)
    has_cat[cat_owner] = True
    with_cat_vecs = np.concatenate([need_vecs, cat_vecs])
    with_cat_owner = need_owner + cat_owner

    scores = {
        "needs-together": (qv @ together_full.T, has_together),
        "best-need": (best_need_scores(qv, need_vecs, need_owner, n), has_needs),
        "best-need+cat": (
            best_need_scores(qv, with_cat_vecs, with_cat_owner, n),
            has_needs | has_cat,
        ),
        "mean-needs": (qv @ mean_vectors(need_vecs, need_owner, n).T, has_needs),
        "mean-needs+cat": (
            qv @ mean_vectors(with_cat_vecs, with_cat_owner, n).T,
            has_needs | has_cat,
        ),
        "record": (qv @ record_vecs.T, np.ones(n, bool)),
    }
    runs: dict[str, dict[str, list[str]]] = {
        name: {q["_id"]: rank(s[j], ids, present) for j, q in enumerate(judged)}
        for name, (s, present) in scores.items()
    }
    for name in ("needs-together", "best-need", "best-need+cat", "mean-needs"):
        runs[f"{name} + record"] = {
            qid: fuse(run, runs["record"][qid]) for qid, run in runs[name].items()
        }

    results: dict[str, dict[str, dict[str, float]]] = {}
    for name, run in runs.items():
        results[name] = {}
        for split, rels in qrels.items():
            per_query = evaluate_rankings(rels, run)
            results[name][split] = mean_metrics(per_query)["ndcg@10"]
            for kind, m in means_by_type(per_query, kinds).items():
                results[name][f"{split}/{kind}"] = m["ndcg@10"]
    chosen = max(("best-need", "best-need+cat"), key=lambda v: results[v]["tuning"])

    counts = {
        "records": n,
        "needs_embedded": len(need_texts),
        "categories_embedded": len(cat_texts),
        "records_without_kept_needs": int((~has_needs).sum()),
        "records_without_needs_text": int((~has_together).sum()),
        "chosen_on_tuning": chosen,
        "embedder": embedder.name,
    }
    if args.json:
        print(json.dumps({"counts": counts, "ndcg@10": results}, indent=2))
        return
    for k, v in counts.items():
        print(f"{k}: {v}")
    header = ["variant"] + [f"{s} {k or 'all'}" for s, k in COLUMNS]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, res in results.items():
        cells = [f"{res.get(s if k is None else f'{s}/{k}', float('nan')):.4f}" for s, k in COLUMNS]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
