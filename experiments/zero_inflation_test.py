"""Is zero inflation needed?  The count models of ZIPGTM on held-out samples of the bundled
biological counts (issue 28: zero inflation is disputed for count data such as UMI
counts; docs/zip_gtm.md, docs/results.md): zero-inflated Poisson, Poisson, Poisson with
size factors, negative binomial and zero-inflated negative binomial.

For each dataset, 5 folds (seeded): every map is fitted on four folds with the same
settings and scores the fifth; reported: the held-out log-likelihood per count (the mean
of ``score_samples`` over the held-out samples divided by their mean total count) with its
standard deviation over folds, the best model on each fold, and the zero counts' share.
A zero-inflated model that does not score held-out data better than the same model
without zero inflation is not needed there.

    PYTHONPATH=src python experiments/zero_inflation_test.py [--iter 60] [--json out.json]

The counts go in as CSR matrices, for which every model is bit-identical on any number
of threads (docs/zip_gtm.md): ``tools/results.py`` reruns this and checks the table of
docs/results.md.

Data: ``data/`` of the repository (twins_microbiome.npz: 16S read counts, 278 x 130;
pomeroy_medulloblastoma.npz: integer microarray intensities, 34 x 5,893, the 500 most
variable kept), or COUNTGRID_DATA_DIR.
"""
import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "data"))
from repo_data import data_path  # noqa: E402  (data/repo_data.py)

import countgrid  # noqa: E402
from countgrid.text import read_corpus  # noqa: E402


def datasets():
    twins = read_corpus(data_path("twins_microbiome.npz")).counts.toarray().astype(float)
    pom = read_corpus(data_path("pomeroy_medulloblastoma.npz")).counts.toarray().astype(float)
    keep = np.argsort(-pom.var(axis=0), kind="stable")[:500]
    return {"twins_microbiome": ("16S reads", twins),
            "pomeroy": ("integer intensities, 500 genes", pom[:, np.sort(keep)])}


def folds(n, k, seed):
    order = np.random.default_rng(seed).permutation(n)
    return [order[i::k] for i in range(k)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iter", type=int, default=60)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", default=None, help="write the figures to this file")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", countgrid.ConvergenceWarning)
    common = dict(grid_shape=(8, 8), n_basis=16, n_iter=args.iter, random_state=0,
                  num_threads=args.threads)
    record = {}
    for name, (what, dense) in datasets().items():
        X = sp.csr_matrix(dense)
        t0 = time.perf_counter()
        models = {"ZIP": dict(zero_inflation=True),
                  "Poisson": dict(zero_inflation=False),
                  "Poisson + size factors": dict(zero_inflation=False, size_factors=True),
                  "NB": dict(zero_inflation=False, distribution="negative_binomial"),
                  "ZINB": dict(zero_inflation=True, distribution="negative_binomial")}
        per = {m: [] for m in models}
        for k, test in enumerate(folds(X.shape[0], args.folds, 0)):
            train = np.setdiff1d(np.arange(X.shape[0]), test)
            scale = dense[test].sum(axis=1).mean()
            for m, options in models.items():
                model = countgrid.ZIPGTM(**options, **common).fit(X[train])
                per[m].append(model.score_samples(X[test]).mean() / scale)
        per = {m: np.array(v) for m, v in per.items()}
        names = list(per)
        best = np.argmax(np.stack([per[m] for m in names]), axis=0)
        wins = {m: int(np.sum(best == i)) for i, m in enumerate(names)}
        record[name] = {m: {"mean": float(v.mean()), "sd": float(v.std(ddof=1)),
                            "folds": v.tolist()} for m, v in per.items()}
        totals = dense.sum(axis=1)
        print(f"{name} ({what}): {X.shape[0]} x {X.shape[1]}, zeros {np.mean(dense == 0):.1%}, "
              f"totals {totals.min():.0f}-{totals.max():.0f}; held-out log-likelihood "
              f"per count: " + ", ".join(f"{m} {v.mean():.4f} (sd {v.std(ddof=1):.4f})"
                                         for m, v in per.items()) +
              "; best on " + ", ".join(f"{m} {w}" for m, w in wins.items() if w) +
              f" of {args.folds} folds; ZIP better than Poisson on "
              f"{int(np.sum(per['ZIP'] > per['Poisson']))}, ZINB than NB on "
              f"{int(np.sum(per['ZINB'] > per['NB']))}; "
              f"{time.perf_counter() - t0:.0f} s", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"datasets": record}, fh, indent=1)


if __name__ == "__main__":
    main()
