#!/usr/bin/env python
"""Which documents should a cell list first? (issue 22, item 4)

On the training documents of a labelled corpus and the grid of
``experiments/word_relevance.py`` (package defaults, the same vocabulary; its ``--cache``
is reused), every cell's top 10 documents are ranked by

- ``coverage``: ``s_t(i)``, the probability that the document's window contains the cell,
  ties by index (``documents_near(ranking="coverage")``, the map until 0.2.0.dev0);
- ``coverage + loglik``: the same, scores equal to 3 decimals ordered by the document's
  per-token log-likelihood in its most probable window;
- ``depth``: ``c_t(i) = sum_k q_t(k) K(i - k)``, the posterior mean depth of the cell in
  the document's window (1 at the window's centre), ties by index;
- ``depth + loglik``: the default of ``documents_near`` and of the map.

Measured: the fraction of a cell's top 10 in the category that dominates the cell (its
coverage-weighted class distribution, as the map's colouring), averaged over the cells
(weighted by their document mass ``sum_t s_t(i)``, and unweighted), and how many documents
score 100 % (at least 0.9995) for a cell.

    PYTHONPATH=src python experiments/document_ranking.py --data reuters_r8 --cache /tmp/wr
    (the same for news20_full and news20_different)
"""
import argparse
import json
import os
import sys

import numpy as np
import scipy.sparse as sp

import countgrid
from countgrid._utils.counts import check_counts
from countgrid.grid._browse import (centred_coverage, map_window_loglik, rank_key,
                                    window_coverage)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from word_relevance import load  # noqa: E402

TOP = 10


def top_docs(scores, tiebreak, n=TOP):
    """The n best rows of every column of scores (L columns): largest score first; with
    tiebreak, scores equal to 3 decimals by larger tiebreak; then lower index."""
    N, L = scores.shape
    out = np.empty((L, n), dtype=np.int64)
    idx = np.arange(N)
    for i in range(L):
        s = scores[:, i]
        if tiebreak is None:
            out[i] = np.argsort(-s, kind="stable")[:n]
        else:
            out[i] = np.lexsort((idx, -tiebreak, -rank_key(s)))[:n]
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default="reuters_r8")
    p.add_argument("--words", type=int, default=5000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--cache", default=None)
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    X, y, labels, words = load(a.data, a.words)
    cache = os.path.join(a.cache, f"{a.data}_{a.words}_{a.seed}.npz") if a.cache else None
    if cache and os.path.exists(cache):
        grid = countgrid.load(cache)
    else:
        grid = countgrid.CountingGrid(random_state=a.seed, num_threads=a.threads).fit(X)
    extent, window = grid.pi_.shape[:-1], tuple(grid.window)
    L, N = int(np.prod(extent)), X.shape[0]
    Q = grid.transform(X)
    S = window_coverage(Q, extent, window)
    C = centred_coverage(Q, extent, window)
    Xc, _ = check_counts(X, np.float64)
    loglik = map_window_loglik(Xc, np.asarray(grid.h_).reshape(L, -1), np.argmax(Q, axis=1))
    del Q
    Y = sp.csr_matrix((np.ones(N), (np.arange(N), y)), shape=(N, len(labels)))
    cls = np.asarray((Y.T @ S).T)
    dominant = np.argmax(cls, axis=1)
    mass = S.sum(axis=0)
    w = mass / mass.sum()
    results = {}
    print(f"{a.data}: {N} training documents, grid {extent}, window {window}; "
          f"documents at 100 % per cell (mean / max): coverage "
          f"{(S >= 0.9995).sum(axis=0).mean():.0f} / {(S >= 0.9995).sum(axis=0).max()}, "
          f"depth {(C >= 0.9995).sum(axis=0).mean():.0f} / {(C >= 0.9995).sum(axis=0).max()}")
    print("| ranking | top-10 in the cell's category (mass-weighted) | (unweighted) |")
    print("|---|---|---|")
    for name, scores, tb in (("coverage", S, None), ("coverage + loglik", S, loglik),
                             ("depth", C, None), ("depth + loglik", C, loglik)):
        top = top_docs(scores, tb)
        hit = (y[top] == dominant[:, None]).mean(axis=1)
        results[name] = {"weighted": float(w @ hit), "unweighted": float(hit.mean())}
        print(f"| {name} | {100 * w @ hit:.1f} % | {100 * hit.mean():.1f} % |", flush=True)
    results["at_100"] = {"coverage": [float((S >= 0.9995).sum(axis=0).mean()),
                                      int((S >= 0.9995).sum(axis=0).max())],
                         "depth": [float((C >= 0.9995).sum(axis=0).mean()),
                                   int((C >= 0.9995).sum(axis=0).max())]}
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"data": a.data, "n_documents": N, "extent": list(extent),
                       "window": list(window), "results": results}, fh, indent=1)


if __name__ == "__main__":
    main()
