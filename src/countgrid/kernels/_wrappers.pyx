# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Thin Cython wrappers of the Jensen-Tsallis Gram kernels (csrc/kernels), reached through the
capsule of countgrid._kernels.  Private: countgrid.kernels validates and normalises the
inputs first.

A Gram matrix is computed in tiles of ``tile_rows x tile_cols`` entries, one C call per
tile, with ``check_interrupt()`` between tiles, so that Ctrl-C is honoured within one
tile's time (countgrid.kernels._it_kernels._tile_shape picks tiles of a few tens of
milliseconds, at least 64 x 64).  Every entry is computed by the same pair function from
the same rows whatever the tiling, so the result is bit-identical to one call over the
whole matrix; a symmetric Gram matrix is computed tile by tile on and above the diagonal
and mirrored at the end, as the C kernel does within one call."""
import numpy as np
from cython cimport floating
from libc.stdint cimport int64_t

cimport countgrid.kernels._cdecl as ck
from countgrid._common cimport check_canonical_csr, check_interrupt, check_status

ck.countgrid_import()

_WHAT = "jt_gram (entries must be finite and >= 0, 0 <= q <= 2)"


cdef void _mirror(floating[:, ::1] k, Py_ssize_t n) noexcept nogil:
    """K[i, j] = K[j, i] for j < i, in 64 x 64 tiles (cache-friendly transpose)."""
    cdef Py_ssize_t i0, j0, i, j, i1, j1
    for i0 in range(0, n, 64):
        i1 = min(n, i0 + 64)
        for j0 in range(0, i0 + 1, 64):
            j1 = min(n, j0 + 64)
            for i in range(i0, i1):
                for j in range(j0, min(j1, i)):
                    k[i, j] = k[j, i]


def _check_tiles(Py_ssize_t tile_rows, Py_ssize_t tile_cols, bint symmetric):
    if tile_rows < 1 or tile_cols < 1:
        raise ValueError(f"tiles must be positive, got {tile_rows} x {tile_cols}")
    if symmetric and tile_rows != tile_cols:
        raise ValueError("a symmetric Gram matrix needs square tiles")


def _tiles(Py_ssize_t n, Py_ssize_t m, Py_ssize_t tile_rows, Py_ssize_t tile_cols,
           bint symmetric):
    """The tiles ``(r0, r1, c0, c1)`` of an n x m Gram matrix, row by row; only those on
    and above the diagonal when symmetric."""
    cdef Py_ssize_t r0, c0
    for r0 in range(0, n, tile_rows):
        for c0 in range(r0 if symmetric else 0, m, tile_cols):
            yield r0, min(n, r0 + tile_rows), c0, min(m, c0 + tile_cols)


cdef int _tile_done(int status) except -1:
    """After a tile's C call: its status as an exception, then Ctrl-C."""
    check_status(status, _WHAT)
    check_interrupt()
    return 0


def jt_gram_dense(const floating[:, ::1] X, const floating[:, ::1] Y, double q,
                  bint symmetric, int num_threads, Py_ssize_t tile_rows,
                  Py_ssize_t tile_cols):
    """k^B_q Gram matrix between the rows of X and Y (Y ignored if symmetric)."""
    cdef Py_ssize_t n = X.shape[0], m = X.shape[0] if symmetric else Y.shape[0]
    cdef Py_ssize_t D = X.shape[1]
    cdef Py_ssize_t r0, r1, c0, c1
    cdef int status = 0
    _check_tiles(tile_rows, tile_cols, symmetric)
    if not symmetric and Y.shape[1] != D:
        raise ValueError(f"X has {D} columns but Y has {Y.shape[1]}")
    K = np.zeros((n, m), dtype=np.float32 if floating is float else np.float64)
    if n == 0 or m == 0 or D == 0:
        return K
    cdef floating[:, ::1] k = K
    for r0, r1, c0, c1 in _tiles(n, m, tile_rows, tile_cols, symmetric):
        with nogil:
            if symmetric and c0 == r0:
                status = ck.jt_gram_dense(r1 - r0, r1 - r0, D, &X[r0, 0], D, NULL, D, q,
                                          1, &k[r0, r0], m, num_threads)
            elif symmetric:
                status = ck.jt_gram_dense(r1 - r0, c1 - c0, D, &X[r0, 0], D, &X[c0, 0],
                                          D, q, 0, &k[r0, c0], m, num_threads)
            else:
                status = ck.jt_gram_dense(r1 - r0, c1 - c0, D, &X[r0, 0], D, &Y[c0, 0],
                                          D, q, 0, &k[r0, c0], m, num_threads)
        _tile_done(status)
    if symmetric:
        with nogil:
            _mirror(k, n)
    return K


def jt_gram_csr(const int64_t[::1] xptr, const int64_t[::1] xind, const floating[::1] xval,
                const int64_t[::1] yptr, const int64_t[::1] yind, const floating[::1] yval,
                Py_ssize_t D, double q, bint symmetric, int num_threads,
                Py_ssize_t tile_rows, Py_ssize_t tile_cols):
    """The same for canonical CSR matrices (int64 indices, sorted, no duplicates); the
    structure is checked here (O(nnz)) before the C kernel merges rows."""
    cdef Py_ssize_t n = xptr.shape[0] - 1, m = n if symmetric else yptr.shape[0] - 1
    cdef Py_ssize_t r0, r1, c0, c1
    cdef int status = 0
    cdef const int64_t *yp = NULL
    cdef const int64_t *yi = NULL
    cdef const floating *yv = NULL
    cdef const int64_t *xi = NULL
    cdef const floating *xv = NULL
    _check_tiles(tile_rows, tile_cols, symmetric)
    if xind.shape[0] != xval.shape[0] or (not symmetric and yind.shape[0] != yval.shape[0]):
        raise ValueError("indices and data have different lengths")
    check_canonical_csr(xptr, xind, D, _WHAT)
    if not symmetric:
        check_canonical_csr(yptr, yind, D, _WHAT)
    K = np.zeros((max(n, 0), max(m, 0)), dtype=np.float32 if floating is float else np.float64)
    if n <= 0 or m <= 0:
        return K
    cdef floating[:, ::1] k = K
    if xind.shape[0] > 0:
        xi = &xind[0]
        xv = &xval[0]
    if symmetric:
        yp, yi, yv = &xptr[0], xi, xv
    else:
        yp = &yptr[0]
        if yind.shape[0] > 0:
            yi = &yind[0]
            yv = &yval[0]
    for r0, r1, c0, c1 in _tiles(n, m, tile_rows, tile_cols, symmetric):
        with nogil:
            if symmetric and c0 == r0:
                status = ck.jt_gram_csr(r1 - r0, r1 - r0, D, &xptr[r0], xi, xv, NULL,
                                        NULL, <const floating *>NULL, q, 1, &k[r0, r0],
                                        m, num_threads)
            else:
                status = ck.jt_gram_csr(r1 - r0, c1 - c0, D, &xptr[r0], xi, xv, yp + c0,
                                        yi, yv, q, 0, &k[r0, c0], m, num_threads)
        _tile_done(status)
    if symmetric:
        with nogil:
            _mirror(k, n)
    return K
