"""Counting grids on microarrays: brain (Pomeroy) and colon (Alon), Jojic & Perina, UAI 2011,
section 3.5 and Table 2 (results and discussion: docs/results.md).

Protocol, per outer fold (stratified ``--folds``-fold CV, repeated with the fold seeds
``--seeds``; the paper's draft journal version uses 10-fold x 3 partitions):

1. genes: the ``--genes`` (500) of largest variance of the intensities on the training fold
   only (the paper, after Rogers et al. 2005: "filtered the genes by variance and keep only
   the most variable five hundred");
2. intensities -> counts ("bags of genes", Perina et al. 2010): shift by the array floor
   (pomeroy's values are clipped to [20, 16000]: x - 20; colon: x, its minimum is 5.8),
   then every sample is scaled to the same total ``--total`` over the selected genes
   (default 2500 = 100 |W| for the 5x5 window, the per-sample normalisation
   ``c <- 100 |W| c / sum c`` of A. Perina's copy of the authors' code)
   and rounded to integers.  ``--total 0`` keeps
   the scale and uses ``round(x / --scale)`` instead.  Per-sample, so no fold leaks;
3. classifiers (the draft journal version's three; docs/counting_grids.md), each with the same E, W:

   * ``le``: label embedding, inductive (``CountingGridClassifier`` on the training fold);
   * ``le-trans``: label embedding as in the paper's section 3: one grid on all samples of
     the fold's genes without labels, gamma from the training posteriors, read out under
     the test posterior;
   * ``gen``: one grid per class (``GenerativeCountingGridClassifier``, the draft's
     recommendation);
   * ``nn``/``nn-trans``: 1-NN on the MAP window positions, toroidal distance, on the
     ``le``/``le-trans`` grids;

4. baselines on the same folds, genes and counts: LDA (scikit-learn, K topics, fitted on the
   training fold, test folded in) with 3-NN on the topic proportions under the symmetric
   KL divergence (the paper's LDA comparison, section 3.1), for each K of ``--lda-k``
   (``lda-trans``: fitted on all samples of the fold, as ``le-trans``; 50 variational EM
   iterations, scikit-learn's LDA is the slowest part of the run);
   multinomial naive Bayes (alpha = 1) on the counts; logistic regression (L2, C = 1) on the
   standardised log2 of the shifted intensities (+1) of the same genes.

Grid configurations: ``--grid2d`` and ``--grid3d`` (default 32x32/5x5, kappa = 41, and
10x10x10/3x3x3, kappa = 37: chosen before any run as the kappa-matched mid-range pair of the
paper's sizes, the paper's rule of "comparable kappa between 2-D and 3-D"; the test folds
were not used).  ``--sweep`` adds every paper size (2-D windows {5, 8, 11} x grids
{23, 32, 42, 57}; 3-D windows {3, 4, 5} x grids {8, 10, 12, 14}) for the methods
``--sweep-methods`` (default ``gen,le-trans``), reported in full.

Usage (from the repository root)::

    PYTHONPATH=src python experiments/microarray_cv.py --dataset both --seeds 0,1,2 \\
        --threads 1 --json /tmp/micro/table.json
    PYTHONPATH=src python experiments/microarray_cv.py --dataset colon --seeds 0 --sweep \\
        --methods none --json /tmp/micro/sweep_colon.json

Data: ``data/`` of the repository (data/README.md), or ``$COUNTGRID_DATA_DIR``.
"""
import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.naive_bayes import MultinomialNB
from sklearn.preprocessing import StandardScaler

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

DATASETS = {"brain": ("pomeroy_medulloblastoma", 20.0), "colon": ("colon_alon1999", 0.0)}
PAPER = {"brain": {"CG 2D": 86.30, "CG 3D": 87.84, "LDA": 82.11},
         "colon": {"CG 2D": 87.40, "CG 3D": 89.20, "LDA": 76.62}}
