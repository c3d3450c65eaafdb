#!/usr/bin/env python
"""How smooth is a document's log-likelihood over window positions?  A probe for the
coarse-to-fine E-step of issue 29 (no package code uses it yet).

For every document ``t`` and position ``k``, ``l_t(k) = sum_z c_tz log h_k(z)`` (the E-step's
scores; uniform prior).  A coarse-to-fine search scores the positions of a sub-lattice of
stride ``s`` (every ``s``-th row and column), keeps the ``m`` best, and scores the
``(2s - 1) x (2s - 1)`` block of positions around each of them.  Reported for each
``(s, m)``: the fraction of positions scored, the fraction of documents whose best
position is among them, and the posterior mass ``sum_{k scored} q_t(k)`` they hold (the
mean, and its 1st percentile over documents: what a top-k M-step would miss).

Grids: a default ``CountingGrid`` fitted to the bundled 20 Newsgroups posts (the
documents it was fitted on), the same corpus's grid early in EM (``--early``: after 2, 10
and 30 iterations at the 4x4 window, without the window schedule), and the synthetic grid
of ``benchmarks/bench_scale.py`` (64x64, window 4x4, its documents drawn from the true
grid, scored under it).  ``experiments/coarse_estep_em.py`` runs the search inside EM.

    PYTHONPATH=src python experiments/coarse_estep_probe.py --json /tmp/probe.json
"""
import argparse
import json
import os
import sys
import warnings

import numpy as np

import countgrid
from countgrid.datasets import load_news20_3class

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "benchmarks"))
from bench_scale import sample_chunk, true_grid  # noqa: E402


def scores(X, h):
    """(n, L) log-likelihood of each document at each window position (h: (L, Z))."""
    return np.asarray(X @ np.log(h).T, dtype=np.float64)


def candidate_mask(ll, extent, stride, keep):
    """(n, L) bool: the positions the search scores for each document -- the sub-lattice
    of stride ``stride`` and the ``(2 stride - 1)^2`` block around each of its ``keep``
    best positions (on the torus)."""
    E1, E2 = extent
    n, L = ll.shape
    grid_ll = ll.reshape(n, E1, E2)
    coarse = grid_ll[:, ::stride, ::stride].reshape(n, -1)
    rows, cols = np.arange(0, E1, stride), np.arange(0, E2, stride)
    best = np.argsort(-coarse, axis=1, kind="stable")[:, :keep]
    r0, c0 = rows[best // len(cols)], cols[best % len(cols)]
    mask = np.zeros((n, E1, E2), dtype=bool)
    mask[:, ::stride, ::stride] = True
    doc = np.arange(n)[:, None]
    for dr in range(-(stride - 1), stride):
        for dc in range(-(stride - 1), stride):
            mask[doc, (r0 + dr) % E1, (c0 + dc) % E2] = True
    return mask.reshape(n, L)


def probe(ll, extent, stride, keep):
    """(scored fraction, best found, mean mass, 1st-percentile mass) of the search."""
    n = ll.shape[0]
    mask = candidate_mask(ll, extent, stride, keep)
    q = np.exp(ll - ll.max(axis=1, keepdims=True))
    q /= q.sum(axis=1, keepdims=True)
    mass = (q * mask).sum(axis=1)
    found = mask[np.arange(n), np.argmax(ll, axis=1)]
    return float(mask.mean()), float(found.mean()), float(mass.mean()), \
        float(np.quantile(mass, 0.01))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strides", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--keep", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--synthetic-docs", type=int, default=3000)
    ap.add_argument("--early", type=int, nargs="*", default=[2, 10, 30],
                    help="also the news20 grid after this many EM iterations (no window "
                         "schedule): how smooth the scores are early in a fit")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    cases = []
    X, *_ = load_news20_3class(dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", countgrid.ConvergenceWarning)
        cg = countgrid.CountingGrid(random_state=0).fit(X)
    cases.append(("news20 (default fit)", X, np.asarray(cg.h_, dtype=np.float64)
                  .reshape(-1, X.shape[1]), cg.pi_.shape[:2]))
    # early in EM: the grid after a few iterations at the target window, no schedule
    for n_iter in args.early:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", countgrid.ConvergenceWarning)
            early = countgrid.CountingGrid(n_iter=n_iter, window_schedule=None,
                                           random_state=0).fit(X)
        cases.append((f"news20 after {n_iter} iterations", X,
                      np.asarray(early.h_, dtype=np.float64).reshape(-1, X.shape[1]),
                      early.pi_.shape[:2]))
    rng = np.random.default_rng(0)
    extent, window = (64, 64), (4, 4)
    pi = true_grid(extent, window, 2000, rng).astype(np.float64)
    h = np.zeros_like(pi).reshape(extent + (-1,))
    for dx in range(window[0]):              # window means of the true grid
        for dy in range(window[1]):
            h += np.roll(pi.reshape(extent + (-1,)), (-dx, -dy), axis=(0, 1))
    h = (h / np.prod(window)).reshape(-1, pi.shape[1])
    Xs = sample_chunk(pi.astype(np.float32), extent, window, args.synthetic_docs, 120, rng)
    cases.append(("synthetic 64x64 (true grid)", Xs, h, extent))
    out = []
    for name, Xc, hc, ext in cases:
        ll = scores(Xc, hc)
        for s in args.strides:
            for m in args.keep:
                frac, found, mean, low = probe(ll, ext, s, m)
                out.append({"grid": name, "stride": s, "keep": m, "scored": frac,
                            "best_found": found, "mass_mean": mean, "mass_p01": low})
                print(json.dumps(out[-1]), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
