# The shared Cython vocabulary of the family wrappers (as scikit-learn's
# _k_means_common.pxd): the sparse index fused type and the one mapping from a kernel's
# status code (countgrid/countgrid.h) to a Python exception, and the interrupt check
# between the blocks of a long kernel call.
from cpython.exc cimport PyErr_CheckSignals
from cython cimport floating
from libc.stdint cimport int32_t, int64_t

from countgrid._ckernels cimport CG_OK, CG_ERR_ALLOC, CG_ERR_INDEX

ctypedef fused index_t:
    int32_t
    int64_t


cdef inline int check_status(int status, str what) except -1:
    """Raise the exception of a kernel's status: MemoryError for an allocation failure,
    ValueError for a bad index or argument (the wrappers validate first, so these name a
    corrupt input or a bug)."""
    if status == CG_OK:
        return 0
    if status == CG_ERR_ALLOC:
        raise MemoryError(f"{what}: could not allocate scratch memory")
    if status == CG_ERR_INDEX:
        raise ValueError(f"{what}: a sparse index or index pointer is out of range "
                         "(corrupt sparse matrix)")
    raise ValueError(f"{what}: invalid argument (status {status})")


cdef inline int csr_entries(const index_t[::1] indices, const floating[::1] data,
                            const index_t **ip, const floating **dp) except -1:
    """Point ip and dp at the stored entries of a CSR/CSC matrix (left NULL when it has
    none), after checking that indices and data have the same length."""
    if indices.shape[0] != data.shape[0]:
        raise ValueError("indices and data have different lengths")
    if indices.shape[0] > 0:
        ip[0] = &indices[0]
        dp[0] = &data[0]
    return 0


cdef inline int check_interrupt() except -1:
    """Run pending signal handlers with the GIL held: Ctrl-C raises KeyboardInterrupt here.

    Call it between the blocks of a long computation (a C call holds off signals until it
    returns), so that an interrupt is honoured within one block's time."""
    PyErr_CheckSignals()
    return 0
