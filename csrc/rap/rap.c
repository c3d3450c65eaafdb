/* Rate Adapting Poisson harmonium (Gehler, Holub & Welling, ICML 2006): the samplers and
 * the instances of rap_project_impl.h and rap_impl.h (prototypes: rap_api.h, generated
 * from csrc/signatures.txt). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cg_internal.h"
#include "cg_math.h"
#include "rap_api.h"

/* Poisson(lam) for lam < 10 by sequential inversion (about lam + 1 steps);
 * the loop also stops once the remaining mass underflows. */
static double poisson_small(bitgen_t *g, double lam, double emlam)
{
    double u = g->next_double(g->state);
    double p = emlam, s = emlam;
    int64_t k = 0;
    while (u > s && k < 1000) {
        k += 1;
        p *= lam / (double)k;
        if (p == 0.0) break;
        s += p;
    }
    return (double)k;
}

/* PTRS (Hörmann 1993) for lam >= 10, the algorithm NumPy uses: the acceptance
 * rate exceeds 0.9 for every rate, so the loop ends quickly. */
static double poisson_ptrs(bitgen_t *g, double lam)
{
    const double slam = sqrt(lam), loglam = log(lam);
    const double b = 0.931 + 2.53 * slam;
    const double a = -0.059 + 0.02483 * b;
    const double invalpha = 1.1239 + 1.1328 / (b - 3.4);
    const double vr = 0.9277 - 3.6224 / (b - 2.0);
    for (;;) {
        const double U = g->next_double(g->state) - 0.5;
        const double V = g->next_double(g->state);
        const double us = 0.5 - fabs(U);
        const double k = floor((2.0 * a / us + b) * U + lam + 0.43);
        if (us >= 0.07 && V <= vr) return k;
        if (k < 0.0 || (us < 0.013 && V > us)) continue;
        if (log(V) + log(invalpha) - log(a / (us * us) + b) <= -lam + k * loglam - lgamma(k + 1.0))
            return k;
    }
}

double cg_rap_poisson(bitgen_t *g, double lam)
{
    if (!(lam > 0.0)) return 0.0;
    if (lam < 10.0) return poisson_small(g, lam, exp(-lam));
    return poisson_ptrs(g, lam);
}

double cg_rap_binomial(bitgen_t *g, int64_t n, double p)
{
    int flip = 0;
    double q, r, f, u;
    int64_t k = 0;
    if (n <= 0 || !(p > 0.0)) return 0.0;
    if (p >= 1.0) return (double)n;
    if (n == 1) return g->next_double(g->state) < p ? 1.0 : 0.0;
    if (p > 0.5) { p = 1.0 - p; flip = 1; }
    q = 1.0 - p;
    r = p / q;
    f = pow(q, (double)n);
    u = g->next_double(g->state);
    while (u > f && k < n) {
        u -= f;
        k += 1;
        f *= r * (double)(n - k + 1) / (double)k;
    }
    return flip ? (double)(n - k) : (double)k;
}

#define CG_RAP_GEMM_T_f32 cg_sgemm_t
#define CG_RAP_GEMM_T_f64 cg_dgemm_t

#define CG_TEMPLATE "rap/rap_project_impl.h"
#define CG_TEMPLATE_INDEXED
#include "cg_instantiate.h"
#define CG_TEMPLATE "rap/rap_impl.h"
#include "cg_instantiate.h"
