"""Where two groups of documents differ on a fitted grid (docs/counting_grids.md, "Where
groups differ").

Each document spreads one unit of mass over the cells: its posterior over window
positions, each window's share spread evenly over its cells (``s_t(i) / |W|`` of
:func:`countgrid.grid._browse.window_coverage`).  A group's mass in cell ``i`` is the sum
over its documents, ``y_g(i)``, out of ``n_g`` documents.  The difference of groups ``a``
and ``b`` in cell ``i`` is the log-odds ratio with an informative Dirichlet prior of
Monroe, Colaresi & Quinn (2008, "Fightin' words", eqs. 16-22), as for words there:

    delta_i = log((y_a(i) + alpha_i) / (n_a + alpha_0 - y_a(i) - alpha_i))
            - log((y_b(i) + alpha_i) / (n_b + alpha_0 - y_b(i) - alpha_i)),
    var(delta_i) ~= 1 / (y_a(i) + alpha_i) + 1 / (y_b(i) + alpha_i),

with ``alpha_i = alpha_0 * p(i)``, ``p`` the share of the cell in both groups together
and ``alpha_0`` the prior's weight (``prior_weight``, in documents).  A cell is marked
when its interval ``delta_i +- z sqrt(var)`` excludes 0.
"""
import math
from numbers import Real

import numpy as np
from scipy.special import ndtri

from countgrid._utils.counts import check_counts
from countgrid._utils.docs import fill_doc
from countgrid._utils.results import ResultDict
from countgrid.grid._browse import window_coverage
from countgrid.grid._posteriors import visit_posteriors
from countgrid.grid._regions import (
    GRID_AND_DOCUMENTS_DOC,
    check_region_labels,
    fitted_grid,
    region_sizes,
)
from countgrid.grid._torus import grid_size

__all__ = ["compare_groups", "GroupComparison", "group_masses", "grid_documents",
           "add_group_corners", "cell_masses"]


class GroupComparison(ResultDict):
    """The result of :func:`compare_groups`: a dict whose keys are also attributes.

    Keys: ``delta``, ``std``, ``low``, ``high``, ``marked`` (arrays of shape ``extent``),
    ``mass_a``, ``mass_b`` (the groups' document mass per cell, shape ``extent``),
    ``n_a``, ``n_b`` (documents per group), ``a``, ``b`` (the groups compared; ``b`` is
    None for "the rest"), ``level`` and ``prior_weight``.
    """


def grid_documents(grid, X):
    """``(grid, extent, X)``: the fitted CountingGrid of ``grid`` (:func:`fitted_grid`),
    its extent and the documents checked (float64 counts over the grid's words): the
    start of the statistics over documents on a grid."""
    grid = fitted_grid(grid)
    Xc, _ = check_counts(X, np.float64, n_features=np.shape(grid.pi_)[-1], owner="the grid")
    return grid, tuple(np.shape(grid.pi_)[:-1]), Xc


def add_group_corners(per_corner, codes, q):
    """Add the posteriors ``q`` (a block of documents' rows) into ``per_corner[g]``, the
    sum over group ``g``'s documents (``codes``, one per row; a negative code: no group)."""
    for g in np.unique(codes[codes >= 0]):
        per_corner[g] += q[codes == g].sum(axis=0, dtype=np.float64)


def cell_masses(per_corner, extent, window):
    """Per-corner posterior sums -> document mass per cell: each window's share spread
    evenly over its cells (``s_t(i) / |W|``; each document one unit)."""
    return window_coverage(per_corner, extent, window) / float(np.prod(window))


def group_masses(grid, X, codes, n_groups):
    """``(n_groups, L)`` float64: each group's document mass per cell (each document one
    unit, spread over the cells of its windows by its posterior)."""
    extent, window = grid._fitted_grid()
    per_corner = np.zeros((n_groups, grid_size(extent)))
    visit_posteriors(grid, X, lambda t0, t1, q, _: add_group_corners(per_corner, codes[t0:t1], q))
    return cell_masses(per_corner, extent, window)


