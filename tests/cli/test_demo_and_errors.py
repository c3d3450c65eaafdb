"""Tests of the countgrid command line (countgrid.cli), each through the real entry point
(``python -m countgrid.cli``) in a subprocess: exit statuses, one-line messages, no
traceback, arguments and the output file checked before any work."""
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from countgrid import cli

try:
    import matplotlib  # noqa: F401

    HAVE_MPL = True
except ImportError:  # pragma: no cover - depends on the environment
    HAVE_MPL = False

# A small, quick run: 10x10 grid, 2 coarse + 3 EM iterations.
QUICK = ["demo", "--extent", "10", "10", "--window", "3", "3", "--coarse-window", "5", "5",
         "--coarse-iter", "2", "--n-iter", "3", "--threads", "1", "--html", "none"]
# The quickest run: what the argument checks are tested with.
TINY = ["demo", "--extent", "6", "6", "--window", "2", "2", "--coarse-iter", "0", "--n-iter", "1",
        "--threads", "1", "--quiet", "--html", "none"]
TRACEBACK = "Traceback (most recent call last)"


def run(args, tmp_path, env=None, timeout=180, prefix=()):
    full_env = dict(os.environ)
    full_env.pop("COUNTGRID_DEBUG", None)
    full_env["MPLBACKEND"] = "Agg"
    full_env.update(env or {})
    return subprocess.run([sys.executable, *prefix, "-m", "countgrid.cli", *args],
                          capture_output=True, text=True, timeout=timeout, cwd=tmp_path,
                          env=full_env, stdin=subprocess.DEVNULL)


def stderr_lines(res):
    return [ln for ln in res.stderr.splitlines() if ln.strip()]


@pytest.mark.skipif(not HAVE_MPL, reason="matplotlib is not installed")
def test_demo_writes_png(tmp_path):
    out = tmp_path / "grid.png"
    res = run(QUICK + ["--output", str(out)], tmp_path)
    assert res.returncode == 0, res.stderr
    text = res.stdout
    assert "2224 training, 556 test posts" in text
    # progress: log lines (stdout is not a terminal), the last of each stage included
    assert "CountingGrid window (5, 5): iteration 2/2" in text
    assert "CountingGrid: iteration 3/3" in text
    assert "final log-likelihood" in text
    acc = float(text.split("test accuracy (label embedding): ")[1].split()[0])
    assert 0.5 < acc <= 1.0                     # well above chance even after 5 iterations
    assert f"wrote the word grid to {out}" in text
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # warnings (here: not converged in 3 iterations) are one line each, no source lines
    assert all(ln.startswith("countgrid demo: warning: ") for ln in stderr_lines(res)), res.stderr


def test_demo_text_output(tmp_path):
    out = tmp_path / "grid.txt"
    res = run(QUICK + ["--quiet", "--output", str(out)], tmp_path)
    assert res.returncode == 0, res.stderr
    assert "iteration " not in res.stdout           # --quiet
    written = out.read_text()
    assert "10 x 10 counting grid" in written
    assert "A = alt.atheism, B = rec.sport.baseball, C = sci.space" in written


