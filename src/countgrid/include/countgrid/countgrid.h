/*
 * countgrid.h -- public C API of the countgrid kernels.
 *
 * All kernels are plain C99 with optional OpenMP.  Conventions:
 *   - sizes and strides are int64_t; every 2-D array is row-major with an
 *     explicit leading dimension (ld_*, in elements, >= the row length);
 *   - a grid of extent E = (E_0..E_{D-1}) is stored in C order, L = prod E_d;
 *   - per-feature grids are stored one feature per row: an array of shape
 *     (n_features, L), so a window operation on a row touches contiguous memory;
 *   - num_threads <= 0 means "the OpenMP default"; it is passed to each parallel
 *     region, never set globally;
 *   - every function returns CG_OK (0) or a negative cg_status, and allocates
 *     nothing that outlives the call.
 *
 * This header is the single source of truth of the public C API.  It is
 * installed in the directory returned by countgrid.get_include(); C code can
 * either link the static library in countgrid.get_library_dir() or call the
 * same functions through the capsule table of countgrid/countgrid_api.h, and
 * Cython code can cimport countgrid.cython_api (docs/c_api.md).
 *
 * Stability: within a CG_ABI_VERSION, functions are only added (at the end of
 * the capsule table), never removed, renamed or given another prototype or
 * meaning; any such change bumps CG_ABI_VERSION.
 */
#ifndef COUNTGRID_COUNTGRID_H
#define COUNTGRID_COUNTGRID_H

#include <stdint.h>

#define CG_VERSION_MAJOR 0
#define CG_VERSION_MINOR 1
#define CG_VERSION_PATCH 0
#define CG_VERSION_STRING "0.1.0"
/* Bumped whenever a prototype below changes, a function is removed or renamed,
 * the meaning of an argument or status code changes, or the layout of the
 * capsule table (countgrid_api.h) changes other than by appending. */
#define CG_ABI_VERSION 1
/* Largest grid dimension D accepted by the kernels. */
#define CG_MAX_DIM 16

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CG_OK = 0,
    CG_ERR_ARGUMENT = -1,   /* a size, stride, pointer or window is invalid */
    CG_ERR_ALLOC = -2,      /* a scratch allocation failed */
    CG_ERR_INDEX = -3       /* a sparse index or pointer array is out of range */
} cg_status;

/* Window sums on the torus, for n_vec grids stored as rows of `in`.
 *   backward == 0: out_k = scale * sum_{d in [0, W)} in_{k + d}   (forward window)
 *   backward != 0: out_i = scale * sum_{d in [0, W)} in_{i - d}   (windows covering i)
 * Uses blocked prefix/suffix sums: O(L D) per grid, additions only, so the
 * relative error is bounded by D * max(W_d) * eps.  in == out is allowed. */
int cg_window_sum_f32(int ndim, const int64_t *extent, const int64_t *window,
                      int backward, double scale, int64_t n_vec,
                      const float *in, int64_t ld_in, float *out, int64_t ld_out,
                      int num_threads);
int cg_window_sum_f64(int ndim, const int64_t *extent, const int64_t *window,
                      int backward, double scale, int64_t n_vec,
                      const double *in, int64_t ld_in, double *out, int64_t ld_out,
                      int num_threads);

/* Window histograms of a counting grid pi (n_features x L):
 * h = forward window mean of pi, logh = log(h). */
int cg_histograms_f32(int ndim, const int64_t *extent, const int64_t *window,
                      int64_t n_features, const float *pi, int64_t ld_pi,
                      float *h, int64_t ld_h, float *logh, int64_t ld_logh,
                      int num_threads);
int cg_histograms_f64(int ndim, const int64_t *extent, const int64_t *window,
                      int64_t n_features, const double *pi, int64_t ld_pi,
                      double *h, int64_t ld_h, double *logh, int64_t ld_logh,
                      int num_threads);

/* Posterior over positions from log-scores, in place on each row of q
 * (n_rows x L): q_t = softmax(q_t [+ log_prior]), then floored at `floor` and
 * renormalised when floor > 0.  loglik[t] receives the exact log-likelihood
 * logsumexp_k(l_t(k) + log p(k)) (log p(k) = -log L when log_prior is NULL).
 * A row that is -inf everywhere gets the uniform posterior (the prior, when
 * given) and loglik = -inf. */
int cg_posterior_f32(int64_t n_rows, int64_t L, float *q, int64_t ld_q,
                     const float *log_prior, double floor, double *loglik,
                     int num_threads);
int cg_posterior_f64(int64_t n_rows, int64_t L, double *q, int64_t ld_q,
                     const double *log_prior, double floor, double *loglik,
                     int num_threads);

/* E-step on CSR counts: rows indptr[0..n_rows] of a CSR matrix with nnz
 * stored entries (indptr values index indices/data directly), n_features
 * columns.  q_t(k) = l_t(k) = sum_z c_tz logh[z, k], then cg_posterior. */
int cg_estep_csr_f32_i32(int64_t n_rows, const int32_t *indptr, const int32_t *indices,
                         const float *data, int64_t nnz, int64_t n_features,
                         int64_t L, const float *logh, int64_t ld_logh,
                         const float *log_prior, double floor,
                         float *q, int64_t ld_q, double *loglik, int num_threads);
