"""Regions of a fitted counting grid: contiguous groups of cells that use the same words,
at one or several resolutions, and the words that name them (docs/counting_grids.md,
"Regions").

The cells are clustered by Ward's criterion with a contiguity constraint (only regions
that touch on the torus merge; Ward, JASA 1963, the way scikit-learn's
``AgglomerativeClustering(connectivity=...)`` constrains it) on the Hellinger coordinates
``sqrt(h_i)`` of the cells' window distributions ``h_i`` (what a document placed there
draws its words from).  Those coordinates have one entry per word; the merges use their
first ``n_components`` principal coordinates, found by a randomised range finder
(Halko, Martinsson & Tropp 2011, Alg. 4.1 with one power iteration) over blocks of words,
so the grid's ``cells x words`` table is never copied.  One merge tree gives every
resolution: the partition into ``k`` regions is the tree cut at ``k``, so coarser
partitions are unions of the regions of finer ones.
"""
import heapq
from numbers import Integral

import numpy as np
import scipy.sparse as sp

from countgrid._utils import progress as _progress
from countgrid._utils.docs import fill_doc
from countgrid._utils.validation import check_is_fitted
from countgrid.grid import _words
from countgrid.grid._classifiers import (
    GenerativeCountingGridClassifier,
    _EmbeddingReadout,
)
from countgrid.grid._counting_grid import CountingGrid
from countgrid.grid._torus import grid_size

__all__ = ["regions", "region_words", "torus_edges", "ward_merges", "cut_tree",
           "check_region_labels", "region_sizes", "fitted_grid", "GRID_DOC",
           "GRID_AND_DOCUMENTS_DOC"]

#: The grid argument of the map's statistics (regions, region_words and those below).
GRID_DOC = """grid : CountingGrid, CountingGridClassifier or CountingGridRegressor
    A fitted grid; of a classifier or regressor, its ``grid_`` (as
    :func:`countgrid.maps.map_data` takes them)."""
#: The first arguments of the statistics over documents on a grid (compare_groups,
#: shares_by_period, region_effects; countgrid._utils.docs).
GRID_AND_DOCUMENTS_DOC = GRID_DOC + """
X : {array-like, sparse matrix} of shape (n_documents, n_features)
    The documents."""


def fitted_grid(grid):
    """The fitted :class:`CountingGrid` of ``grid``: the grid itself, or the ``grid_`` of a
    fitted CountingGridClassifier or CountingGridRegressor (as the map,
    ``countgrid.maps._data._resolve_grid``).  Anything else is a TypeError naming
    ``grid``; an unfitted one a NotFittedError; a grid whose ``window`` was changed by
    ``set_params`` since fit a ValueError naming ``grid`` and ``window`` (as every method
    of the grid refuses it: ``CountingGrid._inference_params``)."""
    if isinstance(grid, GenerativeCountingGridClassifier):
        raise TypeError("grid: a GenerativeCountingGridClassifier holds one grid per class; "
                        "pass one of its grids_ instead")
    if isinstance(grid, _EmbeddingReadout):
        check_is_fitted(grid, "grid_")
        grid = grid.grid_
    if not isinstance(grid, CountingGrid):
        raise TypeError(f"grid must be a fitted CountingGrid (or a CountingGridClassifier or "
                        f"CountingGridRegressor), got {type(grid).__name__}")
    if not hasattr(grid, "pi_"):
        check_is_fitted(grid, "pi_")                    # NotFittedError, naming fit
    try:
        check_is_fitted(grid, "pi_")                    # a parameter changed since fit
    except ValueError as exc:
        raise ValueError(f"grid: {exc}") from None
    return grid


def check_region_labels(labels, extent):
    """``labels`` as an int array of shape ``extent`` (a region per cell, numbered from 0,
    so below the number of cells), else ValueError naming ``labels``."""
    out = np.asarray(labels)
    if out.shape != tuple(extent) or out.dtype.kind not in "iu" or (out.size and out.min() < 0):
        raise ValueError(f"labels must be non-negative ints of the grid's shape "
                         f"{tuple(extent)}, got {out.dtype} of shape {out.shape}")
    _check_largest_label(out)
    return out.astype(np.int64, copy=False)


