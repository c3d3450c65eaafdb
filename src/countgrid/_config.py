"""Build and runtime configuration: headers, static library, OpenMP, threads, BLAS."""
import os
import sys

import numpy as np
from threadpoolctl import threadpool_info

from countgrid import _kernels
from countgrid._utils.threads import cpu_count, effective_n_threads
from countgrid._version import __version__

_HERE = os.path.dirname(os.path.abspath(__file__))


def get_include():
    """Directory holding the public C headers.

    ``countgrid/countgrid.h`` declares the kernels (prefix ``cg_``) and the
    version macros; ``countgrid/countgrid_api.h`` adds the capsule table and
    ``countgrid_import()`` for extension modules that call the kernels without
    linking them.  Use it as an include directory when building a C extension
    against countgrid, as with ``numpy.get_include()``; see docs/c_api.md.

    Returns
    -------
    str
        The absolute path of the ``include`` directory inside the installed package.
    """
    return os.path.join(_HERE, "include")


def get_library_dir():
    """Directory holding the static kernel library.

    ``libcountgrid.a`` (``countgrid.lib`` with MSVC), built from the same
    objects and flags as ``countgrid._kernels``.  Link it with
    ``library_dirs=[countgrid.get_library_dir()]``, ``libraries=["countgrid"]``
    and ``extra_link_args=countgrid.get_link_args()``; see docs/c_api.md.

    Returns
    -------
    str
        The absolute path of the ``lib`` directory inside the installed package (the
        library is absent from editable or partial installs: see :func:`show_config`).
    """
    return os.path.join(_HERE, "lib")


def get_link_args():
    """Extra link arguments needed after ``-lcountgrid``.

    The static library was compiled with OpenMP when the extension was (see
    :func:`show_config`); its objects then need the OpenMP runtime, and the
    maths library on Unix.

    Returns
    -------
    list of str
        For example ``["-fopenmp", "-lm"]`` (GCC/Clang on Linux; ``["-lm"]`` for a
        serial build), ``["-lomp"]`` (macOS; ``[]`` for a serial build) or ``[]``
        (Windows, where the objects name their OpenMP runtime themselves).
    """
    omp = _kernels.openmp_enabled()
    if sys.platform == "win32":
        return []
    if sys.platform == "darwin":
        # Your libomp: never combine with the copy a wheel vendors in
        # countgrid/.dylibs (two LLVM OpenMP runtimes in one process abort);
        # with wheels use the capsule or Cython route instead (docs/c_api.md).
        return ["-lomp"] if omp else []
    return (["-fopenmp"] if omp else []) + ["-lm"]


def _static_library():
    libdir = get_library_dir()
    names = ["libcountgrid.a", "countgrid.lib"]
    found = [os.path.join(libdir, n) for n in names if os.path.isfile(os.path.join(libdir, n))]
    return found[0] if found else None


def _info():
    info = {
        "countgrid": __version__,
        "abi_version": _kernels.abi_version,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "openmp": _kernels.openmp_enabled(),
        "simd": _kernels.simd_name(),
        "threads": effective_n_threads(None),
        "cpu_count": cpu_count(),
        "include_dir": get_include(),
        "static_library": _static_library(),
        "link_args": get_link_args(),
        "blas": [],
    }
    try:
        for lib in threadpool_info():
            info["blas"].append({k: lib.get(k) for k in
                                 ("user_api", "internal_api", "version", "num_threads",
                                  "filepath")})
    except Exception as exc:  # threadpoolctl missing or broken: report, do not fail
        info["blas"] = f"unavailable ({exc})"
    return info


def show_config(file=None):
    """Print the build and runtime configuration (OpenMP, threads, SIMD, C
    headers and static library with its link arguments, BLAS).

    Parameters
    ----------
    file : file-like, optional
        Where to print; default ``sys.stdout``.

    Returns
    -------
    dict
        The same information: keys ``countgrid`` (version), ``abi_version``,
        ``python``, ``numpy``, ``openmp`` (bool), ``simd``, ``threads``, ``cpu_count``,
        ``include_dir``, ``static_library`` (a path, or None when it was not built),
        ``link_args`` and ``blas`` (a list of dicts with ``user_api``,
        ``internal_api``, ``version``, ``num_threads`` and ``filepath``, one per
        library threadpoolctl sees, or a string saying why it is unavailable).
    """
    info = _info()
    out = file or sys.stdout
    print(f"countgrid {info['countgrid']} (C ABI {info['abi_version']})", file=out)
    print(f"  python {info['python']}, numpy {info['numpy']}", file=out)
    print(f"  OpenMP: {'enabled' if info['openmp'] else 'disabled (serial build)'}", file=out)
    print(f"  threads: {info['threads']} (cores: {info['cpu_count']})", file=out)
    print(f"  SIMD: {info['simd']} (cap with COUNTGRID_SIMD=baseline|avx2|avx512)", file=out)
    print(f"  C headers: {info['include_dir']}", file=out)
    if info["static_library"]:
        print(f"  static library: {info['static_library']} (link: -lcountgrid "
              f"{' '.join(info['link_args'])})".rstrip(), file=out)
    else:
        print("  static library: not built (editable or partial install)", file=out)
    if isinstance(info["blas"], str):
        print(f"  BLAS: {info['blas']}", file=out)
    else:
        for lib in info["blas"]:
            version = f" {lib['version']}" if lib.get("version") else ""
            print(f"  {lib['user_api']} runtime: {lib['internal_api']}{version}, "
                  f"{lib['num_threads']} threads ({lib['filepath']})", file=out)
    return info
