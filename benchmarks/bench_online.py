"""Batch against online EM (issue 14): the log-likelihood a counting grid reaches per second
of training on news20_full (18,821 posts, the 20,000 most frequent words, float32).

Batch EM: ``CountingGrid.fit`` with ``tol=0``; the exact log-likelihood of the training
documents after every iteration comes from the fit's progress events.  Online EM:
``partial_fit`` passes with the default ``batch_size="auto"`` and step schedule; after
each pass the exact log-likelihood of all documents is computed (``score``, not counted
in the training time).  Both start from the same random grid.

    python benchmarks/bench_online.py [--seconds 120] [--extent 32 32] [--window 5 5]
"""
import argparse
import os
import sys
import time

import numpy as np
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _countgrid_import  # noqa: E402,F401

import countgrid  # noqa: E402
from countgrid._utils import progress as _progress  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(HERE), "data"))
from repo_data import data_path  # noqa: E402  (data/repo_data.py)


def load(n_words):
    z = np.load(data_path("news20_full.npz"), allow_pickle=False)
    X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
    keep = np.argsort(-np.asarray(X.sum(axis=0)).ravel(), kind="stable")[:n_words]
    X = X[:, np.sort(keep)].astype(np.float32)
    return X[np.asarray(X.sum(axis=1)).ravel() > 0]


def batch_curve(X, kw, seconds):
    curve, tic = [], [None]

    def on_event(event):
        if event["value"] is not None and event["owner"] == "CountingGrid":
            curve.append((time.perf_counter() - tic[0], event["value"]))
    n_iter = 1000
    model = countgrid.CountingGrid(**kw, n_iter=n_iter, tol=0)
    # stop the fit from its progress events once the time budget is spent
    class Budget(Exception):
        pass

    def guarded(event):
        on_event(event)
        if curve and curve[-1][0] > seconds:
            raise Budget
    tic[0] = time.perf_counter()
    try:
        with _progress.listen(guarded):
            model.fit(X)
    except Budget:
        pass
    return curve


def online_curve(X, kw, seconds):
    model = countgrid.CountingGrid(**kw, total_samples=X.shape[0])
    curve, spent = [], 0.0
    while spent < seconds:
        tic = time.perf_counter()
        model.partial_fit(X)
        spent += time.perf_counter() - tic
        curve.append((spent, model.score(X)))
    return curve, model._batch_size(type("D", (), {
        "n_nonzero": X.nnz, "n_samples": X.shape[0], "n_features": X.shape[1]})())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--words", type=int, default=20_000)
    ap.add_argument("--extent", type=int, nargs=2, default=[32, 32])
    ap.add_argument("--window", type=int, nargs=2, default=[5, 5])
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args(argv)
    from run_all import cpu_model
    print(f"# CPU: {cpu_model()}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f}, {time.strftime('%Y-%m-%d %H:%M')}")
    countgrid.show_config()
    X = load(args.words)
    tokens = float(X.sum())
    print(f"# news20_full: {X.shape[0]} documents x {X.shape[1]} words, {tokens:.0f} tokens; "
          f"grid {tuple(args.extent)}, window {tuple(args.window)}, float32")
    kw = dict(extent=tuple(args.extent), window=tuple(args.window), dtype=np.float32,
              random_state=0, num_threads=args.threads)
    batch = batch_curve(X, kw, args.seconds)
    online, batch_size = online_curve(X, kw, args.seconds)
    print(f"# online: batch_size={batch_size} ({int(np.ceil(X.shape[0] / batch_size))} "
          f"minibatches per pass)")
    print(f"{'seconds':>8s} {'batch EM':>12s} {'online EM':>12s}   (log-likelihood per token "
          f"reached within the time)")
    for budget in (5, 10, 20, 30, 60, 90, 120, 180, 240):
        if budget > args.seconds * 1.05:
            break
        best = [max((v for t, v in c if t <= budget), default=None) for c in (batch, online)]
        cells = [f"{b / tokens:12.4f}" if b is not None else f"{'-':>12s}" for b in best]
        print(f"{budget:8d} {cells[0]} {cells[1]}")
    print(f"# batch: {len(batch)} iterations in {batch[-1][0]:.1f} s; online: {len(online)} "
          f"passes in {online[-1][0]:.1f} s")


if __name__ == "__main__":
    main()
