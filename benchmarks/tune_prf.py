"""Offline study of query-side and schema-side changes to the documents domain's ranking
(train split only), each against the current plan (weighted sum of min-max scores, dense
``content`` top 200 + BM25 top 300):

* dense pseudo-relevance feedback: Rocchio ("Relevance Feedback in Information Retrieval",
  1971) on the query vector, ``q' = a q + (1 - a) mean(top-k feedback vectors)``, the feedback
  vectors being the stored ``content`` vectors (no extra embedding);
* BM25 RM3 (Lavrenko and Croft, SIGIR 2001; Abdul-Jaleel et al., TREC 2004): a weighted
  query ``lam * q + (1 - lam) * top-n P(w|R)`` scored on the bm25s postings;
* a title signal: BM25 over titles, a title dense vector, as a third list or inside the
  dense source;
* score regularisation over the stored vectors (Diaz, "Regularizing ad hoc retrieval
  scores", CIKM 2005);
* fusion normalisation: z-score CombSUM instead of min-max.

    AGENTIC_SEARCH_HOME=/work/qhome PYTHONPATH=layers/core nice -n 19 python \
        benchmarks/tune_prf.py --dataset datasets/scifact --cache /tmp/prf.pkl

Groups (``--only``): rocchio, roc2, rm3, rm3b, both, title, regularize, fusion.
The first run collects, per query, the planned texts, the query vector and both lists (depth
300) and pickles them; later runs are offline but for the stored doc vectors and the bm25s
postings, read once. Refuses the test split.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from tune_fusion import collect  # same folder: the lists the one-round plan fuses

from agentic_search.config import Settings
from agentic_search.logic.bm25 import DEFAULT_B, DEFAULT_K1
from agentic_search.logic.chunking import chunk_records, doc_ranking
from agentic_search.logic.fusion import fuse
from agentic_search.logic.rocchio import rocchio_vector
from agentic_search.logic.text import default_analyzer, keyword_text
from agentic_search.service import SearchService
from agentic_search.wire import RankedList
from agentic_search_cli import evaluation as ev

AN = default_analyzer()


class Bm25Postings:
    """Weighted-query BM25 straight from a bm25s CSC matrix: score(d) = sum_t w_t bm25(t, d)."""

    def __init__(self, index, ids: list[str]) -> None:
        self.ids = ids
        self.vocab = index.vocab_dict
        self.data = index.scores["data"]
        self.indices = index.scores["indices"]
        self.indptr = index.scores["indptr"]

    def search(self, weights: dict[str, float], k: int) -> list[tuple[str, float]]:
        scores = np.zeros(len(self.ids), dtype=np.float32)
        for t, w in weights.items():
            col = self.vocab.get(t)
            if col is None or col + 1 >= len(self.indptr):
                continue
            a, b = self.indptr[col], self.indptr[col + 1]
            scores[self.indices[a:b]] += w * self.data[a:b]
        nz = np.flatnonzero(scores > 0)
        if nz.size == 0:
            return []
        top = nz[np.argsort(-scores[nz], kind="stable")[:k]]
        return [(self.ids[i], float(scores[i])) for i in top]


def dense_search(M, mids, q, k) -> list[tuple[str, float]]:
    s = M @ q
    top = np.argpartition(-s, k - 1)[:k]
    top = top[np.argsort(-s[top], kind="stable")]
    return [(mids[i], float(s[i])) for i in top]


def unit(v):
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def fuse_lists(named, method="weighted_sum", k=60, norm="minmax") -> list[str]:
    """named: [(name, [(id, score)], weight)]."""
    rl = [
        RankedList(n, [i for i, _ in lst], [s for _, s in lst], w)
        for n, lst, w in named
        if lst and w > 0
    ]
    if norm == "z":
        # z-score then weighted plain sum (no min-max): CombSUM over z-scores
        tot: dict[str, float] = {}
        for r in rl:
            s = np.asarray(r.scores, dtype=np.float64)
            z = (s - s.mean()) / (s.std() or 1.0)
            # a document missing from a list gets the list's minimum z
            for i, v in zip(r.ids, z, strict=True):
                tot[i] = tot.get(i, 0.0) + r.weight * (v - z.min())
        return [i for i, _ in sorted(tot.items(), key=lambda x: -x[1])]
    return [f.id for f in fuse(rl, method, k)]


def fused_scores(named) -> list[tuple[str, float]]:
    rl = [RankedList(n, [i for i, _ in lst], [s for _, s in lst], w) for n, lst, w in named if lst]
    return [(f.id, f.fused) for f in fuse(rl, "weighted_sum")]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--split", default="train")
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--titles", type=Path, default=Path("/tmp/prf_titles.npy"))
    ap.add_argument("--only", default="", help="comma list of groups to run")
    args = ap.parse_args()
    if args.split == "test":
        print("refusing to tune on the test split", file=sys.stderr)
        return 2
    only = set(filter(None, args.only.split(",")))
    name = args.dataset.resolve().name
    engine = SearchService.create(
        Settings(collection_prefix=f"eval-{name}-", cache_backend="none"), domain="documents"
    )
    schema = engine.schema
    data = ev.load_beir(args.dataset, args.split, schema)
    qrels = data.qrels
    t = time.perf_counter()
    if args.cache.is_file():
        lists = pickle.loads(args.cache.read_bytes())
    else:
        lists = collect(engine, data.queries, 300, detail=True)
        args.cache.write_bytes(pickle.dumps(lists))
    print(f"{len(lists)} queries in {time.perf_counter() - t:.1f} s", file=sys.stderr)

    M, mids = engine.deps.store._dense_matrix(schema, "content")
    row = {i: n for n, i in enumerate(mids)}
    index, bids, _ = engine.deps.keyword._get(schema)
    bm = Bm25Postings(index, bids)
    chunks = chunk_records(schema, data.corpus.records)
    ktext = {str(c[schema.id_field]): keyword_text(schema, c) for c in chunks}
    titles = {str(c[schema.id_field]): str(c.get("title") or "") for c in chunks}

    # sanity: weighted BM25 with occurrence weights reproduces the engine's BM25 list
    same = 0
    for v in list(lists.values())[:50]:
        w = Counter(AN.terms(v["stext"]))
        mine = [i for i, _ in bm.search(dict(w), 300)]
        same += mine[:100] == [i for i, _ in v["bm25"]][:100]
    w1 = 0
    for v in list(lists.values())[:50]:
        w = dict.fromkeys(AN.terms(v["stext"]), 1.0)
        mine = [i for i, _ in bm.search(w, 300)]
        w1 += mine[:100] == [i for i, _ in v["bm25"]][:100]
    print(
        f"bm25 postings reproduce engine lists: tf-weights {same}/50, unit {w1}/50", file=sys.stderr
    )

    rows = []

    def report(label, rankings):
        per = ev.evaluate_rankings(qrels, {q: doc_ranking(r)[:100] for q, r in rankings.items()})
        m = ev.mean_metrics(per)
        rows.append({"variant": label, **{x: round(y, 4) for x, y in m.items()}})
        print(json.dumps(rows[-1]), flush=True)
        return per

    def base_named(v):
        return [("dense", v["dense"][:200], 1.0), ("bm25", v["bm25"][:300], 1.0)]

    base = {q: fuse_lists(base_named(v)) for q, v in lists.items()}
    report("current: weighted_sum dense200 + bm25-300", base)
    base_fs = {q: fused_scores(base_named(v)) for q, v in lists.items()}

    def group(g):
        return not only or g in only

    def rocchio(v, fused, k, a):
        """Rocchio (1971) on the top-k fused documents' vectors: the executor's own function."""
        return rocchio_vector(v["qvec"], M[[row[i] for i, _ in fused[:k] if i in row]], a)

    # ---- 1. Rocchio on the dense query vector ------------------------------------------------
    if group("rocchio"):
        for k in (3, 5, 10, 20):
            for a in (0.5, 0.6, 0.7, 0.8):
                rep = {}
                for q, v in lists.items():
                    d2 = dense_search(M, mids, rocchio(v, base_fs[q], k, a), 200)
                    rep[q] = fuse_lists([("dense", d2, 1.0), ("bm25", v["bm25"][:300], 1.0)])
                report(f"rocchio replace dense k={k} a={a}", rep)
        # second-round weighting variants for one promising setting are run below (group roc2)

    if group("roc2"):
        for k, a in ((5, 0.7), (10, 0.7), (10, 0.6), (5, 0.6)):
            for wq in (0.5, 1.0):
                third = {}
                for q, v in lists.items():
                    d2 = dense_search(M, mids, rocchio(v, base_fs[q], k, a), 200)
                    third[q] = fuse_lists([*base_named(v), ("prf", d2, wq)])
                report(f"rocchio as 3rd list ws k={k} a={a} w={wq}", third)
            # score-weighted centroid
            rep = {}
            for q, v in lists.items():
                fb = base_fs[q][:k]
                w = np.asarray([s for _, s in fb], dtype=np.float32)
                c = (M[[row[i] for i, _ in fb]] * w[:, None]).sum(0) / w.sum()
                q2 = unit(a * v["qvec"] / np.linalg.norm(v["qvec"]) + (1 - a) * c)
                d2 = dense_search(M, mids, q2, 200)
                rep[q] = fuse_lists([("dense", d2, 1.0), ("bm25", v["bm25"][:300], 1.0)])
            report(f"rocchio score-weighted centroid k={k} a={a}", rep)
            # feedback from the dense list alone (no BM25 in the feedback set)
            rep = {}
            for q, v in lists.items():
                d2 = dense_search(M, mids, rocchio(v, v["dense"], k, a), 200)
                rep[q] = fuse_lists([("dense", d2, 1.0), ("bm25", v["bm25"][:300], 1.0)])
            report(f"rocchio dense-only feedback k={k} a={a}", rep)

    # ---- 2. RM3 on BM25 ------------------------------------------------------------------------
    def rm1(fb: list[tuple[str, float]]) -> dict[str, float]:
        wsum = sum(w for _, w in fb) or 1.0
        p: Counter = Counter()
        for i, w in fb:
            terms = AN.terms(ktext[i])
            if not terms:
                continue
            for t, c in Counter(terms).items():
                p[t] += (c / len(terms)) * (w / wsum)
        return p

    def rm3_weights(v, fb, n_terms, lam):
        qt = Counter(AN.terms(v["stext"]))
        qn = sum(qt.values()) or 1
        p = rm1(fb)
        top = dict(p.most_common(n_terms))
        tn = sum(top.values()) or 1.0
        out: dict[str, float] = {}
        for t, c in qt.items():
            out[t] = out.get(t, 0.0) + lam * c / qn
        for t, s in top.items():
            out[t] = out.get(t, 0.0) + (1 - lam) * s / tn
        return out

    if group("rm3"):
        for k in (3, 5, 10):
            for n_terms in (10, 20, 30):
                for lam in (0.5, 0.7, 0.9):
                    rep = {}
                    for q, v in lists.items():
                        fb = base_fs[q][:k]
                        wts = rm3_weights(v, fb, n_terms, lam)
                        b2 = bm.search(wts, 300)
                        rep[q] = fuse_lists([("dense", v["dense"][:200], 1.0), ("bm25", b2, 1.0)])
                    report(f"rm3 replace bm25 k={k} n={n_terms} lam={lam}", rep)

    if group("rm3b"):
        for k, n_terms, lam in ((5, 10, 0.7), (10, 20, 0.7), (5, 20, 0.5)):
            for wq in (0.3, 0.5, 1.0):
                rep = {}
                for q, v in lists.items():
                    fb = base_fs[q][:k]
                    b2 = bm.search(rm3_weights(v, fb, n_terms, lam), 300)
                    rep[q] = fuse_lists([*base_named(v), ("rm3", b2, wq)])
                report(f"rm3 as 3rd list ws k={k} n={n_terms} lam={lam} w={wq}", rep)

    # ---- 1+2. Rocchio on dense and RM3 on BM25 (both sources refined, still 2 lists) --------
    if group("both"):
        for k, a, n_terms, lam in (
            (5, 0.7, 10, 0.7),
            (10, 0.7, 20, 0.7),
            (5, 0.6, 10, 0.7),
            (10, 0.6, 20, 0.5),
            (5, 0.8, 10, 0.8),
        ):
            rep = {}
            for q, v in lists.items():
                fb = base_fs[q][:k]
                d2 = dense_search(M, mids, rocchio(v, fb, k, a), 200)
                b2 = bm.search(rm3_weights(v, fb, n_terms, lam), 300)
                rep[q] = fuse_lists([("dense", d2, 1.0), ("bm25", b2, 1.0)])
            report(f"rocchio+rm3 k={k} a={a} n={n_terms} lam={lam}", rep)

    # ---- 3. title signal ------------------------------------------------------------------------
    if group("title"):
        try:
            import bm25s
            from bm25s.tokenization import Tokenized
        except ImportError:  # bm25s is no longer a dependency of the project
            sys.exit("this benchmark compares with bm25s (no longer a dependency): pip install it")

        tids = list(titles)
        vocab: dict[str, int] = {}
        toks = [[vocab.setdefault(t, len(vocab)) for t in AN.terms(titles[i])] for i in tids]
        tindex = bm25s.BM25(k1=DEFAULT_K1, b=DEFAULT_B)
        tindex.index(Tokenized(ids=toks, vocab=vocab), show_progress=False)
        tb = Bm25Postings(tindex, tids)
        if args.titles.is_file():
            TV = np.load(args.titles)
        else:
            t0 = time.perf_counter()
            TV = np.asarray(engine.deps.embedder.embed_documents([titles[i] for i in tids]))
            np.save(args.titles, TV)
            print(f"titles embedded in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        TV = TV / np.linalg.norm(TV, axis=1, keepdims=True)
        for wt in (0.2, 0.35, 0.5):
            rep_b, rep_d = {}, {}
            for q, v in lists.items():
                tbl = tb.search(dict.fromkeys(AN.terms(v["stext"]), 1.0), 300)
                rep_b[q] = fuse_lists([*base_named(v), ("tbm25", tbl, wt)])
                td = dense_search(TV, tids, unit(v["qvec"]), 200)
                rep_d[q] = fuse_lists([*base_named(v), ("tdense", td, wt)])
            report(f"title bm25 as 3rd list ws w={wt}", rep_b)
            report(f"title dense as 3rd list ws w={wt}", rep_d)
        # title inside the dense source: s = cos(q, content) + beta * cos(q, title)
        tpos = {i: n for n, i in enumerate(tids)}
        Tal = TV[[tpos[i] for i in mids]]
        for beta in (0.1, 0.2, 0.3, 0.5):
            rep = {}
            for q, v in lists.items():
                qq = unit(v["qvec"])
                s = M @ qq + beta * (Tal @ qq)
                top = np.argsort(-s, kind="stable")[:200]
                d2 = [(mids[i], float(s[i])) for i in top]
                rep[q] = fuse_lists([("dense", d2, 1.0), ("bm25", v["bm25"][:300], 1.0)])
            report(f"dense = content + {beta} * title (one source)", rep)

    # ---- 5. score regularisation over the stored vectors (Diaz, CIKM 2005) ------------------
    if group("regularize"):
        for n_top, knn, lam in (
            (30, 3, 0.1),
            (30, 3, 0.2),
            (30, 5, 0.2),
            (100, 3, 0.1),
            (100, 5, 0.3),
        ):
            rep = {}
            for q, fl in base_fs.items():
                ids = [i for i, _ in fl[:n_top]]
                f = np.asarray([s for _, s in fl[:n_top]])
                x = M[[row[i] for i in ids]]
                sim = x @ x.T
                np.fill_diagonal(sim, -np.inf)
                nn = np.argsort(-sim, axis=1)[:, :knn]
                w = np.maximum(np.take_along_axis(sim, nn, 1), 0)
                w = w / np.maximum(w.sum(1, keepdims=True), 1e-9)
                s2 = (1 - lam) * f + lam * (w * f[nn]).sum(1)
                rep[q] = [ids[i] for i in np.argsort(-s2, kind="stable")] + [
                    i for i, _ in fl[n_top:]
                ]
            report(f"score regularisation top={n_top} knn={knn} lam={lam}", rep)

    # ---- 4. fusion details ----------------------------------------------------------------------
    if group("fusion"):
        report(
            "z-score CombSUM d200/b300",
            {q: fuse_lists(base_named(v), norm="z") for q, v in lists.items()},
        )
        for wd in (0.4, 0.5, 0.6):
            report(
                f"z-score CombSUM wd={wd}",
                {
                    q: fuse_lists(
                        [("dense", v["dense"][:200], wd), ("bm25", v["bm25"][:300], 1 - wd)],
                        norm="z",
                    )
                    for q, v in lists.items()
                },
            )

    Path("/tmp/prf_rows.json").write_text(json.dumps(rows, indent=1))
    engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
