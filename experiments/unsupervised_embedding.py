#!/usr/bin/env python
"""The counting-grid paper's unsupervised-embedding protocol on news20_same (Jojic &
Perina, UAI 2011, sections 3.1-3.2): one grid learned on ALL documents without their
labels (test documents included: transductive), then nearest neighbours on the grid
positions, in 10 x 10-fold cross-validation.

Vocabulary: chosen without labels (the protocol learns nothing from them): the
``--words`` (2000) words of largest document frequency among those in at most half of
the documents (``countgrid.text.select_by_resolving_power``; stop words fall out as too
frequent).  Grid: ``CountingGrid(extent, window)`` with the package defaults (coarse-to-fine
``window_schedule="auto"``).  Classifiers on the positions, per fold:

* k-NN (k = 1 and 3, majority vote) with the toroidal distance between MAP window
  positions (the draft journal version's "nearest neighbour in CG space");
* label embedding read out under the same grid (eq. 9 on the training fold's posteriors),
  for comparison with the inductive protocol of experiments/grid_defaults.py.

    python experiments/unsupervised_embedding.py --extent 40x40 --window 4x4 --repeats 10
"""
import argparse
import os
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.model_selection import StratifiedKFold

import countgrid
from countgrid.grid import readout_matrix
from countgrid.text import select_by_resolving_power

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "data"))
from repo_data import data_path  # noqa: E402  (data/repo_data.py)


def torus_distances(A, B, extent):
    d = np.abs(A[:, None, :] - B[None, :, :]).astype(float)
    d = np.minimum(d, np.asarray(extent) - d)
    return np.sqrt((d ** 2).sum(axis=2))


def knn_predict(D, ytr, k, rng):
    # ties between equally distant neighbours broken by a random jitter (fixed seed)
    order = np.argsort(D + 1e-9 * rng.random(D.shape), axis=1, kind="stable")[:, :k]
    votes = ytr[order]
    classes = np.unique(ytr)
    counts = np.stack([(votes == c).sum(axis=1) for c in classes], axis=1)
    return classes[np.argmax(counts, axis=1)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dataset", default="news20_same")
    p.add_argument("--extent", default="40x40")
    p.add_argument("--window", default="4x4")
    p.add_argument("--words", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--folds", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args(argv)
    extent = tuple(int(v) for v in a.extent.split("x"))
    window = tuple(int(v) for v in a.window.split("x"))
    path = data_path(a.dataset + ".npz")
    X = sp.load_npz(path).tocsr()
    y = np.load(path, allow_pickle=False)["y"]
    cols = select_by_resolving_power(X, 1, 0.5)
    df = np.asarray((X[:, cols] > 0).sum(axis=0)).ravel()
    cols = np.sort(cols[np.argsort(-df, kind="stable")[: a.words]])
    Xs = X[:, cols]
    t0 = time.perf_counter()
    cg = countgrid.CountingGrid(extent, window, random_state=a.seed,
                                num_threads=a.threads).fit(Xs)
    fit_s = time.perf_counter() - t0
    pos = cg.positions(Xs)
    Q = cg.transform(Xs)
    empty = np.asarray(Xs.sum(axis=1)).ravel() == 0
    rng = np.random.default_rng(a.seed)
    acc = {"1-NN": [], "3-NN": [], "label embedding": []}
    for r in range(a.repeats):
        skf = StratifiedKFold(a.folds, shuffle=True, random_state=a.seed + r)
        for tr, te in skf.split(Xs, y):
            D = torus_distances(pos[te], pos[tr], extent)
            for k in (1, 3):
                acc[f"{k}-NN"].append(np.mean(knn_predict(D, y[tr], k, rng) == y[te]))
            gamma = countgrid.embed_labels(Q[tr], y[tr], extent, window)
            G = readout_matrix(
                gamma.reshape(-1, gamma.shape[-1]), extent, window, a.threads)
            pred = np.unique(y[tr])[np.argmax(Q[te] @ G, axis=1)]
            acc["label embedding"].append(np.mean(pred == y[te]))
    print(f"{a.dataset}: {X.shape[0]} documents, {len(cols)} words chosen without labels "
          f"({int(empty.sum())} documents left empty); grid {a.extent}/{a.window} learned on "
          f"all documents in {fit_s:.0f} s ({cg.n_iter_} iterations of the target window); "
          f"{a.repeats} x {a.folds}-fold CV")
    for name, v in acc.items():
        v = np.asarray(v)
        per_repeat = v.reshape(a.repeats, a.folds).mean(axis=1)
        print(f"{name:16s} {100 * v.mean():.2f} % (std over folds {100 * v.std(ddof=1):.2f}, "
              f"over repeats {100 * per_repeat.std(ddof=1) if a.repeats > 1 else 0:.2f})")


if __name__ == "__main__":
    main()
