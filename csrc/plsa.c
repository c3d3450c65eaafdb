/* pLSA EM and folding-in on sparse counts (spec generative_embeddings.md §2). */
#include <math.h>
#include <stdlib.h>
#include "cg_internal.h"

#define REAL float
#define SUF f32
#include "rowops.h"
#define CG_FN(name) CG_CAT3(name, _, SUF)
#define CG_INDEX_TEMPLATE "plsa_impl.h"
#include "cg_index_instantiate.h"
#undef CG_FN
#undef REAL
#undef SUF

#define REAL double
#define SUF f64
#include "rowops.h"
#define CG_FN(name) CG_CAT3(name, _, SUF)
#define CG_INDEX_TEMPLATE "plsa_impl.h"
#include "cg_index_instantiate.h"
#undef CG_FN
#undef REAL
#undef SUF
