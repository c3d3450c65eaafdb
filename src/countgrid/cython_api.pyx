# cython: language_level=3
"""countgrid.cython_api: the C kernels as ``noexcept nogil`` Cython functions.

Other Cython modules ``cimport countgrid.cython_api`` (see cython_api.pxd and
docs/c_api.md); Cython exports these functions through ``__pyx_capi__``.  Each
is a thin wrapper that calls the kernel of the same name in countgrid._kernels
through its capsule table (countgrid/countgrid_api.h), so the kernels exist
once in the process and this module needs no OpenMP flags.
"""
from countgrid cimport _ckernels as ck

cdef extern from *:
    """
    #define COUNTGRID_API_NAMES  /* cg_xxx(...) -> (cg_api->xxx)(...) */
    #include "countgrid/countgrid_api.h"
    """
    ctypedef struct cg_api_table:
        int abi_version
    const cg_api_table *cg_api
    int countgrid_import() except -1

countgrid_import()


cdef int abi_version() noexcept nogil:
    return cg_api.abi_version


cdef int window_sum_f32(int ndim, const int64_t *extent, const int64_t *window,
                        int backward, double scale, int64_t n_vec,
                        const float *inp, int64_t ld_in, float *out, int64_t ld_out,
                        int num_threads) noexcept nogil:
    return ck.cg_window_sum_f32(ndim, extent, window, backward, scale, n_vec, inp, ld_in, out,
                                ld_out, num_threads)


cdef int window_sum_f64(int ndim, const int64_t *extent, const int64_t *window,
                        int backward, double scale, int64_t n_vec,
                        const double *inp, int64_t ld_in, double *out, int64_t ld_out,
                        int num_threads) noexcept nogil:
    return ck.cg_window_sum_f64(ndim, extent, window, backward, scale, n_vec, inp, ld_in, out,
                                ld_out, num_threads)


cdef int histograms_f32(int ndim, const int64_t *extent, const int64_t *window,
                        int64_t n_features, const float *pi, int64_t ld_pi,
                        float *h, int64_t ld_h, float *logh, int64_t ld_logh,
                        int num_threads) noexcept nogil:
    return ck.cg_histograms_f32(ndim, extent, window, n_features, pi, ld_pi, h, ld_h, logh,
                                ld_logh, num_threads)


cdef int histograms_f64(int ndim, const int64_t *extent, const int64_t *window,
                        int64_t n_features, const double *pi, int64_t ld_pi,
                        double *h, int64_t ld_h, double *logh, int64_t ld_logh,
                        int num_threads) noexcept nogil:
    return ck.cg_histograms_f64(ndim, extent, window, n_features, pi, ld_pi, h, ld_h, logh,
                                ld_logh, num_threads)


cdef int posterior_f32(int64_t n_rows, int64_t L, float *q, int64_t ld_q,
                       const float *log_prior, double floor, double *loglik,
                       int num_threads) noexcept nogil:
    return ck.cg_posterior_f32(n_rows, L, q, ld_q, log_prior, floor, loglik, num_threads)


cdef int posterior_f64(int64_t n_rows, int64_t L, double *q, int64_t ld_q,
                       const double *log_prior, double floor, double *loglik,
                       int num_threads) noexcept nogil:
    return ck.cg_posterior_f64(n_rows, L, q, ld_q, log_prior, floor, loglik, num_threads)


cdef int estep_csr_f32_i32(int64_t n_rows, const int32_t *indptr, const int32_t *indices,
                           const float *data, int64_t nnz, int64_t n_features,
                           int64_t L, const float *logh, int64_t ld_logh,
                           const float *log_prior, double floor,
                           float *q, int64_t ld_q, double *loglik,
                           int num_threads) noexcept nogil:
    return ck.cg_estep_csr_f32_i32(n_rows, indptr, indices, data, nnz, n_features, L, logh,
                                   ld_logh, log_prior, floor, q, ld_q, loglik, num_threads)


