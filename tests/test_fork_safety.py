"""Worker processes (docs/robustness.md, "Fork safety").

With the 'spawn' and 'forkserver' start methods (multiprocessing pools and
ProcessPoolExecutor), models fitted and used in worker processes, with several OpenMP
threads, after the parent has run its own OpenMP threads, are bit-identical to the
parent's, and a model fitted in the parent transforms identically in a worker.

GNU OpenMP (libgomp) is not fork-safe: a fork() child of a process that has run OpenMP
threads hangs in its first parallel region with more than one thread.  countgrid detects
such a child and runs it on one thread with one RuntimeWarning: the 'fork' tests check
that it finishes with the same results, and that a fork() child of a process that never
ran OpenMP threads keeps its threads.

Every scenario runs in a fresh interpreter (so the pytest process's own OpenMP threads do
not matter) with a timeout that kills the whole process group: a hang fails, it never
blocks the suite.
"""
import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import countgrid
from countgrid._utils import threads as _threads
TIMEOUT = 300  # seconds per scenario (a few seconds when the machine is idle)

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")

# The models and the data of every scenario; the workers import this as __mp_main__.
COMMON = r'''
import json, os, sys, warnings
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor
import numpy as np
import scipy.sparse as sp
import countgrid
from countgrid import kernels
from countgrid._utils.threads import effective_n_threads

warnings.filterwarnings("ignore", category=countgrid.ConvergenceWarning)
warnings.filterwarnings("ignore", category=DeprecationWarning)  # fork with threads (3.12+)
TIMEOUT = float(os.environ.get("CG_TEST_TIMEOUT", "120"))


def data():
    rng = np.random.default_rng(0)
    rates = np.r_[np.full(8, 3.0), np.full(8, 0.3)]
    X = np.vstack([rng.poisson(rates, (30, 16)), rng.poisson(rates[::-1], (30, 16))])
    return sp.csr_matrix(X.astype(np.float64)), np.repeat([0, 1], 30)


def model(name, nt):
    if name == "CountingGrid":
        return countgrid.CountingGrid((5, 5), (2, 2), n_iter=5, num_threads=nt, random_state=0)
    if name == "PLSA":
        return countgrid.PLSA(3, n_iter=10, num_threads=nt, random_state=0)
    if name == "RAP":
        return countgrid.RAP(4, n_epochs=2, batch_size=16, num_threads=nt, random_state=0)
    if name == "ZIPGTM":
        return countgrid.ZIPGTM((3, 3), n_basis=4, n_iter=4, num_threads=nt, random_state=0)
    if name == "CountingGridClassifier":
        return countgrid.CountingGridClassifier((4, 4), (2, 2), n_iter=4, num_threads=nt,
                                                random_state=0)
    raise ValueError(name)


NAMES = ["CountingGrid", "PLSA", "RAP", "ZIPGTM", "CountingGridClassifier"]


def outputs(m, X):
    if hasattr(m, "predict_proba"):
        return m.predict_proba(X)
    return np.asarray(m.transform(X))


def fit_and_use(name, nt):
    """Fit a model and use it; (name, outputs, threads used, warnings)."""
    X, y = data()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        m = model(name, nt)
        m.fit(X, y) if name.endswith("Classifier") else m.fit(X)
        out = outputs(m, X)
        threads = effective_n_threads(nt)
    return name, out, threads, [str(w.message) for w in caught]


def use_fitted(m):
    X, y = data()
    return outputs(m, X)


def gram(nt):
    X, y = data()
    return kernels.jensen_tsallis_kernel(X, q=1.5, num_threads=nt)


def parent_results(nt):
    """The parent's own results (this runs OpenMP threads in the parent when nt > 1)."""
    X, y = data()
    fitted, out = {}, {}
    for name in NAMES:
        m = model(name, nt)
        m.fit(X, y) if name.endswith("Classifier") else m.fit(X)
        fitted[name], out[name] = m, outputs(m, X)
    return fitted, out, gram(nt)


def compare(out, results):
    """JSON-able report: for each worker result, whether it equals the parent's."""
    report = []
    for name, o, threads, messages in results:
        report.append({"name": name, "equal": bool(np.array_equal(o, out[name])),
                       "threads": threads, "warnings": messages})
    return report
'''

SPAWN = COMMON + r'''
if __name__ == "__main__":
    method = sys.argv[1]
    fitted, out, G = parent_results(2)
    ctx = mp.get_context(method)
    report = {}
    with ctx.Pool(2) as pool:
        results = pool.starmap_async(fit_and_use, [(n, 2) for n in NAMES]).get(TIMEOUT)
        report["pool_fit"] = compare(out, results)
        used = pool.map_async(use_fitted, [fitted[n] for n in NAMES]).get(TIMEOUT)
        report["pool_use_parent_model"] = [bool(np.array_equal(u, out[n]))
                                           for n, u in zip(NAMES, used)]
        report["pool_gram"] = bool(np.array_equal(pool.apply_async(gram, (2,)).get(TIMEOUT), G))
    with ProcessPoolExecutor(max_workers=2, mp_context=ctx) as ex:
        futures = [ex.submit(fit_and_use, n, 2) for n in NAMES]
        report["executor_fit"] = compare(out, [f.result(timeout=TIMEOUT) for f in futures])
        report["executor_gram"] = bool(np.array_equal(ex.submit(gram, 2).result(TIMEOUT), G))
    print("REPORT " + json.dumps(report))
'''

