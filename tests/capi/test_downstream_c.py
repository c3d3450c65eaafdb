"""Tiny downstream C extensions built against the countgrid under test, both
ways a C project can use the kernels, give the results of the Python API:

* capsule: ``#include "countgrid/countgrid_api.h"`` and ``countgrid_import()``
  (include directory only, nothing linked; NumPy's import_array pattern);
* static library: ``#include "countgrid/countgrid.h"`` and link
  ``libcountgrid.a`` from ``countgrid.get_library_dir()``;
* abi1: the capsule route with the kernels called by their ABI 1 names (source code
  written for countgrid 0.1 compiles unchanged).
"""
import os
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid import _kernels as K
from countgrid.grid import _wrappers as G

from tests._reference.layers import layered_em_step_ref
from _downstream import SETUP_CAPSULE, SETUP_STATIC, build_and_import, require_compiler


# Shared body: Python wrappers taking buffers (numpy arrays) and returning the
# kernel's status.  WINDOW_SUM_F64 and ESTEP_CSR_F64_I32 are how each route names them.
BODY = r"""
static PyObject *py_window_sum_f64(PyObject *self, PyObject *args)
{
    Py_buffer e, w, in, out;
    int backward, num_threads, status;
    double scale;
    Py_ssize_t n_vec, L;
    if (!PyArg_ParseTuple(args, "y*y*pdnny*w*i", &e, &w, &backward, &scale, &n_vec, &L,
                          &in, &out, &num_threads))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    status = WINDOW_SUM_F64((int)(e.len / sizeof(int64_t)), (const int64_t *)e.buf,
                            (const int64_t *)w.buf, backward, scale, n_vec,
                            (const double *)in.buf, L, (double *)out.buf, L, num_threads);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&e); PyBuffer_Release(&w); PyBuffer_Release(&in); PyBuffer_Release(&out);
    return PyLong_FromLong(status);
}

static PyObject *py_estep_csr_f64_i32(PyObject *self, PyObject *args)
{
    Py_buffer indptr, indices, data, logh, q, loglik;
    Py_ssize_t n_rows, n_features, L;
    double floor;
    int num_threads, status;
    if (!PyArg_ParseTuple(args, "y*y*y*nny*ndw*w*i", &indptr, &indices, &data, &n_rows,
                          &n_features, &logh, &L, &floor, &q, &loglik, &num_threads))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    status = ESTEP_CSR_F64_I32(n_rows, (const int32_t *)indptr.buf,
                               (const int32_t *)indices.buf, (const double *)data.buf,
                               (int64_t)(indices.len / sizeof(int32_t)), n_features, L,
                               (const double *)logh.buf, L, NULL, floor,
                               (double *)q.buf, L, (double *)loglik.buf, num_threads);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&indptr); PyBuffer_Release(&indices); PyBuffer_Release(&data);
    PyBuffer_Release(&logh); PyBuffer_Release(&q); PyBuffer_Release(&loglik);
    return PyLong_FromLong(status);
}

/* One EM update of a layered counting grid (docs/counting_grids.md, "Layered grids") from
 * the public entry points only, as docs/c_api.md describes it: the layers are a grid of
 * extent (n_layers, E0, E1) with window (1, W0, W1), the prior over (layer, position) the
 * window mean of the layer weights, and the layer weights' M-step the grid's M-step with
 * the layers as its features. */
static PyObject *py_layered_update_f64(PyObject *self, PyObject *args)
{
    Py_buffer e2, w2, pi_b, lam_b, rp, ri, rd, cp, ci, cd;
    Py_ssize_t n_layers, Z, T;
    double rho, layer_rho, total = 0.0;
    int num_threads, status;
    if (!PyArg_ParseTuple(args, "y*y*nnw*w*y*y*y*ny*y*y*ddi", &e2, &w2, &n_layers, &Z,
                          &pi_b, &lam_b, &rp, &ri, &rd, &T, &cp, &ci, &cd, &rho, &layer_rho,
                          &num_threads))
        return NULL;
    {
        const int64_t *ext = (const int64_t *)e2.buf, *win = (const int64_t *)w2.buf;
        const int64_t P = ext[0] * ext[1], L = n_layers * P;
        const int64_t ext3[3] = {n_layers, ext[0], ext[1]}, win3[3] = {1, win[0], win[1]};
        const int64_t nnz = (int64_t)(ri.len / sizeof(int32_t));
        double *pi = (double *)pi_b.buf, *lam = (double *)lam_b.buf;
        double *h = malloc(sizeof(double) * Z * L), *logh = malloc(sizeof(double) * Z * L);
        double *rho_h = malloc(sizeof(double) * L), *log_rho = malloc(sizeof(double) * L);
        double *q = malloc(sizeof(double) * T * L), *loglik = malloc(sizeof(double) * T);
        double *n = calloc((size_t)(Z * L), sizeof(double)), *m = calloc((size_t)L, sizeof(double));
        int32_t *cursor = malloc(sizeof(int32_t) * Z);
        int64_t i, t;
        Py_BEGIN_ALLOW_THREADS
        status = cg_grid_histograms_f64(3, ext3, win3, Z, pi, L, h, L, logh, L, num_threads);
        if (status == 0)    /* rho_k(l) and log p(l, k) = log rho_k(l) - log P */
            status = cg_grid_histograms_f64(2, ext, win, n_layers, lam, P, rho_h, P, log_rho,
                                            P, num_threads);
        for (i = 0; i < L; i++)
            log_rho[i] -= log((double)P);
        if (status == 0)
            status = cg_grid_estep_csr_f64_i32(T, (const int32_t *)rp.buf,
                                               (const int32_t *)ri.buf, (const double *)rd.buf,
                                               nnz, Z, L, logh, L, log_rho, 0.0, q, L, loglik,
                                               num_threads);
        for (i = 0; i < Z; i++)
            cursor[i] = ((const int32_t *)cp.buf)[i];
        if (status == 0)
            status = cg_grid_accumulate_csc_f64_i32(Z, (const int32_t *)cp.buf,
                                                    (const int32_t *)ci.buf,
                                                    (const double *)cd.buf, nnz, cursor, 0, T,
                                                    L, q, L, n, L, num_threads);
        if (status == 0)
            status = cg_grid_mstep_f64(3, ext3, win3, Z, n, L, h, L, pi, L, rho, 1e-10,
                                       num_threads);
        for (t = 0; t < T; t++) {
            total += loglik[t];
            for (i = 0; i < L; i++)
                m[i] += q[t * L + i];
        }
        if (status == 0)    /* the layer weights: the layers as features, m as counts */
            status = cg_grid_mstep_f64(2, ext, win, n_layers, m, P, rho_h, P, lam, P,
                                       layer_rho, 1e-10, num_threads);
        Py_END_ALLOW_THREADS
        free(h); free(logh); free(rho_h); free(log_rho); free(q); free(loglik); free(n);
        free(m); free(cursor);
    }
    PyBuffer_Release(&e2); PyBuffer_Release(&w2); PyBuffer_Release(&pi_b);
    PyBuffer_Release(&lam_b); PyBuffer_Release(&rp); PyBuffer_Release(&ri);
    PyBuffer_Release(&rd); PyBuffer_Release(&cp); PyBuffer_Release(&ci); PyBuffer_Release(&cd);
    return Py_BuildValue("id", status, total);
}

static PyObject *py_info(PyObject *self, PyObject *noargs)
{
    return Py_BuildValue("iiis", (int)CG_ABI_VERSION, ABI_AT_RUNTIME, cg_openmp_enabled(),
                         cg_simd_name());
}

static PyMethodDef methods[] = {
    {"window_sum_f64", py_window_sum_f64, METH_VARARGS, NULL},
    {"estep_csr_f64_i32", py_estep_csr_f64_i32, METH_VARARGS, NULL},
    {"layered_update_f64", py_layered_update_f64, METH_VARARGS, NULL},
    {"info", py_info, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}
};
"""

