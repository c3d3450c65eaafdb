"""A downstream Cython extension that ``cimport countgrid.cython_api``, built
against the countgrid under test with no include or library directories and no
link flags (SciPy's cython_blas pattern), gives the results of the Python API."""
import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid import _kernels as K
from countgrid.grid import _wrappers as G

from _downstream import (SETUP_CYTHON as SETUP_PY, build_and_import, require_compiler,
                         require_importable_package)


PYX = """
cimport countgrid.cython_api as cg
from libc.stdint cimport int32_t, int64_t


def abi():
    return cg.abi_version(), cg.CG_ABI_VERSION, cg.openmp_enabled()


def window_sum_f64(const double[:, ::1] a, out_arr, extent, window, bint backward,
                   double scale, int num_threads):
    cdef double[:, ::1] out = out_arr
    cdef int64_t e[16]
    cdef int64_t w[16]
    cdef int ndim = len(extent), status, d
    for d in range(ndim):
        e[d] = extent[d]
        w[d] = window[d]
    with nogil:
        status = cg.grid_window_sum_f64(ndim, e, w, backward, scale, a.shape[0], &a[0, 0],
                                        a.shape[1], &out[0, 0], out.shape[1], num_threads)
    return status


def window_sum_f32(const float[:, ::1] a, out_arr, extent, window, bint backward,
                   double scale, int num_threads):
    cdef float[:, ::1] out = out_arr
    cdef int64_t e[16]
    cdef int64_t w[16]
    cdef int ndim = len(extent), status, d
    for d in range(ndim):
        e[d] = extent[d]
        w[d] = window[d]
    with nogil:  # the ABI 1 name, kept as an alias
        status = cg.window_sum_f32(ndim, e, w, backward, scale, a.shape[0], &a[0, 0],
                                   a.shape[1], &out[0, 0], out.shape[1], num_threads)
    return status


def estep_csr_f64_i32(const int32_t[::1] indptr, const int32_t[::1] indices,
                      const double[::1] data, int64_t n_features,
                      const double[:, ::1] logh, double floor, double[:, ::1] q,
                      double[::1] loglik, int num_threads):
    cdef int status
    with nogil:
        status = cg.grid_estep_csr_f64_i32(indptr.shape[0] - 1, &indptr[0], &indices[0],
                                           &data[0], indices.shape[0], n_features,
                                           logh.shape[1], &logh[0, 0], logh.shape[1], NULL,
                                           floor, &q[0, 0], q.shape[1], &loglik[0],
                                           num_threads)
    return status
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    require_compiler(tmp_path_factory)
    require_importable_package()
    return build_and_import(tmp_path_factory.mktemp("cython_api"), "cg_downstream_cy",
                            SETUP_PY, {"cg_downstream_cy.pyx": PYX})


def test_versions(mod):
    abi, compiled_abi, omp = mod.abi()
    assert abi == compiled_abi == K.abi_version
    assert bool(omp) is K.openmp_enabled()


@pytest.mark.parametrize("backward", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_window_sum_2d(mod, backward, dtype):
    rng = np.random.default_rng(0)
    extent, window = (5, 6), (2, 3)
    a = rng.random((4, 30)).astype(dtype)
    out = np.full_like(a, np.nan)
    fn = mod.window_sum_f64 if dtype == np.float64 else mod.window_sum_f32
    assert fn(a, out, extent, window, backward, 0.5, 2) == 0
    np.testing.assert_array_equal(out, G.window_sum(a, extent, window, backward, 0.5, 2))


def test_window_sum_status(mod):
    a = np.ones((1, 30))
    out = np.empty_like(a)
    # a window wider than the grid: CG_ERR_ARGUMENT, no exception, no write
    assert mod.window_sum_f64(a, out, (5, 6), (6, 3), False, 1.0, 1) == -1


def test_estep_csr(mod):
    rng = np.random.default_rng(1)
    Z, L, T = 11, 30, 7
    logh = np.ascontiguousarray(np.log(rng.dirichlet(np.ones(Z), size=L).T))
    C = sp.random(T, Z, density=0.4, random_state=2, format="csr",
                  data_rvs=lambda n: rng.integers(1, 4, n)).astype(np.float64)
    C.indptr, C.indices = C.indptr.astype(np.int32), C.indices.astype(np.int32)
    q = np.empty((T, L))
    ll = np.empty(T)
    assert mod.estep_csr_f64_i32(C.indptr, C.indices, C.data, Z, logh, 1e-4, q, ll, 2) == 0
    q_ref = np.empty((T, L))
    ll_ref = np.empty(T)
    G.estep_csr(C.indptr, C.indices, C.data, 0, T, logh, None, 1e-4, q_ref, ll_ref, 2)
    np.testing.assert_array_equal(q, q_ref)
    np.testing.assert_array_equal(ll, ll_ref)
    np.testing.assert_allclose(q.sum(axis=1), 1.0, rtol=1e-12)


def test_cython_api_module_is_public():
    import countgrid.cython_api as capi

    assert "window_sum_f64" in capi.__pyx_capi__
    assert countgrid.cython_api is capi
