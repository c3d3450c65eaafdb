/* pLSA EM passes over the non-zero counts; included once per (REAL, INDEX)
 * after rowops.h.  Requires REAL, SUF, INDEX, ISUF, CG_FN.
 *
 * theta = P(z|d) (n_docs x K), phi = P(w|z) stored word-major (n_words x K), so
 * the K topics of one word are contiguous.  No n_nonzero x K responsibility
 * array is formed: for a count n(d,w) the posterior P(z|d,w) is
 * theta_dz phib_wz / s_dw with s_dw = sum_z theta_dz phib_wz, recomputed where
 * needed (phib = phi^beta, tempered EM; phib = phi when beta = 1). */

/* Folding-in / the P(z|d) half of EM, parallel over documents.
 * For each row d: loglik[d] = sum_w n(d,w) log sum_z theta_dz phi_wz at the
 * theta on entry; then n_iter updates
 *     theta_dz <- theta_dz sum_w n(d,w) phib_wz / s_dw / n(d)
 * stopping early when max_z |change| < tol.  Empty rows keep their theta and
 * get loglik 0; a count whose word has zero probability gives -inf. */
int CG_FN2(cg_plsa_docs)(int64_t n_rows, const INDEX *indptr, const INDEX *indices,
                         const REAL *data, int64_t nnz, int64_t n_words, int64_t K,
                         const REAL *phi, const REAL *phib, int64_t ld_phi,
                         REAL *theta, int64_t ld_theta, int64_t n_iter, double tol,
                         double *loglik, int num_threads)
{
    int bad = 0, failed = 0;
    const CG_FN(cg_rowops) ops = CG_FN(cg_get_rowops)();
    if (n_rows < 0 || nnz < 0 || n_words < 0 || K < 1 || ld_phi < K || ld_theta < K
        || n_iter < 0 || !(tol >= 0.0))
        return CG_ERR_ARGUMENT;
    if (n_rows == 0)
        return CG_OK;
    if (indptr == NULL || theta == NULL || phi == NULL || loglik == NULL
        || (nnz > 0 && (indices == NULL || data == NULL)))
        return CG_ERR_ARGUMENT;
    if (phib == NULL)
        phib = phi;
    #pragma omp parallel num_threads(cg_resolve_threads(num_threads))
    {
        REAL *acc = (REAL *)cg_thread_scratch((size_t)K * sizeof(REAL), &failed);
        int64_t d;
        #pragma omp for schedule(dynamic, 16)
        for (d = 0; d < n_rows; d++) {
            const int64_t p0 = (int64_t)indptr[d], p1 = (int64_t)indptr[d + 1];
            REAL *CG_RESTRICT th = theta + d * ld_theta;
            double length = 0.0, ll = 0.0;
            int64_t p, k, it;
            if (cg_skip_row(acc != NULL, p0, p1, nnz, &bad))
                continue;
            for (p = p0; p < p1; p++)
                if ((uint64_t)indices[p] >= (uint64_t)n_words)
                    break;
            if (p < p1) {
                cg_raise(&bad);
                continue;
            }
            for (k = 0; k < K; k++)
                acc[k] = 0;
            /* the first pass also gives the log-likelihood at entry */
            for (p = p0; p < p1; p++) {
                const int64_t w = (int64_t)indices[p];
                const double s = ops.dot_axpy(th, phib + w * ld_phi, acc, data[p], K);
                length += (double)data[p];
                ll += (double)data[p] * log(phib == phi ? s : ops.dot_axpy(th, phi + w * ld_phi,
                                                                           NULL, 0, K));
            }
            loglik[d] = ll;
            if (length <= 0.0 || n_iter == 0)
                continue;
            for (it = 0; it < n_iter; it++) {
                double change = 0.0;
                if (it > 0) {
                    for (k = 0; k < K; k++)
                        acc[k] = 0;
                    for (p = p0; p < p1; p++)
                        ops.dot_axpy(th, phib + (int64_t)indices[p] * ld_phi, acc, data[p], K);
                }
                for (k = 0; k < K; k++) {
                    const REAL v = (REAL)((double)th[k] * (double)acc[k] / length);
                    const double delta = fabs((double)v - (double)th[k]);
                    change = delta > change ? delta : change;
                    th[k] = v;
                }
                if (change < tol)
                    break;
            }
        }
        free(acc);
    }
    if (failed)
        return CG_ERR_ALLOC;
    return bad ? CG_ERR_INDEX : CG_OK;
}

/* The P(w|z) half of EM, parallel over words (CSC: column w lists its
 * documents): acc[w, z] = phib_wz sum_d n(d,w) theta_dz / s_dw.  The caller
 * normalises acc over words.  No atomics: each word's row has one owner. */
int CG_FN2(cg_plsa_words)(int64_t n_words, const INDEX *indptr, const INDEX *indices,
                          const REAL *data, int64_t nnz, int64_t n_docs, int64_t K,
                          const REAL *theta, int64_t ld_theta, const REAL *phib, int64_t ld_phi,
                          REAL *acc, int64_t ld_acc, int num_threads)
{
    int bad = 0;
    int64_t w;
    const CG_FN(cg_rowops) ops = CG_FN(cg_get_rowops)();
    if (n_words < 0 || nnz < 0 || n_docs < 0 || K < 1 || ld_theta < K || ld_phi < K || ld_acc < K)
        return CG_ERR_ARGUMENT;
    if (n_words == 0)
        return CG_OK;
    if (indptr == NULL || phib == NULL || acc == NULL || (nnz > 0 && (indices == NULL || data == NULL))
        || (n_docs > 0 && theta == NULL))
        return CG_ERR_ARGUMENT;
    #pragma omp parallel for schedule(dynamic, 16) num_threads(cg_resolve_threads(num_threads))
    for (w = 0; w < n_words; w++) {
        const int64_t p0 = (int64_t)indptr[w], p1 = (int64_t)indptr[w + 1];
        const REAL *CG_RESTRICT f = phib + w * ld_phi;
        REAL *CG_RESTRICT a = acc + w * ld_acc;
        int64_t p, k;
        for (k = 0; k < K; k++)
            a[k] = 0;
        if (cg_bad_range(p0, p1, nnz)) {
            cg_raise(&bad);
            continue;
        }
        for (p = p0; p < p1; p++) {
            const int64_t d = (int64_t)indices[p];
            if ((uint64_t)d >= (uint64_t)n_docs) {
                cg_raise(&bad);
                break;
            }
            ops.dot_axpy(f, theta + d * ld_theta, a, data[p], K);
        }
        for (k = 0; k < K; k++)
            a[k] *= f[k];
    }
    return bad ? CG_ERR_INDEX : CG_OK;
}

