/* The INDEX axis of cg_instantiate.h (included only from there, for one REAL type). */
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
