/* Row kernels with run-time selection of the instruction set.
 *
 * On x86-64 with GCC or Clang every row kernel is compiled three times
 * (baseline SSE2, AVX2+FMA, AVX-512) and cg_rowops_* picks the best one the
 * CPU supports (cg_simd_level).  Elsewhere only the baseline exists.
 * A template of cg_instantiate.h (REAL, SUF); defines the struct CG_FN(cg_rowops) and
 * CG_FN(cg_get_rowops)(). */
#include "cg_math.h"


#define CG_ISA_TEMPLATE "common/rowops_impl.h"
#include "cg_isa_instantiate.h"

typedef struct {
    void (*axpy4)(REAL *, const REAL *, const REAL *, const REAL *, const REAL *,
                  REAL, REAL, REAL, REAL, int64_t);
    void (*axpy1)(REAL *, const REAL *, REAL, int64_t);
    void (*posterior)(REAL *, int64_t, const REAL *, double, double *);
    void (*log)(REAL *, const REAL *, int64_t);
    double (*dot_axpy)(const REAL *, const REAL *, REAL *, REAL, int64_t);
} CG_FN(cg_rowops);

static CG_FN(cg_rowops) CG_FN(cg_get_rowops)(void)
{
    CG_FN(cg_rowops) ops;
    ops.axpy4 = CG_CAT3(cg_row_axpy4_, SUF, _base);
    ops.axpy1 = CG_CAT3(cg_row_axpy1_, SUF, _base);
    ops.posterior = CG_CAT3(cg_row_posterior_, SUF, _base);
    ops.log = CG_CAT3(cg_row_log_, SUF, _base);
    ops.dot_axpy = CG_CAT3(cg_row_dot_axpy_, SUF, _base);
#if CG_X86_DISPATCH
    switch (cg_simd_level()) {
    case 2:
        ops.axpy4 = CG_CAT3(cg_row_axpy4_, SUF, _avx512);
        ops.axpy1 = CG_CAT3(cg_row_axpy1_, SUF, _avx512);
        ops.posterior = CG_CAT3(cg_row_posterior_, SUF, _avx512);
        ops.log = CG_CAT3(cg_row_log_, SUF, _avx512);
        ops.dot_axpy = CG_CAT3(cg_row_dot_axpy_, SUF, _avx512);
        break;
    case 1:
        ops.axpy4 = CG_CAT3(cg_row_axpy4_, SUF, _avx2);
        ops.axpy1 = CG_CAT3(cg_row_axpy1_, SUF, _avx2);
        ops.posterior = CG_CAT3(cg_row_posterior_, SUF, _avx2);
        ops.log = CG_CAT3(cg_row_log_, SUF, _avx2);
        ops.dot_axpy = CG_CAT3(cg_row_dot_axpy_, SUF, _avx2);
        break;
    default:
        break;
    }
#endif
    return ops;
}

