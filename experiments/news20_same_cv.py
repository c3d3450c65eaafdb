"""Counting grids on news20_same: stratified k-fold CV of label-embedding
classification (Jojic & Perina, UAI 2011, section 3.1 and Table 1).

Protocol (per fold, everything learned on the training fold only):

1. vocabulary cut to the ``--k`` (2000) most informative words with a
   supervised criterion (``--selector``: chi2 by default, also information gain
   or an mRMR implementation), inside a scikit-learn ``Pipeline``;
2. training documents left empty by the cut are dropped (test documents are
   kept: an empty test document gets the uniform posterior and still counts);
3. one counting grid is learned on the training documents without labels, the
   labels are embedded with the training posteriors (paper eq. 9) and a test
   document's class is read out under its posterior
   (``countgrid.CountingGridClassifier``).

Usage (from the repository root)::

    PYTHONPATH=src python experiments/news20_same_cv.py --grid all --folds 10 --seed 0 \\
        --threads 2 --variants all --json experiments/news20_same_cv.json

``--grid`` picks the core counting-grid configurations (2-D 40x40/4x4, the 3-D
grids; ``1d`` the 1-D grids of the paper's Fig. 3b, 400/4 and 1600/16, both kappa = 100),
``--variants`` the context runs (float32, coarse-to-fine window schedule, the learned
location prior, generative one-grid-per-class classifier, mRMR / information-gain
selection, naive Bayes and 3-NN baselines).  All configurations use the same folds.

The core runs are the protocol of docs/results.md: float64 (``--dtype``), no window
schedule (``--schedule none``), ``n_iter=100``, ``tol=1e-5``, as the grids' defaults were
when the tables were made; since then ``CountingGridClassifier()`` defaults to float32 and
the coarse-to-fine schedule, so the protocol is spelled out here.

    PYTHONPATH=src python experiments/news20_same_cv.py --grid 1d --folds 10 --seed 0 \\
        --threads 1 --json /tmp/n20/grid1d.json
    PYTHONPATH=src python experiments/news20_same_cv.py --grid none --folds 10 --max-folds 3 \\
        --seed 0 --threads 1 --variants prior --json /tmp/n20/prior3.json
"""
import argparse
import json
import os
import platform
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.feature_selection import SelectKBest, chi2
from sklearn.feature_selection._base import SelectorMixin
from sklearn.model_selection import StratifiedKFold
from sklearn.naive_bayes import MultinomialNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline

import countgrid
from countgrid.grid import CountingGridClassifier, GenerativeCountingGridClassifier

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "data"))
from repo_data import data_path  # data/repo_data.py

PAPER_ACC = 81.28  # Table 1, E/W = 40/4, 1,700-post version of news-20-same


# --------------------------------------------------------------------------- selection
def _binary(X):
    B = sp.csr_matrix(X, copy=True)
    B.data = (B.data > 0).astype(np.float64)
    B.eliminate_zeros()
    return B


