/* The SQUAREM extrapolation of counting-grid EM (Varadhan & Roland, Scand. J. Statist. 35,
 * 2008, scheme S3; docs/scale.md, "Extrapolated EM"); included once per REAL type after
 * mstep_impl.h, whose grid_normalise_cells normalises the result.
 *
 * From three successive grids p0 -> p1 = F(p0) -> p2 = F(p1) of the EM map F:
 *   r = p1 - p0,  v = p2 - 2 p1 + p0,  a = -clip(|r| / |v|, 1, step_max)  (Frobenius norms)
 *   out = p0 - 2 a r + a^2 v,  each entry at least min(p0, p1, p2) / 10,  normalised over z.
 * a = -1 gives p2 itself.  The norms are summed per row in double and the rows in order, so
 * the result does not depend on num_threads. */

int CG_FN(cg_grid_squarem)(int64_t n_features, int64_t L, const REAL *p0, int64_t ld_p0,
                           const REAL *p1, int64_t ld_p1, const REAL *p2, int64_t ld_p2,
                           double step_max, REAL *out, int64_t ld_out, double *step,
                           int num_threads)
{
    double *colsum, *rowsums, a = -1.0;
    int bad = 0;
    const int nt = cg_resolve_threads(num_threads);
    if (n_features < 1 || L < 1 || ld_p0 < L || ld_p1 < L || ld_p2 < L || ld_out < L
        || !(step_max >= 1.0) || !(step_max <= 1e6) || p0 == NULL || p1 == NULL
        || p2 == NULL || out == NULL || step == NULL)
        return CG_ERR_ARGUMENT;
    colsum = (double *)calloc((size_t)L, sizeof(double));
    rowsums = (double *)malloc(2 * (size_t)n_features * sizeof(double));
    if (colsum == NULL || rowsums == NULL) {
        free(colsum);
        free(rowsums);
        return CG_ERR_ALLOC;
    }
    #pragma omp parallel num_threads(nt)
    {
        int64_t z, k;
        #pragma omp for schedule(static)
        for (z = 0; z < n_features; z++) {
            const REAL *CG_RESTRICT az = p0 + z * ld_p0;
            const REAL *CG_RESTRICT bz = p1 + z * ld_p1;
            const REAL *CG_RESTRICT cz = p2 + z * ld_p2;
            double rr = 0.0, vv = 0.0;
            int row_bad = 0;
            for (k = 0; k < L; k++) {
                const double x0 = az[k], x1 = bz[k], x2 = cz[k];
                const double r = x1 - x0, v = x2 - 2.0 * x1 + x0;
                row_bad |= !(x0 >= 0) | !(x1 >= 0) | !(x2 >= 0)
                           | !(x0 < HUGE_VAL) | !(x1 < HUGE_VAL) | !(x2 < HUGE_VAL);
                rr += r * r;
                vv += v * v;
            }
            rowsums[2 * z] = rr;
            rowsums[2 * z + 1] = vv;
            if (row_bad)
                cg_raise(&bad);
        }
        #pragma omp single
        {
            double rr = 0.0, vv = 0.0, ratio;
            for (z = 0; z < n_features; z++) {
                rr += rowsums[2 * z];
                vv += rowsums[2 * z + 1];
            }
            /* |v| = 0 (a straight path) takes the longest step allowed */
            ratio = vv > 0.0 ? sqrt(rr / vv) : step_max;
            a = -(ratio < 1.0 ? 1.0 : (ratio > step_max ? step_max : ratio));
        }   /* implicit barrier: every thread sees a and bad */
        if (!bad) {
            #pragma omp for schedule(static)
            for (z = 0; z < n_features; z++) {
                /* no restrict: out may be p0 (each entry is read before it is written) */
                const REAL *az = p0 + z * ld_p0, *bz = p1 + z * ld_p1, *cz = p2 + z * ld_p2;
                REAL *oz = out + z * ld_out;
                for (k = 0; k < L; k++) {
                    const double x0 = az[k], x1 = bz[k], x2 = cz[k];
                    const double r = x1 - x0, v = x2 - 2.0 * x1 + x0;
                    const double lo = 0.1 * (x0 < x1 ? (x0 < x2 ? x0 : x2)
                                                     : (x1 < x2 ? x1 : x2));
                    const double e = x0 - 2.0 * a * r + a * a * v;
                    oz[k] = (REAL)(e > lo ? e : lo);
                }
            }
            CG_FN(grid_normalise_cells)(n_features, L, out, ld_out, colsum);
        }
    }
    free(colsum);
    free(rowsums);
    if (bad)
        return CG_ERR_ARGUMENT;
    *step = a;
    return CG_OK;
}
