"""Counting grids on the E. coli promoters, leave-one-out (Jojic & Perina, UAI 2011,
section 3.4: 83.01 % for CGs, HMM 67.3 %, Fisher kernel 79.2 %; results and discussion in
docs/results.md).

Bags of features (``--features``, comma list; the paper: "We transformed the sequences in
bag of features representations as we explained in the previous section" — the previous
section, 3.3, represents each patient by counts over 9-long peptides, so our reading is a
bag of overlapping k-mers):

* ``kmer<k>`` (e.g. ``kmer3``, the default): counts of the ``57 - k + 1`` overlapping
  k-mers of the sequence, ``4^k`` features; no position;
* ``poskmer<k>``: the same k-mers tagged with the 10-nucleotide segment of the sequence
  where they start (6 segments, the last one 7 long), ``6 * 4^k`` features: position-aware;
* ``onehot``: the file's 228 position x nucleotide indicators as a bag of 57 tokens.

Classifiers (the same as ``microarray_cv.py``; docs/counting_grids.md),
with the same E, W:

* ``le-trans``: the paper's protocol (section 3: "each data point is taken out of the set
  used to estimate the label embedding gamma of the rest of the data"): one grid on all 106
  bags without labels, then for each left-out sequence gamma (eq. 9) from the other 105
  posteriors, read out under its posterior (expected window mean);
* ``nn-trans``: 1-NN on that grid's MAP positions (toroidal distance);
* ``le``, ``nn``: inductive, a grid per LOO fold learned on the other 105 bags
  (``CountingGridClassifier``);
* ``gen``: one grid per class per LOO fold (``GenerativeCountingGridClassifier``).

Baselines on the same LOO folds: multinomial NB (alpha = 1) on the bag; LDA (K topics,
fitted on the 105, the left-out bag folded in) with 3-NN on the topic proportions under
the symmetric KL divergence (``--lda-k``); logistic regression (L2, C = 1) on the one-hot
sequence, the standard position-aware representation, for context.

Grids: ``--grid2d`` 32x32/5x5 and ``--grid3d`` 10x10x10/3x3x3 by default, the kappa-matched
pair fixed for the microarray table (the paper gives no size for this section); ``--sweep``
adds 2-D 16x16/4x4, 24x24/4x4 and 3-D 8x8x8/3x3x3 for the transductive methods.

Usage (from the repository root)::

    PYTHONPATH=src python experiments/promoters_loo.py --threads 1 --json /tmp/prom/loo.json
    PYTHONPATH=src python experiments/promoters_loo.py \\
        --features kmer2,kmer3,kmer4,poskmer2,onehot --methods le-trans,nn-trans,mnb --sweep \\
        --json /tmp/prom/sweep.json
"""
import argparse
import itertools
import json
import os
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import MultinomialNB

import countgrid
from countgrid.grid import CountingGridClassifier, GenerativeCountingGridClassifier

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "data"))
from _cg_protocols import (
    brief_schedule,
    fit_grid,
    git_head,
    grid_kwargs,
    grid_name,
    kappa,
    knn_predict,
    label_embedding_readout,
    lda_topics,
    parse_grid,
    torus_1nn,
)
from repo_data import data_path

PAPER = {"CG": 83.01, "HMM": 67.3, "Fisher kernel": 79.2}
SWEEP = [((16, 16), (4, 4)), ((24, 24), (4, 4)), ((8, 8, 8), (3, 3, 3))]
NUC = "acgt"


def load():
    path = data_path("ecoli_promoters.npz")
    f = np.load(path, allow_pickle=False)
    onehot = sp.load_npz(path).toarray().astype(np.float64)
    raw = bytes(f["texts_utf8"]).decode("utf-8")
    off = f["texts_offsets"]
    seqs = [raw[off[i]:off[i + 1]].lower() for i in range(len(off) - 1)]
    assert all(len(s) == 57 and set(s) <= set(NUC) for s in seqs), "unexpected sequences"
    return seqs, onehot, f["y"], [str(v) for v in f["label_names"]]


