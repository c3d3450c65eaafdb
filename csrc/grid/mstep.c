/* M-step of counting grids: sufficient statistics from CSC counts and dense or sparse
 * (top-k) posteriors, and the update of pi (Jojic & Perina, UAI 2011, eq. 7;
 * docs/counting_grids.md). */
#include <math.h>
#include <stdlib.h>
#include "grid_internal.h"

#define CG_TEMPLATE "grid/box_impl.h"
#include "cg_instantiate.h"
#define CG_TEMPLATE "common/rowops.h"
#include "cg_instantiate.h"
#define CG_TEMPLATE "grid/mstep_impl.h"
#include "cg_instantiate.h"
#define CG_TEMPLATE "grid/squarem_impl.h"
#include "cg_instantiate.h"
#define CG_TEMPLATE "grid/accumulate_csc_impl.h"
#define CG_TEMPLATE_INDEXED
#include "cg_instantiate.h"
#define CG_TEMPLATE "grid/accumulate_topk_impl.h"
#define CG_TEMPLATE_INDEXED
#include "cg_instantiate.h"
