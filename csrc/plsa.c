/* pLSA EM and folding-in on sparse counts (spec generative_embeddings.md §2). */
#include <math.h>
#include <stdlib.h>
#include "cg_internal.h"

#define REAL float
#define SUF f32
#include "rowops.h"
#define CG_FN(name) CG_CAT3(name, _, SUF)
#define INDEX int32_t
#define ISUF i32
#include "plsa_impl.h"
#undef INDEX
#undef ISUF
#define INDEX int64_t
#define ISUF i64
#include "plsa_impl.h"
#undef INDEX
#undef ISUF
#undef CG_FN
#undef REAL
#undef SUF

#define REAL double
#define SUF f64
#include "rowops.h"
#define CG_FN(name) CG_CAT3(name, _, SUF)
#define INDEX int32_t
#define ISUF i32
#include "plsa_impl.h"
#undef INDEX
#undef ISUF
#define INDEX int64_t
#define ISUF i64
#include "plsa_impl.h"
#undef INDEX
#undef ISUF
#undef CG_FN
#undef REAL
#undef SUF
