"""Alignment of two counting grids: the symmetry of the torus that best matches them
(docs/counting_grids.md, "Aligning two grids").

A grid's likelihood does not change when its cells are translated on the torus, when an
axis is flipped, or when two axes of the same length are swapped: two fits of the same
corpus (other seeds, other periods, other corpora over the same vocabulary) can differ by
any of these.  :func:`align` finds the one that maximises the summed Bhattacharyya
coefficient of the cells it pairs, every translation of each axis map at once by FFT
cross-correlation, the words in blocks.
"""
import itertools
import math

import numpy as np

from countgrid._utils.memory import check_memory
from countgrid._utils.results import ResultDict
from countgrid.grid._counting_grid import CountingGrid
from countgrid.grid._regions import fitted_grid

__all__ = ["GridAlignment", "align"]

#: Words whose FFTs are held at once (complex128: 16 bytes x cells x words).
_WORD_BLOCK_BYTES = 1 << 26


class GridAlignment(ResultDict):
    """The result of :func:`align`: a dict whose keys are also attributes.

    Keys: ``axes`` (tuple: axis ``d`` of the aligned grid is axis ``axes[d]`` of ``a``),
    ``flips`` (tuple of bool: which of those axes are reversed), ``shift`` (tuple: the
    translation applied last, cells per axis), ``similarity`` (the mean over cells of the
    Bhattacharyya coefficient of the paired cells' word distributions, in [0, 1]: 1 when
    ``a`` maps onto ``b`` exactly), ``chance_similarity`` (the mean coefficient of two
    cells drawn at random, one from each grid: what ``similarity`` is worth for a map
    whose cells all look alike), ``cell_similarity`` (the coefficient of every cell of
    ``b``, shape ``extent``), ``aligned`` (``a``'s ``pi_`` in ``b``'s frame, shape
    ``extent + (n_words,)``) and ``scores`` (the best similarity of each axis map, in the
    order of ``candidates``, a list of ``(axes, flips)``).

    Methods :meth:`cells` and :meth:`positions` carry other coordinates of ``a`` into
    ``b``'s frame.
    """

    def __repr__(self):
        return (f"GridAlignment(axes={self['axes']}, flips={self['flips']}, "
                f"shift={self['shift']}, similarity={self['similarity']:.6g})")

    def cells(self, index):
        """``a``'s cell coordinates in ``b``'s frame.

        Parameters
        ----------
        index : array-like of int, shape (..., n_dims)
            Cells of ``a`` (0-based, one coordinate per axis, last).

        Returns
        -------
        ndarray of int64, same shape
        """
        return self._map(index, np.zeros(len(self["axes"]), dtype=np.int64))

    def positions(self, corners, window):
        """Window positions (first cells, as :meth:`CountingGrid.positions` gives them)
        of ``a`` in ``b``'s frame: a reversed axis moves a window's first cell to the
        other end of the window.

        Parameters
        ----------
        corners : array-like of int, shape (..., n_dims)
        window : sequence of int
            ``a``'s window (the same as ``b``'s up to the axis map).

        Returns
        -------
        ndarray of int64, same shape
        """
        window = np.asarray(tuple(window), dtype=np.int64)
        if window.shape != (len(self["axes"]),):
            raise ValueError(f"window must have {len(self['axes'])} entries, got "
                             f"{window.shape[0] if window.ndim else 'a scalar'}")
        return self._map(corners, window - 1)

    def _map(self, index, span):
        """``index`` through the axis map, the flips (a flipped axis sends cell ``i`` of a
        block ``i .. i + span`` to ``E - 1 - i - span``) and the shift."""
        axes, flips = self["axes"], self["flips"]
        extent = np.asarray(self["extent"], dtype=np.int64)
        idx = np.asarray(index)
        if idx.dtype.kind not in "iu" or idx.ndim < 1 or idx.shape[-1] != len(axes):
            raise ValueError(f"index must be integers with {len(axes)} coordinates in its "
                             f"last axis, got dtype {idx.dtype} and shape {idx.shape}")
        idx = idx.astype(np.int64)[..., list(axes)]
        span = np.asarray(span, dtype=np.int64)[list(axes)]
        flip = np.asarray(flips, dtype=bool)
        idx = np.where(flip, extent - 1 - idx - span, idx)
        return np.mod(idx + np.asarray(self["shift"], dtype=np.int64), extent)


