"""The counting-grid benchmark runs, and its own validation passes (README of
benchmarks/: "keep benchmarks/ runnable with one command").  The default window schedule
of 0.2 broke it silently: its fits ran the schedule's coarse stages that the NumPy peer
does not, so the validation failed (relative difference 2.4e-2) and the timing trials
counted the wrong number of verbose lines; no test ran it."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_counting_grid_benchmark_runs_and_validates():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks",
                                                       "bench_counting_grid.py"), "--quick"],
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    checks = [line for line in lines if "max |rel diff| =" in line]
    assert len(checks) == 2 and all("PASS" in line for line in checks), checks
    assert any(line.startswith("| synthetic | countgrid float32 |") for line in lines)
    assert any(line.startswith("| synthetic | numpy sparse float64 |") for line in lines)


def test_the_converged_map_benchmark_runs():
    """bench_converged.py (issue 29) on a small corpus: every fit to convergence; the
    search keeps the exact fit's places, extrapolated EM and progressive fitting need
    fewer passes over all documents, tracking scores fewer positions."""
    out = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks",
                                                       "bench_converged.py"),
                          "--docs", "3000", "--extent", "16", "16", "--window", "3", "3",
                          "--words", "2000", "--subsample", "0.3"],
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = {line.split()[0]: line.split() for line in out.stdout.splitlines()
            if line.startswith(("exact ", "coarse-to-fine ", "accelerated ", "progressive ",
                                "tracked "))}
    assert set(rows) == {"exact", "coarse-to-fine", "accelerated", "progressive", "tracked"}
    fast = rows["coarse-to-fine"]
    assert float(fast[5]) < 0.6                      # positions scored
    assert float(fast[9]) > 0.9                      # documents within one cell
    on_all = {name: int(row[3]) for name, row in rows.items()}
    assert on_all["accelerated"] < on_all["coarse-to-fine"]
    assert on_all["progressive"] < on_all["coarse-to-fine"]
    assert float(rows["tracked"][5]) < float(rows["progressive"][5])   # fewer positions


def test_the_roofline_benchmark_runs():
    """bench_roofline.py (issue 29, docs/scale.md "The kernels' roofline") in its quick
    form: the kernels' ceilings from L1 to L3, corpus (a)'s rates and the bound on the
    ratio to both NumPy peers (the figures are timings: only their presence is tested)."""
    out = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "bench_roofline.py"),
                          "--quick"], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    for dtype in ("float32", "float64"):
        for kernel in ("E-step", "accumulation"):
            row = next(x for x in lines if x.startswith(f"| 1024 | {dtype} | {kernel} |"))
            assert len([v for v in row.split("|") if v.strip()]) == 3 + 3   # L1, L2, L3
        assert any(x.startswith(f"| (a) synthetic | {dtype} |") for x in lines)
        for peer in ("dense-BLAS", "sparse"):
            assert any(x.startswith(f"| {dtype} | {peer} |") for x in lines)
