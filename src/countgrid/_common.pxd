# The shared Cython vocabulary of the family wrappers (as scikit-learn's
# _k_means_common.pxd): the sparse index fused type and the one mapping from a kernel's
# status code (countgrid/countgrid.h) to a Python exception, and the interrupt check
# between the blocks of a long kernel call.
from cpython.exc cimport PyErr_CheckSignals
from cython cimport floating
from libc.stdint cimport int32_t, int64_t

from countgrid._cdecl cimport CG_OK, CG_ERR_ALLOC, CG_ERR_INDEX

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


cdef inline int check_indptr(const index_t[::1] indptr, Py_ssize_t nnz, str what) except -1:
    """indptr starts at 0, never decreases and ends inside the nnz stored entries (O(n))."""
    cdef Py_ssize_t i, n = indptr.shape[0] - 1
    cdef int bad = 0
    if n < 0:
        raise ValueError(f"{what}: indptr is empty (corrupt sparse matrix)")
    with nogil:
        if indptr[0] != 0 or indptr[n] > nnz:
            bad = 1
        else:
            for i in range(n):
                if indptr[i + 1] < indptr[i]:
                    bad = 1
                    break
    if bad:
        raise ValueError(f"{what}: indptr must start at 0, never decrease and end inside the "
                         f"{nnz} stored entries (corrupt sparse matrix)")
    return 0


cdef inline int check_canonical_csr(const index_t[::1] indptr, const index_t[::1] indices,
                                    Py_ssize_t n_cols, str what) except -1:
    """ValueError unless indptr/indices describe a canonical CSR matrix with n_cols columns:
    :func:`check_indptr`, and every row's indices strictly increasing and in [0, n_cols).
    O(nnz), for kernels that merge sorted rows and cannot check their input cheaply
    themselves."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, r, a
    cdef int bad = 0
    check_indptr(indptr, indices.shape[0], what)
    with nogil:
        r = 0
        while not bad and r < n:
            a = indptr[r]
            while a < indptr[r + 1]:
                if indices[a] < 0 or indices[a] >= n_cols or (
                        a > indptr[r] and indices[a] <= indices[a - 1]):
                    bad = 1
                    break
                a += 1
            r += 1
    if bad:
        raise ValueError(f"{what}: a sparse index or index pointer is out of range or "
                         "unsorted (corrupt sparse matrix)")
    return 0


cdef inline Py_ssize_t block_setting(object value, str name, Py_ssize_t current) except -1:
    """A wrapper's blocking knob (``block_work``, set by tests): ``current`` when ``value``
    is None, else ``value``, which must be >= 1."""
    if value is None:
        return current
    if value < 1:
        raise ValueError(f"{name} must be >= 1")
    return value


cdef inline object swap_block_setting(Py_ssize_t *slot, object value, str name):
    """A module's ``block_work(...)`` setter: ``*slot`` set from ``value`` as
    :func:`block_setting` reads it; the old value back."""
    cdef Py_ssize_t old = slot[0]
    slot[0] = block_setting(value, name, old)
    return old


cdef inline int check_interrupt() except -1:
    """Run pending signal handlers with the GIL held: Ctrl-C raises KeyboardInterrupt here.

    Call it between the blocks of a long computation (a C call holds off signals until it
    returns), so that an interrupt is honoured within one block's time."""
    PyErr_CheckSignals()
    return 0