def _pi_of(grid, name, on):
    """``(pi, compared, window)`` of a fitted grid (``compared``: its ``h_`` for
    ``on="windows"``, else ``pi_``; ``window`` its window) or of a pi-like array (compared
    as given; ``window`` None)."""
    if isinstance(grid, CountingGrid) or hasattr(grid, "grid_"):
        g = fitted_grid(grid)
        pi = np.asarray(g.pi_, dtype=np.float64)
        compared = np.asarray(g.h_, dtype=np.float64) if on == "windows" else pi
        return pi, compared, g._fitted_grid()[1]
    try:
        pi = np.asarray(grid, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a fitted CountingGrid or an array of word "
                        f"distributions of shape extent + (n_words,), got "
                        f"{type(grid).__name__}") from None
    if pi.ndim < 2 or min(pi.shape) < 1:
        raise ValueError(f"{name} must have shape extent + (n_words,) with at least one "
                         f"axis of cells, got {pi.shape}")
    if not np.isfinite(pi).all() or (pi < 0).any():
        raise ValueError(f"{name} must hold finite, non-negative word distributions")
    return pi, pi, None


def _normalised_sqrt(pi, name):
    sums = pi.sum(axis=-1, keepdims=True)
    if not (sums > 0).all():
        raise ValueError(f"{name} has a cell whose word weights sum to 0")
    return np.sqrt(pi / sums)


def _chance(A, B):
    """The mean Bhattacharyya coefficient of two cells drawn at random, one of each grid
    (``A`` and ``B``: square roots of word distributions, extent + (n_words,))."""
    V = A.shape[-1]
    n_a, n_b = A.size // V, B.size // V
    return float(A.reshape(-1, V).sum(axis=0) @ B.reshape(-1, V).sum(axis=0)) / (n_a * n_b)


def chance_similarity(a, b, *, on="windows"):
    """``align(a, b, on=on).chance_similarity`` without the alignment: what two cells
    drawn at random, one of each grid, score (it does not depend on the map)."""
    _, pi_a, _ = _pi_of(a, "a", on)
    _, pi_b, _ = _pi_of(b, "b", on)
    return _chance(_normalised_sqrt(pi_a, "a"), _normalised_sqrt(pi_b, "b"))


def _candidates(ext_a, ext_b, allow_flips, allow_transpose):
    """``(axes, flips)`` of every axis map sending ``a``'s extent onto ``b``'s, in a fixed
    order: the identity first."""
    n = len(ext_a)
    perms = [p for p in itertools.permutations(range(n))
             if all(ext_a[p[d]] == ext_b[d] for d in range(n))]
    if not allow_transpose:
        perms = [p for p in perms if p == tuple(range(n))]
    flip_sets = list(itertools.product((False, True), repeat=n)) if allow_flips \
        else [(False,) * n]
    return [(p, f) for p in perms for f in flip_sets]


def _transformed(A, axes, flips):
    """``A`` (extent + (words,)) with its cell axes permuted by ``axes`` and reversed
    where ``flips``, cell ``i`` of a reversed axis going to ``E - 1 - i``."""
    out = np.transpose(A, tuple(axes) + (A.ndim - 1,))
    for d, f in enumerate(flips):
        if f:
            out = np.flip(out, axis=d)
    return out


