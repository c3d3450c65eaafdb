"""Seconds per EM iteration of countgrid.CountingGrid vs a plain NumPy/SciPy peer.

One command (from the repository root; PYTHONPATH=src is optional, the script
falls back to ../src):

    PYTHONPATH=src python benchmarks/bench_counting_grid.py            # full run, 3-5 min
    PYTHONPATH=src python benchmarks/bench_counting_grid.py --quick    # corpus (a) only

Corpora
  (a) "synthetic": drawn from a true counting grid, T=2000 documents, Z=1000
      words, exactly 100 tokens per document, E=32x32, W=4x4, seed 0 (see
      make_synthetic for the generator).  CSR.
  (b) "news20_full": data/news20_full.npz, vocabulary pruned to
      the 20,000 words with the largest total count in the corpus (ties at the
      cut broken by column order), documents left empty dropped, E=48x48, W=5x5.

What is timed (wall clock, time.perf_counter; CPU = time.process_time, all threads)
  * countgrid, public API only: CountingGrid(extent, window, n_iter=n, tol=0,
    window_schedule=None, dtype=..., num_threads=None, random_state=seed).fit(X) (the
    target window only, as the NumPy peer; the default schedule's coarse stages since
    0.2 broke the comparison and the verbose-line count until 2026-11-29).  A fit with n_iter=n
    does setup + n x (E-step + accumulation of n = C^T Q + M-step + histograms)
    + one final E-step.  Each trial runs fit(n_iter=1) then fit(n_iter=1+k,
    verbose=1) after one untimed warm-up fit(n_iter=1) (the first fit in a
    process pays about 2 s of one-time page faults on news20_full), and gives
      - per-iteration samples (the "s/iter" column): verbose prints one line per
        iteration right after its E-step; stdout is captured and time-stamped,
        and the interval between consecutive lines is exactly one iteration
        (M-step + histograms + E-step with accumulation); the interval before
        the last line (final E-step, no accumulation) is dropped: k - 1 samples;
      - the fit difference (t(n_iter=1+k) - t(n_iter=1)) / k, one sample, shown
        as a cross-check (it is sensitive to noise in the setup).
    Extra rows on (a): num_threads=1, and num_threads=None with
    OMP_WAIT_POLICY=PASSIVE.
  * NumPy peer (numpy_counting_grid.py): the same unit of work timed inside its
    loop (E-step + accumulation + M-step + histograms), one sample per
    iteration (on (a) one extra first iteration is run and dropped as warm-up); "sparse" = scipy CSR @ dense, "dense-BLAS" = the counts as a dense
    array, both products as GEMMs (OpenBLAS, 2 threads).
  Every (corpus, implementation, dtype) configuration runs in its own
  subprocess ("trial"); the trials of all configurations are interleaved
  round-robin (--repeat rounds on (a), --news20-repeat / --news20-numpy-repeat
  on (b)) and the table reports medians over all samples.  Peak RSS is
  the trial process's own VmHWM (_peak_memory.py; max over rounds); "base" is its peak after
  imports and loading the corpus.
  A last section times countgrid's private kernels one by one on (a)
  (histograms, E-step, accumulation, M-step; 1 and 2 threads).

Validation: both implementations start from the same grid
  pi0 = normalise(1 + U(0,1)) (numpy.random.default_rng(seed), passed to
  countgrid as fit(X, init_pi=pi0)) and the exact log-likelihood after each of
  5 iterations is compared on (a) (float64: |rel. diff| <= 1e-6 required;
  float32 reported, <= 1e-4); on (b) the float64 timing trials of both start
  from the same seeded grid and their log-likelihoods are compared too.
"""
import argparse
import contextlib
import datetime
import io
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _countgrid_import import countgrid  # noqa: E402
from _peak_memory import peak_rss_mb  # noqa: E402

import numpy_counting_grid as ncg  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(HERE), "data"))
from repo_data import data_path  # noqa: E402  (data/repo_data.py)

