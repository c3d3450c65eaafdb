# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Thin Cython wrappers of the Rate Adapting Poisson kernels (csrc/rap, linked into this module).

Private: :class:`countgrid.RAP` validates user input first, but these wrappers trust
nothing they hand to C: every array is checked against the others (``W`` against the
number of columns of the counts, the lengths of ``a``, ``beta``, ``ntrials`` and the
velocities, the scratch sizes, the bit generators against the row blocks), the CSR rows a
kernel reads are checked (index pointers non-decreasing and inside ``indices``, column
indices inside ``[0, D)``) and ``ntrials`` must hold integers in ``[1, max_trials]``; a
violation raises ValueError.  Sparse counts are CSR with int64 ``indptr``/``indices``
(``project`` also takes int32); ``W`` is ``(D, K)`` row-major.  Matrix products of dense
blocks go through SciPy's ``cython_blas``; random numbers come from NumPy bit generators
(one per block of ``block_rows`` rows).

Long calls run in blocks of rows of about ``block_work()`` multiply-adds per thread, with
``check_interrupt()`` between blocks, so Ctrl-C is honoured within one block's time.
Blocks are whole ``block_rows`` blocks and every row depends only on its own data and
its own block's random stream, so the results do not depend on the blocking.
"""
import numpy as np
from cpython.pycapsule cimport PyCapsule_GetName, PyCapsule_GetPointer
from cython cimport floating
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free, malloc
from numpy.random cimport bitgen_t

cimport countgrid.rap._cdecl as ck
from countgrid._common cimport check_interrupt, check_status, index_t, swap_block_setting
from countgrid.rap._cdecl cimport cg_dgemm_t, cg_sgemm_t

max_lograte = ck.CG_RAP_MAX_LOGRATE
max_trials = int(ck.CG_RAP_MAX_TRIALS)
gemm_rows = int(ck.CG_RAP_GEMM_ROWS)

# multiply-adds per thread between two interrupt checks (about 10-50 ms)
cdef Py_ssize_t _block_work = 1 << 24
# entries of the visible step's scratch per block (bounds its memory: 24 bytes each, at
# least one GEMM group of gemm_rows rows)
cdef Py_ssize_t _block_entries = 1 << 24


def block_work(work=None, entries=None):
    """The blocking of long calls: ``(work, entries)``, multiply-adds per thread and
    scratch entries of the visible step per block; set either (for tests) and get the old
    values back."""
    return (swap_block_setting(&_block_work, work, "work"),
            swap_block_setting(&_block_entries, entries, "entries"))


cdef bitgen_t *_bitgen(object bit_generator) except NULL:
    capsule = bit_generator.capsule
    return <bitgen_t *>PyCapsule_GetPointer(capsule, "BitGenerator")


cdef class _Gens:
    """An array of bitgen_t pointers kept alive with their Python owners."""
    cdef bitgen_t **ptr
    cdef list owners
    cdef Py_ssize_t n

    def __cinit__(self, list bit_generators):
        cdef Py_ssize_t i
        self.n = len(bit_generators)
        self.owners = list(bit_generators)
        self.ptr = <bitgen_t **>malloc(max(1, self.n) * sizeof(bitgen_t *))
        if self.ptr == NULL:
            raise MemoryError()
        for i in range(self.n):
            self.ptr[i] = _bitgen(self.owners[i])

    def __dealloc__(self):
        free(self.ptr)


cdef inline bitgen_t **_gens_ptr(_Gens gens, Py_ssize_t n_rows, Py_ssize_t block_rows) except? NULL:
    if gens is None:
        return NULL
    if gens.n < (n_rows + block_rows - 1) // block_rows:
        raise ValueError(f"{gens.n} bit generators for {n_rows} rows in blocks of {block_rows}")
    return gens.ptr


# SciPy's BLAS, taken from the capsules of scipy.linalg.cython_blas at import
# time (no build-time dependency on SciPy's .pxd files).
cdef cg_sgemm_t _sgemm = NULL
cdef cg_dgemm_t _dgemm = NULL


def _load_blas():
    global _sgemm, _dgemm
    from scipy.linalg import cython_blas

    caps = cython_blas.__pyx_capi__
    _sgemm = <cg_sgemm_t>PyCapsule_GetPointer(caps["sgemm"], PyCapsule_GetName(caps["sgemm"]))
    _dgemm = <cg_dgemm_t>PyCapsule_GetPointer(caps["dgemm"], PyCapsule_GetName(caps["dgemm"]))


_load_blas()

def make_gens(list bit_generators):
    """Wrap NumPy bit generators for the kernels (one per block of rows)."""
    return _Gens(bit_generators)


# ------------------------------------------------------------------ checks
cdef int _check_csr(const index_t[::1] indptr, const index_t[::1] indices, Py_ssize_t ndata,
                    const int64_t[::1] rows, Py_ssize_t n, Py_ssize_t D, str what) except -1:
    """The CSR rows a kernel will read (rows[0:n], or the first n rows when rows is None):
    row numbers in range, index pointers non-decreasing inside indices, column indices in
    [0, D).  O(entries read), the kernel's own order of cost."""
    cdef Py_ssize_t nrow = indptr.shape[0] - 1, r, row, p, p0, p1
    cdef int bad = 0
    if nrow < 0:
        raise ValueError(f"{what}: indptr is empty")
    if indices.shape[0] != ndata:
        raise ValueError(f"{what}: indices has {indices.shape[0]} entries, data {ndata}")
    if rows is not None:
        if rows.shape[0] != n:
            raise ValueError(f"{what}: rows has {rows.shape[0]} entries for {n} rows")
    elif n > nrow:
        raise ValueError(f"{what}: {n} rows requested from a CSR matrix of {nrow} rows")
    with nogil:
        for r in range(n):
            row = rows[r] if rows is not None else r
            if row < 0 or row >= nrow:
                bad = 1
                break
            p0 = indptr[row]
            p1 = indptr[row + 1]
            if p0 < 0 or p1 < p0 or p1 > ndata:
                bad = 2
                break
            for p in range(p0, p1):
                if indices[p] < 0 or indices[p] >= D:
                    bad = 3
                    break
            if bad:
                break
    if bad == 1:
        raise ValueError(f"{what}: a row number is outside [0, {nrow})")
    if bad == 2:
        raise ValueError(f"{what}: indptr is not non-decreasing inside the {ndata} entries "
                         "(corrupt CSR arrays)")
    if bad == 3:
        raise ValueError(f"{what}: a column index is outside [0, {D}) (the counts have more "
                         "columns than W has rows, or corrupt CSR arrays)")
    return 0


