#!/usr/bin/env python
"""A counting-grid classifier for many classes (issue 22, item 6; docs/results.md,
"Counting grids — many classes").

Stratified folds (``countgrid.cli._split.stratified_folds``, seed 0) of a labelled corpus;
on each training fold: multinomial naive Bayes on every word (scikit-learn, the baseline
of ``countgrid evaluate``), and for each K of ``--class-words`` the K words with the
largest chi-squared statistic on that fold (``GenerativeCountingGridClassifier``'s
``max_features``), naive Bayes on those words and ``GenerativeCountingGridClassifier``
(package defaults) on them.  Classes with fewer than 5 documents are left out, as
``countgrid evaluate`` does.  One JSON line per fold and K.

    PYTHONPATH=src python experiments/many_classes.py --data news20_full --class-words 1000,5000 --folds 1
    PYTHONPATH=src python experiments/many_classes.py --data deb10k.npz --label section --class-words 300,1000,3000 --folds 1

``--data`` is a bundled dataset name (``data/NAME.npz``) or a corpus file
(``countgrid vectorize``).  The Debian corpus of the closing note: the package
descriptions of Debian 12 (``apt-get update``, then the ``Packages`` and
``Translation-en`` lists), ``countgrid vectorize debian.csv --text-col description
--meta-cols section --max-docs 10000 -o deb10k.npz``.
"""
import argparse
import json
import os
import time

import numpy as np

from countgrid.cli._split import stratified_folds
from countgrid.grid import GenerativeCountingGridClassifier
from countgrid.text import read_corpus

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--label", default="label")
    ap.add_argument("--class-words", default="1000")
    ap.add_argument("--folds", type=int, default=5, help="folds run (of 5)")
    ap.add_argument("--json")
    args = ap.parse_args()
    from sklearn.naive_bayes import MultinomialNB

    path = args.data if os.path.exists(args.data) else os.path.join(REPO, "data",
                                                                      args.data + ".npz")
    corpus = read_corpus(path)
    X = corpus.counts.tocsr().astype(np.float32)
    y = np.asarray(corpus.metadata[args.label]).astype(str)
    classes, sizes = np.unique(y, return_counts=True)
    keep = np.isin(y, classes[sizes >= 5])
    X, y = X[keep], y[keep]
    out = open(args.json, "a") if args.json else None
    for k, (train, test) in enumerate(stratified_folds(y, 5, 0)[:args.folds]):
        nb = MultinomialNB().fit(X[train], y[train])
        base = float(np.mean(nb.predict(X[test]) == y[test]))
        for K in (int(v) for v in args.class_words.split(",")):
            tic = time.perf_counter()
            gen = GenerativeCountingGridClassifier(max_features=K, random_state=0)
            gen.fit(X[train], y[train])
            acc = float(np.mean(gen.predict(X[test]) == y[test]))
            seconds = time.perf_counter() - tic
            cols = gen.features_
            nb_k = MultinomialNB().fit(X[train][:, cols], y[train])
            row = {"data": args.data, "fold": k, "classes": len(np.unique(y)),
                   "class_words": K, "naive_bayes_all_words": round(base, 4),
                   "naive_bayes_class_words": round(float(
                       np.mean(nb_k.predict(X[test][:, cols]) == y[test])), 4),
                   "generative_grids": round(acc, 4), "seconds": round(seconds, 1)}
            print(json.dumps(row), flush=True)
            if out:
                out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