CORPORA = {
    "synthetic": dict(extent=(32, 32), window=(4, 4)),
    "news20_full": dict(extent=(48, 48), window=(5, 5)),
}
TARGETS = {("synthetic", "float32"): 0.040, ("synthetic", "float64"): 0.070}
PUBLISHED = [
    ("synthetic", "BrowseCloud Python (published)", 1.6),
    ("synthetic", "careful NumPy (published)", "0.1-0.15"),
]


# ------------------------------------------------------------------ corpora
def make_synthetic(T=2000, Z=1000, extent=(32, 32), window=(4, 4), tokens=100, seed=0):
    """Documents drawn from a true counting grid.

    rng = numpy.random.default_rng(seed)
    true pi_i(z): for every cell i, Z independent Gamma(shape=0.05, scale=1)
        draws normalised over z (drawn as one (Z,) + extent array);
    h_k: the window means of the true pi (W=4x4, torus);
    each document t: k_t ~ uniform over the L cells (rng.integers), then
        `tokens` tokens ~ Multinomial(tokens, h_{k_t}) (rng.multinomial).
    Returns (CSR int32 counts of shape (T, Z), k).
    """
    rng = np.random.default_rng(seed)
    L = int(np.prod(extent))
    pi = rng.gamma(0.05, 1.0, size=(Z,) + tuple(extent))
    pi /= pi.sum(axis=0, keepdims=True)
    h = ncg.window_sum(pi, window).reshape(Z, L) / float(np.prod(window))
    h /= h.sum(axis=0, keepdims=True)
    k = rng.integers(0, L, size=T)
    rows = np.empty((T, Z), dtype=np.int32)
    for t in range(T):
        rows[t] = rng.multinomial(tokens, h[:, k[t]])
    return sp.csr_matrix(rows), k


def load_news20(path=None, vocab=20000):
    """news20_full, the `vocab` words with the largest total count, empty docs dropped."""
    X = sp.load_npz(path or data_path("news20_full.npz")).tocsr()
    total = np.asarray(X.sum(axis=0)).ravel()
    keep = np.sort(np.argsort(-total, kind="stable")[:vocab])
    Xp = X[:, keep].tocsr()
    nonempty = np.asarray(Xp.sum(axis=1)).ravel() > 0
    info = dict(orig_shape=X.shape, min_kept_count=int(total[keep].min()),
                dropped_docs=int((~nonempty).sum()),
                token_share=float(Xp.sum() / X.sum()))
    return Xp[nonempty].tocsr(), info


def describe(X):
    lens = np.asarray(X.sum(axis=1)).ravel()
    return (f"{X.shape[0]} docs x {X.shape[1]} words, nnz {X.nnz} "
            f"(density {X.nnz / (X.shape[0] * X.shape[1]):.4f}), "
            f"tokens/doc mean {lens.mean():.1f} (min {lens.min():.0f}, max {lens.max():.0f})")


# ------------------------------------------------------------------ workers
class _Stamps(io.TextIOBase):
    """stdout replacement recording when each verbose iteration line is printed."""

    def __init__(self):
        self.wall, self.cpu = [], []

    def write(self, text):
        if "iteration" in text:
            self.wall.append(time.perf_counter())
            self.cpu.append(time.process_time())
        return len(text)


