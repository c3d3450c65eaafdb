"""Browsing a fitted counting grid: which documents cover a cell.

A document ``t`` with location posterior ``q_t`` (:meth:`CountingGrid.transform`) covers
cell ``i`` with weight ``s_t(i) = sum over window corners k with i in W_k of q_t(k)``,
where ``W_k = k + [0, window)`` modulo ``extent`` (docs/counting_grids.md): the
probability that the document's window contains ``i``.  This is the correlation of
``q_t`` with the window box on the torus, ``s_t(i) = sum_{d in [0, W)} q_t(i - d)``.
The interactive map (countgrid.maps, docs/map.md) ranks the documents of a clicked cell by
``s_t(cell)``, as :meth:`CountingGrid.documents_near` does.
"""
from numbers import Integral

import numpy as np

from countgrid._memory import check_memory
from countgrid._validation import check_shape_tuple

__all__ = ["window_coverage", "check_cell", "cell_corners", "rank_scores"]

#: Documents per block of window_coverage: block * L float64 entries at most 2**22.
_BLOCK_ELEMENTS = 1 << 22


def _check_extent_window(extent, window):
    extent = check_shape_tuple(extent, "extent")
    window = check_shape_tuple(window, "window")
    if len(window) != len(extent):
        raise ValueError(f"window {window} and extent {extent} must have the same number of "
                         "dimensions")
    if any(w > e for w, e in zip(window, extent)):
        raise ValueError(f"window {window} is larger than the grid extent {extent}")
    return extent, window


def window_coverage(Q, extent, window):
    """Window coverage ``S[t, i] = s_t(i)`` of every cell by every document.

    Parameters
    ----------
    Q : array-like of shape (n_documents, L)
        Location posteriors (rows of :meth:`CountingGrid.transform`), or any per-corner
        weights; ``L = prod(extent)``, cells in C order.
    extent, window : tuple of int
        The grid's extent and window.

    Returns
    -------
    S : ndarray of shape (n_documents, L), float64
        ``S[t, i] = sum_{d in [0, window)} Q[t, i - d]`` (indices modulo ``extent``).
        Rows of posteriors give values in [0, 1] (up to rounding).

    Notes
    -----
    The box sum is separable: one running sum of ``W_d`` shifted copies per axis.  Rows
    are processed in blocks, so the scratch memory is ``O(block * L)`` besides the result.
    """
    extent, window = _check_extent_window(extent, window)
    Q = np.asarray(Q)
    L = int(np.prod(extent))
    if Q.ndim != 2 or Q.shape[1] != L:
        raise ValueError(f"Q must have shape (n_documents, {L}) for extent {extent}; "
                         f"got {Q.shape}")
    if not np.issubdtype(Q.dtype, np.number) or np.iscomplexobj(Q):
        raise TypeError(f"Q must hold real numbers, got dtype {Q.dtype}")
    n = Q.shape[0]
    check_memory(8 * n * L, f"the window coverage of {n} documents over {L} cells",
                 "ask for fewer documents at a time")
    out = np.empty((n, L), dtype=np.float64)
    block = max(1, _BLOCK_ELEMENTS // max(L, 1))
    for t0 in range(0, n, block):
        t1 = min(n, t0 + block)
        x = np.asarray(Q[t0:t1], dtype=np.float64).reshape((t1 - t0,) + extent)
        for axis, w in enumerate(window, start=1):
            if w == 1:
                continue
            acc = x.copy()
            for d in range(1, w):
                acc += np.roll(x, d, axis=axis)     # np.roll(x, d)[i] = x[i - d]
            x = acc
        out[t0:t1] = x.reshape(t1 - t0, L)
    return out


def check_cell(cell, extent, name="cell"):
    """Flat C-order index of ``cell``: a tuple of D ints or a flat int, validated."""
    extent = tuple(int(e) for e in extent)
    L = int(np.prod(extent))
    if isinstance(cell, (bool, np.bool_, str, bytes)):
        raise TypeError(f"{name} must be a tuple of {len(extent)} ints or a flat int, "
                        f"got {cell!r}")
    if isinstance(cell, Integral):
        if not 0 <= int(cell) < L:
            raise ValueError(f"{name} = {int(cell)} is out of range: a flat cell index is in "
                             f"[0, {L}) for extent {extent}")
        return int(cell)
    try:
        parts = tuple(cell)
    except TypeError:
        raise TypeError(f"{name} must be a tuple of {len(extent)} ints or a flat int, "
                        f"got {type(cell).__name__}") from None
    if len(parts) != len(extent):
        raise ValueError(f"{name} {parts} has {len(parts)} coordinates; the grid has "
                         f"{len(extent)} dimensions (extent {extent})")
    for p in parts:
        if not isinstance(p, Integral) or isinstance(p, (bool, np.bool_)):
            raise TypeError(f"{name} coordinates must be ints, got {p!r}")
    for d, (p, e) in enumerate(zip(parts, extent)):
        if not 0 <= int(p) < e:
            raise ValueError(f"{name} {parts}: coordinate {d} = {int(p)} is out of range "
                             f"[0, {e}) (extent {extent})")
    return int(np.ravel_multi_index(tuple(int(p) for p in parts), extent))


def cell_corners(cell, extent, window):
    """Flat indices of the window corners ``k`` whose window covers the flat ``cell``
    (``k = cell - d`` for ``d in [0, window)``, modulo ``extent``), sorted."""
    coords = np.unravel_index(int(cell), extent)
    axes = [(c - np.arange(w)) % e for c, w, e in zip(coords, window, extent)]
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.sort(np.ravel_multi_index(tuple(m.ravel() for m in mesh), extent))


def rank_scores(scores, n):
    """Indices of the ``n`` largest scores, descending, ties by lower index."""
    scores = np.asarray(scores, dtype=np.float64)
    order = np.argsort(-scores, kind="stable")
    return order[:n]
