/* Jensen-Shannon and Jensen-Tsallis kernel Gram matrices (Martins et al., JMLR 2009). */
#include <math.h>
#include <stdlib.h>
#include "cg_internal.h"
#include "cg_math.h"
#include "kernels/itk_math.h"

/* coordinates per pass of the pair kernels (a stack-sized buffer) */
#define CG_ITK_CHUNK 256

/* How k^B_q = sum_d [g(x_d + y_d) - g(x_d) - g(y_d)] * scale is evaluated
 * (csrc/signatures.txt; docs/kernels.md, "Numerical range"):
 *   CG_ITK_SHANNON   q == 1:             g(v) = v ln v,                         scale 1
 *   CG_ITK_NEAR_ONE  0 < |q - 1| < 1/2:  g(v) = v expm1((q-1) ln v) / (q-1),    scale 1
 *                                        = (v^q - v)/(q-1); the linear terms cancel
 *                                        exactly (s = x + y), and expm1 keeps g
 *                                        accurate as q -> 1, where (v^q - ...)/(q-1)
 *                                        would lose about log10(1/|q-1|) digits
 *   CG_ITK_POWER     otherwise:          g(v) = v^q,                            scale 1/(q-1)
 * NEAR_ONE stops at |q - 1| = 1/2, where (q-1) ln v stays below 373 (double) and 52
 * (float) even for subnormal v, so expm1 cannot overflow. */
enum { CG_ITK_POWER = 0, CG_ITK_SHANNON = 1, CG_ITK_NEAR_ONE = 2 };

typedef struct {
    int mode;
    double a, b, scale;   /* POWER: a = q; NEAR_ONE: a = q - 1, b = 1/(q - 1) */
} cg_itk_mode;

static inline cg_itk_mode cg_itk_mode_of(double q)
{
    cg_itk_mode m = {CG_ITK_POWER, q, 0.0, 1.0 / (q - 1.0)};
    if (q == 1.0) {
        m.mode = CG_ITK_SHANNON;
        m.scale = 1.0;
    } else if (fabs(q - 1.0) < 0.5) {
        m.mode = CG_ITK_NEAR_ONE;
        m.a = q - 1.0;
        m.b = 1.0 / (q - 1.0);
        m.scale = 1.0;
    }
    return m;
}

#define CG_TEMPLATE "kernels/itk_impl.h"
#include "cg_instantiate.h"
