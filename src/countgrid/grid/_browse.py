"""Browsing a fitted counting grid: which documents cover a cell, and which are there most.

A document ``t`` with location posterior ``q_t`` (:meth:`CountingGrid.transform`) covers
cell ``i`` with weight ``s_t(i) = sum over window corners k with i in W_k of q_t(k)``,
where ``W_k = k + [0, window)`` modulo ``extent`` (docs/counting_grids.md): the
probability that the document's window contains ``i``.  This is the correlation of
``q_t`` with the window box on the torus, ``s_t(i) = sum_{d in [0, W)} q_t(i - d)``.
The map's colourings weight documents by it.

A document's place is ranked by how centred it is on a cell instead (docs/map.md, "Pin a
cell"): the *depth* of cell ``i`` in the window ``W_k``,
``K(d) = prod_a min(d_a + 1, W_a - d_a) / ceil(W_a / 2)`` for ``d = i - k`` in
``[0, W)`` (1 at the window's centre, ``1 / ceil(W/2)`` per axis on its border, 0
outside), is averaged over the posterior: ``c_t(i) = sum_k q_t(k) K(i - k)``
(:func:`centred_coverage`).  A document whose window is centred on the cell for sure scores
1; one that touches it with a corner of its window scores ``1/4`` (4x4 window).  The
interactive map (countgrid.maps) and :meth:`CountingGrid.documents_near` list the documents
of a cell by ``c_t(cell)`` rounded to :data:`RANK_DECIMALS` decimals, ties broken by the
document's log-likelihood per token in its most probable window (:func:`rank_scores`).
"""
from numbers import Integral

import numpy as np

from countgrid._utils.memory import check_memory
from countgrid._utils.validation import check_shape_tuple

__all__ = ["window_coverage", "window_depth", "centred_coverage", "check_cell",
           "cell_corners", "corner_depths", "map_window_loglik", "rank_scores",
           "RANK_DECIMALS"]

#: Scores equal to this many decimals (0.1 %) are ties, broken by the per-token
#: log-likelihood.
RANK_DECIMALS = 3

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


def _posterior_rows(Q, extent):
    """(Q as an array, L): rows of location posteriors over the ``L`` cells of extent."""
    Q = np.asarray(Q)
    L = int(np.prod(extent))
    if Q.ndim != 2 or Q.shape[1] != L:
        raise ValueError(f"Q must have shape (n_documents, {L}) for extent {extent}; "
                         f"got {Q.shape}")
    return Q, L


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
    Q, L = _posterior_rows(Q, extent)
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


