/* The RAP kernels of one REAL type: a template of cg_instantiate.h.  Sampling and all
 * transcendental functions run in double precision whatever REAL is.  The hidden,
 * visible and CD steps take int64 CSR arrays (the reconstructions are built in int64). */
#define CG_RAP_GEMM_T CG_CAT2(CG_RAP_GEMM_T_, SUF)

static inline double CG_FN(rap_sigmoid)(double u)
{
    if (u >= 0.0) return 1.0 / (1.0 + exp(-u));
    {
        const double e = exp(u);
        return e / (1.0 + e);
    }
}

int CG_CAT3(cg_rap_hidden_, SUF, _i64)(
    int64_t n, int64_t D, int64_t K, const int64_t *indptr, const int64_t *indices,
    const REAL *data, const int64_t *rows, const REAL *W, const REAL *beta,
    const REAL *ntrials, REAL *mp, REAL *h, bitgen_t **gens, int64_t block_rows,
    int num_threads)
{
    int64_t b, n_blocks, j0;
    int bad = 0;
    if (n < 0 || K < 1 || D < 1 || block_rows < 1
        || (n > 0 && (indptr == NULL || W == NULL || beta == NULL || ntrials == NULL
                      || mp == NULL || h == NULL)))
        return CG_ERR_ARGUMENT;
    /* the binomial sampler inverts in at most M_j steps: a huge or NaN M_j would hang it */
    for (j0 = 0; j0 < K && n > 0; ++j0) {
        const double m = (double)ntrials[j0];
        if (!(m >= 1.0 && m <= CG_RAP_MAX_TRIALS) || m != floor(m))
            return CG_ERR_ARGUMENT;
    }
    n_blocks = (n + block_rows - 1) / block_rows;
    #pragma omp parallel for schedule(static) num_threads(cg_resolve_threads(num_threads))
    for (b = 0; b < n_blocks; ++b) {
        bitgen_t *g = gens ? gens[b] : NULL;
        const int64_t r1 = (b + 1) * block_rows < n ? (b + 1) * block_rows : n;
        int64_t r, j;
        for (r = b * block_rows; r < r1; ++r) {
            const int64_t row = rows ? rows[r] : r;
            REAL *CG_RESTRICT m = mp + r * K;
            REAL *CG_RESTRICT hr = h + r * K;
            if (CG_CAT3(rap_row_project_, SUF, _i64)(D, K, indices, data, indptr[row],
                                                     indptr[row + 1], W, m)) {
                /* a bad index: flag it and leave the row defined (its stream is then
                 * not consumed, but the call fails anyway) */
                cg_raise(&bad);
                for (j = 0; j < K; ++j) m[j] = hr[j] = 0;
                continue;
            }
            for (j = 0; j < K; ++j) {
                const double s = CG_FN(rap_sigmoid)((double)m[j] - (double)beta[j]);
                m[j] = (REAL)((double)ntrials[j] * s);
                if (g)
                    hr[j] = (REAL)cg_rap_binomial(g, (int64_t)ntrials[j], s);
                else
                    hr[j] = m[j];
            }
        }
    }
    return bad ? CG_ERR_INDEX : CG_OK;
}

