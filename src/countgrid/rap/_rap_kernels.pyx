# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Thin Cython wrappers of the Rate Adapting Poisson kernels (csrc/rap, linked into this module).

Private: :class:`countgrid.RAP` validates user input first.  Sparse counts are
CSR with int64 ``indptr``/``indices`` (``project`` also takes int32); ``W`` is ``(D, K)`` row-major.  Matrix
products of dense blocks go through SciPy's ``cython_blas``; random numbers
come from NumPy bit generators (one per block of ``block_rows`` rows).
"""
import numpy as np
from cpython.pycapsule cimport PyCapsule_GetName, PyCapsule_GetPointer
from cython cimport floating
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free, malloc
from numpy.random cimport bitgen_t

cimport countgrid.rap._ckernels as ck
from countgrid._common cimport check_status, index_t
from countgrid.rap._ckernels cimport cg_dgemm_t, cg_sgemm_t

max_lograte = ck.CG_RAP_MAX_LOGRATE


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


cdef int _csr_check(const index_t[::1] indptr, const index_t[::1] indices, Py_ssize_t ndata,
                    const int64_t[::1] rows, Py_ssize_t n, Py_ssize_t D) except -1:
    cdef Py_ssize_t r, nrow = indptr.shape[0] - 1
    if indptr.shape[0] < 1 or indices.shape[0] != ndata or indptr[nrow] > ndata:
        raise ValueError("inconsistent CSR arrays")
    if rows is not None:
        if rows.shape[0] != n:
            raise ValueError("rows has the wrong length")
        for r in range(n):
            if rows[r] < 0 or rows[r] >= nrow:
                raise ValueError("a row index is out of range")
    elif n > nrow:
        raise ValueError("more rows requested than the CSR matrix has")
    return 0


def project(const index_t[::1] indptr, const index_t[::1] indices, const floating[::1] data,
            const int64_t[::1] rows, const floating[:, ::1] W, Py_ssize_t n, int num_threads=0):
    """out[r] = x_{rows[r]} @ W (rows None: the first n rows), the latent coordinates of the
    paper's section 2.1, for int32 or int64 CSR arrays."""
    cdef Py_ssize_t D = W.shape[0], K = W.shape[1]
    cdef int status
    _csr_check(indptr, indices, data.shape[0], rows, n, D)
    out = np.zeros((n, K), dtype=np.float32 if floating is float else np.float64)
    cdef floating[:, ::1] o = out
    if n == 0:
        return out
    cdef const int64_t *rp = &rows[0] if rows is not None else NULL
    cdef const index_t *ip = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const floating *dp = &data[0] if data.shape[0] > 0 else NULL
    with nogil:
        status = ck.project(n, D, K, &indptr[0], ip, dp, rp, &W[0, 0], &o[0, 0], num_threads)
    check_status(status, "project")
    return out


cdef int _hidden(const int64_t[::1] indptr, const int64_t[::1] indices, const floating[::1] data,
                 const int64_t[::1] rows, const floating[:, ::1] W, const floating[::1] beta,
                 const floating[::1] ntrials, floating[:, ::1] mp, floating[:, ::1] h,
                 bitgen_t **g, Py_ssize_t n, Py_ssize_t block_rows, int num_threads) except -1:
    cdef int status
    cdef const int64_t *rp = &rows[0] if rows is not None else NULL
    cdef const int64_t *ip = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const floating *dp = &data[0] if data.shape[0] > 0 else NULL
    with nogil:
        status = ck.hidden(n, W.shape[0], W.shape[1], &indptr[0], ip, dp, rp, &W[0, 0], &beta[0],
                           &ntrials[0], &mp[0, 0], &h[0, 0], g, block_rows, num_threads)
    return check_status(status, "hidden")


def workspace(Py_ssize_t n, Py_ssize_t D, dtype):
    """Scratch arrays of the visible step for up to n rows (reused across minibatches)."""
    return (np.empty((n, D), dtype=dtype), np.zeros(n + 1, dtype=np.int64),
            np.empty(max(1, n * D), dtype=np.int64), np.empty(max(1, n * D), dtype=dtype))


