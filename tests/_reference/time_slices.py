"""Slow NumPy reference of the time-sliced grids' M-step (docs/counting_grids.md,
"Time-sliced grids"): the counting-grid M-step with a Dirichlet prior centred on the
previous period's grid."""
import numpy as np

from tests._reference.grid import window_sum_ref

__all__ = ["anchored_mstep_ref"]


def anchored_mstep_ref(n, h, pi, extent, window, rho, alpha, anchor, weight):
    """``pi_new[z, i] ∝ rho + weight * anchor[z, i] + QH[z, i] (pi[z, i] + alpha)`` with
    ``QH = max(backward window sum of n / (h + |W| alpha), 0)``; arrays (Z, L)."""
    n, h, pi, anchor = (np.array(a, dtype=np.float64) for a in (n, h, pi, anchor))
    wvol = int(np.prod(window))
    QH = np.maximum(window_sum_ref(n / (h + wvol * alpha), extent, window, backward=True), 0)
    U = rho + weight * anchor + QH * (pi + alpha)
    return U / U.sum(axis=0, keepdims=True)