cdef int _check_ntrials(const floating[::1] ntrials, Py_ssize_t K, str what) except -1:
    cdef Py_ssize_t j
    cdef double m
    if ntrials.shape[0] != K:
        raise ValueError(f"{what}: ntrials has {ntrials.shape[0]} entries; W has {K} columns")
    for j in range(K):
        m = ntrials[j]
        if not (1.0 <= m <= max_trials) or m != <double>(<int64_t>m):
            raise ValueError(f"{what}: ntrials must hold integers in [1, {max_trials}], "
                             f"got {m!r}")
    return 0


cdef int _check_W(const floating[:, ::1] W, Py_ssize_t n_features, str what) except -1:
    if W.shape[0] < 1 or W.shape[1] < 1:
        raise ValueError(f"{what}: W must have at least one row and column, got shape "
                         f"({W.shape[0]}, {W.shape[1]})")
    if n_features != W.shape[0]:
        raise ValueError(f"{what}: the counts have {n_features} columns but W has "
                         f"{W.shape[0]} rows")
    return 0


cdef list _row_blocks(const index_t[::1] indptr, const int64_t[::1] rows, Py_ssize_t n,
                      Py_ssize_t K, Py_ssize_t block_rows, int num_threads):
    """Boundaries of blocks of whole block_rows-row blocks of about _block_work
    multiply-adds per thread (cost of a row: (its non-zeros + 1) * K)."""
    cdef Py_ssize_t r, row, start = 0
    cdef double cost = 0.0, limit = <double>_block_work * max(1, num_threads)
    out = []
    for r in range(n):
        row = rows[r] if rows is not None else r
        cost += (<double>(indptr[row + 1] - indptr[row]) + 1.0) * K
        if cost >= limit and (r + 1) % block_rows == 0 and r + 1 < n:
            out.append((start, r + 1))
            start, cost = r + 1, 0.0
    out.append((start, n))
    return out


