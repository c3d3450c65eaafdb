"""Time-sliced counting grids: one grid per period of a date column, each started from
the previous period's grid and drawn toward it, so that a place on the map keeps its
meaning across periods (docs/counting_grids.md, "Time-sliced grids").

Every period descends from the layout, a CountingGrid of all the dated documents.  Period
``p``'s grid is learned by EM on its documents (those of the last ``span`` periods) with a
Dirichlet prior on every cell centred on the previous grid (the layout for the first):
the M-step is the grid's (docs/counting_grids.md, "Learning") plus ``beta pi^{p-1}_i(z)``
in the unnormalised update, ``beta = smoothness |W| N / |E|`` (``N`` the mean tokens of
the periods), so that ``smoothness`` weighs the previous grid against an average
period's documents (0: a plain warm start, BrowseCloud's sliding-window trainer).
"""
from functools import partial
from numbers import Integral, Real

import numpy as np

from countgrid._base import BaseEstimator, TransformerMixin
from countgrid._engine.em_loop import EMMonitor, start_fit
from countgrid._utils import progress as _progress
from countgrid._utils.counts import check_counts
from countgrid._utils.dates import PERIODS, choose_period, parse_dates, period_codes
from countgrid._utils.fitted import (array, check_distribution, fitted_array, fitted_int,
                                     fitted_real, scalar)
from countgrid._utils.memory import check_memory
from countgrid._utils.param_validation import Interval, Options
from countgrid._utils.results import TableResult, region_names
from countgrid._utils.threads import limit_blas_threads
from countgrid._utils.validation import check_is_fitted, check_random_state, check_shape_tuple
from countgrid.grid import _wrappers
from countgrid.grid._counting_grid import (GRID_PARAMETER_CONSTRAINTS, CountingGrid, grid_like,
                                          grid_view)
from countgrid.grid._capacity import auto_extent
from countgrid.grid._groups import group_masses
from countgrid.grid._regions import regions as grid_regions
from countgrid.grid._em import (ALPHA, BLOCK_ELEMENTS, GridStatistics, block_counts,
                                grid_counts, local_estep)
from countgrid.grid._torus import check_grid, grid_size, refuse_bare_int
from countgrid.streaming._blocks import Blocks

__all__ = ["TimeSlicedCountingGrid", "RegionChanges", "anchored_mstep", "periods_view"]

#: "auto" periods: the finest calendar period giving at most this many periods.
AUTO_MAX_SLICES = 12


def anchored_mstep(n, h, pi, extent, window, rho, alpha, anchor, weight, num_threads):
    """The counting-grid M-step with a Dirichlet prior centred on ``anchor``, in place on
    ``pi`` (n_features, L)::

        U_i(z) = rho + weight * anchor_i(z) + QH_i(z) (pi_i(z) + alpha)
        pi_i(z) = U_i(z) / sum_z U_i(z)

    (``QH`` as in ``cg_grid_mstep``; the kernel ``cg_grid_mstep_anchored``, docs/c_api.md).
    ``weight`` 0 is the plain M-step, bit for bit; ``n`` is used as scratch."""
    if weight == 0.0:
        _wrappers.mstep(n, h, pi, extent, window, rho, alpha, num_threads)
    else:
        _wrappers.mstep_anchored(n, h, pi, extent, window, anchor, weight, rho, alpha,
                                 num_threads)
    return pi


def choose_slices(dates):
    """The finest calendar period ("day", "week", "month", "year") giving at most
    :data:`AUTO_MAX_SLICES` periods between the first and the last date."""
    return choose_period(dates, AUTO_MAX_SLICES)