SWEEP_2D = [((e, e), (w, w)) for w in (5, 8, 11) for e in (23, 32, 42, 57)]
SWEEP_3D = [((e, e, e), (w, w, w)) for w in (3, 4, 5) for e in (8, 10, 12, 14)]
CG_METHODS = ("le", "le-trans", "gen", "nn", "nn-trans")


def load(name):
    path = data_path(name + ".npz")
    X = sp.load_npz(path).toarray().astype(np.float64)
    y = np.load(path, allow_pickle=False)["y"]
    return X, y


def to_counts(X, floor, total, scale):
    """Shifted intensities -> integer counts (module docstring, step 2)."""
    S = np.clip(X - floor, 0.0, None)
    if total > 0:
        S = total * S / S.sum(axis=1, keepdims=True)
    else:
        S = S / scale
    return np.round(S)


def cg_methods(methods, extent, window, Xtr, ytr, Xte, Xall, classes, a, seed):
    """Predictions of the counting-grid classifiers of ``methods`` for one fold."""
    out, info = {}, {}
    kw = grid_kwargs(extent, window, a.schedule, a.n_iter, seed, a.threads, a.dtype)
    if "le" in methods or "nn" in methods:
        t = time.perf_counter()
        clf = CountingGridClassifier(**kw).fit(Xtr, ytr)
        info["le_fit_s"] = time.perf_counter() - t
        info["le_iter"] = int(clf.grid_.n_iter_)
        if "le" in methods:
            out["le"] = clf.predict(Xte)
        if "nn" in methods:
            out["nn"] = torus_1nn(clf.grid_.positions(Xtr), ytr, clf.grid_.positions(Xte), extent)
    if "le-trans" in methods or "nn-trans" in methods:
        cg, secs = fit_grid(Xall, extent, window, a.schedule, a.n_iter, seed, a.threads,
                            a.dtype)
        info["trans_fit_s"] = secs
        info["trans_iter"] = int(cg.n_iter_)
        ntr = Xtr.shape[0]
        if "le-trans" in methods:
            Q = cg.transform(Xall)
            P = label_embedding_readout(Q[:ntr], ytr, Q[ntr:], extent, window, classes)
            out["le-trans"] = classes[np.argmax(P, axis=1)]
        if "nn-trans" in methods:
            pos = cg.positions(Xall)
            out["nn-trans"] = torus_1nn(pos[:ntr], ytr, pos[ntr:], extent)
    if "gen" in methods:
        t = time.perf_counter()
        gen = GenerativeCountingGridClassifier(**kw).fit(Xtr, ytr)
        info["gen_fit_s"] = time.perf_counter() - t
        out["gen"] = gen.predict(Xte)
    return out, info


