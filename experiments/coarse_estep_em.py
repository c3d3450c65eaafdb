#!/usr/bin/env python
"""A coarse-to-fine E-step inside EM, simulated: does a grid fitted with it stay the
exact fit's grid?  (Issue 29's quality guards, before any kernel is written.)

Two EM runs from the same start, the same window (no schedule) and the same iterations:
the exact one, and one whose E-step, from iteration ``--after`` on, gives posterior mass
only to the positions a coarse-to-fine search would score (the sub-lattice of stride
``s`` and the ``(2s - 1)^2`` blocks around its ``m`` best positions,
``coarse_estep_probe.candidate_mask``), renormalised there; a document whose best
candidate holds less than ``--guard`` of the candidates' mass (a flat posterior) gets the
full scan, as a kernel's guard would.  The simulation computes every score (it measures
the model a coarse kernel would fit, not its speed); histograms and M-step are the
package's kernels (``countgrid.grid._wrappers``), float64, one thread, no posterior floor.

Reported against the exact run: held-out log-likelihood per token (exact scoring),
label-embedding accuracy (paper eqs. 9-10), the share of training documents at the same
MAP position (the same start: no alignment), the positions scored, the mass the
candidates held under the exact posterior, and the documents the guard sent to the full
scan.

    PYTHONPATH=src python experiments/coarse_estep_em.py --json /tmp/coarse_em.json
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

import countgrid
from countgrid.grid import _wrappers, embed_labels, readout_matrix
from countgrid.grid._em import ALPHA

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "data"))
from coarse_estep_probe import candidate_mask  # noqa: E402
from repo_data import data_path  # noqa: E402


def load(name, words):
    path = data_path(name + ".npz")
    z = np.load(path, allow_pickle=False)
    X, y, split = sp.load_npz(path).tocsr().astype(np.float64), z["y"], z["split"]
    train, test = np.flatnonzero(split == 0), np.flatnonzero(split == 1)
    df = np.asarray((X[train] > 0).sum(axis=0)).ravel()
    cols = np.sort(np.argsort(-df, kind="stable")[:words])
    Xtr, Xte = X[train][:, cols], X[test][:, cols]
    keep = np.asarray(Xte.sum(axis=1)).ravel() > 0
    return Xtr, y[train], Xte[keep], y[test][keep]


def run(X, extent, window, n_iter, start, approx=None):
    """EM in place on a copy of ``start`` (Z, L); returns (pi, h, logh, stats)."""
    pi = start.copy()
    Z, L = pi.shape
    h, logh = np.empty_like(pi), np.empty_like(pi)
    rho = float(X.sum()) / X.shape[0] / (2.5 * L)
    stats = dict(scored=[], mass=[], full=[])
    for it in range(n_iter):
        _wrappers.histograms(pi, extent, window, h, logh, 1)
        S = np.asarray(X @ logh)                            # (n, L) log p(c_t | k)
        if approx is not None and it >= approx["after"]:
            mask = candidate_mask(S, extent, approx["stride"], approx["keep"])
            masked = np.where(mask, S, -np.inf)
            q = np.exp(masked - logsumexp(masked, axis=1, keepdims=True))
            flat = q.max(axis=1) < approx["guard"]
            mask[flat] = True
            exact = np.exp(S - logsumexp(S, axis=1, keepdims=True))
            stats["scored"].append(float(mask.mean()))
            stats["mass"].append(float((exact * mask).sum(axis=1).mean()))
            stats["full"].append(float(flat.mean()))
            S = np.where(mask, S, -np.inf)
        Q = np.exp(S - logsumexp(S, axis=1, keepdims=True))
        n = np.ascontiguousarray(np.asarray(X.T @ Q))       # (Z, L) statistics
        _wrappers.mstep(n, h, pi, extent, window, rho, ALPHA, 1)
    _wrappers.histograms(pi, extent, window, h, logh, 1)
    return pi, h, logh, stats


def evaluate(logh, extent, window, Xtr, ytr, Xte, yte):
    L = logh.shape[1]
    Ste = np.asarray(Xte @ logh)
    heldout = float((logsumexp(Ste, axis=1) - np.log(L)).sum() / Xte.sum())
    Str = np.asarray(Xtr @ logh)
    Qtr = np.exp(Str - logsumexp(Str, axis=1, keepdims=True))
    classes = np.unique(ytr)
    gamma = embed_labels(Qtr, ytr, extent, window, classes=classes)
    G = readout_matrix(gamma.reshape(-1, len(classes)), extent, window)
    Qte = np.exp(Ste - logsumexp(Ste, axis=1, keepdims=True))
    acc = float(np.mean(classes[np.argmax(Qte @ G, axis=1)] == yte))
    return heldout, acc, np.argmax(Str, axis=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="news20_same")
    ap.add_argument("--words", type=int, default=5000)
    ap.add_argument("--extent", type=int, nargs=2, default=(40, 40))
    ap.add_argument("--window", type=int, nargs=2, default=(4, 4))
    ap.add_argument("--iter", type=int, default=60)
    ap.add_argument("--stride", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--keep", type=int, nargs="+", default=[4])
    ap.add_argument("--after", type=int, nargs="+", default=[0, 10])
    ap.add_argument("--guard", type=float, default=0.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    extent, window = tuple(args.extent), tuple(args.window)
    Xtr, ytr, Xte, yte = load(args.dataset, args.words)
    start = countgrid.CountingGrid(extent, window)._initial_pi(
        None, extent, Xtr.shape[1], np.dtype(np.float64), np.random.default_rng(0))
    tic = time.perf_counter()
    _, _, logh, _ = run(Xtr, extent, window, args.iter, start)
    base = evaluate(logh, extent, window, Xtr, ytr, Xte, yte)
    out = [dict(run="exact", seconds=time.perf_counter() - tic, heldout=base[0],
                accuracy=base[1])]
    print(json.dumps(out[-1]), flush=True)
    for after in args.after:
        for stride in args.stride:
            for keep in args.keep:
                approx = dict(stride=stride, keep=keep, after=after, guard=args.guard)
                tic = time.perf_counter()
                _, _, logh, st = run(Xtr, extent, window, args.iter, start, approx)
                ho, acc, pos = evaluate(logh, extent, window, Xtr, ytr, Xte, yte)
                out.append(dict(run=f"stride {stride} keep {keep} from iteration {after}",
                                seconds=time.perf_counter() - tic, heldout=ho, accuracy=acc,
                                heldout_change=(ho - base[0]) / abs(base[0]),
                                accuracy_change=acc - base[1],
                                same_position=float(np.mean(pos == base[2])),
                                scored=float(np.mean(st["scored"])),
                                mass_mean=float(np.mean(st["mass"])),
                                mass_min_iteration=float(np.min(st["mass"])),
                                full_scan=float(np.mean(st["full"]))))
                print(json.dumps(out[-1]), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"dataset": args.dataset, "extent": extent, "window": window,
                       "iterations": args.iter, "rows": out}, fh, indent=1)


if __name__ == "__main__":
    main()