def _check_largest_label(labels):
    """A grid has at most one region per cell: a larger region number (``10**12``, or a
    uint64 beyond int64) would make numpy allocate that many regions or wrap negative."""
    if labels.size and int(labels.max()) >= labels.size:
        raise ValueError(f"labels holds region {int(labels.max())}, but a grid of "
                         f"{labels.size} cells has at most {labels.size} regions, numbered "
                         f"0 .. {labels.size - 1}")


def region_sizes(labels):
    """The cells of each region of checked labels (:func:`check_region_labels`), else a
    ValueError naming ``labels`` when a region number below the largest is skipped."""
    counts = np.bincount(np.ravel(labels))
    if (counts == 0).any():
        raise ValueError(f"labels skips region {int(np.flatnonzero(counts == 0)[0])}: "
                         "number the regions 0 .. n_regions - 1")
    return counts

#: Principal coordinates the merges use (enough for Ward costs between neighbours to
#: follow those of the full Hellinger coordinates: tests/grid/test_regions.py).
N_COMPONENTS = 32
#: Extra random directions of the range finder (Halko et al. 2011, section 4.2).
_OVERSAMPLING = 10


def torus_edges(extent):
    """The pairs ``(a, b)``, ``a < b``, of cells (C order) that touch on the torus: one
    step along one axis, with wrap-around; each pair once (a side of 1 or 2 cells has
    no or one neighbour along it)."""
    extent = tuple(int(e) for e in extent)
    index = np.arange(grid_size(extent)).reshape(extent)
    pairs = []
    for axis, side in enumerate(extent):
        if side < 2:
            continue
        other = np.roll(index, -1, axis=axis)
        pairs.append(np.stack([index.ravel(), other.ravel()], axis=1))
    if not pairs:
        return np.empty((0, 2), dtype=np.int64)
    edges = np.sort(np.concatenate(pairs), axis=1)
    return np.unique(edges, axis=0).astype(np.int64)


def _hellinger_coordinates(grid, n_components):
    """Principal coordinates, shape (cells, <= n_components), of the cells' centred
    ``sqrt(h_i)``, from two passes over blocks of words of ``h_``."""
    blocks = list(_sqrt_h_blocks(grid))
    L = blocks[0][2].shape[1]
    Z = blocks[-1][1]
    r = min(n_components + _OVERSAMPLING, L, Z)
    mean = np.empty(Z)
    for a, b, sb in blocks:
        mean[a:b] = sb.mean(axis=1)
    if Z <= r or L <= r:                       # small: the exact coordinates
        S = np.empty((L, Z))
        for a, b, sb in blocks:
            S[:, a:b] = sb.T - mean[a:b]
        U, s, _ = np.linalg.svd(S, full_matrices=False)
        k = min(n_components, s.size)
        return U[:, :k] * s[:k]
    rng = np.random.default_rng(0)
    omega = rng.standard_normal((Z, r))

    def times(M):                              # S_c @ M, M of shape (Z, r)
        out = np.zeros((L, M.shape[1]))
        for a, b, sb in blocks:
            out += sb.T @ M[a:b]
        return out - np.outer(np.ones(L), mean @ M)

    def transposed_times(Q):                   # S_c.T @ Q, Q of shape (L, r)
        out = np.empty((Z, Q.shape[1]))
        colsum = Q.sum(axis=0)
        for a, b, sb in blocks:
            out[a:b] = sb @ Q - np.outer(mean[a:b], colsum)
        return out

    Q, _ = np.linalg.qr(times(omega))
    Q, _ = np.linalg.qr(times(transposed_times(Q)))      # one power iteration
    B = transposed_times(Q).T                             # (r, Z)
    Ub, s, _ = np.linalg.svd(B, full_matrices=False)
    k = min(n_components, s.size)
    return (Q @ Ub[:, :k]) * s[:k]


def _sqrt_h_blocks(grid):
    """``(a, b, sqrt(h_[:, a:b]).T)`` in float64, from ``h_`` or, while it is deferred,
    from ``pi_`` a block of words at a time (the same bits either way)."""
    for a, b, hb in grid._histogram_blocks():
        yield a, b, np.sqrt(np.maximum(hb, 0.0, dtype=np.float64))


