/* E-step: log-scores of documents at every window position and the posterior. */
#include <math.h>
#include <stdlib.h>
#include "cg_internal.h"

#define REAL float
#define SUF f32
#include "rowops.h"
#include "posterior_impl.h"
#define CG_INDEX_TEMPLATE "estep_csr_impl.h"
#include "cg_index_instantiate.h"
#undef REAL
#undef SUF

#define REAL double
#define SUF f64
#include "rowops.h"
#include "posterior_impl.h"
#define CG_INDEX_TEMPLATE "estep_csr_impl.h"
#include "cg_index_instantiate.h"
#undef REAL
#undef SUF
