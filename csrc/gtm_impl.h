/* Body of the GTM kernels; included by gtm.c once per (data type, index type).
 * Expects GTM_DATA_T, GTM_INDEX_T and GTM_SUFFIX to be defined. */

#define GTM_FN(name) GTM_CAT(name, GTM_SUFFIX)

int GTM_FN(gtm_estep_csr_)(int64_t n_rows, int64_t n_features, int64_t K,
                           const GTM_INDEX_T *indptr, const GTM_INDEX_T *indices,
                           const GTM_DATA_T *data, const double *base, const double *log_mix,
                           const double *log_fact, const double *deltaT, const double *etaT,
                           double *resp, double *loglik, int num_threads)
{
    if (n_rows < 0 || n_features < 0 || K < 1 || num_threads < 1)
        return GTM_ERR_ARG;
    int bad = 0;
    int64_t n;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(num_threads)
#endif
    for (n = 0; n < n_rows; n++) {
        double *GTM_RESTRICT row = resp + n * K;
        const double c = -log_fact[n];
        for (int64_t k = 0; k < K; k++)
            row[k] = base[k] + log_mix[k] + c;
        for (int64_t p = (int64_t)indptr[n]; p < (int64_t)indptr[n + 1]; p++) {
            const int64_t j = (int64_t)indices[p];
            if (j < 0 || j >= n_features) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                bad = 1;
                break;
            }
            const double t = (double)data[p];
            const double *GTM_RESTRICT d = deltaT + j * K;
            const double *GTM_RESTRICT e = etaT + j * K;
            for (int64_t k = 0; k < K; k++)
                row[k] += d[k] + t * e[k];
        }
        double mx = -INFINITY;
        for (int64_t k = 0; k < K; k++)
            mx = row[k] > mx ? row[k] : mx;
        if (!(mx > -INFINITY)) {          /* every latent point impossible (or NaN) */
            for (int64_t k = 0; k < K; k++)
                row[k] = 1.0 / (double)K;
            loglik[n] = mx;
            continue;
        }
        double s = 0.0;
        for (int64_t k = 0; k < K; k++) {
            row[k] = exp(row[k] - mx);
            s += row[k];
        }
        const double inv = 1.0 / s;
        for (int64_t k = 0; k < K; k++)
            row[k] *= inv;
        loglik[n] = mx + log(s);
    }
    return bad ? GTM_ERR_INDEX : GTM_OK;
}

int GTM_FN(gtm_accumulate_csc_)(int64_t n_rows, int64_t n_features, int64_t K,
                                const GTM_INDEX_T *indptr, const GTM_INDEX_T *indices,
                                const GTM_DATA_T *data, const double *resp, double *RT,
                                double *CT, int num_threads)
{
    if (n_rows < 0 || n_features < 0 || K < 1 || num_threads < 1)
        return GTM_ERR_ARG;
    int bad = 0;
    int64_t j;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(num_threads)
#endif
    for (j = 0; j < n_features; j++) {
        double *GTM_RESTRICT r = RT + j * K;
        double *GTM_RESTRICT c = CT + j * K;
        for (int64_t k = 0; k < K; k++) {
            r[k] = 0.0;
            c[k] = 0.0;
        }
        for (int64_t p = (int64_t)indptr[j]; p < (int64_t)indptr[j + 1]; p++) {
            const int64_t n = (int64_t)indices[p];
            if (n < 0 || n >= n_rows) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                bad = 1;
                break;
            }
            const double t = (double)data[p];
            const double *GTM_RESTRICT q = resp + n * K;
            for (int64_t k = 0; k < K; k++) {
                r[k] += t * q[k];
                c[k] += q[k];
            }
        }
    }
    return bad ? GTM_ERR_INDEX : GTM_OK;
}

#undef GTM_FN
