"""Ceiling check (train split only): a linear fusion of every signal the studies produced,
weights learnt by coordinate ascent (Metzler and Croft, "Linear feature-based models for
information retrieval", 2007) and scored by 5-fold cross-validation over the queries.

Signals, each min-max normalised over its own top list, documents collapsed to their best
chunk: dense ``content`` (FirstP), BM25, dense MaxP over 128-word passages, BM25 over titles,
a title dense vector, Rocchio (k = 3, a = 0.8) on the query vector. Reads the caches the other
two studies leave: ``/tmp/prf.pkl`` (tune_prf.py), ``/tmp/passages/w128o32.npy``
(tune_passages.py), ``/tmp/prf_titles.npy`` (tune_prf.py --only title), and the current
``content`` vectors dumped to ``/tmp/content_M.npy`` / ``/tmp/content_ids.json``.

    PYTHONPATH=layers/core nice -n 19 python benchmarks/tune_fusion_cv.py
"""

# ruff: noqa: E741
import argparse
import json
import pickle
import sys
from pathlib import Path

import numpy as np

from agentic_search.logic.chunking import chunk_records, doc_id_of
from agentic_search.logic.fusion import minmax
from agentic_search.logic.schema import load_schema
from agentic_search.logic.text import default_analyzer
from agentic_search_cli import evaluation as ev

CACHES = ("/tmp/prf.pkl", "/tmp/content_M.npy", "/tmp/content_ids.json", "/tmp/prf_titles.npy")
argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
).parse_args()
if missing := [p for p in CACHES if not Path(p).exists()]:
    sys.exit(f"tune_fusion_cv: run tune_prf.py and tune_passages.py first (missing {missing[0]})")
AN = default_analyzer()
schema = load_schema("documents")
data = ev.load_beir(Path("datasets/scifact"), "train", schema)
lists = pickle.loads(Path("/tmp/prf.pkl").read_bytes())
M = np.load("/tmp/content_M.npy")
mids = json.loads(Path("/tmp/content_ids.json").read_text())
mrow = {i: n for n, i in enumerate(mids)}
W = "w128o32"
sch = schema.model_copy(
    update={"chunking": schema.chunking.model_copy(update={"max_words": 128, "overlap_words": 32})}
)

try:
    import bm25s
    from bm25s.tokenization import Tokenized
except ImportError:  # bm25s is no longer a dependency of the project
    sys.exit("this benchmark compares with bm25s (no longer a dependency): pip install bm25s")
owner = [str(c["doc_id"]) for c in chunk_records(sch, data.corpus.records)]
V = np.load(f"/tmp/passages/{W}.npy")
V /= np.linalg.norm(V, axis=1, keepdims=True)
docs = list(dict.fromkeys(owner))
dpos = {d: i for i, d in enumerate(docs)}
oidx = np.asarray([dpos[d] for d in owner])
starts = np.flatnonzero(np.r_[True, oidx[1:] != oidx[:-1]])
T = np.load("/tmp/prf_titles.npy")
T /= np.linalg.norm(T, axis=1, keepdims=True)
tids = [str(c["id"]) for c in chunk_records(schema, data.corpus.records)]
titles = {
    str(c["id"]): str(c.get("title") or "") for c in chunk_records(schema, data.corpus.records)
}
voc = {}
toks = [[voc.setdefault(t, len(voc)) for t in AN.terms(titles[i])] for i in tids]
tix = bm25s.BM25()
tix.index(Tokenized(ids=toks, vocab=voc), show_progress=False)


def unit(v):
    return v / np.linalg.norm(v)


def topdoc(scores, ids, k, collapse=True):
    order = np.argsort(-scores, kind="stable")
    out = {}
    for i in order:
        d = doc_id_of(ids[i]) if collapse else ids[i]
        if d not in out:
            out[d] = float(scores[i])
        if len(out) == k:
            break
    return out


def lst2doc(l, k):
    out = {}
    for i, s in l:
        out.setdefault(doc_id_of(i), s)
        if len(out) == k:
            break
    return out


