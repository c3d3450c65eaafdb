"""Sparse posteriors (issue 14): what ``CountingGrid(posterior_top_k=k)`` costs in
log-likelihood and gains in speed, on news20_full (18,821 posts, the 20,000 most frequent
words, float32).

Each setting fits the same grid from the same random start for a fixed number of EM
iterations (``tol=0``) and reports the fit time and the exact log-likelihood per token of
the training documents after the last iteration.

    python benchmarks/bench_sparse_posteriors.py [--extent 48 48] [--n-iter 30] [--k 16 64 256]
"""
import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _countgrid_import  # noqa: E402,F401

import countgrid  # noqa: E402
from bench_online import load  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--words", type=int, default=20_000)
    ap.add_argument("--extent", type=int, nargs=2, default=[48, 48])
    ap.add_argument("--window", type=int, nargs=2, default=[5, 5])
    ap.add_argument("--n-iter", type=int, default=30)
    ap.add_argument("--k", type=int, nargs="+", default=[16, 64, 256])
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args(argv)
    from run_all import cpu_model
    print(f"# CPU: {cpu_model()}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f}, {time.strftime('%Y-%m-%d %H:%M')}")
    countgrid.show_config()
    X = load(args.words)
    tokens = float(X.sum())
    L = int(np.prod(args.extent))
    print(f"# news20_full: {X.shape[0]} documents x {X.shape[1]} words; grid "
          f"{tuple(args.extent)} (L = {L}), window {tuple(args.window)}, {args.n_iter} EM "
          f"iterations, float32")
    print(f"{'posterior_top_k':>15s} {'fit s':>8s} {'speed-up':>9s} {'loglik/token':>13s} "
          f"{'difference':>11s}")
    base = None
    for k in [None] + list(args.k):
        model = countgrid.CountingGrid(tuple(args.extent), tuple(args.window),
                                       n_iter=args.n_iter, tol=0, dtype=np.float32,
                                       random_state=0, num_threads=args.threads,
                                       posterior_top_k=k)
        tic = time.perf_counter()
        model.fit(X)
        seconds = time.perf_counter() - tic
        ll = model.log_likelihood_[-1] / tokens
        if base is None:
            base = (seconds, ll)
        print(f"{'all (' + str(L) + ')' if k is None else k:>15} {seconds:8.1f} "
              f"{base[0] / seconds:8.2f}x {ll:13.4f} {ll - base[1]:+11.4f}", flush=True)


if __name__ == "__main__":
    main()
