"""Seconds per training epoch of countgrid.RAP (CD-1) vs scikit-learn's BernoulliRBM.

Both learn on the same documents of the 20 Newsgroups training split, with the
same number of hidden units and minibatch size, in the same run: RAP on the
counts (Poisson visible units), BernoulliRBM on the binarised counts.  Also
times ``RAP.transform`` of 100,000 documents (training documents repeated).

    python benchmarks/bench_rap.py            # a few minutes here
    python benchmarks/bench_rap.py --n-docs 5000 --n-words 5000

Data: ``data/news20_full.npz`` of the repository, or the directory in the
environment variable COUNTGRID_DATA_DIR.
"""
import argparse
import os
import sys
import time

import numpy as np
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "data"))

from _countgrid_import import countgrid, effective_n_threads  # noqa: E402
from repo_data import data_path  # noqa: E402  (data/repo_data.py)


def load_train(n_docs, n_words):
    path = data_path("news20_full.npz")
    X = sp.load_npz(path).tocsr()
    split = np.load(path, allow_pickle=False)["split"]
    X = X[split == 0]
    if n_docs:
        X = X[:n_docs]
    df = np.bincount(X.indices, minlength=X.shape[1])
    keep = np.sort(np.argsort(-df, kind="stable")[:n_words])
    X = X[:, keep].tocsr().astype(np.float64)
    X.sort_indices()
    return X


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), times


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-docs", type=int, default=0, help="training documents (0 = all 11,293)")
    ap.add_argument("--n-words", type=int, default=10000)
    ap.add_argument("--n-hidden", type=int, default=100)
    ap.add_argument("--batch-size", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    ap.add_argument("--rbm-default-batch", action="store_true",
                    help="also time BernoulliRBM with its default batch size 10 (slow)")
    args = ap.parse_args()

    from sklearn.neural_network import BernoulliRBM
    from threadpoolctl import threadpool_limits

    X = load_train(args.n_docs, args.n_words)
    Xb = X.copy()
    Xb.data[:] = 1.0
    nt = effective_n_threads(args.threads)
    dtype = np.dtype(args.dtype).type
    print(f"documents {X.shape[0]}, words {X.shape[1]}, nnz {X.nnz}, hidden {args.n_hidden}, "
          f"batch {args.batch_size}, threads {nt}, dtype {args.dtype}, "
          f"OpenMP {countgrid._kernels.openmp_enabled()}")

    def rap_epoch():
        countgrid.RAP(n_components=args.n_hidden, batch_size=args.batch_size, n_epochs=1,
                      dtype=dtype, num_threads=nt, random_state=0).fit(X)

    def rbm_epoch():
        with threadpool_limits(limits=nt, user_api="blas"):
            BernoulliRBM(n_components=args.n_hidden, batch_size=args.batch_size, n_iter=1,
                         random_state=0).fit(Xb)

    def rbm_epoch_default_batch():
        with threadpool_limits(limits=nt, user_api="blas"):
            BernoulliRBM(n_components=args.n_hidden, n_iter=1, random_state=0).fit(Xb)

    rows = []
    t_rap, s_rap = best_of(rap_epoch, args.repeat)
    t_rbm, s_rbm = best_of(rbm_epoch, args.repeat)
    rows.append(("RAP CD-1 epoch (counts)", t_rap, s_rap))
    rows.append((f"BernoulliRBM epoch (binary, batch {args.batch_size})", t_rbm, s_rbm))
    if args.rbm_default_batch:
        t_rbm10, _ = best_of(rbm_epoch_default_batch, 1)
        rows.append(("BernoulliRBM epoch (binary, default batch 10)", t_rbm10, [t_rbm10]))

    model = countgrid.RAP(n_components=args.n_hidden, n_epochs=1, dtype=dtype, num_threads=nt,
                          random_state=0).fit(X)
    reps = int(np.ceil(100000 / X.shape[0]))
    Xbig = sp.vstack([X] * reps).tocsr()[:100000]
    model.transform(Xbig[:1000])
    t_tr, s_tr = best_of(lambda: model.transform(Xbig), args.repeat)
    rows.append((f"RAP transform of {Xbig.shape[0]} documents", t_tr, s_tr))

    print(f"\n{'what':<48} {'best s':>8}   all runs")
    for name, t, s in rows:
        print(f"{name:<48} {t:8.3f}   {', '.join(f'{v:.3f}' for v in s)}")
    print(f"\nratio RAP / BernoulliRBM (same batch size): {t_rap / t_rbm:.2f}")
    if args.rbm_default_batch:
        print(f"ratio RAP / BernoulliRBM (its default batch): {t_rap / t_rbm10:.2f}")


if __name__ == "__main__":
    main()
