/* The one instantiation template of the kernels.  A translation unit defines CG_TEMPLATE
 * (a header written for one REAL type) and includes this file: the template is then
 * included once for REAL float (SUF f32) and once for REAL double (SUF f64); with
 * CG_TEMPLATE_INDEXED defined, once per (REAL, INDEX) pair, INDEX int32_t (ISUF i32) and
 * int64_t (ISUF i64).  Templates name their functions with CG_FN / CG_FN2
 * (cg_internal.h).  CG_TEMPLATE and CG_TEMPLATE_INDEXED are undefined afterwards.
 * Instruction-set variants are a separate axis, instantiated inside a template by
 * cg_isa_instantiate.h. */
#define REAL float
#define SUF f32
#include "cg_instantiate_index.h"
#undef REAL
#undef SUF
#define REAL double
#define SUF f64
#include "cg_instantiate_index.h"
#undef REAL
#undef SUF
#undef CG_TEMPLATE
#undef CG_TEMPLATE_INDEXED
