/* Toroidal box sums of one grid; included once per REAL type.
 * Requires REAL and SUF to be defined. */
#define CG_FN(name) CG_CAT3(name, _, SUF)

/* One axis: the grid is viewed as (outer, n, inner); each of the `outer`
 * slabs of n rows (inner elements each) is replaced by its circular box sum
 * of width w along the rows.  The sum of a window starting at row i is split
 * at the block boundary of a tiling into blocks of w rows: a suffix sum of the
 * block holding i plus a prefix sum of the next block.  Only additions, so no
 * cancellation.  src may equal dst. */
static void CG_FN(cg_box_axis)(const REAL *src, REAL *dst, int64_t outer, int64_t n,
                               int64_t inner, int64_t w, int backward, REAL scale,
                               REAL *CG_RESTRICT ext, REAL *CG_RESTRICT suf)
{
    const int64_t m = n + w - 1;
    const int64_t shift = backward ? (n - (w - 1)) % n : 0;
    int64_t o, j, i, e;
    for (o = 0; o < outer; o++) {
        const REAL *s = src + o * n * inner;
        REAL *d = dst + o * n * inner;
        for (j = 0; j < m; j++) {
            const REAL *row = s + ((j + shift) % n) * inner;
            REAL *x = ext + j * inner;
            for (e = 0; e < inner; e++)
                x[e] = row[e];
        }
        /* suffix sums within blocks (right to left) */
        for (j = m - 1; j >= 0; j--) {
            REAL *sj = suf + j * inner;
            const REAL *xj = ext + j * inner;
            if (j % w == w - 1 || j == m - 1) {
                for (e = 0; e < inner; e++)
                    sj[e] = xj[e];
            } else {
                const REAL *sn = suf + (j + 1) * inner;
                for (e = 0; e < inner; e++)
                    sj[e] = sn[e] + xj[e];
            }
        }
        /* prefix sums within blocks, in place in ext (left to right) */
        for (j = 0; j < m; j++) {
            if (j % w != 0) {
                REAL *xj = ext + j * inner;
                const REAL *xp = ext + (j - 1) * inner;
                for (e = 0; e < inner; e++)
                    xj[e] += xp[e];
            }
        }
        for (i = 0; i < n; i++) {
            const REAL *pre = ext + (i + w - 1) * inner;
            REAL *out = d + i * inner;
            if (i % w == 0) {
                for (e = 0; e < inner; e++)
                    out[e] = scale * pre[e];
            } else {
                const REAL *sf = suf + i * inner;
                for (e = 0; e < inner; e++)
                    out[e] = scale * (sf[e] + pre[e]);
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

#undef CG_FN