def worker(spec):
    """One trial in this (fresh) process; returns a JSON-able dict."""
    load0 = os.getloadavg()[0]
    X = sp.load_npz(spec["path"]).tocsr()
    if spec.get("dense"):
        X = X.toarray()
    extent, window = tuple(spec["extent"]), tuple(spec["window"])
    dtype = np.dtype(spec["dtype"])
    base = peak_rss_mb()
    out = dict(spec=spec, base_rss_mb=base, load=load0)
    if spec["impl"] == "countgrid":
        k = spec["k"]

        def fit(n, verbose=0):
            est = countgrid.CountingGrid(extent, window, n_iter=n, tol=0, dtype=dtype,
                                         window_schedule=None,
                                         num_threads=spec.get("threads"),
                                         random_state=spec["seed"], verbose=verbose)
            stamps = _Stamps()
            t, c = time.perf_counter(), time.process_time()
            with contextlib.redirect_stdout(stamps):
                est.fit(X)
            return time.perf_counter() - t, time.process_time() - c, est, stamps

        if spec.get("warmup"):
            fit(1)
        diff, diff_cpu, fits, samples, cpu = [], [], [], [], []
        est = None
        for _ in range(spec["pairs"]):
            est = None                      # free the previous model: RSS of one fit
            t1, c1, _, _ = fit(1)
            _ = None
            tk, ck, est, stamps = fit(1 + k, verbose=1)
            diff.append((tk - t1) / k)
            diff_cpu.append((ck - c1) / k)
            fits.append([t1, tk])
            # verbose prints once per iteration, right after its E-step; the time
            # between two prints is M-step + histograms + E-step with accumulation,
            # except before the last print (final E-step, no accumulation): dropped
            w, c = np.diff(stamps.wall), np.diff(stamps.cpu)
            if len(w) != k:
                raise RuntimeError(f"expected {k + 1} verbose lines, got {len(stamps.wall)}")
            samples += w[:-1].tolist()
            cpu += c[:-1].tolist()
        out.update(samples=samples, cpu=cpu, diff_samples=diff, diff_cpu=diff_cpu, fits=fits,
                   log_likelihood=est.log_likelihood_.tolist())
    else:
        skip = 1 if spec.get("warmup") else 0      # first iteration as warm-up
        r = ncg.fit(X, extent, window, n_iter=spec["k"] + skip, random_state=spec["seed"],
                    dtype=dtype)
        out.update(samples=r["iter_seconds"][skip:].tolist(),
                   cpu=r["iter_cpu_seconds"][skip:].tolist(),
                   log_likelihood=r["log_likelihood"].tolist())
    out["peak_rss_mb"] = peak_rss_mb()
    return out


def validate_worker(spec):
    """Same start pi0 for both; compare the log-likelihood after each iteration."""
    X = sp.load_npz(spec["path"]).tocsr()
    extent, window, n_iter = tuple(spec["extent"]), tuple(spec["window"]), spec["n_iter"]
    pi0 = ncg.initial_pi(extent, X.shape[1], spec["seed"])
    res = {}
    for dt in ("float64", "float32"):
        est = countgrid.CountingGrid(extent, window, n_iter=n_iter, tol=0, dtype=np.dtype(dt),
                                     window_schedule=None)
        est.fit(X, init_pi=pi0)
        r = ncg.fit(X, extent, window, n_iter=n_iter, init_pi=pi0, dtype=np.dtype(dt))
        a, b = np.asarray(est.log_likelihood_), r["log_likelihood"]
        res[dt] = dict(countgrid=a.tolist(), numpy=b.tolist(),
                       max_rel=float(np.max(np.abs(a - b) / np.abs(a))),
                       max_abs_pi=float(np.max(np.abs(est.pi_.astype(np.float64) - r["pi"]))))
    # countgrid's own seeded start is the same pi0 (so the timing runs of both
    # implementations, which use random_state=seed, follow the same path)
    est = countgrid.CountingGrid(extent, window, n_iter=n_iter, tol=0, window_schedule=None,
                                 random_state=spec["seed"]).fit(X)
    res["random_state_equals_init_pi"] = float(np.max(np.abs(
        np.asarray(est.log_likelihood_) / np.asarray(res["float64"]["countgrid"]) - 1)))
    return res


