/* Gram matrices of the Jensen-Tsallis kernels: a template of cg_instantiate.h (REAL, SUF).
 * The pair kernels are compiled once per instruction set. */
#define CG_ISA_TEMPLATE "kernels/itk_pair_impl.h"
#include "cg_isa_instantiate.h"

typedef double (*CG_FN(cg_itk_pair_fn))(const REAL *, const REAL *, const REAL *, const REAL *,
                                        int64_t, REAL, REAL, int, REAL *);

static CG_FN(cg_itk_pair_fn) CG_FN(cg_itk_select)(void)
{
    const int level = cg_simd_level();
    return CG_ISA_PICK(level, cg_itk_pair);
}

/* The element function g of a mode, for v > 0 (itkernels.c). */
static inline REAL CG_FN(cg_itk_gval)(REAL v, int mode, REAL a, REAL b)
{
    if (mode == CG_ITK_SHANNON)
        return v * CG_FN(cg_log)(v);
    if (mode == CG_ITK_NEAR_ONE)
        return v * CG_FN(cg_itk_expm1)(a * CG_FN(cg_log)(v)) * b;
    return CG_FN(cg_exp)(a * CG_FN(cg_log)(v));
}

/* g on every element of a row, 0 where v == 0 */
static void CG_FN(cg_itk_g)(const REAL *v, REAL *g, int64_t D, int mode, REAL a, REAL b)
{
    int64_t d;
    for (d = 0; d < D; d++) {
        const REAL s = v[d];
        g[d] = s > 0 ? CG_FN(cg_itk_gval)(s, mode, a, b) : (REAL)0;
    }
}

static int CG_FN(cg_itk_check)(const REAL *M, int64_t rows, int64_t D, int64_t ld)
{
    int64_t i, d;
    for (i = 0; i < rows; i++)
        for (d = 0; d < D; d++) {
            const REAL v = M[i * ld + d];
            if (!(v >= 0) || v == (REAL)INFINITY)
                return CG_ERR_ARGUMENT;
        }
    return CG_OK;
}

/* K[i, j] = K[j, i] for j < i: a symmetric Gram matrix from its upper triangle */
static void CG_FN(cg_itk_mirror)(REAL *K, int64_t n, int64_t ldk, int num_threads)
{
    int64_t i;
    #pragma omp parallel for schedule(static) num_threads(cg_resolve_threads(num_threads))
    for (i = 1; i < n; i++) {
        int64_t j;
        for (j = 0; j < i; j++)
            K[i * ldk + j] = K[j * ldk + i];
    }
}

int CG_FN(cg_itk_jt_gram_dense)(int64_t n, int64_t m, int64_t D, const REAL *X, int64_t ldx,
                                const REAL *Y, int64_t ldy, double q, int symmetric,
                                REAL *K, int64_t ldk, int num_threads)
{
    cg_itk_mode md;
    const CG_FN(cg_itk_pair_fn) pair = CG_FN(cg_itk_select)();
    REAL *gx, *gy;
    int failed = 0;
    if (n < 0 || m < 0 || D < 0 || ldx < D || ldy < D || ldk < m || !(q >= 0.0 && q <= 2.0)
        || (symmetric && (n != m)))
        return CG_ERR_ARGUMENT;
    if (n == 0 || m == 0)
        return CG_OK;
    if (X == NULL || K == NULL || (!symmetric && Y == NULL))
        return CG_ERR_ARGUMENT;
    if (symmetric) {
        Y = X;
        ldy = ldx;
    }
    if (CG_FN(cg_itk_check)(X, n, D, ldx) != CG_OK || CG_FN(cg_itk_check)(Y, m, D, ldy) != CG_OK)
        return CG_ERR_ARGUMENT;
    md = cg_itk_mode_of(q);
    gx = (REAL *)malloc((size_t)(n * D + (symmetric ? 0 : m * D) + 1) * sizeof(REAL));
    if (gx == NULL)
        return CG_ERR_ALLOC;
    gy = symmetric ? gx : gx + n * D;
    #pragma omp parallel num_threads(cg_resolve_threads(num_threads))
    {
        REAL *tmp = (REAL *)cg_thread_scratch(CG_ITK_CHUNK * sizeof(REAL), &failed);
        int64_t r, j;
        #pragma omp for schedule(static)
        for (r = 0; r < n; r++)
            CG_FN(cg_itk_g)(X + r * ldx, gx + r * D, D, md.mode, (REAL)md.a, (REAL)md.b);
        if (!symmetric) {
            #pragma omp for schedule(static)
            for (r = 0; r < m; r++)
                CG_FN(cg_itk_g)(Y + r * ldy, gy + r * D, D, md.mode, (REAL)md.a, (REAL)md.b);
        }
        /* rows of a triangle differ in length: hand them out dynamically */
        #pragma omp for schedule(dynamic, 4)
        for (r = 0; r < n; r++) {
            const int64_t j0 = symmetric ? r : 0;
            if (tmp == NULL)
                continue;
            for (j = j0; j < m; j++)
                K[r * ldk + j] = (REAL)(md.scale * pair(X + r * ldx, Y + j * ldy, gx + r * D,
                                                       gy + j * D, D, (REAL)md.a, (REAL)md.b,
                                                       md.mode, tmp));
        }
        free(tmp);
    }
    free(gx);
    if (failed)
        return CG_ERR_ALLOC;
    if (symmetric)
        CG_FN(cg_itk_mirror)(K, n, ldk, num_threads);
    return CG_OK;
}

