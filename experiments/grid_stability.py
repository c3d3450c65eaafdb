#!/usr/bin/env python
"""How stable are the default counting grids across seeds? (issue 25)

``countgrid.grid.stability`` of ``CountingGrid(random_state=seed)`` (the package defaults:
``extent="auto"``, 4x4 window, the coarse-to-fine window schedule) on the training documents
of a labelled corpus, vectorised as ``countgrid fit`` does by default (the loader of
``word_relevance.py``: English stop words dropped, words in at least 2 documents and at most
half of them, the ``--words`` most frequent): pairwise similarity of the aligned window
distributions (raw and over chance), the documents placed within half a window of the first
fit's place, per-cell stability quantiles, and per region (``--regions``) the document
agreement.  A second measure of placement that needs no alignment: of the pairs of
documents the first fit places within half a window of each other, the fraction each other
fit places so too (``pairs_kept``), beside the fraction of all pairs it places so
(``pairs_chance``).

    PYTHONPATH=src python experiments/grid_stability.py --data news20_different \\
        --restarts 3 --json /tmp/stab/news20_different.json
"""
import argparse
import json
import os
import sys
import time
import warnings

import numpy as np

import countgrid
from countgrid.grid import stability

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from word_relevance import load  # noqa: E402  (the countgrid fit vocabulary)


def pairs_kept(pos_a, pos_b, extent, window):
    """``(kept, base)``: of the pairs of documents that fit a places within half a window of
    each other (torus distance ``<= w // 2`` on every axis), the fraction fit b places so
    too; and the fraction of all pairs fit b places so (what ``kept`` is by chance)."""
    E, half = np.asarray(extent), np.asarray(window) // 2

    def close(pos):
        d = np.abs(pos[:, None, :] - pos[None, :, :])
        c = (np.minimum(d, E - d) <= half).all(axis=-1)
        np.fill_diagonal(c, False)
        return c

    ca, cb = close(pos_a), close(pos_b)
    return float((ca & cb).sum() / max(ca.sum(), 1)), float(cb.mean())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="news20_different")
    ap.add_argument("--words", type=int, default=20000)
    ap.add_argument("--restarts", type=int, default=3)
    ap.add_argument("--regions", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    X, y, _, _ = load(args.data, args.words)
    print(f"{args.data}: {X.shape[0]} training documents x {X.shape[1]} words", flush=True)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", countgrid.ConvergenceWarning)
        s = stability(X, args.restarts, random_state=args.seed, n_regions=args.regions,
                      num_threads=args.threads)
    seconds = time.perf_counter() - t0
    ref = s.reference
    extent = tuple(ref.pi_.shape[:-1])
    kept = [pairs_kept(s.positions[0], s.positions[r], extent, ref.window)
            for r in range(1, args.restarts)]
    q = np.quantile(s.cell_stability, [0.1, 0.5, 0.9])
    out = {"data": args.data, "n_documents": int(X.shape[0]), "n_words": int(X.shape[1]),
           "extent": list(extent), "window": list(ref.window), "seeds": s.seeds,
           "similarity": s.similarity.tolist(), "mean_similarity": s.mean_similarity,
           "mean_adjusted_similarity": s.mean_adjusted_similarity,
           "chance": s.chance_similarity.tolist(),
           "placement_agreement": s.placement_agreement.tolist(),
           "chance_placement": float(np.prod(2 * (np.asarray(ref.window) // 2) + 1)
                                     / np.prod(extent)),
           "cell_stability_quantiles": q.tolist(),
           "region_stability": s.region_stability.tolist(),
           "region_agreement": s.region_agreement.tolist(),
           "pairs_kept": [k for k, _ in kept], "pairs_chance": [c for _, c in kept],
           "seconds": seconds}
    print(json.dumps({k: v for k, v in out.items() if k not in ("similarity", "chance")},
                     indent=1))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