def align(a, b, *, on="windows", flips=True, transpose=True):
    """The torus symmetry that best maps grid ``a`` onto grid ``b``.

    Over every axis map ``g`` (a permutation of axes of equal length, ``transpose``, and a
    reversal of any subset of axes, ``flips``) and every translation ``t``, maximise the
    summed Bhattacharyya coefficient of the paired cells' word distributions,

        S(g, t) = sum_k sum_w sqrt(a'_{k, w} b_{k, w}),   a' = roll(g(a), t),

    computed for all translations at once as an FFT cross-correlation over the cells, the
    words in blocks (docs/counting_grids.md, "Aligning two grids").  Fitted grids are
    compared by their window distributions ``h_`` (``on="windows"``: what a document at
    each position draws its words from, smoother than single cells; regions use them too)
    or by their cells ``pi_`` (``on="cells"``); the map is reported in cells either way.
    Exact: a grid translated, flipped and transposed is mapped back with ``similarity`` 1
    (up to rounding).  Ties go to the first axis map in the order of ``candidates`` (the identity
    first) and the smallest translation in C order.

    Parameters
    ----------
    a, b : fitted CountingGrid (or a CountingGridClassifier's grid) or array-like
        The grids, or arrays of word distributions (shape ``extent + (n_words,)``,
        compared as given), over the same vocabulary and, up to the order of the axes,
        the same extent.
    on : {"windows", "cells"}, default="windows"
        For fitted grids: compare the window distributions ``h_`` or the cells ``pi_``.
        With windows, a reversed axis moves the windows' first cells: the shift reported
        is that of the cells (``aligned`` is ``a``'s ``pi_`` moved by it), while
        ``similarity`` and ``cell_similarity`` are those of the windows, per window
        position of ``b``.
    flips : bool, default=True
        Consider reversed axes.
    transpose : bool, default=True
        Consider swapping axes of the same length.

    Returns
    -------
    GridAlignment

    Raises
    ------
    TypeError
        If ``a`` or ``b`` is neither a fitted grid nor an array.
    ValueError
        If the vocabularies differ in size, no axis map sends ``a``'s extent onto
        ``b``'s, or a cell's word weights are not a distribution.

    Examples
    --------
    >>> import numpy as np
    >>> from countgrid.grid import align
    >>> pi = np.random.default_rng(0).dirichlet(np.ones(6), size=(5, 4))
    >>> moved = np.roll(np.flip(pi, axis=0), (2, 1), axis=(0, 1))
    >>> r = align(pi, moved)
    >>> r.flips, r.shift, round(r.similarity, 12)
    ((True, False), (2, 1), 1.0)
    """
    if not isinstance(flips, bool) or not isinstance(transpose, bool):
        raise TypeError("flips and transpose must be bool")
    if on not in ("windows", "cells"):
        raise ValueError(f"on must be 'windows' or 'cells', got {on!r}")
    cells_a, pi_a, window_a = _pi_of(a, "a", on)
    _, pi_b, _ = _pi_of(b, "b", on)
    if pi_a.shape[-1] != pi_b.shape[-1]:
        raise ValueError(f"a has {pi_a.shape[-1]} words and b {pi_b.shape[-1]}: grids are "
                         "aligned over the same vocabulary")
    ext_a, ext_b = pi_a.shape[:-1], pi_b.shape[:-1]
    cands = _candidates(ext_a, ext_b, flips, transpose)
    if not cands:
        raise ValueError(f"a's extent {ext_a} cannot be mapped onto b's {ext_b} by a "
                         + ("permutation of its axes" if transpose else "the identity")
                         + " (grids of other shapes cannot be aligned cell to cell)")
    n_cells, V = math.prod(ext_b), pi_b.shape[-1]
    check_memory(8 * n_cells * V * 3, f"the square roots of two grids of {n_cells} cells x "
                 f"{V} words", "align smaller grids")
    A = _normalised_sqrt(pi_a, "a")
    B = _normalised_sqrt(pi_b, "b")
    axes = tuple(range(len(ext_b)))
    step = max(1, _WORD_BLOCK_BYTES // (16 * n_cells))
    corr = np.zeros((len(cands),) + ext_b)
    for w0 in range(0, V, step):
        FB = np.fft.fftn(B[..., w0:w0 + step], axes=axes)
        for c, (p, f) in enumerate(cands):
            FA = np.fft.fftn(_transformed(A[..., w0:w0 + step], p, f), axes=axes)
            corr[c] += np.fft.ifftn((np.conj(FA) * FB).sum(axis=-1), axes=axes).real
    scores = corr.reshape(len(cands), -1).max(axis=1)
    best = int(np.argmax(scores))
    shift = np.unravel_index(int(np.argmax(corr[best])), ext_b)
    p, f = cands[best]
    cell = np.einsum("...w,...w->...", np.roll(_transformed(A, p, f), shift, axis=axes), B)
    if window_a is not None and on == "windows":
        # the window at i covers cells i .. i + w - 1; reversed, its first cell is the
        # other end: the cells move w - 1 further than the windows
        shift = tuple((t + (window_a[p[d]] - 1 if f[d] else 0)) % ext_b[d]
                      for d, t in enumerate(shift))
    aligned = np.roll(_transformed(cells_a, p, f), shift, axis=axes)
    return GridAlignment(axes=p, flips=tuple(bool(x) for x in f),
                         shift=tuple(int(s) for s in shift), extent=tuple(ext_b),
                         similarity=float(cell.mean()), cell_similarity=cell,
                         chance_similarity=_chance(A, B),
                         aligned=aligned, scores=scores / n_cells, candidates=cands)

