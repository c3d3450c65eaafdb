"""The wheel configuration says what the issue promises: CPython 3.10-3.13,
Linux (manylinux and musllinux, x86_64 and aarch64), macOS x86_64/arm64,
Windows AMD64, OpenMP required, tests of the installed wheel from outside the
source tree, an sdist, publishing on release tags.  Read from the source
checkout (skipped when the tests run without it)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = None

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
WORKFLOW = ROOT / "wheels.yml"

needs_checkout = pytest.mark.skipif(not PYPROJECT.is_file() or not WORKFLOW.is_file(),
                                    reason="not a source checkout")


@pytest.fixture(scope="module")
def cibw():
    if tomllib is None:
        pytest.skip("tomllib needs Python 3.11")
    with open(PYPROJECT, "rb") as fh:
        return tomllib.load(fh)["tool"]["cibuildwheel"]


def linux_identifiers():
    return {f"cp3{v}-{libc}_{arch}" for v in (10, 11, 12, 13)
            for libc in ("manylinux", "musllinux") for arch in ("x86_64", "aarch64")}


@needs_checkout
def test_cibuildwheel_config(cibw):
    assert cibw["build"] == ["cp310-*", "cp311-*", "cp312-*", "cp313-*"]
    assert cibw["environment"]["COUNTGRID_OPENMP"] == "require"
    # a platform environment replaces the global one: it must require OpenMP too
    assert "COUNTGRID_OPENMP=require" in cibw["macos"]["environment"]
    assert "environment" not in cibw["linux"] and "environment" not in cibw["windows"]
    assert cibw["linux"]["archs"] == ["x86_64", "aarch64"]
    assert cibw["windows"]["archs"] == ["AMD64"]
    assert "{project}/tests" in cibw["test-command"]
    assert cibw["test-extras"] == ["test"]
    assert cibw["test-environment"]["COUNTGRID_REQUIRE_COMPILER"] == "1"
    assert "auditwheel repair" in cibw["linux"]["repair-wheel-command"]
    assert "delocate-wheel" in cibw["macos"]["repair-wheel-command"]
    assert "delvewheel repair" in cibw["windows"]["repair-wheel-command"]
    assert "install_libomp_macos.sh" in cibw["macos"]["before-all"]
    assert (ROOT / "tools" / "wheels" / "install_libomp_macos.sh").is_file()


@needs_checkout
def test_workflow():
    yaml = pytest.importorskip("yaml")
    wf = yaml.safe_load(WORKFLOW.read_text())
    jobs = wf["jobs"]
    assert set(jobs) == {"build_wheels", "build_sdist", "publish"}
    matrix = jobs["build_wheels"]["strategy"]["matrix"]["include"]
    assert {(m["os"].split("-")[0], m["archs"]) for m in matrix} == {
        ("ubuntu", "x86_64"), ("ubuntu", "aarch64"), ("macos", "x86_64"),
        ("macos", "arm64"), ("windows", "AMD64")}
    steps = " ".join(str(s.get("run", "")) for s in jobs["build_wheels"]["steps"])
    assert "cibuildwheel --output-dir wheelhouse" in steps
    assert "check_wheel_contents.py" in steps
    assert "build --sdist" in " ".join(str(s.get("run", "")) for s in jobs["build_sdist"]["steps"])
    publish = jobs["publish"]
    assert "refs/tags/v" in publish["if"]
    assert set(publish["needs"]) == {"build_wheels", "build_sdist"}
    assert any("pypi-publish" in str(s.get("uses", "")) for s in publish["steps"])


@needs_checkout
def test_sdist_manifest():
    text = (ROOT / "MANIFEST.in").read_text()
    for line in ("recursive-include csrc *.c *.h *.txt", "recursive-include tools *.sh *.py",
                 "recursive-exclude src/countgrid *.c *.fingerprint",
                 "recursive-exclude src/countgrid _cdecl.pxd", "prune src/countgrid/lib",
                 "include data/README.md data/SHA256SUMS data/repo_data.py",
                 "exclude data/*.npz"):
        assert line in text
    # nothing else brings the datasets of data/ into the sdist, or the wheel
    assert not [ln for ln in text.splitlines()
                if ln.split()[:1] in (["recursive-include"], ["graft"])
                and ln.split()[1].strip("/") in ("data", ".")]
    if tomllib is not None:
        with open(PYPROJECT, "rb") as fh:
            setuptools = tomllib.load(fh)["tool"]["setuptools"]
        assert setuptools["package-dir"] == {"": "src"}      # data/ is outside the packages
        assert setuptools["include-package-data"] is False


@needs_checkout
def test_cibuildwheel_identifiers():
    exe = shutil.which("cibuildwheel")
    if exe is None:
        pytest.skip("cibuildwheel is not installed")
    out = subprocess.run([exe, "--print-build-identifiers", "--platform", "linux"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=""))
    assert out.returncode == 0, out.stderr
    assert set(out.stdout.split()) == linux_identifiers()


def test_check_wheel_contents_script(tmp_path):
    """The wheel-content checker accepts a complete wheel and names what is
    missing from an incomplete one."""
    script = ROOT / "tools" / "wheels" / "check_wheel_contents.py"
    if not script.is_file():
        pytest.skip("not a source checkout")
    import zipfile

    def wheel(name, files):
        path = tmp_path / name
        with zipfile.ZipFile(path, "w") as zf:
            for f in files:
                zf.writestr(f, "")
        return str(path)

    so = "cpython-311-x86_64-linux-gnu.so"
    full = [f"countgrid/{m}.{so}" for m in ("_kernels", "cython_api", "grid/_wrappers",
                                            "topics/_wrappers", "kernels/_wrappers",
                                            "rap/_wrappers", "gtm/_wrappers",
                                            "_utils/_cooc")] + [
            "countgrid/cython_api.pxd", "countgrid/include/countgrid/countgrid.h",
            "countgrid/include/countgrid/countgrid_api.h", "countgrid/lib/libcountgrid.a",
            "countgrid.libs/libgomp-f9a9ad78.so.1.0.0"]
    good = wheel("countgrid-0.1.0-cp311-cp311-manylinux_2_28_x86_64.whl", full)
    bad = wheel("countgrid-0.1.0-cp311-cp311-manylinux_2_28_x86_64.whl".replace("0.1.0", "0.1.1"),
                full[:-1])
    ok = subprocess.run([sys.executable, str(script), good], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout
    ko = subprocess.run([sys.executable, str(script), bad], capture_output=True, text=True)
    assert ko.returncode == 1 and "vendored libgomp" in ko.stdout
    # the bundled demo corpus is fine, the repository's datasets are not
    demo = ["countgrid/data/news20_3class.npz", "countgrid/data/news20_3class_texts.npz"]
    ok = subprocess.run([sys.executable, str(script), wheel(
        "countgrid-0.1.2-cp311-cp311-manylinux_2_28_x86_64.whl", full + demo)],
        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout
    for extra in ("data/news20_same.npz", "countgrid/data/news20_full.npz", "repo_data.py"):
        ko = subprocess.run([sys.executable, str(script), wheel(
            "countgrid-0.1.3-cp311-cp311-manylinux_2_28_x86_64.whl", full + demo + [extra])],
            capture_output=True, text=True)
        assert ko.returncode == 1 and f"must not hold {extra}" in ko.stdout, ko.stdout