class RegionChanges(TableResult):
    """The result of :meth:`TimeSlicedCountingGrid.region_changes`: a dict whose keys are
    also attributes.

    Keys: ``periods`` (labels), ``regions`` (the region of every cell, shape ``extent``),
    ``share`` (``(n_periods, n_regions)``: each region's share of each period's
    documents), ``drift`` (``(n_periods - 1, n_regions)``: 1 - Bhattacharyya coefficient
    of the region's mean word distribution in consecutive periods), ``present``
    (with hysteresis: a region becomes present when its share reaches ``threshold`` and
    absent when it falls below half of it), ``threshold``, and ``events``: ``(period,
    region, "born" or "died")`` for each region whose presence changes between two
    consecutive periods.
    ``to_frame()`` is indexed by period.
    """

    _frame_index = "period"

    def table(self, names=None):
        """Columns per period: each region's share and its drift from the period before.

        Parameters
        ----------
        names : sequence of str, optional
            One distinct name per region (default ``"region 0"``, ...).

        Returns
        -------
        dict of str -> list or ndarray
        """
        R = self["share"].shape[1]
        names = region_names(names, R)
        out = {"period": list(self["periods"])}
        drift = np.vstack([np.full((1, R), np.nan), self["drift"]])
        for r, name in enumerate(names):
            out[f"{name} share"] = self["share"][:, r]
            out[f"{name} drift"] = drift[:, r]
        return out