int CG_CAT3(cg_rap_visible_, SUF, _i64)(
    int64_t n, int64_t D, int64_t K, const REAL *H, const REAL *W, CG_RAP_GEMM_T gemm, REAL *R,
    int64_t ldr, const REAL *a, bitgen_t **gens, int64_t block_rows, int64_t *out_indptr,
    int64_t *out_indices, REAL *out_data, int num_threads)
{
    int64_t n_groups, per, r;
    int failed = 0;
    if (n < 0 || D < 1 || K < 1 || ldr < D || block_rows < 1 || gemm == NULL
        || (n > 0 && (H == NULL || W == NULL || R == NULL || a == NULL || out_indptr == NULL
                      || out_indices == NULL || out_data == NULL)))
        return CG_ERR_ARGUMENT;
    if (D > INT32_MAX || K > INT32_MAX || ldr > INT32_MAX || block_rows > INT32_MAX)
        return CG_ERR_ARGUMENT; /* BLAS takes int sizes */
    /* one GEMM per group of whole blocks of about CG_RAP_GEMM_ROWS rows, the groups fixed
     * from row 0: BLAS results depend on the shapes of the product, so a partition by
     * threads would make the rates depend on the thread count; a group of 64 rows keeps
     * the packing of W (once per call) a small part of the product */
    per = (CG_RAP_GEMM_ROWS + block_rows - 1) / block_rows * block_rows;
    n_groups = (n + per - 1) / per;
    if (per > INT32_MAX) return CG_ERR_ARGUMENT;
    /* phase 1: each row writes its non-zeros into its own segment r*D */
    #pragma omp parallel num_threads(cg_resolve_threads(num_threads))
    {
        double *lam = (double *)cg_thread_scratch((size_t)D * sizeof(double), &failed);
        int ok = lam != NULL;
        int64_t gi;
        #pragma omp for schedule(static)
        for (gi = 0; gi < n_groups; ++gi) {
            const int64_t gr0 = gi * per, gr1 = gr0 + per < n ? gr0 + per : n;
            const int64_t b0 = gr0 / block_rows, b1 = (gr1 + block_rows - 1) / block_rows;
            int64_t bb;
            if (!ok) continue;
            {
                /* R[gr0:gr1] = H[gr0:gr1] W^T: column-major R^T (D x m) = W_cm^T H^T */
                int m = (int)D, nb = (int)(gr1 - gr0), k = (int)K, ld = (int)ldr;
                REAL one = 1, zero = 0;
                char ta = 'T', tb = 'N';
                gemm(&ta, &tb, &m, &nb, &k, &one, (REAL *)W, &k, (REAL *)(H + gr0 * K), &k,
                     &zero, R + gr0 * ldr, &ld);
            }
            for (bb = b0; bb < b1; ++bb) {
                bitgen_t *g = gens ? gens[bb] : NULL;
                const int64_t r1 = (bb + 1) * block_rows < n ? (bb + 1) * block_rows : n;
                int64_t rr, i;
                for (rr = bb * block_rows; rr < r1; ++rr) {
                    REAL *CG_RESTRICT row = R + rr * ldr;
                    int64_t *CG_RESTRICT idx = out_indices + rr * D;
                    REAL *CG_RESTRICT val = out_data + rr * D;
                    int64_t cnt = 0;
                    /* vectorisable pass: clipped log-rate, rate and exp(-rate) */
                    for (i = 0; i < D; ++i) {
                        double eta = (double)a[i] + (double)row[i];
                        eta = eta > CG_RAP_MAX_LOGRATE ? CG_RAP_MAX_LOGRATE : eta;
                        lam[i] = cg_exp_f64(eta);
                    }
                    if (!g) {
                        for (i = 0; i < D; ++i) {
                            idx[i] = i;
                            val[i] = (REAL)lam[i];
                        }
                        cnt = D;
                    } else {
                        for (i = 0; i < D; ++i) {
                            const double u = g->next_double(g->state);
                            double k, em;
                            /* P(x = 0) = exp(-rate) >= 1 - rate: most words of a
                             * document have tiny rates and stop here without exp */
                            if (u <= 1.0 - lam[i]) continue;
                            em = cg_exp_f64(-lam[i]);
                            if (u <= em) continue;
                            if (lam[i] < 10.0) {
                                /* continue the inversion from k = 1 with the same u */
                                double p = em * lam[i], s = em + p;
                                k = 1.0;
                                while (u > s && k < 1000.0) {
                                    k += 1.0;
                                    p *= lam[i] / k;
                                    if (p == 0.0) break;
                                    s += p;
                                }
                            } else {
                                k = cg_rap_poisson(g, lam[i]);
                                if (k == 0.0) continue;
                            }
                            idx[cnt] = i;
                            val[cnt] = (REAL)k;
                            cnt += 1;
                        }
                    }
                    out_indptr[rr + 1] = cnt;
                }
            }
        }
        free(lam);
    }
    if (failed) return CG_ERR_ALLOC;
    /* phase 2: prefix sum and in-order compaction (each destination lies at or
     * before its source and after every earlier row's destination) */
    out_indptr[0] = 0;
    for (r = 0; r < n; ++r) {
        const int64_t cnt = out_indptr[r + 1];
        const int64_t dst = out_indptr[r];
        if (dst != r * D && cnt > 0) {
            memmove(out_indices + dst, out_indices + r * D, (size_t)cnt * sizeof(int64_t));
            memmove(out_data + dst, out_data + r * D, (size_t)cnt * sizeof(REAL));
        }
        out_indptr[r + 1] = dst + cnt;
    }
    return CG_OK;
}