CAPSULE_C = r"""
/* Capsule route: no library linked; cg_api->... or, with COUNTGRID_API_NAMES,
 * the countgrid.h names. */
#define PY_SSIZE_T_CLEAN
#define COUNTGRID_API_NAMES
#include "countgrid/countgrid_api.h"

#define WINDOW_SUM_F64 cg_api->grid_window_sum_f64
#define ESTEP_CSR_F64_I32 cg_grid_estep_csr_f64_i32
#define ABI_AT_RUNTIME cg_api->abi_version
""" + BODY + r"""
static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "cg_downstream_capsule", NULL, -1,
                                    methods};

PyMODINIT_FUNC PyInit_cg_downstream_capsule(void)
{
    if (countgrid_import() < 0)
        return NULL;
    return PyModule_Create(&moddef);
}
"""

ABI1_C = CAPSULE_C.replace(
    "#define WINDOW_SUM_F64 cg_api->grid_window_sum_f64\n"
    "#define ESTEP_CSR_F64_I32 cg_grid_estep_csr_f64_i32",
    "#define WINDOW_SUM_F64 cg_window_sum_f64\n"
    "#define ESTEP_CSR_F64_I32 cg_estep_csr_f64_i32").replace(
    "cg_downstream_capsule", "cg_downstream_abi1")