# ------------------------------------------------------------------ kernels
def project(const index_t[::1] indptr, const index_t[::1] indices, const floating[::1] data,
            const int64_t[::1] rows, const floating[:, ::1] W, Py_ssize_t n,
            Py_ssize_t n_features, int num_threads=0):
    """out[r] = x_{rows[r]} @ W (rows None: the first n rows), the latent coordinates of the
    paper's section 2.1, for int32 or int64 CSR arrays of ``n_features`` columns."""
    cdef Py_ssize_t D = W.shape[0], K = W.shape[1], r0, r1
    cdef int status = 0
    _check_W(W, n_features, "project")
    if n < 0:
        raise ValueError("project: n must be >= 0")
    _check_csr(indptr, indices, data.shape[0], rows, n, D, "project")
    out = np.zeros((n, K), dtype=np.float32 if floating is float else np.float64)
    cdef floating[:, ::1] o = out
    if n == 0:
        return out
    cdef const int64_t *rp = &rows[0] if rows is not None else NULL
    cdef const index_t *ip = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const floating *dp = &data[0] if data.shape[0] > 0 else NULL
    for r0, r1 in _row_blocks(indptr, rows, n, K, 1, num_threads):
        with nogil:
            if rp != NULL:
                status = ck.project(r1 - r0, D, K, &indptr[0], ip, dp, rp + r0, &W[0, 0],
                                    &o[r0, 0], num_threads)
            else:
                status = ck.project(r1 - r0, D, K, &indptr[r0], ip, dp, NULL, &W[0, 0],
                                    &o[r0, 0], num_threads)
        check_status(status, "project")
        check_interrupt()
    return out


cdef int _hidden(const int64_t[::1] indptr, const int64_t[::1] indices, const floating[::1] data,
                 const int64_t[::1] rows, const floating[:, ::1] W, const floating[::1] beta,
                 const floating[::1] ntrials, floating[:, ::1] mp, floating[:, ::1] h,
                 bitgen_t **g, Py_ssize_t n, Py_ssize_t block_rows, int num_threads) except -1:
    """The hidden kernel over n rows (already checked), in interruptible blocks."""
    cdef int status = 0
    cdef Py_ssize_t r0, r1, K = W.shape[1]
    cdef const int64_t *rp = &rows[0] if rows is not None else NULL
    cdef const int64_t *ip = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const floating *dp = &data[0] if data.shape[0] > 0 else NULL
    for r0, r1 in _row_blocks(indptr, rows, n, K, block_rows, num_threads):
        with nogil:
            status = ck.hidden(r1 - r0, W.shape[0], K,
                               &indptr[0] if rp != NULL else &indptr[r0], ip, dp,
                               rp + r0 if rp != NULL else NULL, &W[0, 0], &beta[0],
                               &ntrials[0], &mp[r0, 0], &h[r0, 0],
                               g + r0 // block_rows if g != NULL else NULL, block_rows,
                               num_threads)
        check_status(status, "hidden")
        check_interrupt()
    return 0


