"""Time to a converged map (issue 29): the whole fit of bench_scale.py's synthetic corpus
(a true 64x64 counting grid, window 5x5, 20,000 words, ~50 tokens a document) to the
default convergence rule, several ways next to each other in one run (``--fits``): the
exact E-step (also in float64, "exact-float64", not run by default: what rounding alone
does to the positions measure), ``estep="coarse-to-fine"``, that with
``accelerate=True`` ("accelerated"),
that with ``subsample`` too ("progressive", ``--subsample``, default "auto"), and that
with tracking too ("tracked", ``estep_params={"track": True}``).

Everything else is CountingGrid's defaults (window schedule, tol 1e-5 after min_iter 30,
float32, every CPU); the corpus is read out of core from a memory-mapped CSR folder.
Reported for each fit: fit time, EM iterations, those over all documents, seconds per
iteration, the positions scored and the documents scanned in full by the search; and the
quality guards of issue 29: held-out log-likelihood per token (10,000 new documents from
the true grid, exact scoring), the share of training documents (a sample of 20,000) whose
most probable window is the exact fit's, and within one cell of it on the torus, after
aligning the fit onto the exact one (countgrid.grid.align: another path may end at a
symmetry of the torus).

    python benchmarks/bench_converged.py                  # 1M documents, every fit (~3 h)
    python benchmarks/bench_converged.py --docs 1000000 --fits tracked   # ~8 min
    python benchmarks/bench_converged.py --docs 100000 --dir /tmp/c100k
    python benchmarks/bench_converged.py --docs 100000 --fits exact accelerated --stride 3 4

Run it on an otherwise idle machine.  Results: benchmarks/README.md, "Time to a
converged map".
"""
import argparse
import os
import sys
import tempfile
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _countgrid_import  # noqa: E402,F401
from bench_scale import (corpus_arguments, make_corpus, print_machine,  # noqa: E402
                         sample_chunk, true_grid)

import countgrid  # noqa: E402
from countgrid.grid import align  # noqa: E402
from countgrid.grid._counting_grid import fit_state, grid_view  # noqa: E402
from countgrid.grid._stability import _torus_distance  # noqa: E402


#: The fits compared: (E-step, accelerate, progressive, track, dtype).  "exact-float64"
#: is the exact fit in float64: how far rounding alone moves the positions measure.
FITS = {"exact": ("exact", False, False, False, np.float32),
        "exact-float64": ("exact", False, False, False, np.float64),
        "coarse-to-fine": ("coarse-to-fine", False, False, False, np.float32),
        "accelerated": ("coarse-to-fine", True, False, False, np.float32),
        "progressive": ("coarse-to-fine", True, True, False, np.float32),
        "tracked": ("coarse-to-fine", True, True, True, np.float32)}


def subsample_value(text):
    """--subsample as CountingGrid takes it: "auto", an int or a fraction."""
    if text == "auto":
        return text
    return float(text) if "." in text else int(text)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    corpus_arguments(ap)
    ap.add_argument("--fits", nargs="+", default=[f for f in FITS if f != "exact-float64"],
                    choices=list(FITS),
                    help="which fits (default: all; the exact one is the reference)")
    ap.add_argument("--subsample", default="auto",
                    help="subsample of the progressive fits (default: auto)")
    ap.add_argument("--top-k", type=int, default=None,
                    help="posterior_top_k of the coarse-to-fine fit (default: its own)")
    ap.add_argument("--stride", type=int, nargs="+", default=[None],
                    help="the search lattice's strides of the coarse-to-fine fits "
                         "(estep_params['stride']; several: each fit once per stride, "
                         "named fit/sN; default: its own, 3)")
    args = ap.parse_args(argv)
    from countgrid.streaming import MemmapCSR
    print_machine()
    tmp = None
    if args.dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="countgrid-converged-")
        args.dir = tmp.name
    make_corpus(args.dir, args)
    source = MemmapCSR(args.dir, rows_per_chunk=args.chunk)
    extent, window = tuple(args.extent), tuple(args.window)
    # held-out documents from the same true grid (another stream of the generator)
    rng = np.random.default_rng(args.seed)
    pi_true = true_grid(extent, window, args.words, rng)
    held_out = sample_chunk(pi_true, extent, window, 10_000, args.length,
                            np.random.default_rng(args.seed + 2))
    del pi_true
    sample = next(iter(MemmapCSR(args.dir, rows_per_chunk=20_000).chunks()))
    print(f"# {args.docs} documents, {args.words} words, grid {extent} window {window}, "
          f"float32, out of core in chunks of {args.chunk}")
    print(f"{'fit':17s} {'fit s':>8s} {'iters':>6s} {'on all':>6s} {'s/iter':>7s} "
          f"{'scored':>7s} "
          f"{'full':>7s} {'held-out/token':>15s} {'same cell':>10s} {'within 1':>9s}")
    tokens = float(held_out.sum())
    maps = {}
    runs = [(name, stride) for name in args.fits
            for stride in (args.stride if FITS[name][0] != "exact" else [None])]
    for name, stride in runs:
        estep, accelerate, progressive, track, dtype = FITS[name]
        params = ({"track": True} if track else {}) | \
            ({"stride": stride} if stride is not None else {})
        model = countgrid.CountingGrid(
            extent, window, random_state=args.seed, num_threads=args.threads, estep=estep,
            dtype=dtype,
            posterior_top_k=args.top_k if estep != "exact" else None, accelerate=accelerate,
            subsample=subsample_value(args.subsample) if progressive else None,
            estep_params=params or None)
        tic = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", countgrid.ConvergenceWarning)
            model.fit(source)
        seconds = time.perf_counter() - tic
        scored = np.array(model._estep_scored)
        searched = scored[scored[:, 0] < 1.0]
        frac = float(searched[:, 0].mean()) if len(searched) else 1.0
        full = float(searched[:, 1].mean()) if len(searched) else 1.0
        heldout = float(model.score(held_out)) / tokens
        if name == "exact":
            exact = model
        elif "exact" in maps:
            # a fit from another path may be a torus symmetry of the exact one
            model = grid_view(model, align(model, exact).aligned, **fit_state(model))
        maps[name] = np.argmax(model.transform(sample), axis=1)
        same = within = float("nan")
        if "exact" in maps and name != "exact":
            same = float(np.mean(maps[name] == maps["exact"]))
            cells = [np.stack(np.unravel_index(maps[e], extent), axis=1)
                     for e in (name, "exact")]
            within = float(np.mean(_torus_distance(*cells, extent).max(axis=1) <= 1))
        on_all = model.n_iter_ if progressive else len(scored)
        label = name if len(args.stride) == 1 or estep == "exact" else f"{name}/s{stride}"
        maps[label] = maps.pop(name)
        print(f"{label:17s} {seconds:8.1f} {len(scored):6d} {on_all:6d} "
              f"{seconds / len(scored):7.2f} "
              f"{frac:7.3f} {full:7.4f} {heldout:15.4f} {same:10.3f} {within:9.3f}",
              flush=True)
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