FORK = COMMON + r'''
def child(queue, nt):
    try:
        results = [fit_and_use(n, nt) for n in NAMES]
        queue.put(("ok", [(n, o.tolist(), t, w) for n, o, t, w in results]))
    except BaseException as exc:  # report, never hang the parent
        queue.put(("error", repr(exc)))


if __name__ == "__main__":
    parent_threads = int(sys.argv[1])
    if parent_threads > 0:
        fitted, out, G = parent_results(parent_threads)
    else:  # the parent never ran a kernel: compute the references in a spawned worker
        with mp.get_context("spawn").Pool(1) as pool:
            results = pool.starmap_async(fit_and_use, [(n, 1) for n in NAMES]).get(TIMEOUT)
        out = {name: o for name, o, _, _ in results}
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    p = ctx.Process(target=child, args=(queue, 2))
    p.start()
    try:
        status, payload = queue.get(timeout=TIMEOUT)
    except Exception:
        p.kill()
        print("REPORT " + json.dumps({"hang": True}))
        sys.exit(0)
    p.join(TIMEOUT)
    report = {"hang": False, "status": status}
    if status == "ok":
        report["process"] = compare(out, [(n, np.array(o), t, w) for n, o, t, w in payload])
    else:
        report["error"] = payload
    if parent_threads > 0:
        with ProcessPoolExecutor(max_workers=2, mp_context=ctx) as ex:
            futures = [ex.submit(fit_and_use, n, 2) for n in NAMES]
            try:
                report["executor"] = compare(out, [f.result(timeout=TIMEOUT) for f in futures])
            except Exception as exc:
                report["executor_error"] = repr(exc)
                for pid in list(ex._processes):
                    os.kill(pid, 9)
    print("REPORT " + json.dumps(report))
'''


def run_scenario(tmp_path, script, *args):
    """Run a scenario in a fresh interpreter, in its own process group; a hang past
    TIMEOUT kills the group and fails the test."""
    path = tmp_path / "scenario.py"
    path.write_text(textwrap.dedent(script))
    env = dict(os.environ, CG_TEST_TIMEOUT=str(TIMEOUT // 2), OMP_NUM_THREADS="2")
    proc = subprocess.Popen([sys.executable, str(path), *map(str, args)], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"scenario {args} did not finish in {TIMEOUT} s (hang)")
    assert proc.returncode == 0, stderr[-4000:]
    line = [ln for ln in stdout.splitlines() if ln.startswith("REPORT ")]
    assert line, stdout[-2000:] + stderr[-4000:]
    return json.loads(line[-1][len("REPORT "):])


def _fork_warning(messages):
    return [m for m in messages if "forked" in m and "OpenMP" in m]


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_workers_fit_and_transform_like_the_parent(tmp_path, method):
    import multiprocessing as mp
    if method not in mp.get_all_start_methods():
        pytest.skip(f"{method} is not available here")
    report = run_scenario(tmp_path, SPAWN, method)
    for key in ("pool_fit", "executor_fit"):
        assert len(report[key]) == 5
        for entry in report[key]:
            assert entry["equal"], (key, entry)
            # a worker of a spawn/forkserver pool keeps its threads and is not warned
            assert entry["threads"] == 2, (key, entry)
            assert not _fork_warning(entry["warnings"]), (key, entry)
    assert report["pool_use_parent_model"] == [True] * 5
    assert report["pool_gram"] and report["executor_gram"]


def test_fork_after_openmp_runs_on_one_thread_with_a_warning(tmp_path):
    if not countgrid._kernels.openmp_enabled():
        pytest.skip("serial build")
    report = run_scenario(tmp_path, FORK, 2)
    assert not report["hang"], "a fork() child hung after the parent ran OpenMP threads"
    assert report["status"] == "ok", report.get("error")
    for key in ("process", "executor"):
        assert key in report, report.get("executor_error")
        for entry in report[key]:
            # same results as the parent's 2-thread fit (the kernels are deterministic
            # whatever the thread count), on 1 thread, warned once per process
            assert entry["equal"], (key, entry)
            if _threads_are_gomp():
                assert entry["threads"] == 1, (key, entry)
        if _threads_are_gomp():
            warned = [_fork_warning(e["warnings"]) for e in report[key]]
            assert sum(len(w) for w in warned) >= 1, (key, report[key])
            assert all(len(w) <= 1 for w in warned), (key, report[key])
            assert all("spawn" in m for w in warned for m in w)


def test_fork_without_openmp_use_keeps_its_threads(tmp_path):
    if not countgrid._kernels.openmp_enabled():
        pytest.skip("serial build")
    report = run_scenario(tmp_path, FORK, 0)
    assert not report["hang"] and report["status"] == "ok", report
    for entry in report["process"]:
        assert entry["equal"], entry
        assert entry["threads"] == 2, entry
        assert not _fork_warning(entry["warnings"]), entry


def test_no_fork_fallback_in_the_parent():
    # this process is not a fork child: no fallback, no warning
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _threads.effective_n_threads(2) == 2
    assert not _threads._forked_after_openmp


def _threads_are_gomp():
    from threadpoolctl import threadpool_info
    return any(i.get("user_api") == "openmp" and i.get("prefix") == "libgomp"
               for i in threadpool_info())


def test_fork_children_are_flagged_only_after_openmp_threads(monkeypatch):
    # the at-fork hook, called by hand: flags a child only if the parent ran threads
    monkeypatch.setattr(_threads, "_fork_fallback", None)
    monkeypatch.setattr(_threads, "_forked_after_openmp", False)
    monkeypatch.setattr(_threads, "_openmp_threads_used", False)
    _threads._after_fork_in_child()
    assert not _threads._forked_after_openmp
    monkeypatch.setattr(_threads, "_openmp_threads_used", True)
    _threads._after_fork_in_child()
    assert _threads._forked_after_openmp
