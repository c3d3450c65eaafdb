/* cg_window_sum_* and cg_histograms_*; included once per REAL type. */

int CG_FN(cg_grid_window_sum)(int ndim, const int64_t *extent, const int64_t *window,
                              int backward, double scale, int64_t n_vec,
                              const REAL *in, int64_t ld_in, REAL *out, int64_t ld_out,
                              int num_threads)
{
    int64_t L, wvol, scratch_len;
    int status = cg_check_grid(ndim, extent, window, &L, &wvol);
    int failed = 0;
    if (status != CG_OK)
        return status;
    if (n_vec < 0 || ld_in < L || ld_out < L)
        return CG_ERR_ARGUMENT;
    if (n_vec == 0)
        return CG_OK;
    if (in == NULL || out == NULL)
        return CG_ERR_ARGUMENT;
    scratch_len = cg_box_scratch_size(ndim, extent, L);
    #pragma omp parallel num_threads(cg_resolve_threads(num_threads))
    {
        REAL *scratch = (REAL *)cg_thread_scratch((size_t)scratch_len * sizeof(REAL), &failed);
        int64_t v;
        #pragma omp for schedule(static)
        for (v = 0; v < n_vec; v++) {
            if (scratch != NULL)
                CG_FN(cg_box_grid)(ndim, extent, window, backward, (REAL)scale, L,
                                   in + v * ld_in, out + v * ld_out, scratch);
        }
        free(scratch);
    }
    return failed ? CG_ERR_ALLOC : CG_OK;
}

int CG_FN(cg_grid_histograms)(int ndim, const int64_t *extent, const int64_t *window,
                              int64_t n_features, const REAL *pi, int64_t ld_pi,
                              REAL *h, int64_t ld_h, REAL *logh, int64_t ld_logh,
                              int num_threads)
{
    int64_t L, wvol, scratch_len;
    int status = cg_check_grid(ndim, extent, window, &L, &wvol);
    int failed = 0;
    const CG_FN(cg_rowops) ops = CG_FN(cg_get_rowops)();
    if (status != CG_OK)
        return status;
    if (n_features < 0 || ld_pi < L || ld_h < L || ld_logh < L)
        return CG_ERR_ARGUMENT;
    if (n_features == 0)
        return CG_OK;
    if (pi == NULL || h == NULL || logh == NULL)
        return CG_ERR_ARGUMENT;
    scratch_len = cg_box_scratch_size(ndim, extent, L);
    #pragma omp parallel num_threads(cg_resolve_threads(num_threads))
    {
        REAL *scratch = (REAL *)cg_thread_scratch((size_t)scratch_len * sizeof(REAL), &failed);
        int64_t z;
        #pragma omp for schedule(static)
        for (z = 0; z < n_features; z++) {
            REAL *CG_RESTRICT hz = h + z * ld_h;
            REAL *CG_RESTRICT lz = logh + z * ld_logh;
            if (scratch == NULL)
                continue;
            CG_FN(cg_box_grid)(ndim, extent, window, 0, (REAL)(1.0 / (double)wvol), L,
                               pi + z * ld_pi, hz, scratch);
            ops.log(lz, hz, L);
        }
        free(scratch);
    }
    return failed ? CG_ERR_ALLOC : CG_OK;
}