def _xlogx_ratio(n_ab, n_a, n_b, n):
    """n_ab/n * log(n * n_ab / (n_a n_b)), 0 where n_ab == 0 (arrays)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        v = (n_ab / n) * np.log((n * n_ab) / (n_a * n_b))
    return np.where(n_ab > 0, v, 0.0)


def presence_class_mi(X, y):
    """Mutual information (nats) between each word's presence in a document and
    the class ("information gain", Yang & Pedersen 1997); a SelectKBest
    score_func."""
    B = _binary(X)
    y = np.asarray(y)
    n = float(B.shape[0])
    df = np.asarray(B.sum(axis=0)).ravel()
    mi = np.zeros(B.shape[1])
    for c in np.unique(y):
        rows = y == c
        nc = float(rows.sum())
        n1c = np.asarray(B[rows].sum(axis=0)).ravel()
        mi += _xlogx_ratio(n1c, df, nc, n) + _xlogx_ratio(nc - n1c, n - df, nc, n)
    return mi


class MRMRSelector(SelectorMixin, BaseEstimator):
    """Greedy mRMR (Peng, Long & Ding 2005), MID criterion, on binary word
    presence: repeatedly add the word maximising
    ``I(x_j; c) - mean_{i in S} I(x_j; x_i)``, starting from the most relevant.
    Candidates are the ``n_candidates`` most relevant words (Peng et al. also
    pre-filter by relevance)."""

    def __init__(self, k=2000, n_candidates=10000):
        self.k = k
        self.n_candidates = n_candidates

    def fit(self, X, y):
        B = _binary(X)
        n = float(B.shape[0])
        rel = presence_class_mi(B, y)
        Z = B.shape[1]
        cand = np.argsort(-rel, kind="stable")[: min(self.n_candidates, Z)]
        cand = cand[rel[cand] > 0]
        Bc = sp.csc_matrix(B[:, cand])
        df = np.asarray(Bc.sum(axis=0)).ravel()
        k = min(self.k, len(cand))
        redund = np.zeros(len(cand))
        chosen = np.zeros(len(cand), dtype=bool)
        order = []
        BcT = Bc.T.tocsr()
        j = 0  # candidates are sorted by relevance: start with the most relevant
        for s in range(k):
            chosen[j] = True
            order.append(j)
            if s == k - 1:
                break
            co = np.asarray(BcT @ Bc[:, j].toarray()).ravel()  # co-occurrence with word j
            dj = df[j]
            mi = (_xlogx_ratio(co, df, dj, n) + _xlogx_ratio(df - co, df, n - dj, n)
                  + _xlogx_ratio(dj - co, n - df, dj, n)
                  + _xlogx_ratio(n - df - dj + co, n - df, n - dj, n))
            redund += mi
            crit = rel[cand] - redund / (s + 1)
            crit[chosen] = -np.inf
            j = int(np.argmax(crit))
        mask = np.zeros(Z, dtype=bool)
        mask[cand[order]] = True
        self.support_ = mask
        self.n_features_in_ = Z
        return self

    def _get_support_mask(self):
        return self.support_


def make_selector(name, k):
    if name == "chi2":
        return SelectKBest(chi2, k=k)
    if name == "ig":
        return SelectKBest(presence_class_mi, k=k)
    if name == "mrmr":
        return MRMRSelector(k=k)
    raise ValueError(name)


class DropEmptyTraining(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Fit `estimator` on the training documents that still contain a word
    (after feature selection); predict on all documents."""

    def __init__(self, estimator):
        self.estimator = estimator

    def fit(self, X, y):
        keep = np.asarray(X.sum(axis=1)).ravel() > 0
        self.n_dropped_ = int((~keep).sum())
        self.estimator_ = clone(self.estimator).fit(X[keep], np.asarray(y)[keep])
        self.classes_ = self.estimator_.classes_
        return self

    def predict(self, X):
        return self.estimator_.predict(X)


# --------------------------------------------------------------------------- configurations
def cg(extent, window, a, **kw):
    params = {"n_iter": a.n_iter, "tol": a.tol, "num_threads": a.threads,
              "random_state": a.seed, "dtype": np.dtype(a.dtype).type}
    if a.schedule == "none":
        params["window_schedule"] = None
    params.update(kw)
    return CountingGridClassifier(extent, window, **params)


def configurations(a):
    """name -> (description, selector name, final estimator).  Core first."""
    core, var = {}, {}
    sel = a.selector
    if a.grid == "1d":
        core["CG 1-D 400 / 4"] = ("label embedding, kappa=100 (paper Fig. 3b, 1-D)", sel,
                                  cg((400,), (4,), a))
        core["CG 1-D 1600 / 16"] = ("label embedding, kappa=100, as many cells as 40x40",
                                    sel, cg((1600,), (16,), a))
    if a.grid in ("2d", "all"):
        core["CG 2-D 40x40 / 4x4"] = ("label embedding, kappa=100", sel,
                                      cg((40, 40), (4, 4), a))
    if a.grid in ("3d", "all"):
        core["CG 3-D 10x10x10 / 3x3x2"] = ("label embedding, kappa=55.6 (paper's footnote pair)",
                                           sel, cg((10, 10, 10), (3, 3, 2), a))
        core["CG 3-D 12x12x12 / 3x3x2"] = ("label embedding, kappa=96", sel,
                                           cg((12, 12, 12), (3, 3, 2), a))
    wanted = set()
    if a.variants == "all":
        wanted = {"f32", "schedule", "prior", "generative", "ig", "mrmr", "mnb", "knn"}
    elif a.variants not in ("", "none"):
        wanted = set(a.variants.split(","))
    if "f32" in wanted:
        var["CG 2-D 40x40 / 4x4 float32"] = ("as the 2-D core run, dtype=float32", sel,
                                             cg((40, 40), (4, 4), a, dtype=np.float32))
    if "schedule" in wanted:
        var["CG 2-D 40x40 / 4x4 coarse-to-fine"] = (
            "window_schedule 10x10 (15 it), 6x6 (15 it), then 4x4", sel,
            cg((40, 40), (4, 4), a, window_schedule=[((10, 10), 15), ((6, 6), 15)]))
    if "prior" in wanted:
        var["CG 2-D 40x40 / 4x4 learned prior"] = (
            ("as the 2-D core run, learn_prior=True (location prior p(k) from the "
             "posteriors, draft eq. 10)"), sel, cg((40, 40), (4, 4), a, learn_prior=True))
    if "ig" in wanted and sel != "ig":
        var["CG 2-D 40x40 / 4x4, IG selection"] = (
            "2-D core run, words by information gain (presence-class MI)", "ig",
            cg((40, 40), (4, 4), a))
    if "mrmr" in wanted and sel != "mrmr":
        var["CG 2-D 40x40 / 4x4, mRMR selection"] = (
            "2-D core run, words by mRMR (MID, binary presence)", "mrmr",
            cg((40, 40), (4, 4), a))
    if "generative" in wanted:
        var["Generative CG 20x20 / 4x4 per class"] = (
            "one grid per class, max likelihood, kappa=25", sel,
            GenerativeCountingGridClassifier(
                (20, 20), (4, 4), n_iter=a.n_iter, tol=a.tol, num_threads=a.threads,
                random_state=a.seed, dtype=np.dtype(a.dtype).type,
                **({"window_schedule": None} if a.schedule == "none" else {})))
    if "mnb" in wanted:
        var["Multinomial NB"] = ("counts of the selected words, alpha=1", sel, MultinomialNB())
    if "knn" in wanted:
        var["3-NN tf-idf cosine"] = ("tf-idf of the selected words, cosine, k=3", sel,
                                     Pipeline([("tfidf", TfidfTransformer()),
                                               ("knn", KNeighborsClassifier(3, metric="cosine"))]))
    return core, var


