"""Grids on the torus: validated extents and windows, and window sums over them.

A grid of extent ``E = (E_1, ..., E_D)`` has ``L = prod(E)`` cells in C order; the window
at position ``k`` covers the cells ``k + d`` for ``0 <= d < W`` (modulo ``E``), and per-cell
arrays are handled as rows of shape ``(n, L)`` (docs/counting_grids.md).
"""
import math
import numbers

import numpy as np

from countgrid._kernels import max_dim as MAX_DIM
from countgrid._utils.validation import check_shape_tuple
from countgrid.grid import _wrappers

__all__ = ["check_grid", "grid_size", "window_sums"]


def check_grid(extent, window, name_window="window"):
    """Validated ``(extent, window)`` tuples: same length, ``1 <= window <= extent``.

    A bare int extent is refused (it once made a silent ring where a square grid was
    meant); a bare int window only with a 1-D extent, where it is unambiguous."""
    refuse_bare_int(extent, "extent")
    extent = check_shape_tuple(extent, "extent")
    if len(extent) > 1:
        refuse_bare_int(window, name_window, len(extent))
    window = check_shape_tuple(window, name_window)
    if len(window) != len(extent):
        raise ValueError(f"{name_window} {window} and extent {extent} must have the same "
                         "number of dimensions")
    if len(extent) > MAX_DIM:
        raise ValueError(f"extent has {len(extent)} dimensions; at most {MAX_DIM} are supported")
    if any(w > e for w, e in zip(window, extent)):
        raise ValueError(f"{name_window} {window} is larger than the grid extent {extent}")
    return extent, window


def refuse_bare_int(value, name, ndim=None):
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        n = int(value)
        hint = (f"pass ({n}, {n}) for a {n}x{n} grid or ({n},) for a ring of {n} cells"
                if ndim is None else f"pass {(n,) * ndim} for the {ndim}-D grid")
        raise ValueError(f"{name} must be a tuple of positive ints, got the bare int {n}: "
                         + hint)


def grid_size(extent):
    """Number of cells ``L = prod(extent)`` (a Python int: never overflows)."""
    return math.prod(int(e) for e in extent)


def window_sums(M, extent, window, backward=False, scale=1.0, num_threads=0):
    """Window sums of every row of ``M`` (n, L) on the torus, in float64.

    ``backward=False``: ``out_k = scale * sum_{d in [0, W)} M_{k + d}`` (the window at k);
    ``backward=True``: ``out_i = scale * sum_{d in [0, W)} M_{i - d}`` (the windows that
    cover cell i).
    """
    return _wrappers.window_sum(np.ascontiguousarray(M, dtype=np.float64), extent, window,
                                    backward=backward, scale=scale, num_threads=num_threads)
