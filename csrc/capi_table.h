/* The capsule table of countgrid/countgrid_api.h, filled with the real kernels.
 * Included only by countgrid/_kernels.pyx (after Python.h); not part of the
 * static library. */
#ifndef COUNTGRID_CAPI_TABLE_H
#define COUNTGRID_CAPI_TABLE_H

#define CG_API_NO_IMPORT
#include "countgrid/countgrid_api.h"

/* A function pointer type in cg_api_table that disagrees with the prototype in
 * countgrid.h must stop the build, not just warn. */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wincompatible-pointer-types"
#elif defined(_MSC_VER)
#pragma warning(push)
#pragma warning(error : 4028 4047 4113 4133)
#endif

static const cg_api_table cg_capi_table = {
    .abi_version = CG_ABI_VERSION,
    .size = (int)sizeof(cg_api_table),
    .version_major = CG_VERSION_MAJOR,
    .version_minor = CG_VERSION_MINOR,
    .version_patch = CG_VERSION_PATCH,
    .window_sum_f32 = cg_window_sum_f32,
    .window_sum_f64 = cg_window_sum_f64,
    .histograms_f32 = cg_histograms_f32,
    .histograms_f64 = cg_histograms_f64,
    .posterior_f32 = cg_posterior_f32,
    .posterior_f64 = cg_posterior_f64,
    .estep_csr_f32_i32 = cg_estep_csr_f32_i32,
    .estep_csr_f32_i64 = cg_estep_csr_f32_i64,
    .estep_csr_f64_i32 = cg_estep_csr_f64_i32,
    .estep_csr_f64_i64 = cg_estep_csr_f64_i64,
    .accumulate_csc_f32_i32 = cg_accumulate_csc_f32_i32,
    .accumulate_csc_f32_i64 = cg_accumulate_csc_f32_i64,
    .accumulate_csc_f64_i32 = cg_accumulate_csc_f64_i32,
    .accumulate_csc_f64_i64 = cg_accumulate_csc_f64_i64,
    .mstep_f32 = cg_mstep_f32,
    .mstep_f64 = cg_mstep_f64,
    .openmp_enabled = cg_openmp_enabled,
    .max_threads = cg_max_threads,
    .simd_name = cg_simd_name,
    .jt_gram_dense_f32 = cg_jt_gram_dense_f32,
    .jt_gram_dense_f64 = cg_jt_gram_dense_f64,
    .jt_gram_csr_f32_i64 = cg_jt_gram_csr_f32_i64,
    .jt_gram_csr_f64_i64 = cg_jt_gram_csr_f64_i64,
    .plsa_docs_f32_i32 = cg_plsa_docs_f32_i32,
    .plsa_docs_f32_i64 = cg_plsa_docs_f32_i64,
    .plsa_docs_f64_i32 = cg_plsa_docs_f64_i32,
    .plsa_docs_f64_i64 = cg_plsa_docs_f64_i64,
    .plsa_words_f32_i32 = cg_plsa_words_f32_i32,
    .plsa_words_f32_i64 = cg_plsa_words_f32_i64,
    .plsa_words_f64_i32 = cg_plsa_words_f64_i32,
    .plsa_words_f64_i64 = cg_plsa_words_f64_i64,
};

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#elif defined(_MSC_VER)
#pragma warning(pop)
#endif

/* A new reference to the capsule countgrid._kernels._C_API (NULL on error). */
static PyObject *cg_capi_capsule(void)
{
    return PyCapsule_New((void *)&cg_capi_table, CG_API_CAPSULE_NAME, NULL);
}

#endif /* COUNTGRID_CAPI_TABLE_H */
