/* Toroidal box sums of one grid; included once per REAL type.
 * Requires REAL and SUF to be defined. */

/* One axis: the grid is viewed as (outer, n, inner); each of the `outer`
 * slabs of n rows (inner elements each) is replaced by its circular box sum
 * of width w along the rows.  The slab is first copied, circularly shifted
 * and extended by w - 1 rows, into ext, so that window i covers rows
 * i..i+w-1 of ext.  Small windows are summed directly (w vectorised passes);
 * larger ones by the blocked prefix/suffix scheme: the window starting at row
 * i is split at the boundary of a tiling into blocks of w rows into a suffix
 * sum of the block holding i plus a prefix sum of the next block.  Both use
 * additions only, so there is no cancellation.  src may equal dst. */
static void CG_FN(cg_box_axis)(const REAL *src, REAL *dst, int64_t outer, int64_t n,
                               int64_t inner, int64_t w, int backward, REAL scale,
                               REAL *CG_RESTRICT ext, REAL *CG_RESTRICT suf)
{
    const int64_t m = n + w - 1;
    const int64_t shift = backward ? (n - (w - 1)) % n : 0;
    const int64_t N = n * inner;
    int64_t o, j, e, b;
    for (o = 0; o < outer; o++) {
        const REAL *s = src + o * N;
        REAL *CG_RESTRICT d = dst + o * N;
        memcpy(ext, s + shift * inner, (size_t)((n - shift) * inner) * sizeof(REAL));
        memcpy(ext + (n - shift) * inner, s, (size_t)((m - (n - shift)) * inner) * sizeof(REAL));
        if (w <= CG_BOX_DIRECT_MAX) {
            for (e = 0; e < N; e++)
                d[e] = ext[e];
            for (j = 1; j < w; j++) {
                const REAL *CG_RESTRICT x = ext + j * inner;
                for (e = 0; e < N; e++)
                    d[e] += x[e];
            }
            if (scale != (REAL)1)
                for (e = 0; e < N; e++)
                    d[e] *= scale;
            continue;
        }
        for (b = 0; b < m; b += w) {
            const int64_t be = (b + w < m) ? b + w : m;
            /* suffix sums of the block, right to left */
            REAL *sl = suf + (be - 1) * inner;
            const REAL *xl = ext + (be - 1) * inner;
            for (e = 0; e < inner; e++)
                sl[e] = xl[e];
            for (j = be - 2; j >= b; j--) {
                REAL *CG_RESTRICT sj = suf + j * inner;
                const REAL *CG_RESTRICT sn = suf + (j + 1) * inner;
                const REAL *CG_RESTRICT xj = ext + j * inner;
                for (e = 0; e < inner; e++)
                    sj[e] = sn[e] + xj[e];
            }
            /* prefix sums of the block, in place, left to right */
            for (j = b + 1; j < be; j++) {
                REAL *CG_RESTRICT xj = ext + j * inner;
                const REAL *CG_RESTRICT xp = ext + (j - 1) * inner;
                for (e = 0; e < inner; e++)
                    xj[e] += xp[e];
            }
        }
        for (b = 0; b < n; b += w) {
            const int64_t be = (b + w < n) ? b + w : n;
            const REAL *CG_RESTRICT pre = ext + (b + w - 1) * inner;
            REAL *CG_RESTRICT out = d + b * inner;
            for (e = 0; e < inner; e++)
                out[e] = scale * pre[e];
            for (j = b + 1; j < be; j++) {
                const REAL *CG_RESTRICT sf = suf + j * inner;
                const REAL *CG_RESTRICT pr = ext + (j + w - 1) * inner;
                REAL *CG_RESTRICT oj = d + j * inner;
                for (e = 0; e < inner; e++)
                    oj[e] = scale * (sf[e] + pr[e]);
            }
        }
    }
}

/* Box sum of one grid of L cells over all axes (separable). scratch holds
 * cg_box_scratch_size() elements.  in may equal out. */
static void CG_FN(cg_box_grid)(int ndim, const int64_t *extent, const int64_t *window,
                               int backward, REAL scale, int64_t L,
                               const REAL *in, REAL *out, REAL *scratch)
{
    int d;
    int64_t outer = 1;
    const int64_t half = cg_box_scratch_size(ndim, extent, L) / 2;
    const REAL *src = in;
    for (d = 0; d < ndim; d++) {
        const int64_t n = extent[d];
        const int64_t inner = L / (outer * n);
        const REAL s = (d == ndim - 1) ? scale : (REAL)1;
        CG_FN(cg_box_axis)(src, out, outer, n, inner, window[d], backward, s,
                           scratch, scratch + half);
        src = out;
        outer *= n;
    }
}

