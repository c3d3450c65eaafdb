# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Thin Cython wrappers of the ZIP/Poisson GTM kernels (csrc/gtm, linked into this module).

Private: ``countgrid.gtm`` validates the counts (canonical CSR/CSC with
int32/int64 indices, float32/float64 data) before calling these.  Model
arrays are float64, row-major.
"""
import numpy as np
from cython cimport floating
from libc.stdint cimport int64_t

cimport countgrid.gtm._ckernels as ck
from countgrid._common cimport check_status, csr_entries, index_t


def estep_csr(const index_t[::1] indptr, const index_t[::1] indices, const floating[::1] data,
              int64_t n_features, const double[::1] base, const double[::1] log_mix,
              const double[::1] log_fact, const double[:, ::1] deltaT,
              const double[:, ::1] etaT, int num_threads=0):
    """Fused E-step: responsibilities (n_rows, K) and per-row log-likelihoods (n_rows,)."""
    cdef int64_t n_rows = indptr.shape[0] - 1
    cdef int64_t K = base.shape[0]
    if n_rows < 0 or K < 1:
        raise ValueError("estep_csr: empty indptr or no latent points")
    if log_mix.shape[0] != K or log_fact.shape[0] != n_rows:
        raise ValueError("estep_csr: log_mix must have K entries and log_fact n_rows")
    if deltaT.shape[0] != n_features or etaT.shape[0] != n_features \
            or deltaT.shape[1] != K or etaT.shape[1] != K:
        raise ValueError("estep_csr: deltaT and etaT must have shape (n_features, K)")
    if indptr[0] != 0 or indptr[n_rows] > indices.shape[0] or indptr[n_rows] > data.shape[0]:
        raise ValueError("estep_csr: indptr does not match indices/data")
    resp_arr = np.empty((n_rows, K), dtype=np.float64)
    ll_arr = np.empty(n_rows, dtype=np.float64)
    cdef double[:, ::1] resp = resp_arr
    cdef double[::1] ll = ll_arr
    cdef int status
    cdef double *rp = &resp[0, 0] if n_rows > 0 else NULL
    cdef double *lp = &ll[0] if n_rows > 0 else NULL
    cdef const index_t *ip = NULL
    cdef const floating *dp = NULL
    csr_entries(indices, data, &ip, &dp)
    cdef const double *lfp = &log_fact[0] if n_rows > 0 else NULL
    cdef const double *dtp = &deltaT[0, 0] if n_features > 0 else NULL
    cdef const double *etp = &etaT[0, 0] if n_features > 0 else NULL
    with nogil:
        status = ck.estep_csr(n_rows, n_features, K, &indptr[0], ip, dp, &base[0],
                              &log_mix[0], lfp, dtp, etp, rp, lp, num_threads)
    check_status(status, "estep_csr")
    return resp_arr, ll_arr


def accumulate_csc(const index_t[::1] indptr, const index_t[::1] indices,
                   const floating[::1] data, const double[:, ::1] resp, int num_threads=0):
    """M-step statistics (n_features, K): ``RT = T^T theta`` and ``CT = [T > 0]^T theta``."""
    cdef int64_t n_features = indptr.shape[0] - 1
    cdef int64_t n_rows = resp.shape[0]
    cdef int64_t K = resp.shape[1]
    if n_features < 0 or K < 1:
        raise ValueError("accumulate_csc: empty indptr or no latent points")
    if indptr[0] != 0 or indptr[n_features] > indices.shape[0] \
            or indptr[n_features] > data.shape[0]:
        raise ValueError("accumulate_csc: indptr does not match indices/data")
    RT_arr = np.empty((n_features, K), dtype=np.float64)
    CT_arr = np.empty((n_features, K), dtype=np.float64)
    cdef double[:, ::1] RT = RT_arr
    cdef double[:, ::1] CT = CT_arr
    cdef int status
    cdef double *rtp = &RT[0, 0] if n_features > 0 else NULL
    cdef double *ctp = &CT[0, 0] if n_features > 0 else NULL
    cdef const double *qp = &resp[0, 0] if n_rows > 0 else NULL
    cdef const index_t *ip = NULL
    cdef const floating *dp = NULL
    csr_entries(indices, data, &ip, &dp)
    with nogil:
        status = ck.accumulate_csc(n_rows, n_features, K, &indptr[0], ip, dp, qp, rtp, ctp,
                                   num_threads)
    check_status(status, "accumulate_csc")
    return RT_arr, CT_arr
