/* The coarse-to-fine E-step on CSR rows (docs/scale.md, "A coarse-to-fine E-step");
 * included once per (REAL, INDEX) pair after estep_csr_impl.h and topk_impl.h.
 *
 * A document's log-score over window positions is smooth (neighbouring windows share most
 * of their cells), so it is scored first on the sub-lattice of positions whose row and
 * column are multiples of the stride s (about L / s^2 of them), then at every position of
 * the (2s - 1) x (2s - 1) boxes centred on its `keep` best lattice points.  The posterior
 * is the exact one restricted to the positions scored (their scores are bit-identical to
 * the full scan's: the same row kernels add the same terms in the same order), and its
 * k largest entries go to the sparse M-step.  Guard: when the lattice's own posterior puts
 * less than min_mass on the kept points (a diffuse or multi-modal document), the row is
 * scanned in full as cg_grid_estep_csr and cg_grid_topk_posterior would.  Rows are
 * independent: the result does not depend on the thread count. */

#ifndef CG_SEARCH_HELPERS
#define CG_SEARCH_HELPERS
/* Marks in stamp the span_r x span_c box of the torus whose first row and column are
 * (r0, c0), and lists each grid row it touches once in rows_hit. */
static void cg_search_mark_box(int64_t r0, int64_t c0, int64_t span_r, int64_t span_c,
                               int64_t grid_rows, int64_t grid_cols, int64_t mark,
                               int64_t *stamp, int64_t *row_mark, int64_t *rows_hit,
                               int64_t *n_rows_hit)
{
    int64_t dr, dc;
    for (dr = 0; dr < span_r; dr++) {
        const int64_t r = r0 + dr < grid_rows ? r0 + dr : r0 + dr - grid_rows;
        int64_t *srow = stamp + r * grid_cols;
        if (row_mark[r] != mark) {
            row_mark[r] = mark;
            rows_hit[(*n_rows_hit)++] = r;
        }
        for (dc = 0; dc < span_c; dc++)
            srow[c0 + dc < grid_cols ? c0 + dc : c0 + dc - grid_cols] = mark;
    }
}

/* The first row and column of the (2 stride - 1)-wide box centred on (r, c), or 0 on an
 * axis the box covers whole (span >= the axis). */
static int64_t cg_search_box_start(int64_t centre, int64_t stride, int64_t span, int64_t n)
{
    return span < n ? ((centre - (stride - 1)) % n + n) % n : 0;
}

/* The marked positions (stamp == mark) of the rows in rows_hit, in ascending order into
 * cand, and their maximal runs; returns the number of runs. */
static int64_t cg_search_runs(int64_t *rows_hit, int64_t n_rows_hit, int64_t grid_cols,
                              const int64_t *stamp, int64_t mark, int32_t *cand,
                              int64_t *n_cand, int64_t *run_start, int64_t *run_len)
{
    int64_t j, n_runs = 0;
    for (j = 1; j < n_rows_hit; j++) {   /* ascending rows: ascending candidates */
        const int64_t r = rows_hit[j];
        int64_t i = j;
        for (; i > 0 && rows_hit[i - 1] > r; i--)
            rows_hit[i] = rows_hit[i - 1];
        rows_hit[i] = r;
    }
    for (j = 0; j < n_rows_hit; j++) {
        const int64_t base = rows_hit[j] * grid_cols;
        int64_t c1 = 0;
        while (c1 < grid_cols) {
            int64_t c2;
            if (stamp[base + c1] != mark) {
                c1++;
                continue;
            }
            for (c2 = c1; c2 < grid_cols && stamp[base + c2] == mark; c2++)
                cand[(*n_cand)++] = (int32_t)(base + c2);
            run_start[n_runs] = base + c1;
            run_len[n_runs++] = c2 - c1;
            c1 = c2;
        }
    }
    return n_runs;
}
#endif

/* Scores the runs of positions: word group by word group, every run for each group (a
 * group's rows are read at ascending addresses a grid row apart, which the hardware
 * prefetches), each position receiving the terms of cg_grid_estep_tile in its order. */
