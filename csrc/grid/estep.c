/* E-step of counting grids: log-scores of documents at every window position, the
 * posterior (Jojic & Perina, UAI 2011, eq. 3; docs/counting_grids.md) and its sparse
 * (top-k) form. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "grid_internal.h"

#define CG_TEMPLATE "common/rowops.h"
#include "cg_instantiate.h"
#define CG_TEMPLATE "grid/posterior_impl.h"
#include "cg_instantiate.h"
#define CG_TEMPLATE "grid/estep_csr_impl.h"
#define CG_TEMPLATE_INDEXED
#include "cg_instantiate.h"
typedef int32_t cg_topk_mask_f32;
typedef int64_t cg_topk_mask_f64;
#define CG_TEMPLATE "grid/topk_impl.h"
#include "cg_instantiate.h"
#define CG_TEMPLATE "grid/search_csr_impl.h"
#define CG_TEMPLATE_INDEXED
#include "cg_instantiate.h"
