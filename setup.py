"""Build of the countgrid extensions and of the static kernel library.

Holds only the extension definitions, the OpenMP probe and the static library
step.  The environment variable COUNTGRID_OPENMP selects OpenMP: "auto"
(default; probe, fall back to a serial build with a warning), "require" (fail
the build without it; used for wheels and CI) or "disable" (serial build).

The C kernels (csrc/*.c) are compiled once, with the flags and OpenMP decision
of the extensions, archived as countgrid/lib/libcountgrid.a (countgrid.lib
with MSVC) for C projects that link them, and linked from the same objects
into countgrid._kernels.  countgrid.cython_api calls them through the capsule
table of countgrid._kernels, so it is built from its .pyx alone.
"""
import glob
import json
import os
import shlex
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
C_SOURCES = ["csrc/window.c", "csrc/estep.c", "csrc/mstep.c", "csrc/itkernels.c",
             "csrc/plsa.c", "csrc/runtime.c"]
INCLUDE_DIRS = ["src/countgrid/include", "csrc"]
HEADERS = sorted(glob.glob("csrc/*.h")) + sorted(glob.glob("src/countgrid/include/countgrid/*.h"))
DEPENDS = HEADERS + ["src/countgrid/_ckernels.pxd"]
LIB_NAME = "countgrid"          # libcountgrid.a / countgrid.lib
KERNEL_EXTENSIONS = {"countgrid._kernels"}
# Extensions that wrap a part of the kernels: linked against the static library,
# so that only the object files they use are pulled in.
ARCHIVE_EXTENSIONS = {"countgrid._itkernels", "countgrid._plsa_kernels"}
# Extensions without kernels of their own (no OpenMP needed).
CAPSULE_EXTENSIONS = {"countgrid.cython_api"}

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
        # Executables are linked without LDFLAGS (extensions get them): pass them
        # so that a runtime found through LDFLAGS (libomp on macOS) is found here.
        ldflags = shlex.split(os.environ.get("LDFLAGS", ""))
        compiler.link_executable(objs, exe, extra_postargs=lflags + ldflags)
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
        objects = self.build_kernel_library(base + cflags)
        for ext in self.extensions:
            if ext.name in KERNEL_EXTENSIONS:
                ext.extra_compile_args = base + cflags
                ext.extra_link_args = lflags
                ext.extra_objects = objects
                ext.depends = list(ext.depends) + objects
            elif ext.name in ARCHIVE_EXTENSIONS:
                ext.extra_compile_args = base + cflags
                ext.extra_link_args = [self.library_path()] + lflags
                ext.depends = list(ext.depends) + [self.library_path()]
            elif ext.name in CAPSULE_EXTENSIONS:
                ext.extra_compile_args = base  # calls the kernels through the capsule
            else:
                ext.extra_compile_args = base + cflags
                ext.extra_link_args = lflags
        super().build_extensions()

    def library_dir(self):
        """countgrid/lib in the build directory (copied to the source tree by
        --inplace, see copy_extensions_to_source)."""
        return os.path.join(self.build_lib, "countgrid", "lib")

    def library_path(self):
        return os.path.join(self.library_dir(),
                            self.compiler.library_filename(LIB_NAME, lib_type="static"))

    def build_kernel_library(self, compile_args):
        """Compile csrc/*.c (position-independent, as for the extensions) and
        archive them into countgrid/lib; returns the object files.  Objects are
        reused while they are newer than every source and header and were built
        with the same flags."""
        tmp = os.path.join(self.build_temp, "clib")
        objects = self.compiler.object_filenames(C_SOURCES, output_dir=tmp)
        stamp = os.path.join(tmp, "flags.json")
        flags = json.dumps({"args": compile_args, "type": self.compiler.compiler_type,
                            "cc": getattr(self.compiler, "compiler_so", None)})
        previous = None
        if os.path.exists(stamp):
            with open(stamp) as fh:
                previous = fh.read()
        fresh = (not self.force and previous == flags
                 and all(os.path.exists(obj) and os.path.getmtime(obj) >= max(
                         os.path.getmtime(dep) for dep in [src] + HEADERS)
                         for src, obj in zip(C_SOURCES, objects)))
        if not fresh:
            objects = self.compiler.compile(C_SOURCES, output_dir=tmp,
                                            include_dirs=INCLUDE_DIRS,
                                            extra_postargs=compile_args, depends=HEADERS)
            with open(stamp, "w") as fh:
                fh.write(flags)
        libdir = self.library_dir()
        os.makedirs(libdir, exist_ok=True)
        lib = self.library_path()
        if not fresh and os.path.exists(lib):
            os.remove(lib)  # archivers add to an existing archive; start afresh
        self.compiler.create_static_lib(objects, LIB_NAME, output_dir=libdir)
        return objects

    def copy_extensions_to_source(self):
        super().copy_extensions_to_source()
        build_py = self.get_finalized_command("build_py")
        dest = os.path.join(build_py.get_package_dir("countgrid"), "lib")
        os.makedirs(dest, exist_ok=True)
        self.copy_file(self.library_path(), dest, level=self.verbose)

    def get_outputs(self):
        outputs = super().get_outputs()
        if self.compiler is not None:
            outputs.append(self.library_path())
        return outputs


extensions = [
    # The kernels (linked from the objects of the static library, see BuildExt)
    # and the capsule table of countgrid/countgrid_api.h.
    Extension(
        "countgrid._kernels",
        sources=["src/countgrid/_kernels.pyx"],
        include_dirs=INCLUDE_DIRS + [np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
        depends=DEPENDS + C_SOURCES,
    ),
    # Information-theoretic kernels and pLSA (wrappers of parts of the library).
    Extension(
        "countgrid._itkernels",
        sources=["src/countgrid/_itkernels.pyx"],
        include_dirs=INCLUDE_DIRS + [np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
        depends=DEPENDS,
    ),
    Extension(
        "countgrid._plsa_kernels",
        sources=["src/countgrid/_plsa_kernels.pyx"],
        include_dirs=INCLUDE_DIRS + [np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
        depends=DEPENDS,
    ),
    # Cython API: noexcept nogil wrappers calling the kernels through the capsule.
    Extension(
        "countgrid.cython_api",
        sources=["src/countgrid/cython_api.pyx"],
        include_dirs=["src/countgrid/include"],
        depends=DEPENDS + ["src/countgrid/cython_api.pxd"],
    ),
    # ZIP-GTM kernels (private: csrc/gtm.h is not part of the public C API).
    Extension(
        "countgrid._gtm_kernels",
        sources=["src/countgrid/_gtm_kernels.pyx", "csrc/gtm.c"],
        include_dirs=["csrc", np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
        depends=["csrc/gtm.h", "csrc/gtm_impl.h"],
    ),
    # Rate Adapting Poisson harmonium (private kernels, csrc/rap.h): BLAS from
    # SciPy's cython_blas, random numbers from NumPy's bit generators.
    Extension(
        "countgrid._rap_kernels",
        sources=["src/countgrid/_rap_kernels.pyx", "csrc/rap.c"],
        include_dirs=INCLUDE_DIRS + [np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
        depends=["csrc/rap.h", "csrc/rap_impl.h", "csrc/cg_internal.h", "csrc/cg_math.h"],
    ),
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": 3, "embedsignature": True},
        include_path=["src"],
    ),
    cmdclass={"build_ext": BuildExt},
)
