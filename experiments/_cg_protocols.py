"""Shared pieces of the biology-table experiments (``microarray_cv.py``, ``promoters_loo.py``).

The three ways of classifying with counting grids of the draft journal version
(../docs/counting_grids.md; Jojic & Perina, UAI 2011, section 2.3 and section 3), and the
LDA comparison of the paper (topic proportions, 3-NN with the KL divergence, section 3.1):

* label embedding, inductive: ``countgrid.grid.CountingGridClassifier`` on the training
  fold;
* label embedding, transductive (the paper's section 3 protocol): one grid learned on all
  samples without labels, gamma (eq. 9) estimated from the training samples' posteriors and
  read out under each test posterior (``transductive_label_embedding``);
* one grid per class, largest exact likelihood: ``GenerativeCountingGridClassifier``;
* 1-NN on the grid: MAP window positions, toroidal Euclidean distance (draft, "nearest
  neighbour in CG space").

This module only composes public countgrid calls; it is not part of the package.
"""
import os
import subprocess
import time

import numpy as np
from sklearn.decomposition import LatentDirichletAllocation

from countgrid.grid import CountingGrid, embed_labels

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def git_head():
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              cwd=REPO, check=True).stdout.strip()
    except Exception:   # noqa: BLE001  (not a checkout)
        return None


def parse_grid(spec):
    """'32/5' -> ((32, 32), (5, 5)); '10x10x10/3x3x3' or '10^3/3' -> 3-D cubes."""
    e, w = spec.split("/")
    if "^" in e:
        side, d = e.split("^")
        extent = (int(side),) * int(d)
    else:
        extent = tuple(int(v) for v in e.split("x"))
        if len(extent) == 1:
            extent = extent * 2
    window = tuple(int(v) for v in w.split("x"))
    if len(window) == 1:
        window = window * len(extent)
    return extent, window


def grid_name(extent, window):
    return "x".join(map(str, extent)) + "/" + "x".join(map(str, window))


def kappa(extent, window):
    return float(np.prod(extent) / np.prod(window))


def brief_schedule(extent, window, iters=15):
    """Coarse-to-fine schedule used until the package has its own default: a window of
    about E/4 per side for ``iters`` iterations, then one midway, then the target.  Stages
    that would not be larger than the target are dropped (small grids get none)."""
    first = tuple(max(w, round(e / 4)) for e, w in zip(extent, window))
    mid = tuple(round((f + w) / 2) for f, w in zip(first, window))
    stages = []
    for win in (first, mid):
        if win != tuple(window) and all(a >= b for a, b in zip(win, window)) \
                and (not stages or stages[-1][0] != win):
            stages.append((win, iters))
    return stages or None


def grid_kwargs(extent, window, schedule, n_iter, seed, threads, dtype="float64"):
    """Keyword arguments for every grid estimator.  ``schedule``: "default" (the package
    default: the parameter is not passed), "none" (no schedule) or "brief".  ``dtype``:
    the grids' precision, float64 by default (the grids' default when the tables of
    docs/results.md were made; the package default is float32 since issue 22)."""
    kw = {"extent": tuple(extent), "window": tuple(window), "n_iter": n_iter,
          "random_state": seed, "num_threads": threads, "dtype": np.dtype(dtype).type}
    if schedule == "none":
        kw["window_schedule"] = None
    elif schedule == "brief":
        kw["window_schedule"] = brief_schedule(extent, window)
    elif schedule != "default":
        raise ValueError(f"unknown schedule {schedule!r}")
    return kw


def window_mean(gamma, extent, window):
    """G(k) = mean of gamma over the window whose first cell is k (toroidal).
    gamma: extent + (n_classes,)."""
    G = np.zeros_like(gamma)
    for delta in np.ndindex(*window):
        G += np.roll(gamma, shift=tuple(-d for d in delta), axis=tuple(range(len(extent))))
    return G / np.prod(window)


def label_embedding_readout(Q_train, y_train, Q_test, extent, window, classes):
    """Paper eq. 9 from the training posteriors, read out under the test posteriors as
    countgrid.grid.CountingGridClassifier does (expected window mean of gamma)."""
    gamma = embed_labels(Q_train, y_train, extent, window, classes=classes)
    G = window_mean(gamma, extent, window).reshape(-1, len(classes))
    P = Q_test @ G
    return P / P.sum(axis=1, keepdims=True)


def torus_1nn(pos_train, y_train, pos_test, extent):
    """1-NN with the toroidal distance between MAP positions (ties: the first training
    sample in order)."""
    E = np.asarray(extent)
    d = np.abs(pos_test[:, None, :] - pos_train[None, :, :])
    d = np.minimum(d, E - d)
    D = np.sqrt((d.astype(np.float64) ** 2).sum(axis=2))
    return y_train[np.argmin(D, axis=1)]


def fit_grid(X, extent, window, schedule, n_iter, seed, threads, dtype="float64"):
    t = time.perf_counter()
    cg = CountingGrid(**grid_kwargs(extent, window, schedule, n_iter, seed, threads,
                                    dtype)).fit(X)
    return cg, time.perf_counter() - t


def sym_kl(a, b, eps=1e-10):
    a = a + eps
    b = b + eps
    return float(np.sum((a - b) * (np.log(a) - np.log(b))))


def knn_predict(F_train, y_train, F_test, k=3, metric=sym_kl):
    """k-NN, majority vote, ties broken by the nearest neighbour's class."""
    D = np.array([[metric(f, g) for g in F_train] for f in F_test])
    out = []
    for row in D:
        nn = np.argsort(row, kind="stable")[:k]
        labels, counts = np.unique(y_train[nn], return_counts=True)
        best = labels[counts == counts.max()]
        out.append(y_train[nn[0]] if len(best) > 1 and y_train[nn[0]] in best else best[0])
    return np.array(out)


def lda_topics(X_fit, X_apply, K, seed):
    """Topic proportions of X_apply under a LatentDirichletAllocation fitted on X_fit
    (batch variational Bayes, 50 iterations, scikit-learn defaults otherwise)."""
    lda = LatentDirichletAllocation(n_components=K, learning_method="batch", max_iter=50,
                                    random_state=seed, n_jobs=1).fit(X_fit)
    T = lda.transform(X_apply)
    return T / T.sum(axis=1, keepdims=True)
