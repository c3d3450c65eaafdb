# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Thin Cython wrappers of the pLSA kernels (csrc/plsa.c).  Private."""
import numpy as np
from cython cimport floating
from libc.stdint cimport int32_t, int64_t

cdef extern from "countgrid/countgrid.h" nogil:
    int CG_OK, CG_ERR_ALLOC, CG_ERR_INDEX
    int cg_plsa_docs_f32_i32(int64_t, const int32_t *, const int32_t *, const float *, int64_t,
                             int64_t, int64_t, const float *, const float *, int64_t, float *,
                             int64_t, int64_t, double, double *, int)
    int cg_plsa_docs_f32_i64(int64_t, const int64_t *, const int64_t *, const float *, int64_t,
                             int64_t, int64_t, const float *, const float *, int64_t, float *,
                             int64_t, int64_t, double, double *, int)
    int cg_plsa_docs_f64_i32(int64_t, const int32_t *, const int32_t *, const double *, int64_t,
                             int64_t, int64_t, const double *, const double *, int64_t, double *,
                             int64_t, int64_t, double, double *, int)
    int cg_plsa_docs_f64_i64(int64_t, const int64_t *, const int64_t *, const double *, int64_t,
                             int64_t, int64_t, const double *, const double *, int64_t, double *,
                             int64_t, int64_t, double, double *, int)
    int cg_plsa_words_f32_i32(int64_t, const int32_t *, const int32_t *, const float *, int64_t,
                              int64_t, int64_t, const float *, int64_t, const float *, int64_t,
                              float *, int64_t, int)
    int cg_plsa_words_f32_i64(int64_t, const int64_t *, const int64_t *, const float *, int64_t,
                              int64_t, int64_t, const float *, int64_t, const float *, int64_t,
                              float *, int64_t, int)
    int cg_plsa_words_f64_i32(int64_t, const int32_t *, const int32_t *, const double *, int64_t,
                              int64_t, int64_t, const double *, int64_t, const double *, int64_t,
                              double *, int64_t, int)
    int cg_plsa_words_f64_i64(int64_t, const int64_t *, const int64_t *, const double *, int64_t,
                              int64_t, int64_t, const double *, int64_t, const double *, int64_t,
                              double *, int64_t, int)

ctypedef fused index_t:
    int32_t
    int64_t


cdef int _check(int status, str what) except -1:
    if status == CG_OK:
        return 0
    if status == CG_ERR_ALLOC:
        raise MemoryError(f"{what}: could not allocate scratch memory")
    if status == CG_ERR_INDEX:
        raise ValueError(f"{what}: a sparse index or index pointer is out of range")
    raise ValueError(f"{what}: invalid argument (status {status})")


def plsa_docs(const index_t[::1] indptr, const index_t[::1] indices, const floating[::1] data,
              const floating[:, ::1] phi, const floating[:, ::1] phib, floating[:, ::1] theta,
              Py_ssize_t n_iter, double tol, double[::1] loglik, int num_threads=0):
    """Folding-in updates of theta (in place) and log-likelihoods at entry."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, K = phi.shape[1], W = phi.shape[0]
    cdef int status = 0
    cdef const index_t *ip = NULL
    cdef const floating *dp = NULL
    cdef const floating *pb = NULL
    if n < 0 or theta.shape[0] != n or theta.shape[1] != K or loglik.shape[0] != n:
        raise ValueError("theta/loglik do not match the number of documents or topics")
    if indices.shape[0] != data.shape[0]:
        raise ValueError("indices and data have different lengths")
    if phib is not None:
        if phib.shape[0] != W or phib.shape[1] != K:
            raise ValueError("phib must have the shape of phi")
        pb = &phib[0, 0]
    if n == 0 or K == 0:
        return
    if W == 0:
        raise ValueError("phi has no words")
    if indices.shape[0] > 0:
        ip = &indices[0]
        dp = &data[0]
    with nogil:
        if floating is float:
            if index_t is int32_t:
                status = cg_plsa_docs_f32_i32(n, &indptr[0], ip, dp, indices.shape[0], W, K,
                                              &phi[0, 0], pb, K, &theta[0, 0], K, n_iter, tol,
                                              &loglik[0], num_threads)
            else:
                status = cg_plsa_docs_f32_i64(n, &indptr[0], ip, dp, indices.shape[0], W, K,
                                              &phi[0, 0], pb, K, &theta[0, 0], K, n_iter, tol,
                                              &loglik[0], num_threads)
        else:
            if index_t is int32_t:
                status = cg_plsa_docs_f64_i32(n, &indptr[0], ip, dp, indices.shape[0], W, K,
                                              &phi[0, 0], pb, K, &theta[0, 0], K, n_iter, tol,
                                              &loglik[0], num_threads)
            else:
                status = cg_plsa_docs_f64_i64(n, &indptr[0], ip, dp, indices.shape[0], W, K,
                                              &phi[0, 0], pb, K, &theta[0, 0], K, n_iter, tol,
                                              &loglik[0], num_threads)
    _check(status, "plsa_docs")


def plsa_words(const index_t[::1] indptr, const index_t[::1] indices, const floating[::1] data,
               const floating[:, ::1] theta, const floating[:, ::1] phib, floating[:, ::1] acc,
               int num_threads=0):
    """Unnormalised M-step of P(w|z) from CSC counts into acc (n_words x K)."""
    cdef Py_ssize_t W = indptr.shape[0] - 1, K = phib.shape[1], D = theta.shape[0]
    cdef int status = 0
    cdef const index_t *ip = NULL
    cdef const floating *dp = NULL
    cdef const floating *tp = NULL
    if W < 0 or phib.shape[0] != W or acc.shape[0] != W or acc.shape[1] != K or theta.shape[1] != K:
        raise ValueError("phib/acc/theta shapes do not match the counts")
    if indices.shape[0] != data.shape[0]:
        raise ValueError("indices and data have different lengths")
    if W == 0 or K == 0:
        return
    if indices.shape[0] > 0:
        ip = &indices[0]
        dp = &data[0]
    if D > 0:
        tp = &theta[0, 0]
    with nogil:
        if floating is float:
            if index_t is int32_t:
                status = cg_plsa_words_f32_i32(W, &indptr[0], ip, dp, indices.shape[0], D, K,
                                               tp, K, &phib[0, 0], K, &acc[0, 0], K, num_threads)
            else:
                status = cg_plsa_words_f32_i64(W, &indptr[0], ip, dp, indices.shape[0], D, K,
                                               tp, K, &phib[0, 0], K, &acc[0, 0], K, num_threads)
        else:
            if index_t is int32_t:
                status = cg_plsa_words_f64_i32(W, &indptr[0], ip, dp, indices.shape[0], D, K,
                                               tp, K, &phib[0, 0], K, &acc[0, 0], K, num_threads)
            else:
                status = cg_plsa_words_f64_i64(W, &indptr[0], ip, dp, indices.shape[0], D, K,
                                               tp, K, &phib[0, 0], K, &acc[0, 0], K, num_threads)
    _check(status, "plsa_words")
