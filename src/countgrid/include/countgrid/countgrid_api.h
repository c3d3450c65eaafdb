/*
 * countgrid_api.h -- call the countgrid kernels from a C extension module
 * without linking against them (NumPy's import_array pattern).
 *
 * The installed module countgrid._kernels holds a capsule, _C_API, named
 * "countgrid._C_API", that points to a cg_api_table: a versioned table with
 * one function pointer per public function of countgrid/countgrid.h (which
 * stays the single source of truth for prototypes and documentation).
 *
 * Usage, in the one translation unit of your module that calls the kernels:
 *
 *     #include "countgrid/countgrid_api.h"      // include_dirs=[countgrid.get_include()]
 *
 *     PyMODINIT_FUNC PyInit_mymod(void) {
 *         if (countgrid_import() < 0)            // sets ImportError on failure
 *             return NULL;
 *         ...
 *     }
 *     ... status = cg_api->window_sum_f64(ndim, extent, window, 0, 1.0, n, in, L,
 *                                         out, L, 0);
 *
 * Define COUNTGRID_API_NAMES before the #include to call the kernels by their
 * countgrid.h names instead (cg_window_sum_f64(...) expands to
 * (cg_api->window_sum_f64)(...)), so code written for the static library
 * compiles unchanged.  cg_api is static: each translation unit that calls
 * kernels through it must call countgrid_import() once (with the GIL held);
 * the kernels themselves may then be called without the GIL.
 *
 * Compatibility: countgrid_import() fails with ImportError unless the
 * installed countgrid has exactly the CG_ABI_VERSION this file was compiled
 * with and a table at least as large (a newer minor release may append
 * functions; it never reorders or changes them without bumping the ABI).
 */
#ifndef COUNTGRID_COUNTGRID_API_H
#define COUNTGRID_COUNTGRID_API_H

#ifndef CG_API_NO_IMPORT
#include <Python.h>
#endif
#include <stddef.h>
#include "countgrid/countgrid.h"

#define CG_API_CAPSULE_NAME "countgrid._C_API"
#define CG_API_MODULE "countgrid._kernels"
#define CG_API_ATTRIBUTE "_C_API"

