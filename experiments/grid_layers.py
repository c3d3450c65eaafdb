#!/usr/bin/env python
"""What do layers buy? (issue 25)

On the training split of a labelled corpus, with the `countgrid fit` vocabulary (the loader
of ``word_relevance.py``, applied to the training documents; the test documents keep the
same words), fit for each seed:

* ``grid``: ``CountingGrid()`` with the package defaults (extent "auto", 4x4 window, the
  window schedule, float32);
* ``layers``: ``LayeredCountingGrid(n_layers=2)`` on the same extent (two word
  distributions per cell: twice the grid's parameters, plus one layer weight per cell);
* ``grid x2``: a ``CountingGrid`` with twice the cells (the extent's second axis doubled),
  the single-layer grid with the layered model's number of word distributions;
* ``layers, same cells``: ``LayeredCountingGrid(n_layers=2)`` on an extent of about half
  the cells (each side divided by sqrt(2)), as many word distributions as ``grid``.

and report, on the test split: the exact log-likelihood per token (``score / tokens``, the
multinomial coefficient omitted as everywhere), the label-embedding accuracy (paper eq. 9
from the training posteriors, read out under the test posteriors, as
``CountingGridClassifier``), and the fit's time.

    PYTHONPATH=src python experiments/grid_layers.py --data news20_same --seeds 0 1 2 \\
        --json /tmp/layers/news20_same.json
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
from countgrid.grid import CountingGrid, LayeredCountingGrid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _cg_protocols import git_head, label_embedding_readout  # noqa: E402
from word_relevance import data_path, fit_vocabulary  # noqa: E402  (the fit vocabulary)


MODELS = ("grid", "layers", "grid x2", "layers, same cells")


def load(name, n_words):
    """(X_train, y_train, X_test, y_test): the training documents' `countgrid fit`
    vocabulary (no English stop words, 2 <= df <= N/2, the n_words most frequent), applied
    to both splits; empty documents dropped."""
    path = data_path(name + ".npz")
    z = np.load(path, allow_pickle=False)
    X = sp.load_npz(path).tocsr()
    y, words = z["y"], z["feature_names"].astype(str)
    split = z["split_names"][z["split"]] if "split_names" in z else z["split"]
    train, test = np.flatnonzero(split == "train"), np.flatnonzero(split == "test")
    cols = fit_vocabulary(X[train], words, n_words)
    out = []
    for rows in (train, test):
        Xs = X[rows][:, cols]
        nonempty = np.asarray(Xs.sum(axis=1)).ravel() > 0
        out += [Xs[nonempty], y[rows][nonempty]]
    return tuple(out)


def evaluate(model, Xtr, ytr, Xte, yte, classes):
    extent, window = model._fitted_grid()
    Q_train, Q_test = model.transform(Xtr), model.transform(Xte)
    proba = label_embedding_readout(Q_train, ytr, Q_test, extent, window, classes)
    accuracy = float(np.mean(classes[np.argmax(proba, axis=1)] == yte))
    return {"heldout_loglik_per_token": float(model.score(Xte) / Xte.sum()),
            "train_loglik_per_token": float(model.score(Xtr) / Xtr.sum()),
            "label_embedding_accuracy": accuracy,
            "extent": list(extent), "n_iter": int(model.n_iter_)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="news20_same")
    ap.add_argument("--words", type=int, default=20000)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    Xtr, ytr, Xte, yte = load(args.data, args.words)
    classes = np.unique(ytr)
    print(f"{args.data}: {Xtr.shape[0]} training and {Xte.shape[0]} test documents x "
          f"{Xtr.shape[1]} words", flush=True)
    rows = []
    for seed in args.seeds:
        grid = None
        for name in MODELS:
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", countgrid.ConvergenceWarning)
                if name == "grid":
                    model = grid = CountingGrid(random_state=seed,
                                                num_threads=args.threads).fit(Xtr)
                elif name == "layers":
                    model = LayeredCountingGrid(n_layers=args.layers, random_state=seed,
                                                num_threads=args.threads).fit(Xtr)
                elif name == "grid x2":
                    E = grid.pi_.shape[:-1]
                    model = CountingGrid((E[0], args.layers * E[1]), random_state=seed,
                                         num_threads=args.threads).fit(Xtr)
                else:
                    E = grid.pi_.shape[:-1]
                    side = tuple(int(round(e / np.sqrt(args.layers))) for e in E)
                    model = LayeredCountingGrid(side, n_layers=args.layers, random_state=seed,
                                                num_threads=args.threads).fit(Xtr)
            seconds = time.perf_counter() - t0
            row = {"model": name, "seed": seed, "seconds": seconds,
                   **evaluate(model, Xtr, ytr, Xte, yte, classes)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    summary = {}
    for name in MODELS:
        mine = [r for r in rows if r["model"] == name]
        summary[name] = {k: [float(np.mean([r[k] for r in mine])),
                             float(np.std([r[k] for r in mine]))]
                         for k in ("heldout_loglik_per_token", "train_loglik_per_token",
                                   "label_embedding_accuracy", "seconds")}
    print(json.dumps(summary, indent=1))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"data": args.data, "commit": git_head(), "n_train": int(Xtr.shape[0]),
                       "n_test": int(Xte.shape[0]), "n_words": int(Xtr.shape[1]),
                       "layers": args.layers, "rows": rows, "summary": summary}, fh,
                      indent=1)


if __name__ == "__main__":
    main()
