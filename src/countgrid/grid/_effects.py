"""How covariates of the documents move their use of the map's regions (docs/counting_grids.md,
"Covariates and regions"): the estimateEffect of the structural topic model (Roberts,
Stewart & Airoldi 2016, section 3.3; the stm package's ``estimateEffect``) with regions in
place of topics.

A document at window position ``k`` uses region ``r`` in the share ``u_r(k)`` of the
window's cells that lie in ``r`` (the shares sum to 1).  Its position is uncertain
(the posterior ``q_t``), so, as stm's "method of composition", each of ``n_draws``
rounds draws one position per document from its posterior, regresses the usages on the
covariates by least squares (one regression per region, the same design), and draws the
coefficients from their sampling distribution ``N(beta_hat, sigma^2 (X'X)^-1)``; the
estimates and intervals are the mean and quantiles of those draws, which carry both the
uncertainty of where the documents sit and that of the regression.
"""
from numbers import Integral, Real

import numpy as np

from countgrid._utils.docs import fill_doc
from countgrid._utils.results import TableResult
from countgrid._utils.validation import check_random_state
from countgrid.grid._groups import grid_documents
from countgrid.grid._posteriors import visit_posteriors
from countgrid.grid._regions import GRID_AND_DOCUMENTS_DOC, check_region_labels
from countgrid.grid._torus import grid_size

__all__ = ["region_effects", "RegionEffects", "window_region_shares"]


class RegionEffects(TableResult):
    """The result of :func:`region_effects`: a dict whose keys are also attributes.

    Keys: ``terms`` (the design's columns: ``"(intercept)"``, a numeric covariate's name,
    ``"name=level"`` for a level of a categorical one against its first level),
    ``estimate``, ``std``, ``low``, ``high`` (shape ``(n_regions, n_terms)``), ``draws``
    (shape ``(n_draws, n_regions, n_terms)``), ``level``, ``n_documents``, and
    ``reference`` (each categorical covariate's reference level).
    """

    def table(self, names=None):
        """One row per region and term.

        Parameters
        ----------
        names : sequence of str, optional
            One name per region (default: their numbers).

        Returns
        -------
        dict
            Columns ``region``, ``term``, ``estimate``, ``std``, ``low``, ``high``.
        """
        R, P = self["estimate"].shape
        regions = list(range(R)) if names is None else [str(v) for v in names]
        if len(regions) != R:
            raise ValueError(f"names must name the {R} regions, got {len(regions)}")
        out = {"region": [regions[r] for r in range(R) for _ in range(P)],
               "term": [t for _ in range(R) for t in self["terms"]]}
        for key in ("estimate", "std", "low", "high"):
            out[key] = self[key].ravel().copy()
        return out


def window_region_shares(labels, window):
    """``U[k, r]``: the share of the cells of the window at position ``k`` (C order) that
    lie in region ``r``; rows sum to 1."""
    labels = np.asarray(labels)
    R = int(labels.max()) + 1
    U = np.zeros((labels.size, R))
    rows = np.arange(labels.size)
    for d in np.ndindex(*window):
        moved = np.roll(labels, [-x for x in d], axis=tuple(range(labels.ndim)))
        np.add.at(U, (rows, moved.ravel()), 1.0)
    return U / float(np.prod(window))


def _design(covariates, n):
    """The design matrix (intercept first), its column names and the reference levels."""
    if not isinstance(covariates, dict) or not covariates:
        raise TypeError("covariates must be a non-empty dict name -> 1-D array (one value "
                        "per document)")
    columns, terms, reference = [np.ones(n)], ["(intercept)"], {}
    for name, values in covariates.items():
        arr = np.asarray(values)
        if arr.ndim != 1 or arr.shape[0] != n:
            raise ValueError(f"covariates[{name!r}] must be 1-D with {n} entries (one per "
                             f"document), got shape {arr.shape}")
        if arr.dtype.kind in "iuf":
            x = arr.astype(np.float64)
            if not np.isfinite(x).all():
                raise ValueError(f"covariates[{name!r}] has missing or infinite values")
            columns.append(x)
            terms.append(str(name))
        elif arr.dtype.kind in "bUSO":
            labels = arr.astype(str)
            levels = np.unique(labels)
            if len(levels) < 2:
                raise ValueError(f"covariates[{name!r}] has a single level: nothing to "
                                 "estimate")
            if len(levels) > 100:
                raise ValueError(f"covariates[{name!r}] has {len(levels)} levels (at most "
                                 "100): group the rare ones")
            reference[str(name)] = str(levels[0])
            for lev in levels[1:]:
                columns.append((labels == lev).astype(np.float64))
                terms.append(f"{name}={lev}")
        else:
            raise TypeError(f"covariates[{name!r}] must hold numbers or labels, got dtype "
                            f"{arr.dtype}")
    D = np.column_stack(columns)
    if np.linalg.matrix_rank(D) < D.shape[1]:
        raise ValueError("the covariates are collinear (a column is a combination of the "
                         "others, or of the intercept): drop one")
    return D, terms, reference


