"""How the counting-grid classifiers' defaults do against tuned recipes and baselines
(issue 12, "Defaults"; docs/results.md, "Counting grids — defaults").

Every dataset is cut into the same stratified folds (seed ``--seed``) for every
configuration; everything is learned on the training fold only:

* text (news20_same, news20_different, reuters_r8, convention2012): the ``--words`` (2000)
  words of highest chi2 against the class;
* microarrays (colon_alon1999, pomeroy_medulloblastoma): intensities clipped at 0, the 500
  genes of largest variance of ``log(1 + x)``, each sample scaled to ``10 x 500`` tokens
  and rounded ("bags of genes", docs/results.md).

Configurations (``--variants``): ``default`` is ``CountingGridClassifier(extent, window)``
with nothing else set (whatever the installed version's defaults are: run it again after
changing them); ``auto`` is ``CountingGridClassifier(window=window)`` (the grid sized by
``extent="auto"``); ``none`` the same without annealing (``window_schedule=None``, 0.1.0's
default); ``double`` one stage with a window twice as large for 10 iterations; ``eK`` the
default with extent K x K (e.g. ``e16``); ``generative`` one grid per class; ``mnb``
multinomial naive Bayes; ``lda`` LDA topic proportions (scikit-learn, K = 20) + 3-NN
(Hellinger distance, as the paper's LDA + kNN).  ``--dtype float64`` gives every grid
float64, the grids' default until issue 22 (float32 since): the tables of
docs/results.md, "Counting grids — defaults", were made with it.

    python experiments/grid_defaults.py --datasets news20_same,convention2012 \\
        --variants default,none,mnb,lda --folds 5 --json /tmp/defaults.json

Data: ``data/`` of the repository (data/README.md).
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.decomposition import LatentDirichletAllocation
from sklearn.feature_selection import SelectKBest, chi2
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.naive_bayes import MultinomialNB
from sklearn.neighbors import KNeighborsClassifier

import countgrid
from countgrid.grid import CountingGridClassifier, GenerativeCountingGridClassifier

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "data"))
from repo_data import data_path  # data/repo_data.py

TEXT = ("news20_same", "news20_different", "reuters_r8", "convention2012")
MICROARRAY = ("colon_alon1999", "pomeroy_medulloblastoma")


def load(name):
    path = data_path(name + ".npz")
    z = np.load(path, allow_pickle=False)
    X = sp.load_npz(path).tocsr()
    return X, z["y"]


class TextFeatures:
    """The k words of highest chi2 on the training fold."""

    def __init__(self, k):
        self.k = k

    def fit(self, X, y):
        self.sel = SelectKBest(chi2, k=min(self.k, X.shape[1])).fit(X, y)
        return self

    def transform(self, X):
        return sp.csr_matrix(self.sel.transform(X)).astype(np.int64)


class GeneBags:
    """Microarray intensities as bags of genes: clipped at 0, the n_genes of largest
    log-variance on the training fold, each sample scaled to 10 tokens per gene."""

    def __init__(self, n_genes=500, tokens_per_gene=10):
        self.n_genes = n_genes
        self.tokens_per_gene = tokens_per_gene

    def fit(self, X, y=None):
        A = np.log1p(np.clip(np.asarray(X.todense(), dtype=float), 0, None))
        self.keep = np.argsort(-A.var(axis=0), kind="stable")[: self.n_genes]
        return self

    def transform(self, X):
        A = np.clip(np.asarray(X.todense(), dtype=float)[:, self.keep], 0, None)
        total = self.tokens_per_gene * A.shape[1]
        A = A * (total / np.maximum(A.sum(axis=1, keepdims=True), 1e-300))
        return sp.csr_matrix(np.rint(A).astype(np.int64))


class LDAkNN:
    def __init__(self, n_topics=20, seed=0):
        self.n_topics, self.seed = n_topics, seed

    def fit(self, X, y):
        self.lda = LatentDirichletAllocation(self.n_topics, learning_method="batch",
                                             max_iter=50, random_state=self.seed, n_jobs=1)
        T = self.lda.fit_transform(X)
        self.knn = KNeighborsClassifier(3).fit(np.sqrt(T), y)   # Hellinger = L2 of sqrt
        return self

    def predict(self, X):
        return self.knn.predict(np.sqrt(self.lda.transform(X)))


def make(variant, extent, window, seed, threads, dtype="default"):
    common = {"random_state": seed, "num_threads": threads}
    if dtype != "default":
        common["dtype"] = np.dtype(dtype).type
    if variant == "default":
        return CountingGridClassifier(extent, window, **common)
    if variant == "auto":
        return CountingGridClassifier(window=window, **common)
    if variant == "none":
        return CountingGridClassifier(extent, window, window_schedule=None, **common)
    if variant == "double":
        coarse = tuple(min(2 * w, e) for w, e in zip(window, extent))
        return CountingGridClassifier(extent, window, window_schedule=[(coarse, 10)],
                                      **common)
    if variant.startswith("e") and variant[1:].isdigit():
        e = int(variant[1:])
        return CountingGridClassifier((e,) * len(extent), window, **common)
    if variant == "generative":
        return GenerativeCountingGridClassifier(extent, window, **common)
    if variant == "mnb":
        return MultinomialNB()
    if variant == "lda":
        return LDAkNN(20, seed)
    raise SystemExit(f"unknown variant {variant!r}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", default=",".join(TEXT + MICROARRAY))
    p.add_argument("--variants", default="default,none,mnb,lda")
    p.add_argument("--extent", default="40x40")
    p.add_argument("--window", default="4x4")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--max-folds", type=int, default=None)
    p.add_argument("--words", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--train-size", type=int, default=None,
                   help="learn on a stratified sample of this many training documents")
    p.add_argument("--dtype", choices=["default", "float64", "float32"], default="default",
                   help="precision of the grids (default: the package default, float32; "
                        "float64 for the tables of docs/results.md made before issue 22)")
    p.add_argument("--json", default=None, help="append one JSON line per fold result")
    a = p.parse_args(argv)
    extent = tuple(int(v) for v in a.extent.split("x"))
    window = tuple(int(v) for v in a.window.split("x"))
    print(f"countgrid {countgrid.__version__}; grid {extent} window {window}; "
          f"{a.folds} folds, seed {a.seed}", flush=True)
    for name in a.datasets.split(","):
        X, y = load(name)
        prep = GeneBags() if name in MICROARRAY else TextFeatures(a.words)
        folds = list(StratifiedKFold(a.folds, shuffle=True, random_state=a.seed).split(X, y))
        folds = folds[: a.max_folds] if a.max_folds else folds
        for variant in a.variants.split(","):
            accs, t0 = [], time.perf_counter()
            for k, (tr, te) in enumerate(folds):
                if a.train_size and a.train_size < len(tr):
                    tr, _ = train_test_split(tr, train_size=a.train_size, stratify=y[tr],
                                             random_state=a.seed + k)
                f = prep.__class__(**({"k": a.words} if name not in MICROARRAY else {}))
                f.fit(X[tr], y[tr])
                Xtr, Xte = f.transform(X[tr]), f.transform(X[te])
                keep = np.asarray(Xtr.sum(axis=1)).ravel() > 0
                est = make(variant, extent, window, a.seed, a.threads, a.dtype)
                est.fit(Xtr[keep], y[tr][keep])
                acc = float(np.mean(est.predict(Xte) == y[te]))
                accs.append(acc)
                if a.json:
                    with open(a.json, "a") as fh:
                        fh.write(json.dumps({"dataset": name, "variant": variant, "fold": k,
                                             "train_size": len(tr),
                                             "extent": extent, "window": window, "acc": acc,
                                             "version": countgrid.__version__}) + "\n")
            print(f"{name:24s} {variant:10s} {np.mean(accs):.4f} ± {np.std(accs, ddof=1):.4f}"
                  f"  ({' '.join(f'{v:.3f}' for v in accs)})  {time.perf_counter() - t0:.0f} s",
                  flush=True)


if __name__ == "__main__":
    main()