STATIC_C = r"""
/* Static-library route: plain calls, resolved by the linker in libcountgrid. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "countgrid/countgrid.h"

#define WINDOW_SUM_F64 cg_grid_window_sum_f64
#define ESTEP_CSR_F64_I32 cg_grid_estep_csr_f64_i32
#define ABI_AT_RUNTIME CG_ABI_VERSION
""" + BODY + r"""
static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "cg_downstream_static", NULL, -1,
                                    methods};

PyMODINIT_FUNC PyInit_cg_downstream_static(void)
{
    return PyModule_Create(&moddef);
}
"""


@pytest.fixture(scope="module", params=["capsule", "static", "abi1"])
def mod(request, tmp_path_factory):
    require_compiler(tmp_path_factory)
    name = f"cg_downstream_{request.param}"
    if request.param == "static":
        if (sys.platform == "darwin" and K.openmp_enabled() and os.path.isdir(
                os.path.join(os.path.dirname(countgrid.__file__), ".dylibs"))):
            pytest.skip("static library with a macOS wheel: a second libomp in the process "
                        "would abort; documented as unsupported (docs/c_api.md)")
        libdir = countgrid.get_library_dir()
        libs = os.listdir(libdir) if os.path.isdir(libdir) else []
        assert {"libcountgrid.a", "countgrid.lib"} & set(libs), (
            f"no static library in countgrid.get_library_dir() = {libdir}: {libs} "
            "(rebuild with `python setup.py build_ext --inplace` or reinstall)")
        setup_py, source = SETUP_STATIC, STATIC_C
    elif request.param == "abi1":
        assert "#define WINDOW_SUM_F64 cg_window_sum_f64" in ABI1_C
        setup_py, source = SETUP_CAPSULE.replace("cg_downstream_capsule", name), ABI1_C
    else:
        setup_py, source = SETUP_CAPSULE, CAPSULE_C
    return build_and_import(tmp_path_factory.mktemp(request.param), name, setup_py,
                            {f"{name}.c": source})


def test_info(mod):
    abi_compiled, abi_runtime, omp, simd = mod.info()
    assert abi_compiled == abi_runtime == K.abi_version
    assert bool(omp) is K.openmp_enabled()
    assert simd == K.simd_name()


def call_window_sum(mod, a, extent, window, backward, scale, nt):
    out = np.full_like(a, np.nan)
    status = mod.window_sum_f64(np.asarray(extent, np.int64), np.asarray(window, np.int64),
                                backward, scale, a.shape[0], a.shape[1], a, out, nt)
    return status, out


@pytest.mark.parametrize("backward", [False, True])
@pytest.mark.parametrize("nt", [1, 2])
def test_window_sum_2d(mod, backward, nt):
    rng = np.random.default_rng(0)
    extent, window = (5, 6), (2, 3)
    a = rng.random((4, 30))
    status, out = call_window_sum(mod, a, extent, window, backward, 0.25, nt)
    assert status == 0
    np.testing.assert_array_equal(out, G.window_sum(a, extent, window, backward, 0.25, nt))


def test_window_sum_status(mod):
    status, _ = call_window_sum(mod, np.ones((1, 30)), (5, 6), (2, 7), False, 1.0, 1)
    assert status == -1  # CG_ERR_ARGUMENT


