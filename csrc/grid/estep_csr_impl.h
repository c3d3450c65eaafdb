/* E-step on CSR rows; included once per (REAL, INDEX) pair.
 * Requires REAL, SUF, INDEX, ISUF. */

int CG_FN2(cg_grid_estep_csr)(int64_t n_rows, const INDEX *indptr, const INDEX *indices,
                              const REAL *data, int64_t nnz, int64_t n_features,
                              int64_t L, const REAL *logh, int64_t ld_logh,
                              const REAL *log_prior, double floor,
                              REAL *q, int64_t ld_q, double *loglik, int num_threads)
{
    int64_t t;
    int bad = 0;
    const CG_FN(cg_rowops) ops = CG_FN(cg_get_rowops)();
    if (n_rows < 0 || nnz < 0 || n_features < 0 || L < 1 || ld_q < L || ld_logh < L
        || !(floor >= 0.0) || floor * (double)L >= 1.0)
        return CG_ERR_ARGUMENT;
    if (n_rows == 0)
        return CG_OK;
    if (indptr == NULL || q == NULL || loglik == NULL || (nnz > 0 && (indices == NULL || data == NULL))
        || (n_features > 0 && logh == NULL))
        return CG_ERR_ARGUMENT;
    #pragma omp parallel for schedule(dynamic, 16) num_threads(cg_resolve_threads(num_threads))
    for (t = 0; t < n_rows; t++) {
        REAL *CG_RESTRICT row = q + t * ld_q;
        int64_t p = (int64_t)indptr[t];
        const int64_t end = (int64_t)indptr[t + 1];
        int64_t k;
        if (p < 0 || end < p || end > nnz) {
            cg_raise(&bad);
            continue;
        }
        if (log_prior != NULL)
            for (k = 0; k < L; k++)
                row[k] = log_prior[k];
        else
            for (k = 0; k < L; k++)
                row[k] = 0;
        for (; p + 4 <= end; p += 4) {
            const int64_t z0 = (int64_t)indices[p], z1 = (int64_t)indices[p + 1];
            const int64_t z2 = (int64_t)indices[p + 2], z3 = (int64_t)indices[p + 3];
            const REAL c0 = data[p], c1 = data[p + 1], c2 = data[p + 2], c3 = data[p + 3];
            const REAL *CG_RESTRICT r0, *CG_RESTRICT r1, *CG_RESTRICT r2, *CG_RESTRICT r3;
            if ((uint64_t)z0 >= (uint64_t)n_features || (uint64_t)z1 >= (uint64_t)n_features
                || (uint64_t)z2 >= (uint64_t)n_features || (uint64_t)z3 >= (uint64_t)n_features) {
                cg_raise(&bad);
                break;
            }
            r0 = logh + z0 * ld_logh;
            r1 = logh + z1 * ld_logh;
            r2 = logh + z2 * ld_logh;
            r3 = logh + z3 * ld_logh;
            ops.axpy4(row, r0, r1, r2, r3, c0, c1, c2, c3, L);
        }
        for (; p < end; p++) {
            const int64_t z = (int64_t)indices[p];
            const REAL c = data[p];
            const REAL *CG_RESTRICT r;
            if ((uint64_t)z >= (uint64_t)n_features) {
                cg_raise(&bad);
                break;
            }
            r = logh + z * ld_logh;
            ops.axpy1(row, r, c, L);
        }
        ops.posterior(row, L, log_prior, floor, loglik + t);
    }
    return bad ? CG_ERR_INDEX : CG_OK;
}

