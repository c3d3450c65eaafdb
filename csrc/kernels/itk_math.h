/* expm1 for the Jensen-Tsallis kernels near q = 1, branch-free so that loops over it
 * vectorise (as cg_math.h's exp and log).
 *
 * With the reduction x = n ln 2 + r, |r| <= ln(2)/2 (Cody-Waite, as cg_exp),
 *     expm1(x) = 2^n (e^r - 1) + (2^n - 1),
 * and e^r - 1 = r + r^2/2! + ... is evaluated without its constant term, so no
 * cancellation occurs for small |x| (n = 0: the polynomial alone) nor for any other n
 * (the two terms then have the same sign or differ in magnitude by a factor >= 2). */
#ifndef COUNTGRID_ITK_MATH_H
#define COUNTGRID_ITK_MATH_H

#include "cg_math.h"

static inline double cg_itk_expm1_f64(double x)
{
    double t, y;
    const double r = cg_exp_reduce_f64(x, -40.0, 709.0, &t);
    const double p = cg_exp_poly_f64(1.0 / 6227020800.0, r) * r;      /* e^r - 1 */
    /* n in [-58, 1023]: the exponent field of 2^n is n + 1023 */
    const double two_n = cg_exp_scale_f64(t, 1023u);
    y = two_n * p + (two_n - 1.0);
    y = x < -40.0 ? -1.0 : y;                        /* expm1(-40) = -1 + 4e-18 */
    y = x > 709.0 ? HUGE_VAL : y;
    return x != x ? x : y;
}

static inline float cg_itk_expm1_f32(float x)
{
    float t, y;
    const float r = cg_exp_reduce_f32(x, -20.0f, 88.0f, &t);
    /* one degree more than cg_exp_f32: e^r - 1 is small, its relative error is not */
    const float p = cg_exp_poly_f32(1.0f / 40320.0f * r + 1.0f / 5040.0f, r) * r;
    const float two_n = cg_exp_scale_f32(t, 127u);  /* n in [-29, 127] */
    y = two_n * p + (two_n - 1.0f);
    y = x < -20.0f ? -1.0f : y;                      /* expm1(-20) = -1 + 2e-9 */
    y = x > 88.0f ? HUGE_VALF : y;
    return x != x ? x : y;
}

#endif
