/* Build and runtime facts about OpenMP. */
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
