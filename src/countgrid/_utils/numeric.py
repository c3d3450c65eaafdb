"""Numerical helpers shared by the layers: exact rescaling for sums near the ends of the
float64 range (docs/robustness.md, "Numerical range")."""
import numpy as np

__all__ = ["power_of_two_scale"]


def power_of_two_scale(values, limit=500):
    """1, or the power of two that brings the largest magnitude of ``values`` near 1 when it
    is beyond 2**limit or below 2**-limit.  Scaling by a power of two is exact, so values
    near the float64 limits (1e308) can be summed or squared without overflow, and ordinary
    ones give bit-identical results.  A smaller ``limit`` (64) keeps values that are to be
    rounded to float32 (range 2**-126 to 2**128) inside its range."""
    top = float(np.max(np.abs(values))) if np.size(values) else 0.0
    if top == 0.0 or not np.isfinite(top) or 2.0**-limit < top < 2.0**limit:
        return 1.0
    # subnormal magnitudes (1e-320 ~ 2**-1063) would need a scale beyond the float range:
    # 2**1000 brings them into the normal range, which is all the sums need
    return float(np.ldexp(1.0, min(-int(np.frexp(top)[1]), 1000)))
