"""Numerical helpers shared by the layers: exact rescaling for sums near the ends of the
float64 range (docs/robustness.md, "Numerical range") and the largest entries of rows
(the truncated posteriors of the map and of countgrid.external)."""
import numpy as np

__all__ = ["power_of_two_scale", "largest_per_row"]


def largest_per_row(Q, k):
    """The ``k`` largest entries of each row of the 2-D array ``Q``, largest first, ties
    by the lower column (``1 <= k <= Q.shape[1]``).

    Returns
    -------
    columns, values : ndarray of shape (Q.shape[0], k)
    """
    n, m = Q.shape
    part = np.argpartition(-Q, k - 1, axis=1)[:, :k] if k < m else \
        np.tile(np.arange(m), (n, 1))
    vals = np.take_along_axis(Q, part, axis=1)
    order = np.lexsort((part, -vals), axis=1)
    return np.take_along_axis(part, order, axis=1), np.take_along_axis(vals, order, axis=1)


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
