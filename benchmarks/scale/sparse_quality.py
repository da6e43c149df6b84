"""Does Edge's sparse BM25 rank like bm25s? On a BEIR dataset (SciFact, HotpotQA), whole
documents (no chunking), the project's analyzer and ``keyword_text`` of the ``documents``
domain: nDCG@10 and Recall@100 (pytrec_eval) of

* ``bm25s``            -- today's embedded keyword index (k1 1.2, b 0.75, the true avgdl);
* ``edge-avgdl=256``   -- Edge's sparse ``bm25`` vector with the IDF modifier, document
  weights computed with the ``BM25_AVG_DOC_LEN`` setting (256) as written at ingest;
* ``edge-refreshed``   -- the same after ``EdgeSparseKeywordIndex.refresh`` re-weighted them
  with the corpus' true average length (what ingest and sync do);

plus each one's mean top-10 overlap with bm25s. Usage:
``python benchmarks/scale/sparse_quality.py datasets/scifact [--split test]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import pytrec_eval

from agentic_search.adapters.edge.sparse import EdgeSparseKeywordIndex
from agentic_search.adapters.edge.store import EdgeStore
from agentic_search.config import Settings
from agentic_search.logic.schema import load_schema
from agentic_search.logic.text import default_analyzer, keyword_text
from agentic_search.wire import PointWrite

try:
    import bm25s
    from bm25s.tokenization import Tokenized
except ImportError:  # bm25s is a test dependency only: checked after --help is answered
    bm25s = None

TOP = 100


def load(folder: Path, split: str):
    """``(doc id -> payload, query id -> text, qrels)`` of a BEIR folder (judged queries)."""
    docs = {}
    for line in (folder / "corpus.jsonl").open():
        d = json.loads(line)
        docs[str(d["_id"])] = {"id": str(d["_id"]), "title": d.get("title", ""), "text": d["text"]}
    qrels: dict[str, dict[str, int]] = {}
    for line in (folder / "qrels" / f"{split}.tsv").open():
        q, d, s = line.rstrip("\n").split("\t")[:3]
        if q == "query-id":
            continue
        qrels.setdefault(q, {})[d] = int(s)
    queries = {}
    for line in (folder / "queries.jsonl").open():
        q = json.loads(line)
        if str(q["_id"]) in qrels:
            queries[str(q["_id"])] = q["text"]
    return docs, queries, qrels


def evaluate(run: dict[str, dict[str, float]], qrels) -> dict[str, float]:
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100"})
    per = ev.evaluate(run)
    n = len(qrels)
    return {
        "ndcg@10": round(sum(v["ndcg_cut_10"] for v in per.values()) / n, 4),
        "recall@100": round(sum(v["recall_100"] for v in per.values()) / n, 4),
    }


def overlap10(a: dict[str, dict[str, float]], b: dict[str, dict[str, float]]) -> float:
    def top(r: dict[str, float]) -> set[str]:
        return set(sorted(r, key=lambda d: -r[d])[:10])

    vals = [len(top(a[q]) & top(b[q])) / max(1, min(10, len(top(b[q])))) for q in b if b[q]]
    return round(sum(vals) / len(vals), 4)


def text_index_run(ids, texts, terms, queries, analyzer, variant: str):
    """Edge's own BM25 text index (``TextQuery``) over one payload field: ``ours`` stores the
    project analyzer's terms joined by spaces (whitespace tokenizer, nothing else), ``edge``
    stores the raw text with Edge's word tokenizer, English stemmer and stopwords."""
    import qdrant_edge as qe

    if variant == "ours":
        params = qe.TextIndexParams(
            tokenizer=qe.TokenizerType.Whitespace, lowercase=False, scoring=True
        )
    else:
        params = qe.TextIndexParams(
            tokenizer=qe.TokenizerType.Word,
            lowercase=True,
            stemmer=qe.SnowballParams(qe.SnowballLanguage.English),
            stopwords=qe.Language.English,
            scoring=True,
        )
    with tempfile.TemporaryDirectory() as tmp:
        shard = qe.EdgeShard.create(
            tmp, qe.EdgeConfig(vectors={"v": qe.EdgeVectorParams(size=1, distance=qe.Distance.Dot)})
        )
        shard.update(qe.UpdateOperation.create_field_index("kw", params))
        for start in range(0, len(ids), 512):
            chunk = ids[start : start + 512]
            shard.update(
                qe.UpdateOperation.upsert_points(
                    [
                        qe.Point(
                            n,
                            {"v": [1.0]},
                            {"id": i, "kw": " ".join(terms[i]) if variant == "ours" else texts[i]},
                        )
                        for n, i in enumerate(chunk, start)
                    ]
                )
            )
        run = {}
        t = time.perf_counter()
        for q, text in queries.items():
            qtext = " ".join(analyzer.terms(text)) if variant == "ours" else text
            if not qtext.strip():
                run[q] = {}
                continue
            hits = shard.query(
                qe.QueryRequest(
                    limit=TOP,
                    query=qe.TextQuery("kw", qtext, qe.Bm25Params(k=1.2, b=0.75)),
                    with_payload=["id"],
                )
            )
            run[q] = {h.payload["id"]: h.score for h in hits}
        ms = 1000 * (time.perf_counter() - t) / len(queries)
        print(f"edge-text-index ({variant}): {ms:.2f} ms/query", file=sys.stderr)
        shard.close()
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--split", default="test")
    args = ap.parse_args()
    if bm25s is None:
        sys.exit("this benchmark compares with bm25s: pip install bm25s")
    schema = load_schema("documents")
    analyzer = default_analyzer()
    docs, queries, qrels = load(args.dataset, args.split)
    texts = {i: keyword_text(schema, p) for i, p in docs.items()}
    terms = {i: analyzer.terms(t) for i, t in texts.items()}
    avgdl = sum(map(len, terms.values())) / len(terms)
    ids = list(docs)

    vocab: dict[str, int] = {}
    index = bm25s.BM25(k1=1.2, b=0.75)
    index.index(
        Tokenized(
            ids=[[vocab.setdefault(t, len(vocab)) for t in terms[i]] for i in ids], vocab=vocab
        ),
        show_progress=False,
    )
    runs: dict[str, dict[str, dict[str, float]]] = {"bm25s": {}}
    for q, text in queries.items():
        qt = analyzer.terms(text)
        if not qt:
            runs["bm25s"][q] = {}
            continue
        found, scores = index.retrieve([qt], k=TOP, show_progress=False, n_threads=1)
        runs["bm25s"][q] = {
            ids[int(d)]: float(s) for d, s in zip(found[0], scores[0], strict=True) if s > 0
        }

    for refresh in (False, True):
        name = "edge-refreshed" if refresh else f"edge-avgdl={Settings().bm25_avg_doc_len:.0f}"
        with tempfile.TemporaryDirectory() as tmp:
            store = EdgeStore(Settings(), root=Path(tmp))
            store.ensure_collection(schema, dim=2)
            kw = EdgeSparseKeywordIndex(store, analyzer=analyzer, schema=schema)
            batch = []
            for i in ids:
                batch.append(
                    PointWrite(
                        i, {"content": [1.0, 0.0]}, dict(docs[i]), kw.sparse_vector(texts[i])
                    )
                )
                if len(batch) == 512:
                    store.upsert(schema, batch)
                    batch = []
            store.upsert(schema, batch)
            if refresh:
                t = time.perf_counter()
                kw.refresh(schema)
                print(
                    f"refresh: {time.perf_counter() - t:.2f} s, avgdl "
                    f"{kw.avg_doc_len_of(schema):.1f}",
                    file=sys.stderr,
                )
            t = time.perf_counter()
            runs[name] = {
                q: {h.id: h.score for h in kw.search(schema, text, TOP)}
                for q, text in queries.items()
            }
            ms = 1000 * (time.perf_counter() - t) / len(queries)
            print(f"{name}: {ms:.2f} ms/query", file=sys.stderr)
            store.close()

    for variant in ("ours", "edge"):
        name = f"edge-text-index ({variant} analyzer)"
        runs[name] = text_index_run(ids, texts, terms, queries, analyzer, variant)

    out = {
        "dataset": args.dataset.name,
        "split": args.split,
        "documents": len(docs),
        "queries": len(queries),
        "true_avgdl": round(avgdl, 1),
        "systems": {
            name: {
                **evaluate(run, qrels),
                "top10_overlap_with_bm25s": overlap10(run, runs["bm25s"]),
            }
            for name, run in runs.items()
        },
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
