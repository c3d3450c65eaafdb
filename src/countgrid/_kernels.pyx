# cython: language_level=3
"""The kernel library of countgrid as one extension module.

It links every public C kernel once (the objects of the static library, see setup.py) and
exports them to other extension modules through the capsule ``_C_API``
(countgrid/countgrid_api.h): the family wrappers (``countgrid.grid._wrappers``, ...),
``countgrid.cython_api`` and downstream C or Cython code all call the kernels of this
module.  The module name is part of the C ABI (``CG_API_MODULE``).
"""
from countgrid._cdecl cimport *

cdef extern from "common/cg_capi_table.h":
    object cg_capi_capsule()


def openmp_enabled():
    """True if the kernels were compiled with OpenMP."""
    return bool(cg_openmp_enabled())


def max_threads():
    """Threads an OpenMP region uses by default (1 without OpenMP)."""
    return cg_max_threads()


def simd_name():
    """Instruction set of the row kernels: "baseline", "avx2" or "avx512"."""
    return cg_simd_name().decode("ascii")


abi_version = CG_ABI_VERSION
max_dim = CG_MAX_DIM
version_info = (CG_VERSION_MAJOR, CG_VERSION_MINOR, CG_VERSION_PATCH)

# The C API for other extension modules: a capsule named "countgrid._C_API" holding the
# cg_api_table of countgrid/countgrid_api.h (read by countgrid_import()).
_C_API = cg_capi_capsule()
