# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Thin Cython wrappers of the counting-grid kernels (csrc/grid).

Every wrapper checks shapes, lengths and ranges, releases the GIL around the C call and
turns the C status code into a Python exception.  Arrays are row-major; per-feature grids
have shape (n_features, L) with L = prod(extent).  The kernels run in countgrid._kernels
and are reached through its capsule (countgrid/grid/_cdecl.pxd, generated).  Private:
the estimators validate user input first.
"""
import numpy as np
from cython cimport floating
from libc.stdint cimport int32_t, int64_t, INT32_MAX

cimport countgrid.grid._cdecl as ck
from countgrid._cdecl cimport CG_ERR_ARGUMENT, CG_ERR_INDEX, CG_MAX_DIM
from countgrid._common cimport check_status, csr_entries, index_t

ck.countgrid_import()


cdef class _Grid:
    """A checked grid description as the kernels take it: ndim, extent, window and L."""
    cdef const int64_t[::1] extent
    cdef const int64_t[::1] window
    cdef int ndim
    cdef Py_ssize_t L

    def __cinit__(self, extent, window):
        e = np.ascontiguousarray(extent, dtype=np.int64).reshape(-1)
        w = np.ascontiguousarray(window, dtype=np.int64).reshape(-1)
        if e.shape[0] != w.shape[0] or not 1 <= e.shape[0] <= CG_MAX_DIM:
            raise ValueError(f"extent {tuple(e)} and window {tuple(w)} must have the same "
                             f"length between 1 and {CG_MAX_DIM}")
        if (e < 1).any() or (w < 1).any() or (w > e).any():
            raise ValueError(f"window {tuple(w)} must lie between 1 and extent {tuple(e)}")
        self.extent, self.window = e, w
        self.ndim, self.L = e.shape[0], int(np.prod(e))


cdef int _rows(Py_ssize_t rows, Py_ssize_t cols, Py_ssize_t want_rows, Py_ssize_t want_cols,
               str name) except -1:
    if rows < want_rows or cols != want_cols:
        raise ValueError(f"{name} has shape ({rows}, {cols}), expected "
                         f"(>= {want_rows}, {want_cols})")
    return 0


cdef int _column_block(const index_t[::1] indptr, const index_t[::1] indices,
                       const floating[::1] data, Py_ssize_t cursor_len, Py_ssize_t row_start,
                       Py_ssize_t row_end, Py_ssize_t n_rows, Py_ssize_t L, list block_arrays,
                       const index_t **ip, const floating **dp) except -1:
    """Check the arguments of the block-wise M-step (accumulate_csc, accumulate_csc_topk):
    one cursor entry per column of the CSC counts, their entries (pointed at by ip and
    dp), the rows [row_start, row_end), n of shape (>= n_columns, L) and the arrays of the
    block, (name, rows, columns, columns wanted), one row per row of the block at least."""
    cdef Py_ssize_t Z = indptr.shape[0] - 1
    if Z < 0 or cursor_len != Z:
        raise ValueError("cursor must have one entry per column")
    csr_entries(indices, data, ip, dp)
    if not 0 <= row_start <= row_end:
        raise ValueError("invalid row range")
    _rows(n_rows, L, Z, L, "n")
    for name, rows, cols, want_cols in block_arrays:
        _rows(rows, cols, row_end - row_start, want_cols, name)
    return 0


cdef int _per_cell(Py_ssize_t L, list arrays) except -1:
    """Check (name, rows, columns, least rows) of arrays with one row per grid (L cells)."""
    for name, rows, cols, want_rows in arrays:
        _rows(rows, cols, want_rows, L, name)
    return 0


def window_sum(const floating[:, ::1] a, extent, window, bint backward=False,
               double scale=1.0, int num_threads=0):
    """Toroidal window sums of each row of `a` (n_vec, L); returns a new array."""
    cdef _Grid g = _Grid(extent, window)
    cdef int status = 0
    cdef Py_ssize_t n = a.shape[0]
    _rows(a.shape[0], a.shape[1], 0, g.L, "a")
    out = np.empty((n, g.L), dtype=np.float32 if floating is float else np.float64)
    if n == 0:
        return out
    cdef floating[:, ::1] o = out
    with nogil:
        status = ck.window_sum(g.ndim, &g.extent[0], &g.window[0], backward, scale, n,
                               &a[0, 0], a.shape[1], &o[0, 0], o.shape[1], num_threads)
    check_status(status, "window_sum")
    return out


def histograms(const floating[:, ::1] pi, extent, window, floating[:, ::1] h,
               floating[:, ::1] logh, int num_threads=0):
    """h = forward window mean of pi (n_features, L); logh = log h (in place)."""
    cdef _Grid g = _Grid(extent, window)
    cdef int status = 0
    cdef Py_ssize_t Z = pi.shape[0], L = g.L
    _per_cell(L, [("pi", pi.shape[0], pi.shape[1], 0), ("h", h.shape[0], h.shape[1], Z),
                  ("logh", logh.shape[0], logh.shape[1], Z)])
    if Z == 0:
        return
    with nogil:
        status = ck.histograms(g.ndim, &g.extent[0], &g.window[0], Z, &pi[0, 0], L, &h[0, 0], L,
                               &logh[0, 0], L, num_threads)
    check_status(status, "histograms")


def posterior(floating[:, ::1] q, const floating[::1] log_prior, double floor,
              double[::1] loglik, int num_threads=0):
    """Rows of log-scores -> posteriors in place; exact log-likelihoods to loglik."""
    cdef Py_ssize_t n = q.shape[0], L = q.shape[1]
    cdef const floating *lp = NULL
    cdef int status = 0
    if log_prior is not None:
        if log_prior.shape[0] != L:
            raise ValueError(f"log_prior has length {log_prior.shape[0]}, expected {L}")
        lp = &log_prior[0]
    if loglik.shape[0] < n:
        raise ValueError("loglik is shorter than q")
    if n == 0:
        return
    with nogil:
        status = ck.posterior(n, L, &q[0, 0], L, lp, floor, &loglik[0], num_threads)
    check_status(status, "posterior")


def estep_csr(const index_t[::1] indptr, const index_t[::1] indices,
              const floating[::1] data, Py_ssize_t row_start, Py_ssize_t row_end,
              const floating[:, ::1] logh, const floating[::1] log_prior, double floor,
              floating[:, ::1] q, double[::1] loglik, int num_threads=0):
    """E-step for CSR rows [row_start, row_end): posteriors into q[:rows], exact
    log-likelihoods into loglik[:rows]."""
    cdef Py_ssize_t n = row_end - row_start, Z = logh.shape[0], L = logh.shape[1]
    cdef const floating *lp = NULL
    cdef const floating *lh = NULL
    cdef const index_t *ip = NULL
    cdef const floating *dp = NULL
    cdef int status = 0
    if not 0 <= row_start <= row_end <= indptr.shape[0] - 1:
        raise ValueError(f"rows [{row_start}, {row_end}) outside a CSR matrix with "
                         f"{indptr.shape[0] - 1} rows")
    csr_entries(indices, data, &ip, &dp)
    _rows(q.shape[0], q.shape[1], n, L, "q")
    if loglik.shape[0] < n:
        raise ValueError("loglik is shorter than the block")
    if log_prior is not None:
        if log_prior.shape[0] != L:
            raise ValueError(f"log_prior has length {log_prior.shape[0]}, expected {L}")
        lp = &log_prior[0]
    if n == 0:
        return
    if L == 0:
        raise ValueError("the grid has no cells")
    if Z > 0:
        lh = &logh[0, 0]
    with nogil:
        status = ck.estep_csr(n, &indptr[row_start], ip, dp, indices.shape[0], Z, L, lh, L, lp,
                              floor, &q[0, 0], L, &loglik[0], num_threads)
    check_status(status, "estep_csr")


def accumulate_csc(const index_t[::1] indptr, const index_t[::1] indices,
                   const floating[::1] data, index_t[::1] cursor,
                   Py_ssize_t row_start, Py_ssize_t row_end,
                   const floating[:, ::1] q, floating[:, ::1] n, int num_threads=0):
    """n[z] += sum over rows t in [row_start, row_end) of c_tz q[t - row_start]."""
    cdef Py_ssize_t Z = indptr.shape[0] - 1, L = n.shape[1], rows = row_end - row_start
    cdef const index_t *ip = NULL
    cdef const floating *dp = NULL
    cdef int status = 0
    _column_block(indptr, indices, data, cursor.shape[0], row_start, row_end, n.shape[0], L,
                  [("q", q.shape[0], q.shape[1], L)], &ip, &dp)
    if Z == 0 or rows == 0:
        return
    with nogil:
        status = ck.accumulate_csc(Z, &indptr[0], ip, dp, indices.shape[0], &cursor[0],
                                   row_start, row_end, L, &q[0, 0], L, &n[0, 0], L,
                                   num_threads)
    check_status(status, "accumulate_csc")


def topk_posterior(const floating[:, ::1] q, Py_ssize_t k, idx=None, val=None,
                   int num_threads=0):
    """Sparse posteriors: the min(k, L) largest entries of each row of q (n, L).

    Ties are broken by the lower position.  Positions are written in ascending order to
    idx (int32) and the values, divided by their sum so that they sum to 1, to val (the
    dtype of q).  idx and val are allocated with shape (n, min(k, L)) when None, else
    written in place (at least n rows, min(k, L) columns; further rows are untouched).
    Returns (idx, val).  Every row of q must be finite and non-negative with a positive
    entry (a posterior).
    """
    cdef Py_ssize_t n = q.shape[0], L = q.shape[1], kk
    cdef int status = 0
    cdef int32_t[:, ::1] iv
    cdef floating[:, ::1] vv
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if L == 0:
        raise ValueError("q has no columns (the grid has no cells)")
    if L > INT32_MAX:
        raise ValueError(f"q has {L} columns; positions must fit in int32")
    kk = min(k, L)
    if idx is None:
        idx = np.empty((n, kk), dtype=np.int32)
    if val is None:
        val = np.empty((n, kk), dtype=np.float32 if floating is float else np.float64)
    iv = idx
    vv = val
    _rows(iv.shape[0], iv.shape[1], n, kk, "idx")
    _rows(vv.shape[0], vv.shape[1], n, kk, "val")
    if n == 0:
        return idx, val
    with nogil:
        status = ck.topk_posterior(n, L, &q[0, 0], L, k, &iv[0, 0], kk, &vv[0, 0], kk,
                                   num_threads)
    if status == CG_ERR_ARGUMENT:
        raise ValueError("topk_posterior: every row of q must be finite and non-negative "
                         "with a positive entry")
    check_status(status, "topk_posterior")
    return idx, val


def estep_search_csr(const index_t[::1] indptr, const index_t[::1] indices,
                     const floating[::1] data, Py_ssize_t row_start, Py_ssize_t row_end,
                     grid_shape, const floating[:, ::1] logh, const floating[::1] log_prior,
                     double floor, Py_ssize_t stride, Py_ssize_t keep, double min_mass,
                     int32_t[:, ::1] idx, floating[:, ::1] val, double[::1] loglik,
                     int64_t[::1] scored=None, int num_threads=0,
                     const floating[:, ::1] lattice=None, int32_t[::1] hint=None):
    """The coarse-to-fine E-step for CSR rows [row_start, row_end) of a 2-D grid of
    ``grid_shape = (rows, cols)`` positions: sparse posteriors into idx / val (k =
    idx.shape[1] entries a row, as topk_posterior), log-likelihoods over the positions
    scored into loglik, the positions scored into ``scored`` (docs/scale.md).
    ``lattice``: logh's lattice columns (:func:`search_lattice`), else built here.
    ``hint`` (one int32 a row of the block, or None): tracking — a row's position from
    the last E-step (-1: none) tried first; receives each row's most probable position
    (docs/scale.md, "Tracking")."""
    cdef Py_ssize_t n = row_end - row_start, Z = logh.shape[0], L = logh.shape[1]
    cdef Py_ssize_t k = idx.shape[1], grid_rows, grid_cols
    cdef const floating *lp = NULL
    cdef const floating *lh = NULL
    cdef const index_t *ip = NULL
    cdef const floating *dp = NULL
    cdef int64_t *sp = NULL
    cdef const floating *lt = NULL
    cdef int32_t *hp = NULL
    cdef Py_ssize_t ld_lt = 0
    cdef int status = 0
    grid_rows, grid_cols = (int(v) for v in grid_shape)
    if grid_rows < 1 or grid_cols < 1 or grid_rows * grid_cols != L:
        raise ValueError(f"grid_shape {tuple(grid_shape)} does not have the {L} positions "
                         f"of logh")
    if L > INT32_MAX:
        raise ValueError(f"the grid has {L} positions; they must fit in int32")
    if stride < 1 or keep < 1:
        raise ValueError(f"stride and keep must be >= 1, got {stride} and {keep}")
    if not 0.0 <= min_mass <= 1.0:
        raise ValueError(f"min_mass must lie in [0, 1], got {min_mass}")
    if not 0 <= row_start <= row_end <= indptr.shape[0] - 1:
        raise ValueError(f"rows [{row_start}, {row_end}) outside a CSR matrix with "
                         f"{indptr.shape[0] - 1} rows")
    csr_entries(indices, data, &ip, &dp)
    if k < 1 or k > L:
        raise ValueError(f"idx has {k} columns; expected between 1 and L = {L}")
    _rows(idx.shape[0], idx.shape[1], n, k, "idx")
    _rows(val.shape[0], val.shape[1], n, k, "val")
    if loglik.shape[0] < n:
        raise ValueError("loglik is shorter than the block")
    if scored is not None:
        if scored.shape[0] < n:
            raise ValueError("scored is shorter than the block")
        if n > 0:
            sp = &scored[0]
    if log_prior is not None:
        if log_prior.shape[0] != L:
            raise ValueError(f"log_prior has length {log_prior.shape[0]}, expected {L}")
        lp = &log_prior[0]
    if lattice is not None:
        _rows(lattice.shape[0], lattice.shape[1], Z, lattice_size(grid_shape, stride),
              "lattice")
        ld_lt = lattice.shape[1]
        if Z > 0:
            lt = &lattice[0, 0]
    if hint is not None:
        if hint.shape[0] < n:
            raise ValueError("hint is shorter than the block")
        if n > 0:
            hp = &hint[0]
    if n == 0:
        return
    if Z > 0:
        lh = &logh[0, 0]
    with nogil:
        status = ck.estep_search_csr(n, &indptr[row_start], ip, dp, indices.shape[0], Z,
                                     grid_rows, grid_cols, lh, L, lt, ld_lt, lp, floor,
                                     stride, keep,
                                     min_mass, k, &idx[0, 0], k, &val[0, 0], k, &loglik[0],
                                     sp, hp, num_threads)
    check_status(status, "estep_search_csr")


def lattice_size(grid_shape, Py_ssize_t stride):
    """The positions of estep_search_csr's lattice on a ``grid_shape = (rows, cols)``
    grid: those whose row and column are multiples of ``stride``."""
    grid_rows, grid_cols = (int(v) for v in grid_shape)
    return ((grid_rows + stride - 1) // stride) * ((grid_cols + stride - 1) // stride)


def search_lattice(const floating[:, ::1] logh, grid_shape, Py_ssize_t stride):
    """The lattice columns of ``logh`` (n_features, L) that estep_search_csr scores first:
    positions whose row and column of the ``grid_shape`` grid are multiples of
    ``stride``, row by row; a new C-contiguous (n_features, lattice size) array."""
    grid_rows, grid_cols = (int(v) for v in grid_shape)
    if grid_rows < 1 or grid_cols < 1 or grid_rows * grid_cols != logh.shape[1]:
        raise ValueError(f"grid_shape {tuple(grid_shape)} does not have the "
                         f"{logh.shape[1]} positions of logh")
    if stride < 1:
        raise ValueError(f"stride must be >= 1, got {stride}")
    grid = np.asarray(logh).reshape(logh.shape[0], grid_rows, grid_cols)
    return np.ascontiguousarray(grid[:, ::stride, ::stride].reshape(logh.shape[0], -1))


def accumulate_csc_topk(const index_t[::1] indptr, const index_t[::1] indices,
                        const floating[::1] data, index_t[::1] cursor,
                        Py_ssize_t row_start, Py_ssize_t row_end,
                        const int32_t[:, ::1] idx, const floating[:, ::1] val,
                        floating[:, ::1] n, int num_threads=0):
    """n[z, idx[t', j]] += c_tz val[t', j] (t' = t - row_start) over rows t in
    [row_start, row_end): accumulate_csc for sparse posteriors (topk_posterior)."""
    cdef Py_ssize_t Z = indptr.shape[0] - 1, L = n.shape[1], rows = row_end - row_start
    cdef Py_ssize_t k = idx.shape[1]
    cdef const index_t *ip = NULL
    cdef const floating *dp = NULL
    cdef int status = 0
    _column_block(indptr, indices, data, cursor.shape[0], row_start, row_end, n.shape[0], L,
                  [("idx", idx.shape[0], idx.shape[1], k), ("val", val.shape[0], val.shape[1], k)],
                  &ip, &dp)
    if L == 0:
        raise ValueError("n has no columns (the grid has no cells)")
    if Z == 0 or rows == 0:
        return
    # the sparse posteriors, NULL when they hold no entries (k = 0)
    cdef const int32_t *xp = &idx[0, 0] if k > 0 else NULL
    cdef const floating *vp = &val[0, 0] if k > 0 else NULL
    with nogil:
        status = ck.accumulate_csc_topk(Z, &indptr[0], ip, dp, indices.shape[0], &cursor[0],
                                        row_start, row_end, k, xp, k, vp, k, L, &n[0, 0], L,
                                        num_threads)
    if status == CG_ERR_INDEX:
        raise ValueError("accumulate_csc_topk: a position in idx is outside [0, L) or a "
                         "sparse index or index pointer is out of range (corrupt input)")
    check_status(status, "accumulate_csc_topk")


def mstep(floating[:, ::1] n, const floating[:, ::1] h, floating[:, ::1] pi, extent, window,
          double rho, double alpha, int num_threads=0):
    """Counting-grid M-step in place on pi (n is used as scratch)."""
    cdef _Grid g = _Grid(extent, window)
    cdef int status = 0
    cdef Py_ssize_t Z = pi.shape[0], L = g.L
    _per_cell(L, [("pi", pi.shape[0], pi.shape[1], 1), ("n", n.shape[0], n.shape[1], Z),
                  ("h", h.shape[0], h.shape[1], Z)])
    with nogil:
        status = ck.mstep(g.ndim, &g.extent[0], &g.window[0], Z, &n[0, 0], L, &h[0, 0], L,
                          &pi[0, 0], L, rho, alpha, num_threads)
    check_status(status, "mstep")


def squarem(const floating[:, ::1] p0, const floating[:, ::1] p1,
            const floating[:, ::1] p2, double step_max, floating[:, ::1] out,
            int num_threads=0):
    """One SQUAREM extrapolation (scheme S3) of three successive grids ``p0 -> p1 -> p2``
    (n_features, L) of the EM map into ``out`` (which may be ``p0`` itself): ``p0 - 2 a r
    + a^2 v`` with ``r = p1 - p0``, ``v = p2 - 2 p1 + p0`` and the step ``a = -clip(|r| /
    |v|, 1, step_max)``, floored at a tenth of the three grids' least entry and normalised
    per cell (docs/scale.md, "Extrapolated EM").  Returns the step ``a``."""
    cdef Py_ssize_t Z = p0.shape[0], L = p0.shape[1]
    cdef int status = 0
    cdef double step = 0.0
    shapes = [(p0.shape[0], p0.shape[1]), (p1.shape[0], p1.shape[1]),
              (p2.shape[0], p2.shape[1]), (out.shape[0], out.shape[1])]
    if len(set(shapes)) != 1:
        raise ValueError(f"p0, p1, p2 and out must have one shape; got {shapes}")
    if Z < 1 or L < 1:
        raise ValueError("p0, p1, p2 and out must not be empty")
    if not 1.0 <= step_max <= 1e6:
        raise ValueError(f"step_max must be in [1, 1e6], got {step_max!r}")
    if _overlaps(out, p1) or _overlaps(out, p2) or (
            _overlaps(out, p0) and &out[0, 0] != &p0[0, 0]):
        raise ValueError("out must be p0 itself or share no memory with p0, p1 and p2")
    with nogil:
        status = ck.squarem(Z, L, &p0[0, 0], L, &p1[0, 0], L, &p2[0, 0], L, step_max,
                            &out[0, 0], L, &step, num_threads)
    if status == CG_ERR_ARGUMENT:
        raise ValueError("p0, p1 and p2 must be >= 0 and finite everywhere")
    check_status(status, "squarem")
    return step


def _overlaps(a, b):
    return np.shares_memory(np.asarray(a), np.asarray(b))


def mstep_anchored(floating[:, ::1] n, const floating[:, ::1] h, floating[:, ::1] pi, extent,
                   window, const floating[:, ::1] anchor, double weight, double rho,
                   double alpha, int num_threads=0):
    """The M-step drawn toward ``anchor`` (n_features, L), in place on pi (n is scratch)."""
    cdef _Grid g = _Grid(extent, window)
    cdef int status = 0
    cdef Py_ssize_t Z = pi.shape[0], L = g.L
    _per_cell(L, [("pi", pi.shape[0], pi.shape[1], 1), ("n", n.shape[0], n.shape[1], Z),
                  ("h", h.shape[0], h.shape[1], Z),
                  ("anchor", anchor.shape[0], anchor.shape[1], Z)])
    with nogil:
        status = ck.mstep_anchored(g.ndim, &g.extent[0], &g.window[0], Z, &n[0, 0], L,
                                   &h[0, 0], L, &pi[0, 0], L, &anchor[0, 0], L, weight, rho,
                                   alpha, num_threads)
    check_status(status, "mstep_anchored")