int CG_CAT3(cg_rap_cd_update_, SUF, _i64)(
    int64_t n, int64_t D, int64_t K, const int64_t *indptr0, const int64_t *indices0,
    const REAL *data0, const int64_t *rows0, const int64_t *indptr1, const int64_t *indices1,
    const REAL *data1, const REAL *mp0, const REAL *mp1, REAL *W, REAL *a, REAL *beta,
    REAL *vW, REAL *va, REAL *vbeta, double lr, double momentum, double weight_decay,
    int num_threads)
{
    int64_t nnz = 0, r, p, i, j;
    int failed = 0;
    int64_t *colptr, *ent_row;
    REAL *ent_val;
    const double inv_n = n > 0 ? 1.0 / (double)n : 0.0;
    if (n < 1 || D < 1 || K < 1 || indptr0 == NULL || indptr1 == NULL || mp0 == NULL
        || mp1 == NULL || W == NULL || a == NULL || beta == NULL || vW == NULL || va == NULL
        || vbeta == NULL)
        return CG_ERR_ARGUMENT;
    for (r = 0; r < n; ++r) {
        const int64_t row = rows0 ? rows0[r] : r;
        nnz += indptr0[row + 1] - indptr0[row];
        for (p = indptr0[row]; p < indptr0[row + 1]; ++p)
            if (indices0[p] < 0 || indices0[p] >= D) return CG_ERR_INDEX;
    }
    nnz += indptr1[n];
    for (p = 0; p < indptr1[n]; ++p)
        if (indices1[p] < 0 || indices1[p] >= D) return CG_ERR_INDEX;
    colptr = (int64_t *)calloc((size_t)D + 1, sizeof(int64_t));
    ent_row = (int64_t *)malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(int64_t));
    ent_val = (REAL *)malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(REAL));
    if (!colptr || !ent_row || !ent_val) {
        free(colptr);
        free(ent_row);
        free(ent_val);
        return CG_ERR_ALLOC;
    }
    /* transpose the data rows (+) and the reconstructions (-) by word, in row
     * order: a counting sort, so every later sum has a fixed order */
    for (r = 0; r < n; ++r) {
        const int64_t row = rows0 ? rows0[r] : r;
        for (p = indptr0[row]; p < indptr0[row + 1]; ++p) colptr[indices0[p] + 1] += 1;
    }
    for (p = 0; p < indptr1[n]; ++p) colptr[indices1[p] + 1] += 1;
    for (i = 0; i < D; ++i) colptr[i + 1] += colptr[i];
    {
        int64_t *fill = (int64_t *)malloc((size_t)D * sizeof(int64_t));
        if (!fill) {
            free(colptr);
            free(ent_row);
            free(ent_val);
            return CG_ERR_ALLOC;
        }
        memcpy(fill, colptr, (size_t)D * sizeof(int64_t));
        for (r = 0; r < n; ++r) {
            const int64_t row = rows0 ? rows0[r] : r;
            for (p = indptr0[row]; p < indptr0[row + 1]; ++p) {
                const int64_t e = fill[indices0[p]]++;
                ent_row[e] = r;
                ent_val[e] = data0[p];
            }
        }
        for (r = 0; r < n; ++r) {
            for (p = indptr1[r]; p < indptr1[r + 1]; ++p) {
                const int64_t e = fill[indices1[p]]++;
                ent_row[e] = n + r; /* rows >= n index mp1 */
                ent_val[e] = -data1[p];
            }
        }
        free(fill);
    }
    /* beta: g = -(1/n) sum_r (mp0 - mp1), summed in row order */
    for (j = 0; j < K; ++j) {
        double s = 0.0, g;
        for (r = 0; r < n; ++r) s += (double)mp0[r * K + j] - (double)mp1[r * K + j];
        g = -s * inv_n;
        vbeta[j] = (REAL)(momentum * (double)vbeta[j] + lr * g);
        beta[j] = (REAL)((double)beta[j] + (double)vbeta[j]);
    }
    #pragma omp parallel num_threads(cg_resolve_threads(num_threads))
    {
        double *gw = (double *)cg_thread_scratch((size_t)K * sizeof(double), &failed);
        int64_t ii;
        #pragma omp for schedule(static)
        for (ii = 0; ii < D; ++ii) {
            double ga = 0.0;
            int64_t e, jj;
            REAL *CG_RESTRICT w = W + ii * K;
            REAL *CG_RESTRICT v = vW + ii * K;
            if (!gw) continue;
            for (jj = 0; jj < K; ++jj) gw[jj] = 0.0;
            for (e = colptr[ii]; e < colptr[ii + 1]; ++e) {
                const int64_t rr = ent_row[e];
                const double x = (double)ent_val[e];
                const REAL *CG_RESTRICT q = rr < n ? mp0 + rr * K : mp1 + (rr - n) * K;
                ga += x;
                for (jj = 0; jj < K; ++jj) gw[jj] += x * (double)q[jj];
            }
            va[ii] = (REAL)(momentum * (double)va[ii] + lr * ga * inv_n);
            a[ii] = (REAL)((double)a[ii] + (double)va[ii]);
            for (jj = 0; jj < K; ++jj) {
                const double g = gw[jj] * inv_n - weight_decay * (double)w[jj];
                const double vn = momentum * (double)v[jj] + lr * g;
                v[jj] = (REAL)vn;
                w[jj] = (REAL)((double)w[jj] + vn);
            }
        }
        free(gw);
    }
    free(colptr);
    free(ent_row);
    free(ent_val);
    return failed ? CG_ERR_ALLOC : CG_OK;
}

#undef CG_RAP_GEMM_T