def breakdown_worker(spec):
    """Per-kernel times of one countgrid EM iteration (private kernels, as run_em calls them)."""
    from countgrid.grid import _em
    from countgrid.grid import _wrappers as kernels

    X = sp.load_npz(spec["path"]).tocsr()
    extent, window = tuple(spec["extent"]), tuple(spec["window"])
    L = int(np.prod(extent))
    ALPHA, block_rows = _em.ALPHA, _em.block_rows
    out = {}
    for dt in ("float32", "float64"):
        corpus = _em.grid_counts(X, np.dtype(dt))
        T, Z = corpus.n_samples, corpus.n_features
        if block_rows(T, L) < T:
            raise ValueError("breakdown assumes a single block of documents")
        pi = np.ascontiguousarray(ncg.initial_pi(extent, Z, spec["seed"], dt).reshape(L, Z).T)
        h, logh, n = np.empty_like(pi), np.empty_like(pi), np.zeros_like(pi)
        q, ll = np.empty((T, L), dtype=dt), np.empty(T)
        rho = float(corpus.lengths.mean() / (2.5 * L))
        for nt in (1, 2):
            cursor = _em.new_cursor(corpus)
            n2, pi2 = np.empty_like(n), np.empty_like(pi)

            def acc():
                cursor[:] = corpus.csc.indptr[:-1]
                n.fill(0)
                _em.accumulate(corpus, 0, T, q, n, cursor, nt)

            def prep_m():
                n2[:] = n
                pi2[:] = pi

            steps = [("histograms", None, lambda: kernels.histograms(pi, extent, window, h, logh, nt)),
                     ("E-step (estep_csr)", None,
                      lambda: _em.estep(corpus, 0, T, logh, None, 1.0 / (1e7 * L), q, ll, nt)),
                     ("accumulate n = C^T Q", None, acc),
                     ("M-step", prep_m,
                      lambda: kernels.mstep(n2, h, pi2, extent, window, rho, ALPHA, nt))]
            for name, prep, f in steps:
                wall, cpu = [], []
                for _ in range(spec["reps"]):
                    if prep:
                        prep()
                    t, c = time.perf_counter(), time.process_time()
                    f()
                    wall.append(time.perf_counter() - t)
                    cpu.append(time.process_time() - c)
                out[f"{dt} {nt} thread{'s' if nt > 1 else ''} {name}"] = (
                    float(np.median(wall)), float(np.median(cpu)))
    return out


