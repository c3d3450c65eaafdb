"""Build of the countgrid extensions and of the static kernel library.

Holds only the extension definitions, the OpenMP probe, the generation of the C/Cython
boundary and the compilation of the C kernels.  The environment variable COUNTGRID_OPENMP
selects OpenMP: "auto" (default; probe, fall back to a serial build with a warning),
"require" (fail the build without it; used for wheels and CI) or "disable" (serial
build).  COUNTGRID_SANITIZE (e.g. "address,undefined"; GCC/Clang only) builds the kernels
and the extensions with those sanitizers, -O1 -g, for tools/sanitize.sh
(docs/robustness.md); never for a wheel.

Layout (docs/architecture.md): csrc/gen_api.py first expands csrc/signatures.txt into the
public headers, the capsule table and the Cython declarations.  The public kernels
(csrc/common, grid, itk, plsa) are compiled once, archived as countgrid/lib/libcountgrid.a
(countgrid.lib with MSVC) for C projects that link them, and linked from the same objects
into countgrid._kernels, which exports them through a capsule; the family wrappers
(countgrid.grid._wrappers, ...) and countgrid.cython_api call them through it.  The
private kernels (csrc/rap, csrc/gtm) are compiled once each and linked into their family's
wrapper only.  C sources compile in parallel, then the extensions build in parallel.
"""
import glob
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "csrc"))
import gen_api  # noqa: E402  (csrc/gen_api.py: the generated C/Cython boundary)

gen_api.generate(HERE)

# The public kernels: the static library and countgrid._kernels.
LIBRARY_SOURCES = ["csrc/common/runtime.c", "csrc/grid/window.c", "csrc/grid/estep.c",
                   "csrc/grid/mstep.c", "csrc/kernels/itkernels.c", "csrc/topics/plsa.c"]
# Private kernels, each linked into one family wrapper.
PRIVATE_SOURCES = {"countgrid.rap._wrappers": ["csrc/rap/rap.c"],
                   "countgrid.gtm._wrappers": ["csrc/gtm/gtm.c"],
                   "countgrid._utils._cooc": ["csrc/cooc/cooc.c"]}
INCLUDE_DIRS = ["src/countgrid/include", "csrc", "csrc/common", np.get_include()]
HEADERS = sorted(glob.glob("csrc/*/*.h")) + sorted(glob.glob("src/countgrid/include/countgrid/*.h"))
LIB_NAME = "countgrid"          # libcountgrid.a / countgrid.lib
NPY_API = [("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")]

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


def sanitize_flags(compiler):
    """(compile_args, link_args) for COUNTGRID_SANITIZE, or ([], []) when it is unset.

    A sanitizer build is for finding bugs (tools/sanitize.sh, docs/robustness.md): -O1 -g
    and frame pointers for readable reports, and any undefined behaviour aborts instead of
    printing and going on, so a test run cannot pass over it."""
    value = os.environ.get("COUNTGRID_SANITIZE", "").strip().lower()
    if not value or value in ("0", "no", "none", "off"):
        return [], []
    names = [n.strip() for n in value.split(",") if n.strip()]
    known = {"address", "undefined", "leak", "float-divide-by-zero", "float-cast-overflow",
             "bounds"}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"COUNTGRID_SANITIZE: unknown sanitizer(s) {unknown}; use a "
                         f"comma-separated subset of {sorted(known)}")
    if compiler.compiler_type == "msvc":
        raise SystemExit("COUNTGRID_SANITIZE needs GCC or Clang")
    spec = ",".join(names)
    cflags = [f"-fsanitize={spec}", "-fno-omit-frame-pointer", "-g", "-O1"]
    if set(names) & {"undefined", "float-divide-by-zero", "float-cast-overflow", "bounds"}:
        cflags.append("-fno-sanitize-recover=all")
    return cflags, [f"-fsanitize={spec}"]


