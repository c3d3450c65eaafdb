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

#endif
