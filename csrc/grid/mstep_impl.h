/* The counting-grid M-step (Jojic & Perina, UAI 2011, eq. 7, with the authors' code
 * conventions rho and alpha: docs/counting_grids.md, "Learning"); included once per
 * REAL type. */

/* Every cell (column) of a (n_features x L) grid divided by its sum over features, in
 * place (1/n_features where the sum is 0); colsum (L doubles, zeroed) is scratch.  Called
 * by every thread of a parallel region (orphaned worksharing): each column is summed in
 * feature order by the thread owning it, so the result does not depend on the threads. */
static void CG_FN(grid_normalise_cells)(int64_t n_features, int64_t L, REAL *pi,
                                        int64_t ld_pi, double *colsum)
{
    int64_t z, k, c;
    #pragma omp for schedule(static)
    for (c = 0; c < (L + 255) / 256; c++) {
        const int64_t k0 = c * 256, k1 = (k0 + 256 < L) ? k0 + 256 : L;
        for (z = 0; z < n_features; z++) {
            const REAL *pz = pi + z * ld_pi;
            for (k = k0; k < k1; k++)
                colsum[k] += (double)pz[k];
        }
        for (k = k0; k < k1; k++) {
            double s = colsum[k];
            if (s > 0.0 && s < 0x1p-900) {
                /* Sums this small (counts near 1e-320 with rho = 0) have a reciprocal
                 * beyond the double range: scale the column up by an exact power of
                 * two first.  Only reachable for double (float32 values are >= 2^-149). */
                for (z = 0; z < n_features; z++)
                    pi[z * ld_pi + k] = (REAL)((double)pi[z * ld_pi + k] * 0x1p600);
                s *= 0x1p600;
            }
            colsum[k] = s > 0.0 ? 1.0 / s : 0.0;
        }
    }
    #pragma omp for schedule(static)
    for (z = 0; z < n_features; z++) {
        REAL *CG_RESTRICT pz = pi + z * ld_pi;
        const REAL uniform = (REAL)(1.0 / (double)n_features);
        for (k = 0; k < L; k++)
            pz[k] = colsum[k] > 0.0 ? (REAL)((double)pz[k] * colsum[k]) : uniform;
    }
}

/* Both M-steps: anchor NULL is cg_grid_mstep (its arithmetic unchanged). */
static int CG_FN(grid_mstep)(int ndim, const int64_t *extent, const int64_t *window,
                             int64_t n_features, REAL *n, int64_t ld_n,
                             const REAL *h, int64_t ld_h, REAL *pi, int64_t ld_pi,
                             const REAL *anchor, int64_t ld_anchor, double weight,
                             double rho, double alpha, int num_threads)
{
    int64_t L, wvol, scratch_len;
    double *colsum;
    int status = cg_check_grid(ndim, extent, window, &L, &wvol);
    int failed = 0;
    const int nt = cg_resolve_threads(num_threads);
    if (status != CG_OK)
        return status;
    if (n_features < 1 || ld_n < L || ld_h < L || ld_pi < L || !(rho >= 0.0) || !(alpha >= 0.0)
        || n == NULL || h == NULL || pi == NULL)
        return CG_ERR_ARGUMENT;
    if (anchor != NULL && (ld_anchor < L || !(weight >= 0.0) || !(weight < HUGE_VAL)))
        return CG_ERR_ARGUMENT;
    scratch_len = cg_box_scratch_size(ndim, extent, L);
    colsum = (double *)calloc((size_t)L, sizeof(double));
    if (colsum == NULL)
        return CG_ERR_ALLOC;
    #pragma omp parallel num_threads(nt)
    {
        REAL *scratch = (REAL *)cg_thread_scratch((size_t)scratch_len * sizeof(REAL), &failed);
        const REAL floor_h = (REAL)((double)wvol * alpha);
        const REAL a = (REAL)alpha, r = (REAL)rho, w = (REAL)weight;
        int64_t z, k;
        #pragma omp for schedule(static)
        for (z = 0; z < n_features; z++) {
            REAL *CG_RESTRICT nz = n + z * ld_n;
            const REAL *CG_RESTRICT hz = h + z * ld_h;
            REAL *CG_RESTRICT pz = pi + z * ld_pi;
            if (scratch == NULL)
                continue;
            for (k = 0; k < L; k++)
                nz[k] = nz[k] / (hz[k] + floor_h);
            CG_FN(cg_box_grid)(ndim, extent, window, 1, (REAL)1, L, nz, nz, scratch);
            if (anchor == NULL) {
                for (k = 0; k < L; k++) {
                    const REAL qh = nz[k] > 0 ? nz[k] : (REAL)0;
                    pz[k] = r + qh * (pz[k] + a);
                }
            } else {
                const REAL *CG_RESTRICT az = anchor + z * ld_anchor;
                for (k = 0; k < L; k++) {
                    const REAL qh = nz[k] > 0 ? nz[k] : (REAL)0;
                    pz[k] = r + w * az[k] + qh * (pz[k] + a);
                }
            }
        }
        free(scratch);
        CG_FN(grid_normalise_cells)(n_features, L, pi, ld_pi, colsum);
    }
    free(colsum);
    return failed ? CG_ERR_ALLOC : CG_OK;
}


int CG_FN(cg_grid_mstep)(int ndim, const int64_t *extent, const int64_t *window,
                         int64_t n_features, REAL *n, int64_t ld_n,
                         const REAL *h, int64_t ld_h, REAL *pi, int64_t ld_pi,
                         double rho, double alpha, int num_threads)
{
    return CG_FN(grid_mstep)(ndim, extent, window, n_features, n, ld_n, h, ld_h, pi, ld_pi,
                             NULL, 0, 0.0, rho, alpha, num_threads);
}

int CG_FN(cg_grid_mstep_anchored)(int ndim, const int64_t *extent, const int64_t *window,
                                  int64_t n_features, REAL *n, int64_t ld_n,
                                  const REAL *h, int64_t ld_h, REAL *pi, int64_t ld_pi,
                                  const REAL *anchor, int64_t ld_anchor, double weight,
                                  double rho, double alpha, int num_threads)
{
    if (anchor == NULL)
        return CG_ERR_ARGUMENT;
    return CG_FN(grid_mstep)(ndim, extent, window, n_features, n, ld_n, h, ld_h, pi, ld_pi,
                             anchor, ld_anchor, weight, rho, alpha, num_threads);
}