def visible_block_rows(Py_ssize_t D, Py_ssize_t K, Py_ssize_t block_rows, int num_threads=1):
    """Rows per interruptible block of the visible step: whole GEMM groups (the kernel's
    groups of whole block_rows blocks of about gemm_rows rows, counted from row 0, so the
    blocking changes no result), about ``block_work`` multiply-adds per thread, at most
    ``entries`` scratch entries (or one group)."""
    cdef Py_ssize_t per = (gemm_rows + block_rows - 1) // block_rows * block_rows
    cdef Py_ssize_t by_work = (_block_work * max(1, num_threads)) // max(1, D * (K + 1))
    cdef Py_ssize_t by_memory = _block_entries // max(1, D)
    # at least one group per thread (the threads share a block's groups), at most the
    # scratch bound (but one group)
    return min(max(per * max(1, num_threads), by_work // per * per),
               max(per, by_memory // per * per))


def workspace(Py_ssize_t n, Py_ssize_t D, Py_ssize_t K, dtype, Py_ssize_t block_rows=1,
              int num_threads=1):
    """Scratch arrays of the visible step for blocks of up to n rows (reused across
    minibatches): ``(R, indptr, indices, data)`` of one block."""
    m = max(1, min(n, visible_block_rows(D, K, block_rows, num_threads)))
    return (np.empty((m, D), dtype=dtype), np.zeros(m + 1, dtype=np.int64),
            np.empty(m * D, dtype=np.int64), np.empty(m * D, dtype=dtype))


cdef tuple _visible(floating[:, ::1] h, const floating[:, ::1] W, const floating[::1] a,
                    bitgen_t **g, Py_ssize_t block_rows, int num_threads, tuple work=None):
    """CSR of the visible step over all rows of h (shapes already checked), in
    interruptible blocks whose outputs are appended."""
    cdef Py_ssize_t n = h.shape[0], D = W.shape[0], K = W.shape[1], r0, r1, m, nnz, total = 0
    cdef int status
    dt = np.float32 if floating is float else np.float64
    cdef Py_ssize_t rows_per = visible_block_rows(D, K, block_rows, num_threads)
    cdef Py_ssize_t need = min(n, rows_per)
    if (work is None or len(work) != 4 or work[0].ndim != 2 or work[0].shape[0] < need
            or work[0].shape[1] != D or work[0].dtype != np.dtype(dt)
            or work[1].shape[0] < need + 1 or work[1].dtype != np.int64
            or work[2].shape[0] < need * D or work[2].dtype != np.int64
            or work[3].shape[0] < need * D or work[3].dtype != np.dtype(dt)):
        work = workspace(need, D, K, dt, block_rows, num_threads)
    R_arr, ip_arr, ii_arr, dd_arr = work
    cdef floating[:, ::1] R = R_arr
    cdef int64_t[::1] ip = ip_arr
    cdef int64_t[::1] ii = ii_arr
    cdef floating[::1] dd = dd_arr
    cdef void *gemm = <void *>_sgemm if floating is float else <void *>_dgemm
    indptr = np.zeros(n + 1, dtype=np.int64)
    pieces_i, pieces_d = [], []
    for r0 in range(0, n, rows_per):
        r1 = min(n, r0 + rows_per)
        m = r1 - r0
        with nogil:
            status = ck.visible(m, D, K, &h[r0, 0], &W[0, 0], gemm, &R[0, 0], D, &a[0],
                                g + r0 // block_rows if g != NULL else NULL, block_rows,
                                &ip[0], &ii[0], &dd[0], num_threads)
        check_status(status, "visible")
        nnz = ip[m]
        indptr[r0 + 1:r1 + 1] = ip_arr[1:m + 1] + total
        pieces_i.append(ii_arr[:nnz].copy())
        pieces_d.append(dd_arr[:nnz].copy())
        total += nnz
        check_interrupt()
    if not pieces_i:
        return indptr, np.zeros(0, np.int64), np.zeros(0, dt)
    if len(pieces_i) == 1:
        return indptr, pieces_i[0], pieces_d[0]
    return indptr, np.concatenate(pieces_i), np.concatenate(pieces_d)


def hidden(const int64_t[::1] indptr, const int64_t[::1] indices, const floating[::1] data,
           const int64_t[::1] rows, const floating[:, ::1] W, const floating[::1] beta,
           const floating[::1] ntrials, Py_ssize_t n, Py_ssize_t n_features, _Gens gens=None,
           Py_ssize_t block_rows=1, int num_threads=0):
    """(mp, h): M sigma(x W - beta) (eq. 2) and a binomial sample (or mp if gens is None)."""
    cdef Py_ssize_t K = W.shape[1]
    _check_W(W, n_features, "hidden")
    if n < 0 or block_rows < 1:
        raise ValueError("hidden: n must be >= 0 and block_rows >= 1")
    if beta.shape[0] != K:
        raise ValueError(f"hidden: beta has {beta.shape[0]} entries; W has {K} columns")
    _check_ntrials(ntrials, K, "hidden")
    _check_csr(indptr, indices, data.shape[0], rows, n, W.shape[0], "hidden")
    dt = np.float32 if floating is float else np.float64
    mp = np.zeros((n, K), dtype=dt)
    h = np.zeros((n, K), dtype=dt)
    if n == 0:
        return mp, h
    cdef bitgen_t **g = _gens_ptr(gens, n, block_rows)
    cdef floating[:, ::1] mpv = mp
    cdef floating[:, ::1] hv = h
    _hidden(indptr, indices, data, rows, W, beta, ntrials, mpv, hv, g, n, block_rows, num_threads)
    return mp, h


def visible(floating[:, ::1] h, const floating[:, ::1] W, const floating[::1] a, _Gens gens=None,
            Py_ssize_t block_rows=1, int num_threads=0):
    """CSR (indptr, indices, data) of x ~ Poisson(exp(min(a + h W^T, 30))) (eq. 1), or of the
    rates themselves when gens is None (mean field)."""
    _check_W(W, W.shape[0], "visible")
    if h.shape[1] != W.shape[1] or a.shape[0] != W.shape[0] or block_rows < 1:
        raise ValueError(f"visible: h ({h.shape[0]}, {h.shape[1]}), W ({W.shape[0]}, "
                         f"{W.shape[1]}) and a ({a.shape[0]},) have inconsistent shapes "
                         "(or block_rows < 1)")
    if h.shape[0] == 0:
        dt = np.float32 if floating is float else np.float64
        return np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, dt)
    cdef bitgen_t **g = _gens_ptr(gens, h.shape[0], block_rows)
    return _visible(h, W, a, g, block_rows, num_threads)


def cd_step(const int64_t[::1] indptr, const int64_t[::1] indices, const floating[::1] data,
            const int64_t[::1] rows, Py_ssize_t n_features, floating[:, ::1] W, floating[::1] a,
            floating[::1] beta, const floating[::1] ntrials, floating[:, ::1] vW,
            floating[::1] va, floating[::1] vbeta, double lr, double momentum,
            double weight_decay, int cd_steps, _Gens gens=None, Py_ssize_t block_rows=1,
            int num_threads=0, tuple work=None):
    """One CD-k momentum update (eq. 10, Rao-Blackwellised) on the rows `rows` of a CSR matrix.

    gens=None runs the mean-field variant (conditional means instead of samples); `work`
    (from `workspace`) saves re-allocating the scratch arrays of every minibatch.  The
    parameters change only in the last kernel call (the update itself), so an interrupt
    leaves them either before or after this step."""
    cdef Py_ssize_t n = rows.shape[0], D = W.shape[0], K = W.shape[1]
    cdef int status, step
    _check_W(W, n_features, "cd_step")
    if (a.shape[0] != D or beta.shape[0] != K or vW.shape[0] != D
            or vW.shape[1] != K or va.shape[0] != D or vbeta.shape[0] != K):
        raise ValueError(f"cd_step: parameter shapes are inconsistent with W ({D}, {K}): "
                         f"a ({a.shape[0]},), beta ({beta.shape[0]},), vW ({vW.shape[0]}, "
                         f"{vW.shape[1]}), va ({va.shape[0]},), vbeta ({vbeta.shape[0]},)")
    if cd_steps < 1 or block_rows < 1:
        raise ValueError("cd_step: cd_steps and block_rows must be >= 1")
    if not (np.isfinite(lr) and np.isfinite(momentum) and np.isfinite(weight_decay)):
        raise ValueError("cd_step: lr, momentum and weight_decay must be finite")
    _check_ntrials(ntrials, K, "cd_step")
    if n == 0:
        return
    _check_csr(indptr, indices, data.shape[0], rows, n, D, "cd_step")
    cdef bitgen_t **g = _gens_ptr(gens, n, block_rows)
    dt = np.float32 if floating is float else np.float64
    mp0 = np.empty((n, K), dtype=dt)
    mp1 = np.empty((n, K), dtype=dt)
    h = np.empty((n, K), dtype=dt)
    cdef floating[:, ::1] mp0v = mp0
    cdef floating[:, ::1] mp1v = mp1
    cdef floating[:, ::1] hv = h
    _hidden(indptr, indices, data, rows, W, beta, ntrials, mp0v, hv, g, n, block_rows, num_threads)
    cdef const int64_t[::1] ip1
    cdef const int64_t[::1] ii1
    cdef const floating[::1] dd1
    cdef const int64_t[::1] norows = None
    for step in range(cd_steps):
        ip1_, ii1_, dd1_ = _visible(hv, W, a, g, block_rows, num_threads, work)
        ip1, ii1, dd1 = ip1_, ii1_, dd1_
        _hidden(ip1, ii1, dd1, norows, W, beta, ntrials, mp1v, hv, g, n, block_rows, num_threads)
    cdef const int64_t *p_ii1 = &ii1[0] if ii1.shape[0] > 0 else NULL
    cdef const floating *p_dd1 = &dd1[0] if dd1.shape[0] > 0 else NULL
    cdef const int64_t *p_ii0 = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const floating *p_dd0 = &data[0] if data.shape[0] > 0 else NULL
    with nogil:
        status = ck.cd_update(n, D, K, &indptr[0], p_ii0, p_dd0, &rows[0], &ip1[0], p_ii1, p_dd1,
                              &mp0v[0, 0], &mp1v[0, 0], &W[0, 0], &a[0], &beta[0], &vW[0, 0],
                              &va[0], &vbeta[0], lr, momentum, weight_decay, num_threads)
    check_status(status, "cd_update")


def cd_gradient(const int64_t[::1] indptr0, const int64_t[::1] indices0, const double[::1] data0,
                const int64_t[::1] indptr1, const int64_t[::1] indices1, const double[::1] data1,
                const double[:, ::1] mp0, const double[:, ::1] mp1, Py_ssize_t D):
    """The batch-average statistics of eq. (10) for given x0, x1 and M sigma's (for tests):
    returns (gW, ga, gbeta), computed by one plain-SGD step (lr=1) from zero parameters."""
    cdef Py_ssize_t n = mp0.shape[0], K = mp0.shape[1]
    cdef int status
    if n < 1 or K < 1 or D < 1:
        raise ValueError("cd_gradient: needs at least one row, one word and one unit")
    if mp1.shape[0] != n or mp1.shape[1] != K:
        raise ValueError("cd_gradient: mp0 and mp1 differ in shape")
    cdef const int64_t[::1] norows = None
    _check_csr(indptr0, indices0, data0.shape[0], norows, n, D, "cd_gradient")
    _check_csr(indptr1, indices1, data1.shape[0], norows, n, D, "cd_gradient")
    if indptr1[0] != 0:
        raise ValueError("cd_gradient: indptr1 must start at 0")
    W = np.zeros((D, K)); a = np.zeros(D); beta = np.zeros(K)
    vW = np.zeros((D, K)); va = np.zeros(D); vb = np.zeros(K)
    cdef double[:, ::1] Wv = W, vWv = vW
    cdef double[::1] av = a, bv = beta, vav = va, vbv = vb
    cdef const int64_t *p_ii0 = &indices0[0] if indices0.shape[0] > 0 else NULL
    cdef const double *p_dd0 = &data0[0] if data0.shape[0] > 0 else NULL
    cdef const int64_t *p_ii1 = &indices1[0] if indices1.shape[0] > 0 else NULL
    cdef const double *p_dd1 = &data1[0] if data1.shape[0] > 0 else NULL
    with nogil:
        status = ck.cg_rap_cd_update_f64_i64(n, D, K, &indptr0[0], p_ii0, p_dd0, NULL,
                                      &indptr1[0], p_ii1, p_dd1, &mp0[0, 0], &mp1[0, 0],
                                      &Wv[0, 0], &av[0], &bv[0], &vWv[0, 0], &vav[0], &vbv[0],
                                      1.0, 0.0, 0.0, 1)
    check_status(status, "cd_update")
    return W, a, beta


def poisson(object bit_generator, const double[::1] lam):
    """Poisson samples from the kernels' sampler (for tests)."""
    cdef bitgen_t *g = _bitgen(bit_generator)
    out = np.empty(lam.shape[0])
    cdef double[::1] o = out
    cdef Py_ssize_t i
    with bit_generator.lock, nogil:
        for i in range(lam.shape[0]):
            o[i] = ck.cg_rap_poisson(g, lam[i])
    return out


def binomial(object bit_generator, const int64_t[::1] n, const double[::1] p):
    """Binomial samples from the kernels' sampler (for tests); ``n`` in [0, max_trials]."""
    cdef bitgen_t *g = _bitgen(bit_generator)
    out = np.empty(p.shape[0])
    cdef double[::1] o = out
    cdef Py_ssize_t i
    if n.shape[0] != p.shape[0]:
        raise ValueError("n and p differ in length")
    for i in range(n.shape[0]):
        if n[i] < 0 or n[i] > max_trials:
            raise ValueError(f"binomial: n must lie in [0, {max_trials}], got {n[i]}")
    with bit_generator.lock, nogil:
        for i in range(p.shape[0]):
            o[i] = ck.cg_rap_binomial(g, n[i], p[i])
    return out
