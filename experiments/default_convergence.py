#!/usr/bin/env python
"""Do the default settings of PLSA, ZIPGTM and HistogramGMM converge on real data (issue 12)?

Each estimator is fitted with its defaults (only the arguments without a default, and the
seed, are given) and the script reports, per dataset, the EM iterations used (``n_iter_``),
``converged_``, whether a ``ConvergenceWarning`` was issued, the last change of the
objective and the wall-clock seconds.  When a default run does not converge, the same model
is run again with ``--n-iter-long`` iterations (the default ``tol``) to say how many
iterations convergence needs and how far the default run's objective was from the end.

Data (``data/`` of the repository, data/README.md):

* PLSA (``PLSA()``: 10 topics, ``n_iter=100``, ``tol=1e-6``): the raw word counts of
  news20_same (2,924 x 26,558) and reuters_r8 (7,674 x 23,012), full vocabulary, all
  documents.
* ZIPGTM (``ZIPGTM()``: 15 x 18 latent grid, 25 sinh basis functions, ``n_iter=100``,
  ``tol=1e-5``): its guide asks for a selected vocabulary of a few hundred words, so the
  counts of ``--gtm-docs`` documents (a stratified random sample, seed 0) restricted to at
  most ``--gtm-terms`` middle-frequency words (``countgrid.text.select_by_resolving_power``,
  document frequency in [low, 10 %], the smallest ``low`` that leaves at most that many),
  of news20_same and reuters_r8.
* HistogramGMM (``n_components=--gmm-components``, ``n_iter=200``, ``tol=1e-7``) on the
  binned data it is meant for (docs/guide/mixture.md), made from the 1,797 images of
  ``digits.npz``: "euclidean", each image as a 2-D histogram of its ink over the 8 x 8
  pixel centres; "symmetric", each image's grey-level co-occurrence matrix (pairs of
  horizontally and vertically adjacent pixel values 0-16, both orders: a symmetric 17 x 17
  histogram, as the co-occurrence features the model was made for); "circular", each
  image's histogram of gradient directions (36 bins of 10 degrees, weighted by the gradient
  magnitude, period 360).  The first ``--gmm-images`` (300) images, each kind.

    python experiments/default_convergence.py --json /tmp/conv.json    # ~17 min on 2 busy cores
    python experiments/default_convergence.py --only plsa              # ~2 min

Results: experiments/README.md.
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
from countgrid.exceptions import ConvergenceWarning  # noqa: E402


def load(name):
    path = data_path(name + ".npz")
    X = sp.load_npz(path).tocsr().astype(np.float64)
    with np.load(path, allow_pickle=False) as z:
        return X, z["y"]


def run(make, fit):
    """(estimator, seconds, ConvergenceWarning issued?)."""
    est = make()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always", ConvergenceWarning)
        t0 = time.perf_counter()
        fit(est)
        secs = time.perf_counter() - t0
    return est, secs, any(issubclass(w.category, ConvergenceWarning) for w in rec)


def last_change(history, relative):
    h = np.asarray(history, dtype=np.float64)
    if h.size < 2:
        return None
    d = h[-1] - h[-2]
    return float(d / abs(h[-2]) if relative else d)


def row(model, dataset, est, secs, warned, history, relative, objective):
    r = dict(model=model, dataset=dataset, n_iter=int(est.n_iter), tol=float(est.tol),
             n_iter_=int(est.n_iter_), converged_=bool(est.converged_), warned=warned,
             seconds=round(secs, 2), last_change=last_change(history, relative),
             objective=float(history[-1]), objective_name=objective)
    print(f"  {model:12s} {dataset:28s} iterations {r['n_iter_']:4d}/{r['n_iter']:<4d} "
          f"converged {str(r['converged_']):5s} warning {str(warned):5s} "
          f"last change {r['last_change']:+.2e}  {objective} {r['objective']:.6g}  "
          f"{secs:.1f} s", flush=True)
    return r


def longer(r, make_long, fit, history_of, relative):
    """Rerun a model that did not converge with more iterations (same tol)."""
    est, secs, warned = run(make_long, fit)
    h = history_of(est)
    gap = float(h[-1] - r["objective"])
    r["long"] = dict(n_iter=int(est.n_iter), n_iter_=int(est.n_iter_),
                     converged_=bool(est.converged_), seconds=round(secs, 2),
                     objective=float(h[-1]), gain_over_default=gap,
                     relative_gain=gap / abs(h[-1]) if relative else None)
    print(f"    with n_iter={est.n_iter}: iterations {est.n_iter_}, converged "
          f"{est.converged_}, objective {h[-1]:.6g} (+{gap:.3g}"
          + (f", relative {gap / abs(h[-1]):.2e}" if relative else "") + f"), {secs:.1f} s",
          flush=True)
    # where the long run would have stopped with a looser tol, and how far from its end
    h = np.asarray(h, dtype=np.float64)
    change = np.diff(h) / (np.abs(h[:-1]) if relative else 1.0)
    stops = {}
    for t in (1e-3, 1e-4, 1e-5, 1e-6):
        hit = np.flatnonzero(change < t)
        if hit.size:
            i = int(hit[0]) + 1          # history index of the value that met the test
            stops[f"{t:g}"] = dict(n_iter_=i, gap_to_end=float(h[-1] - h[i]),
                                   relative_gap=float((h[-1] - h[i]) / abs(h[-1]))
                                   if relative else None)
    r["long"]["stop_at_tol"] = stops
    print("    the long run's objective would meet tol " + ", ".join(
        f"{t} after {v['n_iter_']} (gap to its end {v['gap_to_end']:.3g}"
        + (f", relative {v['relative_gap']:.1e})" if relative else ")")
        for t, v in stops.items()), flush=True)


# ----------------------------------------------------------------------------- PLSA
def plsa(args, out):
    for name in ("news20_same", "reuters_r8"):
        X, _ = load(name)
        X = X[np.diff(X.indptr) > 0]
        for seed in range(args.seeds):
            est, secs, warned = run(lambda: countgrid.PLSA(random_state=seed,
                                                           num_threads=args.threads),
                                    lambda e: e.fit(X))
            r = row("PLSA", f"{name} {X.shape[0]}x{X.shape[1]} s{seed}", est, secs, warned,
                    est.log_likelihood_, True, "log-likelihood")
            if not est.converged_:
                longer(r, lambda: countgrid.PLSA(n_iter=args.n_iter_long, random_state=seed,
                                                 num_threads=args.threads),
                       lambda e: e.fit(X), lambda e: e.log_likelihood_, True)
            out.append(r)


# ---------------------------------------------------------------------------- ZIPGTM
def gtm_data(name, n_docs, n_terms):
    from countgrid.text import select_by_resolving_power

    X, y = load(name)
    rng = np.random.default_rng(0)
    if n_docs < X.shape[0]:
        # stratified: each class in proportion
        idx = np.concatenate([rng.choice(np.flatnonzero(y == c),
                                         max(1, round(n_docs * np.mean(y == c))),
                                         replace=False) for c in np.unique(y)])
        X = X[np.sort(idx)]
    for low in range(1, X.shape[0]):
        cols = select_by_resolving_power(X, low, 0.10)
        if len(cols) <= n_terms:
            break
    X = X[:, cols].tocsr()
    return X[np.diff(X.indptr) > 0], low


def gtm(args, out):
    for name in ("news20_same", "reuters_r8"):
        X, low = gtm_data(name, args.gtm_docs, args.gtm_terms)
        label = f"{name} {X.shape[0]}x{X.shape[1]} (df>={low})"
        est, secs, warned = run(lambda: countgrid.ZIPGTM(random_state=0,
                                                         num_threads=args.threads),
                                lambda e: e.fit(X))
        r = row("ZIPGTM", label, est, secs, warned, est.objective_, True, "objective")
        if not est.converged_:
            longer(r, lambda: countgrid.ZIPGTM(n_iter=args.n_iter_long, random_state=0,
                                               num_threads=args.threads),
                   lambda e: e.fit(X), lambda e: e.objective_, True)
        out.append(r)


# ---------------------------------------------------------------------- HistogramGMM
def digit_histograms(kind, images):
    """(weights, bin_centers, domain kwargs) of each image."""
    if kind == "euclidean":
        c = np.arange(8.0)
        return [(im, [c, c], {}) for im in images]
    if kind == "symmetric":
        c = np.arange(17.0)
        hists = []
        for im in images:
            a = im.astype(int)
            pairs = np.concatenate([np.c_[a[:, :-1].ravel(), a[:, 1:].ravel()],
                                    np.c_[a[:-1, :].ravel(), a[1:, :].ravel()]])
            H = np.zeros((17, 17))
            np.add.at(H, (pairs[:, 0], pairs[:, 1]), 1.0)
            hists.append((H + H.T, [c, c], dict(domain="symmetric")))
        return hists
    edges = np.linspace(0, 360, 37)
    c = (edges[:-1] + edges[1:]) / 2
    hists = []
    for im in images:
        gy, gx = np.gradient(im.astype(float))
        mag = np.hypot(gx, gy).ravel()
        ang = np.degrees(np.arctan2(gy, gx)).ravel() % 360
        H, _ = np.histogram(ang, bins=edges, weights=mag)
        hists.append((H, [c], dict(domain="circular", period=360.0)))
    return hists


def gmm(args, out):
    X, _ = load("digits")
    images = X.toarray().reshape(-1, 8, 8)[:args.gmm_images]
    for kind in ("euclidean", "symmetric", "circular"):
        recs = []
        for W, centres, kw in digit_histograms(kind, images):
            if W.sum() <= 0:
                continue
            est, secs, warned = run(
                lambda: countgrid.HistogramGMM(args.gmm_components, random_state=0, **kw),
                lambda e: e.fit(W, centres))
            recs.append((est, secs, warned, W, centres, kw))
        its = np.array([e.n_iter_ for e, *_ in recs])
        conv = np.array([e.converged_ for e, *_ in recs])
        warned = np.array([w for _, _, w, *_ in recs])
        secs = float(sum(s for _, s, *_ in recs))
        r = dict(model="HistogramGMM", dataset=f"digits {kind} ({len(recs)} images, "
                 f"{args.gmm_components} components)", n_iter=200, tol=1e-7,
                 n_histograms=len(recs), converged_fraction=float(conv.mean()),
                 warned_count=int(warned.sum()), n_iter_median=float(np.median(its)),
                 n_iter_p95=float(np.percentile(its, 95)), n_iter_max=int(its.max()),
                 seconds_total=round(secs, 2), seconds_mean=round(secs / len(recs), 4))
        print(f"  HistogramGMM digits {kind:9s} {len(recs)} histograms: converged "
              f"{conv.mean():.1%}, warnings {warned.sum()}, iterations median "
              f"{np.median(its):.0f}, 95th percentile {np.percentile(its, 95):.0f}, max "
              f"{its.max()}; {secs:.1f} s in all", flush=True)
        stuck = [rec for rec in recs if not rec[0].converged_]
        if stuck:
            need, gains = [], []
            for est, _, _, W, centres, kw in stuck:
                long_est, _, _ = run(lambda: countgrid.HistogramGMM(
                    args.gmm_components, n_iter=args.n_iter_long, random_state=0, **kw),
                    lambda e: e.fit(W, centres))
                need.append(long_est.n_iter_ if long_est.converged_ else np.inf)
                gains.append(long_est.log_likelihood_[-1] - est.log_likelihood_[-1])
            r["stuck"] = dict(count=len(stuck), n_iter_needed_median=float(np.median(need)),
                              n_iter_needed_max=float(np.max(need)),
                              converged_with_long=int(np.isfinite(need).sum()),
                              gain_max=float(np.max(gains)),
                              gain_median=float(np.median(gains)))
            print(f"    the {len(stuck)} unconverged with n_iter={args.n_iter_long}: "
                  f"{np.isfinite(need).sum()} converge, iterations needed median "
                  f"{np.median(need):.0f}, max {np.max(need):.0f}; mean log-likelihood "
                  f"gain median {np.median(gains):.2e}, max {np.max(gains):.2e}", flush=True)
        out.append(r)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="plsa,gtm,gmm",
                    help="comma-separated subset of plsa, gtm, gmm")
    ap.add_argument("--seeds", type=int, default=3, help="PLSA seeds per dataset")
    ap.add_argument("--gtm-docs", type=int, default=1000)
    ap.add_argument("--gtm-terms", type=int, default=330)
    ap.add_argument("--gmm-components", type=int, default=3)
    ap.add_argument("--gmm-images", type=int, default=300)
    ap.add_argument("--n-iter-long", type=int, default=1000,
                    help="iterations of the rerun of a model that did not converge")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    print(f"countgrid {countgrid.__version__}", flush=True)
    out = []
    for part in args.only.split(","):
        {"plsa": plsa, "gtm": gtm, "gmm": gmm}[part.strip()](args, out)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
