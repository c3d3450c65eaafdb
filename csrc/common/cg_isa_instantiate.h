/* Includes the template CG_ISA_TEMPLATE once per instruction set of the
 * run-time dispatch (cg_internal.h): as ISA base with no attribute and, on
 * x86-64 with GCC or Clang, as avx2 and avx512 with their target attributes.
 * The template defines its functions with CG_ISA_ATTR and names them with ISA. */
#define ISA base
#define CG_ISA_ATTR
#include CG_ISA_TEMPLATE
#undef ISA
#undef CG_ISA_ATTR
#if CG_X86_DISPATCH
#define ISA avx2
#define CG_ISA_ATTR CG_ATTR_AVX2
#include CG_ISA_TEMPLATE
#undef ISA
#undef CG_ISA_ATTR
#define ISA avx512
#define CG_ISA_ATTR CG_ATTR_AVX512
#include CG_ISA_TEMPLATE
#undef ISA
#undef CG_ISA_ATTR
#endif
#undef CG_ISA_TEMPLATE
