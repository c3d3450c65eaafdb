"""What layers above the models read of a fitted counting grid, block by block: the
posteriors of documents (:func:`visit_posteriors`), their largest entries
(:func:`largest_posteriors`) and their log-likelihoods in given windows
(:func:`window_loglik`).  The interactive map (countgrid.maps), the command line
and countgrid.metrics use these instead of the grid's private methods."""
import numpy as np

from countgrid._utils.counts import check_counts
from countgrid._utils.docs import fill_doc
from countgrid._utils.validation import check_is_fitted
from countgrid.grid import _wrappers
from countgrid.grid._counting_grid import CountingGrid

__all__ = ["visit_posteriors", "window_loglik"]

#: The arguments both functions start with (countgrid._utils.docs).
_GRID_AND_COUNTS_DOC = """grid : CountingGrid
    A fitted grid.
X : {array-like, sparse matrix} of shape (n_samples, n_features)
    Non-negative counts over the grid's features."""


def _fitted_grid(grid):
    if not isinstance(grid, CountingGrid):
        raise TypeError(f"grid must be a CountingGrid, got {type(grid).__name__}")
    check_is_fitted(grid, "pi_")
    return grid


@fill_doc(grid_and_counts=_GRID_AND_COUNTS_DOC)
def visit_posteriors(grid, X, visit):
    """Call ``visit`` with the posteriors of the documents ``X``, one block of rows at a time.

    The posteriors are those of :meth:`CountingGrid.transform`; memory stays
    O(block x cells) whatever the number of documents.  Inside a progress context
    (``countgrid._utils.progress.passes``) the pass is reported (stage " posteriors",
    unit "document") when it starts and after every block.

    Parameters
    ----------
    {grid_and_counts}
    visit : callable
        ``visit(t0, t1, q_block, loglik_block)`` for each block of rows ``t0:t1``:
        ``q_block`` of shape (t1 - t0, n_cells) holds the posteriors over window
        positions (C order of the grid's extent) and ``loglik_block`` of shape
        (t1 - t0,) the documents' log-likelihoods.  Both are buffers reused by the next
        block: copy what must outlive the call.

    Returns
    -------
    loglik : ndarray of shape (n_samples,), float64
        The log-likelihood of every document.

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> from countgrid.grid import visit_posteriors
    >>> X = np.random.default_rng(0).poisson(1.0, size=(30, 3))
    >>> cg = countgrid.CountingGrid((4, 4), (2, 2), n_iter=3, random_state=0).fit(X)
    >>> best = []
    >>> _ = visit_posteriors(cg, X, lambda t0, t1, q, ll: best.append(q.argmax(axis=1)))
    >>> bool((np.concatenate(best) == cg.transform(X).argmax(axis=1)).all())
    True
    """
    return _fitted_grid(grid)._visit_posteriors(X, visit)


def largest_posteriors(q, k, num_threads=0):
    """The ``min(k, L)`` largest entries of each row of a block of posteriors ``q`` (n, L),
    largest first, ties by the lower position (the truncated posteriors of the map and of
    countgrid.external): selected by the C kernel of the sparse M-step
    (``cg_grid_topk_posterior``, O(L) a row), then the k kept sorted.

    Parameters
    ----------
    q : ndarray of shape (n, L), float32 or float64, C-contiguous
        Rows as :func:`visit_posteriors` gives them: finite, non-negative, each with a
        positive entry.
    k : int
    num_threads : int, default=0
        OpenMP threads (0: the OpenMP default).

    Returns
    -------
    positions : ndarray of shape (n, min(k, L)), int32
    values : ndarray of shape (n, min(k, L)), the dtype of q
        The entries of ``q`` themselves (not renormalised).
    """
    q = np.ascontiguousarray(q)
    positions, _ = _wrappers.topk_posterior(q, k, num_threads=num_threads)  # ascending
    values = np.take_along_axis(q, positions, axis=1)
    # a stable sort of descending values keeps equal ones in ascending position order
    order = np.argsort(-values, axis=1, kind="stable")
    return (np.take_along_axis(positions, order, axis=1),
            np.take_along_axis(values, order, axis=1))


@fill_doc(grid_and_counts=_GRID_AND_COUNTS_DOC)
def window_loglik(grid, X, windows):
    """Log-likelihood per token of each document in one window of the grid.

    The tie-break of :meth:`CountingGrid.documents_near` and of the map's document
    lists (docs/map.md): document ``t`` scores
    ``sum_z x_tz log h_{windows[t], z} / sum_z x_tz``.  Sparse counts read only the
    entries of ``h_`` they need, so a grid loaded without its ``h_`` does not derive it.

    Parameters
    ----------
    {grid_and_counts}
    windows : array-like of int of shape (n_samples,)
        Flat (C-order) index of the window of each document, e.g. the most probable one.

    Returns
    -------
    ndarray of shape (n_samples,), float64
        ``-inf`` for an empty document.
    """
    grid = _fitted_grid(grid)
    X, _ = check_counts(X, np.float64, n_features=grid.n_features_in_,
                        owner=type(grid).__name__)
    windows = np.asarray(windows, dtype=np.int64)
    if windows.shape != (X.shape[0],):
        raise ValueError(f"windows must have shape ({X.shape[0]},), one per document, got "
                         f"{windows.shape}")
    n_cells = int(np.prod(np.shape(grid.pi_)[:-1]))
    if windows.size and not 0 <= windows.min() <= windows.max() < n_cells:
        raise ValueError(f"windows must be flat cell indices in [0, {n_cells})")
    return grid._window_loglik(X, windows)
