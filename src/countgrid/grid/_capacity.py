"""How large a counting grid the data can fill: the ``extent="auto"`` rule and the warning
for grids that leave many cells unused (docs/counting_grids.md, "Choosing the grid").

The capacity ``kappa = L / |W|`` is the number of non-overlapping windows that fit on the
grid, an "equivalent number of topics" (paper section 2); the paper finds kappa ~ 100 best
for 1,700 posts, and accuracy depends on kappa more than on E and W separately (Table 1).
Fewer documents fill fewer windows: a 40x40 grid learned on 150 documents leaves most of
its cells to the pseudocount.
"""
import warnings

import numpy as np

from countgrid.exceptions import CapacityWarning
from countgrid.grid._torus import grid_size, window_sums

__all__ = ["auto_extent", "capacity_for", "unused_cells", "warn_unused_cells"]

#: Capacity of ``extent="auto"``: ``kappa = clip(N / DOCS_PER_KAPPA, KAPPA_MIN, KAPPA_MAX)``
#: for N training documents (fitted to the sweeps of docs/results.md, "Counting grids —
#: defaults").
DOCS_PER_KAPPA = 3.0
KAPPA_MIN = 16.0
KAPPA_MAX = 100.0
#: A cell is unused when the documents whose windows cover it carry less than this
#: fraction of the average cell's tokens.
UNUSED_MASS = 0.01
#: Warn when more than this fraction of the cells is unused (a 40x40 grid on 62 samples:
#: 56 %; the 16x16 grid that classifies them best: 29 %).
UNUSED_WARN = 1.0 / 3.0


def capacity_for(n_documents):
    """The capacity ``kappa`` of ``extent="auto"`` for ``n_documents`` training documents.

    Parameters
    ----------
    n_documents : int
        Documents the grid is learned on.

    Returns
    -------
    float
        ``clip(n_documents / 3, 16, 100)``.
    """
    return float(min(KAPPA_MAX, max(KAPPA_MIN, n_documents / DOCS_PER_KAPPA)))


def auto_extent(n_documents, window):
    """The grid of ``extent="auto"``: capacity ``kappa = clip(n_documents / 3, 16, 100)``
    around ``window``.

    ``E_d = round(W_d kappa^(1/D))`` (at least ``W_d``), so that ``L / |W| ~ kappa``:
    a 4x4 window gives 16x16 up to 48 documents, 24x24 for 108, 32x32 for 192 and 40x40
    from 300 on.

    Parameters
    ----------
    n_documents : int
        Documents the grid is learned on.
    window : tuple of int
        The window.

    Returns
    -------
    tuple of int
        The extent.
    """
    scale = capacity_for(n_documents) ** (1.0 / len(window))
    return tuple(max(int(w), int(round(w * scale))) for w in window)


def unused_cells(position_mass, extent, window, num_threads=0):
    """Fraction of the cells that no document's window covers with noticeable mass.

    Parameters
    ----------
    position_mass : ndarray of shape (L,)
        ``sum_t |c_t| q_t(k)``: the tokens placed at each window position.
    extent, window : tuple of int
    num_threads : int, default=0

    Returns
    -------
    float
        Fraction of the cells whose covering windows carry less than ``UNUSED_MASS`` of
        the mean cell's tokens.
    """
    cover = window_sums(np.asarray(position_mass, dtype=np.float64)[None, :], extent, window,
                        backward=True, num_threads=num_threads)[0]
    mean = cover.mean()
    if not mean > 0:
        return 0.0
    return float(np.count_nonzero(cover < UNUSED_MASS * mean)) / grid_size(extent)


def warn_unused_cells(fraction, extent, window, n_documents, owner="CountingGrid"):
    """Warn (:class:`CapacityWarning`) when more than ``UNUSED_WARN`` of the cells are
    unused and ``extent="auto"`` would choose a smaller grid, naming it.

    The smallest grid of ``extent="auto"`` (capacity 16) on a few dozen documents also
    leaves many cells unused; no smaller grid is advised there, so nothing is said (a
    per-class grid of the generative classifier on a small class, for instance).

    Parameters
    ----------
    fraction : float
        :func:`unused_cells` of the fit.
    extent, window : tuple of int
    n_documents : int
    owner : str, default="CountingGrid"
    """
    if fraction <= UNUSED_WARN:
        return
    suggestion = auto_extent(n_documents, window)
    if grid_size(suggestion) >= grid_size(extent):
        return
    warnings.warn(
        f"{owner}: {100 * fraction:.0f}% of the {grid_size(extent)} cells of the "
        f"{'x'.join(map(str, extent))} grid hold almost no documents (capacity "
        f"L/|W| = {grid_size(extent) / grid_size(window):.0f} for {n_documents} documents): "
        f"the grid is too large for the data; extent='auto' would use "
        f"{'x'.join(map(str, suggestion))} (docs/counting_grids.md, 'Choosing the grid')",
        CapacityWarning, stacklevel=3)
