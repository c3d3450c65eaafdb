"""pLSA EM vs scikit-learn's KL-divergence NMF (documented as equivalent to pLSI), same run.

    python benchmarks/bench_plsa.py [--docs 5000] [--words 5000] [--topics 100]

Data: the first ``--docs`` documents of news20_full (data/ of the repository, or
$COUNTGRID_DATA_DIR) restricted to the ``--words`` most frequent words, empty
documents dropped.  Both methods start from their own random initialisation and
run ``--iters`` iterations; seconds per iteration are wall-clock medians.  For the
likelihood comparison the NMF factors X ~ W H are turned into pLSA parameters
(P(w|z) = rows of H normalised, P(z|d) ∝ W_dz sum_w H_zw) and both models are
scored by the same per-document multinomial log-likelihood
sum_w n(d,w) log sum_z P(z|d) P(w|z).
"""
import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _countgrid_import import countgrid  # noqa: E402
from countgrid.topics import PLSA  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(HERE), "data"))
from repo_data import data_path  # noqa: E402  (data/repo_data.py)


def corpus(n_docs, n_words):
    X = sp.load_npz(data_path("news20_full.npz")).tocsr()[:n_docs]
    keep = np.argsort(-np.asarray(X.sum(axis=0)).ravel(), kind="stable")[:n_words]
    X = X[:, np.sort(keep)]
    X = X[np.asarray(X.sum(axis=1)).ravel() > 0]
    return sp.csr_matrix(X, dtype=np.float64)


def plsa_loglik(X, theta, phi_wz):
    X = sp.csr_matrix(X)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    p = np.einsum("ij,ij->i", theta[rows], phi_wz[X.indices])
    return float(np.sum(X.data * np.log(p)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=5000)
    ap.add_argument("--words", type=int, default=5000)
    ap.add_argument("--topics", type=int, default=100)
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args(argv)
    from sklearn.decomposition import NMF

    X = corpus(args.docs, args.words)
    print(f"news20_full: {X.shape[0]} docs x {X.shape[1]} words, {X.nnz} non-zeros, "
          f"{args.topics} topics, {args.iters} iterations, load {os.getloadavg()[0]:.1f}")

    # countgrid: time each iteration through the verbose lines of fit
    times = []
    last = [time.perf_counter()]

    class Clock:
        def write(self, s):
            if s.startswith("[PLSA] iteration"):
                now = time.perf_counter()
                times.append(now - last[0])
                last[0] = now

        def flush(self):
            pass

    stdout, sys.stdout = sys.stdout, Clock()
    try:
        last[0] = time.perf_counter()
        t0 = time.perf_counter()
        model = PLSA(n_components=args.topics, n_iter=args.iters, tol=0.0, random_state=0,
                     verbose=1).fit(X)
        t_fit = time.perf_counter() - t0
    finally:
        sys.stdout = stdout
    t_plsa = statistics.median(times[1:]) if len(times) > 2 else t_fit / args.iters
    ll_plsa = model.log_likelihood_[-1]

    nmf = NMF(n_components=args.topics, beta_loss="kullback-leibler", solver="mu", init="random",
              max_iter=args.iters, tol=0.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        Wd = nmf.fit_transform(X)
        t_nmf = (time.perf_counter() - t0) / args.iters
    H = nmf.components_
    phi = (H / H.sum(axis=1, keepdims=True)).T
    theta = Wd * H.sum(axis=1)[None, :]
    theta = theta / np.maximum(theta.sum(axis=1, keepdims=True), 1e-300)
    ll_nmf = plsa_loglik(X, theta, phi)

    print("\n| method | s/iteration | ratio | log-likelihood after "
          f"{args.iters} iterations | per token |")
    print("|---|---|---|---|---|")
    N = X.sum()
    print(f"| countgrid PLSA | {t_plsa:.4f} | 1 | {ll_plsa:.6e} | {ll_plsa / N:.4f} |")
    print(f"| sklearn NMF (KL, mu) | {t_nmf:.4f} | {t_nmf / t_plsa:.1f}x slower | "
          f"{ll_nmf:.6e} | {ll_nmf / N:.4f} |")


if __name__ == "__main__":
    main()
