/* M-step: sufficient statistics from CSC counts and the counting-grid update. */
#include <math.h>
#include <stdlib.h>
#include "cg_internal.h"

#define REAL float
#define SUF f32
#include "box_impl.h"
#include "rowops.h"
#include "mstep_impl.h"
#define INDEX int32_t
#define ISUF i32
#include "accumulate_csc_impl.h"
#undef INDEX
#undef ISUF
#define INDEX int64_t
#define ISUF i64
#include "accumulate_csc_impl.h"
#undef INDEX
#undef ISUF
#undef REAL
#undef SUF

#define REAL double
#define SUF f64
#include "box_impl.h"
#include "rowops.h"
#include "mstep_impl.h"
#define INDEX int32_t
#define ISUF i32
#include "accumulate_csc_impl.h"
#undef INDEX
#undef ISUF
#define INDEX int64_t
#define ISUF i64
#include "accumulate_csc_impl.h"
#undef INDEX
#undef ISUF
#undef REAL
#undef SUF
