/* E-step: log-scores of documents at every window position and the posterior. */
#include <math.h>
#include <stdlib.h>
#include "cg_internal.h"

#define REAL float
#define SUF f32
#include "rowops.h"
#include "posterior_impl.h"
#define INDEX int32_t
#define ISUF i32
#include "estep_csr_impl.h"
#undef INDEX
#undef ISUF
#define INDEX int64_t
#define ISUF i64
#include "estep_csr_impl.h"
#undef INDEX
#undef ISUF
#undef REAL
#undef SUF

#define REAL double
#define SUF f64
#include "rowops.h"
#include "posterior_impl.h"
#define INDEX int32_t
#define ISUF i32
#include "estep_csr_impl.h"
#undef INDEX
#undef ISUF
#define INDEX int64_t
#define ISUF i64
#include "estep_csr_impl.h"
#undef INDEX
#undef ISUF
#undef REAL
#undef SUF
