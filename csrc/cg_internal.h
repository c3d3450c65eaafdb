/* Private helpers shared by the countgrid C kernels. */
#ifndef COUNTGRID_INTERNAL_H
#define COUNTGRID_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "countgrid/countgrid.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__GNUC__) || defined(__clang__)
#define CG_RESTRICT __restrict__
#elif defined(_MSC_VER)
#define CG_RESTRICT __restrict
#else
#define CG_RESTRICT
#endif

#define CG_CAT2_(a, b) a##b
#define CG_CAT2(a, b) CG_CAT2_(a, b)
#define CG_CAT3_(a, b, c) a##b##c
#define CG_CAT3(a, b, c) CG_CAT3_(a, b, c)

/* Windows up to this width are summed directly (w passes); wider ones by
 * blocked prefix/suffix sums, O(1) work per cell whatever the width. */
#define CG_BOX_DIRECT_MAX 16

/* Run-time instruction-set dispatch for the row kernels (rowops.h). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(CG_NO_DISPATCH) \
    && (defined(__clang__) || __GNUC__ >= 8)
#define CG_X86_DISPATCH 1
#if defined(__clang__)
#define CG_ATTR_AVX2 __attribute__((target("avx2,fma")))
#define CG_ATTR_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,fma"), min_vector_width(512)))
#else
#define CG_ATTR_AVX2 __attribute__((target("avx2,fma")))
#define CG_ATTR_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,fma,prefer-vector-width=512")))
#endif
#else
#define CG_X86_DISPATCH 0
#endif

/* 0 = baseline, 1 = AVX2+FMA, 2 = AVX-512: the best level the CPU supports,
 * capped by the environment variable COUNTGRID_SIMD (baseline|avx2|avx512). */
int cg_simd_level(void);

/* The thread count handed to `num_threads(...)` clauses. */
static inline int cg_resolve_threads(int num_threads)
{
#ifdef _OPENMP
    return num_threads > 0 ? num_threads : omp_get_max_threads();
#else
    (void)num_threads;
    return 1;
#endif
}

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