class TimeSlicedCountingGrid(TransformerMixin, BaseEstimator):
    __doc__ = """Time-sliced counting grid: one grid per period, each kept in place by
    the previous one.

    The documents are split into calendar periods by their dates.  A
    :class:`CountingGrid` of all the dated documents (its window schedule included) is the
    layout every period descends from: the grid of each period starts from the previous
    one (the layout for the first) and is learned by EM with a Dirichlet prior on every
    cell centred on it, weighing ``smoothness`` times an average period's documents
    (docs/counting_grids.md, "Time-sliced grids").  A place on the map then means the
    same theme across periods, and how much each cell's words move between periods is
    the drift.

    Parameters
    ----------
    extent : "auto" or tuple of int, default="auto"
        Grid shape of every period; "auto" sizes it to the largest period's documents
        (:func:`countgrid.grid.auto_extent`).
    window : tuple of int, default=(4, 4)
    period : {"auto", "day", "week", "month", "year"}, default="auto"
        Calendar periods (UTC; weeks from Monday); "auto": the finest giving at most 12
        periods (years when none does: a span of 32 years gives 32).  Periods without
        documents are skipped.
    span : int, default=1
        Each period's grid is learned on the documents of its last ``span`` periods (a
        sliding window, as BrowseCloud's trainer; 1: each period alone).
    smoothness : float, default=2.0
        Weight of the previous period's grid against an average period's documents (0: a
        plain warm start).  2 gave the best likelihood of validation documents held out
        of the training years of python_changelog among 0.25-8 (docs/results.md,
        "Counting grids — time-sliced grids").
    n_iter, tol, pseudocount, posterior_floor, window_schedule, min_iter, dtype, \
num_threads, random_state, verbose
        As :class:`CountingGrid` (``n_iter`` and ``tol`` for the layout and every period;
        ``min_iter`` and the window schedule for the layout: a period starts from a
        fitted grid).

    Attributes
    ----------
    pi_ : ndarray of shape (n_periods,) + extent + (n_features,)
    h_ : ndarray of shape (n_periods,) + extent + (n_features,)
        Window histograms of every period's grid.
    period_ : str
        The calendar period used.
    period_labels_ : ndarray of str, shape (n_periods,)
        ``2021`` (year), ``2021-03`` (month), ``2021-03-01`` (week, its Monday; day).
    n_documents_ : ndarray of int, shape (n_periods,)
        Documents each period's grid was learned on.
    log_likelihood_ : ndarray of shape (n_periods,)
        Final exact log-likelihood of those documents.
    n_iter_ : ndarray of int, shape (n_periods,)
        EM updates of each period (from the grid before it).
    anchor_weight_ : ndarray of shape (n_periods,)
        ``beta`` of each period (one value: the prior weighs ``smoothness`` average
        periods).
    pseudocount_, posterior_floor_ : float
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> rng = np.random.default_rng(0)
    >>> X = rng.poisson(1.0, size=(90, 20))
    >>> dates = np.repeat(["2020-01-15", "2021-01-15", "2022-01-15"], 30)
    >>> tg = countgrid.grid.TimeSlicedCountingGrid((6, 6), (3, 3), n_iter=5,
    ...                                            random_state=0).fit(X, times=dates)
    >>> tg.period_, tg.period_labels_.tolist(), tg.pi_.shape
    ('year', ['2020', '2021', '2022'], (3, 6, 6, 20))
    >>> tg.transform(X, times=dates).shape
    (90, 36)
    """

    _parameter_constraints = {
        **GRID_PARAMETER_CONSTRAINTS,
        "period": [Options("auto", *PERIODS)],
        "span": [Interval(Integral, 1, None)],
        "smoothness": [Interval(Real, 0, None)],
    }
    del _parameter_constraints["learn_prior"]
    _fitted_schema = {"pi_": array("float", "n_periods", "extent...", "n_features"),
                      "h_": array("float", "n_periods", "extent...", "n_features"),
                      "period_": scalar("str"),
                      "period_labels_": array("str", "n_periods"),
                      "n_documents_": array("int", "n_periods"),
                      "log_likelihood_": array("float", "n_periods"),
                      "n_iter_": array("int", "n_periods"),
                      "anchor_weight_": array("float", "n_periods"),
                      "pseudocount_": scalar("real"), "posterior_floor_": scalar("real"),
                      "n_features_in_": scalar("int", bind="n_features")}
    _derived_arrays = ("h_",)
    _inference_params = ("window",)

    def __init__(self, extent="auto", window=(4, 4), period="auto", span=1, smoothness=2.0,
                 n_iter=100, tol=1e-5, pseudocount="auto", posterior_floor="auto",
                 window_schedule="auto", min_iter=30, dtype=np.float32, num_threads=None,
                 random_state=None, verbose=0):
        self.extent = extent
        self.window = window
        self.period = period
        self.span = span
        self.smoothness = smoothness
        self.n_iter = n_iter
        self.tol = tol
        self.pseudocount = pseudocount
        self.posterior_floor = posterior_floor
        self.window_schedule = window_schedule
        self.min_iter = min_iter
        self.dtype = dtype
        self.num_threads = num_threads
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ fit
    def _period_codes(self, times, n, name="times"):
        """``(period, codes, labels)`` of ``times`` (one per document; None: one period)."""
        if times is None:
            return "all", np.zeros(n, dtype=np.int64), ["all"]
        dates = parse_dates(times, name)
        if dates.shape != (n,):
            raise ValueError(f"{name} must hold one date per document ({n}), got "
                             f"{dates.shape[0]}")
        if np.isnat(dates).all():
            raise ValueError(f"{name}: no document has a date")
        period = choose_slices(dates) if self.period == "auto" else self.period
        _, codes, labels, _ = period_codes(dates, period, "period")
        return period, codes, labels

    def fit(self, X, y=None, times=None):
        """Learn one grid per period.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative counts.
        y : ignored
        times : array-like of shape (n_samples,), optional
            The documents' dates (ISO 8601 strings, Unix seconds, ``datetime`` or
            ``datetime64`` values; missing: NaT, None or ""); documents without a date are
            left out.  None: every document in one period.

        Returns
        -------
        self
        """
        dtype, nt = start_fit(self, X)
        counts = grid_counts(X, dtype, owner=type(self).__name__)
        if not counts.lengths.sum() > 0:
            raise ValueError("X contains no counts: every document is empty")
        period, codes, labels = self._period_codes(times, counts.n_samples)
        present = np.unique(codes[codes >= 0])
        span = int(self.span)
        # each period's documents: those of its last `span` periods
        windows = [np.flatnonzero((codes > p - span) & (codes <= p)) for p in present]
        sizes = np.array([len(w) for w in windows], dtype=np.int64)
        extent = self.extent
        if isinstance(extent, str):          # "auto": sized to the largest period
            refuse_bare_int(self.window, "window", 2)
            extent = auto_extent(int(sizes.max()), check_shape_tuple(self.window, "window"))
        extent, window = check_grid(extent, self.window)
        P = grid_size(extent)
        rng = check_random_state(self.random_state)
        # pi_ and h_ hold a grid per period (checked before the layout's fit)
        check_memory(2 * len(windows) * P * counts.X.shape[1] * np.dtype(dtype).itemsize,
                     f"the grids of {len(windows)} periods of extent {tuple(extent)} over "
                     f"{counts.X.shape[1]} words", "choose longer periods (period=), a "
                     "smaller extent or fewer words")
        # the layout: a CountingGrid of every dated document, which every period descends
        # from (period 0 starts from it and is drawn toward it)
        layout = grid_like(self, extent, window, rng).fit(counts.X[codes >= 0])
        pi = np.ascontiguousarray(layout.pi_.reshape(P, -1).T)
        rho, floor = layout.pseudocount_, layout.posterior_floor_
        # beta: `smoothness` times the mass an average period's tokens give a cell in the
        # update (each token's mass |W| spread over the cells' windows); one weight for
        # every period, so that a sparse period cannot wash out the cells its few
        # documents do not reach (docs/counting_grids.md, "Time-sliced grids")
        tokens = np.array([float(counts.X[rows].sum()) for rows in windows])
        beta = float(self.smoothness) * np.prod(window) * float(tokens.mean()) / P
        Z = pi.shape[0]
        # each period's grid written in place as it is learned: memory of one model
        out = np.empty((len(windows),) + tuple(extent) + (Z,), dtype=pi.dtype)
        history, iters = [], []
        for p, rows in enumerate(windows):
            data = Blocks(counts.X[rows], partial(block_counts, dtype=dtype))
            with limit_blas_threads(nt, active=data.is_dense):
                monitor = self._anchored_em(local_estep(data, nt), pi, pi.copy(), beta,
                                            extent, window, rho, floor, nt,
                                            f" period {labels[present[p]]}")
            history.append(float(monitor.history[-1]))
            iters.append(int(monitor.n_updates))
            out[p] = pi.T.reshape(tuple(extent) + (Z,))
        self.pi_ = out
        self.period_ = period
        self.period_labels_ = np.array([labels[p] for p in present], dtype=str)
        self.n_documents_ = sizes
        self.log_likelihood_ = np.asarray(history, dtype=np.float64)
        self.n_iter_ = np.asarray(iters, dtype=np.int64)
        self.anchor_weight_ = np.full(len(windows), beta)
        self.pseudocount_ = float(rho)
        self.posterior_floor_ = float(floor)
        self.n_features_in_ = int(Z)
        self.h_ = self._derive_array("h_")
        return self

    def _anchored_em(self, estep_all, pi, anchor, beta, extent, window, rho, floor, nt,
                     stage):
        """EM in place on ``pi`` (Z, L) with the M-step drawn toward ``anchor``
        (:func:`anchored_mstep`); returns the monitor."""
        Z, L = pi.shape
        h, logh = np.empty_like(pi), np.empty_like(pi)
        stats = GridStatistics(Z, L, pi.dtype, False)
        # no min_iter: a period starts from a fitted grid, past the slow start of EM from
        # a random one that min_iter guards (docs/counting_grids.md, "Learning")
        monitor = EMMonitor("TimeSlicedCountingGrid", int(self.n_iter), float(self.tol),
                            verbose=self.verbose, stage=stage)
        for it in range(int(self.n_iter) + 1):
            _wrappers.histograms(pi, extent, window, h, logh, nt)
            last = it == self.n_iter
            loglik = estep_all(logh, None, floor, None if last else stats.reset())
            if (it > 0 and monitor.record(loglik, n_updates=it)) or last:
                break
            anchored_mstep(stats.n, h, pi, extent, window, rho, ALPHA, anchor, beta, nt)
        monitor.finish()
        return monitor

    # ------------------------------------------------------------ fitted state
    def _derive_array(self, name):
        """``h_`` from ``pi_`` and ``window``, one period at a time."""
        if name != "h_":
            return super()._derive_array(name)
        h = np.empty(np.shape(self.pi_), dtype=np.asarray(self.pi_).dtype)
        for p in range(len(h)):         # a period at a time: memory of one more grid
            h[p] = self.period_grid(p).h_
        return h

    def _check_fitted_state(self):
        pi = fitted_array(self, "pi_", nonnegative=True)
        if pi.ndim < 3 or pi.dtype not in (np.float32, np.float64):
            raise ValueError(f"pi_ must be a float array of shape (n_periods,) + extent + "
                             f"(n_features,), got {pi.dtype} {pi.shape}")
        check_distribution("pi_", pi, axis=-1)
        check_grid(pi.shape[1:-1], self.window)
        n_periods = pi.shape[0]
        if fitted_int(self, "n_features_in_", 1) != pi.shape[-1]:
            raise ValueError(f"n_features_in_ = {self.n_features_in_} but pi_ has "
                             f"{pi.shape[-1]} features")
        labels = np.asarray(self.period_labels_)
        if labels.dtype.kind != "U" or labels.shape != (n_periods,) \
                or len(set(labels.tolist())) != n_periods:
            raise ValueError(f"period_labels_ must hold {n_periods} distinct strings, got "
                             f"{labels.dtype} {labels.shape}")
        for name in ("n_documents_", "n_iter_"):
            fitted_array(self, name, shape=(n_periods,), float_only=False, nonnegative=True)
        fitted_array(self, "log_likelihood_", shape=(n_periods,), finite=False)
        fitted_array(self, "anchor_weight_", shape=(n_periods,), nonnegative=True)
        fitted_real(self, "pseudocount_", 0)
        fitted_real(self, "posterior_floor_", 0, 1)
        if self.period_ not in ("all",) + tuple(PERIODS):
            raise ValueError(f"period_ must be one of {('all',) + tuple(PERIODS)}, got "
                             f"{str(self.period_)[:20]!r}")

    # ------------------------------------------------------------ inference
    def period_grid(self, period):
        """One period's grid as a fitted :class:`CountingGrid` (every tool that reads a
        grid reads it: ``top_words``, the pictures, ``to_html``).

        Parameters
        ----------
        period : int or str
            The period's index or label (``period_labels_``).

        Returns
        -------
        CountingGrid
        """
        check_is_fitted(self, "pi_")
        p = self._period_index(period)
        extra = {"feature_names_in_": self.feature_names_in_} \
            if hasattr(self, "feature_names_in_") else {}
        # EM stops early only when it converges (or the likelihood falls)
        return grid_view(self, self.pi_[p], self.h_[p] if "h_" in self.__dict__ else None,
                         log_likelihood_=self.log_likelihood_[p:p + 1].copy(),
                         n_iter_=int(self.n_iter_[p]),
                         converged_=bool(self.n_iter_[p] < self.n_iter),
                         pseudocount_=self.pseudocount_,
                         posterior_floor_=self.posterior_floor_,
                         n_features_in_=self.n_features_in_, **extra)

    def _period_index(self, period):
        labels = [str(v) for v in np.asarray(self.period_labels_)]
        if isinstance(period, str):
            if period not in labels:
                raise ValueError(f"period {period[:40]!r} is not a fitted period; the "
                                 f"periods: {labels[:12]}")
            return labels.index(period)
        if not isinstance(period, (Integral, np.integer)) or isinstance(period, bool):
            raise TypeError(f"period must be an int or a label, got {period!r}")
        if not 0 <= period < len(labels):
            raise ValueError(f"period must be in [0, {len(labels)}), got {period}")
        return int(period)

    def periods(self, times):
        """The fitted period of each date (-1: no date, or a period not fitted).

        Parameters
        ----------
        times : array-like of shape (n_samples,)

        Returns
        -------
        ndarray of int64, shape (n_samples,)
        """
        check_is_fitted(self, "pi_")
        dates = parse_dates(times, "times")
        labels = [str(v) for v in np.asarray(self.period_labels_)]
        if self.period_ == "all":
            return np.where(np.isnat(dates), -1, 0).astype(np.int64)
        _, codes, all_labels, _ = period_codes(dates, self.period_, "times")
        index = {lab: k for k, lab in enumerate(labels)}
        lookup = np.array([index.get(lab, -1) for lab in all_labels] + [-1], dtype=np.int64)
        return lookup[codes]

    def _by_period(self, X, times):
        """``(n_samples, parts)``: the documents checked, and for each fitted period among
        their dates ``(period index, rows, grid, counts of those rows)``."""
        check_is_fitted(self, "pi_")
        dtype = np.asarray(self.pi_).dtype
        counts = grid_counts(X, dtype, n_features=self.n_features_in_,
                             owner=type(self).__name__)
        n = counts.n_samples
        if times is None:
            if np.shape(self.pi_)[0] != 1:
                raise ValueError("times: the model has one grid per period; pass the "
                                 "documents' dates")
            codes = np.zeros(n, dtype=np.int64)
        else:
            codes = self.periods(times)
            if codes.shape != (n,):
                raise ValueError(f"times must hold one date per document ({n}), got "
                                 f"{codes.shape[0]}")
            if (codes < 0).any():
                bad = int(np.flatnonzero(codes < 0)[0])
                raise ValueError(f"times: document {bad} has no date or a date outside the "
                                 f"fitted periods {[str(v) for v in self.period_labels_][:12]}")
        parts = []
        for p in np.unique(codes):
            rows = np.flatnonzero(codes == p)
            parts.append((int(p), rows, self.period_grid(int(p)), counts.X[rows]))
        return n, parts

    def transform(self, X, times=None):
        """Posterior over window positions of each document under its period's grid.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        times : array-like of shape (n_samples,), optional
            The documents' dates (needed unless the model has one period).

        Returns
        -------
        ndarray of shape (n_samples, L)
        """
        n, parts = self._by_period(X, times)
        out = np.empty((n, grid_size(np.shape(self.pi_)[1:-1])), dtype=np.asarray(self.pi_).dtype)
        for _, rows, grid, Xp in parts:
            out[rows] = grid.transform(Xp)
        return out

    def score_samples(self, X, times=None):
        """Exact log-likelihood of each document under its period's grid.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        times : array-like of shape (n_samples,), optional
            The documents' dates (needed unless the model has one period).

        Returns
        -------
        ndarray of shape (n_samples,), float64
        """
        n, parts = self._by_period(X, times)
        out = np.empty(n)
        for _, rows, grid, Xp in parts:
            out[rows] = grid.score_samples(Xp)
        return out

    def score(self, X, y=None, times=None):
        """Total exact log-likelihood of X (see :meth:`score_samples`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : ignored
        times : array-like of shape (n_samples,), optional
            The documents' dates.

        Returns
        -------
        float
        """
        return float(np.sum(self.score_samples(X, times)))

    def positions(self, X, times=None, anchor="corner"):
        """MAP window position of each document on its period's grid (as
        :meth:`CountingGrid.positions`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        times : array-like of shape (n_samples,), optional
            The documents' dates.
        anchor : {"corner", "center"}, default="corner"
            The window's first cell, or its centre cell.

        Returns
        -------
        ndarray of shape (n_samples, D), int64
        """
        n, parts = self._by_period(X, times)
        out = np.empty((n, np.ndim(self.pi_) - 2), dtype=np.int64)
        for _, rows, grid, Xp in parts:
            out[rows] = grid.positions(Xp, anchor=anchor)
        return out

    def drift(self):
        """How much each window's words move from one period to the next:
        ``1 - BC(h^{p}_k, h^{p-1}_k)`` (``BC`` the Bhattacharyya coefficient of the two
        window distributions; 0: unchanged, 1: disjoint).

        Returns
        -------
        ndarray of shape (n_periods - 1,) + extent, float64
        """
        check_is_fitted(self, "pi_")
        h = self.h_
        out = np.empty((len(h) - 1,) + np.shape(h)[1:-1])
        root = np.sqrt(np.asarray(h[0], dtype=np.float64))
        for p in range(1, len(h)):       # a period at a time: memory of two grids
            before, root = root, np.sqrt(np.asarray(h[p], dtype=np.float64))
            out[p - 1] = 1.0 - np.einsum("...z,...z->...", root, before)
        return out

    def region_changes(self, X, times, n_regions=8, reference=0, threshold=None):
        """How the regions of one period's grid fare in every period.

        Cells keep their place from period to period, so the regions of the ``reference``
        period's grid (:func:`countgrid.grid.regions`) are read in every period: their
        share of the period's documents (each document one unit, spread over its windows'
        cells by its posterior under its period's grid), the drift of their mean word
        distribution, and when they are born or die (their share crossing
        ``threshold``; absent again below half of it, so that a share hovering at the
        threshold does not flip).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The documents (those the model was fitted on, or others of the same periods).
        times : array-like of shape (n_samples,)
            Their dates.
        n_regions : int, default=8
        reference : int or str, default=0
            The period whose regions are followed.
        threshold : float, optional
            A region is present in a period when its share is at least this; default a
            quarter of an even share, ``1 / (4 n_regions)``.

        Returns
        -------
        RegionChanges
        """
        check_is_fitted(self, "pi_")
        labels = grid_regions(self.period_grid(reference), n_regions)
        R = int(labels.max()) + 1
        flat = labels.ravel()
        _, parts = self._by_period(X, times)
        n_periods = np.shape(self.pi_)[0]
        share = np.zeros((n_periods, R))
        for p, rows, grid, Xp in parts:
            mass = group_masses(grid, Xp, np.zeros(len(rows), dtype=np.int64), 1)[0]
            share[p] = np.bincount(flat, weights=mass, minlength=R) / len(rows)
        pi = np.asarray(self.pi_, dtype=np.float64).reshape(n_periods, flat.size, -1)
        mean = np.stack([np.stack([pi[p, flat == r].mean(axis=0) for r in range(R)])
                         for p in range(n_periods)])
        root = np.sqrt(mean)
        drift = 1.0 - np.sum(root[1:] * root[:-1], axis=-1)
        if threshold is None:
            threshold = 1.0 / (4 * R)
        present = np.zeros_like(share, dtype=bool)
        present[0] = share[0] >= threshold
        for p in range(1, n_periods):
            present[p] = np.where(present[p - 1], share[p] >= threshold / 2,
                                  share[p] >= threshold)
        events = [(str(self.period_labels_[p]), r, "born" if present[p, r] else "died")
                  for p in range(1, n_periods) for r in range(R)
                  if present[p, r] != present[p - 1, r]]
        return RegionChanges(periods=[str(v) for v in self.period_labels_], regions=labels,
                             share=share, drift=drift, present=present,
                             threshold=float(threshold), events=events)


