/* M-step statistics n = C^T q from CSC columns; included once per (REAL, INDEX). */

/* The cursor convention of the block-wise M-step (here and accumulate_topk_impl.h): the
 * entries of column z in the rows [row_start, row_end) of the block start at cursor[z] and
 * must be sorted and inside the block.  Returns their start p and stores their end, to which
 * cursor[z] is advanced; a column whose pointers or rows are not valid raises *bad and
 * gives no entries (*end = p, cursor[z] untouched). */
static inline int64_t CG_FN2(cg_grid_block_column)(const INDEX *indptr, const INDEX *indices,
                                                   int64_t nnz, INDEX *cursor, int64_t z,
                                                   int64_t row_start, int64_t row_end,
                                                   int64_t *end, int *bad)
{
    const int64_t p = (int64_t)cursor[z];
    const int64_t col_start = (int64_t)indptr[z], col_end = (int64_t)indptr[z + 1];
    int64_t e = p, prev = row_start;
    int ok = col_start >= 0 && p >= col_start && p <= col_end && col_end <= nnz;
    while (ok && e < col_end && (int64_t)indices[e] < row_end) {
        ok = (int64_t)indices[e] >= prev;
        prev = (int64_t)indices[e];
        e++;
    }
    if (!ok) {
        cg_raise(bad);
        e = p;
    }
    cursor[z] = (INDEX)e;
    *end = e;
    return p;
}

int CG_FN2(cg_grid_accumulate_csc)(int64_t n_features, const INDEX *indptr, const INDEX *indices,
                                   const REAL *data, int64_t nnz, INDEX *cursor,
                                   int64_t row_start, int64_t row_end, int64_t L,
                                   const REAL *q, int64_t ld_q, REAL *n, int64_t ld_n,
                                   int num_threads)
{
    int64_t z;
    int bad = 0;
    const CG_FN(cg_rowops) ops = CG_FN(cg_get_rowops)();
    if (n_features < 0 || nnz < 0 || row_start < 0 || row_end < row_start || L < 1
        || ld_q < L || ld_n < L)
        return CG_ERR_ARGUMENT;
    if (n_features == 0 || row_end == row_start)
        return CG_OK;
    if (indptr == NULL || cursor == NULL || q == NULL || n == NULL
        || (nnz > 0 && (indices == NULL || data == NULL)))
        return CG_ERR_ARGUMENT;
    #pragma omp parallel for schedule(dynamic, 8) num_threads(cg_resolve_threads(num_threads))
    for (z = 0; z < n_features; z++) {
        int64_t end, p = CG_FN2(cg_grid_block_column)(indptr, indices, nnz, cursor, z,
                                                      row_start, row_end, &end, &bad);
        REAL *CG_RESTRICT nz = n + z * ld_n;
        for (; p + 4 <= end; p += 4) {
            const REAL c0 = data[p], c1 = data[p + 1], c2 = data[p + 2], c3 = data[p + 3];
            const REAL *CG_RESTRICT q0 = q + ((int64_t)indices[p] - row_start) * ld_q;
            const REAL *CG_RESTRICT q1 = q + ((int64_t)indices[p + 1] - row_start) * ld_q;
            const REAL *CG_RESTRICT q2 = q + ((int64_t)indices[p + 2] - row_start) * ld_q;
            const REAL *CG_RESTRICT q3 = q + ((int64_t)indices[p + 3] - row_start) * ld_q;
            ops.axpy4(nz, q0, q1, q2, q3, c0, c1, c2, c3, L);
        }
        for (; p < end; p++) {
            const REAL c = data[p];
            const REAL *CG_RESTRICT qr = q + ((int64_t)indices[p] - row_start) * ld_q;
            ops.axpy1(nz, qr, c, L);
        }
    }
    return bad ? CG_ERR_INDEX : CG_OK;
}

