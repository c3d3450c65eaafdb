"""ZIP-GTM document maps on news20_different (Alvarez-Medina & Hidalgo-Silva, section 4).

The paper maps 600 abstracts (200 each from Medlars, CISI, Cranfield), 329 terms chosen by
resolving power, with a 270-point latent grid and 25 basis functions.  We do the same with
the data we have: 600 posts (200 per class) from news20_different (alt.atheism,
rec.sport.baseball, sci.space), vocabulary cut to about 330 middle-frequency terms, and
compare the class separation on the map (cross-validated k-NN accuracy in map
coordinates) of ZIP-GTM, Poisson-GTM, a Gaussian GTM (the `ugtm` package) and PCA.

    PYTHONPATH=src python experiments/zip_gtm_news20.py [--png docs/zip_gtm_news20.png]
    PYTHONPATH=src python experiments/zip_gtm_news20.py --only "ZIP-GTM (sinh, random latent)" \
        --no-timing --no-ugtm --png "" --json /tmp/zip_random.json

``--only`` runs the named maps (the names of the printed table, comma-separated),
``--no-timing`` skips the seconds-per-iteration measurement, ``--png ""`` the picture.

Data: ``data/`` of the repository (data/README.md), or the directory in the environment
variable COUNTGRID_DATA_DIR.
"""
import argparse
import json
import os
import re
import sys
import time

import numpy as np
import scipy.sparse as sp

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "data"))
from repo_data import data_path  # data/repo_data.py

#: The maps, as printed and as --only names them.
MAPS = ("ZIP-GTM (sinh, grid)", "ZIP-GTM (rbf, grid)", "ZIP-GTM (sinh, random latent)",
        "Poisson-GTM (sinh, grid)", "Poisson-GTM (rbf, grid)",
        "Gaussian GTM (ugtm, log1p counts)", "PCA (log1p counts)", "PCA (raw counts)")


def load_sample(per_class, seed):
    path = data_path("news20_different.npz")
    X = sp.load_npz(path).tocsr()
    with np.load(path, allow_pickle=False) as z:
        y, names = z["y"], [str(s) for s in z["label_names"]]
    rng = np.random.default_rng(seed)
    idx = np.concatenate([np.sort(rng.choice(np.flatnonzero(y == c), per_class, replace=False))
                          for c in range(len(names))])
    return X[idx], y[idx], names


def select_terms(X, target, high):
    """Resolving-power cut: document frequency in [low, high * n], low the smallest cut-off
    that leaves at most ``target`` terms."""
    from countgrid.text import select_by_resolving_power

    for low in range(1, X.shape[0]):
        cols = select_by_resolving_power(X, low, high)
        if len(cols) <= target:
            return cols, low
    raise RuntimeError("no cut-off leaves the target number of terms")


def knn_accuracy(Z, y, k, folds, seed):
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    cv = StratifiedKFold(folds, shuffle=True, random_state=seed)
    s = cross_val_score(KNeighborsClassifier(k), Z, y, cv=cv)
    return float(s.mean()), float(s.std())


