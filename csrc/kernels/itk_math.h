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
    const double shifter = 6755399441055744.0; /* 1.5 * 2^52: x + shifter rounds x */
    const double xc = x < -40.0 ? -40.0 : (x > 709.0 ? 709.0 : x);
    const double t = xc * 1.4426950408889634074 + shifter;
    const double n = t - shifter;
    const double r = (xc - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10;
    double p = 1.0 / 6227020800.0, two_n, y;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r;                                      /* e^r - 1 */
    /* the low bits of t hold n in [-58, 1023]: the exponent field of 2^n is n + 1023 */
    two_n = cg_bits_to_f64((cg_f64_to_bits(t) + 1023u) << 52);
    y = two_n * p + (two_n - 1.0);
    y = x < -40.0 ? -1.0 : y;                        /* expm1(-40) = -1 + 4e-18 */
    y = x > 709.0 ? HUGE_VAL : y;
    return x != x ? x : y;
}

static inline float cg_itk_expm1_f32(float x)
{
    const float shifter = 12582912.0f; /* 1.5 * 2^23 */
    const float xc = x < -20.0f ? -20.0f : (x > 88.0f ? 88.0f : x);
    const float t = xc * 1.44269504088896341f + shifter;
    const float n = t - shifter;
    const float r = (xc - n * 0.693145751953125f) - n * 1.428606765330187e-06f;
    float p = 1.0f / 40320.0f, two_n, y;
    p = p * r + 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r;
    two_n = cg_bits_to_f32((cg_f32_to_bits(t) + 127u) << 23);  /* n in [-29, 127] */
    y = two_n * p + (two_n - 1.0f);
    y = x < -20.0f ? -1.0f : y;                      /* expm1(-20) = -1 + 2e-9 */
    y = x > 88.0f ? HUGE_VALF : y;
    return x != x ? x : y;
}

#endif
