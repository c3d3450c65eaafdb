/* The INDEX axis: from cg_instantiate.h once per REAL type, and directly by kernels that
 * have no REAL axis (csrc/cooc/cooc.c). */
#ifdef CG_TEMPLATE_INDEXED
#define INDEX int32_t
#define ISUF i32
#include CG_TEMPLATE
#undef INDEX
#undef ISUF
#define INDEX int64_t
#define ISUF i64
#include CG_TEMPLATE
#undef INDEX
#undef ISUF
#else
#include CG_TEMPLATE
#endif
