"""Slow, obviously correct reference of the window coverage the map ranks documents by
(countgrid.grid._browse, docs/map.md)."""
import itertools

import numpy as np


def coverage_reference(Q, extent, window):
    """s_t(i) = sum over corners k whose window k + [0, W) (mod E) contains i of q_t(k)."""
    L = int(np.prod(extent))
    S = np.zeros((Q.shape[0], L))
    for k in range(L):
        kc = np.unravel_index(k, extent)
        for d in itertools.product(*[range(w) for w in window]):
            i = np.ravel_multi_index(tuple((a + b) % e for a, b, e in zip(kc, d, extent)),
                                     extent)
            S[:, i] += Q[:, k]
    return S
