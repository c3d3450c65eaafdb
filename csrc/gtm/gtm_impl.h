/* The ZIP/Poisson GTM kernels (prototypes and documentation: gtm_api.h, generated from
 * csrc/signatures.txt); a template of cg_instantiate.h over (REAL, INDEX).  The count
 * data are REAL; the model arrays are double. */

int CG_FN2(cg_gtm_estep_csr)(int64_t n_rows, int64_t n_features, int64_t K,
                             const INDEX *indptr, const INDEX *indices,
                             const REAL *data, const double *base, const double *log_mix,
                             const double *log_fact, const double *deltaT, const double *etaT,
                             double *resp, double *loglik, int num_threads)
{
    if (n_rows < 0 || n_features < 0 || K < 1)
        return CG_ERR_ARGUMENT;
    int bad = 0;
    int64_t n;
    #pragma omp parallel for schedule(static) num_threads(cg_resolve_threads(num_threads))
    for (n = 0; n < n_rows; n++) {
        double *CG_RESTRICT row = resp + n * K;
        const double c = -log_fact[n];
        for (int64_t k = 0; k < K; k++)
            row[k] = base[k] + log_mix[k] + c;
        for (int64_t p = (int64_t)indptr[n]; p < (int64_t)indptr[n + 1]; p++) {
            const int64_t j = (int64_t)indices[p];
            if (j < 0 || j >= n_features) {
                cg_raise(&bad);
                break;
            }
            const double t = (double)data[p];
            const double *CG_RESTRICT d = deltaT + j * K;
            const double *CG_RESTRICT e = etaT + j * K;
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
    return bad ? CG_ERR_INDEX : CG_OK;
}

int CG_FN2(cg_gtm_accumulate_csc)(int64_t n_rows, int64_t n_features, int64_t K,
                                  const INDEX *indptr, const INDEX *indices,
                                  const REAL *data, const double *resp, double *RT,
                                  double *CT, int num_threads)
{
    if (n_rows < 0 || n_features < 0 || K < 1)
        return CG_ERR_ARGUMENT;
    int bad = 0;
    int64_t j;
    #pragma omp parallel for schedule(static) num_threads(cg_resolve_threads(num_threads))
    for (j = 0; j < n_features; j++) {
        double *CG_RESTRICT r = RT + j * K;
        double *CG_RESTRICT c = CT + j * K;
        for (int64_t k = 0; k < K; k++) {
            r[k] = 0.0;
            c[k] = 0.0;
        }
        for (int64_t p = (int64_t)indptr[j]; p < (int64_t)indptr[j + 1]; p++) {
            const int64_t n = (int64_t)indices[p];
            if (n < 0 || n >= n_rows) {
                cg_raise(&bad);
                break;
            }
            const double t = (double)data[p];
            const double *CG_RESTRICT q = resp + n * K;
            for (int64_t k = 0; k < K; k++) {
                r[k] += t * q[k];
                c[k] += q[k];
            }
        }
    }
    return bad ? CG_ERR_INDEX : CG_OK;
}

