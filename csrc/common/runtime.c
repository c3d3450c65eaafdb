/* Build and run-time facts: OpenMP, threads, instruction set. */
#include <stdlib.h>
#include <string.h>
#include "cg_internal.h"

int cg_openmp_enabled(void)
{
#ifdef _OPENMP
    return 1;
#else
    return 0;
#endif
}

int cg_max_threads(void)
{
    return cg_resolve_threads(0);
}

int cg_simd_level(void)
{
#if CG_X86_DISPATCH
    const char *env = getenv("COUNTGRID_SIMD");
    int cap = 2;
    if (env != NULL) {
        if (strcmp(env, "baseline") == 0)
            cap = 0;
        else if (strcmp(env, "avx2") == 0)
            cap = 1;
    }
    __builtin_cpu_init();
    if (cap >= 2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")
        && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw"))
        return 2;
    if (cap >= 1 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return 1;
#endif
    return 0;
}

const char *cg_simd_name(void)
{
    static const char *names[] = {"baseline", "avx2", "avx512"};
    return names[cg_simd_level()];
}
