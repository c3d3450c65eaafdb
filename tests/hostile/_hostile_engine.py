"""Engine of the hostile suite (issue 13): isolation, classification and the report.

Processes::

    runner (any Python: pytest, tools/hostile.py)
      └─ zygote  (the Python under test: imports countgrid and builds the data, never
         │        computes with it, so forking it is safe for OpenMP)
         ├─ worker 1   forked from the zygote; runs cases one after another in-process
         └─ worker 2   (a worker that dies, times out or may have a damaged heap is
                        replaced by a new fork of the zygote)

The runner sends the list of case ids to the zygote and reads one JSON line per case.
Each case is classified as

``ok``            returned and its oracle holds (shape, finite values, reference);
``clear-error``   raised ValueError / TypeError / MemoryError / NotFittedError (or, for
                  file cases, an OSError such as FileNotFoundError) whose message names
                  one of the arguments the case declares (and, where the case says so,
                  of the class ``case.error`` with a message that matches ``case.match``);
``refused``       raised such a clear error on an input the case says must be accepted;
``unclear-error`` raised anything else (IndexError, ZeroDivisionError, OverflowError,
                  ARPACK errors, ...) or a message that names no declared argument
                  (or is not of ``case.error``, or does not match ``case.match``); also a
                  ``quiet`` case that passed but warned on the way;
``silent-wrong``  returned, but the oracle fails (NaN/inf, wrong shape, wrong value,
                  labels of the wrong type) or the case must have raised;
``crash``         the worker died (signal, abort, heap corruption; also a canary
                  computation that fails after the case);
``hang``          the case exceeded its time limit;
``n/a``           the entry point does not exist in the version under test.

Only ``ok`` and ``clear-error`` pass.
"""
import errno
import gc
import json
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
WORKER_SCRIPT = os.path.join(HERE, "_hostile_worker.py")

OUTCOMES = ("ok", "clear-error", "refused", "unclear-error", "silent-wrong", "crash", "hang",
            "n/a")
PASSING = ("ok", "clear-error", "n/a")
FAILING = ("refused", "unclear-error", "silent-wrong", "crash", "hang")

#: Memory budget of the countgrid memory rule inside the workers (a shared machine); the
#: address-space limit of a worker is its size at start plus ``ADDRESS_SPACE_HEADROOM``.
WORKER_MAX_MEMORY = "1G"
ADDRESS_SPACE_HEADROOM = 4 * 2**30


# --------------------------------------------------------------------------- classify
def names_in(message, names):
    """Does ``message`` name one of ``names`` (as a whole word, case-sensitive)?"""
    for name in names:
        if re.search(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])", message):
            return True
    return False


def _internal_value_error(exc):
    """ValueError subclasses that come from inside a library, never as a designed message."""
    kinds = []
    try:
        import numpy as np
        kinds.append(np.linalg.LinAlgError)
        kinds.append(getattr(np, "exceptions", np).AxisError)
    except Exception:  # pragma: no cover
        pass
    kinds.append(UnicodeError)
    return isinstance(exc, tuple(kinds))


def is_clear(exc, case, extra_names=()):
    """The error policy: type and message (see the module docstring)."""
    message = str(exc)
    names = tuple(case.names) + tuple(extra_names)
    kinds = (ValueError, TypeError, MemoryError)
    if case.files:
        kinds = kinds + (OSError,)
    if not isinstance(exc, kinds) or _internal_value_error(exc):
        return False, f"{type(exc).__name__} is not a designed error"
    if not names_in(message, names):
        return False, f"message names none of {list(names)}"
    error = getattr(case, "error", None)
    if error is not None and not isinstance(exc, error):
        want = error if isinstance(error, tuple) else (error,)
        expected = " or ".join(e.__name__ for e in want)
        return False, f"{type(exc).__name__}, not the {expected} the case expects"
    match = getattr(case, "match", None)
    if match is not None and not re.search(match, message):
        return False, f"message does not match {match!r}"
    return True, ""


def classify(case, value=None, exc=None, extra_names=()):
    """(outcome, detail) of a case that returned ``value`` or raised ``exc``; ``extra_names``
    are argument names the case found out while running (e.g. a damaged array)."""
    if case.classify is not None:
        return case.classify(case, value, exc)
    if exc is None:
        if case.expect == "raise":
            return "silent-wrong", f"returned instead of raising an error naming {list(case.names)}"
        if case.oracle is None:
            return "ok", ""
        try:
            problem = case.oracle(value)
        except Exception as oexc:  # the returned value is not even of the right kind
            problem = f"oracle could not read the result: {type(oexc).__name__}: {oexc}"
        return ("silent-wrong", problem) if problem else ("ok", "")
    clear, why = is_clear(exc, case, extra_names)
    if case.expect == "ok":
        if clear:
            return "refused", "raised on an input that must be accepted"
        return "unclear-error", why
    return ("clear-error", "") if clear else ("unclear-error", why)


