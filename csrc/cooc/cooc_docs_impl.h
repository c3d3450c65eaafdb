/* Boolean-document co-occurrence counts over CSR rows (prototype and documentation:
 * cooc_api.h); included by cooc.c once per INDEX (int32_t, int64_t), named with
 * CG_COOC_FN. */

int CG_COOC_FN(cg_cooc_docs)(int64_t n_rows, const INDEX *indptr, const INDEX *indices,
                             int64_t nnz, int64_t n_features, const int32_t *relevant,
                             int64_t n_relevant, int64_t *counts, int64_t ld_counts,
                             int num_threads)
{
    const int nt = cg_resolve_threads(num_threads);
    const int64_t n = n_relevant;
    int64_t **acc;
    int bad = 0, failed = 0;
    if (n_rows < 0 || nnz < 0 || n_features < 0
        || cg_cooc_check(n_relevant, ld_counts, counts) != CG_OK)
        return CG_ERR_ARGUMENT;
    if (n_rows == 0 || n == 0)
        return CG_OK;
    if (indptr == NULL || relevant == NULL || (nnz > 0 && indices == NULL))
        return CG_ERR_ARGUMENT;
    acc = (int64_t **)calloc((size_t)nt, sizeof(int64_t *));
    if (acc == NULL)
        return CG_ERR_ALLOC;
    #pragma omp parallel num_threads(nt)
    {
        const int64_t n_tri = n * (n + 1) / 2;
        /* triangle, then stamp (int64: the last row + 1 that held each word), then the
         * row's relevant words (int32) */
        int64_t *mem = (int64_t *)cg_thread_scratch(
            (size_t)(n_tri + n) * sizeof(int64_t) + (size_t)n * sizeof(int32_t), &failed);
        int64_t *tri = mem, *stamp = NULL;
        int32_t *words = NULL;
        int64_t d;
        if (mem != NULL) {
            memset(mem, 0, (size_t)(n_tri + n) * sizeof(int64_t));
            stamp = mem + n_tri;
            words = (int32_t *)(stamp + n);
        }
        acc[cg_cooc_thread()] = mem;
        #pragma omp for schedule(dynamic, 64)
        for (d = 0; d < n_rows; d++) {
            const int64_t p0 = (int64_t)indptr[d], p1 = (int64_t)indptr[d + 1];
            int64_t p, k = 0;
            if (cg_skip_row(mem != NULL, p0, p1, nnz, &bad))
                continue;
            for (p = p0; p < p1; p++) {
                const int64_t j = (int64_t)indices[p];
                int32_t u;
                if (j < 0 || j >= n_features)
                    break;
                u = relevant[j];
                if (u < 0)
                    continue;
                if (u >= n)
                    break;
                if (stamp[u] == d + 1)          /* a column stored twice */
                    continue;
                stamp[u] = d + 1;
                words[k++] = u;
            }
            if (p < p1) {
                cg_raise(&bad);
                continue;
            }
            for (int64_t a = 0; a < k; a++) {
                const int64_t u = words[a];
                tri[cg_cooc_tri(u, u, n)] += 1;
                for (int64_t b = 0; b < a; b++)
                    cg_cooc_add_pair(tri, u, words[b], n, 1);
            }
        }
        cg_cooc_thread_end(!failed && !bad, acc, nt, n, counts, ld_counts, mem);
    }
    return cg_cooc_status(acc, failed, bad);
}