def time_iteration(X, **kw):
    """Seconds per EM iteration: (fit with 11 iterations - fit with 1) / 10, best of 3."""
    from countgrid.gtm import ZIPGTM

    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        ZIPGTM(n_iter=1, tol=0, **kw).fit(X)
        t1 = time.perf_counter()
        ZIPGTM(n_iter=11, tol=0, **kw).fit(X)
        t2 = time.perf_counter()
        best = min(best, ((t2 - t1) - (t1 - t0)) / 10)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-class", type=int, default=200)
    ap.add_argument("--terms", type=int, default=330)
    ap.add_argument("--high", type=float, default=0.10,
                    help="upper document-frequency cut-off (fraction of documents)")
    ap.add_argument("--n-iter", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=3, help="model seeds for the GTMs")
    ap.add_argument("--k", type=int, default=5, help="k of the k-NN read-out")
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1,
                    help="BLAS threads (1: the machine is shared; oversubscribed BLAS is slow)")
    ap.add_argument("--png", default=os.path.join(REPO, "docs", "zip_gtm_news20.png"))
    ap.add_argument("--json", default=None)
    ap.add_argument("--no-ugtm", action="store_true")
    ap.add_argument("--only", default=None,
                    help="comma-separated map names (as printed) to run; default: every map")
    ap.add_argument("--no-timing", action="store_true",
                    help="skip the seconds-per-EM-iteration measurement")
    args = ap.parse_args(argv)
    # the names hold commas themselves: split at the commas outside parentheses
    only = (None if args.only is None
            else {n.strip() for n in re.split(r",(?![^()]*\))", args.only) if n.strip()})
    if only is not None and only - set(MAPS):
        ap.error(f"--only: no map {sorted(only - set(MAPS))} (maps: {', '.join(MAPS)})")

    def wanted(name):
        return only is None or name in only

    import countgrid
    from countgrid.gtm import ZIPGTM

    X, y, names = load_sample(args.per_class, seed=0)
    cols, low = select_terms(X, args.terms, args.high)
    X = X[:, cols].astype(np.float64)
    empty = int((np.diff(X.indptr) == 0).sum())
    print(f"countgrid {countgrid.__version__}; data {X.shape[0]} docs x {X.shape[1]} terms "
          f"(document frequency in [{low}, {args.high:g} n]), {X.nnz} non-zeros, "
          f"{empty} empty documents; classes {names}")

    t_zip = t_poi = None
    if not args.no_timing:
        t_zip = time_iteration(X, random_state=0, num_threads=args.threads)
        t_poi = time_iteration(X, random_state=0, num_threads=args.threads,
                               zero_inflation=False)
        print(f"seconds per EM iteration (600 x {X.shape[1]} x 270): ZIP {t_zip:.3f}, "
              f"Poisson {t_poi:.3f}")

    results, maps = {}, {}
    gtms = {
        "ZIP-GTM (sinh, grid)": {},
        "ZIP-GTM (rbf, grid)": {"basis": "rbf"},
        "ZIP-GTM (sinh, random latent)": {"latent": "random"},
        "Poisson-GTM (sinh, grid)": {"zero_inflation": False},
        "Poisson-GTM (rbf, grid)": {"zero_inflation": False, "basis": "rbf"},
    }
    for name, kw in gtms.items():
        if not wanted(name):
            continue
        accs, secs, iters = [], [], []
        # grid latent points + PCA start are deterministic: the seed only matters for
        # random latent points
        for seed in range(args.seeds) if kw.get("latent") == "random" else [0]:
            t0 = time.perf_counter()
            g = ZIPGTM(n_iter=args.n_iter, random_state=seed, num_threads=args.threads,
                       **kw).fit(X)
            secs.append(time.perf_counter() - t0)
            iters.append(g.n_iter_)
            Z = g.transform(X)
            accs.append(knn_accuracy(Z, y, args.k, args.folds, seed=0)[0])
            if seed == 0:
                maps[name] = Z
        results[name] = {"acc": float(np.mean(accs)), "acc_sd": float(np.std(accs)),
                         "accs": accs, "seconds": float(np.mean(secs)), "iters": iters}
        print(f"{name:32s} {args.k}-NN acc {np.mean(accs):.3f} ± {np.std(accs):.3f} "
              f"over {len(accs)} seed(s) ({np.mean(secs):.1f} s, iterations {iters})")

    logX = X.copy()
    logX.data = np.log1p(logX.data)
    dense = logX.toarray()
    if not args.no_ugtm and wanted("Gaussian GTM (ugtm, log1p counts)"):
        import ugtm

        accs, secs = [], []
        for seed in range(args.seeds):
            t0 = time.perf_counter()
            # 16 x 16 = 256 latent points, 5 x 5 = 25 RBFs (closest to 270 and 25)
            gtm = ugtm.runGTM(dense, k=16, m=5, s=0.3, regul=0.1, niter=args.n_iter,
                              random_state=1234 + seed)
            secs.append(time.perf_counter() - t0)
            Z = np.asarray(gtm.matMeans)
            accs.append(knn_accuracy(Z, y, args.k, args.folds, seed=0)[0])
            if seed == 0:
                maps["Gaussian GTM (ugtm, log1p counts)"] = Z
        results["Gaussian GTM (ugtm, log1p counts)"] = {
            "acc": float(np.mean(accs)), "acc_sd": float(np.std(accs)), "accs": accs,
            "seconds": float(np.mean(secs))}
        print(f"{'Gaussian GTM (ugtm)':32s} {args.k}-NN acc {np.mean(accs):.3f} ± "
              f"{np.std(accs):.3f} ({np.mean(secs):.1f} s)")
    for label, data in (("PCA (log1p counts)", dense), ("PCA (raw counts)", X.toarray())):
        if not wanted(label):
            continue
        Z = (data - data.mean(0)) @ np.linalg.svd(data - data.mean(0), full_matrices=False)[2][:2].T
        acc = knn_accuracy(Z, y, args.k, args.folds, seed=0)
        results[label] = {"acc": acc[0], "acc_sd": 0.0, "accs": [acc[0]], "seconds": 0.0}
        maps[label] = Z
        print(f"{label:32s} {args.k}-NN acc {acc[0]:.3f}")

    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        show = [n for n in ("ZIP-GTM (sinh, grid)", "ZIP-GTM (rbf, grid)",
                            "Poisson-GTM (sinh, grid)", "Gaussian GTM (ugtm, log1p counts)",
                            "PCA (log1p counts)", "ZIP-GTM (sinh, random latent)") if n in maps]
        fig, axes = plt.subplots(2, 3, figsize=(13, 8.5))
        for ax, name in zip(axes.ravel(), show):
            Z = maps[name]
            for c, (lab, mk) in enumerate(zip(names, "o^s")):
                m = y == c
                ax.scatter(Z[m, 0], Z[m, 1], s=9, marker=mk, alpha=0.6, label=lab)
            ax.set_title(f"{name}\n{args.k}-NN acc {results[name]['acc']:.3f}", fontsize=9)
            ax.set_xticks([])
            ax.set_yticks([])
        for ax in axes.ravel()[len(show):]:
            ax.axis("off")
        axes.ravel()[0].legend(fontsize=8, loc="best")
        fig.suptitle(f"news20_different, {X.shape[0]} posts x {X.shape[1]} terms "
                     f"(seed-0 maps; colours = newsgroup)", fontsize=10)
        fig.tight_layout()
        fig.savefig(args.png, dpi=90)
        print(f"wrote {args.png}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"shape": list(X.shape), "low": low, "high": args.high, "empty": empty,
                       "sec_per_iter": {"zip": t_zip, "poisson": t_poi}, "results": results},
                      fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