def test_estep_csr(mod):
    rng = np.random.default_rng(1)
    Z, L, T = 11, 30, 7
    logh = np.ascontiguousarray(np.log(rng.dirichlet(np.ones(Z), size=L).T))
    C = sp.random(T, Z, density=0.4, random_state=2, format="csr",
                  data_rvs=lambda n: rng.integers(1, 4, n)).astype(np.float64)
    indptr, indices = C.indptr.astype(np.int32), C.indices.astype(np.int32)
    q = np.empty((T, L))
    ll = np.empty(T)
    status = mod.estep_csr_f64_i32(indptr, indices, C.data, T, Z, logh, L, 1e-4, q, ll, 2)
    assert status == 0
    q_ref = np.empty((T, L))
    ll_ref = np.empty(T)
    G.estep_csr(indptr, indices, C.data, 0, T, logh, None, 1e-4, q_ref, ll_ref, 2)
    np.testing.assert_array_equal(q, q_ref)
    np.testing.assert_array_equal(ll, ll_ref)


def test_estep_csr_bad_index(mod):
    """A corrupt index comes back as CG_ERR_INDEX, not a crash."""
    logh = np.zeros((3, 4))
    q = np.empty((1, 4))
    ll = np.empty(1)
    status = mod.estep_csr_f64_i32(np.array([0, 1], np.int32), np.array([7], np.int32),
                                   np.ones(1), 1, 3, logh, 4, 0.0, q, ll, 1)
    assert status == -3


@pytest.mark.parametrize("nt", [1, 2])
def test_layered_grid_update_from_the_c_entry_points(mod, nt):
    """One layered EM update composed in C from histograms, E-step, accumulation and
    M-step (docs/c_api.md, "A layered grid") equals the NumPy reference."""
    rng = np.random.default_rng(3)
    extent, window, n_layers, Z, T = (5, 6), (2, 3), 2, 9, 25
    P = 30
    pi = rng.random((n_layers, Z, P)) + 0.2
    pi /= pi.sum(axis=1, keepdims=True)
    lam = rng.random((n_layers, P)) + 0.2
    lam /= lam.sum(axis=0, keepdims=True)
    C = sp.random(T, Z, density=0.5, random_state=4, format="csr",
                  data_rvs=lambda n: rng.integers(1, 4, n)).astype(np.float64)
    C = C.tolil()
    C[:, 0] = 1.0                              # no empty document
    C = sp.csr_matrix(C)
    csc = C.tocsc()
    pi_c = np.ascontiguousarray(np.concatenate(list(pi), axis=1))
    lam_c = lam.copy()                         # the C code updates it in place
    status, total = mod.layered_update_f64(
        np.asarray(extent, np.int64), np.asarray(window, np.int64), n_layers, Z, pi_c, lam_c,
        C.indptr.astype(np.int32), C.indices.astype(np.int32), C.data, T,
        csc.indptr.astype(np.int32), csc.indices.astype(np.int32), csc.data, 0.05, 0.5, nt)
    assert status == 0
    pi_ref, lam_ref, loglik = layered_em_step_ref(C.toarray(), pi, lam, extent, window,
                                                  0.05, 0.5)
    assert total == pytest.approx(loglik.sum(), rel=1e-12)
    np.testing.assert_allclose(lam_c, lam_ref, rtol=1e-10)
    np.testing.assert_allclose(pi_c.reshape(Z, n_layers, P).transpose(1, 0, 2), pi_ref,
                               rtol=1e-10)


BAD_ABI_C = r"""
/* Pretends to be compiled against a future countgrid with another C ABI. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "countgrid/countgrid.h"
#undef CG_ABI_VERSION
#define CG_ABI_VERSION 999
#include "countgrid/countgrid_api.h"

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "cg_downstream_badabi", NULL, -1,
                                    NULL};

PyMODINIT_FUNC PyInit_cg_downstream_badabi(void)
{
    if (countgrid_import() < 0)
        return NULL;
    return PyModule_Create(&moddef);
}
"""


def test_capsule_rejects_other_abi(tmp_path_factory):
    """countgrid_import() refuses a module compiled for another C ABI with an
    ImportError naming both versions."""
    require_compiler(tmp_path_factory)
    with pytest.raises(ImportError, match=r"C ABI 999 .* has C ABI %d" % K.abi_version):
        build_and_import(tmp_path_factory.mktemp("badabi"), "cg_downstream_badabi",
                         SETUP_CAPSULE.replace("cg_downstream_capsule", "cg_downstream_badabi"),
                         {"cg_downstream_badabi.c": BAD_ABI_C})
