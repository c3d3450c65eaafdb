/* ZIP/Poisson GTM kernels: fused sparse E-step and M-step statistics (see gtm.h). */
#include <math.h>
#include <stdint.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "gtm.h"

#if defined(__GNUC__) || defined(__clang__)
#define GTM_RESTRICT __restrict__
#elif defined(_MSC_VER)
#define GTM_RESTRICT __restrict
#else
#define GTM_RESTRICT
#endif

#define GTM_CAT_(a, b) a##b
#define GTM_CAT(a, b) GTM_CAT_(a, b)

#define GTM_DATA_T double
#define GTM_INDEX_T int32_t
#define GTM_SUFFIX f64_i32
#include "gtm_impl.h"
#undef GTM_DATA_T
#undef GTM_INDEX_T
#undef GTM_SUFFIX

#define GTM_DATA_T double
#define GTM_INDEX_T int64_t
#define GTM_SUFFIX f64_i64
#include "gtm_impl.h"
#undef GTM_DATA_T
#undef GTM_INDEX_T
#undef GTM_SUFFIX

#define GTM_DATA_T float
#define GTM_INDEX_T int32_t
#define GTM_SUFFIX f32_i32
#include "gtm_impl.h"
#undef GTM_DATA_T
#undef GTM_INDEX_T
#undef GTM_SUFFIX

#define GTM_DATA_T float
#define GTM_INDEX_T int64_t
#define GTM_SUFFIX f32_i64
#include "gtm_impl.h"
#undef GTM_DATA_T
#undef GTM_INDEX_T
#undef GTM_SUFFIX
