"""Build of the countgrid extensions.

Holds only the extension definitions and the OpenMP probe.  The environment
variable COUNTGRID_OPENMP selects OpenMP: "auto" (default; probe, fall back to
a serial build with a warning), "require" (fail the build without it; used for
wheels and CI) or "disable" (serial build).
"""
import glob
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
C_SOURCES = ["csrc/window.c", "csrc/estep.c", "csrc/mstep.c", "csrc/runtime.c"]
INCLUDE_DIRS = ["src/countgrid/include", "csrc"]
DEPENDS = sorted(glob.glob("csrc/*.h")) + ["src/countgrid/include/countgrid/countgrid.h",
                                          "src/countgrid/_ckernels.pxd"]

PROBE = textwrap.dedent(
    """
    #include <omp.h>
    #include <stdio.h>
    int main(void) {
        int n = 0;
        #pragma omp parallel reduction(+:n)
        n += 1;
        printf("%d", n > 0 && omp_get_max_threads() > 0);
        return 0;
    }
    """
)


def openmp_flags(compiler):
    """(compile_args, link_args) for the compiler family."""
    ctype = compiler.compiler_type
    if ctype == "msvc":
        return ["/openmp"], []
    if sys.platform == "darwin" and "clang" in " ".join(compiler.compiler):
        return ["-Xpreprocessor", "-fopenmp"], ["-lomp"]
    return ["-fopenmp"], ["-fopenmp"]


def probe_openmp(compiler):
    """Compile and run a tiny OpenMP program; True if it works."""
    cflags, lflags = openmp_flags(compiler)
    tmp = tempfile.mkdtemp(prefix="countgrid-omp-")
    try:
        src = os.path.join(tmp, "probe.c")
        with open(src, "w") as fh:
            fh.write(PROBE)
        objs = compiler.compile([src], output_dir=tmp, extra_postargs=cflags)
        exe = os.path.join(tmp, "probe")
        compiler.link_executable(objs, exe, extra_postargs=lflags)
        out = subprocess.run([exe], capture_output=True, text=True, timeout=60)
        return out.returncode == 0 and out.stdout.strip() == "1"
    except Exception:  # any compile, link or run failure means no usable OpenMP
        return False
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class BuildExt(build_ext):
    def build_extensions(self):
        mode = os.environ.get("COUNTGRID_OPENMP", "auto").strip().lower()
        if mode not in ("auto", "require", "disable"):
            raise SystemExit(f"COUNTGRID_OPENMP must be auto, require or disable, not {mode!r}")
        use_omp = False
        if mode != "disable":
            use_omp = probe_openmp(self.compiler)
            if not use_omp and mode == "require":
                raise SystemExit("COUNTGRID_OPENMP=require but the compiler cannot build "
                                 "and run an OpenMP program")
            if not use_omp:
                print("WARNING: OpenMP not available; building countgrid serially",
                      file=sys.stderr)
        cflags, lflags = openmp_flags(self.compiler) if use_omp else ([], [])
        if self.compiler.compiler_type == "msvc":
            base = ["/O2"]
        else:
            # -fno-trapping-math lets compilers if-convert (and so vectorise) the
            # selects in csrc/cg_math.h; it does not change any result.
            base = ["-O3", "-fno-trapping-math"]
        for ext in self.extensions:
            ext.extra_compile_args = base + cflags
            ext.extra_link_args = lflags
        super().build_extensions()


def extension(name, pyx):
    return Extension(
        name,
        sources=[pyx] + C_SOURCES,
        include_dirs=INCLUDE_DIRS + [np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
        depends=DEPENDS,
    )


extensions = [
    extension("countgrid._kernels", "src/countgrid/_kernels.pyx"),
]

# --- Rate Adapting Poisson (countgrid.rap): its own extension, same flags and
# OpenMP handling (BuildExt sets them for every extension). BLAS comes from
# SciPy's cython_blas and random numbers from NumPy's bit generators.
RAP_SOURCES = ["csrc/rap.c"]
extensions.append(Extension(
    "countgrid._rap_kernels",
    sources=["src/countgrid/_rap_kernels.pyx"] + RAP_SOURCES,
    include_dirs=INCLUDE_DIRS + [np.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
    depends=["csrc/rap.h", "csrc/rap_impl.h", "csrc/cg_internal.h", "csrc/cg_math.h"],
))

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": 3, "embedsignature": True},
        include_path=["src"],
    ),
    cmdclass={"build_ext": BuildExt},
)
