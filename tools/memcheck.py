"""valgrind memcheck of one small fit and the inference methods of every model family
(tools/smoke_fits.py) with the installed countgrid (docs/robustness.md).

Runs the workload once under ``valgrind --tool=memcheck`` with ``PYTHONMALLOC=malloc`` (so
that every Python allocation is a malloc valgrind can check), two OpenMP threads and the
XML report, then reads the report: any invalid read or write, invalid or mismatched free,
use of an uninitialised value (a conditional jump, a system call parameter), overlapping
copy, or memory definitely lost, with a frame of a countgrid extension module in its
stack, fails the check.  Errors whose stacks never enter countgrid (CPython, NumPy,
OpenBLAS, SciPy's own noise) are only counted, and listed with ``--verbose``.

Usage: python tools/memcheck.py [FAMILY ...] [--keep DIR] [--track-origins] [--verbose]
Exit status: 0 clean, 1 errors in countgrid, 2 valgrind or the workload failed.
Takes 3-4 minutes on a busy machine (valgrind runs ~50x slower than native; most of the
time is importing NumPy, SciPy and scikit-learn).
"""
import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
SMOKE = os.path.join(HERE, "smoke_fits.py")

# Python bytecode being executed: the frames below it are the interpreter's callers.
PY_EVAL = ("_PyEval_EvalFrame", "PyEval_EvalCode", "_PyEval_Vector")

# Every memcheck error kind that is a real bug when countgrid is on the stack.
FATAL = {"InvalidRead", "InvalidWrite", "InvalidFree", "MismatchedFree", "InvalidJump",
         "UninitCondition", "UninitValue", "SyscallParam", "Overlap", "InvalidMemPool",
         "FishyValue", "ClientCheck", "Leak_DefinitelyLost"}


