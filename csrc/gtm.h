/* C99/OpenMP kernels of the ZIP/Poisson GTM (countgrid.ZIPGTM). Private header. */
#ifndef COUNTGRID_GTM_H
#define COUNTGRID_GTM_H

#include <stdint.h>

#define GTM_OK 0
#define GTM_ERR_ARG (-1)
#define GTM_ERR_INDEX (-2)

/* E-step over CSR counts (rows = documents), fused with the softmax.
 *
 * For every document n and latent point k:
 *   lj[n,k] = base[k] + log_mix[k] - log_fact[n]
 *             + sum_{p in row n} (deltaT[j_p, k] + t_p * etaT[j_p, k])
 *   resp[n,k] = exp(lj[n,k] - loglik[n]),  loglik[n] = log sum_k exp(lj[n,k]).
 * deltaT and etaT are (n_features x K) row-major; resp is (n_rows x K) row-major.
 * Rows are split statically across threads: results do not depend on num_threads. */
int gtm_estep_csr_f64_i32(int64_t n_rows, int64_t n_features, int64_t K,
                          const int32_t *indptr, const int32_t *indices, const double *data,
                          const double *base, const double *log_mix, const double *log_fact,
                          const double *deltaT, const double *etaT,
                          double *resp, double *loglik, int num_threads);
int gtm_estep_csr_f64_i64(int64_t n_rows, int64_t n_features, int64_t K,
                          const int64_t *indptr, const int64_t *indices, const double *data,
                          const double *base, const double *log_mix, const double *log_fact,
                          const double *deltaT, const double *etaT,
                          double *resp, double *loglik, int num_threads);
int gtm_estep_csr_f32_i32(int64_t n_rows, int64_t n_features, int64_t K,
                          const int32_t *indptr, const int32_t *indices, const float *data,
                          const double *base, const double *log_mix, const double *log_fact,
                          const double *deltaT, const double *etaT,
                          double *resp, double *loglik, int num_threads);
int gtm_estep_csr_f32_i64(int64_t n_rows, int64_t n_features, int64_t K,
                          const int64_t *indptr, const int64_t *indices, const float *data,
                          const double *base, const double *log_mix, const double *log_fact,
                          const double *deltaT, const double *etaT,
                          double *resp, double *loglik, int num_threads);

/* M-step statistics over CSC counts (columns = words), parallel over words, no atomics:
 *   RT[j,k] = sum_{n: t_nj > 0} t_nj resp[n,k]   (expected counts, theta^T T)
 *   CT[j,k] = sum_{n: t_nj > 0} resp[n,k]        (theta^T [T > 0])
 * RT and CT are (n_features x K) row-major. */
int gtm_accumulate_csc_f64_i32(int64_t n_rows, int64_t n_features, int64_t K,
                               const int32_t *indptr, const int32_t *indices, const double *data,
                               const double *resp, double *RT, double *CT, int num_threads);
int gtm_accumulate_csc_f64_i64(int64_t n_rows, int64_t n_features, int64_t K,
                               const int64_t *indptr, const int64_t *indices, const double *data,
                               const double *resp, double *RT, double *CT, int num_threads);
int gtm_accumulate_csc_f32_i32(int64_t n_rows, int64_t n_features, int64_t K,
                               const int32_t *indptr, const int32_t *indices, const float *data,
                               const double *resp, double *RT, double *CT, int num_threads);
int gtm_accumulate_csc_f32_i64(int64_t n_rows, int64_t n_features, int64_t K,
                               const int64_t *indptr, const int64_t *indices, const float *data,
                               const double *resp, double *RT, double *CT, int num_threads);

#endif
