"""Where the documents of each period sit on a fitted grid (docs/counting_grids.md,
"Over time"; the map's time slider, docs/map.md "Time").

Each document spreads one unit of mass over the cells, as for groups
(as in ``compare_groups``: its posterior over window positions, each window's
share spread evenly over its cells).  A period's mass in cell ``i`` is the sum over its
documents, ``m_p(i)``; its density is ``m_p(i) / n_p`` (a distribution over the cells),
and a region's share of the period is the sum of the density over the region's cells.
"""
import numpy as np

from countgrid._utils.dates import parse_dates, period_codes
from countgrid._utils.docs import fill_doc
from countgrid._utils.results import TableResult, region_names
from countgrid.grid._groups import grid_documents, group_masses
from countgrid.grid._regions import GRID_AND_DOCUMENTS_DOC, check_region_labels
from countgrid.grid._torus import grid_size

__all__ = ["shares_by_period", "PeriodShares"]


class PeriodShares(TableResult):
    """The result of :func:`shares_by_period`: a dict whose keys are also attributes.

    Keys: ``period`` (the period chosen), ``labels`` (one str per period), ``starts``
    (their first days, datetime64[D]), ``n_documents`` (per period), ``n_undated``,
    ``mass`` and ``density`` (shape ``(n_periods,) + extent``), and with region labels
    ``regions`` (the labels, shape ``extent``) and ``region_share`` (shape
    ``(n_periods, n_regions)``).  ``to_frame()`` is indexed by period.
    """

    _frame_index = "period"

    def table(self, names=None):
        """The region shares by period as columns (needs region labels).

        Parameters
        ----------
        names : sequence of str, optional
            One distinct name per region (default ``"region 0"``, ...).

        Returns
        -------
        dict
            ``"period"`` (labels), ``"start"``, ``"n_documents"``, then one column of
            shares per region.
        """
        if "region_share" not in self:
            raise ValueError("no regions: pass labels= to shares_by_period (e.g. "
                             "countgrid.grid.regions(grid, 8))")
        share = self["region_share"]
        R = share.shape[1]
        names = region_names(names, R)
        out = {"period": list(self["labels"]), "start": self["starts"].copy(),
               "n_documents": self["n_documents"].copy()}
        if set(names) & set(out):
            raise ValueError(f"names must not be {sorted(set(names) & set(out))}")
        out.update((name, share[:, r].copy()) for r, name in enumerate(names))
        return out


@fill_doc(grid_and_documents=GRID_AND_DOCUMENTS_DOC)
def shares_by_period(grid, X, dates, period="auto", labels=None):
    """Where each period's documents sit on the grid, and each region's share of them.

    Parameters
    ----------
    {grid_and_documents}
    dates : array-like of shape (n_documents,)
        A date per document: ISO 8601 strings, Unix timestamps in seconds, ``datetime``
        objects or ``datetime64`` values; missing dates (empty, None, NaN, NaT) leave
        the document out.
    period : {"auto", "day", "week", "month", "year"}, default="auto"
        Calendar days, weeks from Monday, months or years (UTC); "auto" takes the finest
        that cuts the dates' span into at most 60 periods.  At most 1,000 periods.
    labels : array-like of int of shape ``extent``, optional
        A region per cell (e.g. :func:`countgrid.grid.regions`): adds ``region_share``.

    Returns
    -------
    PeriodShares
        ``mass[p]`` sums to ``n_documents[p]``; ``density[p]`` to 1 (0 for a period
        without documents); ``region_share[p]`` to 1 likewise.

    Examples
    --------
    >>> import numpy as np
    >>> from countgrid.grid import CountingGrid, regions, shares_by_period
    >>> counts = np.random.default_rng(1).poisson(1.0, size=(60, 10))
    >>> cg = CountingGrid((5, 5), (2, 2), n_iter=5, random_state=0).fit(counts)
    >>> days = np.repeat(["2024-01-15", "2024-02-15", "2024-03-15"], 20)
    >>> res = shares_by_period(cg, counts, days, period="month", labels=regions(cg, 3))
    >>> res.period, res.labels, res.n_documents.tolist(), res.region_share.shape
    ('month', ['2024-01', '2024-02', '2024-03'], [20, 20, 20], (3, 3))
    """
    grid, extent, Xc = grid_documents(grid, X)
    L = grid_size(extent)
    n = Xc.shape[0]
    when = parse_dates(dates, "dates")
    if when.shape[0] != n:
        raise ValueError(f"dates must hold one date per document ({n}), got {when.shape[0]}")
    chosen, codes, names, starts = period_codes(when, period, "period")
    region_of = None if labels is None else check_region_labels(labels, extent)
    P = len(names)
    dated = codes >= 0
    counts = np.bincount(codes[dated], minlength=P).astype(np.int64)
    mass = group_masses(grid, Xc[dated], codes[dated], P) if P else np.zeros((0, L))
    density = np.divide(mass, counts[:, None], out=np.zeros_like(mass),
                        where=counts[:, None] > 0)
    out = PeriodShares(period=chosen, labels=names, starts=starts, n_documents=counts,
                       n_undated=int(n - dated.sum()),
                       mass=mass.reshape((P,) + extent), density=density.reshape((P,) + extent))
    if region_of is not None:
        R = int(region_of.max()) + 1 if region_of.size else 0
        onehot = np.zeros((L, R))
        onehot[np.arange(L), region_of.ravel()] = 1.0
        out["regions"] = region_of.copy()
        out["region_share"] = density @ onehot
    return out
