/* Private helpers of the counting-grid kernels. */
#ifndef COUNTGRID_GRID_INTERNAL_H
#define COUNTGRID_GRID_INTERNAL_H

#include "cg_internal.h"

/* Windows up to this width are summed directly (w passes); wider ones by
 * blocked prefix/suffix sums, O(1) work per cell whatever the width. */
#define CG_BOX_DIRECT_MAX 16

/* Checks a grid description; on success stores L and |W|. */
static inline int cg_check_grid(int ndim, const int64_t *extent, const int64_t *window,
                                int64_t *L, int64_t *wvol)
{
    int d;
    int64_t l = 1, w = 1;
    if (ndim < 1 || ndim > CG_MAX_DIM || extent == NULL || window == NULL)
        return CG_ERR_ARGUMENT;
    for (d = 0; d < ndim; d++) {
        if (extent[d] < 1 || window[d] < 1 || window[d] > extent[d])
            return CG_ERR_ARGUMENT;
        if (l > INT64_MAX / extent[d])
            return CG_ERR_ARGUMENT;
        l *= extent[d];
        w *= window[d];
    }
    *L = l;
    *wvol = w;
    return CG_OK;
}

/* Scratch needed by cg_box_grid_* (in elements). */
static inline int64_t cg_box_scratch_size(int ndim, const int64_t *extent, int64_t L)
{
    int d;
    int64_t best = 0;
    for (d = 0; d < ndim; d++) {
        int64_t rows = 2 * extent[d];          /* n + w - 1 < 2n rows */
        int64_t len = rows * (L / extent[d]);  /* rows of `inner` elements */
        if (len > best)
            best = len;
    }
    return 2 * best;
}

/* Cache blocking of the E-step (estep_csr_impl.h; docs/counting_grids.md, "Speed at
 * scale").  A block of CG_GRID_ESTEP_BLOCK_ROWS documents is scored tile by tile, the tile
 * width w chosen so that the logh rows of the block's distinct words and the block's q
 * rows, restricted to the tile, take at most CG_GRID_ESTEP_TILE_BUDGET bytes:
 * (words + rows) * w * sizeof(REAL) <= budget.  The budget is half of a 1 MiB L2 (AMD
 * Zen 2-4; Intel server cores have 1-2 MiB) and does not assume a large L3.  Tiles are
 * off by default: on the benchmark's shape they were slower than whole rows (measured in
 * docs/counting_grids.md); COUNTGRID_ESTEP_TILE selects them. */
#ifndef CG_GRID_ESTEP_BLOCK_ROWS
#define CG_GRID_ESTEP_BLOCK_ROWS 32
#endif
#ifndef CG_GRID_ESTEP_TILE_BUDGET
#define CG_GRID_ESTEP_TILE_BUDGET (512 * 1024)
#endif
/* Narrower tiles cost more in calls of the row kernels than they save in memory traffic;
 * widths are rounded down to a multiple of CG_GRID_ESTEP_TILE_ALIGN elements (whole cache
 * lines for float and double). */
#ifndef CG_GRID_ESTEP_MIN_TILE
#define CG_GRID_ESTEP_MIN_TILE 256
#endif
#define CG_GRID_ESTEP_TILE_ALIGN 16

/* The tile mode: the environment variable COUNTGRID_ESTEP_TILE, read on every call (like
 * COUNTGRID_SIMD, so that tests can change it): "auto" -> -1 (width from the budget), a
 * positive integer -> that width in elements, "0", unset or anything else -> 0 (whole
 * rows, the default).  Every mode gives bit-identical results. */
static inline int64_t cg_grid_estep_tile_env(void)
{
    const char *env = getenv("COUNTGRID_ESTEP_TILE");
    char *end = NULL;
    long long v;
    if (env == NULL || *env == '\0')
        return 0;
    if (strcmp(env, "auto") == 0)
        return -1;
    v = strtoll(env, &end, 10);
    if (end == env || *end != '\0' || v < 0)
        return 0;
    return (int64_t)v;
}

/* The tile width (in elements, at most L) for a block of `rows` documents holding `words`
 * distinct words, for a tile mode of cg_grid_estep_tile_env(). */
static inline int64_t cg_grid_estep_tile_width(int64_t mode, int64_t L, int64_t words,
                                               int64_t rows, int64_t elem_size)
{
    int64_t w;
    if (mode == 0)
        return L;
    if (mode > 0)
        return mode < L ? mode : L;
    if (L <= CG_GRID_ESTEP_MIN_TILE)
        return L;
    w = (int64_t)CG_GRID_ESTEP_TILE_BUDGET / ((words + rows) * elem_size);
    w -= w % CG_GRID_ESTEP_TILE_ALIGN;
    if (w < CG_GRID_ESTEP_MIN_TILE)
        w = CG_GRID_ESTEP_MIN_TILE;
    return w < L ? w : L;
}

#endif
