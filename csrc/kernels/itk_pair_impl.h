/* Per-pair sums of the Jensen-Tsallis kernels, compiled once per (REAL, ISA).
 * A template of cg_isa_instantiate.h inside itk_impl.h (REAL, SUF, ISA, CG_ISA_ATTR).
 *
 * For one pair of rows x, y (length D) and the element function g of `mode`
 * (itk_impl.h: CG_ITK_POWER, CG_ITK_SHANNON or CG_ITK_NEAR_ONE),
 *     sum_d [x_d > 0 and y_d > 0] (g(x_d + y_d) - gx_d - gy_d)
 * with gx = g(x), gy = g(y) precomputed.  Coordinates outside the common
 * support contribute exactly 0, as the 0^q = 0 convention requires
 * (docs/kernels.md, "Conventions"), and no large sums cancel (the terms of
 * disjoint coordinates are never formed). */

static CG_ISA_ATTR double CG_ISA_FN(cg_itk_pair)(const REAL *CG_RESTRICT x, const REAL *CG_RESTRICT y,
                                              const REAL *CG_RESTRICT gx,
                                              const REAL *CG_RESTRICT gy, int64_t D,
                                              REAL a, REAL b, int mode, REAL *CG_RESTRICT tmp)
{
    double total = 0.0;
    int64_t d0, d;
    for (d0 = 0; d0 < D; d0 += CG_ITK_CHUNK) {
        const int64_t n = (D - d0 < CG_ITK_CHUNK) ? D - d0 : CG_ITK_CHUNK;
        const REAL *xs = x + d0, *ys = y + d0, *gxs = gx + d0, *gys = gy + d0;
        if (mode == CG_ITK_SHANNON) {
            for (d = 0; d < n; d++) {
                const REAL s = xs[d] + ys[d];
                const REAL v = s * CG_FN(cg_log)(s) - gxs[d] - gys[d];
                tmp[d] = (xs[d] > 0 && ys[d] > 0) ? v : (REAL)0;
            }
        } else if (mode == CG_ITK_NEAR_ONE) {
            for (d = 0; d < n; d++) {
                const REAL s = xs[d] + ys[d];
                const REAL v = s * CG_FN(cg_itk_expm1)(a * CG_FN(cg_log)(s)) * b - gxs[d] - gys[d];
                tmp[d] = (xs[d] > 0 && ys[d] > 0) ? v : (REAL)0;
            }
        } else {
            for (d = 0; d < n; d++) {
                const REAL s = xs[d] + ys[d];
                const REAL v = CG_FN(cg_exp)(a * CG_FN(cg_log)(s)) - gxs[d] - gys[d];
                tmp[d] = (xs[d] > 0 && ys[d] > 0) ? v : (REAL)0;
            }
        }
        total += CG_FN(cg_sum)(tmp, n);
    }
    return total;
}