int cg_estep_csr_f32_i64(int64_t n_rows, const int64_t *indptr, const int64_t *indices,
                         const float *data, int64_t nnz, int64_t n_features,
                         int64_t L, const float *logh, int64_t ld_logh,
                         const float *log_prior, double floor,
                         float *q, int64_t ld_q, double *loglik, int num_threads);
int cg_estep_csr_f64_i32(int64_t n_rows, const int32_t *indptr, const int32_t *indices,
                         const double *data, int64_t nnz, int64_t n_features,
                         int64_t L, const double *logh, int64_t ld_logh,
                         const double *log_prior, double floor,
                         double *q, int64_t ld_q, double *loglik, int num_threads);
int cg_estep_csr_f64_i64(int64_t n_rows, const int64_t *indptr, const int64_t *indices,
                         const double *data, int64_t nnz, int64_t n_features,
                         int64_t L, const double *logh, int64_t ld_logh,
                         const double *log_prior, double floor,
                         double *q, int64_t ld_q, double *loglik, int num_threads);

/* M-step accumulation n[z, :] += sum_t c_tz q[t - row_start, :] over the rows
 * t in [row_start, row_end) of a CSC matrix (n_features columns, nnz entries,
 * row indices sorted within each column).  cursor[z] is the position in
 * column z where row_start begins; it is advanced to row_end, so consecutive
 * blocks of rows are processed by calling again with the same cursor.
 * Parallel over features: no atomics, result independent of num_threads. */
int cg_accumulate_csc_f32_i32(int64_t n_features, const int32_t *indptr, const int32_t *indices,
                              const float *data, int64_t nnz, int32_t *cursor,
                              int64_t row_start, int64_t row_end, int64_t L,
                              const float *q, int64_t ld_q, float *n, int64_t ld_n,
                              int num_threads);
int cg_accumulate_csc_f32_i64(int64_t n_features, const int64_t *indptr, const int64_t *indices,
                              const float *data, int64_t nnz, int64_t *cursor,
                              int64_t row_start, int64_t row_end, int64_t L,
                              const float *q, int64_t ld_q, float *n, int64_t ld_n,
                              int num_threads);
int cg_accumulate_csc_f64_i32(int64_t n_features, const int32_t *indptr, const int32_t *indices,
                              const double *data, int64_t nnz, int32_t *cursor,
                              int64_t row_start, int64_t row_end, int64_t L,
                              const double *q, int64_t ld_q, double *n, int64_t ld_n,
                              int num_threads);
int cg_accumulate_csc_f64_i64(int64_t n_features, const int64_t *indptr, const int64_t *indices,
                              const double *data, int64_t nnz, int64_t *cursor,
                              int64_t row_start, int64_t row_end, int64_t L,
                              const double *q, int64_t ld_q, double *n, int64_t ld_n,
                              int num_threads);

/* M-step of counting-grid EM (spec section 5), in place on pi:
 *   A  = n / (h + |W| alpha)                       (n is overwritten with A, then QH)
 *   QH = max(backward window sum of A, 0)
 *   U  = rho + QH * (pi + alpha);   pi_i(z) = U_i(z) / sum_z U_i(z)  (1/Z if the sum is 0)
 */
int cg_mstep_f32(int ndim, const int64_t *extent, const int64_t *window,
                 int64_t n_features, float *n, int64_t ld_n,
                 const float *h, int64_t ld_h, float *pi, int64_t ld_pi,
                 double rho, double alpha, int num_threads);
int cg_mstep_f64(int ndim, const int64_t *extent, const int64_t *window,
                 int64_t n_features, double *n, int64_t ld_n,
                 const double *h, int64_t ld_h, double *pi, int64_t ld_pi,
                 double rho, double alpha, int num_threads);

/* 1 if the library was compiled with OpenMP, else 0. */
int cg_openmp_enabled(void);
/* Threads a parallel region would use for num_threads <= 0. */
int cg_max_threads(void);
/* Instruction set the row kernels use: "baseline", "avx2" or "avx512".
 * Chosen at run time from the CPU, capped by the environment variable
 * COUNTGRID_SIMD (baseline|avx2|avx512).  Results are bit-identical for a
 * given instruction set, whatever the thread count. */
const char *cg_simd_name(void);

/* Jensen-Tsallis kernel Gram matrices (k^B_q of the spec itkernels.md §6.2):
 *   K[i, j] = 1/(q-1) sum_d [(x_id + y_jd)^q - x_id^q - y_jd^q]        (q != 1)
 *   K[i, j] = sum_d [s log s - x log x - y log y],  s = x_id + y_jd   (q == 1)
 * over the common support of rows i of X (n x D) and j of Y (m x D), for
 * 0 <= q <= 2.  The other kernels (Jensen-Shannon, Jensen-Tsallis on
 * probability vectors, the mass-normalised k^A_q, exponentiated forms) are
 * elementwise transforms of this one.  symmetric != 0 computes K(X, X) from one
 * triangle (Y, ldy, m are then ignored/must equal n).  Entries must be finite
 * and >= 0 (else CG_ERR_ARGUMENT).  Dense rows use the vectorised log/exp. */
