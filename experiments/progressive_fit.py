"""Fewer passes: a counting grid's early EM on a subsample of the documents (issue 29;
docs/scale.md, "Fewer passes"), two ways, against the plain fit from the same seed:

* "subsample s": the stages of the default window schedule (10x10 then 6x6 windows on a
  40x40 grid, 15 iterations each) on a random share ``s`` of the training documents, with
  the pseudocount scaled by ``s`` (so that it weighs on the M-step as on all documents),
  then the 4x4 target window on all of them from that grid -- run stage by stage here, one
  estimator per stage chained by ``init_pi`` (the same start and the same rows as a
  built-in option would draw);
* "progressive s": the whole default fit on the subsample, then the target window on all
  documents from its grid, its convergence test allowed after ``--progressive-min-iter``
  (5) iterations instead of 30.

Measured:

* the fit's wall time and its EM passes over all the documents (a subsample stage's
  iteration counts as its share of a pass);
* the held-out log-likelihood per token of the test documents (``score_samples`` over
  their tokens), and its change relative to the plain fit (the issue's guard: within
  0.5 %);
* label-embedding accuracy on the test documents (paper eqs. 9-10: the labels of the
  training documents embedded with their posteriors, each test document given the class
  of largest ``sum_k q_t(k) G(k, class)``; guard: within 0.01);
* document positions: the MAP window position of every training document under each fit,
  the subsample fit aligned onto the plain one (``countgrid.grid.align``), the share of
  documents at the same position within one cell (guard: 95 %) -- next to the same share
  for two plain fits from different seeds, which says how far a guard of positions can
  hold at all.

Data (``--datasets``): news20_same (5 stratified folds of the 2,924 posts: the label
guard's corpus) and news20_full (its split: 11,293 training and 7,528 test posts); the
``--words`` (20,000) words of largest document frequency in the training documents.
float32, ``num_threads`` 2 (``--threads``).

    PYTHONPATH=src python experiments/progressive_fit.py --json /tmp/progressive.json
"""
import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

import countgrid
from countgrid.grid import align, embed_labels, readout_matrix

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "data"))
from repo_data import data_path  # noqa: E402  (data/repo_data.py)


def load(name):
    path = data_path(name + ".npz")
    z = np.load(path, allow_pickle=False)
    return sp.load_npz(path).tocsr().astype(np.float32), z["y"], z["split"]


def splits(name, y, split, folds, seed=0):
    """(train, test) index pairs: the corpus's split, or stratified folds."""
    if folds == 0:
        return [(np.flatnonzero(split == 0), np.flatnonzero(split == 1))]
    from sklearn.model_selection import StratifiedKFold
    return list(StratifiedKFold(folds, shuffle=True, random_state=seed).split(y, y))


def vocabulary(X, n_words):
    df = np.asarray((X > 0).sum(axis=0)).ravel()
    return np.sort(np.argsort(-df, kind="stable")[:n_words])


def label_accuracy(grid, X_train, y_train, X_test, y_test, nt):
    extent, window = grid.pi_.shape[:-1], grid.window
    classes = np.unique(y_train)
    gamma = embed_labels(grid.transform(X_train), y_train, extent, window, classes=classes,
                         num_threads=nt)
    G = readout_matrix(gamma.reshape(-1, len(classes)), extent, window, nt)
    scores = np.asarray(grid.transform(X_test), dtype=np.float64) @ G
    return float(np.mean(classes[np.argmax(scores, axis=1)] == y_test))


def agreement(a, b, X):
    """Share of documents whose MAP position under ``a``, aligned onto ``b``, is within one
    cell (per axis, on the torus) of their position under ``b``; and exactly equal."""
    r = align(a, b)
    pa = r.positions(a.positions(X), a.window)
    pb = b.positions(X)
    ext = np.asarray(b.pi_.shape[:-1])
    d = np.abs(pa - pb) % ext
    d = np.minimum(d, ext - d).max(axis=1)
    return float(np.mean(d <= 1)), float(np.mean(d == 0))


def passes(grid, share):
    """EM passes over all documents: the schedule's iterations count ``share`` each."""
    target = int(grid.n_iter_)
    stages = sum(it for _, it in countgrid.grid.auto_window_schedule(
        grid.pi_.shape[:-1], grid.window, grid.n_iter))
    return target + share * stages


