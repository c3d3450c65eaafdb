"""scATAC-shaped counts out of core (issue 28, "Scale"): pLSA and a counting grid fitted
from a folder on disk holding a synthetic binary matrix of 200,000 cells x 200,000
regions at 2 % density -- 800 million non-zeros, the shape at which topic models of
chromatin accessibility run for days or out of memory.

The matrix is drawn from 20 cell types, each with 8,000 regions of its own (random among
all; types may share regions): every cell opens about 4,000 regions (log-normal depth,
sd 0.3 on the log scale), half of them from its type's set and half anywhere, kept binary.
It is written once, chunk by chunk, as a countgrid.streaming.MemmapCSR folder (int64
indices, uint8 values: 7.2 GB) with the true types beside it.  Each model then runs in a
process of its own (its peak memory is its own): ``fit(MemmapCSR(folder))`` reads the
folder once to count and once per EM pass, ``--chunk`` rows at a time.

Reported per model: the fit's wall time, the seconds of each EM iteration (from the
estimator's verbose lines: a pass over the folder with the E-step, statistics and M-step),
the process's peak resident memory (VmHWM: its own pages and the file pages it touched)
and its peak anonymous memory (RssAnon sampled every 0.1 s: what the process holds; file
pages are the operating system's cache), and how well the cells' types are recovered
(pLSA: normalised mutual information of the most probable topic; the grid: of the cells
grouped by their MAP position into as many blocks of the grid as there are types).

    python benchmarks/bench_scatac.py                          # 200k x 200k (~25 min)
    python benchmarks/bench_scatac.py --cells 20000 --regions 20000 --dir /tmp/small
    python benchmarks/bench_scatac.py --models plsa --dir /data/scatac   # reuse a folder

Run it on an otherwise idle machine.  Results: benchmarks/README.md, "scATAC shape".
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _countgrid_import  # noqa: E402,F401
from _peak_memory import peak_rss_mb  # noqa: E402

import countgrid  # noqa: E402

TYPES, TYPE_REGIONS = 20, 8_000


def sample_chunk(type_sets, n_rows, n_regions, density, rng):
    """``n_rows`` binary cells (CSR, uint8) and their types."""
    import scipy.sparse as sp
    types = rng.integers(0, len(type_sets), n_rows)
    depth = np.maximum(1, np.round(density * n_regions
                                   * rng.lognormal(-0.045, 0.3, n_rows))).astype(np.int64)
    own = rng.binomial(depth, 0.5)
    # draws with replacement from a type's S regions that leave `own` distinct ones on
    # average: S (1 - exp(-k / S)) = own
    S = type_sets.shape[1]
    own_draws = np.ceil(-S * np.log1p(-np.minimum(own, S - 1) / S)).astype(np.int64)
    draws = own_draws + depth - own
    rows = np.repeat(np.arange(n_rows), draws)
    start = np.concatenate([[0], np.cumsum(draws)[:-1]])
    # the first draws of each cell come from its type's regions, the rest anywhere
    in_row = np.arange(rows.size) - np.repeat(start, draws)
    from_type = in_row < np.repeat(own_draws, draws)
    cols = rng.integers(0, n_regions, rows.size)
    picks = rng.integers(0, type_sets.shape[1], int(from_type.sum()))
    cols[from_type] = type_sets[types[rows[from_type]], picks]
    X = sp.csr_matrix((np.ones(rows.size, dtype=np.uint8), (rows, cols)),
                      shape=(n_rows, n_regions))
    X.sum_duplicates()
    X.data[:] = 1
    return X, types


def make_corpus(args):
    from countgrid.streaming import CSRChunks, MemmapCSR, write_memmap_csr
    meta = os.path.join(args.dir, "bench_scatac.json")
    wanted = dict(cells=args.cells, regions=args.regions, density=args.density,
                  seed=args.seed)
    if os.path.exists(meta):
        with open(meta) as fh:
            if json.load(fh) == wanted:
                return MemmapCSR(args.dir), np.load(os.path.join(args.dir, "types.npy"))
    tic = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    type_sets = np.stack([rng.choice(args.regions, min(TYPE_REGIONS, args.regions),
                                     replace=False) for _ in range(TYPES)])
    step, types = 10_000, []

    def chunks():
        r = np.random.default_rng(args.seed + 1)
        types.clear()
        for c0 in range(0, args.cells, step):
            X, t = sample_chunk(type_sets, min(step, args.cells - c0), args.regions,
                                args.density, r)
            types.append(t)
            yield X

    source = write_memmap_csr(CSRChunks(chunks), args.dir, rows_per_chunk=step)
    types = np.concatenate(types)
    np.save(os.path.join(args.dir, "types.npy"), types)
    with open(meta, "w") as fh:
        json.dump(wanted, fh)
    size = sum(os.path.getsize(os.path.join(args.dir, f))
               for f in ("indptr.bin", "indices.bin", "data.bin"))
    print(f"# corpus: {args.cells} cells x {args.regions} regions, {source._nnz} non-zeros "
          f"(density {source._nnz / args.cells / args.regions:.4f}), {size / 1e9:.2f} GB, "
          f"written in {time.perf_counter() - tic:.0f} s to {args.dir}", flush=True)
    return source, types


class AnonymousPeak:
    """The largest RssAnon of this process, sampled every 0.1 s in a thread."""

    def __init__(self):
        self.peak, self._stop = 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(0.1):
            with open("/proc/self/status") as fh:
                for line in fh:
                    if line.startswith("RssAnon:"):
                        self.peak = max(self.peak, int(line.split()[1]) / 1024.0)

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.peak


def nmi(a, b):
    """Normalised mutual information (arithmetic mean of the entropies) of two labelings."""
    _, a = np.unique(a, return_inverse=True)
    _, b = np.unique(b, return_inverse=True)
    joint = np.zeros((a.max() + 1, b.max() + 1))
    np.add.at(joint, (a, b), 1)
    p = joint / joint.sum()
    pa, pb = p.sum(axis=1), p.sum(axis=0)
    nz = p > 0
    mi = (p[nz] * np.log(p[nz] / np.outer(pa, pb)[nz])).sum()
    h = lambda q: -(q[q > 0] * np.log(q[q > 0])).sum()  # noqa: E731
    return float(mi / ((h(pa) + h(pb)) / 2))


ITER = re.compile(r"iteration\s+(\d+).*\(([\d.]+) s\)")


def worker(args):
    """Fit one model from the folder; print one JSON line."""
    import contextlib
    import io
    import warnings

    from countgrid.streaming import MemmapCSR
    source = MemmapCSR(args.dir, rows_per_chunk=args.chunk)
    types = np.load(os.path.join(args.dir, "types.npy"))
    n_iter = args.plsa_iter if args.worker == "plsa" else args.grid_iter
    common = dict(n_iter=n_iter, tol=0, dtype=np.float32, num_threads=args.threads,
                  random_state=0, verbose=1)
    if args.worker == "plsa":
        est = countgrid.PLSA(args.topics, **common)
    else:
        est = countgrid.CountingGrid(tuple(args.extent), tuple(args.window),
                                     posterior_top_k=args.top_k, **common)
    anon = AnonymousPeak()
    log = io.StringIO()
    tic = time.perf_counter()
    with warnings.catch_warnings(), contextlib.redirect_stdout(log):
        warnings.simplefilter("ignore")
        est.fit(source)
    seconds = time.perf_counter() - tic
    iters = [float(m.group(2)) for m in ITER.finditer(log.getvalue())
             if int(m.group(1)) > 0]
    out = dict(model=args.worker, fit_s=seconds, iteration_s=iters,
               peak_rss_mb=peak_rss_mb(), peak_anon_mb=anon.stop())
    tic = time.perf_counter()
    if args.worker == "plsa":
        found = np.asarray(est.doc_topic_).argmax(axis=1)
        out["loglik_per_token"] = float(est.log_likelihood_[-1]) / source._nnz
    else:
        pos = np.concatenate([est.positions(X, anchor="center") for X in source.chunks()])
        side = int(np.ceil(np.sqrt(TYPES)))
        blocks = (np.asarray(est.pi_.shape[:2]) + side - 1) // side
        found = (pos[:, 0] // blocks[0]) * side + pos[:, 1] // blocks[1]
        out["loglik_per_token"] = float(np.ravel(est.log_likelihood_)[-1]) / source._nnz
    out["readout_s"] = time.perf_counter() - tic
    out["nmi"] = nmi(types, found)
    print(json.dumps(out), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cells", type=int, default=200_000)
    ap.add_argument("--regions", type=int, default=200_000)
    ap.add_argument("--density", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--models", nargs="+", choices=("plsa", "grid"), default=["plsa", "grid"])
    ap.add_argument("--plsa-iter", type=int, default=10, help="pLSA's EM iterations (10)")
    ap.add_argument("--grid-iter", type=int, default=3, help="the grid's EM iterations (3)")
    ap.add_argument("--topics", type=int, default=TYPES)
    ap.add_argument("--extent", type=int, nargs=2, default=(32, 32))
    ap.add_argument("--window", type=int, nargs=2, default=(4, 4))
    ap.add_argument("--top-k", type=int, default=64, help="the grid's posterior_top_k")
    ap.add_argument("--chunk", type=int, default=10_000, help="rows per chunk read")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--dir", default=None, help="corpus folder (kept; default: temporary)")
    ap.add_argument("--worker", choices=("plsa", "grid"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    keep = args.dir is not None
    args.dir = args.dir or tempfile.mkdtemp(prefix="countgrid-scatac-")
    from run_all import cpu_model
    print(f"# countgrid {countgrid.__version__}, {time.strftime('%Y-%m-%d %H:%M')}, "
          f"{cpu_model()}, {os.cpu_count()} CPUs, "
          f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB")
    countgrid.show_config()
    try:
        source, _ = make_corpus(args)
        print(f"# {args.cells} cells x {args.regions} regions, {source._nnz} non-zeros; "
              f"EM iterations: pLSA {args.plsa_iter}, grid {args.grid_iter}; float32, "
              f"chunks of {args.chunk} rows; "
              f"grid {args.extent[0]}x{args.extent[1]} window {args.window[0]}x"
              f"{args.window[1]} top-k {args.top_k}; pLSA {args.topics} topics", flush=True)
        print("model  fit s  s/iteration  peak RSS MB  peak anon MB  NMI(types)  "
              "loglik/token", flush=True)
        for model in args.models:
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", model]
            for name in ("cells", "regions", "density", "seed", "plsa_iter", "grid_iter",
                         "topics", "top_k", "chunk", "dir"):
                cmd += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
            cmd += ["--extent", *map(str, args.extent), "--window", *map(str, args.window)]
            if args.threads is not None:
                cmd += ["--threads", str(args.threads)]
            run = subprocess.run(cmd, capture_output=True, text=True)
            if run.returncode:
                print(f"{model}: failed\n{run.stderr[-2000:]}", flush=True)
                continue
            r = json.loads(run.stdout.strip().splitlines()[-1])
            per = np.median(r["iteration_s"]) if r["iteration_s"] else float("nan")
            print(f"{model:5s} {r['fit_s']:6.0f}  {per:11.1f}  {r['peak_rss_mb']:11.0f}  "
                  f"{r['peak_anon_mb']:12.0f}  {r['nmi']:10.3f}  "
                  f"{r['loglik_per_token']:12.4f}   (iterations {r['iteration_s']}; "
                  f"read-out {r['readout_s']:.0f} s)", flush=True)
    finally:
        if not keep:
            shutil.rmtree(args.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
