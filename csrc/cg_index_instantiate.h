/* Includes the template CG_INDEX_TEMPLATE once per sparse index type: with
 * INDEX int32_t / ISUF i32 and INDEX int64_t / ISUF i64 (the template names its
 * functions with ISUF).  Include it once per REAL type. */
#define INDEX int32_t
#define ISUF i32
#include CG_INDEX_TEMPLATE
#undef INDEX
#undef ISUF
#define INDEX int64_t
#define ISUF i64
#include CG_INDEX_TEMPLATE
#undef INDEX
#undef ISUF
#undef CG_INDEX_TEMPLATE
