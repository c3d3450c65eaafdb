"""Helpers that build a tiny downstream extension against the countgrid that the
tests import (normally the installed package), as another project would.

Each build runs ``python setup.py build_ext --inplace`` in a temporary
directory, in a subprocess with the test process's environment, so it uses
exactly the public entry points a downstream project uses: ``cimport
countgrid.cython_api`` found on sys.path, ``countgrid.get_include()``,
``countgrid.get_library_dir()``, ``countgrid.get_link_args()``.

A test is skipped only when no C compiler works here (a trivial extension
cannot be built, e.g. ``CC=false`` in tools/check_wheel.sh); any other build
failure is a test failure.  With COUNTGRID_REQUIRE_COMPILER=1 (wheel builds,
tools/check_wheel.sh) a missing compiler fails instead of skipping.
"""
import functools
import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import countgrid

BUILD_TIMEOUT = 300


def _run_build(workdir, setup_py, files):
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "setup.py").write_text(textwrap.dedent(setup_py))
    for name, text in files.items():
        (workdir / name).write_text(textwrap.dedent(text))
    env = dict(os.environ)
    if env.get("PYTHONPATH"):  # the build runs elsewhere: make entries absolute
        env["PYTHONPATH"] = os.pathsep.join(
            os.path.abspath(p) for p in env["PYTHONPATH"].split(os.pathsep) if p)
    return subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"],
                          cwd=workdir, env=env, capture_output=True, text=True,
                          timeout=BUILD_TIMEOUT)


@functools.lru_cache(maxsize=None)
def _compiler_problem(tmpdir):
    """None if a trivial C extension builds here, else the reason."""
    out = _run_build(
        Path(tmpdir) / "probe",
        """
        from setuptools import Extension, setup
        setup(name="cg_probe", ext_modules=[Extension("cg_probe", ["cg_probe.c"])])
        """,
        {"cg_probe.c": """
        #include <Python.h>
        static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "cg_probe", NULL, -1, NULL};
        PyMODINIT_FUNC PyInit_cg_probe(void) { return PyModule_Create(&mod); }
        """},
    )
    if out.returncode != 0:
        return ("no working C compiler to build a downstream extension: "
                + (out.stderr.strip().splitlines() or ["?"])[-1])
    return None


def require_compiler(tmp_path_factory):
    problem = _compiler_problem(str(tmp_path_factory.getbasetemp()))
    if problem:
        if os.environ.get("COUNTGRID_REQUIRE_COMPILER") == "1":
            pytest.fail(f"COUNTGRID_REQUIRE_COMPILER=1 but {problem}", pytrace=False)
        pytest.skip(problem)


def require_importable_package():
    """Cython finds countgrid/cython_api.pxd through sys.path, as it will in a
    downstream build: that needs countgrid imported from a sys.path entry
    (an installed package, or PYTHONPATH=src after build_ext --inplace), not
    through an editable-install import hook."""
    parent = os.path.dirname(os.path.dirname(os.path.abspath(countgrid.__file__)))
    entries = {os.path.abspath(p or os.getcwd()) for p in sys.path}
    if parent not in entries:
        pytest.skip(f"countgrid is imported from {parent}, which is not on sys.path "
                    "(editable install): Cython cannot cimport its .pxd from there")


def build_and_import(workdir, module, setup_py, files):
    """Builds the extension `module` in `workdir` and imports it.  The build
    must see the countgrid this process imported."""
    check = ("import countgrid as _cg\n"
             "print('COUNTGRID_FROM=' + _cg.__file__)\n")
    out = _run_build(workdir, check + textwrap.dedent(setup_py), files)
    if out.returncode != 0:
        pytest.fail(f"downstream build of {module} failed:\n{out.stdout[-4000:]}\n"
                    f"{out.stderr[-4000:]}", pytrace=False)
    seen = [line.split("=", 1)[1] for line in out.stdout.splitlines()
            if line.startswith("COUNTGRID_FROM=")]
    assert seen and os.path.samefile(seen[0], countgrid.__file__), (seen, countgrid.__file__)
    built = sorted(Path(workdir).glob(f"{module}.*"))
    built = [p for p in built if p.suffix in (".so", ".pyd")]
    assert built, f"no extension {module} in {workdir}: {os.listdir(workdir)}"
    spec = importlib.util.spec_from_file_location(module, built[0])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# The downstream setup.py files, exactly as in docs/c_api.md.
SETUP_CAPSULE = """
import countgrid
from setuptools import Extension, setup

setup(
    name="cg_downstream_capsule",
    ext_modules=[Extension("cg_downstream_capsule", ["cg_downstream_capsule.c"],
                           include_dirs=[countgrid.get_include()])],
)
"""

SETUP_STATIC = """
import countgrid
from setuptools import Extension, setup

setup(
    name="cg_downstream_static",
    ext_modules=[Extension("cg_downstream_static", ["cg_downstream_static.c"],
                           include_dirs=[countgrid.get_include()],
                           library_dirs=[countgrid.get_library_dir()],
                           libraries=["countgrid"],
                           extra_link_args=countgrid.get_link_args())],
)
"""

SETUP_CYTHON = """
from setuptools import Extension, setup
from Cython.Build import cythonize

setup(
    name="cg_downstream_cy",
    ext_modules=cythonize([Extension("cg_downstream_cy", ["cg_downstream_cy.pyx"])],
                          language_level=3),
)
"""
