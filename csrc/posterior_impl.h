/* Fused max / exp / normalise / floor of one row of log-scores, and the
 * exact log-likelihood of that row; included once per REAL type. */
#define CG_FN(name) CG_CAT3(name, _, SUF)

static void CG_FN(cg_posterior_row)(REAL *CG_RESTRICT row, int64_t L,
                                    const REAL *CG_RESTRICT log_prior, double floor,
                                    double *loglik)
{
    int64_t k;
    const REAL m = CG_FN(cg_max)(row, L);
    double s;
    REAL inv;
    if (!(m > -INFINITY)) {
        /* every position impossible (or NaN): fall back to the prior */
        for (k = 0; k < L; k++)
            row[k] = log_prior ? CG_FN(cg_exp)(log_prior[k]) : (REAL)(1.0 / (double)L);
        *loglik = -INFINITY;
        return;
    }
    for (k = 0; k < L; k++)
        row[k] = CG_FN(cg_exp)(row[k] - m);
    s = CG_FN(cg_sum)(row, L);
    *loglik = (double)m + log(s) - (log_prior ? 0.0 : log((double)L));
    inv = (REAL)(1.0 / s);
    for (k = 0; k < L; k++)
        row[k] *= inv;
    if (floor > 0.0) {
        const REAL f = (REAL)floor;
        for (k = 0; k < L; k++)
            row[k] = row[k] < f ? f : row[k];
        inv = (REAL)(1.0 / CG_FN(cg_sum)(row, L));
        for (k = 0; k < L; k++)
            row[k] *= inv;
    }
}

int CG_FN(cg_posterior)(int64_t n_rows, int64_t L, REAL *q, int64_t ld_q,
                        const REAL *log_prior, double floor, double *loglik,
                        int num_threads)
{
    int64_t t;
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
        CG_FN(cg_posterior_row)(row, L, log_prior, floor, loglik + t);
    }
    return CG_OK;
}

#undef CG_FN
