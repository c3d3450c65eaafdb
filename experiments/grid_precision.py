#!/usr/bin/env python
"""float32 against float64 for the counting grid's defaults (issue 22, "One table of
defaults"; docs/results.md, "Counting grids — precision").

The default ``CountingGridClassifier`` (grid sized to the documents, 4x4 window, the
coarse-to-fine schedule) in both precisions on the same stratified folds (seed ``--seed``),
the ``--words`` (2,000) words of highest chi2 against the class chosen on each training
fold: test accuracy, held-out log-likelihood per token of the test documents under the
fold's grid, and fit time.

    python experiments/grid_precision.py --datasets news20_same,reuters_r8 --folds 3

Data: ``data/`` of the repository (data/README.md).
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.feature_selection import chi2
from sklearn.model_selection import StratifiedKFold

import countgrid

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "data"))
from repo_data import data_path  # noqa: E402  (data/repo_data.py)


def run(name, folds, seed, words, threads):
    X = sp.load_npz(data_path(f"{name}.npz")).tocsr()
    y = np.load(data_path(f"{name}.npz"), allow_pickle=False)["y"]
    splits = list(StratifiedKFold(folds, shuffle=True, random_state=seed).split(X, y))
    for dtype in (np.float32, np.float64):
        acc, ll, secs = [], [], []
        for train, test in splits:
            score = np.nan_to_num(chi2(X[train], y[train])[0])
            keep = np.argsort(-score, kind="stable")[:words]
            Xtr, Xte = X[train][:, keep], X[test][:, keep]
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", countgrid.ConvergenceWarning)
                clf = countgrid.CountingGridClassifier(dtype=dtype, random_state=seed,
                                                       num_threads=threads).fit(Xtr, y[train])
            secs.append(time.perf_counter() - t0)
            acc.append(clf.score(Xte, y[test]))
            ll.append(clf.grid_.score_samples(Xte).sum() / Xte.sum())
        print(f"{name:12s} {np.dtype(dtype).name:8s} accuracy {np.mean(acc):.4f} "
              f"(folds {' '.join(f'{a:.4f}' for a in acc)})  held-out ll/token "
              f"{np.mean(ll):.5f}  fit {np.mean(secs):.1f} s", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default="news20_same,reuters_r8")
    p.add_argument("--folds", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--words", type=int, default=2000)
    p.add_argument("--threads", type=int, default=None)
    args = p.parse_args()
    countgrid.show_config()
    for name in args.datasets.split(","):
        run(name, args.folds, args.seed, args.words, args.threads)


if __name__ == "__main__":
    main()
