/* Jensen-Shannon and Jensen-Tsallis kernel Gram matrices (Martins et al., JMLR 2009). */
#include <math.h>
#include <stdlib.h>
#include "cg_internal.h"
#include "cg_math.h"

/* coordinates per pass of the pair kernels (a stack-sized buffer) */
#define CG_ITK_CHUNK 256

#define CG_TEMPLATE "itk/itk_impl.h"
#include "cg_instantiate.h"
