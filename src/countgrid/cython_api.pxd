# The countgrid kernels for Cython code: ``cimport countgrid.cython_api as cg``.
#
# Each function is the C function of countgrid/countgrid.h without its ``cg_``
# prefix, with the same arguments and meaning (that header documents them):
# raw pointers, explicit int64 sizes and leading dimensions, row-major arrays,
# ``num_threads <= 0`` for the OpenMP default, and an int status (CG_OK = 0, or a
# negative CG_ERR_*).  They are ``noexcept nogil``: call them inside ``with
# nogil:`` and check the returned status yourself.
#
# They are exported through Cython's capsules (``__pyx_capi__`` of the module
# countgrid.cython_api), so a consumer needs no include or library directory
# and no link flags: ``cythonize`` finds this file on sys.path.  Cython checks
# every signature when the consumer is imported.
#
# Stability: see docs/c_api.md.  Within a CG_ABI_VERSION these signatures do
# not change; new functions may be added.
from libc.stdint cimport int32_t, int64_t

cdef enum:
    CG_OK = 0
    CG_ERR_ARGUMENT = -1    # a size, stride, pointer or window is invalid
    CG_ERR_ALLOC = -2       # a scratch allocation failed
    CG_ERR_INDEX = -3       # a sparse index or pointer array is out of range
    CG_MAX_DIM = 16         # largest grid dimension D
    CG_ABI_VERSION = 1      # the C ABI these declarations belong to
    CG_VERSION_MAJOR = 0
    CG_VERSION_MINOR = 1
    CG_VERSION_PATCH = 0

# C ABI version of the installed countgrid (equals CG_ABI_VERSION above when the
# consumer was compiled against the installed countgrid).
cdef int abi_version() noexcept nogil

cdef int window_sum_f32(int ndim, const int64_t *extent, const int64_t *window,
                        int backward, double scale, int64_t n_vec,
                        const float *inp, int64_t ld_in, float *out, int64_t ld_out,
                        int num_threads) noexcept nogil
cdef int window_sum_f64(int ndim, const int64_t *extent, const int64_t *window,
                        int backward, double scale, int64_t n_vec,
                        const double *inp, int64_t ld_in, double *out, int64_t ld_out,
                        int num_threads) noexcept nogil

cdef int histograms_f32(int ndim, const int64_t *extent, const int64_t *window,
                        int64_t n_features, const float *pi, int64_t ld_pi,
                        float *h, int64_t ld_h, float *logh, int64_t ld_logh,
                        int num_threads) noexcept nogil
cdef int histograms_f64(int ndim, const int64_t *extent, const int64_t *window,
                        int64_t n_features, const double *pi, int64_t ld_pi,
                        double *h, int64_t ld_h, double *logh, int64_t ld_logh,
                        int num_threads) noexcept nogil

cdef int posterior_f32(int64_t n_rows, int64_t L, float *q, int64_t ld_q,
                       const float *log_prior, double floor, double *loglik,
                       int num_threads) noexcept nogil
cdef int posterior_f64(int64_t n_rows, int64_t L, double *q, int64_t ld_q,
                       const double *log_prior, double floor, double *loglik,
                       int num_threads) noexcept nogil

cdef int estep_csr_f32_i32(int64_t n_rows, const int32_t *indptr, const int32_t *indices,
                           const float *data, int64_t nnz, int64_t n_features,
                           int64_t L, const float *logh, int64_t ld_logh,
                           const float *log_prior, double floor,
                           float *q, int64_t ld_q, double *loglik,
                           int num_threads) noexcept nogil
cdef int estep_csr_f32_i64(int64_t n_rows, const int64_t *indptr, const int64_t *indices,
                           const float *data, int64_t nnz, int64_t n_features,
                           int64_t L, const float *logh, int64_t ld_logh,
                           const float *log_prior, double floor,
                           float *q, int64_t ld_q, double *loglik,
                           int num_threads) noexcept nogil
cdef int estep_csr_f64_i32(int64_t n_rows, const int32_t *indptr, const int32_t *indices,
                           const double *data, int64_t nnz, int64_t n_features,
                           int64_t L, const double *logh, int64_t ld_logh,
                           const double *log_prior, double floor,
                           double *q, int64_t ld_q, double *loglik,
                           int num_threads) noexcept nogil
cdef int estep_csr_f64_i64(int64_t n_rows, const int64_t *indptr, const int64_t *indices,
                           const double *data, int64_t nnz, int64_t n_features,
                           int64_t L, const double *logh, int64_t ld_logh,
                           const double *log_prior, double floor,
                           double *q, int64_t ld_q, double *loglik,
                           int num_threads) noexcept nogil

cdef int accumulate_csc_f32_i32(int64_t n_features, const int32_t *indptr,
                                const int32_t *indices, const float *data, int64_t nnz,
                                int32_t *cursor, int64_t row_start, int64_t row_end,
                                int64_t L, const float *q, int64_t ld_q, float *n,
                                int64_t ld_n, int num_threads) noexcept nogil
cdef int accumulate_csc_f32_i64(int64_t n_features, const int64_t *indptr,
                                const int64_t *indices, const float *data, int64_t nnz,
                                int64_t *cursor, int64_t row_start, int64_t row_end,
                                int64_t L, const float *q, int64_t ld_q, float *n,
                                int64_t ld_n, int num_threads) noexcept nogil
