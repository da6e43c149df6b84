"""BEIR-layout datasets: corpus, queries and the judged queries of one split.

A dataset folder holds (BEIR, Thakur et al., "BEIR: A Heterogeneous Benchmark for Zero-shot
Evaluation of Information Retrieval Models", NeurIPS Datasets and Benchmarks 2021):

* ``corpus.jsonl``: one ``{"_id", "title", "text"}`` object per line (the ``documents`` domain);
* ``queries.jsonl``: one ``{"_id", "text"}`` object per line, optionally with a ``type``
  (HotpotQA: ``bridge`` or ``comparison``) by which every metric is also broken down;
* ``qrels/<split>.tsv``: a header line ``query-id corpus-id score`` then one judgment per line,
  tab-separated; ``score`` is an integer graded relevance (0 = judged not relevant).

Only queries with at least one judgment in the split are evaluated, with two extensions for
query sets written against a catalog (``benchmarks/tools_queries``):

* ``dataset.json`` ``{"domain": "tools", "corpus": "bundled"}`` instead of ``corpus.jsonl``:
  the corpus is that domain's bundled catalog, indexed in that domain's schema;
* a query may carry ``"answerable": false`` and ``"split": NAME``: the corpus holds nothing
  for it (it has no judgment line) and it is evaluated in split NAME for abstention (did the
  system answer "no good match" with nothing padded); a ``lang`` (``en``, ``de``, ...) breaks
  the metrics down by language.

A split may name several qrels files, comma-separated (``tuning,heldout``): the queries of
each, with every metric also broken down by split.

The BEIR datasets are downloaded as ``<name>.zip`` from :data:`BEIR_DOWNLOADS` (a clone ships
none).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from agentic_search.logic.schema import DomainSchema
from agentic_search.sync.files import (
    CatalogRead,
    bundled_catalog_path,
    read_beir_corpus,
    read_catalog,
)

MANIFEST = "dataset.json"
#: Domains with a bundled catalog a ``dataset.json`` may name as its corpus.
BUNDLED_DOMAINS = frozenset({"tools"})

#: Where the BEIR datasets are published (``<name>.zip`` unzips to a ``<name>/`` folder).
BEIR_DOWNLOADS = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets"
#: The datasets published there (BEIR's table, Thakur et al. 2021; BioASQ, Signal-1M,
#: TREC-NEWS and Robust04 are not: their licences keep them off the download server).
BEIR_NAMES = frozenset(
    {
        "msmarco",
        "trec-covid",
        "nfcorpus",
        "nq",
        "hotpotqa",
        "fiqa",
        "arguana",
        "webis-touche2020",
        "cqadupstack",
        "quora",
        "dbpedia-entity",
        "scidocs",
        "fever",
        "climate-fever",
        "scifact",
    }
)


class DatasetError(ValueError):
    """A dataset folder that cannot be evaluated (a usage problem: missing file, bad split)."""


@dataclass
class BeirDataset:
    """A loaded BEIR dataset restricted to the queries judged in one split.

    ``queries`` maps query id -> text in ``queries.jsonl`` order (the judged queries and the
    unanswerable ones); ``qrels`` maps query id -> {corpus id -> integer relevance} (judged
    queries only); ``corpus`` holds the validated records and the rejected corpus lines;
    ``types``, ``langs`` and ``splits`` map query id -> its ``type``, ``lang`` and split
    where queries carry one (``splits`` only when several splits were asked for);
    ``unanswerable`` holds the ids of the queries the corpus has no answer for.
    """

    path: Path
    split: str
    corpus: CatalogRead
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    judged_without_text: int = 0
    types: dict[str, str] = field(default_factory=dict)
    langs: dict[str, str] = field(default_factory=dict)
    splits: dict[str, str] = field(default_factory=dict)
    unanswerable: frozenset[str] = frozenset()

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
            qrels={q: self.qrels[q] for q in keep if q in self.qrels},
            judged_without_text=self.judged_without_text,
            types={q: self.types[q] for q in keep if q in self.types},
            langs={q: self.langs[q] for q in keep if q in self.langs},
            splits={q: self.splits[q] for q in keep if q in self.splits},
            unanswerable=frozenset(q for q in keep if q in self.unanswerable),
        )


def split_names(split: str) -> list[str]:
    """``"tuning,heldout"`` -> ``["tuning", "heldout"]`` (blanks and repeats dropped)."""
    return list(dict.fromkeys(s.strip() for s in split.split(",") if s.strip()))


def dataset_domain(path: Path) -> str:
    """The domain a dataset folder is evaluated in: ``dataset.json``'s ``domain``, else
    ``documents`` (a BEIR corpus).

    Raises:
        DatasetError: for a ``dataset.json`` that is not an object with a known bundled
            domain and ``"corpus": "bundled"``.
    """
    manifest = path / MANIFEST
    if not manifest.is_file():
        return "documents"
    try:
        obj = json.loads(manifest.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{manifest}: not JSON ({exc})") from None
    if (
        not isinstance(obj, dict)
        or obj.get("domain") not in BUNDLED_DOMAINS
        or obj.get("corpus") != "bundled"
    ):
        raise DatasetError(
            f'{manifest}: expected {{"domain": one of {sorted(BUNDLED_DOMAINS)}, '
            '"corpus": "bundled"}'
        )
    return str(obj["domain"])


def available_splits(path: Path) -> list[str]:
    """The qrels splits present in a dataset folder (``qrels/*.tsv`` stems), sorted."""
    qdir = path / "qrels"
    return sorted(p.stem for p in qdir.glob("*.tsv")) if qdir.is_dir() else []


def check_dataset(path: Path, split: str, corpus: bool = True) -> None:
    """Check a folder has the BEIR layout for ``split`` (cheap: only looks at file names);
    ``corpus``: whether its ``corpus.jsonl`` is needed (not for a bundled catalog's dataset,
    nor for the judged queries of a domain given apart: ``eval --domain``).

    Raises:
        DatasetError: naming the first missing piece in one line.
    """
    if path.exists() and not path.is_dir():
        raise DatasetError(f"{path} is not a folder (a BEIR dataset folder expected)")
    if not path.is_dir():
        name = path.name.lower()
        if name in BEIR_NAMES:
            raise DatasetError(
                f"no such dataset folder: {path} (BEIR's {name}: download "
                f"{BEIR_DOWNLOADS}/{name}.zip and unzip it into {path.parent})"
            )
        raise DatasetError(
            f"no such dataset folder: {path} (a folder holding corpus.jsonl, queries.jsonl "
            "and qrels/SPLIT.tsv, as the BEIR datasets do)"
        )
    bundled = not corpus or dataset_domain(path) != "documents"
    for name in ("queries.jsonl",) if bundled else ("corpus.jsonl", "queries.jsonl"):
        if not (path / name).is_file():
            raise DatasetError(f"{path} has no {name} (BEIR layout expected)")
    names = split_names(split)
    if not names:
        raise DatasetError("no split given")
    for name in names:
        if not (path / "qrels" / f"{name}.tsv").is_file():
            splits = available_splits(path)
            have = ", ".join(splits) if splits else "none"
            raise DatasetError(f"{path} has no qrels/{name}.tsv (available splits: {have})")


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
    queries, fields = read_query_fields(path)
    return queries, fields["type"]


def read_query_fields(path: Path) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """``queries.jsonl`` -> ({query id: text}, {field: {query id: value}}) for the optional
    fields ``type``, ``lang``, ``split`` and ``answerable`` (``"true"``/``"false"``), each
    only for the queries that carry it.

    Raises:
        DatasetError: for a line that is not a JSON object with ``_id`` and ``text``.
    """
    out: dict[str, str] = {}
    fields: dict[str, dict[str, str]] = {"type": {}, "lang": {}, "split": {}, "answerable": {}}
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                qid = str(obj["_id"])
                out[qid] = str(obj.get("text") or "")
                for name, values in fields.items():
                    value = obj.get(name)
                    if isinstance(value, bool):
                        values[qid] = "true" if value else "false"
                    elif value:
                        values[qid] = str(value)
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
                raise DatasetError(
                    f"{path} line {number}: not a query object with _id and text ({exc})"
                ) from None
    return out, fields


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


def load_beir(
    path: Path, split: str, schema: DomainSchema, corpus: CatalogRead | None = None
) -> BeirDataset:
    """Load a BEIR dataset folder, keeping only queries judged in ``split``. The corpus is
    ``corpus`` when given (a domain's own catalog, or none: an empty read for an index
    searched as it is), else the folder's (or its ``dataset.json``'s bundled catalog).

    Raises:
        DatasetError: for a missing file or split, malformed queries or qrels, no query of
            ``queries.jsonl`` judged in the split, or no valid corpus document.
    """
    check_dataset(path, split, corpus=corpus is None)
    names = split_names(split)
    queries, fields = read_query_fields(path / "queries.jsonl")
    qrels: dict[str, dict[str, int]] = {}
    split_of: dict[str, str] = {}
    for name in names:
        for q, rels in read_qrels(path / "qrels" / f"{name}.tsv").items():
            if q not in qrels:
                qrels[q] = rels
                split_of[q] = name
    unanswerable = {
        q
        for q, flag in fields["answerable"].items()
        if flag == "false" and q not in qrels and fields["split"].get(q) in names
    }
    for q in unanswerable:
        split_of[q] = fields["split"][q]
    kept = {q: t for q, t in queries.items() if q in qrels or q in unanswerable}
    if not any(q in qrels for q in kept):
        raise DatasetError(f"no query of {path / 'queries.jsonl'} has qrels in split {split!r}")
    if corpus is None:
        domain = dataset_domain(path)
        if domain == "documents":
            corpus = read_beir_corpus(path, schema)
            where = path / "corpus.jsonl"
        else:
            if schema.name != domain:
                raise DatasetError(
                    f"{path} is evaluated in the {domain!r} domain, not {schema.name!r}"
                )
            where = bundled_catalog_path()
            corpus = read_catalog(where, schema)
        if not corpus.records:
            raise DatasetError(f"{where} holds no valid document")
    return BeirDataset(
        path=path,
        split=",".join(names),
        corpus=corpus,
        queries=kept,
        qrels={q: qrels[q] for q in kept if q in qrels},
        judged_without_text=sum(1 for q in qrels if q not in queries),
        types={q: fields["type"][q] for q in kept if q in fields["type"]},
        langs={q: fields["lang"][q] for q in kept if q in fields["lang"]},
        splits={q: split_of[q] for q in kept} if len(names) > 1 else {},
        unanswerable=frozenset(unanswerable),
    )
