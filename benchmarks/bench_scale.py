"""Counting grids at scale (issue 14): one EM pass over a million short documents, in
memory, out of core, online and on a dask LocalCluster with 1 and 2 workers.

The corpus is drawn from a true 64x64 counting grid (window 5x5) over 20,000 words with a
Zipf background: ~50 tokens per document, written once as a memory-mapped CSR folder
(countgrid.streaming.write_memmap_csr) in chunks of 100,000 documents.  Each mode runs in
its own process, so that its peak resident memory (VmHWM, benchmarks/_peak_memory.py;
plus the workers' for dask) is its own.  A pass is what one EM iteration costs: window
histograms, the E-step with its statistics over every document, and the M-step (float32).

    python benchmarks/bench_scale.py                       # 1M docs, all modes (~30 min)
    python benchmarks/bench_scale.py --docs 100000 --modes memory ooc
    python benchmarks/bench_scale.py --top-k 64            # sparse posteriors
    python benchmarks/bench_scale.py --estep coarse-to-fine --modes memory ooc

Run it on an otherwise idle machine.  Results: benchmarks/README.md, "Scale".
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _countgrid_import  # noqa: E402,F401
from _peak_memory import peak_rss_mb  # noqa: E402

import countgrid  # noqa: E402

MODES = ("memory", "ooc", "online", "dask1", "dask2")


def true_grid(extent, window, n_words, rng):
    """A smooth random grid (L, Z) float32: sparse cell topics blurred over the window,
    plus a Zipf background."""
    L = int(np.prod(extent))
    base = np.zeros((L, n_words), dtype=np.float32)
    for c in range(L):
        words = rng.choice(n_words, size=30, replace=False)
        base[c, words] = rng.dirichlet(np.full(30, 0.5))
    grid = base.reshape(tuple(extent) + (n_words,))
    blurred = np.zeros_like(grid)
    for dx in range(window[0]):
        for dy in range(window[1]):
            blurred += np.roll(grid, (dx, dy), axis=(0, 1))
    del grid, base
    pi = blurred.reshape(L, n_words)
    zipf = 1.0 / np.arange(1, n_words + 1, dtype=np.float64)
    zipf = (zipf / zipf.sum())[rng.permutation(n_words)].astype(np.float32)
    pi /= pi.sum(axis=1, keepdims=True)
    pi *= 0.7
    pi += 0.3 * zipf
    pi /= pi.sum(axis=1, keepdims=True)
    return pi


def sample_chunk(pi, extent, window, n_docs, length, rng):
    """n_docs documents of ~length tokens from the grid's windows, as CSR float32."""
    import scipy.sparse as sp
    L, Z = pi.shape
    lengths = rng.poisson(length, size=n_docs)
    doc = np.repeat(np.arange(n_docs), lengths)
    corner = rng.integers(0, L, size=n_docs)[doc]
    ox = rng.integers(0, window[0], size=doc.size)
    oy = rng.integers(0, window[1], size=doc.size)
    cx, cy = np.divmod(corner, extent[1])
    cell = ((cx + ox) % extent[0]) * extent[1] + (cy + oy) % extent[1]
    order = np.argsort(cell, kind="stable")
    cell_sorted = cell[order]
    words = np.empty(doc.size, dtype=np.int64)
    bounds = np.searchsorted(cell_sorted, np.arange(L + 1))
    cdf = np.empty(Z)
    for c in range(L):
        a, b = bounds[c], bounds[c + 1]
        if a == b:
            continue
        np.cumsum(pi[c], out=cdf)
        draw = np.searchsorted(cdf, rng.random(b - a) * cdf[-1])
        words[order[a:b]] = np.minimum(draw, Z - 1)
    X = sp.csr_matrix((np.ones(doc.size, dtype=np.float32), (doc, words)),
                      shape=(n_docs, Z))
    X.sum_duplicates()
    return X