# --------------------------------------------------------------------------- worker
class _Lines:
    """Read newline-terminated lines from a file descriptor without Python buffering."""

    def __init__(self, fd):
        self.fd, self.buf = fd, b""

    def readline(self, block=True):
        while b"\n" not in self.buf:
            if not block:
                ready, _, _ = select.select([self.fd], [], [], 0)
                if not ready:
                    return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return b""
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line + b"\n"

    def has_line(self):
        return b"\n" in self.buf


def _limit_address_space():
    try:
        with open("/proc/self/status") as fh:
            vm = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
        limit = vm + ADDRESS_SPACE_HEADROOM
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or hard > limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (OSError, ValueError, StopIteration):  # pragma: no cover - not Linux
        pass


def _canary_expected(cases_module):
    try:
        return cases_module.canary()
    except BaseException as exc:  # noqa: BLE001 - recorded, compared later
        return f"canary raised {type(exc).__name__}: {exc}"


def _worker_loop(cmd_fd, res_fd, log_path, cases_module, by_id):
    """Body of a worker process (forked from the zygote); never returns."""
    import faulthandler

    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
    faulthandler.enable(file=sys.stderr)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _limit_address_space()
    reader = _Lines(cmd_fd)
    expected_canary = _canary_expected(cases_module)
    while True:
        line = reader.readline()
        if not line:
            os._exit(0)
        case_id = json.loads(line)
        os.ftruncate(1, 0)
        result = run_case(by_id[case_id], cases_module, expected_canary)
        os.write(res_fd, (json.dumps(result) + "\n").encode())


def run_case(case, cases_module, expected_canary):
    """Run one case in this process and classify it (see the module docstring)."""
    t0 = time.perf_counter()
    result = {"id": case.id}
    missing = [n for n in case.needs if not cases_module.available(n)]
    if missing:
        result.update(outcome="n/a", detail="not in this version: " + ", ".join(missing),
                      seconds=0.0)
        return result
    tmp = tempfile.mkdtemp(prefix="countgrid-hostile-")
    value = exc = None
    caught = []
    cwd = os.getcwd()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ctx = cases_module.Context(tmp, case)
            try:
                value = case.run(ctx)
            except BaseException as e:  # noqa: BLE001 - every exception is classified
                exc = e
            outcome, detail = classify(case, value, exc, ctx.extra_names)
            if getattr(case, "quiet", False) and outcome in PASSING and caught:
                outcome, detail = "unclear-error", \
                    f"warned on the way: {caught[0].category.__name__}: {caught[0].message}"
    except BaseException as e:  # noqa: BLE001 - a failing oracle is the harness's bug
        outcome, detail = "unclear-error", f"harness: {type(e).__name__}: {e}"
    finally:
        os.chdir(cwd)
        shutil.rmtree(tmp, ignore_errors=True)
    if exc is not None:
        result["exception"] = type(exc).__name__
        result["message"] = str(exc)[:400]
        if outcome == "unclear-error":
            tb = traceback.extract_tb(exc.__traceback__)
            result["where"] = [f"{os.path.basename(f.filename)}:{f.lineno}" for f in tb[-3:]]
    result["warnings"] = sorted({f"{w.category.__name__}: {str(w.message)[:120]}"
                                 for w in caught
                                 if w.category.__name__ != "ConvergenceWarning"})[:5]
    del value, exc
    cases_module.cleanup()
    if case.recycle:
        gc.collect(0)            # free what the case left behind before the canary looks
    if case.canary:
        got = _canary_expected(cases_module)
        if got != expected_canary:
            outcome = "crash"
            detail = f"the process is damaged after the case: canary gave {got!r}"
    result.update(outcome=outcome, detail=detail, seconds=round(time.perf_counter() - t0, 4))
    if outcome == "crash" or (case.recycle and outcome not in ("ok", "clear-error", "n/a")):
        result["recycle"] = True                # a damaged worker is replaced
    return result