cdef tuple _visible(floating[:, ::1] h, const floating[:, ::1] W, const floating[::1] a,
                    bitgen_t **g, Py_ssize_t block_rows, int num_threads, tuple work=None):
    cdef Py_ssize_t n = h.shape[0], D = W.shape[0]
    cdef int status
    dt = np.float32 if floating is float else np.float64
    if (work is None or work[0].shape[0] < n or work[0].shape[1] != D
            or work[0].dtype != np.dtype(dt)):
        work = workspace(n, D, dt)
    R_arr, indptr, indices, data = work
    cdef floating[:, ::1] R = R_arr[:n]
    cdef int64_t[::1] ip = indptr
    cdef int64_t[::1] ii = indices
    cdef floating[::1] dd = data
    cdef Py_ssize_t K = W.shape[1]
    cdef void *gemm = <void *>_sgemm if floating is float else <void *>_dgemm
    with nogil:
        status = ck.visible(n, D, K, &h[0, 0], &W[0, 0], gemm, &R[0, 0], D, &a[0], g, block_rows,
                            &ip[0], &ii[0], &dd[0], num_threads)
    check_status(status, "visible")
    nnz = int(indptr[n])
    return indptr[:n + 1], indices[:nnz], data[:nnz]


def hidden(const int64_t[::1] indptr, const int64_t[::1] indices, const floating[::1] data,
           const int64_t[::1] rows, const floating[:, ::1] W, const floating[::1] beta,
           const floating[::1] ntrials, Py_ssize_t n, _Gens gens=None, Py_ssize_t block_rows=1,
           int num_threads=0):
    """(mp, h): M sigma(x W - beta) (eq. 2) and a binomial sample (or mp if gens is None)."""
    cdef Py_ssize_t K = W.shape[1]
    _csr_check(indptr, indices, data.shape[0], rows, n, W.shape[0])
    if beta.shape[0] != K or ntrials.shape[0] != K or block_rows < 1:
        raise ValueError("beta/ntrials must have length K and block_rows >= 1")
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
    if h.shape[1] != W.shape[1] or a.shape[0] != W.shape[0] or block_rows < 1:
        raise ValueError("h, W and a have inconsistent shapes")
    if h.shape[0] == 0:
        dt = np.float32 if floating is float else np.float64
        return np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, dt)
    cdef bitgen_t **g = _gens_ptr(gens, h.shape[0], block_rows)
    return _visible(h, W, a, g, block_rows, num_threads)


def cd_step(const int64_t[::1] indptr, const int64_t[::1] indices, const floating[::1] data,
            const int64_t[::1] rows, floating[:, ::1] W, floating[::1] a, floating[::1] beta,
            const floating[::1] ntrials, floating[:, ::1] vW, floating[::1] va,
            floating[::1] vbeta, double lr, double momentum, double weight_decay,
            int cd_steps, _Gens gens=None, Py_ssize_t block_rows=1, int num_threads=0,
            tuple work=None):
    """One CD-k momentum update (eq. 10, Rao-Blackwellised) on the rows `rows` of a CSR matrix.

    gens=None runs the mean-field variant (conditional means instead of samples); `work`
    (from `workspace`) saves re-allocating the scratch arrays of every minibatch."""
    cdef Py_ssize_t n = rows.shape[0], D = W.shape[0], K = W.shape[1]
    cdef int status, step
    if n == 0:
        return
    _csr_check(indptr, indices, data.shape[0], rows, n, D)
    if (a.shape[0] != D or beta.shape[0] != K or ntrials.shape[0] != K or vW.shape[0] != D
            or vW.shape[1] != K or va.shape[0] != D or vbeta.shape[0] != K):
        raise ValueError("parameter shapes are inconsistent")
    if cd_steps < 1 or block_rows < 1:
        raise ValueError("cd_steps and block_rows must be >= 1")
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
    W = np.zeros((D, K)); a = np.zeros(D); beta = np.zeros(K)
    vW = np.zeros((D, K)); va = np.zeros(D); vb = np.zeros(K)
    cdef double[:, ::1] Wv = W, vWv = vW
    cdef double[::1] av = a, bv = beta, vav = va, vbv = vb
    cdef const int64_t[::1] norows = None
    _csr_check(indptr0, indices0, data0.shape[0], norows, n, D)
    _csr_check(indptr1, indices1, data1.shape[0], norows, n, D)
    if mp1.shape[0] != n or mp1.shape[1] != K:
        raise ValueError("mp0 and mp1 differ in shape")
    with nogil:
        status = ck.cg_rap_cd_update_f64_i64(n, D, K, &indptr0[0], &indices0[0], &data0[0], NULL,
                                      &indptr1[0], &indices1[0], &data1[0], &mp0[0, 0], &mp1[0, 0],
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
    """Binomial samples from the kernels' sampler (for tests)."""
    cdef bitgen_t *g = _bitgen(bit_generator)
    out = np.empty(p.shape[0])
    cdef double[::1] o = out
    cdef Py_ssize_t i
    if n.shape[0] != p.shape[0]:
        raise ValueError("n and p differ in length")
    with bit_generator.lock, nogil:
        for i in range(p.shape[0]):
            o[i] = ck.cg_rap_binomial(g, n[i], p[i])
    return out