cdef int accumulate_csc_f64_i32(int64_t n_features, const int32_t *indptr,
                                const int32_t *indices, const double *data, int64_t nnz,
                                int32_t *cursor, int64_t row_start, int64_t row_end,
                                int64_t L, const double *q, int64_t ld_q, double *n,
                                int64_t ld_n, int num_threads) noexcept nogil
cdef int accumulate_csc_f64_i64(int64_t n_features, const int64_t *indptr,
                                const int64_t *indices, const double *data, int64_t nnz,
                                int64_t *cursor, int64_t row_start, int64_t row_end,
                                int64_t L, const double *q, int64_t ld_q, double *n,
                                int64_t ld_n, int num_threads) noexcept nogil

cdef int mstep_f32(int ndim, const int64_t *extent, const int64_t *window,
                   int64_t n_features, float *n, int64_t ld_n,
                   const float *h, int64_t ld_h, float *pi, int64_t ld_pi,
                   double rho, double alpha, int num_threads) noexcept nogil
cdef int mstep_f64(int ndim, const int64_t *extent, const int64_t *window,
                   int64_t n_features, double *n, int64_t ld_n,
                   const double *h, int64_t ld_h, double *pi, int64_t ld_pi,
                   double rho, double alpha, int num_threads) noexcept nogil

cdef int openmp_enabled() noexcept nogil
cdef int max_threads() noexcept nogil
cdef const char *simd_name() noexcept nogil
cdef int jt_gram_dense_f32(int64_t n, int64_t m, int64_t D, const float *X, int64_t ldx,
                           const float *Y, int64_t ldy, double q, int symmetric, float *K,
                           int64_t ldk, int num_threads) noexcept nogil
cdef int jt_gram_dense_f64(int64_t n, int64_t m, int64_t D, const double *X, int64_t ldx,
                           const double *Y, int64_t ldy, double q, int symmetric, double *K,
                           int64_t ldk, int num_threads) noexcept nogil
cdef int jt_gram_csr_f32_i64(int64_t n, int64_t m, int64_t D, const int64_t *xptr,
                             const int64_t *xind, const float *xval, const int64_t *yptr,
                             const int64_t *yind, const float *yval, double q, int symmetric,
                             float *K, int64_t ldk, int num_threads) noexcept nogil
cdef int jt_gram_csr_f64_i64(int64_t n, int64_t m, int64_t D, const int64_t *xptr,
                             const int64_t *xind, const double *xval, const int64_t *yptr,
                             const int64_t *yind, const double *yval, double q, int symmetric,
                             double *K, int64_t ldk, int num_threads) noexcept nogil
cdef int plsa_docs_f32_i32(int64_t n_rows, const int32_t *indptr, const int32_t *indices,
                           const float *data, int64_t nnz, int64_t n_words, int64_t K,
                           const float *phi, const float *phib, int64_t ld_phi, float *theta,
                           int64_t ld_theta, int64_t n_iter, double tol, double *loglik,
                           int num_threads) noexcept nogil
cdef int plsa_docs_f32_i64(int64_t n_rows, const int64_t *indptr, const int64_t *indices,
                           const float *data, int64_t nnz, int64_t n_words, int64_t K,
                           const float *phi, const float *phib, int64_t ld_phi, float *theta,
                           int64_t ld_theta, int64_t n_iter, double tol, double *loglik,
                           int num_threads) noexcept nogil
cdef int plsa_docs_f64_i32(int64_t n_rows, const int32_t *indptr, const int32_t *indices,
                           const double *data, int64_t nnz, int64_t n_words, int64_t K,
                           const double *phi, const double *phib, int64_t ld_phi, double *theta,
                           int64_t ld_theta, int64_t n_iter, double tol, double *loglik,
                           int num_threads) noexcept nogil
cdef int plsa_docs_f64_i64(int64_t n_rows, const int64_t *indptr, const int64_t *indices,
                           const double *data, int64_t nnz, int64_t n_words, int64_t K,
                           const double *phi, const double *phib, int64_t ld_phi, double *theta,
                           int64_t ld_theta, int64_t n_iter, double tol, double *loglik,
                           int num_threads) noexcept nogil
cdef int plsa_words_f32_i32(int64_t n_words, const int32_t *indptr, const int32_t *indices,
                            const float *data, int64_t nnz, int64_t n_docs, int64_t K,
                            const float *theta, int64_t ld_theta, const float *phib,
                            int64_t ld_phi, float *acc, int64_t ld_acc,
                            int num_threads) noexcept nogil
cdef int plsa_words_f32_i64(int64_t n_words, const int64_t *indptr, const int64_t *indices,
                            const float *data, int64_t nnz, int64_t n_docs, int64_t K,
                            const float *theta, int64_t ld_theta, const float *phib,
                            int64_t ld_phi, float *acc, int64_t ld_acc,
                            int num_threads) noexcept nogil
cdef int plsa_words_f64_i32(int64_t n_words, const int32_t *indptr, const int32_t *indices,
                            const double *data, int64_t nnz, int64_t n_docs, int64_t K,
                            const double *theta, int64_t ld_theta, const double *phib,
                            int64_t ld_phi, double *acc, int64_t ld_acc,
                            int num_threads) noexcept nogil
cdef int plsa_words_f64_i64(int64_t n_words, const int64_t *indptr, const int64_t *indices,
                            const double *data, int64_t nnz, int64_t n_docs, int64_t K,
                            const double *theta, int64_t ld_theta, const double *phib,
                            int64_t ld_phi, double *acc, int64_t ld_acc,
                            int num_threads) noexcept nogil
