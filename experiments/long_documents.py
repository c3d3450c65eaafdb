#!/usr/bin/env python
"""One very long document in a corpus, and the remedy of capping lengths (issue 12;
docs/text.md, "Very long documents").

On each of ``--folds`` stratified folds of news20_same (seed 0; the 2,000 chi2 words of
the training fold; ``--train-size`` training posts), three counting-grid classifiers with
the defaults are compared on the same test posts:

* ``clean``: the training posts;
* ``giant``: the same plus one document made of ``--giant-share`` of all tokens (the sum of
  every training post of the first class, scaled), labelled with that class;
* ``capped``: the ``giant`` corpus through ``countgrid.text.cap_document_lengths``
  (max_length="auto", 10 x the median length).

Reported: test accuracy, and how far the giant document spreads over the grid: the mean
over cells of the cosine between the cell's word distribution and the giant document's.

    python experiments/long_documents.py --folds 3 --train-size 600
"""
import argparse
import os
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.feature_selection import SelectKBest, chi2
from sklearn.model_selection import StratifiedKFold, train_test_split

import countgrid
from countgrid.text import cap_document_lengths

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "data"))
from repo_data import data_path  # noqa: E402  (data/repo_data.py)


def spread(pi, doc):
    P = pi.reshape(-1, pi.shape[-1])
    d = doc / np.linalg.norm(doc)
    return float(np.mean(P @ d / np.linalg.norm(P, axis=1)))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--folds", type=int, default=3)
    p.add_argument("--train-size", type=int, default=600)
    p.add_argument("--giant-share", type=float, default=0.53)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    path = data_path("news20_same.npz")
    X = sp.load_npz(path).tocsr()
    y = np.load(path, allow_pickle=False)["y"]
    folds = list(StratifiedKFold(5, shuffle=True, random_state=a.seed).split(X, y))[: a.folds]
    rows = {"clean": [], "giant": [], "capped": []}
    spreads = {"clean": [], "giant": [], "capped": []}
    t0 = time.perf_counter()
    for k, (tr, te) in enumerate(folds):
        tr, _ = train_test_split(tr, train_size=a.train_size, stratify=y[tr],
                                 random_state=a.seed + k)
        sel = SelectKBest(chi2, k=2000).fit(X[tr], y[tr])
        Xtr, Xte = sp.csr_matrix(sel.transform(X[tr])), sp.csr_matrix(sel.transform(X[te]))
        keep = np.asarray(Xtr.sum(axis=1)).ravel() > 0
        Xtr, ytr = Xtr[keep], y[tr][keep]
        c0 = ytr.min()
        base = np.asarray(Xtr[ytr == c0].sum(axis=0)).ravel()
        total = Xtr.sum()
        # giant / (total + giant) = share
        giant = np.rint(base * (a.giant_share * total / (1 - a.giant_share)) / base.sum())
        Xg = sp.vstack([Xtr, sp.csr_matrix(giant)]).tocsr()
        yg = np.append(ytr, c0)
        corpora = {"clean": (Xtr, ytr), "giant": (Xg, yg),
                   "capped": (cap_document_lengths(Xg), yg)}
        for name, (Xf, yf) in corpora.items():
            clf = countgrid.CountingGridClassifier(random_state=a.seed,
                                                   num_threads=a.threads).fit(Xf, yf)
            rows[name].append(float(np.mean(clf.predict(Xte) == y[te])))
            spreads[name].append(spread(clf.grid_.pi_, giant))
        print(f"fold {k}: " + "  ".join(f"{n} {rows[n][-1]:.4f} (spread {spreads[n][-1]:.3f})"
                                       for n in rows), flush=True)
    share = a.giant_share
    print(f"news20_same, {a.folds} folds, {a.train_size} training posts, giant document "
          f"{100 * share:.0f}% of the tokens, {time.perf_counter() - t0:.0f} s")
    for n in rows:
        print(f"{n:8s} accuracy {np.mean(rows[n]):.4f} ± {np.std(rows[n], ddof=1):.4f}  "
              f"spread {np.mean(spreads[n]):.3f}")


if __name__ == "__main__":
    main()