def window_depth(window):
    """The depth ``K(d)`` of every cell ``d`` of a window: how far it is from the border.

    ``K(d) = prod_a min(d_a + 1, W_a - d_a) / ceil(W_a / 2)``: 1 for the centre cell (the
    central 2 x 2 cells of an even window), ``1 / ceil(W_a / 2)`` per axis on the border.

    Parameters
    ----------
    window : tuple of int

    Returns
    -------
    ndarray of shape ``window``, float64

    Examples
    --------
    >>> from countgrid.grid._browse import window_depth
    >>> window_depth((4,)).tolist()
    [0.5, 1.0, 1.0, 0.5]
    >>> window_depth((3, 3))[0].tolist()
    [0.25, 0.5, 0.25]
    """
    window = check_shape_tuple(window, "window")
    out = np.ones((), dtype=np.float64)
    for w in window:
        d = np.arange(w)
        axis = np.minimum(d + 1, w - d) / float(-(-w // 2))
        out = np.multiply.outer(out, axis)
    return out


def centred_coverage(Q, extent, window):
    """``C[t, i] = c_t(i) = sum_k Q[t, k] K(i - k)``: the posterior's mean depth of cell
    ``i`` in the document's window (:func:`window_depth`).

    Parameters
    ----------
    Q : array-like of shape (n_documents, L)
        Location posteriors (rows of :meth:`CountingGrid.transform`).
    extent, window : tuple of int

    Returns
    -------
    ndarray of shape (n_documents, L), float64
        In [0, 1] for posteriors: 1 when the document's window is centred on the cell for
        sure.
    """
    extent, window = _check_extent_window(extent, window)
    Q, L = _posterior_rows(Q, extent)
    n = Q.shape[0]
    check_memory(8 * n * L, f"the centred coverage of {n} documents over {L} cells",
                 "ask for fewer documents at a time")
    K = window_depth(window)
    out = np.zeros((n, L), dtype=np.float64)
    block = max(1, _BLOCK_ELEMENTS // max(L, 1))
    axes = tuple(range(1, len(extent) + 1))
    for t0 in range(0, n, block):
        t1 = min(n, t0 + block)
        x = np.asarray(Q[t0:t1], dtype=np.float64).reshape((t1 - t0,) + extent)
        acc = np.zeros_like(x)
        for d in np.ndindex(*window):
            acc += K[d] * np.roll(x, d, axis=axes)      # roll(x, d)[i] = x[i - d]
        out[t0:t1] = acc.reshape(t1 - t0, L)
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


def corner_depths(cell, extent, window):
    """The depth of the flat ``cell`` in the window of every corner: an array of ``L``
    float64, ``K(cell - k)`` for the corners ``k`` whose window covers the cell, else 0."""
    extent = tuple(int(e) for e in extent)
    K = window_depth(window)
    out = np.zeros(int(np.prod(extent)), dtype=np.float64)
    coords = np.unravel_index(int(cell), extent)
    for d in np.ndindex(*K.shape):
        k = tuple((c - o) % e for c, o, e in zip(coords, d, extent))
        out[np.ravel_multi_index(k, extent)] = K[d]
    return out


def map_window_loglik(X, h, corners):
    """Per-token log-likelihood of every document in one window each:
    ``sum_z X[t, z] log h[corners[t], z] / sum_z X[t, z]`` (``-inf`` for an empty document).

    Parameters
    ----------
    X : CSR matrix or ndarray of shape (n, Z)
        Validated counts.
    h : ndarray of shape (L, Z), or callable
        Window distributions (a grid's ``h_``, cells flattened); for sparse ``X`` also
        a function ``h(cells, words)`` giving ``h[cells, words]`` for index arrays of
        one shape (a grid's ``_window_values``, which need not hold ``h_`` whole).
    corners : ndarray of shape (n,), int
        One window corner per document (its most probable one).

    Returns
    -------
    ndarray of shape (n,), float64
    """
    import scipy.sparse as sp

    n = X.shape[0]
    corners = np.asarray(corners, dtype=np.int64)
    if sp.issparse(X):
        X = X.tocsr()
        rows = np.repeat(np.arange(n), np.diff(X.indptr))
        vals = np.asarray(X.data, dtype=np.float64)
        at = h(corners[rows], X.indices) if callable(h) else h[corners[rows], X.indices]
        ll = np.bincount(rows, weights=vals * np.log(np.asarray(at, dtype=np.float64)),
                         minlength=n)
        tokens = np.bincount(rows, weights=vals, minlength=n)
    else:
        X = np.asarray(X, dtype=np.float64)
        ll, tokens = np.zeros(n), X.sum(axis=1)
        for t0 in range(0, n, 256):
            t1 = min(n, t0 + 256)
            Xb = X[t0:t1]
            with np.errstate(divide="ignore", invalid="ignore"):
                logs = np.where(Xb > 0, np.log(np.asarray(h[corners[t0:t1]],
                                                          dtype=np.float64)), 0.0)
            ll[t0:t1] = (Xb * logs).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(tokens > 0, ll / np.where(tokens > 0, tokens, 1.0), -np.inf)


def rank_key(scores):
    """The scores rounded to :data:`RANK_DECIMALS` decimals, as integers
    (``floor(s * 10^3 + 1/2)``, the same float64 operations as the page's)."""
    return np.floor(np.asarray(scores, dtype=np.float64) * float(10 ** RANK_DECIMALS) + 0.5)


def rank_scores(scores, n, tiebreak=None):
    """Indices of the ``n`` best documents: largest score first, scores equal to
    :data:`RANK_DECIMALS` decimals by larger ``tiebreak`` (when given; else exactly equal
    scores), then by lower index."""
    scores = np.asarray(scores, dtype=np.float64)
    if tiebreak is None:
        return np.argsort(-scores, kind="stable")[:n]
    tiebreak = np.asarray(tiebreak, dtype=np.float64)
    order = np.lexsort((np.arange(scores.shape[0]), -tiebreak, -rank_key(scores)))
    return order[:n]