def make_corpus(directory, args):
    from countgrid.streaming import CSRChunks, MemmapCSR, write_memmap_csr
    if os.path.exists(os.path.join(directory, "csr.json")):
        source = MemmapCSR(directory)
        if source.shape == (args.docs, args.words):
            return source
    rng = np.random.default_rng(args.seed)
    tic = time.perf_counter()
    pi = true_grid(args.extent, args.window, args.words, rng)
    step = 100_000

    def chunks():
        r = np.random.default_rng(args.seed + 1)
        for d0 in range(0, args.docs, step):
            yield sample_chunk(pi, args.extent, args.window, min(step, args.docs - d0),
                               args.length, r)
    source = write_memmap_csr(CSRChunks(chunks), directory, rows_per_chunk=step)
    print(f"# corpus: {args.docs} documents x {args.words} words, "
          f"{source._nnz} non-zeros, written in {time.perf_counter() - tic:.0f} s "
          f"to {directory}", flush=True)
    return source


def one_pass(estep_all, grid, pi, extent, window, rho, floor, nt, search=None):
    """Histograms + E-step with statistics + M-step; returns (seconds, log-likelihood).
    ``search``: the coarse-to-fine E-step's settings (countgrid.grid._em.EStepSearch)."""
    from countgrid.grid import _wrappers
    from countgrid.grid._em import GridStatistics, m_step
    tic = time.perf_counter()
    h, logh = np.empty_like(pi), np.empty_like(pi)
    _wrappers.histograms(pi, extent, window, h, logh, nt)
    stats = GridStatistics(pi.shape[0], pi.shape[1], pi.dtype, False)
    loglik = estep_all(logh, None, floor, stats, search)
    m_step(stats, h, pi, extent, window, rho, nt)
    return time.perf_counter() - tic, loglik


