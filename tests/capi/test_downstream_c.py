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

static PyObject *py_info(PyObject *self, PyObject *noargs)
{
    return Py_BuildValue("iiis", (int)CG_ABI_VERSION, ABI_AT_RUNTIME, cg_openmp_enabled(),
                         cg_simd_name());
}

static PyMethodDef methods[] = {
    {"window_sum_f64", py_window_sum_f64, METH_VARARGS, NULL},
    {"estep_csr_f64_i32", py_estep_csr_f64_i32, METH_VARARGS, NULL},
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
