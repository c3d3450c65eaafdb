# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Thin Cython wrappers of the pLSA kernels (csrc/topics), reached through the capsule of
countgrid._kernels.  Private: countgrid.topics validates the counts first."""
import numpy as np
from cython cimport floating

cimport countgrid.topics._cdecl as ck
from countgrid._common cimport check_status, csr_entries, index_t

ck.countgrid_import()


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
    csr_entries(indices, data, &ip, &dp)
    if phib is not None:
        if phib.shape[0] != W or phib.shape[1] != K:
            raise ValueError("phib must have the shape of phi")
        pb = &phib[0, 0]
    if n == 0 or K == 0:
        return
    if W == 0:
        raise ValueError("phi has no words")
    with nogil:
        status = ck.docs(n, &indptr[0], ip, dp, indices.shape[0], W, K, &phi[0, 0], pb, K,
                         &theta[0, 0], K, n_iter, tol, &loglik[0], num_threads)
    check_status(status, "plsa_docs")


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
    csr_entries(indices, data, &ip, &dp)
    if W == 0 or K == 0:
        return
    if D > 0:
        tp = &theta[0, 0]
    with nogil:
        status = ck.words(W, &indptr[0], ip, dp, indices.shape[0], D, K, tp, K, &phib[0, 0], K,
                          &acc[0, 0], K, num_threads)
    check_status(status, "plsa_words")