# --------------------------------------------------------------------------- zygote
class _Worker:
    def __init__(self, zygote, index):
        self.index = index
        self.log_path = os.path.join(zygote.tmp, f"worker{index}.log")
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker
            try:
                os.close(cmd_w)
                os.close(res_r)
                for other in zygote.workers:
                    if other is not None:
                        other.close_fds()
                for fd in zygote.close_in_child:
                    os.close(fd)
                _worker_loop(cmd_r, res_w, self.log_path, zygote.cases, zygote.by_id)
            finally:
                os._exit(70)
        os.close(cmd_r)
        os.close(res_w)
        self.pid, self.cmd, self.res = pid, cmd_w, res_r
        self.reader = _Lines(res_r)
        self.case = None
        self.deadline = None

    def close_fds(self):
        for fd in (self.cmd, self.res):
            try:
                os.close(fd)
            except OSError:
                pass

    def send(self, case):
        self.case = case
        self.started = time.perf_counter()
        self.deadline = self.started + case.timeout
        os.write(self.cmd, (json.dumps(case.id) + "\n").encode())

    def log_tail(self):
        try:
            with open(self.log_path, "rb") as fh:
                text = fh.read()[-20000:].decode("utf-8", "replace")
        except OSError:
            return ""
        return crash_summary(text)

    def kill(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return self.reap()

    def reap(self):
        self.close_fds()
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            return None
        return status


_FATAL = re.compile(r"Fatal Python error|double free|corrupted|free\(\)|malloc|munmap|"
                    r"realloc|stack smashing|libgomp|Thread creation|terminate called|Assertion",
                    re.IGNORECASE)


def crash_summary(text):
    """The useful lines of a dead worker's stderr: the fatal message (glibc, faulthandler,
    libgomp) and the innermost Python frames."""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    fatal = [ln.strip() for ln in lines if _FATAL.search(ln)][:2]
    frames = []
    for i, ln in enumerate(lines):
        if "most recent call first" in ln:
            frames = [f.strip() for f in lines[i + 1:i + 4] if f.strip().startswith("File")]
            break
    frames = [re.sub(r'File ".*/', 'File "', f) for f in frames]
    return " | ".join(fatal + frames)[:500]


def _describe_status(status):
    if status is None:
        return "worker vanished"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return f"killed by {name}"
    return f"exited with status {os.WEXITSTATUS(status)}"


class Zygote:
    """Forks workers from a process that imported countgrid but never ran a kernel."""

    def __init__(self, cases_module, n_workers):
        self.cases = cases_module
        self.by_id = {c.id: c for c in cases_module.build_cases()}
        self.tmp = tempfile.mkdtemp(prefix="countgrid-hostile-zygote-")
        self.workers = [None] * n_workers
        self.close_in_child = []

    def spawn(self, index):
        self.workers[index] = _Worker(self, index)

    def run(self, ids, emit):
        queue = [self.by_id[i] for i in ids]
        queue.sort(key=lambda c: -c.cost)        # long cases first: better balance
        queue.reverse()
        for i in range(len(self.workers)):
            self.spawn(i)
        busy = 0
        try:
            while queue or busy:
                for i, w in enumerate(self.workers):
                    if w.case is None and queue:
                        w.send(queue.pop())
                        busy += 1
                active = [w for w in self.workers if w.case is not None]
                now = time.perf_counter()
                wait = max(0.0, min(w.deadline for w in active) - now) if active else 0.1
                ready_fds = [w.res for w in active if w.reader.has_line()]
                if not ready_fds:
                    ready_fds, _, _ = select.select([w.res for w in active], [], [],
                                                    min(wait, 1.0) + 0.01)
                for w in list(active):
                    case = w.case
                    if w.res in ready_fds:
                        line = w.reader.readline()
                        if line:
                            result = json.loads(line)
                            w.case = None
                            busy -= 1
                            emit(self._finish(case, result))
                            if result.pop("recycle", False):
                                self._restart(w, graceful=True)
                            continue
                        status = w.reap()           # EOF: the worker died
                        tail = w.log_tail()
                        emit(self._finish(case, {
                            "id": case.id, "outcome": "crash",
                            "detail": f"worker {_describe_status(status)}"
                                      + (f": {tail}" if tail else ""),
                            "seconds": round(time.perf_counter() - w.started, 4)}))
                        w.case = None
                        busy -= 1
                        self.spawn(w.index)
                    elif time.perf_counter() > w.deadline:
                        w.kill()
                        emit(self._finish(case, {
                            "id": case.id, "outcome": "hang",
                            "detail": f"no answer within {case.timeout:g} s",
                            "seconds": case.timeout}))
                        w.case = None
                        busy -= 1
                        self.spawn(w.index)
        finally:
            for w in self.workers:
                if w is not None:
                    w.kill()
            shutil.rmtree(self.tmp, ignore_errors=True)

    def _restart(self, w, graceful):
        w.kill()
        self.spawn(w.index)

    def _finish(self, case, result):
        result.update(entry=case.entry, method=case.method, klass=case.klass,
                      expect=case.expect)
        return result


def zygote_main(argv=None):
    """Entry of ``_hostile_worker.py``: read the case ids (one JSON list on stdin), write
    one JSON result per line on stdout."""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cases", default="_hostile_cases")
    args = parser.parse_args(argv)
    sys.path[:0] = [HERE, TESTS]
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)                                 # stray prints must not reach the channel
    import importlib

    cases_module = importlib.import_module(args.cases)

    cases_module.preload()
    ids = json.loads(sys.stdin.readline())
    zygote = Zygote(cases_module, max(1, args.workers))
    zygote.close_in_child.append(out.fileno())
    unknown = [i for i in ids if i not in zygote.by_id]
    if unknown:
        raise SystemExit(f"unknown case ids: {unknown[:5]}")

    def emit(result):
        out.write(json.dumps(result) + "\n")

    zygote.run(ids, emit)
    out.write(json.dumps({"done": True}) + "\n")


