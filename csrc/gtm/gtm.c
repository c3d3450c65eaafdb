/* ZIP/Poisson GTM kernels: fused sparse E-step and M-step statistics (Alvarez-Medina &
 * Hidalgo-Silva, eqs. 5-9). */
#include <math.h>
#include "cg_internal.h"
#include "gtm_api.h"

#define CG_TEMPLATE "gtm/gtm_impl.h"
#define CG_TEMPLATE_INDEXED
#include "cg_instantiate.h"
