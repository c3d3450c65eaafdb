/* Row kernels of the E- and M-steps, compiled once per (REAL, instruction set): a
 * template of cg_isa_instantiate.h inside rowops.h (REAL, SUF, ISA, CG_ISA_ATTR). */

/* row += c0 r0 + c1 r1 + c2 r2 + c3 r3 */
static CG_ISA_ATTR void CG_ISA_FN(cg_row_axpy4)(REAL *CG_RESTRICT row, const REAL *CG_RESTRICT r0,
                                              const REAL *CG_RESTRICT r1, const REAL *CG_RESTRICT r2,
                                              const REAL *CG_RESTRICT r3, REAL c0, REAL c1, REAL c2,
                                              REAL c3, int64_t L)
{
    int64_t k;
    for (k = 0; k < L; k++)
        row[k] += c0 * r0[k] + c1 * r1[k] + c2 * r2[k] + c3 * r3[k];
}

/* row += c r */
static CG_ISA_ATTR void CG_ISA_FN(cg_row_axpy1)(REAL *CG_RESTRICT row, const REAL *CG_RESTRICT r,
                                              REAL c, int64_t L)
{
    int64_t k;
    for (k = 0; k < L; k++)
        row[k] += c * r[k];
}

/* s = x . y (fixed order: 8 interleaved lanes), then acc += (c / s) y for s > 0;
 * returns s (acc may be NULL: the dot product alone).  The pLSA step for one
 * count: x, y are P(z|d) and P(w|z)^beta. */
static CG_ISA_ATTR double CG_ISA_FN(cg_row_dot_axpy)(const REAL *CG_RESTRICT x,
                                                   const REAL *CG_RESTRICT y,
                                                   REAL *CG_RESTRICT acc, REAL c, int64_t K)
{
    REAL lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    double s;
    REAL f;
    int64_t k = 0, j;
    for (; k + 8 <= K; k += 8)
        for (j = 0; j < 8; j++)
            lane[j] += x[k + j] * y[k + j];
    s = (((double)lane[0] + lane[1]) + ((double)lane[2] + lane[3]))
        + (((double)lane[4] + lane[5]) + ((double)lane[6] + lane[7]));
    for (; k < K; k++)
        s += (double)x[k] * y[k];
    if (s > 0.0 && acc != NULL) {
        f = (REAL)((double)c / s);
        for (k = 0; k < K; k++)
            acc[k] += f * y[k];
    }
    return s;
}

/* out = log(in) */
static CG_ISA_ATTR void CG_ISA_FN(cg_row_log)(REAL *CG_RESTRICT out, const REAL *CG_RESTRICT in,
                                            int64_t L)
{
    int64_t k;
    for (k = 0; k < L; k++)
        out[k] = CG_FN(cg_log)(in[k]);
}

/* Fused max / exp / normalise / floor of one row of log-scores, and the exact
 * log-likelihood of the row (see cg_posterior in countgrid.h). */
static CG_ISA_ATTR void CG_ISA_FN(cg_row_posterior)(REAL *CG_RESTRICT row, int64_t L,
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

/* The row kernels of this instruction set, for cg_get_rowops. */
static const CG_FN(cg_rowops) CG_ISA_FN(cg_rowops) = {
    .axpy4 = CG_ISA_FN(cg_row_axpy4), .axpy1 = CG_ISA_FN(cg_row_axpy1),
    .posterior = CG_ISA_FN(cg_row_posterior), .log = CG_ISA_FN(cg_row_log),
    .dot_axpy = CG_ISA_FN(cg_row_dot_axpy)};
