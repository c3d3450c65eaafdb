/* E-step on CSR rows; included once per (REAL, INDEX) pair.
 * Requires REAL, SUF, INDEX, ISUF.
 *
 * The rows are taken in blocks of CG_GRID_ESTEP_BLOCK_ROWS documents (one block per task
 * of the parallel loop; rows are independent, so the result does not depend on the thread
 * count).  Optional cache blocking (grid_internal.h, COUNTGRID_ESTEP_TILE;
 * docs/counting_grids.md, "Speed at scale"): within a block the L positions are taken in
 * tiles of w columns, every document of the block receiving its terms on [l0, l0 + w)
 * before any document moves to the next tile, so that the logh rows of the block's words,
 * restricted to the tile, stay in a cache of CG_GRID_ESTEP_TILE_BUDGET bytes per thread
 * when several documents share a word.  Each q[t, l] receives the same terms in the same
 * order (the word order of the row, the same axpy4/axpy1 grouping) as without tiles: the
 * row kernels are elementwise, so the result is bit-identical whatever the tile width.
 * The posterior runs on the full row after its last tile. */

/* Validates the CSR rows [t0, t1) (pointers and indices) and returns the number of
 * distinct words they hold, counted with `seen` (n_features bytes of zeros, left zeroed),
 * or without it the number of stored entries (an upper bound); -1 on a bad row. */
static int64_t CG_FN2(cg_grid_estep_block_words)(int64_t t0, int64_t t1, const INDEX *indptr,
                                                 const INDEX *indices, int64_t nnz,
                                                 int64_t n_features, unsigned char *seen)
{
    int64_t t, p, distinct = 0;
    /* the scan stops before entry stop_p of row stop_t (stop_p < 0: its pointers are bad) */
    int64_t stop_t = t1, stop_p = -1;
    for (t = t0; t < t1 && stop_t == t1; t++) {
        const int64_t start = (int64_t)indptr[t], end = (int64_t)indptr[t + 1];
        if (cg_bad_range(start, end, nnz)) {
            stop_t = t;
            break;
        }
        for (p = start; p < end; p++) {
            const int64_t z = (int64_t)indices[p];
            if ((uint64_t)z >= (uint64_t)n_features) {
                stop_t = t;
                stop_p = p;
                break;
            }
            if (seen == NULL)
                distinct++;
            else if (!seen[z]) {
                seen[z] = 1;
                distinct++;
            }
        }
    }
    if (seen != NULL)
        /* clear exactly the marks set above */
        for (t = t0; t < t1 && t <= stop_t; t++) {
            int64_t end;
            if (t == stop_t && stop_p < 0)
                break;
            end = t < stop_t ? (int64_t)indptr[t + 1] : stop_p;
            for (p = (int64_t)indptr[t]; p < end; p++)
                seen[indices[p]] = 0;
        }
    return stop_t == t1 ? distinct : -1;
}

/* q[t, l0 : l0 + len) = log_prior (or 0) + sum_z c_tz logh[z, l0 : l0 + len) for a row
 * whose entries [p, end) were checked. */
static inline void CG_FN2(cg_grid_estep_tile)(const CG_FN(cg_rowops) *ops, REAL *CG_RESTRICT row,
                                             int64_t p, int64_t end, const INDEX *indices,
                                             const REAL *data, const REAL *logh,
                                             int64_t ld_logh, const REAL *log_prior,
                                             int64_t l0, int64_t len)
{
    int64_t k;
    if (log_prior != NULL)
        for (k = 0; k < len; k++)
            row[k] = log_prior[l0 + k];
    else
        for (k = 0; k < len; k++)
            row[k] = 0;
    for (; p + 4 <= end; p += 4) {
        const REAL *r0 = logh + (int64_t)indices[p] * ld_logh + l0;
        const REAL *r1 = logh + (int64_t)indices[p + 1] * ld_logh + l0;
        const REAL *r2 = logh + (int64_t)indices[p + 2] * ld_logh + l0;
        const REAL *r3 = logh + (int64_t)indices[p + 3] * ld_logh + l0;
        ops->axpy4(row, r0, r1, r2, r3, data[p], data[p + 1], data[p + 2], data[p + 3], len);
    }
    for (; p < end; p++)
        ops->axpy1(row, logh + (int64_t)indices[p] * ld_logh + l0, data[p], len);
}

int CG_FN2(cg_grid_estep_csr)(int64_t n_rows, const INDEX *indptr, const INDEX *indices,
                              const REAL *data, int64_t nnz, int64_t n_features,
                              int64_t L, const REAL *logh, int64_t ld_logh,
                              const REAL *log_prior, double floor,
                              REAL *q, int64_t ld_q, double *loglik, int num_threads)
{
    int64_t n_blocks, tile_env;
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
    tile_env = cg_grid_estep_tile_env();
    n_blocks = (n_rows + CG_GRID_ESTEP_BLOCK_ROWS - 1) / CG_GRID_ESTEP_BLOCK_ROWS;
    #pragma omp parallel num_threads(cg_resolve_threads(num_threads))
    {
        /* marks of the words of a block, for the automatic tile width (without them the
         * width is computed from the number of entries, a smaller but valid width) */
        unsigned char *seen = NULL;
        int64_t b;
        if (tile_env < 0 && L > CG_GRID_ESTEP_MIN_TILE && n_features > 0)
            seen = (unsigned char *)calloc((size_t)n_features, 1);
        #pragma omp for schedule(dynamic, 1)
        for (b = 0; b < n_blocks; b++) {
            const int64_t t0 = b * CG_GRID_ESTEP_BLOCK_ROWS;
            const int64_t t1 = t0 + CG_GRID_ESTEP_BLOCK_ROWS < n_rows
                                   ? t0 + CG_GRID_ESTEP_BLOCK_ROWS : n_rows;
            const int64_t words = CG_FN2(cg_grid_estep_block_words)(
                t0, t1, indptr, indices, nnz, n_features, seen);
            int64_t w, l0, t;
            if (words < 0) {
                cg_raise(&bad);
                continue;
            }
            w = cg_grid_estep_tile_width(tile_env, L, words, t1 - t0, (int64_t)sizeof(REAL));
            if (w >= L) {
                /* one tile: each row is scored and turned into a posterior while in L1 */
                for (t = t0; t < t1; t++) {
                    REAL *row = q + t * ld_q;
                    CG_FN2(cg_grid_estep_tile)(&ops, row, (int64_t)indptr[t],
                                               (int64_t)indptr[t + 1], indices, data, logh,
                                               ld_logh, log_prior, 0, L);
                    ops.posterior(row, L, log_prior, floor, loglik + t);
                }
                continue;
            }
            for (l0 = 0; l0 < L; l0 += w) {
                const int64_t len = l0 + w < L ? w : L - l0;
                for (t = t0; t < t1; t++)
                    CG_FN2(cg_grid_estep_tile)(&ops, q + t * ld_q + l0, (int64_t)indptr[t],
                                               (int64_t)indptr[t + 1], indices, data, logh,
                                               ld_logh, log_prior, l0, len);
            }
            for (t = t0; t < t1; t++)
                ops.posterior(q + t * ld_q, L, log_prior, floor, loglik + t);
        }
        free(seen);
    }
    return bad ? CG_ERR_INDEX : CG_OK;
}
