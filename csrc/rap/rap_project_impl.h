/* Latent coordinates x W of CSR rows (scipy's int32 or our int64 indices); a template of
 * cg_instantiate.h over (REAL, INDEX).  Sums run in REAL, in index order. */

/* u[0:K] = sum over the non-zeros of row r of x_ri W[i, :] (accumulated in REAL,
 * in index order).  Returns 0, or 1 (u unspecified) if a column index lies outside
 * [0, D). */
static inline int CG_FN2(rap_row_project)(int64_t D, int64_t K, const INDEX *indices,
                                          const REAL *data, int64_t p0, int64_t p1,
                                          const REAL *W, REAL *CG_RESTRICT u)
{
    int64_t p, j;
    for (j = 0; j < K; ++j) u[j] = 0;
    for (p = p0; p < p1; ++p) {
        const int64_t i = (int64_t)indices[p];
        const REAL x = data[p];
        const REAL *CG_RESTRICT w;
        if (i < 0 || i >= D) return 1;
        w = W + i * K;
        for (j = 0; j < K; ++j) u[j] += x * w[j];
    }
    return 0;
}

int CG_FN2(cg_rap_project)(int64_t n, int64_t D, int64_t K, const INDEX *indptr,
                           const INDEX *indices, const REAL *data, const int64_t *rows,
                           const REAL *W, REAL *out, int num_threads)
{
    int64_t r;
    int bad = 0;
    if (n < 0 || K < 1 || D < 1 || (n > 0 && (indptr == NULL || W == NULL || out == NULL)))
        return CG_ERR_ARGUMENT;
    #pragma omp parallel for schedule(static) num_threads(cg_resolve_threads(num_threads))
    for (r = 0; r < n; ++r) {
        const int64_t row = rows ? rows[r] : r;
        if (CG_FN2(rap_row_project)(D, K, indices, data, (int64_t)indptr[row],
                                    (int64_t)indptr[row + 1], W, out + r * K))
            cg_raise(&bad);
    }
    return bad ? CG_ERR_INDEX : CG_OK;
}
