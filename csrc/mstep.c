/* M-step: sufficient statistics from CSC counts and the counting-grid update. */
#include <math.h>
#include <stdlib.h>
#include "cg_internal.h"

#define REAL float
#define SUF f32
#include "box_impl.h"
#include "rowops.h"
#include "mstep_impl.h"
#define CG_INDEX_TEMPLATE "accumulate_csc_impl.h"
#include "cg_index_instantiate.h"
#undef REAL
#undef SUF

#define REAL double
#define SUF f64
#include "box_impl.h"
#include "rowops.h"
#include "mstep_impl.h"
#define CG_INDEX_TEMPLATE "accumulate_csc_impl.h"
#include "cg_index_instantiate.h"
#undef REAL
#undef SUF