# --------------------------------------------------------------------------- run
def run_config(name, desc, selector, est, X, y, folds, a):
    pipe = Pipeline([("select", make_selector(selector, a.k)),
                     ("clf", DropEmptyTraining(est))])
    rows = []
    for f, (tr, te) in enumerate(folds):
        model = clone(pipe)
        t0 = time.perf_counter()
        model.fit(X[tr], y[tr])
        t1 = time.perf_counter()
        pred = model.predict(X[te])
        t2 = time.perf_counter()
        acc = float(np.mean(pred == y[te]))
        inner = model.named_steps["clf"].estimator_
        Xte_sel = model.named_steps["select"].transform(X[te])
        row = {"fold": f, "accuracy": acc, "fit_s": t1 - t0, "predict_s": t2 - t1,
               "n_train": len(tr), "n_test": len(te),
               "dropped_train": model.named_steps["clf"].n_dropped_,
               "empty_test": int((np.asarray(Xte_sel.sum(axis=1)).ravel() == 0).sum())}
        if hasattr(inner, "grid_"):
            row.update(n_iter=inner.grid_.n_iter_, converged=inner.grid_.converged_)
            prior = getattr(inner.grid_, "prior_", None)
            if prior is not None:
                # how concentrated the learned prior is: exp(entropy), as a count of
                # positions, and how many positions hold 90 % of its mass
                p = np.asarray(prior, dtype=np.float64).ravel()
                p = p / p.sum()
                nz = p[p > 0]
                top = np.sort(p)[::-1]
                row.update(prior_perplexity=float(np.exp(-(nz * np.log(nz)).sum())),
                           prior_positions=int(p.size),
                           prior_positions_90=int(np.searchsorted(np.cumsum(top), 0.9) + 1))
        elif hasattr(inner, "grids_"):
            row.update(n_iter=[g.n_iter_ for g in inner.grids_],
                       converged=[g.converged_ for g in inner.grids_])
        rows.append(row)
        print(f"  {name:40s} fold {f:2d}  acc {100 * acc:6.2f}%  fit {t1 - t0:6.1f}s  "
              f"predict {t2 - t1:5.2f}s  it {row.get('n_iter', '-')}", flush=True)
    accs = np.array([r["accuracy"] for r in rows])
    return {"name": name, "description": desc, "selector": selector, "estimator": repr(est),
            "mean": float(accs.mean()),
            "std": float(accs.std(ddof=1)) if len(accs) > 1 else 0.0,
            "folds": rows,
            "fit_s_mean": float(np.mean([r["fit_s"] for r in rows])),
            "total_s": float(sum(r["fit_s"] + r["predict_s"] for r in rows))}