#define CG_ITK_SPARSE_G(v) CG_FN(cg_itk_gval)((v), md.mode, ma, mb)

/* Sparse rows (CSR, sorted indices, no explicit zeros): the same sums over
 * the common support of each pair, by merging the two index lists. */
int CG_CAT3(cg_itk_jt_gram_csr_, SUF, _i64)(
    int64_t n, int64_t m, int64_t D, const int64_t *xptr, const int64_t *xind, const REAL *xval,
    const int64_t *yptr, const int64_t *yind, const REAL *yval, double q, int symmetric, REAL *K,
    int64_t ldk, int num_threads)
{
    const cg_itk_mode md = cg_itk_mode_of(q);
    const REAL ma = (REAL)md.a, mb = (REAL)md.b;
    int bad = 0;
    int64_t i;
    if (n < 0 || m < 0 || D < 0 || ldk < m || !(q >= 0.0 && q <= 2.0) || (symmetric && n != m))
        return CG_ERR_ARGUMENT;
    if (n == 0 || m == 0)
        return CG_OK;
    if (xptr == NULL || K == NULL || (!symmetric && yptr == NULL))
        return CG_ERR_ARGUMENT;
    if (symmetric) {
        yptr = xptr;
        yind = xind;
        yval = xval;
    }
    #pragma omp parallel for schedule(dynamic, 4) num_threads(cg_resolve_threads(num_threads))
    for (i = 0; i < n; i++) {
        const int64_t j0 = symmetric ? i : 0;
        const int64_t a0 = xptr[i], a1 = xptr[i + 1];
        int64_t j;
        for (j = j0; j < m; j++) {
            int64_t a = a0, b = yptr[j];
            const int64_t b1 = yptr[j + 1];
            double total = 0.0;
            while (a < a1 && b < b1) {
                const int64_t ia = xind[a], ib = yind[b];
                if (ia < ib) {
                    a++;
                } else if (ib < ia) {
                    b++;
                } else {
                    const REAL u = xval[a], v = yval[b], s = u + v;
                    if (u > 0 && v > 0)
                        total += (double)(CG_ITK_SPARSE_G(s) - CG_ITK_SPARSE_G(u) - CG_ITK_SPARSE_G(v));
                    else if (!(u >= 0 && v >= 0)) {
                        cg_raise(&bad);
                    }
                    a++;
                    b++;
                }
            }
            K[i * ldk + j] = (REAL)(md.scale * total);
        }
    }
    if (bad)
        return CG_ERR_ARGUMENT;
    if (symmetric)
        CG_FN(cg_itk_mirror)(K, n, ldk, num_threads);
    return CG_OK;
}

#undef CG_ITK_SPARSE_G