@fill_doc(grid_and_documents=GRID_AND_DOCUMENTS_DOC)
def region_effects(grid, X, covariates, labels, *, n_draws=25, level=0.95, random_state=0):
    """Effects of document covariates on the use of the map's regions, with intervals.

    Per region, the least-squares regression of the documents' usage of the region on
    the covariates, its uncertainty propagated from the documents' posteriors by the
    method of composition (stm's ``estimateEffect``; module docstring).

    Parameters
    ----------
    {grid_and_documents}
    covariates : dict of str -> array-like of shape (n_documents,)
        Numeric covariates enter as they are; labels (str, bool) as indicators of each
        level but the first (sorted), the reference.
    labels : array-like of int of shape ``extent``
        A region per cell (:func:`countgrid.grid.regions`).
    n_draws : int, default=25
        Rounds of the method of composition (stm's ``nsims``).
    level : float in (0, 1), default=0.95
        The coverage of the intervals ``low``, ``high`` (quantiles of the draws).
    random_state : int, numpy Generator or None, default=0
        Seed of the draws; the same seed gives the same table for any number of threads.

    Returns
    -------
    RegionEffects
        ``estimate``, ``std``, ``low``, ``high`` per region and term, ``terms``.

    Examples
    --------
    >>> import numpy as np
    >>> from countgrid.grid import CountingGrid, region_effects, regions
    >>> rng = np.random.default_rng(0)
    >>> counts = rng.poisson(0.5, size=(200, 20)); counts[:100, :5] += 3
    >>> cg = CountingGrid((6, 6), (2, 2), n_iter=20, random_state=0).fit(counts)
    >>> party = np.repeat(["blue", "red"], 100)
    >>> fx = region_effects(cg, counts, {"party": party}, regions(cg, 3))
    >>> fx.terms, fx.estimate.shape
    (['(intercept)', 'party=red'], (3, 2))
    """
    grid, extent, Xc = grid_documents(grid, X)
    _, window = grid._fitted_grid()
    L = grid_size(extent)
    n = Xc.shape[0]
    region_of = check_region_labels(labels, extent)
    if isinstance(n_draws, bool) or not isinstance(n_draws, Integral) or not 1 <= n_draws <= 10000:
        raise ValueError(f"n_draws must be an int in [1, 10000], got {n_draws!r}")
    if isinstance(level, bool) or not isinstance(level, Real) or not 0 < level < 1:
        raise ValueError(f"level must be a number in (0, 1), got {level!r}")
    D, terms, reference = _design(covariates, n)
    if n <= D.shape[1]:
        raise ValueError(f"X has {n} documents for the {D.shape[1]} terms of covariates (with "
                         f"the intercept): the regression needs more documents than terms")
    rng = check_random_state(random_state)
    U = window_region_shares(region_of, window)               # (L, R)
    R = U.shape[1]
    # the positions drawn: one per document and round, in document order
    uniforms = rng.random((n, n_draws))
    positions = np.empty((n, n_draws), dtype=np.int64)

    def visit(t0, t1, q, _):
        cdf = np.cumsum(np.asarray(q, dtype=np.float64), axis=1)
        cdf /= cdf[:, -1:]
        for j in range(t1 - t0):
            positions[t0 + j] = np.minimum(np.searchsorted(cdf[j], uniforms[t0 + j],
                                                           side="right"), L - 1)

    visit_posteriors(grid, Xc, visit)
    G = np.linalg.inv(D.T @ D)
    chol = np.linalg.cholesky(G)
    P = D.shape[1]
    draws = np.empty((n_draws, R, P))
    for s in range(n_draws):
        Y = U[positions[:, s]]                                 # (n, R) usages
        beta = G @ (D.T @ Y)                                   # (P, R)
        resid = Y - D @ beta
        sigma = np.sqrt((resid ** 2).sum(axis=0) / (n - P))    # (R,)
        noise = chol @ rng.standard_normal((P, R))             # ~ N(0, (X'X)^-1)
        draws[s] = (beta + noise * sigma[None, :]).T
    alpha = (1.0 - level) / 2.0
    return RegionEffects(
        terms=terms, reference=reference, estimate=draws.mean(axis=0),
        std=draws.std(axis=0, ddof=1) if n_draws > 1 else np.zeros((R, P)),
        low=np.quantile(draws, alpha, axis=0), high=np.quantile(draws, 1 - alpha, axis=0),
        draws=draws, level=float(level), n_documents=int(n))