names = ["dense", "bm25", "maxp", "tbm25", "tdense", "rocchio"]
Q = {}
for q, v in lists.items():
    qv = unit(v["qvec"])
    L = {"dense": lst2doc(v["dense"], 200), "bm25": lst2doc(v["bm25"], 300)}
    mp = np.maximum.reduceat(V @ qv, starts)
    L["maxp"] = topdoc(mp, docs, 200, False)
    terms = [voc[t] for t in AN.terms(v["stext"]) if t in voc]
    if terms:
        dd, ss = tix.retrieve([terms], k=300, show_progress=False, n_threads=1)
        L["tbm25"] = {}
        for i, s in zip(dd[0], ss[0], strict=True):
            if s > 0:
                L["tbm25"].setdefault(doc_id_of(tids[int(i)]), float(s))
    else:
        L["tbm25"] = {}
    L["tdense"] = topdoc(T @ qv, tids, 200)
    # rocchio k=3 a=0.8 from base fused (dense+bm25 minmax)
    L["rocchio"] = None
    Q[q] = L


def feats(L, roc=True):
    cand = list(dict.fromkeys(d for n in names if L.get(n) for d in L[n]))
    F = np.zeros((len(cand), len(names)))
    pos = {d: i for i, d in enumerate(cand)}
    for j, n in enumerate(names):
        if not L.get(n):
            continue
        ds = list(L[n])
        mm = minmax(list(L[n].values()))
        for d, x in zip(ds, mm, strict=True):
            F[pos[d], j] = x
    return cand, F


# rocchio list needs base fused top-3
for q, v in lists.items():
    L = Q[q]
    cand, F = feats({"dense": L["dense"], "bm25": L["bm25"]})
    fb = [cand[i] for i in np.argsort(-(F[:, 0] + F[:, 1]), kind="stable")[:3]]
    c = M[[mrow[d] for d in fb]].mean(0)
    q2 = unit(0.8 * unit(v["qvec"]) + 0.2 * c)
    L["rocchio"] = topdoc(M @ q2, mids, 200)
FE = {q: feats(L) for q, L in Q.items()}
qrels = data.qrels


def ndcg10(q, order_ids):
    rel = qrels[q]
    g = sum((2 ** rel.get(d, 0) - 1) / np.log2(r + 2) for r, d in enumerate(order_ids[:10]))
    ideal = sorted(rel.values(), reverse=True)[:10]
    ig = sum((2**x - 1) / np.log2(r + 2) for r, x in enumerate(ideal))
    return g / ig if ig else 0


def mean_ndcg(qs, w):
    tot = 0
    for q in qs:
        cand, F = FE[q]
        s = F @ w
        order = np.argsort(-s, kind="stable")
        tot += ndcg10(q, [cand[i] for i in order])
    return tot / len(qs)


qs = sorted(FE)
print("base (dense+bm25)", round(mean_ndcg(qs, np.array([1, 1, 0, 0, 0, 0.0])), 4))
print("maxp+bm25", round(mean_ndcg(qs, np.array([0, 1, 1, 0, 0, 0.0])), 4))
grid = [0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0]


rng = np.random.default_rng(0)
perm = rng.permutation(qs)
folds = np.array_split(perm, 5)


def cv(mask):
    res = []
    ws = []
    for i in range(5):
        te = list(folds[i])
        tr = [q for j, f in enumerate(folds) if j != i for q in f]
        init = np.array([1, 1, 0, 0, 0, 0.0]) * mask + 0
        init[1] = 1
        w, _ = ascent_masked(tr, init, mask)
        res.append(mean_ndcg(te, w) * len(te))
        ws.append(w)
    return sum(res) / len(qs), ws


def ascent_masked(tr, init, mask):
    w = np.array(init, float)
    best = mean_ndcg(tr, w)
    for _ in range(2):
        for j in range(len(w)):
            if j == 1 or not mask[j]:
                continue
            for g in grid:
                w2 = w.copy()
                w2[j] = g
                s = mean_ndcg(tr, w2)
                if s > best + 1e-6:
                    best, w = s, w2
    return w, best


for label, mask in (
    ("dense,bm25", [1, 1, 0, 0, 0, 0]),
    ("dense,bm25,maxp", [1, 1, 1, 0, 0, 0]),
    ("all six", [1, 1, 1, 1, 1, 1]),
):
    s, ws = cv(np.array(mask, float))
    print(
        "5-fold CV coordinate ascent",
        label,
        round(s, 4),
        [list(np.round(w, 2)) for w in ws],
        flush=True,
    )