# --------------------------------------------------------------------------- runner
def worker_env(extra=None):
    env = dict(os.environ)
    env.update({
        "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",  # single-threaded zygote
        "MPLBACKEND": "Agg",
        "LIBC_FATAL_STDERR_": "1",                            # glibc aborts to stderr
        "COUNTGRID_MAX_MEMORY": WORKER_MAX_MEMORY,
        "PYTHONFAULTHANDLER": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    })
    env.pop("COUNTGRID_DEBUG", None)
    if extra:
        env.update(extra)
    return env


def run_suite(python=None, workers=2, select_ids=None, progress=None, env=None,
              cases="_hostile_cases"):
    """Run the hostile suite with the interpreter ``python`` (default: this one).

    ``cases`` names the module of cases (in this folder).  Returns the list of result
    dicts (one per case, in case order) and the wall time.
    """
    import importlib

    sys.path.insert(0, HERE)
    cases_module = importlib.import_module(cases)

    all_cases = cases_module.build_cases()
    ids = [c.id for c in all_cases if select_ids is None or select_ids(c)]
    results = {}
    t0 = time.perf_counter()
    attempts = 0
    while len(results) < len(ids) and attempts < 3:
        attempts += 1
        pending = [i for i in ids if i not in results]
        with tempfile.TemporaryFile() as errlog:
            proc = subprocess.Popen([python or sys.executable, WORKER_SCRIPT,
                                     "--workers", str(workers), "--cases", cases],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=errlog, env=worker_env(env),
                                    cwd=tempfile.gettempdir())
            proc.stdin.write((json.dumps(pending) + "\n").encode())
            proc.stdin.flush()
            for line in proc.stdout:
                msg = json.loads(line)
                if msg.get("done"):
                    break
                results[msg["id"]] = msg
                if progress is not None:
                    progress(msg, len(results), len(ids))
            proc.stdin.close()
            proc.wait()
            if len(results) < len(ids) and attempts >= 3:
                errlog.seek(0)
                raise RuntimeError("the hostile zygote failed: "
                                   + errlog.read().decode("utf-8", "replace")[-3000:])
    wall = time.perf_counter() - t0
    by_id = {c.id: c for c in all_cases}
    out = []
    for i in ids:
        r = results[i]
        r.setdefault("names", list(by_id[i].names))
        out.append(r)
    return out, wall


# --------------------------------------------------------------------------- report
def tables(results):
    """Text tables of the outcomes per class of input and per entry point."""
    def table(key, title):
        rows = {}
        for r in results:
            rows.setdefault(r[key], dict.fromkeys(OUTCOMES, 0))[r["outcome"]] += 1
        width = max([len(title)] + [len(k) for k in rows]) + 2
        head = f"{title:<{width}}" + "".join(f"{o:>14}" for o in OUTCOMES) + f"{'total':>8}"
        lines = [head, "-" * len(head)]
        total = dict.fromkeys(OUTCOMES, 0)
        for k in sorted(rows):
            counts = rows[k]
            for o in OUTCOMES:
                total[o] += counts[o]
            lines.append(f"{k:<{width}}" + "".join(f"{counts[o]:>14}" for o in OUTCOMES)
                         + f"{sum(counts.values()):>8}")
        lines.append("-" * len(head))
        lines.append(f"{'all':<{width}}" + "".join(f"{total[o]:>14}" for o in OUTCOMES)
                     + f"{sum(total.values()):>8}")
        return "\n".join(lines)

    return table("klass", "class of input") + "\n\n" + table("entry", "entry point")


def failure_lines(results, outcomes=FAILING):
    """One line per failing case, grouped by outcome, then entry point."""
    out = []
    for outcome in outcomes:
        group = [r for r in results if r["outcome"] == outcome]
        if not group:
            continue
        out.append(f"## {outcome} ({len(group)})")
        for entry in sorted({r["entry"] for r in group}):
            sub = [r for r in group if r["entry"] == entry]
            out.append(f"### {entry} ({len(sub)})")
            for r in sub:
                what = r.get("detail", "")
                if r.get("exception"):
                    what = f"{r['exception']}: {r.get('message', '')[:160]!r}; {what}"
                out.append(f"- `{r['id']}`: {what[:300]}")
        out.append("")
    return "\n".join(out)


def summary(results):
    counts = dict.fromkeys(OUTCOMES, 0)
    for r in results:
        counts[r["outcome"]] += 1
    return counts
