/* Private helpers shared by the countgrid C kernels. */
#ifndef COUNTGRID_INTERNAL_H
#define COUNTGRID_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "countgrid/countgrid.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* CG_PREFETCH(p): a hint that *p is read soon (kernels bound by memory latency, such as
 * the coarse-to-fine E-step's scattered reads); nothing where the compiler has no hint */
#if defined(__GNUC__) || defined(__clang__)
#define CG_RESTRICT __restrict__
#define CG_PREFETCH(p) __builtin_prefetch((p), 0, 3)
#elif defined(_MSC_VER)
#define CG_RESTRICT __restrict
#else
#define CG_RESTRICT
#endif
#ifndef CG_PREFETCH
#define CG_PREFETCH(p) ((void)0)
#endif

#define CG_CAT2_(a, b) a##b
#define CG_CAT2(a, b) CG_CAT2_(a, b)
#define CG_CAT3_(a, b, c) a##b##c
#define CG_CAT3(a, b, c) CG_CAT3_(a, b, c)

/* The one naming rule of the kernels: cg_<family>_<operation>_<SUF>[_<ISUF>], where a
 * template (cg_instantiate.h) sees REAL float/double as SUF f32/f64 and INDEX
 * int32_t/int64_t as ISUF i32/i64; per-ISA variants (cg_isa_instantiate.h) add _<ISA>.
 * The macros expand lazily, so they name the instance being compiled. */
#define CG_FN(name) CG_CAT3(name, _, SUF)
#define CG_FN2(name) CG_CAT3(name, _, CG_CAT3(SUF, _, ISUF))
#define CG_ISA_FN(name) CG_CAT3(name, _, CG_CAT3(SUF, _, ISA))

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

/* The variant of a per-ISA object (cg_isa_instantiate.h) for a level of cg_simd_level():
 * CG_ISA_PICK(level, name) is name_<SUF>_avx512, name_<SUF>_avx2 or name_<SUF>_base. */
#if CG_X86_DISPATCH
#define CG_ISA_PICK(level, name)                                                           \
    ((level) == 2   ? CG_CAT3(name, _, CG_CAT3(SUF, _, avx512))                           \
     : (level) == 1 ? CG_CAT3(name, _, CG_CAT3(SUF, _, avx2))                             \
                    : CG_CAT3(name, _, CG_CAT3(SUF, _, base)))
#else
#define CG_ISA_PICK(level, name) ((void)(level), CG_CAT3(name, _, CG_CAT3(SUF, _, base)))
#endif

/* The one thread rule of every kernel: num_threads <= 0 means the OpenMP default
 * (omp_get_max_threads); the count is handed to each `num_threads(...)` clause and never
 * set globally.  The Python layer resolves the count first (countgrid._threads). */
static inline int cg_resolve_threads(int num_threads)
{
#ifdef _OPENMP
    return num_threads > 0 ? num_threads : omp_get_max_threads();
#else
    (void)num_threads;
    return 1;
#endif
}

/* Raises a flag shared by the threads of a parallel region (a failed allocation, a bad
 * index); the kernel turns it into its status after the region. */
static inline void cg_raise(int *flag)
{
    #pragma omp atomic write
    *flag = 1;
}

/* Whether the entries [start, end) of a row (column) of a CSR (CSC) matrix lie outside
 * its nnz stored entries: the pointer check of every kernel that reads pointers it did
 * not make (docs/robustness.md). */
static inline int cg_bad_range(int64_t start, int64_t end, int64_t nnz)
{
    return start < 0 || end < start || end > nnz;
}

/* Whether a thread of a parallel region skips a row: it has no scratch (its allocation
 * failed, already raised), or the row's pointers are bad (raised here in *bad). */
static inline int cg_skip_row(int have_scratch, int64_t start, int64_t end, int64_t nnz,
                              int *bad)
{
    if (!have_scratch)
        return 1;
    if (cg_bad_range(start, end, nnz)) {
        cg_raise(bad);
        return 1;
    }
    return 0;
}

/* Scratch of one thread of a parallel region: n_bytes from malloc, or NULL with *failed
 * raised (the thread then skips its share and the kernel returns CG_ERR_ALLOC). */
static inline void *cg_thread_scratch(size_t n_bytes, int *failed)
{
    void *p = malloc(n_bytes > 0 ? n_bytes : 1);
    if (p == NULL)
        cg_raise(failed);
    return p;
}

#endif