def run_dataset(ds, a, configs, sweep_configs, results, head, t_all):
    name, floor = DATASETS[ds]
    X, y = load(name)
    classes = np.unique(y)
    n = X.shape[0]
    methods = [m for m in a.methods if m in CG_METHODS]
    base = [m for m in a.methods if m not in CG_METHODS]
    for seed in a.seeds:
        skf = StratifiedKFold(n_splits=a.folds, shuffle=True, random_state=seed)
        with warnings.catch_warnings():   # brain: 9 desmoplastic samples < 10 folds
            warnings.simplefilter("ignore", UserWarning)
            folds = list(skf.split(X, y))
        preds = {}   # key -> array of n predictions
        extra = {}

        def put(key, te, p, preds=preds):
            preds.setdefault(key, np.empty(n, dtype=y.dtype))[te] = p

        for f, (tr, te) in enumerate(folds):
            t0 = time.perf_counter()
            genes = np.sort(np.argsort(-X[tr].var(axis=0), kind="stable")[:a.genes])
            C = to_counts(X[:, genes], floor, a.total, a.scale)
            Ctr, Cte = C[tr], C[te]
            Call = np.vstack([Ctr, Cte])
            jobs = [(c, methods) for c in configs]
            jobs += [(c, a.sweep_methods) for c in sweep_configs if c not in configs]
            for (extent, window), ms in jobs:
                if not ms:
                    continue
                out, info = cg_methods(ms, extent, window, Ctr, y[tr], Cte, Call, classes, a,
                                       seed)
                g = grid_name(extent, window)
                for m, p in out.items():
                    put((m, g), te, p)
                for k, v in info.items():
                    extra.setdefault(f"{g} {k}", []).append(v)
            if "lda" in base:
                for K in a.lda_k:
                    lda = lda_topics(Ctr, Call, K, seed)
                    Ttr, Tte = lda[:len(tr)], lda[len(tr):]
                    put(("lda", f"K={K}"), te, knn_predict(Ttr, y[tr], Tte, k=3))
            if "lda-trans" in base:
                for K in a.lda_k:
                    lda_t = lda_topics(Call, Call, K, seed)   # transductive, as le-trans
                    put(("lda-trans", f"K={K}"), te,
                        knn_predict(lda_t[:len(tr)], y[tr], lda_t[len(tr):], k=3))
            if "mnb" in base:
                put(("mnb", "-"), te, MultinomialNB(alpha=1.0).fit(Ctr, y[tr]).predict(Cte))
            if "logreg" in base:
                L = np.log2(np.clip(X[:, genes] - floor, 0.0, None) + 1.0)
                sc = StandardScaler().fit(L[tr])
                lr = LogisticRegression(C=1.0, max_iter=5000).fit(sc.transform(L[tr]), y[tr])
                put(("logreg", "-"), te, lr.predict(sc.transform(L[te])))
            print(f"[{ds} seed {seed}] fold {f + 1}/{len(folds)} {time.perf_counter() - t0:.1f} s"
                  f" (total {time.perf_counter() - t_all:.0f} s)", flush=True)
        for (m, g), p in preds.items():
            r = results.setdefault(ds, {}).setdefault(
                f"{m} {g}", {"method": m, "config": g, "acc": [], "seeds": []})
            r["acc"].append(float(np.mean(p == y)))
            r["seeds"].append(seed)
        results.setdefault(ds, {}).setdefault("_timing", {}).update(
            {k: [float(np.mean(v)), float(np.max(v))] for k, v in extra.items()})
        if a.json:
            write_json(a, results, head, time.perf_counter() - t_all)


def distinct_positions(a, configs):
    """How many distinct MAP window positions the samples take on one grid fitted on all of
    them (docs/results.md, "Why the earlier colon label-embedding figure was 0.677")."""
    out = {}
    for ds in (["brain", "colon"] if a.dataset == "both" else [a.dataset]):
        name, floor = DATASETS[ds]
        X, _ = load(name)
        genes = np.sort(np.argsort(-X.var(axis=0), kind="stable")[:a.genes])
        C = to_counts(X[:, genes], floor, a.total, a.scale)
        for extent, window in configs:
            cg, _ = fit_grid(C, extent, window, a.schedule, a.n_iter, a.seeds[0], a.threads,
                             a.dtype)
            n = len({tuple(p) for p in np.asarray(cg.positions(C)).tolist()})
            out[f"{ds} {grid_name(extent, window)}"] = n
            print(f"{ds} {grid_name(extent, window)} ({a.genes} genes, total {a.total:g}, "
                  f"schedule {a.schedule}): {n} distinct MAP positions of {C.shape[0]} samples")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"args": vars(a), "distinct_positions": out}, fh, indent=1, default=str)
    return out


def write_json(a, results, head, wall):
    meta = {"args": vars(a), "git_head_at_start": head, "wall_s": wall,
            "load_avg": os.getloadavg(), "countgrid": countgrid.__version__, "paper": PAPER}
    with open(a.json, "w") as fh:
        json.dump({"meta": meta, "results": results}, fh, indent=1, default=str)