cdef int estep_csr_f32_i64(int64_t n_rows, const int64_t *indptr, const int64_t *indices,
                           const float *data, int64_t nnz, int64_t n_features,
                           int64_t L, const float *logh, int64_t ld_logh,
                           const float *log_prior, double floor,
                           float *q, int64_t ld_q, double *loglik,
                           int num_threads) noexcept nogil:
    return ck.cg_estep_csr_f32_i64(n_rows, indptr, indices, data, nnz, n_features, L, logh,
                                   ld_logh, log_prior, floor, q, ld_q, loglik, num_threads)


cdef int estep_csr_f64_i32(int64_t n_rows, const int32_t *indptr, const int32_t *indices,
                           const double *data, int64_t nnz, int64_t n_features,
                           int64_t L, const double *logh, int64_t ld_logh,
                           const double *log_prior, double floor,
                           double *q, int64_t ld_q, double *loglik,
                           int num_threads) noexcept nogil:
    return ck.cg_estep_csr_f64_i32(n_rows, indptr, indices, data, nnz, n_features, L, logh,
                                   ld_logh, log_prior, floor, q, ld_q, loglik, num_threads)


cdef int estep_csr_f64_i64(int64_t n_rows, const int64_t *indptr, const int64_t *indices,
                           const double *data, int64_t nnz, int64_t n_features,
                           int64_t L, const double *logh, int64_t ld_logh,
                           const double *log_prior, double floor,
                           double *q, int64_t ld_q, double *loglik,
                           int num_threads) noexcept nogil:
    return ck.cg_estep_csr_f64_i64(n_rows, indptr, indices, data, nnz, n_features, L, logh,
                                   ld_logh, log_prior, floor, q, ld_q, loglik, num_threads)


cdef int accumulate_csc_f32_i32(int64_t n_features, const int32_t *indptr,
                                const int32_t *indices, const float *data, int64_t nnz,
                                int32_t *cursor, int64_t row_start, int64_t row_end,
                                int64_t L, const float *q, int64_t ld_q, float *n,
                                int64_t ld_n, int num_threads) noexcept nogil:
    return ck.cg_accumulate_csc_f32_i32(n_features, indptr, indices, data, nnz, cursor,
                                        row_start, row_end, L, q, ld_q, n, ld_n, num_threads)


cdef int accumulate_csc_f32_i64(int64_t n_features, const int64_t *indptr,
                                const int64_t *indices, const float *data, int64_t nnz,
                                int64_t *cursor, int64_t row_start, int64_t row_end,
                                int64_t L, const float *q, int64_t ld_q, float *n,
                                int64_t ld_n, int num_threads) noexcept nogil:
    return ck.cg_accumulate_csc_f32_i64(n_features, indptr, indices, data, nnz, cursor,
                                        row_start, row_end, L, q, ld_q, n, ld_n, num_threads)


cdef int accumulate_csc_f64_i32(int64_t n_features, const int32_t *indptr,
                                const int32_t *indices, const double *data, int64_t nnz,
                                int32_t *cursor, int64_t row_start, int64_t row_end,
                                int64_t L, const double *q, int64_t ld_q, double *n,
                                int64_t ld_n, int num_threads) noexcept nogil:
    return ck.cg_accumulate_csc_f64_i32(n_features, indptr, indices, data, nnz, cursor,
                                        row_start, row_end, L, q, ld_q, n, ld_n, num_threads)


cdef int accumulate_csc_f64_i64(int64_t n_features, const int64_t *indptr,
                                const int64_t *indices, const double *data, int64_t nnz,
                                int64_t *cursor, int64_t row_start, int64_t row_end,
                                int64_t L, const double *q, int64_t ld_q, double *n,
                                int64_t ld_n, int num_threads) noexcept nogil:
    return ck.cg_accumulate_csc_f64_i64(n_features, indptr, indices, data, nnz, cursor,
                                        row_start, row_end, L, q, ld_q, n, ld_n, num_threads)