static void CG_FN2(search_score_runs)(const CG_FN(cg_rowops) *ops, REAL *score,
                                      int64_t p0, int64_t p1, const INDEX *indices,
                                      const REAL *data, const REAL *logh, int64_t ld_logh,
                                      const REAL *log_prior, const int64_t *run_start,
                                      const int64_t *run_len, int64_t n_runs)
{
    int64_t j, p = p0;
    for (j = 0; j < n_runs; j++) {
        REAL *dst = score + run_start[j];
        int64_t i;
        for (i = 0; i < run_len[j]; i++)
            dst[i] = log_prior != NULL ? log_prior[run_start[j] + i] : 0;
    }
    for (; p + 4 <= p1; p += 4) {
        const REAL *r0 = logh + (int64_t)indices[p] * ld_logh;
        const REAL *r1 = logh + (int64_t)indices[p + 1] * ld_logh;
        const REAL *r2 = logh + (int64_t)indices[p + 2] * ld_logh;
        const REAL *r3 = logh + (int64_t)indices[p + 3] * ld_logh;
        for (j = 0; j < n_runs; j++) {
            const int64_t l0 = run_start[j];
            ops->axpy4(score + l0, r0 + l0, r1 + l0, r2 + l0, r3 + l0, data[p], data[p + 1],
                       data[p + 2], data[p + 3], run_len[j]);
        }
    }
    for (; p < p1; p++) {
        const REAL *r0 = logh + (int64_t)indices[p] * ld_logh;
        for (j = 0; j < n_runs; j++)
            ops->axpy1(score + run_start[j], r0 + run_start[j], data[p], run_len[j]);
    }
}

/* The sub-lattice of every step-th row and column of n rows of a grid src_cols wide (row
 * z at src + z ld_src), rows x cols points, contiguous: dst[z][a cols + b] =
 * src[z][a step src_cols + b step]. */
static void CG_FN2(search_sublattice)(int64_t n, const REAL *src, int64_t ld_src,
                                      int64_t src_cols, int64_t step, int64_t rows,
                                      int64_t cols, REAL *dst, int num_threads)
{
    int64_t z;
    #pragma omp parallel for schedule(static) num_threads(cg_resolve_threads(num_threads)) \
        if (n > 1)
    for (z = 0; z < n; z++) {
        const REAL *s = src + z * ld_src;
        REAL *d = dst + z * rows * cols;
        int64_t a, b;
        for (a = 0; a < rows; a++)
            for (b = 0; b < cols; b++)
                d[a * cols + b] = s[a * step * src_cols + b * step];
    }
}

/* The points of a rows x cols sub-lattice (every step-th row and column of a grid grid_cols
 * wide) outside the boxes (stamp != mark) take their scores from vals (the sub-lattice's
 * scores, row by row) and join lat, in ascending order; returns how many joined. */
static int64_t CG_FN2(search_points_outside)(const REAL *vals, int64_t rows, int64_t cols,
                                             int64_t step, int64_t grid_cols,
                                             const int64_t *stamp, int64_t mark, REAL *score,
                                             int32_t *lat)
{
    int64_t a, b, n = 0;
    for (a = 0; a < rows; a++)
        for (b = 0; b < cols; b++) {
            const int64_t l = a * step * grid_cols + b * step;
            if (stamp[l] != mark) {
                score[l] = vals[a * cols + b];
                lat[n++] = (int32_t)l;
            }
        }
    return n;
}

/* The largest score at the positions pos[0 .. n) into *top and its position into *arg (the
 * lower position on ties), starting from *top / *arg. */
static void CG_FN2(search_top)(const REAL *score, const int32_t *pos, int64_t n, REAL *top,
                               int64_t *arg)
{
    int64_t j;
    for (j = 0; j < n; j++)
        if (score[pos[j]] > *top || (score[pos[j]] == *top && pos[j] < *arg)) {
            *top = score[pos[j]];
            *arg = pos[j];
        }
}

/* sum_j exp(score[pos[j]] - top), in double. */
static double CG_FN2(search_mass)(const REAL *score, const int32_t *pos, int64_t n, REAL top)
{
    double s = 0.0;
    int64_t j;
    for (j = 0; j < n; j++)
        s += exp((double)score[pos[j]] - (double)top);
    return s;
}

/* The most probable of a row's kept positions (the first in position order on ties). */
static int32_t CG_FN2(search_map_position)(const int32_t *it, const REAL *vt, int64_t k)
{
    int64_t j, b = 0;
    for (j = 1; j < k; j++)
        if (vt[j] > vt[b])
            b = j;
    return it[b];
}