def table(results):
    for ds, rows in results.items():
        print(f"\n### {ds} (paper: CG 2D {PAPER[ds]['CG 2D']}, CG 3D {PAPER[ds]['CG 3D']}, "
              f"LDA {PAPER[ds]['LDA']})\n")
        print("| method | configuration | kappa | accuracy % (mean ± std over repeats) | "
              "per repeat |")
        print("|---|---|---|---|---|")
        for key, r in rows.items():
            if key.startswith("_"):
                continue
            acc = 100 * np.asarray(r["acc"])
            sd = f" ± {acc.std(ddof=1):.2f}" if len(acc) > 1 else ""
            kap = ""
            if "/" in r["config"]:
                e, w = parse_grid(r["config"])
                kap = f"{kappa(e, w):.1f}"
            print(f"| {r['method']} | {r['config']} | {kap} | {acc.mean():.2f}{sd} | "
                  + " / ".join(f"{v:.2f}" for v in acc) + " |")
        t = rows.get("_timing", {})
        if t:
            print("\nmean (max) seconds per fold: "
                  + "; ".join(f"{k} {v[0]:.1f} ({v[1]:.1f})" for k, v in t.items()))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", choices=["brain", "colon", "both"], default="both")
    p.add_argument("--folds", type=int, default=10)
    p.add_argument("--seeds", default="0,1,2", help="fold seeds (one repeat each); also seed "
                   "every grid and LDA")
    p.add_argument("--genes", type=int, default=500)
    p.add_argument("--total", type=float, default=2500.0,
                   help="tokens per sample after normalisation; 0: round(x / --scale)")
    p.add_argument("--scale", type=float, default=10.0)
    p.add_argument("--grid2d", default="32/5")
    p.add_argument("--grid3d", default="10^3/3")
    p.add_argument("--methods", default="le,le-trans,gen,nn,nn-trans,lda,mnb,logreg",
                   help="comma list of le, le-trans, gen, nn, nn-trans, lda, lda-trans, mnb, "
                   "logreg; "
                   "'none' for nothing but the sweep")
    p.add_argument("--sweep", action="store_true", help="also every paper grid size")
    p.add_argument("--sweep-methods", default="gen,le-trans")
    p.add_argument("--lda-k", default="5,10,20,40")
    p.add_argument("--n-iter", type=int, default=100)
    p.add_argument("--schedule", choices=["default", "none", "brief"], default="default",
                   help="window_schedule: the package default (not passed), none, or the "
                   "interim coarse-to-fine rule of _cg_protocols.brief_schedule")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                   help="precision of every grid (default float64, as in docs/results.md; "
                   "the package default is float32)")
    p.add_argument("--positions", action="store_true",
                   help="instead of the CV: fit one grid of each configuration on ALL samples "
                   "(genes chosen on all of them, grid seeded with the first fold seed) and "
                   "print how many distinct MAP window positions the samples take")
    p.add_argument("--json", default=None)
    p.add_argument("--table-from", default=None, help="print the table of a JSON file")
    a = p.parse_args(argv)
    if a.table_from:
        with open(a.table_from) as fh:
            table(json.load(fh)["results"])
        return
    a.seeds = [int(s) for s in a.seeds.split(",")]
    a.lda_k = [int(k) for k in a.lda_k.split(",")]
    a.methods = [] if a.methods == "none" else a.methods.split(",")
    a.sweep_methods = [] if a.sweep_methods == "none" else a.sweep_methods.split(",")
    configs = [parse_grid(g) for g in (a.grid2d, a.grid3d) if g != "none"]
    sweep = (SWEEP_2D + SWEEP_3D) if a.sweep else []
    for e, w in configs + sweep:
        if a.schedule == "brief":
            print(f"{grid_name(e, w)}: kappa {kappa(e, w):.1f}, schedule {brief_schedule(e, w)}")
    if a.positions:
        return distinct_positions(a, configs)
    head = git_head()
    results = {}
    t_all = time.perf_counter()
    for ds in (["brain", "colon"] if a.dataset == "both" else [a.dataset]):
        run_dataset(ds, a, configs, sweep, results, head, t_all)
    table(results)
    print(f"\nwall {time.perf_counter() - t_all:.0f} s")
    if a.json:
        write_json(a, results, head, time.perf_counter() - t_all)
        print(f"wrote {a.json}")


if __name__ == "__main__":
    main()
