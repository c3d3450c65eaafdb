/* Row kernels with run-time selection of the instruction set.
 *
 * On x86-64 with GCC or Clang every row kernel is compiled three times
 * (baseline SSE2, AVX2+FMA, AVX-512) and cg_rowops_* picks the best one the
 * CPU supports (cg_simd_level).  Elsewhere only the baseline exists.
 * A template of cg_instantiate.h (REAL, SUF); defines the struct CG_FN(cg_rowops) and
 * CG_FN(cg_get_rowops)(). */
#include "cg_math.h"

typedef struct {
    void (*axpy4)(REAL *, const REAL *, const REAL *, const REAL *, const REAL *,
                  REAL, REAL, REAL, REAL, int64_t);
    void (*axpy1)(REAL *, const REAL *, REAL, int64_t);
    void (*posterior)(REAL *, int64_t, const REAL *, double, double *);
    void (*log)(REAL *, const REAL *, int64_t);
    double (*dot_axpy)(const REAL *, const REAL *, REAL *, REAL, int64_t);
} CG_FN(cg_rowops);

#define CG_ISA_TEMPLATE "common/rowops_impl.h"
#include "cg_isa_instantiate.h"

static CG_FN(cg_rowops) CG_FN(cg_get_rowops)(void)
{
    const int level = cg_simd_level();
    return CG_ISA_PICK(level, cg_rowops);
}
