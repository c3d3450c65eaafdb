# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Thin Cython wrappers of the ZIP/Poisson GTM kernels (csrc/gtm, linked into this module).

Private: ``countgrid.gtm`` validates the counts (canonical CSR/CSC with
int32/int64 indices, float32/float64 data) before calling these, but the
wrappers trust nothing they hand to C: the lengths of every model array
against the number of latent points and of features, the index pointers
(starting at 0, non-decreasing, inside ``indices``/``data``) and, in the
kernels, every index.  Model arrays are float64, row-major.

Both kernels run in blocks of rows (E-step) or columns (M-step statistics) of about
``block_work()`` multiply-adds per thread, with ``check_interrupt()`` between blocks,
so Ctrl-C is honoured within one block's time; rows and columns are independent, so
the results do not depend on the blocking.
"""
import numpy as np
from cython cimport floating
from libc.stdint cimport int64_t

cimport countgrid.gtm._cdecl as ck
from countgrid._common cimport (check_indptr, check_interrupt, check_status, csr_entries,
                               index_t, swap_block_setting)

# multiply-adds per thread between two interrupt checks (about 10-50 ms)
cdef Py_ssize_t _block_work = 1 << 24


def block_work(work=None):
    """Multiply-adds per thread between interrupt checks; set it (for tests) and get the
    old value back."""
    return swap_block_setting(&_block_work, work, "work")


cdef list _blocks(const index_t[::1] indptr, Py_ssize_t K, int num_threads):
    """Boundaries of blocks of consecutive rows (columns) of about _block_work
    multiply-adds per thread (cost of one: (its non-zeros + 1) * K)."""
    cdef Py_ssize_t i, n = indptr.shape[0] - 1, start = 0
    cdef double cost = 0.0, limit = <double>_block_work * max(1, num_threads)
    out = []
    for i in range(n):
        cost += (<double>(indptr[i + 1] - indptr[i]) + 1.0) * K
        if cost >= limit and i + 1 < n:
            out.append((start, i + 1))
            start, cost = i + 1, 0.0
    out.append((start, n))
    return out


def estep_csr(const index_t[::1] indptr, const index_t[::1] indices, const floating[::1] data,
              int64_t n_features, const double[::1] base, const double[::1] log_mix,
              const double[::1] log_fact, const double[:, ::1] deltaT,
              const double[:, ::1] etaT, int num_threads=0):
    """Fused E-step: responsibilities (n_rows, K) and per-row log-likelihoods (n_rows,)."""
    cdef int64_t n_rows = indptr.shape[0] - 1
    cdef int64_t K = base.shape[0]
    cdef Py_ssize_t r0, r1
    if n_rows < 0 or K < 1:
        raise ValueError("estep_csr: empty indptr or no latent points")
    if n_features < 0:
        raise ValueError("estep_csr: n_features must be >= 0")
    if log_mix.shape[0] != K or log_fact.shape[0] != n_rows:
        raise ValueError(f"estep_csr: log_mix must have K = {K} entries (has "
                         f"{log_mix.shape[0]}) and log_fact n_rows = {n_rows} (has "
                         f"{log_fact.shape[0]})")
    if deltaT.shape[0] != n_features or etaT.shape[0] != n_features \
            or deltaT.shape[1] != K or etaT.shape[1] != K:
        raise ValueError(f"estep_csr: deltaT and etaT must have shape (n_features, K) = "
                         f"({n_features}, {K}), got ({deltaT.shape[0]}, {deltaT.shape[1]}) "
                         f"and ({etaT.shape[0]}, {etaT.shape[1]})")
    cdef const index_t *ip = NULL
    cdef const floating *dp = NULL
    csr_entries(indices, data, &ip, &dp)
    check_indptr(indptr, indices.shape[0], "estep_csr")
    resp_arr = np.empty((n_rows, K), dtype=np.float64)
    ll_arr = np.empty(n_rows, dtype=np.float64)
    if n_rows == 0:
        return resp_arr, ll_arr
    cdef double[:, ::1] resp = resp_arr
    cdef double[::1] ll = ll_arr
    cdef int status = 0
    cdef const double *dtp = &deltaT[0, 0] if n_features > 0 else NULL
    cdef const double *etp = &etaT[0, 0] if n_features > 0 else NULL
    for r0, r1 in _blocks(indptr, K, num_threads):
        with nogil:
            status = ck.estep_csr(r1 - r0, n_features, K, &indptr[r0], ip, dp, &base[0],
                                  &log_mix[0], &log_fact[r0], dtp, etp, &resp[r0, 0], &ll[r0],
                                  num_threads)
        check_status(status, "estep_csr")
        check_interrupt()
    return resp_arr, ll_arr


def accumulate_csc(const index_t[::1] indptr, const index_t[::1] indices,
                   const floating[::1] data, const double[:, ::1] resp, int num_threads=0):
    """M-step statistics (n_features, K): ``RT = T^T theta`` and ``CT = [T > 0]^T theta``."""
    cdef int64_t n_features = indptr.shape[0] - 1
    cdef int64_t n_rows = resp.shape[0]
    cdef int64_t K = resp.shape[1]
    cdef Py_ssize_t c0, c1
    if n_features < 0 or K < 1:
        raise ValueError("accumulate_csc: empty indptr or no latent points")
    cdef const index_t *ip = NULL
    cdef const floating *dp = NULL
    csr_entries(indices, data, &ip, &dp)
    check_indptr(indptr, indices.shape[0], "accumulate_csc")
    RT_arr = np.zeros((n_features, K), dtype=np.float64)
    CT_arr = np.zeros((n_features, K), dtype=np.float64)
    if n_features == 0:
        return RT_arr, CT_arr
    cdef double[:, ::1] RT = RT_arr
    cdef double[:, ::1] CT = CT_arr
    cdef int status = 0
    cdef const double *qp = &resp[0, 0] if n_rows > 0 else NULL
    for c0, c1 in _blocks(indptr, K, num_threads):
        with nogil:
            status = ck.accumulate_csc(n_rows, c1 - c0, K, &indptr[c0], ip, dp, qp,
                                       &RT[c0, 0], &CT[c0, 0], num_threads)
        check_status(status, "accumulate_csc")
        check_interrupt()
    return RT_arr, CT_arr
