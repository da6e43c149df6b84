"""BEIR-layout datasets: corpus, queries and the judged queries of one split.

A dataset folder holds (BEIR, Thakur et al., "BEIR: A Heterogeneous Benchmark for Zero-shot
Evaluation of Information Retrieval Models", NeurIPS Datasets and Benchmarks 2021):

* ``corpus.jsonl``: one ``{"_id", "title", "text"}`` object per line (the ``documents`` domain);
* ``queries.jsonl``: one ``{"_id", "text"}`` object per line, optionally with a ``type``
  (HotpotQA: ``bridge`` or ``comparison``) by which every metric is also broken down;
* ``qrels/<split>.tsv``: a header line ``query-id corpus-id score`` then one judgment per line,
  tab-separated; ``score`` is an integer graded relevance (0 = judged not relevant).

Only queries with at least one judgment in the split are evaluated. The BEIR datasets are
downloaded as ``<name>.zip`` from :data:`BEIR_DOWNLOADS` (a clone ships none).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from agentic_search.domain.schema import DomainSchema
from agentic_search.sync.files import CatalogRead, read_beir_corpus

#: Where the BEIR datasets are published (``<name>.zip`` unzips to a ``<name>/`` folder).
BEIR_DOWNLOADS = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets"


class DatasetError(ValueError):
    """A dataset folder that cannot be evaluated (a usage problem: missing file, bad split)."""


@dataclass
class BeirDataset:
    """A loaded BEIR dataset restricted to the queries judged in one split.

    ``queries`` maps query id -> text in ``queries.jsonl`` order; ``qrels`` maps query id ->
    {corpus id -> integer relevance}; ``corpus`` holds the validated ``documents`` records and
    the rejected corpus lines; ``types`` maps query id -> its ``type`` where queries carry one.
    """

    path: Path
    split: str
    corpus: CatalogRead
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    judged_without_text: int = 0
    types: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The dataset folder's name (e.g. ``scifact``)."""
        return self.path.resolve().name

    @property
    def corpus_ids(self) -> set[str]:
        """Ids of the valid corpus records."""
        return {str(r["id"]) for r in self.corpus.records}

    def limit(self, max_queries: int | None) -> BeirDataset:
        """The same dataset with only its first ``max_queries`` queries (None: all)."""
        if max_queries is None or max_queries >= len(self.queries):
            return self
        keep = list(self.queries)[:max_queries]
        return BeirDataset(
            path=self.path,
            split=self.split,
            corpus=self.corpus,
            queries={q: self.queries[q] for q in keep},
            qrels={q: self.qrels[q] for q in keep},
            judged_without_text=self.judged_without_text,
            types={q: self.types[q] for q in keep if q in self.types},
        )


def available_splits(path: Path) -> list[str]:
    """The qrels splits present in a dataset folder (``qrels/*.tsv`` stems), sorted."""
    qdir = path / "qrels"
    return sorted(p.stem for p in qdir.glob("*.tsv")) if qdir.is_dir() else []


def check_dataset(path: Path, split: str) -> None:
    """Check a folder has the BEIR layout for ``split`` (cheap: only looks at file names).

    Raises:
        DatasetError: naming the first missing piece in one line.
    """
    if not path.is_dir():
        raise DatasetError(
            f"no such dataset folder: {path} (a BEIR dataset, e.g. SciFact: download "
            f"{BEIR_DOWNLOADS}/{path.name or 'scifact'}.zip and unzip it into {path.parent})"
        )
    for name in ("corpus.jsonl", "queries.jsonl"):
        if not (path / name).is_file():
            raise DatasetError(f"{path} has no {name} (BEIR layout expected)")
    if not (path / "qrels" / f"{split}.tsv").is_file():
        splits = available_splits(path)
        have = ", ".join(splits) if splits else "none"
        raise DatasetError(f"{path} has no qrels/{split}.tsv (available splits: {have})")


def read_queries(path: Path) -> dict[str, str]:
    """``queries.jsonl`` -> {query id: text}, in file order (blank lines skipped).

    Raises:
        DatasetError: for a line that is not a JSON object with ``_id`` and ``text``.
    """
    return read_query_file(path)[0]


def read_query_file(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """``queries.jsonl`` -> ({query id: text}, {query id: type} for queries with a ``type``).

    Raises:
        DatasetError: for a line that is not a JSON object with ``_id`` and ``text``.
    """
    out: dict[str, str] = {}
    types: dict[str, str] = {}
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                out[str(obj["_id"])] = str(obj.get("text") or "")
                if obj.get("type"):
                    types[str(obj["_id"])] = str(obj["type"])
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise DatasetError(
                    f"{path} line {number}: not a query object with _id and text ({exc})"
                ) from None
    return out, types


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """``qrels/<split>.tsv`` -> {query id: {corpus id: relevance}}.

    The first line is skipped when it is the ``query-id corpus-id score`` header (any line
    whose score column is not a number is taken as the header if it is the first).

    Raises:
        DatasetError: for a line without three columns or with a non-numeric score.
    """
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 3:
                cols = line.split()
            if len(cols) < 3:
                raise DatasetError(f"{path} line {number}: expected query-id, corpus-id, score")
            qid, did, score = cols[0].strip(), cols[1].strip(), cols[-1].strip()
            try:
                rel = int(float(score))
            except ValueError:
                if number == 1:
                    continue  # the header
                raise DatasetError(
                    f"{path} line {number}: score {score!r} is not a number"
                ) from None
            qrels.setdefault(qid, {})[did] = rel
    return qrels


def load_beir(path: Path, split: str, schema: DomainSchema) -> BeirDataset:
    """Load a BEIR dataset folder, keeping only queries judged in ``split``.

    Raises:
        DatasetError: for a missing file or split, malformed queries or qrels, no query of
            ``queries.jsonl`` judged in the split, or no valid corpus document.
    """
    check_dataset(path, split)
    queries, types = read_query_file(path / "queries.jsonl")
    qrels = read_qrels(path / "qrels" / f"{split}.tsv")
    judged = {q: t for q, t in queries.items() if q in qrels}
    if not judged:
        raise DatasetError(f"no query of {path / 'queries.jsonl'} has qrels in split {split!r}")
    corpus = read_beir_corpus(path, schema)
    if not corpus.records:
        raise DatasetError(f"{path / 'corpus.jsonl'} holds no valid document")
    return BeirDataset(
        path=path,
        split=split,
        corpus=corpus,
        queries=judged,
        qrels={q: qrels[q] for q in judged},
        judged_without_text=sum(1 for q in qrels if q not in queries),
        types={q: types[q] for q in judged if q in types},
    )