def run_sub(kind, spec):
    cmd = [sys.executable, os.path.abspath(__file__), f"--{kind}", json.dumps(spec)]
    env = dict(os.environ, **spec.get("env", {}))
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        raise RuntimeError(f"trial failed: {spec}")
    return json.loads(p.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ driver
def configs(corpus, args):
    """(label, spec) of every configuration timed on a corpus."""
    seed = args.seed
    out = []
    if corpus == "synthetic":
        for dt in ("float32", "float64"):
            out.append((f"countgrid {dt}", dict(impl="countgrid", dtype=dt, k=args.k_cg, pairs=1,
                                                warmup=True, seed=seed, threads=None)))
        if args.single_thread:
            for dt in ("float32", "float64"):
                out.append((f"countgrid {dt} 1 thread",
                            dict(impl="countgrid", dtype=dt, k=args.k_cg, pairs=1, warmup=True,
                                 seed=seed, threads=1)))
        if args.omp_passive:
            for dt in ("float32", "float64"):
                out.append((f"countgrid {dt} OMP_WAIT_POLICY=PASSIVE",
                            dict(impl="countgrid", dtype=dt, k=args.k_cg, pairs=1, warmup=True,
                                 seed=seed, threads=None, env={"OMP_WAIT_POLICY": "PASSIVE"})))
        for dt in ("float64", "float32"):
            out.append((f"numpy sparse {dt}", dict(impl="numpy", dtype=dt, k=args.k_np, seed=seed,
                                                    warmup=True)))
            out.append((f"numpy dense-BLAS {dt}",
                        dict(impl="numpy", dtype=dt, k=args.k_np, seed=seed, dense=True,
                             warmup=True)))
    else:
        for dt in ("float32", "float64"):
            out.append((f"countgrid {dt}", dict(impl="countgrid", dtype=dt, k=args.k_news,
                                                pairs=1, warmup=True, seed=seed, threads=None)))
        out.append(("numpy sparse float64", dict(impl="numpy", dtype="float64",
                                                  k=max(1, args.k_news - 1), seed=seed)))
        if args.news20_numpy_f32:
            out.append(("numpy sparse float32", dict(impl="numpy", dtype="float32",
                                                      k=max(1, args.k_news - 1), seed=seed)))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="corpus (a) only, 2 rounds (about 1 minute)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="interleaved rounds on corpus (a) (default 3)")
    ap.add_argument("--news20-repeat", type=int, default=2,
                    help="interleaved rounds of the countgrid trials on news20_full (default 2)")
    ap.add_argument("--news20-numpy-repeat", type=int, default=1,
                    help="rounds of the (slow) NumPy trials on news20_full (default 1)")
    ap.add_argument("--no-breakdown", dest="breakdown", action="store_false",
                    help="skip the per-kernel breakdown of countgrid on corpus (a)")
    ap.add_argument("--corpus", choices=["all", "synthetic", "news20_full"], default="all")
    ap.add_argument("--seed", type=int, default=0,
                    help="seed of the synthetic corpus and of the initial grids (default 0)")
    ap.add_argument("--k-cg", type=int, default=10,
                    help="countgrid on (a): fit(1) and fit(1+k), k-1 iteration intervals (default 10)")
    ap.add_argument("--k-np", type=int, default=5,
                    help="NumPy iterations timed per trial on (a), after 1 warm-up (default 5)")
    ap.add_argument("--k-news", type=int, default=3,
                    help="news20_full: countgrid fit(1) and fit(1+k) (k-1 clean iteration "
                         "intervals), NumPy k iterations per trial (default 3)")
    ap.add_argument("--no-single-thread", dest="single_thread", action="store_false",
                    help="do not also time countgrid with num_threads=1 on (a)")
    ap.add_argument("--no-omp-passive", dest="omp_passive", action="store_false",
                    help="do not also time countgrid (2 threads) with OMP_WAIT_POLICY=PASSIVE on (a)")
    ap.add_argument("--news20-numpy-f32", action="store_true",
                    help="also time the NumPy peer in float32 on news20_full (slow)")
    ap.add_argument("--json", help="write all raw results to this file")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--validate", help=argparse.SUPPRESS)
    ap.add_argument("--breakdown-worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    if args.validate:
        print(json.dumps(validate_worker(json.loads(args.validate))))
        return 0
    if args.breakdown_worker:
        print(json.dumps(breakdown_worker(json.loads(args.breakdown_worker))))
        return 0

    if args.k_cg < 2 or args.k_news < 2 or args.k_np < 1:
        ap.error("--k-cg and --k-news must be >= 2, --k-np >= 1")
    if min(args.repeat, args.news20_repeat, args.news20_numpy_repeat) < 1:
        ap.error("repeat counts must be >= 1")
    corpora = ["synthetic", "news20_full"] if args.corpus == "all" else [args.corpus]
    if args.quick:
        corpora, args.repeat = ["synthetic"], min(args.repeat, 2)
    t_start = time.perf_counter()
    print(f"# countgrid {countgrid.__version__} benchmark, {datetime.datetime.now():%Y-%m-%d %H:%M}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"OpenMP threads {countgrid._kernels.max_threads()}, load average at start "
          f"{os.getloadavg()[0]:.2f}; numpy {np.__version__}, scipy {scipy.__version__}, "
          f"python {platform.python_version()}")
    tmp = tempfile.mkdtemp(prefix="cg-bench-")
    raw = dict(corpora={}, results={}, validation={})
    try:
        paths = {}
        for c in corpora:
            if c == "synthetic":
                X, _ = make_synthetic(seed=args.seed)
                note = f"synthetic (seed {args.seed})"
            else:
                X, info = load_news20()
                note = (f"news20_full pruned to 20000 words by total count (kept words have "
                        f"count >= {info['min_kept_count']}, {100 * info['token_share']:.1f}% of "
                        f"tokens), {info['dropped_docs']} empty docs dropped")
            paths[c] = os.path.join(tmp, c + ".npz")
            sp.save_npz(paths[c], X, compressed=False)
            raw["corpora"][c] = note + ": " + describe(X)
            print(f"# corpus {c}: {raw['corpora'][c]}; E={CORPORA[c]['extent']}, "
                  f"W={CORPORA[c]['window']}")

        # ---- validation on corpus (a): same init, a few iterations
        if "synthetic" in paths:
            v = run_sub("validate", dict(path=paths["synthetic"], seed=args.seed + 1, n_iter=5,
                                         **CORPORA["synthetic"]))
            raw["validation"]["synthetic"] = v
            print("\n## Validation on corpus (a): same init_pi, 5 iterations, exact total "
                  "log-likelihood after each")
            for dt in ("float64", "float32"):
                r = v[dt]
                print(f"{dt}: countgrid {[round(x, 3) for x in r['countgrid']]}")
                print(f"{dt}: numpy     {[round(x, 3) for x in r['numpy']]}")
                tol = 1e-6 if dt == "float64" else 1e-4
                print(f"{dt}: max |rel diff| = {r['max_rel']:.2e} (required <= {tol:g}: "
                      f"{'PASS' if r['max_rel'] <= tol else 'FAIL'}); "
                      f"max |pi diff| = {r['max_abs_pi']:.2e}")
            print(f"countgrid random_state={args.seed + 1} vs init_pi from the same seed: "
                  f"max |rel diff| {v['random_state_equals_init_pi']:.1e} (same start)")

        # ---- timing, interleaved round-robin
        for c in corpora:
            cfgs = configs(c, args)
            rounds = args.repeat if c == "synthetic" else args.news20_repeat
            np_rounds = rounds if c == "synthetic" else args.news20_numpy_repeat
            rounds = max(rounds, np_rounds)
            res = {label: [] for label, _ in cfgs}
            print(f"\n## Timing {c}: {rounds} round(s) of {len(cfgs)} trials", flush=True)
            for r in range(rounds):
                for label, spec in cfgs:
                    if r >= (np_rounds if spec["impl"] == "numpy" else args.repeat if c == "synthetic"
                             else args.news20_repeat):
                        continue
                    spec = dict(spec, path=paths[c], **CORPORA[c])
                    out = run_sub("worker", spec)
                    res[label].append(out)
                    alt = (f"  (fit difference {[round(s, 4) for s in out['diff_samples']]})"
                           if "diff_samples" in out else "")
                    print(f"  round {r + 1} {label:28s} s/iter {[round(s, 4) for s in out['samples']]}"
                          f"{alt}  CPU s/iter {[round(s, 4) for s in out['cpu']]}"
                          f"  peak RSS {out['peak_rss_mb']:.0f} MB  (load {out['load']:.1f})",
                          flush=True)
            raw["results"][c] = res
            if c == "news20_full":
                # both implementations start from the same seeded grid (checked on (a))
                cg = res["countgrid float64"][0]["log_likelihood"]
                npl = res["numpy sparse float64"][0]["log_likelihood"]
                m = min(len(cg), len(npl))
                rel = float(np.max(np.abs(np.subtract(cg[:m], npl[:m])) / np.abs(cg[:m])))
                raw["validation"]["news20_full"] = dict(countgrid=cg[:m], numpy=npl[:m], max_rel=rel)
                print(f"  check news20_full float64, same seeded start, {m} iterations: "
                      f"countgrid {[round(x, 1) for x in cg[:m]]} numpy "
                      f"{[round(x, 1) for x in npl[:m]]} max |rel diff| {rel:.2e} "
                      f"({'PASS' if rel <= 1e-6 else 'FAIL'})")

        # ---- table
        print("\n## Seconds per EM iteration (wall clock, median over samples; ratio = wall time / "
              "countgrid wall time, same corpus and dtype; CPU = process CPU time, all threads)\n")
        print("| corpus | implementation | s/iter median | [min, max] | n | CPU s/iter | "
              "fit-difference s/iter | ratio vs countgrid | target | peak RSS MB (base) |")
        print("|" + "---|" * 10)
        for c in corpora:
            res = raw["results"][c]
            med = {lab: float(np.median([s for o in outs for s in o["samples"]]))
                   for lab, outs in res.items()}
            for lab, outs in res.items():
                s = [x for o in outs for x in o["samples"]]
                cpu = float(np.median([x for o in outs for x in o["cpu"]]))
                dt = "float32" if "float32" in lab else "float64"
                ref = med.get(f"countgrid {dt}")
                ratio = "1" if lab == f"countgrid {dt}" else f"{med[lab] / ref:.2f}x"
                tgt = TARGETS.get((c, dt)) if lab == f"countgrid {dt}" else None
                tgt_s = "-" if tgt is None else f"<= {tgt:.3f}: {'met' if med[lab] <= tgt else 'NOT met'}"
                peak = max(o["peak_rss_mb"] for o in outs)
                base = min(o["base_rss_mb"] for o in outs)
                d = [x for o in outs for x in o.get("diff_samples", [])]
                d_s = f"{np.median(d):.4f} (n={len(d)})" if d else "-"
                print(f"| {c} | {lab} | {med[lab]:.4f} | [{min(s):.4f}, {max(s):.4f}] | {len(s)} | "
                      f"{cpu:.4f} | {d_s} | {ratio} | {tgt_s} | {peak:.0f} ({base:.0f}) |")
            for pc, lab, val in PUBLISHED:
                if pc == c:
                    print(f"| {c} | {lab} | {val} | - | - | - | - | - | - | - |")
        if args.breakdown and importlib.util.find_spec("countgrid.grid") is None:
            print("\n(per-kernel breakdown skipped: it reads the private modules of the grid "
                  f"family, which countgrid {countgrid.__version__} does not have)")
        elif args.breakdown and "synthetic" in paths:
            print("\n## countgrid kernels on corpus (a), one iteration (private API; median of 7 "
                  "calls; wall / CPU seconds)\n")
            print("| dtype, threads | histograms | E-step (estep_csr) | accumulate n = C^T Q | "
                  "M-step | sum |")
            print("|---|---|---|---|---|---|")
            raw["breakdown"] = {}
            for pol in ("", "PASSIVE"):
                b = run_sub("breakdown-worker", dict(
                    path=paths["synthetic"], seed=args.seed, reps=7,
                    env={"OMP_WAIT_POLICY": pol} if pol else {}, **CORPORA["synthetic"]))
                raw["breakdown"][pol or "default"] = b
                for dt in ("float32", "float64"):
                    for nt in ("1 thread", "2 threads"):
                        if pol and nt == "1 thread":
                            continue
                        cells = [b[f"{dt} {nt} {k}"] for k in (
                            "histograms", "E-step (estep_csr)", "accumulate n = C^T Q", "M-step")]
                        tot = (sum(c[0] for c in cells), sum(c[1] for c in cells))
                        print(f"| {dt}, {nt}{', OMP_WAIT_POLICY=PASSIVE' if pol else ''} | "
                              + " | ".join(f"{w:.4f} / {c:.4f}" for w, c in cells)
                              + f" | {tot[0]:.4f} / {tot[1]:.4f} |")
        loads = [o["load"] for c in raw["results"].values() for outs in c.values() for o in outs]
        print(f"\nload average (1 min) at trial starts: median {np.median(loads):.1f}, "
              f"max {max(loads):.1f}; total benchmark time {time.perf_counter() - t_start:.0f} s")
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(raw, fh, indent=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