class _PeriodsView(CountingGrid, saveable=False):
    """A time-sliced grid as the map reads one grid (docs/map.md, "Time-sliced grids"):
    ``pi_`` is the periods' grids averaged with the weights of their documents (the map at
    all dates); each document's posterior, log-likelihood and window likelihood are those
    under its own period's grid (``_doc_periods``, one per row of the documents read;
    -1: under the average).  Built by :func:`periods_view`; not saveable."""

    def _grids(self, n):
        """``(rows, grid)`` for each period among the documents' (the average for -1)."""
        periods = self._doc_periods
        if periods.shape != (n,):
            raise ValueError(f"X has {n} documents but the periods were given for "
                             f"{periods.shape[0]}")
        built = self._period_grids        # read by the posteriors, then the tie-break
        for p in np.unique(periods):
            rows = np.flatnonzero(periods == p)
            if p >= 0 and p not in built:
                built[p] = self._sliced.period_grid(int(p))
            yield rows, (built[p] if p >= 0 else self._average)

    def _by_rows(self, X, width, one):
        """``one(grid, rows of X)`` for each period, gathered in row order."""
        X, _ = check_counts(X, np.asarray(self.pi_).dtype, n_features=self.n_features_in_,
                            owner="TimeSlicedCountingGrid")
        out = np.empty((X.shape[0],) + width, dtype=np.float64)
        for rows, grid in self._grids(X.shape[0]):
            out[rows] = one(grid, X[rows], rows)
        return out

    def transform(self, X):
        """Each document's posterior under its period's grid."""
        L = grid_size(np.shape(self.pi_)[:-1])
        return self._by_rows(X, (L,), lambda g, Xp, rows: g.transform(Xp)).astype(
            np.asarray(self.pi_).dtype)

    def score_samples(self, X):
        """Each document's exact log-likelihood under its period's grid."""
        return self._by_rows(X, (), lambda g, Xp, rows: g.score_samples(Xp))

    def _visit_posteriors(self, X, visit, owner=None):
        X, _ = check_counts(X, np.asarray(self.pi_).dtype, n_features=self.n_features_in_,
                            owner=owner or "TimeSlicedCountingGrid")
        n, L = X.shape[0], grid_size(np.shape(self.pi_)[:-1])
        grids = list(self._grids(n))
        where = np.empty(n, dtype=np.int64)          # each row's grid
        for k, (rows, _) in enumerate(grids):
            where[rows] = k
        step = max(1, BLOCK_ELEMENTS // max(L, 1))
        loglik = np.empty(n)
        _progress.report_pass(" posteriors", 0, n, "document")
        for t0 in range(0, n, step):
            t1 = min(n, t0 + step)
            qb = np.empty((t1 - t0, L), dtype=np.asarray(self.pi_).dtype)
            llb = loglik[t0:t1]
            for k in np.unique(where[t0:t1]):
                rows = t0 + np.flatnonzero(where[t0:t1] == k)
                grid = grids[k][1]

                def keep(a, b, q, ll, rows=rows):
                    qb[rows[a:b] - t0] = q
                    llb[rows[a:b] - t0] = ll
                with _progress.quiet_passes():
                    grid._visit_posteriors(X[rows], keep, owner)
            visit(t0, t1, qb, llb)
            _progress.report_pass(" posteriors", t1, n, "document")
        return loglik

    def _window_loglik(self, X, corners):
        corners = np.asarray(corners, dtype=np.int64)
        return self._by_rows(X, (), lambda g, Xp, rows: g._window_loglik(Xp, corners[rows]))


def periods_view(sliced, periods):
    """The :class:`_PeriodsView` of a fitted :class:`TimeSlicedCountingGrid` for documents
    in the fitted ``periods`` (one index per document, -1: none; see
    :meth:`TimeSlicedCountingGrid.periods`)."""
    check_is_fitted(sliced, "pi_")
    pi = np.asarray(sliced.pi_)
    weights = np.asarray(sliced.n_documents_, dtype=np.float64)
    weights = weights / weights.sum() if weights.sum() > 0 else np.full(len(pi), 1 / len(pi))
    average = np.zeros(pi.shape[1:], dtype=np.float64)
    for p in range(pi.shape[0]):          # a period at a time: no (periods x grid) temporary
        average += weights[p] * pi[p]
    average /= average.sum(axis=-1, keepdims=True)
    fitted = dict(log_likelihood_=np.asarray(sliced.log_likelihood_[-1:], dtype=np.float64),
                  n_iter_=int(np.sum(sliced.n_iter_)), converged_=True,
                  pseudocount_=sliced.pseudocount_, posterior_floor_=sliced.posterior_floor_,
                  n_features_in_=sliced.n_features_in_)
    if hasattr(sliced, "feature_names_in_"):
        fitted["feature_names_in_"] = sliced.feature_names_in_
    view = _PeriodsView(tuple(pi.shape[1:-1]), sliced.window, dtype=sliced.dtype,
                        num_threads=sliced.num_threads)
    view.pi_ = average.astype(pi.dtype)
    view._defer_derived("h_")
    for name, value in fitted.items():
        setattr(view, name, value)
    view._remember_inference_params()
    view.__dict__["_average"] = grid_view(sliced, view.pi_, **fitted)
    view.__dict__["_sliced"] = sliced
    view.__dict__["_period_grids"] = {}
    periods = np.asarray(periods, dtype=np.int64)
    if periods.ndim != 1 or (periods.size and not (-1 <= periods.min()
                                                   and periods.max() < pi.shape[0])):
        raise ValueError(f"periods must be period indices in [-1, {pi.shape[0]}), one per "
                         "document")
    view.__dict__["_doc_periods"] = periods
    return view