def _check_prior_weight(prior_weight):
    """``prior_weight`` as a positive finite float, else ValueError naming it (a Python
    int of any size is a Real: one beyond float's range is refused, not numpy's
    TypeError)."""
    value = None
    if isinstance(prior_weight, Real) and not isinstance(prior_weight, bool):
        try:
            value = float(prior_weight)
        except OverflowError:
            raise ValueError(f"prior_weight must be a positive number within the range of a "
                             f"float (1.8e308), got a {type(prior_weight).__name__} beyond it"
                             ) from None
    if value is None or not math.isfinite(value) or value <= 0:
        shown = repr(prior_weight if value is None else value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise ValueError(f"prior_weight must be a positive number, got {shown}")
    return value


@fill_doc(grid_and_documents=GRID_AND_DOCUMENTS_DOC)
def compare_groups(grid, X, groups, a, b=None, *, level=0.95, prior_weight=None,
                   labels=None):
    """Where two groups of documents sit differently on a fitted grid.

    Per cell, the log-odds ratio of the two groups' document mass with an informative
    Dirichlet prior and its approximate standard error (Monroe, Colaresi & Quinn 2008;
    module docstring): positive where group ``a`` is over-represented.

    Parameters
    ----------
    {grid_and_documents}
    groups : array-like of shape (n_documents,)
        A group label per document (e.g. a metadata column).
    a : object
        The label of the first group (one label: a scalar, not a list).
    b : object, optional
        The label of the second group; None (default) compares ``a`` with all other
        documents.
    level : float in (0, 1), default=0.95
        The coverage of the intervals ``low``, ``high``.
    prior_weight : float, optional
        ``alpha_0``, the prior's weight in documents, a positive finite real (default:
        the number of cells, about one document of prior mass per cell, so that a cell few
        documents reach stays near 0; with ``labels``, the number of regions).
    labels : array-like of int of shape ``extent``, optional
        A region per cell (:func:`countgrid.grid.regions`): compare the regions instead
        of the cells, each region's mass the sum over its cells (more documents per
        unit, so narrower intervals); the arrays then have shape ``(n_regions,)``.  At
        least two regions, numbered ``0 .. n_regions - 1`` with none skipped (a region
        without cells, or one holding all the mass, has no log-odds).

    Returns
    -------
    GroupComparison
        ``delta``, ``std``, ``low``, ``high`` and ``marked`` of shape ``extent`` (or
        ``(n_regions,)`` with ``labels``), the groups' masses and sizes.

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> from countgrid.grid import compare_groups
    >>> rng = np.random.default_rng(0)
    >>> X = rng.poisson(0.5, size=(200, 20)); X[:100, :5] += 3
    >>> cg = countgrid.CountingGrid((5, 5), (2, 2), n_iter=10, random_state=0).fit(X)
    >>> res = compare_groups(cg, X, np.repeat(["x", "y"], 100), "x", "y")
    >>> res.delta.shape, bool(res.marked.any())
    ((5, 5), True)
    """
    grid, extent, Xc = grid_documents(grid, X)
    L = grid_size(extent)
    n = Xc.shape[0]
    groups = np.asarray(groups)
    if groups.ndim != 1 or groups.shape[0] != n:
        raise ValueError(f"groups must hold one label per document ({n}), got shape "
                         f"{groups.shape}")
    if isinstance(level, bool) or not isinstance(level, Real) or not 0 < level < 1:
        raise ValueError(f"level must be a number in (0, 1), got {level!r}")
    for name, label in (("a", a), ("b", b)):
        if np.ndim(label) != 0:
            raise TypeError(f"{name} must be one label of groups, got a "
                            f"{type(label).__name__} of shape {np.shape(label)}")
    in_a = groups == a
    if not in_a.any():
        raise ValueError(f"a={a!r} is not a label of groups")
    if b is None:
        in_b = ~in_a
    else:
        if b == a:
            raise ValueError("a and b are the same group")
        in_b = groups == b
        if not in_b.any():
            raise ValueError(f"b={b!r} is not a label of groups")
    if not in_b.any():
        raise ValueError(f"every document is in group a={a!r}: nothing to compare with")
    if prior_weight is None:
        alpha0 = float(L)
    else:
        alpha0 = _check_prior_weight(prior_weight)
    keep = in_a | in_b
    codes = np.where(in_a, 0, 1)[keep]
    mass = group_masses(grid, Xc[keep], codes, 2)
    shape = extent
    if labels is not None:
        region_of = check_region_labels(labels, extent)
        R = region_sizes(region_of).size
        if R < 2:
            raise ValueError("labels has one region: comparing the groups over regions "
                             "needs at least two (each group has all its mass in one)")
        mass = np.stack([np.bincount(region_of.ravel(), weights=m, minlength=R)
                         for m in mass])
        shape = (R,)
        if prior_weight is None:
            alpha0 = float(R)
    y_a, y_b = mass
    n_a, n_b = float(in_a.sum()), float(in_b.sum())
    pooled = (y_a + y_b) / (n_a + n_b)
    alpha = alpha0 * pooled / pooled.sum()
    delta = (np.log(y_a + alpha) - np.log(n_a + alpha0 - y_a - alpha)
             - np.log(y_b + alpha) + np.log(n_b + alpha0 - y_b - alpha))
    std = np.sqrt(1.0 / (y_a + alpha) + 1.0 / (y_b + alpha))
    # the upper (1 - level) / 2 quantile: ndtri(0.5 + level / 2) rounds to ndtri(1) = inf
    # for a level within 1e-16 of 1
    z = -float(ndtri((1.0 - float(level)) / 2.0))
    low, high = delta - z * std, delta + z * std
    return GroupComparison(
        delta=delta.reshape(shape), std=std.reshape(shape), low=low.reshape(shape),
        high=high.reshape(shape), marked=((low > 0) | (high < 0)).reshape(shape),
        mass_a=y_a.reshape(shape), mass_b=y_b.reshape(shape), n_a=int(n_a), n_b=int(n_b),
        a=a, b=b, level=float(level), prior_weight=alpha0)