def countgrid_root(python):
    """Directory of the countgrid package that ``python`` imports."""
    out = subprocess.run([python, "-c", "import countgrid, os; "
                          "print(os.path.dirname(os.path.realpath(countgrid.__file__)))"],
                         capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
    return out.stdout.strip()


def frames(stack):
    for frame in stack.iter("frame"):
        yield {key: (frame.findtext(key) or "") for key in ("obj", "fn", "dir", "file", "line")}


def _in(obj, root):
    return bool(obj) and (obj.startswith(root + os.sep)
                          or os.path.realpath(obj).startswith(root + os.sep))


def ours(error, root):
    """True if countgrid code is at work in one of the error's stacks (the access, where
    the block was allocated or freed): a frame of a countgrid extension module above the
    innermost Python bytecode frame.  Below it lie only the Python code that called us
    (and, for an import, the module's initialisation running Python code)."""
    for stack in error.findall("stack"):
        for f in frames(stack):
            if f["fn"].startswith(PY_EVAL):
                break
            if _in(f["obj"], root):
                return True
    return False


def describe(error, root, n_frames=12):
    kind = error.findtext("kind")
    what = error.findtext("what") or error.findtext("xwhat/text") or ""
    lines = [f"{kind}: {what}"]
    auxes = [a.text or "" for a in error.findall("auxwhat")]
    for i, stack in enumerate(error.findall("stack")):
        if i > 0:
            lines.append(f"     {auxes[i - 1] if i - 1 < len(auxes) else ''}")
        for f in list(frames(stack))[:n_frames]:
            where = f"{f['file']}:{f['line']}" if f["file"] else os.path.basename(f["obj"])
            mark = "*" if _in(f["obj"], root) else " "
            lines.append(f"   {mark} {f['fn'] or '???'} ({where})")
    return "\n".join(lines)


CANARY = r"""
#include <stdlib.h>
int canary_invalid_read(int n) {
    int *p = malloc(n * sizeof(int)), v, i;
    for (i = 0; i < n; i++) p[i] = i;
    v = p[n];
    free(p);
    return v;
}
int canary_uninitialised(int n) {
    int *p = malloc(n * sizeof(int)), v = 0;
    if (p[n / 2] > 3) v = 1;
    free(p);
    return v;
}
int canary_leak(int n) { char *volatile p = malloc(n); p = NULL; return 0; }
"""
CANARY_KINDS = {"InvalidRead", "UninitCondition", "Leak_DefinitelyLost"}


def valgrind_command(valgrind, xml, track_origins):
    return [valgrind, "--tool=memcheck", "--xml=yes", f"--xml-file={xml}",
            "--leak-check=full", "--show-leak-kinds=definite",
            "--errors-for-leak-kinds=definite", "--num-callers=40",
            f"--track-origins={'yes' if track_origins else 'no'}",
            "--error-exitcode=0"]  # the verdict comes from the report (ours())


def verdict(xml, root):
    """(errors in countgrid, errors outside it) of an XML report."""
    errors = ET.parse(xml).getroot().findall("error")
    bad = [e for e in errors if e.findtext("kind") in FATAL and ours(e, root)]
    return bad, [e for e in errors if e not in bad]


def self_test(valgrind, python, work, env):
    """The check itself: a tiny library with a heap overflow, a branch on uninitialised
    memory and a leak, called through ctypes, must give exactly those three errors.
    Returns None if they were found, else what went wrong."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return "skipped (no C compiler)"
    canary = os.path.join(work, "canary")
    os.makedirs(canary, exist_ok=True)
    src, lib = os.path.join(canary, "canary.c"), os.path.join(canary, "canary.so")
    with open(src, "w") as fh:
        fh.write(CANARY)
    subprocess.run([cc, "-shared", "-fPIC", "-g", "-O0", "-o", lib, src], check=True)
    xml = os.path.join(canary, "memcheck.xml")
    code = (f"import ctypes; c = ctypes.CDLL({lib!r}); c.canary_invalid_read(4); "
            "c.canary_uninitialised(8); c.canary_leak(100)")
    subprocess.run(valgrind_command(valgrind, xml, False) + [python, "-c", code], env=env,
                   cwd=canary, check=True, capture_output=True, timeout=600)
    bad, _ = verdict(xml, canary)
    found = {e.findtext("kind") for e in bad}
    if found != CANARY_KINDS:
        return f"the deliberate errors were not all found: {sorted(found)}"
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("families", nargs="*", help="families of tools/smoke_fits.py "
                        "(default: all)")
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter whose countgrid is checked (default: this one)")
    parser.add_argument("--keep", metavar="DIR", help="keep the XML reports in DIR")
    parser.add_argument("--track-origins", action="store_true",
                        help="where uninitialised values come from (about 2x slower)")
    parser.add_argument("--verbose", action="store_true",
                        help="also list the errors outside countgrid")
    parser.add_argument("--no-self-test", action="store_true",
                        help="skip the check that deliberate errors are found")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds (default 1800)")
    args = parser.parse_args(argv)

    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("memcheck: valgrind not found", file=sys.stderr)
        return 2
    root = countgrid_root(args.python)
    work = args.keep or tempfile.mkdtemp(prefix="countgrid-memcheck-")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, PYTHONMALLOC="malloc", OMP_NUM_THREADS="2",
               # idle OpenMP threads sleep instead of spinning: valgrind runs one thread
               # at a time, and spinning would starve the others
               OMP_WAIT_POLICY="passive", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    start = time.monotonic()
    if not args.no_self_test:
        problem = self_test(valgrind, args.python, work, env)
        if problem and not problem.startswith("skipped"):
            print(f"memcheck: self-test failed: {problem}", file=sys.stderr)
            return 2
        print(f"memcheck: self-test {problem or 'passed'} ({time.monotonic() - start:.0f} s)",
              flush=True)

    xml = os.path.join(work, "memcheck.xml")
    cmd = valgrind_command(valgrind, xml, args.track_origins)
    cmd += [args.python, SMOKE, *args.families]
    print(f"memcheck: countgrid in {root}; report {xml}", flush=True)
    start = time.monotonic()
    try:
        run = subprocess.run(cmd, env=env, cwd=work, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print(f"memcheck: the workload did not finish in {args.timeout:.0f} s", file=sys.stderr)
        return 2
    elapsed = time.monotonic() - start
    if run.returncode != 0:
        print(f"memcheck: the workload failed under valgrind (exit {run.returncode})",
              file=sys.stderr)
        return 2

    bad, foreign = verdict(xml, root)
    counts = collections.Counter(e.findtext("kind") for e in foreign)
    print(f"memcheck: {elapsed:.0f} s under valgrind; {len(bad)} error(s) in countgrid, "
          f"{len(foreign)} outside it {dict(counts) or ''}")
    for e in bad:
        print(describe(e, root), file=sys.stderr)
    if args.verbose:
        for e in foreign:
            print(describe(e, root))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
