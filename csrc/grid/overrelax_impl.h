/* The over-relaxed M-step of counting grids (adaptive over-relaxed EM, Salakhutdinov &
 * Roweis, ICML 2003; docs/scale.md, "Over-relaxed EM"); included once per REAL type.
 *
 * The EM step prev -> update of every cell's word distribution, stretched by eta in log
 * space: out_i(z) = update_i(z) r^(eta - 1), r = update_i(z) / prev_i(z) clipped to
 * [1 / max_ratio, max_ratio], normalised over z by the M-step's grid_normalise_cells
 * (mstep_impl.h, included before), so the result does not depend on num_threads. */

int CG_FN(cg_grid_overrelax)(int64_t n_features, int64_t L, const REAL *prev,
                             int64_t ld_prev, const REAL *update, int64_t ld_update,
                             double eta, double max_ratio, REAL *out, int64_t ld_out,
                             int num_threads)
{
    double *colsum;
    int bad = 0;
    const int nt = cg_resolve_threads(num_threads);
    if (n_features < 1 || L < 1 || ld_prev < L || ld_update < L || ld_out < L
        || !(eta >= 1.0) || !(max_ratio >= 1.0) || !((eta - 1.0) * log(max_ratio) <= 80.0)
        || prev == NULL || update == NULL || out == NULL)
        return CG_ERR_ARGUMENT;
    colsum = (double *)calloc((size_t)L, sizeof(double));
    if (colsum == NULL)
        return CG_ERR_ALLOC;
    #pragma omp parallel num_threads(nt)
    {
        const REAL c = (REAL)(eta - 1.0), lo = (REAL)(1.0 / max_ratio), hi = (REAL)max_ratio;
        int64_t z, k;
        #pragma omp for schedule(static)
        for (z = 0; z < n_features; z++) {
            const REAL *CG_RESTRICT pz = prev + z * ld_prev;
            const REAL *CG_RESTRICT uz = update + z * ld_update;
            REAL *CG_RESTRICT oz = out + z * ld_out;
            int row_bad = 0;
            for (k = 0; k < L; k++) {
                const REAL u = uz[k], p = pz[k];
                REAL r = u / p;
                row_bad |= !(p > 0) | !(u >= 0) | !(u < HUGE_VAL);
                r = r < lo ? lo : r;            /* also r = 0 */
                r = r > hi ? hi : r;
                oz[k] = u * CG_FN(cg_exp)(c * CG_FN(cg_log)(r));
            }
            if (row_bad)
                cg_raise(&bad);
        }
        CG_FN(grid_normalise_cells)(n_features, L, out, ld_out, colsum);
    }
    free(colsum);
    return bad ? CG_ERR_ARGUMENT : CG_OK;
}
