/* pLSA EM and folding-in on sparse counts (Hofmann, UAI 1999). */
#include <math.h>
#include <stdlib.h>
#include "cg_internal.h"

#define CG_TEMPLATE "common/rowops.h"
#include "cg_instantiate.h"
#define CG_TEMPLATE "topics/plsa_impl.h"
#define CG_TEMPLATE_INDEXED
#include "cg_instantiate.h"
