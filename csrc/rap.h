/* Private C kernels of the Rate Adapting Poisson model (src/countgrid/rap.py).
 *
 * Paper: Gehler, Holub & Welling, ICML 2006; spec: shared/spec/rap.md.
 * Layout: W is (D, K) row-major (W[i*K + j] couples word i and topic j);
 * sparse counts are CSR with int64 indptr/indices.  Random numbers come from
 * NumPy bit generators (numpy/random/bitgen.h): gens[b] drives rows
 * [b*block_rows, (b+1)*block_rows), so the partition of rows into blocks, not
 * the thread count, fixes every random number.  All functions return CG_OK
 * or a negative cg_status. */
#ifndef COUNTGRID_RAP_H
#define COUNTGRID_RAP_H

#include <stdint.h>
#include "numpy/random/bitgen.h"

/* Log-rates a_i + sum_j W_ij h_j are clipped at this value before exp, so a
 * Poisson rate never exceeds exp(30) ~ 1.07e13 (no overflow, no hang). */
#define CG_RAP_MAX_LOGRATE 30.0

/* BLAS GEMM (Fortran interface, e.g. SciPy's cython_blas dgemm/sgemm). */
typedef void (*cg_dgemm_t)(char *, char *, int *, int *, int *, double *, double *, int *,
                           double *, int *, double *, double *, int *);
typedef void (*cg_sgemm_t)(char *, char *, int *, int *, int *, float *, float *, int *,
                           float *, int *, float *, float *, int *);

#define CG_RAP_DECLARE(SUF, REAL, GEMM_T)                                                        \
    /* out[r, :] = x_{rows[r]} W  (rows == NULL: identity), out has ld K. */             \
    int cg_rap_project##SUF(int64_t n, int64_t D, int64_t K, const int64_t *indptr,      \
                            const int64_t *indices, const REAL *data, const int64_t *rows,\
                            const REAL *W, REAL *out, int num_threads);                   \
    int cg_rap_project_i32##SUF(int64_t n, int64_t D, int64_t K, const int32_t *indptr,  \
                                const int32_t *indices, const REAL *data, const REAL *W,  \
                                REAL *out, int num_threads);                             \
    /* Hidden layer, eq. (2): mp[r,j] = M_j sigma(x_r W_j - beta_j); h[r,j] is a        \
     * Binomial(M_j, sigma) sample (gens != NULL) or mp[r,j] (mean field). */            \
    int cg_rap_hidden##SUF(int64_t n, int64_t D, int64_t K, const int64_t *indptr,       \
                           const int64_t *indices, const REAL *data, const int64_t *rows, \
                           const REAL *W, const REAL *beta, const REAL *ntrials,         \
                           REAL *mp, REAL *h, bitgen_t **gens, int64_t block_rows,       \
                           int num_threads);                                             \
    /* Visible layer, eq. (1): each block of rows computes R = h W^T with `gemm`      \
     * (called from the OpenMP threads: keep BLAS single-threaded); the rate is         \
     * exp(min(a_i + R[r,i], CG_RAP_MAX_LOGRATE)).  With gens, x ~ Poisson(rate),       \
     * else x = rate (mean field).  x is written as CSR into out_indptr (n+1),          \
     * out_indices and out_data (capacity n*D each); R (n, ld ldr >= D) is scratch. */  \
    int cg_rap_visible##SUF(int64_t n, int64_t D, int64_t K, const REAL *H, const REAL *W,\
                            GEMM_T gemm, REAL *R, int64_t ldr, const REAL *a,            \
                            bitgen_t **gens, int64_t block_rows, int64_t *out_indptr,    \
                            int64_t *out_indices, REAL *out_data, int num_threads);      \
    /* One momentum step of eq. (10): with g the batch average of                        \
     * x0 mp0^T - x1 mp1^T (W), x0 - x1 (a), -(mp0 - mp1) (beta), and                    \
     * g_W -= weight_decay W:  v = momentum v + lr g;  param += v. */                    \
    int cg_rap_cd_update##SUF(int64_t n, int64_t D, int64_t K, const int64_t *indptr0,   \
                              const int64_t *indices0, const REAL *data0,                \
                              const int64_t *rows0, const int64_t *indptr1,              \
                              const int64_t *indices1, const REAL *data1, const REAL *mp0,\
                              const REAL *mp1, REAL *W, REAL *a, REAL *beta, REAL *vW,    \
                              REAL *va, REAL *vbeta, double lr, double momentum,         \
                              double weight_decay, int num_threads);

CG_RAP_DECLARE(_f32, float, cg_sgemm_t)
CG_RAP_DECLARE(_f64, double, cg_dgemm_t)

/* Scalar samplers (exposed for tests): Poisson by inversion below rate 10 and
 * by Hörmann's PTRS transformed rejection above; binomial by inversion on
 * min(p, 1-p), at most n steps. */
double cg_rap_poisson(bitgen_t *g, double lam);
double cg_rap_binomial(bitgen_t *g, int64_t n, double p);

#endif