int cg_jt_gram_dense_f32(int64_t n, int64_t m, int64_t D, const float *X, int64_t ldx,
                         const float *Y, int64_t ldy, double q, int symmetric,
                         float *K, int64_t ldk, int num_threads);
int cg_jt_gram_dense_f64(int64_t n, int64_t m, int64_t D, const double *X, int64_t ldx,
                         const double *Y, int64_t ldy, double q, int symmetric,
                         double *K, int64_t ldk, int num_threads);
/* The same for CSR rows (int64 index arrays, sorted column indices). */
int cg_jt_gram_csr_f32_i64(int64_t n, int64_t m, int64_t D,
                           const int64_t *xptr, const int64_t *xind, const float *xval,
                           const int64_t *yptr, const int64_t *yind, const float *yval,
                           double q, int symmetric, float *K, int64_t ldk, int num_threads);
int cg_jt_gram_csr_f64_i64(int64_t n, int64_t m, int64_t D,
                           const int64_t *xptr, const int64_t *xind, const double *xval,
                           const int64_t *yptr, const int64_t *yind, const double *yval,
                           double q, int symmetric, double *K, int64_t ldk, int num_threads);

/* pLSA on sparse counts (asymmetric form).  theta = P(z|d) is n_docs x K,
 * phi = P(w|z) is stored word-major, n_words x K; phib = phi^beta for tempered
 * EM (NULL: phi).  No nnz x K responsibility array is formed.
 * cg_plsa_docs: per CSR row d, loglik[d] = sum_w n(d,w) log sum_z theta_dz phi_wz
 *   at the theta on entry, then up to n_iter folding-in updates
 *   theta_dz <- theta_dz sum_w n(d,w) phib_wz / s_dw / n(d), s_dw = theta_d . phib_w,
 *   stopping when max_z |change| < tol.  Parallel over documents.
 * cg_plsa_words: per CSC column w, acc[w, z] = phib_wz sum_d n(d,w) theta_dz / s_dw
 *   (the unnormalised M-step of P(w|z)).  Parallel over words, no atomics. */
int cg_plsa_docs_f32_i32(int64_t n_rows, const int32_t *indptr, const int32_t *indices,
                          const float *data, int64_t nnz, int64_t n_words, int64_t K,
                          const float *phi, const float *phib, int64_t ld_phi,
                          float *theta, int64_t ld_theta, int64_t n_iter, double tol,
                          double *loglik, int num_threads);
int cg_plsa_docs_f32_i64(int64_t n_rows, const int64_t *indptr, const int64_t *indices,
                          const float *data, int64_t nnz, int64_t n_words, int64_t K,
                          const float *phi, const float *phib, int64_t ld_phi,
                          float *theta, int64_t ld_theta, int64_t n_iter, double tol,
                          double *loglik, int num_threads);
int cg_plsa_docs_f64_i32(int64_t n_rows, const int32_t *indptr, const int32_t *indices,
                          const double *data, int64_t nnz, int64_t n_words, int64_t K,
                          const double *phi, const double *phib, int64_t ld_phi,
                          double *theta, int64_t ld_theta, int64_t n_iter, double tol,
                          double *loglik, int num_threads);
int cg_plsa_docs_f64_i64(int64_t n_rows, const int64_t *indptr, const int64_t *indices,
                          const double *data, int64_t nnz, int64_t n_words, int64_t K,
                          const double *phi, const double *phib, int64_t ld_phi,
                          double *theta, int64_t ld_theta, int64_t n_iter, double tol,
                          double *loglik, int num_threads);
int cg_plsa_words_f32_i32(int64_t n_words, const int32_t *indptr, const int32_t *indices,
                           const float *data, int64_t nnz, int64_t n_docs, int64_t K,
                           const float *theta, int64_t ld_theta, const float *phib,
                           int64_t ld_phi, float *acc, int64_t ld_acc, int num_threads);
int cg_plsa_words_f32_i64(int64_t n_words, const int64_t *indptr, const int64_t *indices,
                           const float *data, int64_t nnz, int64_t n_docs, int64_t K,
                           const float *theta, int64_t ld_theta, const float *phib,
                           int64_t ld_phi, float *acc, int64_t ld_acc, int num_threads);
int cg_plsa_words_f64_i32(int64_t n_words, const int32_t *indptr, const int32_t *indices,
                           const double *data, int64_t nnz, int64_t n_docs, int64_t K,
                           const double *theta, int64_t ld_theta, const double *phib,
                           int64_t ld_phi, double *acc, int64_t ld_acc, int num_threads);
int cg_plsa_words_f64_i64(int64_t n_words, const int64_t *indptr, const int64_t *indices,
                           const double *data, int64_t nnz, int64_t n_docs, int64_t K,
                           const double *theta, int64_t ld_theta, const double *phib,
                           int64_t ld_phi, double *acc, int64_t ld_acc, int num_threads);


#ifdef __cplusplus
}
#endif

#endif /* COUNTGRID_COUNTGRID_H */