def test_demo_without_matplotlib_falls_back_to_text(tmp_path):
    fake = tmp_path / "fake"
    (fake / "matplotlib").mkdir(parents=True)
    (fake / "matplotlib" / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    out = tmp_path / "grid.png"
    res = run(TINY + ["--output", str(out)], tmp_path, env={"PYTHONPATH": str(fake)})
    assert res.returncode == 0, res.stderr
    assert "pip install countgrid[plot]" in res.stdout
    assert not out.exists()
    assert "counting grid" in (tmp_path / "grid.txt").read_text()


def test_info(tmp_path):
    res = run(["info"], tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("countgrid ") and "OpenMP" in res.stdout
    assert "threads" in res.stdout


def test_version(tmp_path):
    res = run(["--version"], tmp_path)
    assert res.returncode == 0
    assert res.stdout.startswith("countgrid ")


def _bad_output(tmp_path):
    return {
        "missing-folder": str(tmp_path / "no" / "such" / "grid.png"),
        "missing-folder-txt": str(tmp_path / "no" / "grid.txt"),
        "a-folder": str(tmp_path),
        "unknown-extension": str(tmp_path / "grid.xyz"),
        "no-extension": str(tmp_path / "grid"),
        "empty": "",
        "read-only-place": "/proc/countgrid-test.png",
    }


# (arguments, what the message must name)
USAGE_ERRORS = [
    ([], "COMMAND"),
    (["nope"], "COMMAND"),
    (["demo", "--nope"], "--nope"),
    (["demo", "extra"], "extra"),
    (["demo", "--window", "500", "500"], "--window"),
    (["demo", "--extent", "0", "4"], "--extent"),
    (["demo", "--extent", "a", "4"], "--extent"),
    (["demo", "--extent", str(2**40), str(2**40)], "--extent"),
    (["demo", "--extent", "100000", "100000"], "--extent"),
    (["demo", "--threads", "0"], "--threads"),
    (["demo", "--threads", "1.5"], "--threads"),
    (["demo", "--seed", "-1"], "--seed"),
    (["demo", "--seed", "abc"], "--seed"),
    (["demo", "--test-size", "0"], "--test-size"),
    (["demo", "--test-size", "1"], "--test-size"),
    (["demo", "--test-size", "-0.5"], "--test-size"),
    (["demo", "--test-size", "nan"], "--test-size"),
    (["demo", "--test-size", "inf"], "--test-size"),
    (["demo", "--n-iter", "0"], "--n-iter"),
    (["demo", "--coarse-iter", "-1"], "--coarse-iter"),
    (["demo", "--coarse-window", "0", "0"], "--coarse-window"),
    (["demo", "--output"], "--output"),
]


@pytest.mark.parametrize("argv, name", USAGE_ERRORS,
                         ids=[" ".join(a) or "no-arguments" for a, _ in USAGE_ERRORS])
def test_usage_errors_are_one_line_with_status_2(argv, name, tmp_path):
    res = run(argv, tmp_path, timeout=60)
    assert res.returncode == 2, (res.returncode, res.stderr)
    lines = stderr_lines(res)
    assert len(lines) == 1, res.stderr
    assert TRACEBACK not in res.stderr
    assert "error:" in lines[0] and name in lines[0], lines[0]
    assert res.stdout == ""                     # nothing was started


@pytest.mark.parametrize("case", sorted(_bad_output(__import__("pathlib").Path("/x"))))
def test_bad_output_is_refused_before_any_work(case, tmp_path):
    if case == "read-only-place" and not os.path.isdir("/proc"):
        pytest.skip("needs /proc")
    if case in ("unknown-extension", "no-extension") and not HAVE_MPL:
        pytest.skip("without matplotlib the picture falls back to text")
    path = _bad_output(tmp_path)[case]
    t0 = time.perf_counter()
    res = run(TINY + ["--output", path], tmp_path, timeout=60)
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    lines = stderr_lines(res)
    assert len(lines) == 1 and TRACEBACK not in res.stderr, res.stderr
    assert "--output" in lines[0], lines[0]
    assert res.stdout == ""                     # no data loaded, no EM run
    assert not (tmp_path / "no").exists()
    assert time.perf_counter() - t0 < 60


def test_test_size_that_leaves_no_test_post(tmp_path):
    res = run(TINY + ["--test-size", "1e-9", "-o", str(tmp_path / "g.txt")], tmp_path)
    assert res.returncode == 2
    lines = stderr_lines(res)
    assert len(lines) == 1 and "--test-size" in lines[0] and "no post" in lines[0], lines
    assert res.stdout == "" and not (tmp_path / "g.txt").exists()


def test_threads_beyond_the_cap_warn_in_one_line(tmp_path):
    out = tmp_path / "g.txt"
    res = run(["demo", "--extent", "6", "6", "--window", "2", "2", "--coarse-iter", "0",
               "--n-iter", "1", "--quiet", "--threads", "1000000", "-o", str(out)], tmp_path)
    assert res.returncode == 0, res.stderr
    assert out.exists()
    lines = stderr_lines(res)
    assert any("--threads 1000000" in ln for ln in lines), lines
    assert all(ln.startswith("countgrid demo: warning: ") for ln in lines), lines


def test_negative_threads_and_large_seed_are_accepted(tmp_path):
    out = tmp_path / "g.txt"
    res = run(TINY[:-3] + ["--threads", "-1", "--seed", str(2**70), "-q", "-o", str(out)],
              tmp_path)
    assert res.returncode == 0, res.stderr
    assert out.exists()


FAIL_IN_RUN = ("import sys, countgrid.cli as c, countgrid.cli._demo as d\n"
               "def broken(*a, **k):\n    raise OSError(5, 'Input/output error', 'news20.npz')\n"
               "d.demo_corpus = broken\n"
               "sys.exit(c.main(sys.argv[1:]))\n")


def test_runtime_failure_is_one_line_with_status_1(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text(FAIL_IN_RUN)
    args = [sys.executable, str(script)] + TINY + ["-o", str(tmp_path / "g.txt")]
    res = subprocess.run(args, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert res.returncode == 1
    lines = stderr_lines(res)
    assert lines == ["countgrid demo: error: Input/output error: news20.npz "
                     "(--debug shows the traceback)"], lines
    # --debug and COUNTGRID_DEBUG show the traceback as well
    for extra, env in ((["--debug"], {}), ([], {"COUNTGRID_DEBUG": "1"})):
        res = subprocess.run([sys.executable, str(script)] + extra + TINY, capture_output=True,
                             text=True, timeout=60, cwd=tmp_path, env=dict(os.environ, **env))
        assert res.returncode == 1
        assert TRACEBACK in res.stderr and "OSError" in res.stderr
        assert stderr_lines(res)[-1].startswith("countgrid demo: error: Input/output error")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_exits_130_with_one_line(tmp_path):
    env = dict(os.environ)
    env.pop("COUNTGRID_DEBUG", None)
    proc = subprocess.Popen([sys.executable, "-m", "countgrid.cli", "demo", "--extent", "16", "16",
                             "--window", "3", "3", "--coarse-iter", "0", "--n-iter", "500", "--tol", "0",
                             "--threads", "1", "-o", str(tmp_path / "g.txt"), "--html",
                             "none"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, "the demo ended before its first EM iteration"
            if ": iteration" in line:
                break
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    lines = [ln for ln in err.splitlines() if ln.strip() and "warning:" not in ln]
    assert len(lines) == 1 and lines[0].startswith("countgrid demo: interrupted"), err
    assert TRACEBACK not in err
    assert not (tmp_path / "g.txt").exists()


def test_module_entry_point(tmp_path):
    res = run(["info"], tmp_path, timeout=60)
    assert res.returncode == 0, res.stderr
    assert "OpenMP" in res.stdout


def test_stratified_split():
    y = np.repeat([0, 1, 2], [50, 100, 10])
    train, test = cli.stratified_split(y, 0.2, random_state=3)
    assert np.bincount(y[test]).tolist() == [10, 20, 2]
    assert np.intersect1d(train, test).size == 0 and train.size + test.size == y.size
    again = cli.stratified_split(y, 0.2, random_state=3)
    assert np.array_equal(again[1], test)
    with pytest.raises(ValueError):
        cli.stratified_split(y, 1.5)
