"""The sparse BM25 keyword index (Qdrant Edge, ``Modifier.IDF``) scores like bm25s.

bm25s (Lucene's BM25: ``idf = ln(1 + (N - n + 0.5) / (n + 0.5))``, ``tf / (tf + k1 * (1 - b +
b * dl / avgdl))``, one term per query token, repeats included) is the reference; both get the
project's analyzer (the same terms), k1 1.2, b 0.75 and the corpus' true average length. Our
scores are ``(k1 + 1)`` times bm25s's (the document weights carry the ``k1 + 1`` factor), so
they are divided by it before the comparison. On the shared SciFact and HotpotQA corpora
(whole documents, the ``documents`` domain's keyword text), for every judged test query and for
queries with repeated terms, the top 10 scores agree to 4 decimals and every one of our top-10
ids has bm25s's score.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import bm25s
import pytest
from bm25s.tokenization import Tokenized
from support.datasets import shared_dataset

from agentic_search.adapters.edge.sparse import EdgeSparseKeywordIndex
from agentic_search.adapters.edge.store import EdgeStore
from agentic_search.config import Settings
from agentic_search.logic.schema import load_schema
from agentic_search.logic.text import default_analyzer, keyword_text
from agentic_search.wire import PointWrite

DOCS = load_schema("documents")
TOP = 10
#: 4 decimals: two scores are equal when they round alike, i.e. differ by under half a unit
#: of the 4th decimal (both engines sum in float32).
TOLERANCE = 5e-5


def _judged_queries(folder: Path) -> dict[str, str]:
    judged = {
        line.split("\t")[0]
        for line in (folder / "qrels" / "test.tsv").read_text().splitlines()[1:]
        if line.strip()
    }
    out = {}
    for line in (folder / "queries.jsonl").open():
        q = json.loads(line)
        if str(q["_id"]) in judged:
            out[str(q["_id"])] = q["text"]
    return out


class Parity:
    """One corpus indexed twice: in an Edge shard through the project's keyword index, and
    in bm25s over the same analysed terms."""

    def __init__(self, folder: Path, root: Path) -> None:
        self.analyzer = default_analyzer()
        payloads = {}
        for line in (folder / "corpus.jsonl").open():
            d = json.loads(line)
            rid = str(d["_id"])
            payloads[rid] = {"id": rid, "title": d.get("title", ""), "text": d["text"]}
        self.ids = list(payloads)
        texts = {i: keyword_text(DOCS, p) for i, p in payloads.items()}
        terms = {i: self.analyzer.terms(t) for i, t in texts.items()}
        avgdl = sum(map(len, terms.values())) / len(terms)

        self.store = EdgeStore(Settings(), root=root)
        self.store.ensure_collection(DOCS, dim=2)
        self.kw = EdgeSparseKeywordIndex(self.store, analyzer=self.analyzer, schema=DOCS)
        self.kw.set_average(DOCS, avgdl, len(self.ids))  # the true average, as refresh() keeps
        batch = []
        for i in self.ids:
            vectors = {a: [1.0, 0.0] for a in DOCS.aspect_names}
            batch.append(PointWrite(i, vectors, payloads[i], self.kw.sparse_vector(texts[i])))
            if len(batch) == 512:
                self.store.upsert(DOCS, batch)
                batch = []
        self.store.upsert(DOCS, batch)

        self.vocab: dict[str, int] = {}
        self.bm25s = bm25s.BM25(k1=self.kw.k1, b=self.kw.b, dtype="float64")
        self.bm25s.index(
            Tokenized(
                ids=[
                    [self.vocab.setdefault(t, len(self.vocab)) for t in terms[i]] for i in self.ids
                ],
                vocab=self.vocab,
            ),
            show_progress=False,
        )

    def check(self, text: str) -> int:
        """Assert parity on one query; returns how many top-10 scores were compared."""
        token_ids = [self.vocab[t] for t in self.analyzer.terms(text) if t in self.vocab]
        if not token_ids:
            assert self.kw.search(DOCS, text, TOP) == []
            return 0
        scores = self.bm25s.get_scores(token_ids)
        reference = sorted((float(s) for s in scores if s > 0), reverse=True)[:TOP]
        hits = self.kw.search(DOCS, text, TOP)
        ours = [h.score / (self.kw.k1 + 1) for h in hits]
        assert len(ours) == len(reference), text
        for mine, theirs in zip(ours, reference, strict=True):
            assert abs(mine - theirs) < TOLERANCE, (text, ours, reference)
        position = {rid: n for n, rid in enumerate(self.ids)}
        for h, mine in zip(hits, ours, strict=True):
            assert abs(mine - float(scores[position[h.id]])) < TOLERANCE, (text, h.id)
        return len(ours)

    def close(self) -> None:
        self.store.close()


@pytest.fixture(scope="module", params=["scifact", "hotpotqa"])
def corpus(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[tuple[Parity, Path]]:
    folder = shared_dataset(request.param)
    if folder is None:
        pytest.skip(f"the shared {request.param} dataset is not on this machine")
    parity = Parity(folder, tmp_path_factory.mktemp(f"parity-{request.param}"))
    yield parity, folder
    parity.close()


def test_top10_scores_equal_bm25s_on_every_judged_query(corpus) -> None:
    """GIVEN a shared BEIR corpus in Edge and in bm25s WHEN every judged test query is asked
    THEN the top 10 scores (divided by k1 + 1) equal bm25s's to 4 decimals, id by id."""
    parity, folder = corpus
    queries = _judged_queries(folder)
    compared = sum(parity.check(text) for text in queries.values())
    assert len(queries) >= 250 and compared >= 9 * len(queries)


def _content_words(parity: Parity, text: str) -> list[str]:
    """The words of ``text`` the analyzer keeps (no stopwords, no single letters)."""
    return [w for w in text.split() if parity.analyzer.terms(w)]


def test_repeated_query_terms_count_once_per_occurrence_like_bm25s(corpus) -> None:
    """GIVEN queries whose terms repeat (a question with its first words said again, and a
    pasted paragraph of five questions) WHEN asked THEN the scores still equal bm25s's, which
    adds a term once per occurrence (with each distinct term weighted 1 they would not)."""
    parity, folder = corpus
    texts = list(_judged_queries(folder).values())
    repeated = [f"{t} {' '.join(_content_words(parity, t)[:2])}" for t in texts[:40]]
    paragraphs = [" ".join(texts[i : i + 5]) for i in range(0, 50, 5)]
    echoes = [f"{t} {t}" for t in texts[40:50]]
    for text in [*repeated, *paragraphs, *echoes]:
        terms = parity.analyzer.terms(text)
        assert len(terms) > len(set(terms))  # the query does repeat a term
        assert parity.check(text) > 0