def ward_merges(F, edges, weights=None):
    """Ward's agglomeration of the rows of ``F`` under a contiguity constraint.

    Only clusters joined by an edge merge; each step merges the touching pair whose
    merge raises the within-cluster sum of squares least,
    ``w_a w_b / (w_a + w_b) ||c_a - c_b||^2`` (ties by the smaller cluster ids).  A
    merged cluster takes the smaller id of the two.

    Parameters
    ----------
    F : ndarray of shape (n, k)
    edges : ndarray of shape (m, 2) of int
    weights : ndarray of shape (n,), optional
        Row weights (default 1).

    Returns
    -------
    ndarray of shape (n_merges, 2), int64
        ``(kept, absorbed)`` in the order of the merges: ``n - 1`` of them on a
        connected graph.
    """
    F = np.asarray(F, dtype=np.float64)
    n = F.shape[0]
    centre = F.copy()
    weight = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64).copy()
    neighbours = [set() for _ in range(n)]
    for a, b in np.asarray(edges, dtype=np.int64):
        if a != b:
            neighbours[a].add(int(b))
            neighbours[b].add(int(a))
    version = [0] * n
    alive = [True] * n

    def cost(a, b):
        d = centre[a] - centre[b]
        return weight[a] * weight[b] / (weight[a] + weight[b]) * float(d @ d)

    heap = [(cost(a, b), a, b, 0, 0) for a in range(n) for b in neighbours[a] if a < b]
    heapq.heapify(heap)
    merges = []
    while heap:
        _, a, b, va, vb = heapq.heappop(heap)
        if not (alive[a] and alive[b]) or version[a] != va or version[b] != vb:
            continue
        total = weight[a] + weight[b]
        centre[a] = (weight[a] * centre[a] + weight[b] * centre[b]) / total
        weight[a] = total
        alive[b] = False
        version[a] += 1
        for c in neighbours[b]:
            neighbours[c].discard(b)
            if c != a:
                neighbours[c].add(a)
                neighbours[a].add(c)
        neighbours[a].discard(b)
        neighbours[b] = set()
        merges.append((a, b))
        for c in neighbours[a]:
            lo, hi = min(a, c), max(a, c)
            heapq.heappush(heap, (cost(lo, hi), lo, hi, version[lo], version[hi]))
    return np.asarray(merges, dtype=np.int64).reshape(-1, 2)


def cut_tree(merges, n, n_clusters):
    """The partition of ``n`` items after the first ``n - n_clusters`` merges, labelled
    ``0 .. n_clusters - 1`` by size (largest first, ties by the smallest member)."""
    root = np.arange(n)

    def find(i):
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    for kept, absorbed in merges[: n - n_clusters]:
        root[find(absorbed)] = find(kept)
    reps = np.array([find(i) for i in range(n)])
    uniq, inverse, counts = np.unique(reps, return_inverse=True, return_counts=True)
    first = np.full(uniq.size, n)
    np.minimum.at(first, inverse, np.arange(n))
    order = np.lexsort((first, -counts))
    rank = np.empty(uniq.size, dtype=np.int64)
    rank[order] = np.arange(uniq.size)
    return rank[inverse]


def _check_levels(n_regions, n_cells):
    single = isinstance(n_regions, Integral) and not isinstance(n_regions, bool)
    levels = [n_regions] if single else n_regions
    try:
        levels = list(levels)
    except TypeError:
        raise TypeError(f"n_regions must be an int or a sequence of ints, got "
                        f"{type(n_regions).__name__}") from None
    if not levels:
        raise ValueError("n_regions is empty: give at least one number of regions")
    for k in levels:
        if isinstance(k, bool) or not isinstance(k, Integral):
            raise TypeError(f"n_regions must hold ints, got {k!r}")
        if not 1 <= k <= n_cells:
            raise ValueError(f"n_regions must be between 1 and the grid's {n_cells} cells, "
                             f"got {k}")
    return single, [int(k) for k in levels]