class BuildExt(build_ext):
    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

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
            kernel_opt, wrapper_opt = ["/O2"], ["/O2"]
        else:
            # -fno-trapping-math lets compilers if-convert (and so vectorise) the selects
            # in csrc/common/cg_math.h; it does not change any result.  The Cython wrappers
            # only validate and call: -O1 compiles them in a third of the -O3 time.
            kernel_opt, wrapper_opt = ["-O3", "-fno-trapping-math"], ["-O1"]
        san_cflags, san_lflags = sanitize_flags(self.compiler)
        if san_cflags:  # the sanitizer's -O1 -g come last and so win
            print(f"countgrid: sanitizer build ({' '.join(san_cflags)})", file=sys.stderr)
        kernel_opt, wrapper_opt = kernel_opt + san_cflags, wrapper_opt + san_cflags
        lflags = lflags + san_lflags
        # An in-tree build directory is shared by normal and sanitizer builds: when the
        # mode changes, rebuild everything (the wrappers would otherwise be reused).
        mode_stamp = os.path.join(self.build_temp, "sanitize.txt")
        previous_mode = open(mode_stamp).read() if os.path.exists(mode_stamp) else ""
        if previous_mode != " ".join(san_cflags):
            self.force = True
        objects = self.compile_kernels(kernel_opt + cflags)
        self.archive(objects["library"])
        for ext in self.extensions:
            ext.extra_compile_args = list(wrapper_opt)
            ext.extra_link_args = list(san_lflags)
            if ext.name == "countgrid._kernels":
                ext.extra_objects = objects["library"]
                ext.extra_link_args = lflags
            elif ext.name in PRIVATE_SOURCES:
                ext.extra_objects = objects[ext.name]
                ext.extra_link_args = lflags
            ext.depends = list(ext.depends) + list(ext.extra_objects or [])
        super().build_extensions()
        with open(mode_stamp, "w") as fh:
            fh.write(" ".join(san_cflags))

    def compile_kernels(self, compile_args):
        """Compile every C kernel source once, in parallel: {"library": objects of the public
        kernels, <extension>: objects of its private kernels}.  Objects are reused while they
        are newer than every source and header and were built with the same flags."""
        tmp = os.path.join(self.build_temp, "csrc")
        groups = {"library": LIBRARY_SOURCES, **PRIVATE_SOURCES}
        sources = [src for group in groups.values() for src in group]
        stamp = os.path.join(tmp, "flags.json")
        flags = json.dumps({"args": compile_args, "type": self.compiler.compiler_type,
                            "cc": getattr(self.compiler, "compiler_so", None)})
        previous = None
        if os.path.exists(stamp):
            with open(stamp) as fh:
                previous = fh.read()

        def stale(src):
            obj = self.compiler.object_filenames([src], output_dir=tmp)[0]
            return (self.force or previous != flags or not os.path.exists(obj)
                    or os.path.getmtime(obj) < max(os.path.getmtime(d)
                                                   for d in [src] + HEADERS))

        def compile_one(src):
            return self.compiler.compile([src], output_dir=tmp, include_dirs=INCLUDE_DIRS,
                                         extra_postargs=compile_args, depends=HEADERS)[0]

        todo = [src for src in sources if stale(src)]
        with ThreadPoolExecutor(max_workers=self.parallel or 1) as pool:
            list(pool.map(compile_one, todo))
        if todo:
            os.makedirs(tmp, exist_ok=True)
            with open(stamp, "w") as fh:
                fh.write(flags)
        self.kernels_rebuilt = bool(todo)
        return {name: self.compiler.object_filenames(group, output_dir=tmp)
                for name, group in groups.items()}

    def library_dir(self):
        """countgrid/lib in the build directory (copied to the source tree by --inplace,
        see copy_extensions_to_source)."""
        return os.path.join(self.build_lib, "countgrid", "lib")

    def library_path(self):
        return os.path.join(self.library_dir(),
                            self.compiler.library_filename(LIB_NAME, lib_type="static"))

    def archive(self, objects):
        """The static library of the public kernels, from the objects of countgrid._kernels."""
        os.makedirs(self.library_dir(), exist_ok=True)
        lib = self.library_path()
        if self.kernels_rebuilt and os.path.exists(lib):
            os.remove(lib)  # archivers add to an existing archive; start afresh
        self.compiler.create_static_lib(objects, LIB_NAME, output_dir=self.library_dir())

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


def extension(name, depends=()):
    """An extension built from the .pyx of its module path."""
    path = os.path.join("src", *name.split(".")) + ".pyx"
    return Extension(name, sources=[path], include_dirs=INCLUDE_DIRS, define_macros=NPY_API,
                     depends=HEADERS + list(depends))


extensions = [
    # The public kernels and the capsule table of countgrid/countgrid_api.h.
    extension("countgrid._kernels"),
    # Family wrappers: the public kernels through the capsule, the private ones linked.
    extension("countgrid.grid._wrappers"),
    extension("countgrid.topics._wrappers"),
    extension("countgrid.kernels._wrappers"),
    extension("countgrid.rap._wrappers"),
    extension("countgrid.gtm._wrappers"),
    # The co-occurrence counts of the coherence measures (a private helper, no family).
    extension("countgrid._utils._cooc"),
    # Cython API: noexcept nogil functions calling the kernels through the capsule.
    extension("countgrid.cython_api"),
]

CYTHON_OPTIONS = dict(compiler_directives={"language_level": 3, "embedsignature": True},
                      include_path=["src"])


def cythonize_changed(exts):
    """cythonize the extensions whose Cython sources changed, by content.

    cythonize decides by timestamps, and every isolated build (pip install .) installs a
    fresh Cython whose own .pxd files are newer than any generated C: everything would be
    regenerated and recompiled.  A fingerprint of what the C depends on (the .pyx, every
    .pxd of the package, the Cython version, the options) is kept next to each generated
    file instead; an unchanged one is reused untouched, so build_ext skips it too.
    """
    import hashlib

    import Cython

    pxds = sorted(glob.glob("src/countgrid/**/*.pxd", recursive=True))
    common = hashlib.sha256(Cython.__version__.encode() + repr(CYTHON_OPTIONS).encode())
    for path in pxds:
        with open(path, "rb") as fh:
            common.update(path.encode() + fh.read())
    stale, fresh = [], []
    for ext in exts:
        pyx = ext.sources[0]
        with open(pyx, "rb") as fh:
            fingerprint = hashlib.sha256(common.digest() + fh.read()).hexdigest()
        c_file, stamp = pyx[:-4] + ".c", pyx[:-4] + ".c.fingerprint"
        if os.path.exists(c_file) and os.path.exists(stamp) and open(stamp).read() == fingerprint:
            ext.sources = [c_file] + ext.sources[1:]
            fresh.append(ext)
        else:
            stale.append((ext, stamp, fingerprint))
    built = cythonize([ext for ext, _, _ in stale], nthreads=os.cpu_count() or 1,
                      force=True, **CYTHON_OPTIONS) if stale else []
    for _, stamp, fingerprint in stale:
        with open(stamp, "w") as fh:
            fh.write(fingerprint)
    return built + fresh


setup(
    ext_modules=cythonize_changed(extensions),
    cmdclass={"build_ext": BuildExt},
)
