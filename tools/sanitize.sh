#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer run of the C kernels and the Cython
# wrappers (docs/robustness.md), in one command:
#
#  1. a throwaway venv in WORKDIR (never the venv you test with) with the build and test
#     dependencies;
#  2. a copy of the checkout (so the in-tree build/ of normal builds is not touched),
#     built there with COUNTGRID_SANITIZE (default address,undefined,float-cast-overflow:
#     -fsanitize=... -fno-omit-frame-pointer -g -O1 -fno-sanitize-recover=all, setup.py);
#  3. a small fit of every estimator (tools/smoke_fits.py), corrupt sparse structures
#     handed straight to every kernel wrapper (tools/fuzz_wrappers.py) and the kernel
#     tests (every C kernel against its NumPy reference, float32/float64, 1 and several
#     threads, the C API, the SIMD variants), with the sanitizer runtime preloaded into the
#     unsanitized Python; ASan reports go to WORKDIR/logs, UBSan's (stderr only) are found
#     in the logs;
#  4. fails if a test fails or if any sanitizer report was written.
#
# Leaks are not checked here (detect_leaks=0: CPython frees little at exit by design);
# tools/memcheck.py checks them, and invalid accesses again, with valgrind.
#
# Usage: tools/sanitize.sh [WORKDIR] [-- PYTEST_ARGS...]
#   WORKDIR   default: a new temporary directory (removed on success unless KEEP=1)
#   PYTEST_ARGS  replace the default test selection (e.g. -- tests/rap -x)
#   PYTHON    interpreter to build the venv from (default python3)
#   CC        GCC (default gcc) or Clang
#   COUNTGRID_SANITIZE  sanitizers (default address,undefined,float-cast-overflow)
#   SKIP_BUILD=1  reuse the venv and the build already in WORKDIR (to rerun the tests)
# Takes 6-9 minutes on 2 shared cores (the build and the kernel tests: about 3 min each).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK=""
if [[ $# -gt 0 && $1 != "--" ]]; then WORK="$1"; shift; fi
if [[ $# -gt 0 && $1 == "--" ]]; then shift; fi
PYTEST_EXTRA=("$@")
KEEP="${KEEP:-0}"
if [[ -z $WORK ]]; then
    WORK="$(mktemp -d -t countgrid-sanitize-XXXXXX)"
else
    KEEP=1
    mkdir -p "$WORK"
    WORK="$(cd "$WORK" && pwd)"
fi
PY="${PYTHON:-python3}"
CC="${CC:-gcc}"
# float-cast-overflow (a double out of range, or NaN, converted to an integer) is not part
# of GCC's "undefined" group
export COUNTGRID_SANITIZE="${COUNTGRID_SANITIZE:-address,undefined,float-cast-overflow}"
START=$SECONDS

step() { printf '\n==> [%ss] %s\n' "$((SECONDS - START))" "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
pipq() { "$VPY" -m pip -q "$@" 2> >(grep -v "is ignored: it is neither" >&2); }

# The runtime to preload into the (unsanitized) interpreter: it must come first.
case "$("$CC" --version 2>/dev/null | head -1)" in
    *clang*) RUNTIME="$("$CC" -print-file-name=libclang_rt.asan-x86_64.so)" ;;
    *)       RUNTIME="$("$CC" -print-file-name=libasan.so)" ;;
esac
if [[ $COUNTGRID_SANITIZE == *address* ]]; then
    [[ -f $RUNTIME ]] || fail "no ASan runtime found ($CC -print-file-name gave $RUNTIME)"
else
    RUNTIME=""
fi
# GCC keeps UBSan in its own runtime: preload it too, for code that links the static
# library without the sanitizer flags (the downstream C tests of tests/capi).
if [[ $COUNTGRID_SANITIZE == *undefined* && $RUNTIME != *clang_rt* ]]; then
    UBSAN_RT="$("$CC" -print-file-name=libubsan.so)"
    if [[ -f $UBSAN_RT ]]; then RUNTIME="${RUNTIME:+$RUNTIME }$UBSAN_RT"; fi
fi

VPY="$WORK/venv/bin/python"
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    step "throwaway venv $WORK/venv ($PY)"
    "$PY" -m venv "$WORK/venv"
    VPY="$WORK/venv/bin/python"
    pipq install --upgrade pip
    # build (no isolation: the flags must reach this build) and test dependencies
    pipq install "numpy>=2" scipy threadpoolctl "Cython>=3" "setuptools>=68" pytest hypothesis \
        scikit-learn

    step "copy of the checkout, built with COUNTGRID_SANITIZE=$COUNTGRID_SANITIZE"
    rm -rf "$WORK/src"
    mkdir -p "$WORK/src"
    tar -C "$REPO" --exclude=./build --exclude=./.git --exclude=./dist --exclude=./wheelhouse \
        --exclude='*.so' --exclude='*.o' --exclude='*.a' --exclude='*.c.fingerprint' \
        --exclude=.hypothesis --exclude=.pytest_cache -cf - . | tar -C "$WORK/src" -xf -
    # generated Cython C is left out above only through the fingerprints: regenerate it all
    find "$WORK/src/src/countgrid" -name '*.c' -delete
    CC="$CC" COUNTGRID_OPENMP=require "$VPY" -m pip install -q --no-build-isolation --no-deps \
        "$WORK/src" > "$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; fail "build failed"; }
fi
rm -rf "$WORK/logs" "$WORK/canary"
mkdir -p "$WORK/logs"
# every extension must really carry the sanitizer
cd "$WORK"   # import the venv's countgrid, not a source tree
"$VPY" - <<'EOF'
import glob, os, subprocess, sys
import importlib.util
root = os.path.dirname(importlib.util.find_spec("countgrid").origin)
sos = sorted(glob.glob(os.path.join(root, "**", "*.so"), recursive=True))
assert len(sos) >= 7, sos
for so in sos:
    syms = subprocess.run(["nm", "-D", so], capture_output=True, text=True).stdout
    if "__asan_" not in syms and "__ubsan_" not in syms:
        sys.exit(f"{so} is not instrumented")
print(f"{len(sos)} instrumented extensions in {root}")
EOF

# The selected tests: every C-kernel test file, the C API, the SIMD variants, the fits.
TESTS=(tests/grid/test_grid_kernels.py tests/kernels/test_itkernels.py tests/topics/test_plsa.py
       tests/rap tests/gtm tests/capi tests/test_simd.py tests/test_sparse.py
       tests/test_cooccurrence.py tests/test_coherence.py tests/scale/test_coarse_estep.py
       tests/scale/test_accelerate.py)
for t in "$REPO"/tests/topics/*kernel*; do if [[ -e $t ]]; then TESTS+=("${t#"$REPO"/}"); fi; done
if [[ ${#PYTEST_EXTRA[@]} -gt 0 ]]; then TESTS=("${PYTEST_EXTRA[@]}"); fi

# ASan reports go to files (also those of subprocesses); UBSan next to ASan writes to
# stderr only, so the pytest capture is kept at the Python level (--capture=sys) and every
# log is searched too: any report fails the run.
SAN_COMMON="print_stacktrace=1:halt_on_error=1"
sanitized() {  # sanitized LOGDIR COMMAND...
    local logs="$1"; shift
    env LD_PRELOAD="$RUNTIME${LD_PRELOAD:+ $LD_PRELOAD}" \
        ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:log_path=$logs/report:$SAN_COMMON" \
        UBSAN_OPTIONS="log_path=$logs/report:$SAN_COMMON" \
        PYTHONMALLOC=malloc OMP_NUM_THREADS=2 "$@"
}
PATTERN="runtime error:|ERROR: AddressSanitizer|ERROR: LeakSanitizer|SUMMARY: UndefinedBehaviorSanitizer"
reports() {  # reports WHAT LOGDIR OUTPUT...: fail on any sanitizer report
    local what="$1" logs="$2"; shift 2
    local found=0
    if compgen -G "$logs/report*" > /dev/null; then
        for f in "$logs"/report*; do echo "---- $f"; head -80 "$f"; done
        found=1
    fi
    if grep -Eqs "$PATTERN" "$@"; then
        grep -Eh -A30 "$PATTERN" "$@" | head -120
        found=1
    fi
    [[ $found == 0 ]] || fail "sanitizer reports ($what)"
}

step "self-test: a deliberate heap overflow and shift overflow are reported"
mkdir -p "$WORK/canary"
printf '%s\n' '#include <stdlib.h>' \
    'int canary_heap(int n) { int *p = malloc(n * sizeof(int)); volatile int v = p[n]; free(p); return v; }' \
    'int canary_shift(int s) { return 1 << s; }' > "$WORK/canary/canary.c"
"$CC" -shared -fPIC -g -fsanitize="$COUNTGRID_SANITIZE" -fno-sanitize-recover=all \
    -o "$WORK/canary/canary.so" "$WORK/canary/canary.c"
canary() {  # canary FUNCTION ARGUMENT EXPECTED-REPORT
    local dir="$WORK/canary/$1"
    mkdir -p "$dir"
    (cd "$WORK/canary" && sanitized "$dir" "$VPY" -c \
        "import ctypes; ctypes.CDLL('./canary.so').$1($2)") > "$dir/out.txt" 2>&1 || true
    grep -qs "$3" "$dir"/* || fail "the sanitizers missed $1 (no '$3' report)"
    echo "$1: reported ($3)"
}
if [[ $COUNTGRID_SANITIZE == *address* ]]; then canary canary_heap 4 heap-buffer-overflow; fi
if [[ $COUNTGRID_SANITIZE == *undefined* ]]; then canary canary_shift 40 "shift exponent"; fi

step "a small fit of every estimator under the sanitizers (tools/smoke_fits.py)"
(cd "$WORK" && sanitized "$WORK/logs" "$VPY" "$REPO/tools/smoke_fits.py") 2>&1 \
    | tee "$WORK/smoke.log" || { reports "smoke fits" "$WORK/logs" "$WORK/smoke.log"; \
                                 fail "smoke fits (log: $WORK/smoke.log)"; }
reports "smoke fits" "$WORK/logs" "$WORK/smoke.log"

step "corrupt sparse structures into every kernel wrapper (tools/fuzz_wrappers.py)"
(cd "$WORK" && sanitized "$WORK/logs" "$VPY" "$REPO/tools/fuzz_wrappers.py") 2>&1 \
    | tee "$WORK/fuzz.log" || { reports "fuzzed wrappers" "$WORK/logs" "$WORK/fuzz.log"; \
                                fail "fuzzed wrappers (log: $WORK/fuzz.log)"; }
reports "fuzzed wrappers" "$WORK/logs" "$WORK/fuzz.log"

step "kernel tests under the sanitizers (${TESTS[*]})"
(cd "$REPO" && sanitized "$WORK/logs" env COUNTGRID_REQUIRE_COMPILER=1 \
    "$VPY" -m pytest -q -p no:cacheprovider --capture=sys "${TESTS[@]}") \
    > "$WORK/pytest.log" 2>&1 || true
tail -25 "$WORK/pytest.log"
LAST="$(tail -1 "$WORK/pytest.log")"
reports "kernel tests" "$WORK/logs" "$WORK/pytest.log"
[[ $LAST == *passed* && ! $LAST =~ [0-9]+\ failed && $LAST != *error* ]] \
    || fail "tests under the sanitizers: $LAST (log: $WORK/pytest.log)"

step "done in $((SECONDS - START)) s: no sanitizer report"
if [[ $KEEP != 1 ]]; then rm -rf "$WORK"; fi
