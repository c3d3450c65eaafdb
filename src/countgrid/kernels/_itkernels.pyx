# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Thin Cython wrappers of the Jensen-Tsallis Gram kernels (csrc/itk), reached through the
capsule of countgrid._kernels.  Private: countgrid.kernels validates and normalises the
inputs first."""
import numpy as np
from cython cimport floating
from libc.stdint cimport int64_t

cimport countgrid.kernels._ckernels as ck
from countgrid._common cimport check_status

ck.countgrid_import()

_WHAT = "jt_gram (entries must be finite and >= 0, 0 <= q <= 2)"


def jt_gram_dense(const floating[:, ::1] X, const floating[:, ::1] Y, double q,
                  bint symmetric, int num_threads=0):
    """k^B_q Gram matrix between the rows of X and Y (Y ignored if symmetric)."""
    cdef Py_ssize_t n = X.shape[0], m = X.shape[0] if symmetric else Y.shape[0]
    cdef Py_ssize_t D = X.shape[1]
    cdef int status = 0
    cdef const floating *yp = NULL
    if not symmetric and Y.shape[1] != D:
        raise ValueError(f"X has {D} columns but Y has {Y.shape[1]}")
    K = np.zeros((n, m), dtype=np.float32 if floating is float else np.float64)
    if n == 0 or m == 0 or D == 0:
        return K
    cdef floating[:, ::1] k = K
    if not symmetric:
        yp = &Y[0, 0]
    with nogil:
        status = ck.jt_gram_dense(n, m, D, &X[0, 0], D, yp, D, q, symmetric, &k[0, 0], m,
                                  num_threads)
    check_status(status, _WHAT)
    return K


def jt_gram_csr(const int64_t[::1] xptr, const int64_t[::1] xind, const floating[::1] xval,
                const int64_t[::1] yptr, const int64_t[::1] yind, const floating[::1] yval,
                Py_ssize_t D, double q, bint symmetric, int num_threads=0):
    """The same for canonical CSR matrices (int64 indices, sorted, no duplicates)."""
    cdef Py_ssize_t n = xptr.shape[0] - 1, m = n if symmetric else yptr.shape[0] - 1
    cdef int status = 0
    cdef const int64_t *yp = NULL
    cdef const int64_t *yi = NULL
    cdef const floating *yv = NULL
    cdef const int64_t *xi = NULL
    cdef const floating *xv = NULL
    K = np.zeros((max(n, 0), max(m, 0)), dtype=np.float32 if floating is float else np.float64)
    if n <= 0 or m <= 0:
        return K
    cdef floating[:, ::1] k = K
    if xind.shape[0] > 0:
        xi = &xind[0]
        xv = &xval[0]
    if not symmetric:
        yp = &yptr[0]
        if yind.shape[0] > 0:
            yi = &yind[0]
            yv = &yval[0]
    with nogil:
        status = ck.jt_gram_csr(n, m, D, &xptr[0], xi, xv, yp, yi, yv, q, symmetric, &k[0, 0],
                                m, num_threads)
    check_status(status, _WHAT)
    return K