cdef int mstep_f32(int ndim, const int64_t *extent, const int64_t *window,
                   int64_t n_features, float *n, int64_t ld_n,
                   const float *h, int64_t ld_h, float *pi, int64_t ld_pi,
                   double rho, double alpha, int num_threads) noexcept nogil:
    return ck.cg_mstep_f32(ndim, extent, window, n_features, n, ld_n, h, ld_h, pi, ld_pi, rho,
                           alpha, num_threads)


cdef int mstep_f64(int ndim, const int64_t *extent, const int64_t *window,
                   int64_t n_features, double *n, int64_t ld_n,
                   const double *h, int64_t ld_h, double *pi, int64_t ld_pi,
                   double rho, double alpha, int num_threads) noexcept nogil:
    return ck.cg_mstep_f64(ndim, extent, window, n_features, n, ld_n, h, ld_h, pi, ld_pi, rho,
                           alpha, num_threads)


cdef int openmp_enabled() noexcept nogil:
    return ck.cg_openmp_enabled()


cdef int max_threads() noexcept nogil:
    return ck.cg_max_threads()


cdef const char *simd_name() noexcept nogil:
    return ck.cg_simd_name()


cdef int jt_gram_dense_f32(int64_t n, int64_t m, int64_t D, const float *X, int64_t ldx,
                           const float *Y, int64_t ldy, double q, int symmetric, float *K,
                           int64_t ldk, int num_threads) noexcept nogil:
    return ck.cg_jt_gram_dense_f32(n, m, D, X, ldx, Y, ldy, q, symmetric, K, ldk, num_threads)


cdef int jt_gram_dense_f64(int64_t n, int64_t m, int64_t D, const double *X, int64_t ldx,
                           const double *Y, int64_t ldy, double q, int symmetric, double *K,
                           int64_t ldk, int num_threads) noexcept nogil:
    return ck.cg_jt_gram_dense_f64(n, m, D, X, ldx, Y, ldy, q, symmetric, K, ldk, num_threads)


cdef int jt_gram_csr_f32_i64(int64_t n, int64_t m, int64_t D, const int64_t *xptr,
                             const int64_t *xind, const float *xval, const int64_t *yptr,
                             const int64_t *yind, const float *yval, double q, int symmetric,
                             float *K, int64_t ldk, int num_threads) noexcept nogil:
    return ck.cg_jt_gram_csr_f32_i64(n, m, D, xptr, xind, xval, yptr, yind, yval, q, symmetric, K,
                                     ldk, num_threads)


cdef int jt_gram_csr_f64_i64(int64_t n, int64_t m, int64_t D, const int64_t *xptr,
                             const int64_t *xind, const double *xval, const int64_t *yptr,
                             const int64_t *yind, const double *yval, double q, int symmetric,
                             double *K, int64_t ldk, int num_threads) noexcept nogil:
    return ck.cg_jt_gram_csr_f64_i64(n, m, D, xptr, xind, xval, yptr, yind, yval, q, symmetric, K,
                                     ldk, num_threads)


cdef int plsa_docs_f32_i32(int64_t n_rows, const int32_t *indptr, const int32_t *indices,
                           const float *data, int64_t nnz, int64_t n_words, int64_t K,
                           const float *phi, const float *phib, int64_t ld_phi, float *theta,
                           int64_t ld_theta, int64_t n_iter, double tol, double *loglik,
                           int num_threads) noexcept nogil:
    return ck.cg_plsa_docs_f32_i32(n_rows, indptr, indices, data, nnz, n_words, K, phi, phib,
                                   ld_phi, theta, ld_theta, n_iter, tol, loglik, num_threads)


