"""Is zero inflation needed?  ZIP-GTM against the plain Poisson GTM on held-out samples of
the bundled biological counts (issue 28: zero inflation is disputed for count data such
as UMI counts; docs/zip_gtm.md).

For each dataset, 5 folds (seeded): both maps are fitted on four folds with the same
settings and score the fifth; reported: the held-out log-likelihood per count (the mean of
``score_samples`` over the held-out samples divided by their mean total count), the
better model on each fold, and the zero counts' share.  A zero-inflated model that does
not score held-out data better than the Poisson one is not needed there.

    PYTHONPATH=src python experiments/zero_inflation_test.py [--iter 60]

Data: ``data/`` of the repository (twins_microbiome.npz: 16S read counts, 278 x 130;
pomeroy_medulloblastoma.npz: integer microarray intensities, 34 x 5,893, the 500 most
variable kept), or COUNTGRID_DATA_DIR.
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "data"))
from repo_data import data_path  # noqa: E402  (data/repo_data.py)

import countgrid  # noqa: E402
from countgrid.text import read_corpus  # noqa: E402


def datasets():
    twins = read_corpus(data_path("twins_microbiome.npz")).counts.toarray().astype(float)
    pom = read_corpus(data_path("pomeroy_medulloblastoma.npz")).counts.toarray().astype(float)
    keep = np.argsort(-pom.var(axis=0), kind="stable")[:500]
    return {"twins_microbiome (16S reads)": twins,
            "pomeroy (integer intensities, 500 genes)": pom[:, np.sort(keep)]}


def folds(n, k, seed):
    order = np.random.default_rng(seed).permutation(n)
    return [order[i::k] for i in range(k)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iter", type=int, default=60)
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", countgrid.ConvergenceWarning)
    common = dict(grid_shape=(8, 8), n_basis=16, n_iter=args.iter, random_state=0,
                  num_threads=2)
    for name, X in datasets().items():
        t0 = time.perf_counter()
        models = {"ZIP": dict(zero_inflation=True),
                  "Poisson": dict(zero_inflation=False),
                  "Poisson + size factors": dict(zero_inflation=False, size_factors=True)}
        per = {m: [] for m in models}
        for k, test in enumerate(folds(len(X), args.folds, 0)):
            train = np.setdiff1d(np.arange(len(X)), test)
            scale = X[test].sum(axis=1).mean()
            for m, options in models.items():
                model = countgrid.ZIPGTM(**options, **common).fit(X[train])
                per[m].append(model.score_samples(X[test]).mean() / scale)
        per = {m: np.array(v) for m, v in per.items()}
        print(f"{name}: {X.shape[0]} x {X.shape[1]}, zeros {np.mean(X == 0):.1%}, totals "
              f"{X.sum(axis=1).min():.0f}-{X.sum(axis=1).max():.0f}; held-out log-likelihood "
              f"per count: " + ", ".join(f"{m} {v.mean():.4f} (sd {v.std():.4f})"
                                         for m, v in per.items()) +
              f"; ZIP better than Poisson + size factors on "
              f"{int(np.sum(per['ZIP'] > per['Poisson + size factors']))}/{args.folds} folds; "
              f"{time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
