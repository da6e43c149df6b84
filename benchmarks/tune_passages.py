"""Offline study (train split only): does the dense side lose by truncating abstracts?

72% of SciFact's title + abstract texts are longer than the embedder's 256 word-piece tokens
(median 317), so the ``content`` vector never reads the end of most abstracts. Variants, each
fused with the unchanged BM25 list by the current weighted sum (dense 200 + BM25 300):

* ``fullN``: one vector per document read up to ``N`` tokens (``EMBEDDING_MAX_LENGTH`` 512);
* ``wSoO``: passages of S words with O words of overlap, each prefixed with the title (the
  windows :func:`agentic_search.logic.chunking.chunk_record` makes), one vector each, and a
  document scored by an aggregate of its passages: the best one (MaxP, Dai and Callan,
  "Deeper Text Understanding for IR with Contextual Neural Language Modeling", SIGIR 2019),
  their mean, a mix, or MaxP mixed with the current (first-256-token, FirstP) vector;
* MaxP with Rocchio feedback (1971) on the query vector;
* the schema-only route: the same windows as chunks for both BM25 and dense, fused at chunk
  level as the pipeline would.

Each ``ws`` row is compared with the current plan query by query (paired bootstrap, 2,000
resamples, 95% interval of the mean nDCG@10 difference).

    AGENTIC_SEARCH_HOME=/work/qhome PYTHONPATH=layers/core nice -n 19 python \
        benchmarks/tune_passages.py --dataset datasets/scifact --cache /tmp/prf.pkl

``--cache`` is :mod:`tune_prf`'s pickle (query vectors and the current lists); the passage
vectors are cached in ``--work`` (embedding 12k passages takes ~13 min on 2 busy cores).
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from pathlib import Path

import numpy as np
from tune_prf import fused_scores as ws  # weighted sum of min-max scores, same folder

from agentic_search.adapters.embedders import LocalMiniLMEmbedder
from agentic_search.config import Settings
from agentic_search.logic.bm25 import DEFAULT_B, DEFAULT_K1
from agentic_search.logic.chunking import chunk_records, doc_id_of, doc_ranking
from agentic_search.logic.text import default_analyzer, keyword_text
from agentic_search.service import SearchService
from agentic_search_cli import evaluation as ev

try:
    import bm25s
    from bm25s.tokenization import Tokenized
except ImportError:  # bm25s is a test dependency only: checked after --help is answered
    bm25s = None


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--split", default="train")
    ap.add_argument("--cache", type=Path, required=True, help="tune_prf.py's pickle")
    ap.add_argument("--work", type=Path, default=Path("/tmp/passages"))
    ap.add_argument("--variants", default="full512,w96o24,w128o32,w160o40")
    args = ap.parse_args()
    if bm25s is None:
        sys.exit("this benchmark compares with bm25s: pip install bm25s")
    if args.split == "test":
        print("refusing to tune on the test split", file=sys.stderr)
        return 2
    args.work.mkdir(exist_ok=True)
    name = args.dataset.resolve().name
    settings = Settings(collection_prefix=f"eval-{name}-", cache_backend="none")
    engine = SearchService.create(settings, domain="documents")
    schema = engine.schema
    data = ev.load_beir(args.dataset, args.split, schema)
    lists = pickle.loads(args.cache.read_bytes())
    M, mids = engine.deps.store._dense_matrix(schema, "content")  # the current (FirstP) vectors
    engine.close()
    mrow = {i: n for n, i in enumerate(mids)}
    rng = np.random.default_rng(0)

    def embed(key: str, texts: list[str], max_length: int) -> np.ndarray:
        f = args.work / f"{key}.npy"
        if f.is_file():
            return np.load(f)
        emb = LocalMiniLMEmbedder(settings.model_cache, max_length=max_length)
        t = time.perf_counter()
        out = emb.embed_documents(texts)
        print(f"{key}: {len(texts)} texts in {time.perf_counter() - t:.0f} s", file=sys.stderr)
        np.save(f, out)
        return out

    rows = []

    def per_query(rankings) -> dict[str, dict[str, float]]:
        ranked = {q: doc_ranking([i for i, _ in r])[:100] for q, r in rankings.items()}
        return ev.evaluate_rankings(data.qrels, ranked)

    base = {
        q: ws([("d", v["dense"][:200], 1.0), ("b", v["bm25"][:300], 1.0)]) for q, v in lists.items()
    }
    base_per = per_query(base)
    qids = sorted(base_per)
    base_ndcg = np.asarray([base_per[q]["ndcg@10"] for q in qids])

    def report(label: str, rankings, paired: bool = False) -> None:
        per = per_query(rankings)
        row = {"variant": label, **{k: round(v, 4) for k, v in ev.mean_metrics(per).items()}}
        if paired:
            d = np.asarray([per[q]["ndcg@10"] for q in qids]) - base_ndcg
            means = [d[rng.integers(0, len(d), len(d))].mean() for _ in range(2000)]
            lo, hi = np.percentile(means, [2.5, 97.5])
            row["diff"] = round(float(d.mean()), 4)
            row["ci95"] = [round(float(lo), 4), round(float(hi), 4)]
            row["better/worse"] = [int((d > 1e-9).sum()), int((d < -1e-9).sum())]
        rows.append(row)
        if paired:
            candidates[label] = np.asarray([per[q]["ndcg@10"] for q in qids])
        print(json.dumps(row), flush=True)

    candidates: dict[str, np.ndarray] = {"current": base_ndcg}
    report("current", base)
    for variant in filter(None, args.variants.split(",")):
        if variant.startswith("full"):
            records = data.corpus.records
            V = embed(variant, [f"{r['title']}. {r['text']}" for r in records], int(variant[4:]))
            owner = [str(r["id"]) for r in records]
        else:
            size, overlap = (int(x) for x in variant[1:].split("o"))
            spec = schema.chunking.model_copy(update={"max_words": size, "overlap_words": overlap})
            sch = schema.model_copy(update={"chunking": spec})
            chunks = chunk_records(sch, data.corpus.records)
            texts = [f"{c['title']}. {c['text']}" if c.get("title") else c["text"] for c in chunks]
            V = embed(variant, texts, 256)
            owner = [str(c["doc_id"]) for c in chunks]
        if len(V) != len(owner):
            raise SystemExit(f"{variant}: stale cache in {args.work} ({len(V)} != {len(owner)})")
        V = V / np.linalg.norm(V, axis=1, keepdims=True)
        docs = list(dict.fromkeys(owner))
        pos = {d: i for i, d in enumerate(docs)}
        group = np.asarray([pos[d] for d in owner])
        starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
        counts = np.diff(np.r_[starts, len(V)])
        first = M[[mrow[d] for d in docs]]

        def doc_scores(q, how, V=V, starts=starts, counts=counts, first=first) -> np.ndarray:
            s = V @ q
            mx = np.maximum.reduceat(s, starts)
            if how == "max":
                return mx
            mean = np.add.reduceat(s, starts) / counts
            if how == "mean":
                return mean
            if how.startswith("max+mean"):
                lam = float(how[8:])
                return (1 - lam) * mx + lam * mean
            if how.startswith("max+first"):
                lam = float(how[9:])
                return (1 - lam) * mx + lam * (first @ q)
            raise ValueError(how)

        def top(scores, k=200, docs=docs) -> list[tuple[str, float]]:
            t = np.argpartition(-scores, k)[:k]
            t = t[np.argsort(-scores[t], kind="stable")]
            return [(docs[i], float(scores[i])) for i in t]

        hows = ["max"] if variant.startswith("full") else [
            "max", "mean", "max+mean0.25", "max+mean0.5", "max+first0.25", "max+first0.5"
        ]  # fmt: skip
        for how in hows:
            dl = {q: top(doc_scores(unit(v["qvec"]), how)) for q, v in lists.items()}
            report(f"{variant} {how}: dense alone", {q: x for q, x in dl.items()})
            fused = {
                q: ws([("d", dl[q], 1.0), ("b", v["bm25"][:300], 1.0)]) for q, v in lists.items()
            }
            report(f"{variant} {how}: ws with bm25", fused, paired=True)
        if variant.startswith("full"):
            continue
        maxp = {
            q: ws(
                [("d", top(doc_scores(unit(v["qvec"]), "max")), 1.0), ("b", v["bm25"][:300], 1.0)]
            )
            for q, v in lists.items()
        }
        for k in (3, 5, 10):
            for a in (0.7, 0.8, 0.9):
                out = {}
                for q, v in lists.items():
                    fb = [i for i, _ in maxp[q][:k]]
                    c = M[[mrow[i] for i in fb]].mean(axis=0)
                    q2 = unit(a * unit(v["qvec"]) + (1 - a) * c)
                    dense = top(doc_scores(q2, "max"))
                    out[q] = ws([("d", dense, 1.0), ("b", v["bm25"][:300], 1.0)])
                report(f"{variant} max + Rocchio k={k} a={a}: ws with bm25", out, paired=True)
        # schema-only route: the windows as chunks for BM25 too, fused at chunk level
        an = default_analyzer()
        cids = [str(c[schema.id_field]) for c in chunks]
        vocab: dict[str, int] = {}
        toks = [
            [vocab.setdefault(t, len(vocab)) for t in an.terms(keyword_text(sch, c))]
            for c in chunks
        ]
        index = bm25s.BM25(k1=DEFAULT_K1, b=DEFAULT_B)
        index.index(Tokenized(ids=toks, vocab=vocab), show_progress=False)
        out = {}
        for q, v in lists.items():
            qv = unit(v["qvec"])
            s = V @ qv
            t = np.argsort(-s, kind="stable")[:200]
            dense = [(cids[i], float(s[i])) for i in t]
            terms = [vocab[x] for x in an.terms(v["stext"]) if x in vocab]
            kw = []
            if terms:
                got, sc = index.retrieve([terms], k=300, show_progress=False, n_threads=1)
                kw = [(cids[int(i)], float(x)) for i, x in zip(got[0], sc[0], strict=True) if x > 0]
            out[q] = ws([("d", dense, 1.0), ("b", kw, 1.0)])
        report(f"{variant} as chunks (BM25 on windows too), chunk-level ws", out, paired=True)
        # keep doc_id_of in use for readers: chunk ids map back to documents
        assert all(doc_id_of(c) == o for c, o in zip(cids, owner, strict=True))
    # Selection-aware estimate: 5-fold CV over the queries, picking on 4 folds the variant
    # (current included) with the best mean nDCG@10 and scoring it on the fifth, so the figure
    # pays for having chosen among all the variants above.
    folds = np.array_split(rng.permutation(len(qids)), 5)
    picked, held = [], np.zeros(len(qids))
    for i, test in enumerate(folds):
        train = np.concatenate([f for j, f in enumerate(folds) if j != i])
        best = max(candidates, key=lambda k: candidates[k][train].mean())
        picked.append(best)
        held[test] = candidates[best][test]
    row = {
        "variant": "5-fold CV: best variant picked on 4 folds, scored on the 5th",
        "ndcg@10": round(float(held.mean()), 4),
        "diff": round(float(held.mean() - base_ndcg.mean()), 4),
        "picked": picked,
    }
    rows.append(row)
    print(json.dumps(row), flush=True)
    (args.work / "rows.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