def run_mode(mode, args):
    """One mode in this process: prints a JSON line."""
    from functools import partial

    from countgrid.streaming._blocks import Blocks
    from countgrid.grid._em import block_counts, distributed_estep, grid_counts, local_estep
    from countgrid.streaming import MemmapCSR
    extent, window = tuple(args.extent), tuple(args.window)
    dtype = np.dtype(np.float32)
    nt = os.cpu_count() if args.threads is None else args.threads
    source = MemmapCSR(args.dir, rows_per_chunk=args.chunk)
    cg = countgrid.CountingGrid(extent, window, dtype=dtype, random_state=0,
                                posterior_top_k=args.top_k)
    L, Z = int(np.prod(extent)), source.n_features
    pi = cg._initial_pi(None, extent, Z, dtype, np.random.default_rng(0))
    floor = 1.0 / (1e7 * L)
    out = {"mode": mode}
    search = None
    if args.estep == "coarse-to-fine":
        cg.set_params(estep="coarse-to-fine")
        search, _ = cg._estep_search(extent)

    def make(M, name, nf):
        return grid_counts(M, dtype, n_features=nf, name=name)
    tic = time.perf_counter()
    if mode == "online":
        cg.set_params(learning_method="online", total_samples=source.shape[0],
                      num_threads=nt)
        cg.partial_fit(source)
        out["seconds"] = time.perf_counter() - tic
        out["loglik"] = float(cg.log_likelihood_[-1])
        out["batch_size"] = cg._batch_size(Blocks(source, make))
        out["setup"] = 0.0
    elif mode in ("memory", "ooc"):
        if mode == "memory":
            import scipy.sparse as sp
            X = sp.vstack(list(source.chunks()), format="csr")
            data = Blocks(X, make)
            del X
        else:
            data = Blocks(source, make)
        rho = data.mean_length / (2.5 * L)
        out["setup"] = time.perf_counter() - tic
        estep = local_estep(data, nt, args.top_k)
        out["seconds"], out["loglik"] = one_pass(estep, cg, pi, extent, window, rho, floor,
                                                 nt, search)
    else:
        import dask
        import dask.array as da
        from distributed import Client, LocalCluster
        from countgrid.streaming._dask import DaskBlocks
        workers = int(mode[-1])
        with LocalCluster(n_workers=workers, threads_per_worker=nt // workers,
                          processes=True, dashboard_address=None,
                          memory_limit=None) as cluster, Client(cluster) as client:
            n = source.shape[0]
            parts = []
            for r0 in range(0, n, args.chunk):
                rows = min(args.chunk, n - r0)
                blk = dask.delayed(_read_rows)(args.dir, r0, rows)
                parts.append(da.from_delayed(blk, shape=(rows, Z), dtype=np.float32,
                                             meta=_csr_meta()))
            X = da.concatenate(parts, axis=0)
            data = DaskBlocks(X, partial(block_counts, dtype=dtype), 1)
            rho = data.mean_length / (2.5 * L)
            out["setup"] = time.perf_counter() - tic
            estep = distributed_estep(data, False, args.top_k)
            out["seconds"], out["loglik"] = one_pass(estep, cg, pi, extent, window, rho,
                                                     floor, nt, search)
            out["worker_peak_rss_mb"] = [v / 1024.0 for v in client.run(
                lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss).values()]
    out["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(out), flush=True)


def _csr_meta():
    import scipy.sparse as sp
    return sp.csr_matrix((0, 0), dtype=np.float32)


def _read_rows(directory, r0, rows):
    """Rows [r0, r0 + rows) of the folder (r0 a multiple of rows): one chunk of it."""
    import itertools
    from countgrid.streaming import MemmapCSR
    source = MemmapCSR(directory, rows_per_chunk=rows)
    return next(itertools.islice(source.chunks(), r0 // rows, None))


def corpus_arguments(ap):
    """The synthetic corpus's options (this benchmark's and bench_converged.py's)."""
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--words", type=int, default=20_000)
    ap.add_argument("--length", type=int, default=50)
    ap.add_argument("--extent", type=int, nargs=2, default=[64, 64])
    ap.add_argument("--window", type=int, nargs=2, default=[5, 5])
    ap.add_argument("--chunk", type=int, default=100_000, help="rows per chunk / dask block")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--dir", default=None, help="corpus folder (kept; default: temporary)")
    ap.add_argument("--seed", type=int, default=0)


def print_machine():
    """The CPU, the load and show_config(): the header of every result."""
    from run_all import cpu_model
    print(f"# CPU: {cpu_model()}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f}, {time.strftime('%Y-%m-%d %H:%M')}")
    countgrid.show_config()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    corpus_arguments(ap)
    ap.add_argument("--top-k", type=int, default=None, help="sparse posteriors (top k)")
    ap.add_argument("--estep", choices=("exact", "coarse-to-fine"), default="exact",
                    help="the E-step of the pass (coarse-to-fine: CountingGrid's defaults "
                         "of estep_params, batch modes)")
    ap.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    ap.add_argument("--run", choices=MODES, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.run:
        return run_mode(args.run, args)
    print_machine()
    tmp = None
    if args.dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="countgrid-scale-")
        args.dir = tmp.name
    make_corpus(args.dir, args)
    print(f"# {args.docs} docs, {args.words} words, grid {args.extent} window {args.window}, "
          f"float32, chunks of {args.chunk}, top_k {args.top_k}, E-step {args.estep}")
    print(f"{'mode':8s} {'setup s':>8s} {'pass s':>8s} {'loglik/doc':>11s} "
          f"{'peak RSS MB':>12s}  workers' peak RSS MB")
    base = [sys.executable, os.path.abspath(__file__), "--dir", args.dir, "--docs",
            str(args.docs), "--words", str(args.words), "--chunk", str(args.chunk),
            "--extent", *map(str, args.extent), "--window", *map(str, args.window)]
    if args.threads:
        base += ["--threads", str(args.threads)]
    if args.top_k:
        base += ["--top-k", str(args.top_k)]
    base += ["--estep", args.estep]
    for mode in args.modes:
        proc = subprocess.run(base + ["--run", mode], capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{mode:8s} failed:\n{proc.stderr[-2000:]}")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        workers = " ".join(f"{v:.0f}" for v in r.get("worker_peak_rss_mb", []))
        print(f"{mode:8s} {r['setup']:8.1f} {r['seconds']:8.1f} "
              f"{r['loglik'] / args.docs:11.3f} {r['peak_rss_mb']:12.0f}  {workers}",
              flush=True)
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