def schedule_on_subsample(X, share, seed, extent, threads):
    """The default fit with its window schedule's stages on a share of the documents:
    (the grid, its passes over all documents)."""
    n, Z = X.shape
    rng = np.random.default_rng(seed)
    target = countgrid.CountingGrid(extent, random_state=seed, num_threads=threads)
    pi = target._initial_pi(None, extent, Z, np.dtype(np.float32), rng).T   # (L, Z)
    m = round(share * n)
    rows = np.sort(rng.choice(n, size=m, replace=False))
    rho = float(X.sum()) / n / (2.5 * np.prod(extent))     # the "auto" pseudocount of all
    stages = countgrid.grid.auto_window_schedule(extent, target.window, target.n_iter)
    for window, iters in stages:
        stage = countgrid.CountingGrid(extent, window, n_iter=iters, tol=0, min_iter=0,
                                       window_schedule=None, pseudocount=rho * m / n,
                                       random_state=seed, num_threads=threads)
        pi = stage.fit(X[rows], init_pi=pi).pi_
    target.set_params(window_schedule=None)
    target.fit(X, init_pi=pi)
    return target, target.n_iter_ + share * sum(it for _, it in stages)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default="news20_same,news20_full")
    ap.add_argument("--subsamples", default="0.1,0.25")
    ap.add_argument("--folds", type=int, default=5, help="folds of news20_same (default 5)")
    ap.add_argument("--words", type=int, default=20_000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--progressive-min-iter", type=int, nargs="*", default=[5])
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", countgrid.ConvergenceWarning)
    shares = [float(s) for s in args.subsamples.split(",")]
    out = {"countgrid": countgrid.__version__, "rows": []}
    for name in args.datasets.split(","):
        X, y, split = load(name)
        for fold, (train, test) in enumerate(splits(name, y, split,
                                                    0 if name == "news20_full"
                                                    else args.folds)):
            cols = vocabulary(X[train], args.words)
            Xtr, Xte = X[train][:, cols], X[test][:, cols]
            keep = np.asarray(Xte.sum(axis=1)).ravel() > 0
            Xte, yte = Xte[keep], y[test][keep]
            tokens = float(Xte.sum())
            fits = {}
            runs = ([("plain", None, 0, None), ("plain seed 1", None, 1, None)]
                    + [(f"subsample {s:g}", s, 0, None) for s in shares]
                    + [(f"progressive {s:g}", s, 0, m) for s in shares
                       for m in args.progressive_min_iter])
            for label, size, seed, min_iter in runs:
                tic = time.perf_counter()
                if size is None:
                    grid = countgrid.CountingGrid(random_state=seed,
                                                  num_threads=args.threads).fit(Xtr)
                    done = passes(grid, 1.0)
                elif min_iter is None:
                    grid, done = schedule_on_subsample(Xtr, size, seed,
                                                       fits["plain"].pi_.shape[:-1],
                                                       args.threads)
                else:
                    # the whole default fit on a subsample, then the target window on all
                    # documents from its grid, its convergence test after min_iter
                    rows = np.sort(np.random.default_rng(seed).choice(
                        Xtr.shape[0], size=round(size * Xtr.shape[0]), replace=False))
                    # the grid of all documents ("auto" would size it to the subsample)
                    sub = countgrid.CountingGrid(fits["plain"].pi_.shape[:-1],
                                                 random_state=seed,
                                                 num_threads=args.threads).fit(Xtr[rows])
                    grid = countgrid.CountingGrid(fits["plain"].pi_.shape[:-1],
                                                  window_schedule=None, min_iter=min_iter,
                                                  random_state=seed, num_threads=args.threads)
                    grid.fit(Xtr, init_pi=sub.pi_)
                    label = f"{label} min_iter {min_iter}"
                    done = grid.n_iter_ + size * passes(sub, 1.0)
                seconds = time.perf_counter() - tic
                fits[label] = grid
                row = dict(dataset=name, fold=fold, fit=label, seconds=seconds,
                           n_iter=int(grid.n_iter_), passes=float(done),
                           heldout=float(grid.score_samples(Xte).sum()) / tokens,
                           accuracy=label_accuracy(grid, Xtr, y[train], Xte, yte,
                                                   args.threads))
                if label != "plain":
                    row["within_1"], row["same"] = agreement(grid, fits["plain"], Xtr)
                    base = [r for r in out["rows"] if r["dataset"] == name
                            and r["fold"] == fold and r["fit"] == "plain"][0]
                    row["heldout_change"] = (row["heldout"] - base["heldout"]) / abs(
                        base["heldout"])
                    row["accuracy_change"] = row["accuracy"] - base["accuracy"]
                    row["speedup"] = base["seconds"] / row["seconds"]
                out["rows"].append(row)
                print(json.dumps(row), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