#ifdef __cplusplus
extern "C" {
#endif

/* The first two fields are frozen for ever: every countgrid version starts its
 * table with them, so that any consumer can check compatibility.  Function
 * pointers follow in the order of countgrid.h; new ones are only appended. */
typedef struct cg_api_table {
    int abi_version;        /* CG_ABI_VERSION of the installed countgrid */
    int size;               /* sizeof(cg_api_table) in the installed countgrid */
    int version_major;      /* CG_VERSION_* of the installed countgrid */
    int version_minor;
    int version_patch;

    int (*window_sum_f32)(int ndim, const int64_t *extent, const int64_t *window,
                          int backward, double scale, int64_t n_vec,
                          const float *in, int64_t ld_in, float *out, int64_t ld_out,
                          int num_threads);
    int (*window_sum_f64)(int ndim, const int64_t *extent, const int64_t *window,
                          int backward, double scale, int64_t n_vec,
                          const double *in, int64_t ld_in, double *out, int64_t ld_out,
                          int num_threads);
    int (*histograms_f32)(int ndim, const int64_t *extent, const int64_t *window,
                          int64_t n_features, const float *pi, int64_t ld_pi,
                          float *h, int64_t ld_h, float *logh, int64_t ld_logh,
                          int num_threads);
    int (*histograms_f64)(int ndim, const int64_t *extent, const int64_t *window,
                          int64_t n_features, const double *pi, int64_t ld_pi,
                          double *h, int64_t ld_h, double *logh, int64_t ld_logh,
                          int num_threads);
    int (*posterior_f32)(int64_t n_rows, int64_t L, float *q, int64_t ld_q,
                         const float *log_prior, double floor, double *loglik,
                         int num_threads);
    int (*posterior_f64)(int64_t n_rows, int64_t L, double *q, int64_t ld_q,
                         const double *log_prior, double floor, double *loglik,
                         int num_threads);
    int (*estep_csr_f32_i32)(int64_t n_rows, const int32_t *indptr, const int32_t *indices,
                             const float *data, int64_t nnz, int64_t n_features,
                             int64_t L, const float *logh, int64_t ld_logh,
                             const float *log_prior, double floor,
                             float *q, int64_t ld_q, double *loglik, int num_threads);
    int (*estep_csr_f32_i64)(int64_t n_rows, const int64_t *indptr, const int64_t *indices,
                             const float *data, int64_t nnz, int64_t n_features,
                             int64_t L, const float *logh, int64_t ld_logh,
                             const float *log_prior, double floor,
                             float *q, int64_t ld_q, double *loglik, int num_threads);
    int (*estep_csr_f64_i32)(int64_t n_rows, const int32_t *indptr, const int32_t *indices,
                             const double *data, int64_t nnz, int64_t n_features,
                             int64_t L, const double *logh, int64_t ld_logh,
                             const double *log_prior, double floor,
                             double *q, int64_t ld_q, double *loglik, int num_threads);
    int (*estep_csr_f64_i64)(int64_t n_rows, const int64_t *indptr, const int64_t *indices,
                             const double *data, int64_t nnz, int64_t n_features,
                             int64_t L, const double *logh, int64_t ld_logh,
                             const double *log_prior, double floor,
                             double *q, int64_t ld_q, double *loglik, int num_threads);
    int (*accumulate_csc_f32_i32)(int64_t n_features, const int32_t *indptr,
                                  const int32_t *indices, const float *data, int64_t nnz,
                                  int32_t *cursor, int64_t row_start, int64_t row_end,
                                  int64_t L, const float *q, int64_t ld_q, float *n,
                                  int64_t ld_n, int num_threads);
    int (*accumulate_csc_f32_i64)(int64_t n_features, const int64_t *indptr,
                                  const int64_t *indices, const float *data, int64_t nnz,
                                  int64_t *cursor, int64_t row_start, int64_t row_end,
                                  int64_t L, const float *q, int64_t ld_q, float *n,
                                  int64_t ld_n, int num_threads);
    int (*accumulate_csc_f64_i32)(int64_t n_features, const int32_t *indptr,
                                  const int32_t *indices, const double *data, int64_t nnz,
                                  int32_t *cursor, int64_t row_start, int64_t row_end,
                                  int64_t L, const double *q, int64_t ld_q, double *n,
                                  int64_t ld_n, int num_threads);
    int (*accumulate_csc_f64_i64)(int64_t n_features, const int64_t *indptr,
                                  const int64_t *indices, const double *data, int64_t nnz,
                                  int64_t *cursor, int64_t row_start, int64_t row_end,
                                  int64_t L, const double *q, int64_t ld_q, double *n,
                                  int64_t ld_n, int num_threads);
    int (*mstep_f32)(int ndim, const int64_t *extent, const int64_t *window,
                     int64_t n_features, float *n, int64_t ld_n,
                     const float *h, int64_t ld_h, float *pi, int64_t ld_pi,
                     double rho, double alpha, int num_threads);
    int (*mstep_f64)(int ndim, const int64_t *extent, const int64_t *window,
                     int64_t n_features, double *n, int64_t ld_n,
                     const double *h, int64_t ld_h, double *pi, int64_t ld_pi,
                     double rho, double alpha, int num_threads);
    int (*openmp_enabled)(void);
    int (*max_threads)(void);
    const char *(*simd_name)(void);
    /* Added in 0.1.0 after the counting-grid kernels: information-theoretic
     * kernels and pLSA. */
    int (*jt_gram_dense_f32)(int64_t n, int64_t m, int64_t D, const float *X, int64_t ldx, const float *Y, int64_t ldy, double q, int symmetric, float *K, int64_t ldk, int num_threads);
    int (*jt_gram_dense_f64)(int64_t n, int64_t m, int64_t D, const double *X, int64_t ldx, const double *Y, int64_t ldy, double q, int symmetric, double *K, int64_t ldk, int num_threads);
    int (*jt_gram_csr_f32_i64)(int64_t n, int64_t m, int64_t D, const int64_t *xptr, const int64_t *xind, const float *xval, const int64_t *yptr, const int64_t *yind, const float *yval, double q, int symmetric, float *K, int64_t ldk, int num_threads);
    int (*jt_gram_csr_f64_i64)(int64_t n, int64_t m, int64_t D, const int64_t *xptr, const int64_t *xind, const double *xval, const int64_t *yptr, const int64_t *yind, const double *yval, double q, int symmetric, double *K, int64_t ldk, int num_threads);
    int (*plsa_docs_f32_i32)(int64_t n_rows, const int32_t *indptr, const int32_t *indices, const float *data, int64_t nnz, int64_t n_words, int64_t K, const float *phi, const float *phib, int64_t ld_phi, float *theta, int64_t ld_theta, int64_t n_iter, double tol, double *loglik, int num_threads);
    int (*plsa_docs_f32_i64)(int64_t n_rows, const int64_t *indptr, const int64_t *indices, const float *data, int64_t nnz, int64_t n_words, int64_t K, const float *phi, const float *phib, int64_t ld_phi, float *theta, int64_t ld_theta, int64_t n_iter, double tol, double *loglik, int num_threads);
    int (*plsa_docs_f64_i32)(int64_t n_rows, const int32_t *indptr, const int32_t *indices, const double *data, int64_t nnz, int64_t n_words, int64_t K, const double *phi, const double *phib, int64_t ld_phi, double *theta, int64_t ld_theta, int64_t n_iter, double tol, double *loglik, int num_threads);
    int (*plsa_docs_f64_i64)(int64_t n_rows, const int64_t *indptr, const int64_t *indices, const double *data, int64_t nnz, int64_t n_words, int64_t K, const double *phi, const double *phib, int64_t ld_phi, double *theta, int64_t ld_theta, int64_t n_iter, double tol, double *loglik, int num_threads);
    int (*plsa_words_f32_i32)(int64_t n_words, const int32_t *indptr, const int32_t *indices, const float *data, int64_t nnz, int64_t n_docs, int64_t K, const float *theta, int64_t ld_theta, const float *phib, int64_t ld_phi, float *acc, int64_t ld_acc, int num_threads);
    int (*plsa_words_f32_i64)(int64_t n_words, const int64_t *indptr, const int64_t *indices, const float *data, int64_t nnz, int64_t n_docs, int64_t K, const float *theta, int64_t ld_theta, const float *phib, int64_t ld_phi, float *acc, int64_t ld_acc, int num_threads);
    int (*plsa_words_f64_i32)(int64_t n_words, const int32_t *indptr, const int32_t *indices, const double *data, int64_t nnz, int64_t n_docs, int64_t K, const double *theta, int64_t ld_theta, const double *phib, int64_t ld_phi, double *acc, int64_t ld_acc, int num_threads);
    int (*plsa_words_f64_i64)(int64_t n_words, const int64_t *indptr, const int64_t *indices, const double *data, int64_t nnz, int64_t n_docs, int64_t K, const double *theta, int64_t ld_theta, const double *phib, int64_t ld_phi, double *acc, int64_t ld_acc, int num_threads);
    /* New functions of a later minor release go here, at the end. */
} cg_api_table;

#ifndef CG_API_NO_IMPORT

#if defined(__GNUC__) || defined(__clang__)
#define CG_API_UNUSED __attribute__((unused))
#else
#define CG_API_UNUSED
#endif

/* The table of the installed countgrid; NULL until countgrid_import(). */
static const cg_api_table *cg_api CG_API_UNUSED = NULL;

/* Imports countgrid._kernels and checks its C API.  Returns 0, or sets
 * ImportError (or the error of the import) and returns -1.  Needs the GIL. */
static CG_API_UNUSED int countgrid_import(void)
{
    PyObject *mod, *cap;
    const cg_api_table *t;

    if (cg_api != NULL)
        return 0;
    mod = PyImport_ImportModule(CG_API_MODULE);
    if (mod == NULL)
        return -1;
    cap = PyObject_GetAttrString(mod, CG_API_ATTRIBUTE);
    Py_DECREF(mod);
    if (cap == NULL)
        return -1;
    if (!PyCapsule_IsValid(cap, CG_API_CAPSULE_NAME)) {
        Py_DECREF(cap);
        PyErr_SetString(PyExc_ImportError,
                        CG_API_MODULE "." CG_API_ATTRIBUTE " is not a valid "
                        CG_API_CAPSULE_NAME " capsule");
        return -1;
    }
    t = (const cg_api_table *)PyCapsule_GetPointer(cap, CG_API_CAPSULE_NAME);
    /* The table is static data of countgrid._kernels, which is never unloaded. */
    Py_DECREF(cap);
    if (t == NULL)
        return -1;
    if (t->abi_version != CG_ABI_VERSION) {
        PyErr_Format(PyExc_ImportError,
                     "this module was compiled against the countgrid C ABI %d "
                     "(countgrid %d.%d.%d) but the installed countgrid %d.%d.%d has C ABI "
                     "%d: rebuild the module against the installed countgrid",
                     (int)CG_ABI_VERSION, (int)CG_VERSION_MAJOR, (int)CG_VERSION_MINOR,
                     (int)CG_VERSION_PATCH, t->version_major, t->version_minor,
                     t->version_patch, t->abi_version);
        return -1;
    }
    if (t->size < (int)sizeof(cg_api_table)) {
        PyErr_Format(PyExc_ImportError,
                     "this module was compiled against countgrid %d.%d.%d but the "
                     "installed countgrid %d.%d.%d lacks functions it may use: "
                     "upgrade countgrid",
                     (int)CG_VERSION_MAJOR, (int)CG_VERSION_MINOR, (int)CG_VERSION_PATCH,
                     t->version_major, t->version_minor, t->version_patch);
        return -1;
    }
    cg_api = t;
    return 0;
}

#ifdef COUNTGRID_API_NAMES
#define cg_window_sum_f32 (cg_api->window_sum_f32)
#define cg_window_sum_f64 (cg_api->window_sum_f64)
#define cg_histograms_f32 (cg_api->histograms_f32)
#define cg_histograms_f64 (cg_api->histograms_f64)
#define cg_posterior_f32 (cg_api->posterior_f32)
#define cg_posterior_f64 (cg_api->posterior_f64)
#define cg_estep_csr_f32_i32 (cg_api->estep_csr_f32_i32)
#define cg_estep_csr_f32_i64 (cg_api->estep_csr_f32_i64)
#define cg_estep_csr_f64_i32 (cg_api->estep_csr_f64_i32)
#define cg_estep_csr_f64_i64 (cg_api->estep_csr_f64_i64)
#define cg_accumulate_csc_f32_i32 (cg_api->accumulate_csc_f32_i32)
#define cg_accumulate_csc_f32_i64 (cg_api->accumulate_csc_f32_i64)
#define cg_accumulate_csc_f64_i32 (cg_api->accumulate_csc_f64_i32)
#define cg_accumulate_csc_f64_i64 (cg_api->accumulate_csc_f64_i64)
#define cg_mstep_f32 (cg_api->mstep_f32)
#define cg_mstep_f64 (cg_api->mstep_f64)
#define cg_openmp_enabled (cg_api->openmp_enabled)
#define cg_max_threads (cg_api->max_threads)
#define cg_simd_name (cg_api->simd_name)
#define cg_jt_gram_dense_f32 (cg_api->jt_gram_dense_f32)
#define cg_jt_gram_dense_f64 (cg_api->jt_gram_dense_f64)
#define cg_jt_gram_csr_f32_i64 (cg_api->jt_gram_csr_f32_i64)
#define cg_jt_gram_csr_f64_i64 (cg_api->jt_gram_csr_f64_i64)
#define cg_plsa_docs_f32_i32 (cg_api->plsa_docs_f32_i32)
#define cg_plsa_docs_f32_i64 (cg_api->plsa_docs_f32_i64)
#define cg_plsa_docs_f64_i32 (cg_api->plsa_docs_f64_i32)
#define cg_plsa_docs_f64_i64 (cg_api->plsa_docs_f64_i64)
#define cg_plsa_words_f32_i32 (cg_api->plsa_words_f32_i32)
#define cg_plsa_words_f32_i64 (cg_api->plsa_words_f32_i64)
#define cg_plsa_words_f64_i32 (cg_api->plsa_words_f64_i32)
#define cg_plsa_words_f64_i64 (cg_api->plsa_words_f64_i64)
#endif /* COUNTGRID_API_NAMES */

#endif /* CG_API_NO_IMPORT */

#ifdef __cplusplus
}
#endif

#endif /* COUNTGRID_COUNTGRID_API_H */