def _git_head():
    import subprocess

    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=False,
                              cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except OSError:
        return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--grid", choices=["1d", "2d", "3d", "all", "none"], default="all",
                   help="core counting-grid configurations (default: all = 2d and 3d)")
    p.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                   help="precision of the grids (default float64, as in docs/results.md; "
                        "the f32 variant is float32 whatever this says)")
    p.add_argument("--schedule", choices=["none", "default"], default="none",
                   help="window schedule of the core grids: none (docs/results.md) or the "
                        "package default (coarse to fine)")
    p.add_argument("--folds", type=int, default=10, help="stratified folds (default 10)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the fold shuffle and of every grid initialisation (default 0)")
    p.add_argument("--n-iter", type=int, default=100, help="max EM iterations (default 100)")
    p.add_argument("--tol", type=float, default=1e-5, help="EM tolerance (default 1e-5)")
    p.add_argument("--threads", type=int, default=2, help="OpenMP threads (default 2)")
    p.add_argument("--k", type=int, default=2000, help="words kept per fold (default 2000)")
    p.add_argument("--selector", choices=["chi2", "ig", "mrmr"], default="chi2",
                   help="supervised word selection of the core runs (default chi2)")
    p.add_argument("--variants", default="none",
                   help="comma list of f32,schedule,prior,generative,ig,mrmr,mnb,knn; 'all' "
                        "or 'none'")
    p.add_argument("--max-folds", type=int, default=None,
                   help="evaluate only the first M folds of the --folds split (same folds, "
                        "for quick or costly runs; default: all)")
    p.add_argument("--data", default=None,
                   help="the .npz corpus (default: data/news20_same.npz of the repository)")
    p.add_argument("--json", default=None, help="write all results to this JSON file")
    a = p.parse_args(argv)

    path = a.data or data_path("news20_same.npz")
    X = sp.load_npz(path).tocsr()
    z = np.load(path, allow_pickle=False)
    y = z["y"]
    skf = StratifiedKFold(n_splits=a.folds, shuffle=True, random_state=a.seed)
    folds = list(skf.split(np.zeros(len(y)), y))
    if a.max_folds is not None:
        folds = folds[: a.max_folds]
    print(f"news20_same: {X.shape[0]} posts x {X.shape[1]} words, classes "
          f"{dict(zip(z['label_names'].tolist(), np.bincount(y).tolist()))}; "
          f"{a.folds}-fold stratified CV"
          f"{'' if a.max_folds is None else f' (first {len(folds)} folds only)'}, seed {a.seed}, {a.k} words by {a.selector} per "
          f"training fold, n_iter {a.n_iter}, tol {a.tol}, threads {a.threads}", flush=True)

    head = _git_head()  # recorded at start: the working tree may change while a run is going
    core, var = configurations(a)
    results = []
    t_all = time.perf_counter()
    for name, (desc, selector, est) in list(core.items()) + list(var.items()):
        print(f"{name}: {desc}", flush=True)
        results.append(run_config(name, desc, selector, est, X, y, folds, a))
        if a.json:  # rewritten after every configuration, so a partial run keeps its results
            _write_json(a, X, folds, results, time.perf_counter() - t_all, head)
    wall = time.perf_counter() - t_all

    print()
    hdr = f"| {'configuration':42s} | selection | accuracy % (mean +- std) | fit s/fold | total s |"
    print(hdr)
    print("|" + "-" * 44 + "|-----------|--------------------------|------------|---------|")
    for r in results:
        print(f"| {r['name']:42s} | {r['selector']:9s} | {100 * r['mean']:6.2f} +- "
              f"{100 * r['std']:5.2f}          | {r['fit_s_mean']:10.1f} | {r['total_s']:7.0f} |")
    print(f"\npaper (Table 1, 40/4, 1,700 posts): {PAPER_ACC:.2f}%;  total wall time {wall:.0f} s")

    if a.json:
        _write_json(a, X, folds, results, wall, head)
        print(f"wrote {a.json}")


def _write_json(a, X, folds, results, wall, head):
    meta = {"args": vars(a), "n_docs": int(X.shape[0]), "n_words": int(X.shape[1]),
                "test_folds": [te.tolist() for _, te in folds], "wall_s": wall,
                "python": sys.version.split()[0], "platform": platform.platform(),
                "countgrid": countgrid.__version__, "countgrid_file": countgrid.__file__,
                "git_head_at_start": head, "paper_accuracy": PAPER_ACC, "cpu_count": os.cpu_count(),
                "load_avg": os.getloadavg()}
    with open(a.json, "w") as fh:
        json.dump({"meta": meta, "results": results}, fh, indent=1)


if __name__ == "__main__":
    main()