def bag(seqs, onehot, kind):
    """Count matrix of the bag-of-features representation ``kind`` (module docstring)."""
    if kind == "onehot":
        return onehot
    pos_aware = kind.startswith("poskmer")
    k = int(kind[len("poskmer"):] if pos_aware else kind[len("kmer"):])
    index = {"".join(t): i for i, t in enumerate(itertools.product(NUC, repeat=k))}
    nseg = 6 if pos_aware else 1
    C = np.zeros((len(seqs), nseg * len(index)))
    for r, s in enumerate(seqs):
        for p in range(len(s) - k + 1):
            seg = min(p // 10, 5) if pos_aware else 0
            C[r, seg * len(index) + index[s[p:p + k]]] += 1
    return C


def run(C, onehot, y, extent, window, methods, a, log):
    """LOO predictions of the counting-grid methods for one bag and one grid."""
    n = len(y)
    classes = np.unique(y)
    out, info = {}, {}
    if "le-trans" in methods or "nn-trans" in methods:
        cg, secs = fit_grid(C, extent, window, a.schedule, a.n_iter, a.seed, a.threads,
                            a.dtype)
        info.update(trans_fit_s=secs, trans_iter=int(cg.n_iter_))
        Q = cg.transform(C)
        pos = cg.positions(C)
        le, nn = np.empty_like(y), np.empty_like(y)
        for i in range(n):
            rest = np.arange(n) != i
            P = label_embedding_readout(Q[rest], y[rest], Q[i:i + 1], extent, window, classes)
            le[i] = classes[np.argmax(P[0])]
            nn[i] = torus_1nn(pos[rest], y[rest], pos[i:i + 1], extent)[0]
        if "le-trans" in methods:
            out["le-trans"] = le
        if "nn-trans" in methods:
            out["nn-trans"] = nn
    ind = [m for m in ("le", "nn", "gen") if m in methods]
    if ind:
        preds = {m: np.empty_like(y) for m in ind}
        kw = grid_kwargs(extent, window, a.schedule, a.n_iter, a.seed, a.threads, a.dtype)
        t0 = time.perf_counter()
        for i in range(n):
            rest = np.arange(n) != i
            if "le" in ind or "nn" in ind:
                clf = CountingGridClassifier(**kw).fit(C[rest], y[rest])
                if "le" in ind:
                    preds["le"][i] = clf.predict(C[i:i + 1])[0]
                if "nn" in ind:
                    preds["nn"][i] = torus_1nn(clf.grid_.positions(C[rest]), y[rest],
                                               clf.grid_.positions(C[i:i + 1]), extent)[0]
            if "gen" in ind:
                gen = GenerativeCountingGridClassifier(**kw).fit(C[rest], y[rest])
                preds["gen"][i] = gen.predict(C[i:i + 1])[0]
            if (i + 1) % 20 == 0:
                log(f"  LOO {i + 1}/{n} {time.perf_counter() - t0:.0f} s")
        info["inductive_s"] = time.perf_counter() - t0
        out.update(preds)
    return out, info


def baselines(C, onehot, y, methods, a):
    n = len(y)
    out = {}
    for m in methods:
        if m == "mnb":
            out[("mnb", "-")] = np.array([
                MultinomialNB(alpha=1.0).fit(C[np.arange(n) != i], y[np.arange(n) != i])
                .predict(C[i:i + 1])[0] for i in range(n)])
        elif m == "logreg":
            out[("logreg onehot", "-")] = np.array([
                LogisticRegression(C=1.0, max_iter=5000)
                .fit(onehot[np.arange(n) != i], y[np.arange(n) != i])
                .predict(onehot[i:i + 1])[0] for i in range(n)])
        elif m == "lda":
            for K in a.lda_k:
                p = np.empty_like(y)
                for i in range(n):
                    rest = np.arange(n) != i
                    T = lda_topics(C[rest], np.vstack([C[rest], C[i:i + 1]]), K, a.seed)
                    p[i] = knn_predict(T[:-1], y[rest], T[-1:], k=3)[0]
                out[("lda", f"K={K}")] = p
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--features", default="kmer3")
    p.add_argument("--grid2d", default="32/5")
    p.add_argument("--grid3d", default="10^3/3")
    p.add_argument("--methods", default="le-trans,nn-trans,le,nn,gen,mnb,lda,logreg")
    p.add_argument("--sweep", action="store_true")
    p.add_argument("--lda-k", default="5,10,20,40")
    p.add_argument("--n-iter", type=int, default=100)
    p.add_argument("--schedule", choices=["default", "none", "brief"], default="default")
    p.add_argument("--seed", type=int, default=0, help="seeds every grid and LDA")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                   help="precision of every grid (default float64, as in docs/results.md; "
                   "the package default is float32)")
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    a.lda_k = [int(k) for k in a.lda_k.split(",")]
    methods = a.methods.split(",")
    configs = [parse_grid(g) for g in (a.grid2d, a.grid3d) if g != "none"]
    seqs, onehot, y, _names = load()
    head = git_head()
    t_all = time.perf_counter()

    def log(msg):
        print(f"{msg} (total {time.perf_counter() - t_all:.0f} s)", flush=True)

    rows = []
    for feat in a.features.split(","):
        C = bag(seqs, onehot, feat)
        log(f"{feat}: {C.shape[1]} features, {C.sum(axis=1).mean():.0f} tokens per sequence")
        jobs = [(c, methods) for c in configs]
        jobs += [(c, [m for m in methods if m.endswith("-trans")]) for c in SWEEP
                 if a.sweep and c not in configs]
        for (extent, window), ms in jobs:
            ms = [m for m in ms if m in ("le-trans", "nn-trans", "le", "nn", "gen")]
            if not ms:
                continue
            if a.schedule == "brief":
                log(f" {grid_name(extent, window)} schedule {brief_schedule(extent, window)}")
            out, info = run(C, onehot, y, extent, window, ms, a, log)
            for m, pr in out.items():
                rows.append({"features": feat, "method": m,
                             "config": grid_name(extent, window),
                             "kappa": kappa(extent, window), "acc": float(np.mean(pr == y)),
                             "info": info})
                log(f" {feat} {m} {grid_name(extent, window)}: {100 * rows[-1]['acc']:.2f} %")
        for (m, cfg), pr in baselines(C, onehot, y, methods, a).items():
            if m.startswith("logreg") and feat != a.features.split(",")[0]:
                continue   # the same one-hot input whatever the bag
            rows.append({"features": "onehot" if m.startswith("logreg") else feat, "method": m,
                         "config": cfg, "kappa": None, "acc": float(np.mean(pr == y)),
                         "info": {}})
            log(f" {rows[-1]['features']} {m} {cfg}: {100 * rows[-1]['acc']:.2f} %")
        if a.json:
            write_json(a, rows, head, time.perf_counter() - t_all)
    print(f"\nLOO accuracy, 106 sequences (paper: CG {PAPER['CG']}, HMM {PAPER['HMM']}, "
          f"Fisher kernel {PAPER['Fisher kernel']})\n")
    print("| features | method | configuration | kappa | LOO accuracy % | correct |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        kap = f"{r['kappa']:.1f}" if r["kappa"] else ""
        print(f"| {r['features']} | {r['method']} | {r['config']} | {kap} | "
              f"{100 * r['acc']:.2f} | {round(r['acc'] * len(y))}/{len(y)} |")
    print(f"\nwall {time.perf_counter() - t_all:.0f} s")
    if a.json:
        write_json(a, rows, head, time.perf_counter() - t_all)
        print(f"wrote {a.json}")


def write_json(a, rows, head, wall):
    meta = {"args": vars(a), "git_head_at_start": head, "wall_s": wall,
            "load_avg": os.getloadavg(), "countgrid": countgrid.__version__, "paper": PAPER}
    with open(a.json, "w") as fh:
        json.dump({"meta": meta, "rows": rows}, fh, indent=1, default=str)


if __name__ == "__main__":
    main()
