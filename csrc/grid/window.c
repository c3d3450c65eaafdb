/* Toroidal window sums and window histograms of counting grids (docs/counting_grids.md). */
#include <math.h>
#include <stdlib.h>
#include "grid_internal.h"

#define CG_TEMPLATE "grid/box_impl.h"
#include "cg_instantiate.h"
#define CG_TEMPLATE "common/rowops.h"
#include "cg_instantiate.h"
#define CG_TEMPLATE "grid/window_impl.h"
#include "cg_instantiate.h"
