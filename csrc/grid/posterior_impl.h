/* cg_posterior_*; included once per REAL type after rowops.h. */

int CG_FN(cg_grid_posterior)(int64_t n_rows, int64_t L, REAL *q, int64_t ld_q,
                             const REAL *log_prior, double floor, double *loglik,
                             int num_threads)
{
    int64_t t;
    const CG_FN(cg_rowops) ops = CG_FN(cg_get_rowops)();
    if (n_rows < 0 || L < 1 || ld_q < L || !(floor >= 0.0) || floor * (double)L >= 1.0)
        return CG_ERR_ARGUMENT;
    if (n_rows == 0)
        return CG_OK;
    if (q == NULL || loglik == NULL)
        return CG_ERR_ARGUMENT;
    #pragma omp parallel for schedule(static) num_threads(cg_resolve_threads(num_threads))
    for (t = 0; t < n_rows; t++) {
        REAL *row = q + t * ld_q;
        if (log_prior != NULL) {
            int64_t k;
            for (k = 0; k < L; k++)
                row[k] += log_prior[k];
        }
        ops.posterior(row, L, log_prior, floor, loglik + t);
    }
    return CG_OK;
}

