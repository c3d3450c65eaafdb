/* Jensen-Shannon and Jensen-Tsallis kernel Gram matrices (spec itkernels.md). */
#include <math.h>
#include <stdlib.h>
#include "cg_internal.h"
#include "cg_math.h"

/* coordinates per pass of the pair kernels (a stack-sized buffer) */
#define CG_ITK_CHUNK 256

#define REAL float
#define SUF f32
#define CG_FN(name) CG_CAT3(name, _, SUF)
#define CG_ISA_TEMPLATE "itk_pair_impl.h"
#include "cg_isa_instantiate.h"
#include "itk_impl.h"
#undef CG_FN
#undef REAL
#undef SUF

#define REAL double
#define SUF f64
#define CG_FN(name) CG_CAT3(name, _, SUF)
#define CG_ISA_TEMPLATE "itk_pair_impl.h"
#include "cg_isa_instantiate.h"
#include "itk_impl.h"
#undef CG_FN
#undef REAL
#undef SUF
