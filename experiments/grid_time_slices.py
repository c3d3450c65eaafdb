#!/usr/bin/env python
"""What does time-slicing buy? (issue 25)

The bundled python_changelog corpus (changelog entries of CPython releases, dated) cut into
calendar periods (``--period``, default year).  Each period's documents are split, with a
seeded 80/20 split, into training and held-out documents.  Compared, on the training
documents of every period:

* ``independent``: a ``CountingGrid`` per period fitted from scratch (the package
  defaults, seed ``seed``), each aligned afterwards onto the previous period's grid
  (``countgrid.grid.align``) so that drift is measured after the best symmetry;
* ``warm start``: ``TimeSlicedCountingGrid(smoothness=0)`` (BrowseCloud's trainer);
* ``smoothness s``: ``TimeSlicedCountingGrid(smoothness=s)`` for each ``--smoothness``.

Reported per method: the mean drift between consecutive periods (1 - Bhattacharyya
coefficient of a window's word distributions, averaged over windows), the held-out
log-likelihood per token of each period's held-out documents under that period's grid,
and the time of the whole fit.

    PYTHONPATH=src python experiments/grid_time_slices.py --seeds 0 1 2 \\
        --tune 0.25 0.5 1 2 4 8 --smoothness 0.5 1 2 4 --json /tmp/slices/python_changelog.json
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
from countgrid.grid import CountingGrid, TimeSlicedCountingGrid, align

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _cg_protocols import git_head  # noqa: E402
from word_relevance import data_path, fit_vocabulary  # noqa: E402  (the fit vocabulary)


def load(name, n_words, seed):
    """(X, dates, train mask): the `countgrid fit` vocabulary of the training documents."""
    path = data_path(name + ".npz")
    z = np.load(path, allow_pickle=False)
    X = sp.load_npz(path).tocsr()
    dates, words = z["dates"].astype(str), z["feature_names"].astype(str)
    train = np.random.default_rng(seed).random(X.shape[0]) < 0.8
    cols = fit_vocabulary(X[train], words, n_words)
    X = X[:, cols]
    nonempty = np.asarray(X.sum(axis=1)).ravel() > 0
    return X[nonempty], dates[nonempty], train[nonempty]


def drift_of(h):
    """Mean over windows of 1 - BC between consecutive periods' window distributions."""
    s = np.sqrt(np.asarray(h, dtype=np.float64))
    return [float(np.mean(1.0 - np.sum(s[p] * s[p - 1], axis=-1))) for p in range(1, len(s))]


def heldout(models, X, dates, test):
    """Held-out log-likelihood per token of each period (models: (label, grid) pairs)."""
    out = []
    for label, grid in models:
        rows = np.flatnonzero(test & (np.char.startswith(dates, label)))
        out.append(float(grid.score(X[rows]) / X[rows].sum()) if rows.size else None)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="python_changelog")
    ap.add_argument("--words", type=int, default=20000)
    ap.add_argument("--period", default="year")
    ap.add_argument("--smoothness", type=float, nargs="+", default=[0.5, 2.0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--tune", type=float, nargs="*", default=[],
                    help="smoothness values compared on a validation fifth of the first "
                         "seed's training documents (never on its held-out documents)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    rows, tuning = [], []
    if args.tune:
        X, dates, train = load(args.data, args.words, args.seeds[0])
        valid = train & (np.random.default_rng(args.seeds[0] + 1000).random(len(train)) < 0.2)
        fit_rows = train & ~valid
        for s in args.tune:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", countgrid.ConvergenceWarning)
                tg = TimeSlicedCountingGrid(period=args.period, smoothness=s,
                                            random_state=args.seeds[0],
                                            num_threads=args.threads).fit(
                    X[fit_rows], times=dates[fit_rows])
            grids = [(lab, tg.period_grid(p)) for p, lab in enumerate(tg.period_labels_)]
            tuning.append({"smoothness": s, "validation": float(np.mean(
                heldout(grids, X, dates, valid)))})
            print(json.dumps(tuning[-1]), flush=True)
    for seed in args.seeds:
        X, dates, train = load(args.data, args.words, seed)
        test = ~train
        print(f"{args.data}: {train.sum()} training and {test.sum()} held-out documents x "
              f"{X.shape[1]} words", flush=True)
        methods = [("warm start", 0.0)] + [(f"smoothness {s:g}", s) for s in args.smoothness]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", countgrid.ConvergenceWarning)
            for name, s in methods:
                t0 = time.perf_counter()
                tg = TimeSlicedCountingGrid(period=args.period, smoothness=s, random_state=seed,
                                            num_threads=args.threads).fit(
                    X[train], times=dates[train])
                seconds = time.perf_counter() - t0
                labels = tg.period_labels_.tolist()
                grids = [(lab, tg.period_grid(p)) for p, lab in enumerate(labels)]
                rows.append({"method": name, "seed": seed, "seconds": seconds,
                             "periods": labels, "drift": drift_of(tg.h_),
                             "heldout": heldout(grids, X, dates, test),
                             "n_iter": tg.n_iter_.tolist()})
                print(json.dumps(rows[-1]), flush=True)
            # independent fits, each aligned onto the previous (aligned) one
            t0 = time.perf_counter()
            grids, iters = [], []
            for lab in labels:
                rows_p = np.flatnonzero(train & np.char.startswith(dates, lab))
                g = CountingGrid(extent=tg.pi_.shape[1:-1], random_state=seed,
                                 num_threads=args.threads).fit(X[rows_p])
                grids.append((lab, g))
                iters.append(int(g.n_iter_))
            seconds = time.perf_counter() - t0
            aligned = [np.asarray(grids[0][1].h_, dtype=np.float64)]
            for p in range(1, len(grids)):     # the window distributions, in the frame
                hb = np.asarray(grids[p][1].h_, dtype=np.float64)   # of the period before
                aligned.append(align(hb, aligned[-1], on="cells").aligned)
            rows.append({"method": "independent", "seed": seed, "seconds": seconds,
                         "periods": labels, "drift": drift_of(np.stack(aligned)),
                         "heldout": heldout(grids, X, dates, test), "n_iter": iters})
            print(json.dumps(rows[-1]), flush=True)
    summary = {}
    for name in dict.fromkeys(r["method"] for r in rows):
        mine = [r for r in rows if r["method"] == name]
        summary[name] = {
            "drift": float(np.mean([np.mean(r["drift"]) for r in mine])),
            "heldout": float(np.mean([np.mean([v for v in r["heldout"] if v is not None])
                                      for r in mine])),
            "seconds": float(np.mean([r["seconds"] for r in mine]))}
    print(json.dumps(summary, indent=1))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"data": args.data, "commit": git_head(), "tuning": tuning,
                       "rows": rows, "summary": summary}, fh, indent=1)


if __name__ == "__main__":
    main()
