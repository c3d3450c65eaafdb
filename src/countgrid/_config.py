"""Build and runtime configuration: headers, OpenMP, threads, BLAS."""
import os
import sys

import numpy as np


def get_include():
    """Directory holding the public C headers (``countgrid/countgrid.h``).

    Use it as an include directory when building a C extension against
    countgrid, as with ``numpy.get_include()``.
    """
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")


def _info():
    from countgrid import _kernels
    from countgrid._version import __version__

    info = {
        "countgrid": __version__,
        "abi_version": _kernels.abi_version,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "openmp": _kernels.openmp_enabled(),
        "simd": _kernels.simd_name(),
        "threads": _kernels.max_threads(),
        "cpu_count": os.cpu_count(),
        "blas": [],
    }
    try:
        from threadpoolctl import threadpool_info

        for lib in threadpool_info():
            info["blas"].append({k: lib.get(k) for k in
                                 ("user_api", "internal_api", "version", "num_threads",
                                  "filepath")})
    except Exception as exc:  # threadpoolctl missing or broken: report, do not fail
        info["blas"] = f"unavailable ({exc})"
    return info


def show_config(file=None):
    """Print the build and runtime configuration (OpenMP, threads, SIMD, BLAS).

    Returns the same information as a dict.
    """
    info = _info()
    out = file or sys.stdout
    print(f"countgrid {info['countgrid']} (C ABI {info['abi_version']})", file=out)
    print(f"  python {info['python']}, numpy {info['numpy']}", file=out)
    print(f"  OpenMP: {'enabled' if info['openmp'] else 'disabled (serial build)'}", file=out)
    print(f"  threads: {info['threads']} (cores: {info['cpu_count']})", file=out)
    print(f"  SIMD: {info['simd']} (cap with COUNTGRID_SIMD=baseline|avx2|avx512)", file=out)
    if isinstance(info["blas"], str):
        print(f"  BLAS: {info['blas']}", file=out)
    else:
        for lib in info["blas"]:
            version = f" {lib['version']}" if lib.get("version") else ""
            print(f"  {lib['user_api']} runtime: {lib['internal_api']}{version}, "
                  f"{lib['num_threads']} threads ({lib['filepath']})", file=out)
    return info
