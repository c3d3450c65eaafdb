/* Branch-free exp, log and sums that compilers can vectorise.
 *
 * libm's exp and log stay scalar calls in C loops unless -ffast-math is used,
 * which we never do in distributed builds.  These versions use Cody-Waite
 * range reduction and fixed polynomials; special cases are handled with
 * selects, so loops over them vectorise.  Results below the smallest normal
 * number are flushed to zero by the exps (exp(x) for x < -708 in double,
 * x < -87 in float).  Accuracy (a few ulp) is checked through the posterior and histogram
 * tests of tests/test_kernels.py, whose references use NumPy's exp and log.
 */
#ifndef COUNTGRID_MATH_H
#define COUNTGRID_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline double cg_bits_to_f64(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
static inline uint64_t cg_f64_to_bits(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static inline float cg_bits_to_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t cg_f32_to_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* The pieces of the exps, shared with the expm1 of kernels/itk_math.h.  Cody-Waite
 * reduction of x clamped to [lo, hi]: x = n ln 2 + r, |r| <= ln(2)/2, r = cg_exp_reduce(x,
 * lo, hi, &t), where t holds the rounded n in its low bits; cg_exp_scale(t, bias) is the
 * power of two whose exponent field is n + bias.  cg_exp_poly(p, r) is (e^r - 1) / r =
 * 1 + r/2! + r^2/3! + ... by Horner from the coefficient p of the highest power, so that
 * e^r = poly * r + 1 and e^r - 1 = poly * r. */
#define CG_SHIFTER_F64 6755399441055744.0 /* 1.5 * 2^52: x + shifter rounds x */
#define CG_SHIFTER_F32 12582912.0f        /* 1.5 * 2^23 */

/* x clamped to [lo, hi] and reduced: returns r and stores t */
static inline double cg_exp_reduce_f64(double x, double lo, double hi, double *t)
{
    const double xc = x < lo ? lo : (x > hi ? hi : x);
    const double s = xc * 1.4426950408889634074 + CG_SHIFTER_F64;
    const double n = s - CG_SHIFTER_F64;
    *t = s;
    return (xc - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10;
}

static inline float cg_exp_reduce_f32(float x, float lo, float hi, float *t)
{
    const float xc = x < lo ? lo : (x > hi ? hi : x);
    const float s = xc * 1.44269504088896341f + CG_SHIFTER_F32;
    const float n = s - CG_SHIFTER_F32;
    *t = s;
    return (xc - n * 0.693145751953125f) - n * 1.428606765330187e-06f;
}

static inline double cg_exp_scale_f64(double t, uint64_t bias) { return cg_bits_to_f64((cg_f64_to_bits(t) + bias) << 52); }
static inline float cg_exp_scale_f32(float t, uint32_t bias) { return cg_bits_to_f32((cg_f32_to_bits(t) + bias) << 23); }

/* from p = 1/13! (cg_exp_f64, cg_itk_expm1_f64) */
static inline double cg_exp_poly_f64(double p, double r)
{
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
    return p * r + 1.0;
}

/* from p = 1/7! (cg_exp_f32) or p = r/8! + 1/7! (cg_itk_expm1_f32) */
static inline float cg_exp_poly_f32(float p, float r)
{
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    return p * r + 1.0f;
}

static inline double cg_exp_f64(double x)
{
    double t, y;
    const double r = cg_exp_reduce_f64(x, -708.0, 709.7, &t);
    const double p = cg_exp_poly_f64(1.0 / 6227020800.0, r) * r + 1.0;
    /* 2^(n-1): n - 1 + 1023 stays in [1, 2046] */
    y = 2.0 * p * cg_exp_scale_f64(t, 1022u);
    y = x < -708.0 ? 0.0 : y;
    y = x > 709.7 ? HUGE_VAL : y;
    return x != x ? x : y;
}

static inline float cg_exp_f32(float x)
{
    float t, y;
    const float r = cg_exp_reduce_f32(x, -87.0f, 88.0f, &t);
    const float p = cg_exp_poly_f32(1.0f / 5040.0f, r) * r + 1.0f;
    y = 2.0f * p * cg_exp_scale_f32(t, 126u);
    y = x < -87.0f ? 0.0f : y;
    y = x > 88.0f ? HUGE_VALF : y;
    return x != x ? x : y;
}

static inline double cg_log_f64(double x)
{
    const int den = x < 2.2250738585072014e-308;
    const double xs = den ? x * 18014398509481984.0 : x; /* 2^54 */
    const uint64_t u = cg_f64_to_bits(xs);
    const uint64_t eb = u >> 52;
    double m = cg_bits_to_f64((u & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
    const int big = m > 1.4142135623730951;
    double e = cg_bits_to_f64(eb | 0x4330000000000000ull) - 4503599627370496.0 - 1023.0;
    double s, s2, p, y;
    m = big ? 0.5 * m : m;
    e = e + (big ? 1.0 : 0.0) - (den ? 54.0 : 0.0);
    s = (m - 1.0) / (m + 1.0);
    s2 = s * s;
    p = 1.0 / 21.0;
    p = p * s2 + 1.0 / 19.0;
    p = p * s2 + 1.0 / 17.0;
    p = p * s2 + 1.0 / 15.0;
    p = p * s2 + 1.0 / 13.0;
    p = p * s2 + 1.0 / 11.0;
    p = p * s2 + 1.0 / 9.0;
    p = p * s2 + 1.0 / 7.0;
    p = p * s2 + 1.0 / 5.0;
    p = p * s2 + 1.0 / 3.0;
    y = e * 6.93147180369123816490e-01 + (2.0 * s + (2.0 * s * s2 * p + e * 1.90821492927058770002e-10));
    y = x == 0.0 ? -HUGE_VAL : y;
    y = x == HUGE_VAL ? HUGE_VAL : y;
    y = x < 0.0 ? NAN : y;
    return x != x ? x : y;
}

static inline float cg_log_f32(float x)
{
    const int den = x < 1.17549435e-38f;
    const float xs = den ? x * 33554432.0f : x; /* 2^25 */
    const uint32_t u = cg_f32_to_bits(xs);
    const uint32_t eb = u >> 23;
    float m = cg_bits_to_f32((u & 0x007FFFFFu) | 0x3F800000u);
    const int big = m > 1.41421356f;
    float e = cg_bits_to_f32(eb | 0x4B000000u) - 8388608.0f - 127.0f;
    float s, s2, p, y;
    m = big ? 0.5f * m : m;
    e = e + (big ? 1.0f : 0.0f) - (den ? 25.0f : 0.0f);
    s = (m - 1.0f) / (m + 1.0f);
    s2 = s * s;
    p = 1.0f / 11.0f;
    p = p * s2 + 1.0f / 9.0f;
    p = p * s2 + 1.0f / 7.0f;
    p = p * s2 + 1.0f / 5.0f;
    p = p * s2 + 1.0f / 3.0f;
    y = e * 0.693145751953125f + (2.0f * s + (2.0f * s * s2 * p + e * 1.428606765330187e-06f));
    y = x == 0.0f ? -HUGE_VALF : y;
    y = x == HUGE_VALF ? HUGE_VALF : y;
    y = x < 0.0f ? NAN : y;
    return x != x ? x : y;
}

/* Sums and maxima in a fixed order of 8 interleaved partial results: the
 * compiler vectorises them, and the result does not depend on threads. */
#define CG_LANES 8

#define CG_DEFINE_SUM(name, T)                                              \
    static inline double name(const T *x, int64_t n)                        \
    {                                                                       \
        double acc[CG_LANES] = {0, 0, 0, 0, 0, 0, 0, 0};                    \
        double s;                                                           \
        int64_t k = 0, j;                                                   \
        for (; k + CG_LANES <= n; k += CG_LANES)                            \
            for (j = 0; j < CG_LANES; j++)                                  \
                acc[j] += (double)x[k + j];                                 \
        s = ((acc[0] + acc[1]) + (acc[2] + acc[3]))                         \
            + ((acc[4] + acc[5]) + (acc[6] + acc[7]));                      \
        for (; k < n; k++)                                                  \
            s += (double)x[k];                                              \
        return s;                                                           \
    }
CG_DEFINE_SUM(cg_sum_f64, double)
CG_DEFINE_SUM(cg_sum_f32, float)
#undef CG_DEFINE_SUM

#define CG_DEFINE_MAX(name, T)                                              \
    static inline T name(const T *x, int64_t n)                             \
    {                                                                       \
        T acc[CG_LANES];                                                    \
        T m;                                                                \
        int64_t k = 0, j;                                                   \
        for (j = 0; j < CG_LANES; j++)                                      \
            acc[j] = -(T)INFINITY;                                          \
        for (; k + CG_LANES <= n; k += CG_LANES)                            \
            for (j = 0; j < CG_LANES; j++)                                  \
                acc[j] = x[k + j] > acc[j] ? x[k + j] : acc[j];             \
        m = acc[0];                                                         \
        for (j = 1; j < CG_LANES; j++)                                      \
            m = acc[j] > m ? acc[j] : m;                                    \
        for (; k < n; k++)                                                  \
            m = x[k] > m ? x[k] : m;                                        \
        return m;                                                           \
    }
CG_DEFINE_MAX(cg_max_f64, double)
CG_DEFINE_MAX(cg_max_f32, float)
#undef CG_DEFINE_MAX

#endif
