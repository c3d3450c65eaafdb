"""Gram matrices of the information-theoretic kernels vs SciPy, in the same run.

    python benchmarks/bench_itkernels.py [--n 2000] [--dim 100] [--repeat 3]

Peer: ``scipy.spatial.distance.cdist(A, A, metric="jensenshannon")`` turned into the
kernel ``ln 2 - JS = ln 2 - d^2``.  Prints seconds (median), the ratio, the largest
difference from SciPy and the NaNs SciPy returns (it takes a square root of a
rounding-negative divergence for near-identical rows); then countgrid alone for a
few q, float32 and sparse input.
"""
import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np
import scipy
import scipy.sparse as sp
from scipy.spatial.distance import cdist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _countgrid_import import countgrid  # noqa: E402
from countgrid.kernels import jensen_shannon_kernel, jensen_tsallis_kernel  # noqa: E402


def timed(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    A = rng.random((args.n, args.dim))
    A /= A.sum(axis=1, keepdims=True)
    A[1] = A[0]  # an identical pair: SciPy's known NaN case
    print(f"countgrid {countgrid.__version__}, scipy {scipy.__version__}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"{args.n} x {args.n} Gram matrix, dimension {args.dim}, median of {args.repeat}\n")

    t_scipy, D = timed(lambda: cdist(A, A, metric="jensenshannon"), args.repeat)
    t_cg, K = timed(lambda: jensen_shannon_kernel(A), args.repeat)
    ref = np.log(2) - D ** 2
    ok = np.isfinite(ref)
    print("| kernel | countgrid s | scipy s | ratio | max abs diff | scipy NaNs |")
    print("|---|---|---|---|---|---|")
    print(f"| Jensen-Shannon, float64 | {t_cg:.3f} | {t_scipy:.3f} | {t_scipy / t_cg:.1f}x | "
          f"{np.abs(K[ok] - ref[ok]).max():.1e} | {int((~ok).sum())} |")
    rows = []
    for label, fn in [
        ("Jensen-Shannon, float32", lambda: jensen_shannon_kernel(A.astype(np.float32))),
        ("Jensen-Tsallis q=0.5", lambda: jensen_tsallis_kernel(A, q=0.5)),
        ("Jensen-Tsallis q=1.5", lambda: jensen_tsallis_kernel(A, q=1.5)),
        ("Jensen-Tsallis q=1.5, weighted B", lambda: jensen_tsallis_kernel(A, q=1.5, weighted="B")),
        ("Jensen-Shannon, 1 thread", lambda: jensen_shannon_kernel(A, num_threads=1)),
    ]:
        t, _ = timed(fn, args.repeat)
        rows.append((label, t))
    S = A.copy()
    S[rng.random(S.shape) < 0.9] = 0.0
    S = sp.csr_matrix(S)
    t, _ = timed(lambda: jensen_shannon_kernel(S), args.repeat)
    rows.append((f"Jensen-Shannon, CSR with {S.nnz / args.n:.0f} non-zeros per row", t))
    print("\n| countgrid kernel | s |")
    print("|---|---|")
    for label, t in rows:
        print(f"| {label} | {t:.3f} |")


if __name__ == "__main__":
    main()