cdef int plsa_docs_f32_i64(int64_t n_rows, const int64_t *indptr, const int64_t *indices,
                           const float *data, int64_t nnz, int64_t n_words, int64_t K,
                           const float *phi, const float *phib, int64_t ld_phi, float *theta,
                           int64_t ld_theta, int64_t n_iter, double tol, double *loglik,
                           int num_threads) noexcept nogil:
    return ck.cg_plsa_docs_f32_i64(n_rows, indptr, indices, data, nnz, n_words, K, phi, phib,
                                   ld_phi, theta, ld_theta, n_iter, tol, loglik, num_threads)


cdef int plsa_docs_f64_i32(int64_t n_rows, const int32_t *indptr, const int32_t *indices,
                           const double *data, int64_t nnz, int64_t n_words, int64_t K,
                           const double *phi, const double *phib, int64_t ld_phi, double *theta,
                           int64_t ld_theta, int64_t n_iter, double tol, double *loglik,
                           int num_threads) noexcept nogil:
    return ck.cg_plsa_docs_f64_i32(n_rows, indptr, indices, data, nnz, n_words, K, phi, phib,
                                   ld_phi, theta, ld_theta, n_iter, tol, loglik, num_threads)


cdef int plsa_docs_f64_i64(int64_t n_rows, const int64_t *indptr, const int64_t *indices,
                           const double *data, int64_t nnz, int64_t n_words, int64_t K,
                           const double *phi, const double *phib, int64_t ld_phi, double *theta,
                           int64_t ld_theta, int64_t n_iter, double tol, double *loglik,
                           int num_threads) noexcept nogil:
    return ck.cg_plsa_docs_f64_i64(n_rows, indptr, indices, data, nnz, n_words, K, phi, phib,
                                   ld_phi, theta, ld_theta, n_iter, tol, loglik, num_threads)


cdef int plsa_words_f32_i32(int64_t n_words, const int32_t *indptr, const int32_t *indices,
                            const float *data, int64_t nnz, int64_t n_docs, int64_t K,
                            const float *theta, int64_t ld_theta, const float *phib,
                            int64_t ld_phi, float *acc, int64_t ld_acc,
                            int num_threads) noexcept nogil:
    return ck.cg_plsa_words_f32_i32(n_words, indptr, indices, data, nnz, n_docs, K, theta,
                                    ld_theta, phib, ld_phi, acc, ld_acc, num_threads)


cdef int plsa_words_f32_i64(int64_t n_words, const int64_t *indptr, const int64_t *indices,
                            const float *data, int64_t nnz, int64_t n_docs, int64_t K,
                            const float *theta, int64_t ld_theta, const float *phib,
                            int64_t ld_phi, float *acc, int64_t ld_acc,
                            int num_threads) noexcept nogil:
    return ck.cg_plsa_words_f32_i64(n_words, indptr, indices, data, nnz, n_docs, K, theta,
                                    ld_theta, phib, ld_phi, acc, ld_acc, num_threads)


cdef int plsa_words_f64_i32(int64_t n_words, const int32_t *indptr, const int32_t *indices,
                            const double *data, int64_t nnz, int64_t n_docs, int64_t K,
                            const double *theta, int64_t ld_theta, const double *phib,
                            int64_t ld_phi, double *acc, int64_t ld_acc,
                            int num_threads) noexcept nogil:
    return ck.cg_plsa_words_f64_i32(n_words, indptr, indices, data, nnz, n_docs, K, theta,
                                    ld_theta, phib, ld_phi, acc, ld_acc, num_threads)


cdef int plsa_words_f64_i64(int64_t n_words, const int64_t *indptr, const int64_t *indices,
                            const double *data, int64_t nnz, int64_t n_docs, int64_t K,
                            const double *theta, int64_t ld_theta, const double *phib,
                            int64_t ld_phi, double *acc, int64_t ld_acc,
                            int num_threads) noexcept nogil:
    return ck.cg_plsa_words_f64_i64(n_words, indptr, indices, data, nnz, n_docs, K, theta,
                                    ld_theta, phib, ld_phi, acc, ld_acc, num_threads)
