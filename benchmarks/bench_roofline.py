"""Where the counting grid's two big kernels stand against this machine's memory (issue 29,
"the kernels themselves"; docs/scale.md, "The kernels' roofline"):

    python benchmarks/bench_roofline.py            # about a minute
    python benchmarks/bench_roofline.py --quick    # corpus (a), no pool in main memory

The E-step (``cg_grid_estep_csr``) adds, for every stored count ``c_tz``, the row
``c_tz * logh[z, :]`` into document t's row of scores: L multiply-adds, each reading one
entry of a row of logh.  The accumulation (``cg_grid_accumulate_csc``) adds
``c_tz * q[t, :]`` into ``n[z, :]``: L multiply-adds, each reading one entry of a row of q.
Both stream one table row per stored count, so their speed is set by where those rows
live.  Crafted inputs pin that down, measured with the kernels themselves: documents
whose words all come from a pool of P words (the E-step reads the same P rows of logh
over and over: P x L x itemsize bytes in L1, L2, L3 or main memory), and columns whose
documents come from a pool of P documents (the accumulation reads P rows of q).  Each
pool's rate, in multiply-adds per second on all threads, is the kernel's ceiling with
its rows in that level.  Then the benchmark corpus (a) of bench_counting_grid.py and the
news20_full corpus: their rates, how many times a block of 32 documents reuses each logh
row it reads (what blocking documents that share words could save), and the NumPy
dense-BLAS peer's iteration, whose GEMMs run near the machine's peak on 11x the
multiply-adds of the sparse kernels.  The last table bounds the ratio to that peer if
both kernels ran at their L1 ceiling (perfect reuse) with the rest of the iteration as
measured.
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _countgrid_import import countgrid, effective_n_threads  # noqa: E402

import numpy_counting_grid as ncg  # noqa: E402
from bench_counting_grid import load_news20, make_synthetic  # noqa: E402
from bench_rap import best_of  # noqa: E402  (fastest of n calls, all the times)
from run_all import cpu_model  # noqa: E402

#: pool sizes, in bytes of the rows read (this machine: 48 KiB L1d and 2 MiB L2 a core)
LEVELS = (("L1", 16 << 10), ("L2", 1 << 20), ("L3", 64 << 20), ("memory", 1536 << 20))
NNZ_PER_ROW = 100
WORK = 1.5e9            # multiply-adds per timed call


def estep_rate(kernels, em, X, logh, nt, reps):
    """Multiply-adds per second of the E-step over the CSR rows of X, in blocks as the fit."""
    T, L = X.shape[0], logh.shape[1]
    B = em.block_rows(T, L)
    q, ll = np.empty((B, L), logh.dtype), np.empty(T)
    floor = 1.0 / (1e7 * L)

    def run():
        for t0 in range(0, T, B):
            t1 = min(T, t0 + B)
            kernels.estep_csr(X.indptr, X.indices, X.data, t0, t1, logh, None, floor, q,
                              ll[t0:t1], nt)
    s = best_of(run, reps)[0]
    return X.nnz * L / s, s


def accumulate_rate(kernels, C, q, nt, reps):
    """Multiply-adds per second of n = C^T q over the CSC columns of C (rows of q)."""
    n = np.zeros((C.shape[1], q.shape[1]), q.dtype)
    cursor = C.indptr[:-1].copy()

    def run():
        cursor[:] = C.indptr[:-1]
        kernels.accumulate_csc(C.indptr, C.indices, C.data, cursor, 0, C.shape[0], q, n, nt)
    s = best_of(run, reps)[0]
    return C.nnz * q.shape[1] / s, s


def pooled_csr(rng, n_rows, pool, dtype):
    """n_rows rows of NNZ_PER_ROW entries whose columns come from range(pool), sorted."""
    cols = np.sort(rng.integers(0, pool, size=(n_rows, NNZ_PER_ROW)), axis=1)
    indptr = np.arange(0, n_rows * NNZ_PER_ROW + 1, NNZ_PER_ROW, dtype=np.int32)
    data = rng.integers(1, 4, size=n_rows * NNZ_PER_ROW).astype(dtype)
    return sp.csr_matrix((data, cols.ravel().astype(np.int32), indptr),
                         shape=(n_rows, pool))


def ceilings(kernels, em, L, dtype, nt, reps, levels=LEVELS):
    """{level: (E-step rate, accumulation rate)} with the rows read from that level."""
    rng = np.random.default_rng(0)
    item = np.dtype(dtype).itemsize
    out = {}
    for level, size in levels:
        pool = max(1, size // (L * item))
        table = np.full((pool, L), -7.0, dtype=dtype)      # logh rows, or q rows
        n_rows = max(64, int(WORK // (NNZ_PER_ROW * L)))
        X = pooled_csr(rng, n_rows, pool, dtype)
        e, _ = estep_rate(kernels, em, X, table, nt, reps)
        # the accumulation: columns of NNZ_PER_ROW entries among `pool` documents
        C = pooled_csr(rng, n_rows, pool, dtype).T.tocsc()     # pool rows, n_rows columns
        C.sort_indices()
        table /= -7.0 * L                                    # posterior-like values
        a, _ = accumulate_rate(kernels, C, table, nt, reps)
        out[level] = (e, a)
        del table, X, C
    return out


def block_reuse(X, block=32):
    """Stored counts per distinct word in blocks of `block` consecutive documents."""
    nnz = distinct = 0
    for t0 in range(0, X.shape[0], block):
        idx = X.indices[X.indptr[t0]:X.indptr[min(X.shape[0], t0 + block)]]
        nnz += idx.size
        distinct += np.unique(idx).size
    return nnz / max(distinct, 1)


def corpus_rates(kernels, em, X, extent, dtype, nt, reps):
    """E-step and accumulation rates on a corpus, from a seeded grid."""
    L, Z = int(np.prod(extent)), X.shape[1]
    Xd = X.astype(dtype)
    pi = np.ascontiguousarray(ncg.initial_pi(extent, Z, 0, dtype).reshape(L, Z).T)
    logh = np.log(pi / pi.sum(axis=0)).astype(dtype)
    e, e_s = estep_rate(kernels, em, Xd, logh, nt, reps)
    q = np.full((X.shape[0], L), 1.0 / L, dtype)
    C = Xd.tocsc()
    C.sort_indices()
    a, a_s = accumulate_rate(kernels, C, q, nt, reps)
    return e, e_s, a, a_s


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5, help="calls timed per rate (best kept)")
    ap.add_argument("--no-news20", dest="news20", action="store_false")
    ap.add_argument("--quick", action="store_true",
                    help="corpus (a) only, one call a rate, no 1.5 GB pool in main memory")
    args = ap.parse_args(argv)
    levels = LEVELS[:-1] if args.quick else LEVELS
    if args.quick:
        args.news20, args.reps = False, 1
    from countgrid.grid import _em
    from countgrid.grid import _wrappers as kernels
    print(f"# CPU: {cpu_model()}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f}, {time.strftime('%Y-%m-%d %H:%M')}")
    countgrid.show_config()
    nt = effective_n_threads(None)
    G = 1e9
    Xa = make_synthetic()[0]
    corpora = [("(a) synthetic", Xa, (32, 32), (4, 4))]
    if args.news20:
        corpora.append(("news20_full", load_news20()[0], (48, 48), (5, 5)))

    print(f"\nCeilings: multiply-adds per second (G/s), {nt} threads, the rows read from a "
          f"pool of the given size ({NNZ_PER_ROW} entries a row)")
    print("| L | dtype | kernel | " + " | ".join(f"{lv} ({sz >> 10} KiB)" for lv, sz in levels)
          + " |")
    print("|---|---|---|" + "---:|" * len(levels))
    ceil = {}
    for L in sorted({int(np.prod(c[2])) for c in corpora}):
        for dtype in (np.float32, np.float64):
            c = ceilings(kernels, _em, L, dtype, nt, args.reps, levels)
            ceil[L, dtype] = c
            for k, name in enumerate(("E-step", "accumulation")):
                print(f"| {L} | {np.dtype(dtype).name} | {name} | "
                      + " | ".join(f"{c[lv][k] / G:.1f}" for lv, _ in levels) + " |",
                      flush=True)

    print("\nThe corpora: rates (G/s), bytes of table rows read per second (GB/s), the "
          "reuse of a 32-document block (stored counts per distinct word)")
    print("| corpus | dtype | E-step G/s (GB/s) | accumulation G/s (GB/s) | block reuse | "
          "E-step / its L1 ceiling |")
    print("|---|---|---:|---:|---:|---:|")
    rows = {}
    for name, X, extent, window in corpora:
        L = int(np.prod(extent))
        reuse = block_reuse(X)
        for dtype in (np.float32, np.float64):
            item = np.dtype(dtype).itemsize
            e, e_s, a, a_s = corpus_rates(kernels, _em, X, extent, dtype, nt, args.reps)
            rows[name, dtype] = (e_s, a_s)
            print(f"| {name} | {np.dtype(dtype).name} | {e / G:.1f} ({e * item / G:.0f}) | "
                  f"{a / G:.1f} ({a * item / G:.0f}) | {reuse:.2f} | "
                  f"{e / ceil[L, dtype]['L1'][0]:.2f} |", flush=True)

    print("\nCorpus (a) against the NumPy peers (one EM iteration, s; the peers measured "
          "here): countgrid's two kernels as measured and at their L1 ceilings, the rest "
          "of countgrid's iteration (histograms, M-step, overhead) as measured; the bound "
          "is the peer's iteration over countgrid's with both kernels at their L1 ceilings")
    print("| dtype | peer | peer iteration | countgrid iteration | ratio | E-step + "
          "accumulation | the same at L1 ceilings | ratio bound | target |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    extent, window = corpora[0][2], corpora[0][3]
    L = int(np.prod(extent))
    for dtype, target in ((np.float32, "15x"), (np.float64, "8x")):
        peers = {kind: float(np.median(ncg.fit(Xp, extent, window, n_iter=4, dtype=dtype)
                                       ["iter_seconds"][1:-1]))
                 for kind, Xp in (("dense-BLAS", Xa.toarray()), ("sparse", Xa))}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grid = countgrid.CountingGrid(extent, window, n_iter=1, tol=0, min_iter=0,
                                          window_schedule=None, dtype=dtype, random_state=0)
            t1 = best_of(lambda: grid.fit(Xa), 3)[0]
            grid.set_params(n_iter=6)
            t6 = best_of(lambda: grid.fit(Xa), 3)[0]
        ours = (t6 - t1) / 5
        e_s, a_s = rows[corpora[0][0], dtype]
        fma = Xa.nnz * L
        at_ceiling = fma / ceil[L, dtype]["L1"][0] + fma / ceil[L, dtype]["L1"][1]
        D = Xa.toarray().astype(dtype)
        logh = np.full((D.shape[1], L), -7.0, dtype)
        gemm = D.size * L / best_of(lambda: D @ logh, 5)[0]
        print(f"| {np.dtype(dtype).name} | (the dense peer's GEMM C @ log h: "
              f"{gemm / G:.0f} G multiply-adds/s on {D.size * L / Xa.nnz / L:.1f}x the "
              f"sparse kernels' multiply-adds) | | | | | | | |")
        for kind, peer_s in peers.items():
            bound = peer_s / (ours - e_s - a_s + at_ceiling)
            print(f"| {np.dtype(dtype).name} | {kind} | {peer_s:.4f} | {ours:.4f} | "
                  f"{peer_s / ours:.2f}x | {e_s + a_s:.4f} | {at_ceiling:.4f} | {bound:.1f}x | "
                  f"{target} |", flush=True)


if __name__ == "__main__":
    main()
