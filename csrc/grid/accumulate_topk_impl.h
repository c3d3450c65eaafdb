/* M-step statistics from sparse posteriors (cg_grid_topk_posterior): the sparse analogue
 * of accumulate_csc_impl.h, whose cg_grid_block_column (the cursor convention) it uses;
 * included once per (REAL, INDEX), after accumulate_csc_impl.h. */

int CG_FN2(cg_grid_accumulate_csc_topk)(int64_t n_features, const INDEX *indptr,
                                        const INDEX *indices, const REAL *data, int64_t nnz,
                                        INDEX *cursor, int64_t row_start, int64_t row_end,
                                        int64_t k, const int32_t *idx, int64_t ld_idx,
                                        const REAL *val, int64_t ld_val, int64_t L, REAL *n,
                                        int64_t ld_n, int num_threads)
{
    int64_t z, r;
    const int64_t rows = row_end - row_start;
    int32_t *cidx;
    REAL *cval;
    int64_t *cnt;
    int bad = 0;
    if (n_features < 0 || nnz < 0 || row_start < 0 || row_end < row_start || L < 1 || k < 0
        || ld_idx < k || ld_val < k || ld_n < L)
        return CG_ERR_ARGUMENT;
    if (n_features == 0 || rows == 0)
        return CG_OK;
    if (indptr == NULL || cursor == NULL || n == NULL
        || (nnz > 0 && (indices == NULL || data == NULL))
        || (k > 0 && (idx == NULL || val == NULL)))
        return CG_ERR_ARGUMENT;
    /* every position of the block is checked before n is touched; meanwhile each row's
     * non-zero entries are copied to the front of scratch rows (cidx, cval; cnt of them),
     * so that the word loop below, which reads a row once per word of its document, skips
     * the zeros of peaked posteriors (most of k at convergence: docs/scale.md).  Skipping
     * an exact 0 changes no bit of n; without the scratch memory the rows are read whole. */
    cidx = (int32_t *)malloc((size_t)(rows * (k > 0 ? k : 1)) * sizeof(int32_t));
    cval = (REAL *)malloc((size_t)(rows * (k > 0 ? k : 1)) * sizeof(REAL));
    cnt = (int64_t *)malloc((size_t)rows * sizeof(int64_t));
    if (cidx == NULL || cval == NULL || cnt == NULL) {
        free(cidx);
        free(cval);
        free(cnt);
        cidx = NULL;
        cval = NULL;
        cnt = NULL;
    }
    #pragma omp parallel for schedule(static) num_threads(cg_resolve_threads(num_threads))
    for (r = 0; r < rows; r++) {
        const int32_t *it = idx + r * ld_idx;
        const REAL *vt = val + r * ld_val;
        int64_t j, out = 0, w = 0;
        for (j = 0; j < k; j++)
            out |= (uint32_t)it[j] >= (uint64_t)L;
        if (out)
            cg_raise(&bad);
        if (cnt != NULL) {
            for (j = 0; j < k; j++) {
                cidx[r * k + w] = it[j];
                cval[r * k + w] = vt[j];
                w += vt[j] != 0;
            }
            cnt[r] = w;
        }
    }
    if (bad) {
        free(cidx);
        free(cval);
        free(cnt);
        return CG_ERR_INDEX;
    }
    #pragma omp parallel for schedule(dynamic, 8) num_threads(cg_resolve_threads(num_threads))
    for (z = 0; z < n_features; z++) {
        int64_t end, p = CG_FN2(cg_grid_block_column)(indptr, indices, nnz, cursor, z,
                                                      row_start, row_end, &end, &bad);
        REAL *CG_RESTRICT nz = n + z * ld_n;
        for (; p < end; p++) {
            const int64_t t = (int64_t)indices[p] - row_start;
            const int64_t kt = cnt != NULL ? cnt[t] : k;
            const int32_t *CG_RESTRICT it = cnt != NULL ? cidx + t * k : idx + t * ld_idx;
            const REAL *CG_RESTRICT vt = cnt != NULL ? cval + t * k : val + t * ld_val;
            const REAL c = data[p];
            int64_t j;
            for (j = 0; j < kt; j++)
                nz[it[j]] += c * vt[j];
        }
    }
    free(cidx);
    free(cval);
    free(cnt);
    return bad ? CG_ERR_INDEX : CG_OK;
}