@fill_doc(grid=GRID_DOC)
def regions(grid, n_regions=12, *, n_components=N_COMPONENTS):
    """Contiguous regions of a fitted grid's cells that use the same words.

    Ward's clustering of the cells with a contiguity constraint on the torus (only
    regions that touch merge), on the Hellinger coordinates of the cells' window
    distributions ``h_`` (module docstring; docs/counting_grids.md, "Regions").  Every
    region is connected across the wrap-around.  Several resolutions come from one merge
    tree, so they nest: each region of a coarser level is a union of regions of a finer
    one.

    Parameters
    ----------
    {grid}
    n_regions : int or sequence of int, default=12
        The number of regions, or several numbers (one partition each), each between 1
        and the number of cells.
    n_components : int, default=32
        Principal coordinates of ``sqrt(h_)`` the merges compare.

    Returns
    -------
    ndarray of int64
        Shape ``extent`` for one number of regions, ``(len(n_regions),) + extent`` for a
        sequence: the region of every cell, numbered by size (0 the largest; ties by the
        first cell in C order).

    Notes
    -----
    Deterministic: the range finder's random directions have a fixed seed.  The
    coordinates come from BLAS products, whose last bits may depend on the BLAS thread
    count; a merge whose cost ties with another's to those bits could then change.

    Examples
    --------
    Two and five regions of a small grid (one partition per requested count):

    >>> import numpy as np
    >>> from countgrid.grid import CountingGrid, regions
    >>> counts = np.random.default_rng(0).poisson(1.0, size=(40, 12))
    >>> labels = regions(CountingGrid((6, 6), (2, 2), n_iter=5, random_state=0).fit(counts),
    ...                  [2, 5])
    >>> labels.shape, sorted(np.unique(labels[1]).tolist())
    ((2, 6, 6), [0, 1, 2, 3, 4])
    """
    grid = fitted_grid(grid)
    extent, _ = grid._fitted_grid()
    n = grid_size(extent)
    single, levels = _check_levels(n_regions, n)
    if isinstance(n_components, bool) or not isinstance(n_components, Integral) \
            or n_components < 1:
        raise ValueError(f"n_components must be a positive int, got {n_components!r}")
    F = _hellinger_coordinates(grid, int(n_components))
    merges = ward_merges(F, torus_edges(extent))
    out = np.stack([cut_tree(merges, n, k).reshape(extent) for k in levels])
    return out[0] if single else out


@fill_doc(grid=GRID_DOC)
def region_words(grid, labels, n_words=10, feature_names=None, weighting="relevance",
                 X=None):
    """The words that name each region: its cells' average word distribution ranked as a
    cell's words are (:func:`word_weights`; by default LDAvis' relevance against the whole
    map).

    Parameters
    ----------
    {grid}
    labels : array-like of int of shape ``extent``
        A region per cell, ``0 .. n_regions - 1`` (:func:`regions`), none skipped (so
        fewer than the number of cells).
    n_words : int, default=10
    feature_names : sequence of str, optional
        The vocabulary (default: the grid's ``feature_names_in_`` if it has one).
    weighting : {"relevance", "probability", "lift", "idf"} or array-like, \
default="relevance"
        As in :meth:`CountingGrid.top_words`.
    X : {array-like, sparse matrix} of shape (n_documents, n_features), optional
        The documents whose idf weights the words, for ``weighting="idf"``.

    Returns
    -------
    ndarray of shape (n_regions, n_words)
        Best first (ties by feature index): words when a vocabulary is known, else int64
        feature indices.
    """
    grid = fitted_grid(grid)
    pi = np.asarray(grid.pi_)
    extent, Z = tuple(pi.shape[:-1]), pi.shape[-1]
    labels = np.asarray(labels)
    if labels.shape != extent:
        raise ValueError(f"labels has shape {labels.shape}; the grid's extent is {extent}")
    if labels.dtype.kind not in "iu" or labels.size == 0 or labels.min() < 0:
        raise ValueError("labels must hold the region numbers 0 .. n_regions - 1 of the "
                         "cells (countgrid.grid.regions)")
    _check_largest_label(labels)
    flat = labels.ravel().astype(np.int64)
    counts = region_sizes(flat)
    n_regions = counts.size
    indicator = sp.csr_matrix((1.0 / counts[flat], (flat, np.arange(flat.size))),
                              shape=(n_regions, flat.size))
    mean_pi = np.asarray(indicator @ pi.reshape(-1, Z).astype(np.float64))
    with _progress.quiet_passes():          # a few regions: not a pass worth reporting
        return _words.top_words(mean_pi, n_words, grid._vocabulary(feature_names),
                                weighting=weighting, X=X, prior=getattr(grid, "prior_", None),
                                window=grid._fitted_grid()[1], marginal_pi=pi)