int CG_FN2(cg_grid_estep_search_csr)(int64_t n_rows, const INDEX *indptr, const INDEX *indices,
                                     const REAL *data, int64_t nnz, int64_t n_features,
                                     int64_t grid_rows, int64_t grid_cols, const REAL *logh,
                                     int64_t ld_logh, const REAL *lattice, int64_t ld_lattice,
                                     const REAL *log_prior, double floor,
                                     int64_t stride, int64_t keep, double min_mass, int64_t k,
                                     int32_t *idx, int64_t ld_idx, REAL *val, int64_t ld_val,
                                     double *loglik, int64_t *scored, int32_t *hint,
                                     int num_threads)
{
    int64_t L, kk, na, nb, Lc, na2, nb2, Lk = 0, span_r, span_c;
    int bad = 0, failed = 0;
    REAL *built = NULL, *lattice_prior = NULL, *kcols = NULL, *check_prior = NULL;
    const REAL *lrows;
    int64_t ld_lrows;
    const CG_FN(cg_rowops) ops = CG_FN(cg_get_rowops)();
    if (n_rows < 0 || nnz < 0 || n_features < 0 || grid_rows < 1 || grid_cols < 1
        || grid_rows > INT32_MAX / grid_cols || stride < 1 || keep < 1 || k < 1
        || !(min_mass >= 0.0 && min_mass <= 1.0))
        return CG_ERR_ARGUMENT;
    L = grid_rows * grid_cols;
    kk = k < L ? k : L;
    if (ld_logh < L || ld_idx < kk || ld_val < kk || !(floor >= 0.0)
        || floor * (double)L >= 1.0)
        return CG_ERR_ARGUMENT;
    if (n_rows == 0)
        return CG_OK;
    if (indptr == NULL || idx == NULL || val == NULL || loglik == NULL
        || (nnz > 0 && (indices == NULL || data == NULL)) || (n_features > 0 && logh == NULL))
        return CG_ERR_ARGUMENT;
    na = (grid_rows + stride - 1) / stride;
    nb = (grid_cols + stride - 1) / stride;
    Lc = na * nb;
    keep = keep < Lc ? keep : Lc;
    /* the boxes: 2s - 1 rows and columns around a lattice point, the whole axis when the
     * grid is narrower */
    span_r = 2 * stride - 1 < grid_rows ? 2 * stride - 1 : grid_rows;
    span_c = 2 * stride - 1 < grid_cols ? 2 * stride - 1 : grid_cols;
    if (lattice != NULL && ld_lattice < Lc)
        return CG_ERR_ARGUMENT;
    /* the lattice columns of logh (the caller's, or built here) and of the prior,
     * contiguous for the first scan */
    if (lattice == NULL)
        built = (REAL *)malloc((size_t)(n_features > 0 ? n_features : 1) * (size_t)Lc
                               * sizeof(REAL));
    if (log_prior != NULL)
        lattice_prior = (REAL *)malloc((size_t)Lc * sizeof(REAL));
    if ((lattice == NULL && built == NULL) || (log_prior != NULL && lattice_prior == NULL)) {
        free(built);
        free(lattice_prior);
        return CG_ERR_ALLOC;
    }
    if (lattice == NULL)
        CG_FN2(search_sublattice)(n_features, logh, ld_logh, grid_cols, stride, na, nb, built,
                                  num_threads);
    lrows = lattice != NULL ? lattice : built;
    ld_lrows = lattice != NULL ? ld_lattice : Lc;
    if (lattice_prior != NULL)
        CG_FN2(search_sublattice)(1, log_prior, L, grid_cols, stride, na, nb, lattice_prior,
                                  1);
    /* tracking: the check lattice (every other lattice point in both directions, stride
     * 2 s on the grid), its columns contiguous */
    na2 = (na + 1) / 2;
    nb2 = (nb + 1) / 2;
    if (hint != NULL) {
        Lk = na2 * nb2;
        kcols = (REAL *)malloc((size_t)(n_features > 0 ? n_features : 1) * (size_t)Lk
                               * sizeof(REAL));
        if (log_prior != NULL)
            check_prior = (REAL *)malloc((size_t)Lk * sizeof(REAL));
        if (kcols == NULL || (log_prior != NULL && check_prior == NULL)) {
            free(built);
            free(lattice_prior);
            free(kcols);
            free(check_prior);
            return CG_ERR_ALLOC;
        }
        CG_FN2(search_sublattice)(n_features, lrows, ld_lrows, nb, 2, na2, nb2, kcols,
                                  num_threads);
        if (check_prior != NULL)
            CG_FN2(search_sublattice)(1, lattice_prior, Lc, nb, 2, na2, nb2, check_prior, 1);
    }
    #pragma omp parallel num_threads(cg_resolve_threads(num_threads))
    {
        CG_FN(cg_topk_scratch) ts;
        const int ok_topk = CG_FN(cg_topk_scratch_init)(&ts, L, k, &failed);
        REAL *crow = (REAL *)cg_thread_scratch((size_t)Lc * sizeof(REAL), &failed);
        REAL *krow = (REAL *)cg_thread_scratch((size_t)(Lk > 0 ? Lk : 1) * sizeof(REAL),
                                               &failed);
        REAL *score = (REAL *)cg_thread_scratch((size_t)L * sizeof(REAL), &failed);
        int64_t *stamp = (int64_t *)calloc((size_t)L, sizeof(int64_t));
        /* the box positions and the other lattice points, each in ascending order */
        int32_t *cand = (int32_t *)cg_thread_scratch((size_t)L * sizeof(int32_t), &failed);
        REAL *cs = (REAL *)cg_thread_scratch((size_t)Lc * sizeof(REAL), &failed);
        int32_t *lat = (int32_t *)cg_thread_scratch((size_t)Lc * sizeof(int32_t), &failed);
        int64_t *best = (int64_t *)cg_thread_scratch((size_t)keep * sizeof(int64_t), &failed);
        /* the grid rows the boxes of the row being scored touch */
        int64_t *row_mark = (int64_t *)calloc((size_t)grid_rows, sizeof(int64_t));
        int64_t *rows_hit = (int64_t *)cg_thread_scratch((size_t)grid_rows * sizeof(int64_t),
                                                         &failed);
        /* the runs of positions the boxes cover (at most half of a row's positions each) */
        int64_t *run_start = (int64_t *)cg_thread_scratch((size_t)L * sizeof(int64_t), &failed);
        int64_t *run_len = (int64_t *)cg_thread_scratch((size_t)L * sizeof(int64_t), &failed);
        const int ok = ok_topk && crow && krow && cs && score && lat && stamp && cand && best
                       && row_mark && rows_hit && run_start && run_len;
        int64_t t;
        if (stamp == NULL || row_mark == NULL)
            cg_raise(&failed);
        #pragma omp for schedule(dynamic, 16)
        for (t = 0; t < n_rows; t++) {
            const int64_t p0 = (int64_t)indptr[t], p1 = (int64_t)indptr[t + 1];
            /* the stamps of the tracking attempt and of the search are distinct */
            int64_t mark = 2 * t + 1;
            int32_t *it = idx + t * ld_idx;
            REAL *vt = val + t * ld_val;
            int64_t c, j, n_best = 0, n_cand = 0, n_lat = 0, n_rows_hit = 0, n_runs = 0;
            int64_t n_scored = 0;
            int tracked = 0;
            REAL mc;
            double kept = 0.0;
            if (!ok)
                continue;                       /* failed is raised */
            /* the row's pointers and columns, by the exact E-step's check of a block */
            if (CG_FN2(cg_grid_estep_block_words)(t, t + 1, indptr, indices, nnz, n_features,
                                                  NULL) < 0) {
                cg_raise(&bad);
                continue;
            }
            /* (0) tracking: the box around the position the row held last time and the
             * check lattice; kept when the box holds min_mass of their posterior and its
             * most probable position lies inside the box, not on its edge */
            if (hint != NULL && hint[t] >= 0 && hint[t] < L) {
                const int64_t hr = hint[t] / grid_cols, hc = hint[t] % grid_cols;
                const int64_t r0 = cg_search_box_start(hr, stride, span_r, grid_rows);
                const int64_t c0 = cg_search_box_start(hc, stride, span_c, grid_cols);
                int64_t arg = -1;
                REAL top = -INFINITY;
                CG_FN2(cg_grid_estep_tile)(&ops, krow, p0, p1, indices, data, kcols, Lk,
                                           check_prior, 0, Lk);
                cg_search_mark_box(r0, c0, span_r, span_c, grid_rows, grid_cols, mark, stamp,
                                   row_mark, rows_hit, &n_rows_hit);
                n_runs = cg_search_runs(rows_hit, n_rows_hit, grid_cols, stamp, mark, cand,
                                        &n_cand, run_start, run_len);
                CG_FN2(search_score_runs)(&ops, score, p0, p1, indices, data, logh, ld_logh,
                                          log_prior, run_start, run_len, n_runs);
                n_scored = Lk + n_cand;
                n_lat = CG_FN2(search_points_outside)(krow, na2, nb2, 2 * stride, grid_cols,
                                                      stamp, mark, score, lat);
                CG_FN2(search_top)(score, cand, n_cand, &top, &arg);
                CG_FN2(search_top)(score, lat, n_lat, &top, &arg);
                if (top > -INFINITY && stamp[arg] == mark) {
                    const int64_t dr = (arg / grid_cols - r0 + grid_rows) % grid_rows;
                    const int64_t dc = (arg % grid_cols - c0 + grid_cols) % grid_cols;
                    const int edge = (span_r < grid_rows && (dr == 0 || dr == span_r - 1))
                                     || (span_c < grid_cols && (dc == 0 || dc == span_c - 1));
                    const double in_box = CG_FN2(search_mass)(score, cand, n_cand, top);
                    const double out_box = CG_FN2(search_mass)(score, lat, n_lat, top);
                    tracked = !edge && in_box >= min_mass * (in_box + out_box);
                }
                if (!tracked) {
                    mark = 2 * t + 2;
                    n_cand = n_lat = n_rows_hit = n_runs = 0;
                }
            }
            if (!tracked) {
                /* (1) the lattice; the next row's lattice rows requested meanwhile */
                if (t + 1 < n_rows) {
                    const int64_t q0 = (int64_t)indptr[t + 1], q1 = (int64_t)indptr[t + 2];
                    int64_t p;
                    if (q0 >= p1 && q1 >= q0 && q1 <= nnz)
                        for (p = q0; p < q1; p++) {
                            const int64_t z = (int64_t)indices[p];
                            if ((uint64_t)z < (uint64_t)n_features)
                                CG_PREFETCH(lrows + z * ld_lrows);
                        }
                }
                CG_FN2(cg_grid_estep_tile)(&ops, crow, p0, p1, indices, data, lrows, ld_lrows,
                                           lattice_prior, 0, Lc);
                n_scored += Lc;
                /* (2) its keep best points, ties by the lower index, and their share of its
                 * posterior */
                mc = CG_FN(cg_max)(crow, Lc);
                if (mc > -INFINITY) {
                    double unused;
                    for (c = 0; c < Lc; c++) {
                        const REAL v = crow[c];
                        int64_t i;
                        if (n_best == keep && !(v > crow[best[keep - 1]]))
                            continue;
                        i = n_best < keep ? n_best++ : keep - 1;
                        for (; i > 0 && v > crow[best[i - 1]]; i--)
                            best[i] = best[i - 1];
                        best[i] = c;
                    }
                    /* the lattice's posterior, by the row kernel (this instruction set's exp) */
                    memcpy(cs, crow, (size_t)Lc * sizeof(REAL));
                    ops.posterior(cs, Lc, NULL, 0.0, &unused);
                    for (j = 0; j < n_best; j++)
                        kept += (double)cs[best[j]];
                }
                if (!(mc > -INFINITY) || kept < min_mass) {
                    /* the guard: the full scan, as cg_grid_estep_csr + cg_grid_topk_posterior */
                    CG_FN2(cg_grid_estep_tile)(&ops, score, p0, p1, indices, data, logh, ld_logh,
                                               log_prior, 0, L);
                    ops.posterior(score, L, log_prior, floor, loglik + t);
                    if (scored != NULL)
                        scored[t] = n_scored + L;
                    if (CG_FN(cg_topk_row)(score, L, &ts, it, vt))
                        cg_raise(&bad);
                    else if (hint != NULL)
                        hint[t] = CG_FN2(search_map_position)(it, vt, kk);
                    continue;
                }
                /* (3) every position of the boxes around the kept points: marked first, then
                 * scored row by row in maximal runs (adjacent boxes make one run) */
                for (j = 0; j < n_best; j++)
                    cg_search_mark_box(
                        cg_search_box_start(best[j] / nb * stride, stride, span_r, grid_rows),
                        cg_search_box_start(best[j] % nb * stride, stride, span_c, grid_cols),
                        span_r, span_c, grid_rows, grid_cols, mark, stamp, row_mark, rows_hit,
                        &n_rows_hit);
                n_runs = cg_search_runs(rows_hit, n_rows_hit, grid_cols, stamp, mark, cand,
                                        &n_cand, run_start, run_len);
                CG_FN2(search_score_runs)(&ops, score, p0, p1, indices, data, logh, ld_logh,
                                          log_prior, run_start, run_len, n_runs);
                n_scored += n_cand;                 /* the runs' positions */
                /* the lattice points outside the boxes keep their scores from (1) */
                n_lat = CG_FN2(search_points_outside)(crow, na, nb, stride, grid_cols, stamp,
                                                      mark, score, lat);
            }
            /* (4) the posterior over the positions scored (the rest is 0), on the
             * candidates merged in ascending position order into ts.cp / ts.cv */
            {
                int32_t *CG_RESTRICT cp = ts.cp;
                REAL *CG_RESTRICT cv = ts.cv;
                const int64_t n = n_cand + n_lat;
                int64_t i = 0, m = 0, n_pos = 0, w = 0;
                double kept_sum = 0.0;
                while (i < n_cand || m < n_lat) {
                    const int32_t l = (m >= n_lat || (i < n_cand && cand[i] < lat[m]))
                        ? cand[i++] : lat[m++];
                    cp[w] = l;
                    cv[w++] = score[l];
                }
                /* normalised over the candidates by the row kernel; its log-likelihood
                 * counts n positions where the grid has L */
                ops.posterior(cv, n, NULL, 0.0, loglik + t);
                loglik[t] += log((double)n) - (log_prior ? 0.0 : log((double)L));
                for (j = 0; j < n; j++)
                    n_pos += cv[j] > 0;
                if (scored != NULL)
                    scored[t] = n_scored;
                /* the kk largest of the row that is cv at cp and 0 elsewhere, ties by the
                 * lower position (as cg_topk_row on that row), in position order */
                if (n_pos >= kk) {
                    int64_t above = 0, need, eq = 0;
                    REAL vstar;
                    memcpy(ts.sel, cv, (size_t)n * sizeof(REAL));
                    vstar = n > kk ? CG_FN(cg_topk_select)(ts.sel, n, kk, ts.hv, ts.hp) : 0;
                    for (j = 0; j < n; j++)
                        above += cv[j] > vstar;
                    need = kk - above;
                    for (j = 0, w = 0; j < n; j++) {
                        const int is_eq = cv[j] == vstar;
                        if ((cv[j] > vstar) | (is_eq & (eq < need))) {
                            it[w] = cp[j];
                            vt[w++] = cv[j];
                        }
                        eq += is_eq;
                    }
                } else {
                    /* every positive entry, and the lowest positions that hold 0 */
                    int64_t l = 0, zeros = kk - n_pos;
                    for (j = 0, w = 0; w < kk; l++) {
                        while (j < n && !(cv[j] > 0))
                            j++;                /* a scored 0 is one of the zeros */
                        if (j < n && cp[j] == l) {
                            it[w] = cp[j];
                            vt[w++] = cv[j++];
                        } else if (zeros > 0) {
                            it[w] = (int32_t)l;
                            vt[w++] = 0;
                            zeros--;
                        }
                    }
                }
                for (j = 0; j < kk; j++)
                    kept_sum += (double)vt[j];
                for (j = 0; j < kk; j++)
                    vt[j] = (REAL)((double)vt[j] / kept_sum);
                if (hint != NULL)
                    hint[t] = CG_FN2(search_map_position)(it, vt, kk);
            }
        }
        CG_FN(cg_topk_scratch_free)(&ts);
        free(crow);
        free(krow);
        free(score);
        free(lat);
        free(cs);
        free(stamp);
        free(cand);
        free(best);
        free(row_mark);
        free(rows_hit);
        free(run_start);
        free(run_len);
    }
    free(built);
    free(lattice_prior);
    free(kcols);
    free(check_prior);
    if (failed)
        return CG_ERR_ALLOC;
    return bad ? CG_ERR_INDEX : CG_OK;
}
