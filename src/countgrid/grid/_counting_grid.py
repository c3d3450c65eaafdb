"""The counting grid estimator (Jojic & Perina, UAI 2011)."""
from functools import partial
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from countgrid._utils import progress as _progress
from countgrid._base import BaseEstimator, TransformerMixin
from countgrid.streaming._blocks import Blocks, is_dask_collection
from countgrid.streaming._dask import DaskBlocks
from countgrid.streaming._dask import transform as dask_transform
from countgrid._engine.em_loop import (N_BATCH_ITER_DOC, STEP_SIZE_CONSTRAINTS,
                                       STEP_SIZE_PARAMS_DOC, EMMonitor, minibatch_inputs,
                                       minibatch_rho, start_fit)
from countgrid._utils.fitted import (array, check_distribution, fitted_array, fitted_bool,
                               fitted_distribution, fitted_int, fitted_real, scalar)
from countgrid._utils.memory import check_memory
from countgrid._utils.param_validation import GridShape, Interval, Options
from countgrid._utils.threads import effective_n_threads, limit_blas_threads
from countgrid._utils.validation import (as_real_array, check_is_fitted, check_random_state,
                                   check_shape_tuple)
from countgrid.grid import _display, _wrappers, _words
from countgrid.grid._browse import (cell_corners, check_cell, corner_depths, map_window_loglik,
                                    rank_scores)
from countgrid.grid._em import (BLOCK_ELEMENTS, EStepSearch, GridStatistics,
                                 block_counts, block_statistics, blocked_estep,
                                 distributed_estep, grid_counts, local_estep, m_step,
                                 posteriors, run_em)
from countgrid.grid._progressive import resolve_subsample, subsample_blocks
from countgrid.grid._capacity import auto_extent, unused_cells, warn_unused_cells
from countgrid.grid._schedule import auto_window_schedule
from countgrid.grid._torus import check_grid, grid_size, refuse_bare_int

#: Entries of ``h_`` derived from ``pi_`` at once (a block of words; 4 or 8 MB).
_HISTOGRAM_BLOCK = 1 << 20

#: Constraints of the parameters CountingGrid shares with the estimators built on it.
GRID_PARAMETER_CONSTRAINTS = {
    "extent": [Options("auto"), GridShape()],
    "window": [GridShape()],
    "n_iter": [Interval(Integral, 1, None)],
    "tol": [Interval(Real, 0, None)],
    "pseudocount": [Options("auto"), Interval(Real, 0, None)],
    "posterior_floor": [Options("auto"), Interval(Real, 0, 1)],
    "window_schedule": [Options("auto"), None, list, tuple],
    "learn_prior": ["boolean"],
    "min_iter": [Interval(Integral, 0, None)],
    "dtype": ["dtype", None],
    "num_threads": ["num_threads"],
    "random_state": ["random_state"],
    "verbose": ["boolean", Interval(Integral, 0, None)],
}

#: How CountingGrid learns: batch or stepwise EM (docs/scale.md).
LEARNING_CONSTRAINTS = {
    "learning_method": [Options("batch", "online")],
    "batch_size": [Options("auto"), Interval(Integral, 1, None)],
    **STEP_SIZE_CONSTRAINTS,
    "posterior_top_k": [None, Interval(Integral, 1, None)],
    "estep": [Options("exact", "coarse-to-fine")],
    "estep_params": [None, dict],
    "subsample": [None, Options("auto"), Interval(Integral, 1, None),
                  Interval(Real, 0, 1, closed="neither")],
    "accelerate": ["boolean"],
}

#: The coarse-to-fine E-step's settings (``estep_params``; docs/scale.md, "A
#: coarse-to-fine E-step"): lattice stride, lattice points kept, the guard's least lattice
#: mass on them, exact EM iterations first.
ESTEP_DEFAULTS = {"stride": 3, "keep": 4, "min_mass": 0.99, "exact_iter": 10, "track": False}


def grid_init(self, extent="auto", window=(4, 4), n_iter=100, tol=1e-5, pseudocount="auto",
              posterior_floor="auto", window_schedule="auto", learn_prior=False, min_iter=30,
              dtype=np.float32, num_threads=None, random_state=None, verbose=0):
    """The constructor of the estimators fitted on a grid (scikit-learn reads their
    parameters from its signature)."""
    self.extent = extent
    self.window = window
    self.n_iter = n_iter
    self.tol = tol
    self.pseudocount = pseudocount
    self.posterior_floor = posterior_floor
    self.window_schedule = window_schedule
    self.learn_prior = learn_prior
    self.min_iter = min_iter
    self.dtype = dtype
    self.num_threads = num_threads
    self.random_state = random_state
    self.verbose = verbose


def grid_like(source, extent, window, random_state):
    """An unfitted CountingGrid of ``extent`` and ``window`` with the other grid parameters
    of ``source`` (an estimator built on grids, e.g. a layered or time-sliced grid)."""
    return CountingGrid(extent, window, n_iter=source.n_iter, tol=source.tol,
                        pseudocount=source.pseudocount, posterior_floor=source.posterior_floor,
                        window_schedule=source.window_schedule, min_iter=source.min_iter,
                        dtype=source.dtype, num_threads=source.num_threads,
                        random_state=random_state, verbose=source.verbose)


#: The fitted attributes of a grid besides its arrays: what a view of it (one layer of a
#: layered grid, its spatial grid, a grid moved by an alignment) carries over.
GRID_FIT_STATE = ("log_likelihood_", "n_iter_", "converged_", "pseudocount_",
                  "posterior_floor_", "n_features_in_", "n_batch_iter_", "feature_names_in_")


def fit_state(grid):
    """``{name: value}`` of the :data:`GRID_FIT_STATE` attributes ``grid`` has."""
    return {name: getattr(grid, name) for name in GRID_FIT_STATE if hasattr(grid, name)}


def grid_view(source, pi, h=None, **fitted):
    """A fitted CountingGrid holding ``pi`` (shape extent + (n_features,), copied) with the
    parameters of ``source`` (:func:`grid_like`) and the fitted attributes ``fitted``;
    ``h`` its window histograms, or None to derive them when first read.  How one layer of
    a layered grid, or one period of a time-sliced grid, reaches every tool that reads a
    plain grid."""
    grid = grid_like(source, tuple(np.shape(pi)[:-1]), source.window, source.random_state)
    grid.pi_ = np.array(pi)
    if h is None:
        grid._defer_derived("h_")
    else:
        grid.h_ = np.array(h)
    for name, value in fitted.items():
        setattr(grid, name, value)
    grid._remember_inference_params()
    return grid


class CountingGrid(TransformerMixin, BaseEstimator):
    __doc__ = """Counting grid: a D-dimensional toroidal grid of distributions over features.

    Each cell ``i`` of a grid of shape ``extent`` holds a distribution
    ``pi_i(z)`` over the ``n_features`` features.  A bag of counts ``c`` is
    generated by picking a window position ``k`` (uniformly, or from a learned
    prior) and drawing every token from the window histogram
    ``h_k(z) = mean over the window W_k = k + [0, window) of pi_i(z)``
    (indices modulo ``extent``), so that ``p(c | k) = prod_z h_k(z)^{c_z}``
    (paper eq. 1; the multinomial coefficient is omitted throughout).
    Parameters are learned by EM (paper eqs. 3 and 7) with the conventions of
    the authors' code (docs/counting_grids.md, "Code conventions"): pseudocount
    ``rho``, numerical floor ``alpha = 1e-10`` and a floor on the location
    posterior.

    Parameters
    ----------
    extent : "auto" or tuple of int, default="auto"
        Grid shape ``(E_1, ..., E_D)``, any ``D >= 1``: ``(16, 16)`` for a 16x16 grid,
        ``(16,)`` for a ring of 16 cells.  A bare int is refused (ValueError) as ambiguous.
        "auto" sizes the grid to the number N of training documents: capacity
        ``kappa = L / |W| = clip(N / 3, 16, 100)`` around ``window``
        (:func:`countgrid.grid.auto_extent`: for a 4x4 window 16x16 up to 48 documents,
        24x24 for 108, 32x32 for 192, 40x40 from 300 on; docs/counting_grids.md,
        "Choosing the grid").
        A grid that leaves more than a third of its cells unused warns
        (:class:`~countgrid.exceptions.CapacityWarning`).
    window : tuple of int, default=(4, 4)
        Window shape ``(W_1, ..., W_D)``, ``1 <= W_d <= E_d`` (a tuple, as ``extent``).
        4x4 is the paper's best window for text (Table 1).
    n_iter : int, default=100
        Maximum number of EM iterations (for the target window).
    tol : float, default=1e-5
        Stop when the relative change of the log-likelihood,
        ``(F_new - F_old) / |F_old|``, falls below ``tol`` (signed: a decrease also
        stops; the test of every EM estimator, countgrid._engine.em_loop), otherwise warn with
        ``ConvergenceWarning`` after ``n_iter``.  0 runs exactly ``n_iter`` iterations.
    pseudocount : "auto" or float, default="auto"
        ``rho`` of the M-step.  "auto" is ``mean document length / (2.5 L)``
        with ``L = prod(extent)`` (the authors' default).
    posterior_floor : "auto" or float, default="auto"
        Floor applied to every location posterior before renormalising;
        "auto" is ``1 / (1e7 L)``.  Must be ``< 1 / L``; 0 disables it.
    window_schedule : "auto", list or None, default="auto"
        Coarse-to-fine annealing run before the target window: each entry is
        a window (run for 15 iterations) or a pair ``(window, n_iter)``,
        e.g. ``[(10, 10), (6, 6)]``.  "auto" is the authors' annealing scaled to the
        grid (:func:`countgrid.grid.auto_window_schedule`: 10x10 then 6x6 for 15
        iterations each before a 4x4 window on 40x40; fewer when ``n_iter < 60``; none
        when the window cannot grow), which classifies better than no annealing on
        every corpus we measured (docs/results.md, "Defaults"); None runs the target
        window only (the default of 0.1.0).
    learn_prior : bool, default=False
        Learn the location prior ``p(k) ∝ sum_t q_t(k)`` (draft eq. 10;
        docs/counting_grids.md, "Code conventions").
    min_iter : int, default=30
        The convergence test starts after this many iterations (as in the
        authors' code).
    dtype : {numpy.float32, numpy.float64} or None, default=numpy.float32
        Working precision of the grid, the posteriors and the counts (None: that of X
        when X is float32 or float64, else float64).  float32 is the default since it
        loses nothing measurable (3-fold label embedding with the defaults, 2,000 chi2
        words: news20_same accuracy 0.819 vs 0.810 in float64, held-out log-likelihood
        -6.1694 vs -6.1716 per token; reuters_r8 0.929 vs 0.929, -5.2181 vs -5.2179;
        docs/results.md, "Precision") and takes half the memory and time.
    num_threads : int, optional
        OpenMP threads; None uses all CPUs available (honouring ``OMP_NUM_THREADS``),
        negative values count back from the number of CPUs.
    random_state : None, int or numpy.random.Generator
        Seeds the symmetry-breaking initialisation ``pi = normalise(1 + U(0, 1))``.
        On a given machine the same seed gives a bit-identical model for any
        ``num_threads``: every reduction has a fixed order.  Across machines
        the instruction set of the kernels (``show_config()``, capped by the
        environment variable ``COUNTGRID_SIMD``) may change the last bits.
        Dense inputs with at least 25% non-zeros use BLAS for the two matrix
        products, whose reproducibility across thread counts is BLAS's.
    verbose : int, default=0
        Print the log-likelihood of every iteration.
    learning_method : {"batch", "online"}, default="batch"
        "batch": EM over all documents per iteration (on a chunk source, one pass per
        iteration); "online": stepwise EM, ``n_iter`` passes at most over minibatches of
        ``batch_size`` documents, the window statistics of each blended with step
        ``(learning_offset + t)^-learning_decay`` and followed by an M-step (Cappe &
        Moulines 2009; docs/scale.md, "Online EM").  The convergence test then reads the
        summed minibatch log-likelihoods of a pass.
    batch_size : "auto" or int, default="auto"
        Documents per minibatch of online EM and :meth:`partial_fit`.  "auto" makes a
        minibatch's E-step cost about one M-step: ``40 n_features / (mean distinct words
        per document + 10)``, at least 256.
    """ + STEP_SIZE_PARAMS_DOC + """
    posterior_top_k : int, optional
        Sparse posteriors: the M-step statistics keep only the ``posterior_top_k`` most
        probable window positions of each document, renormalised (sparse counts only;
        the log-likelihood and ``transform`` stay exact).  Faster on large grids at a
        small cost in log-likelihood (docs/scale.md, "Sparse posteriors").  None keeps
        every position.
    estep : {"exact", "coarse-to-fine"}, default="exact"
        How batch EM places the training documents.  "exact" scores every document at
        every window position.  "coarse-to-fine" (sparse or dense counts, 1-D and 2-D
        grids, ``learning_method="batch"``), after ``exact_iter`` exact iterations, scores
        a document on the sub-lattice of positions whose coordinates are multiples of
        ``stride`` and then in the ``(2 stride - 1)^2`` boxes around its ``keep`` best
        lattice points; its posterior is the exact one restricted to those positions, and
        its ``posterior_top_k`` largest entries (default ``keep (2 stride - 1)^2``) enter
        the M-step.  A document whose lattice posterior puts less than ``min_mass`` on the
        kept points is scanned in full.  With the defaults it scores about 1/6 of the
        positions; ``log_likelihood_`` then holds the log-likelihoods over the positions
        scored (lower bounds); ``transform``, ``score`` and the other methods stay exact
        (docs/scale.md, "A coarse-to-fine E-step", for when it is safe).
    estep_params : dict, optional
        Settings of the coarse-to-fine E-step, the defaults replaced by the keys given:
        ``stride`` (3), ``keep`` (4), ``min_mass`` (0.99), ``exact_iter`` (10: exact EM
        iterations first, counted over the window schedule's stages and the target
        window's), ``track`` (False; True: from a stage's second search on, each document
        is first scored around its last position and on a check lattice of stride
        ``2 stride``, and searched only when it moved or has a competitor — a third of
        the positions, at the cost of a path further from the exact fit's; local and
        out-of-core fits, a dask fit searches every pass; docs/scale.md, "Tracking").
    subsample : None, "auto", int or float, default=None
        Progressive fitting (batch EM): the window schedule and the target window first
        run to convergence on a random subsample of the documents (this many, or this
        fraction of them; "auto": ``max(50000, 25 L)`` documents when the corpus holds
        at least twice as many, else all), then batch EM continues on all documents
        from that grid until the relative change of the log-likelihood falls below
        ``tol`` (no ``min_iter``), for at most ``n_iter`` iterations.  ``n_iter_`` and
        ``log_likelihood_`` are then those of the fit on all documents.  The subsample
        is drawn with ``random_state`` after the initial grid (the same start as
        without it) and held in memory, also for a chunk source or a dask array
        (docs/scale.md, "Progressive fitting").  None fits all documents at once.
    accelerate : bool, default=False
        Extrapolated EM in the target window's stage: SQUAREM (Varadhan & Roland 2008,
        scheme S3) — after every two EM updates ``p0 -> p1 -> p2`` of the cells' word
        distributions the next grid is ``p0 - 2 a r + a^2 v`` (``r = p1 - p0``,
        ``v = p2 - 2 p1 + p0``, step ``a = -|r| / |v|`` within an adaptive bound),
        floored and renormalised; an extrapolated grid that lowers the log-likelihood
        is replaced by ``p2``.  Same fixed points, 52-59 % fewer passes in the target
        window on news20 and reuters_r8 (1.18-1.35x faster, held-out within 0.05 %,
        97.7-99.3 % of the documents at the plain fit's window); with
        ``subsample="auto"`` and the tracking coarse-to-fine E-step a million documents
        converge in 8.2 minutes on 2 cores.  ``n_iter_`` counts every pass and
        ``log_likelihood_`` the kept ones
        (docs/scale.md, "Extrapolated EM").  Batch EM.

    Attributes
    ----------
    pi_ : ndarray of shape ``extent + (n_features,)``
        The grid of feature distributions (sums to 1 over the last axis).
    h_ : ndarray of shape ``extent + (n_features,)``
        Window histograms ``h_k``, indexed by the window's first cell ``k``.
    log_likelihood_ : ndarray of shape (n_iter_,)
        Exact total log-likelihood of the training data after each iteration
        (same convention as :meth:`score_samples`).
    n_iter_ : int
        Iterations run for the target window.
    converged_ : bool
        Whether the tolerance was met before ``n_iter``.
    prior_ : ndarray of shape ``extent``
        Learned location prior (only with ``learn_prior=True``).
    pseudocount_, posterior_floor_ : float
        The values used.
    n_features_in_ : int
    """ + N_BATCH_ITER_DOC + """

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> X = np.random.default_rng(0).poisson(1.0, size=(50, 20))
    >>> cg = countgrid.CountingGrid((8, 8), (3, 3), n_iter=5, random_state=0).fit(X)
    >>> cg.pi_.shape
    (8, 8, 20)
    >>> cg.transform(X).shape
    (50, 64)
    """

    _parameter_constraints = {**GRID_PARAMETER_CONSTRAINTS, **LEARNING_CONSTRAINTS}
    _fitted_schema = {"pi_": array("float", "extent...", "n_features"),
                      "h_": array("float", "extent...", "n_features"),
                      "log_likelihood_": array("float", "n_history"),
                      "n_iter_": scalar("int"), "converged_": scalar("bool"),
                      "prior_": array("float", "extent..."),
                      "pseudocount_": scalar("real"), "posterior_floor_": scalar("real"),
                      "n_features_in_": scalar("int", bind="n_features"),
                      "n_batch_iter_": scalar("int")}
    _derived_arrays = ("h_",)
    #: The window is how inference reads ``pi_`` (``h_`` is its window means; positions'
    #: centres, relevance, documents near a cell, the map and its statistics take it):
    #: changed by ``set_params`` after fit, it is refused until the next fit
    #: (docs/robustness.md, "Parameters after fit").
    _inference_params = ("window",)

    def __init__(self, extent="auto", window=(4, 4), n_iter=100, tol=1e-5, pseudocount="auto",
                 posterior_floor="auto", window_schedule="auto", learn_prior=False, min_iter=30,
                 dtype=np.float32, num_threads=None, random_state=None, verbose=0,
                 learning_method="batch", batch_size="auto", learning_offset=10.0,
                 learning_decay=0.7, total_samples=1_000_000, posterior_top_k=None,
                 estep="exact", estep_params=None, subsample=None, accelerate=False):
        grid_init(self, extent, window, n_iter, tol, pseudocount, posterior_floor,
                  window_schedule, learn_prior, min_iter, dtype, num_threads, random_state,
                  verbose)
        self.learning_method = learning_method
        self.batch_size = batch_size
        self.learning_offset = learning_offset
        self.learning_decay = learning_decay
        self.total_samples = total_samples
        self.posterior_top_k = posterior_top_k
        self.estep = estep
        self.estep_params = estep_params
        self.subsample = subsample
        self.accelerate = accelerate

    # ------------------------------------------------------------------ fit
    def _grid_and_schedule(self, n_documents=None):
        """Validated parameters: (extent, window, schedule) with the schedule as a list of
        (window, n_iter) pairs; ``extent="auto"`` is sized for ``n_documents``."""
        self._validate_params()
        extent = self.extent
        if isinstance(extent, str):   # "auto", the only string allowed
            refuse_bare_int(self.window, "window", 2)
            if n_documents is None:   # a fitted grid continued by partial_fit
                extent = tuple(self.pi_.shape[:-1])
            else:
                extent = auto_extent(n_documents, check_shape_tuple(self.window, "window"))
        extent, window = check_grid(extent, self.window)
        if isinstance(self.window_schedule, str):   # "auto", the only string allowed
            return extent, window, auto_window_schedule(extent, window, self.n_iter)
        schedule = []
        for entry in self.window_schedule or ():
            if (isinstance(entry, (tuple, list)) and len(entry) == 2
                    and isinstance(entry[0], (tuple, list)) and isinstance(entry[1], Integral)):
                win, iters = entry
            else:
                win, iters = entry, 15
            _, win = check_grid(extent, win, name_window="window_schedule entry")
            if iters < 1:
                raise ValueError(f"window_schedule iteration counts must be >= 1, got {iters}")
            schedule.append((win, int(iters)))
        return extent, window, schedule

    def _resolve_pseudocount(self, mean_length, L):
        if self.pseudocount == "auto":
            return float(mean_length / (2.5 * L))
        return float(self.pseudocount)

    def _estep_search(self, extent):
        """(EStepSearch, exact iterations first) for ``estep="coarse-to-fine"``, else
        (None, 0); the settings checked."""
        if self.estep == "exact":
            return None, 0
        given = dict(self.estep_params or {})
        unknown = sorted(set(given) - set(ESTEP_DEFAULTS), key=str)
        if unknown:
            raise ValueError(f"estep_params has unknown keys {unknown}; expected some of "
                             f"{sorted(ESTEP_DEFAULTS)}")
        opts = {**ESTEP_DEFAULTS, **given}
        for key, least in (("stride", 1), ("keep", 1), ("exact_iter", 0)):
            v = opts[key]
            if not isinstance(v, Integral) or isinstance(v, bool) or v < least:
                raise ValueError(f"estep_params[{key!r}] must be an int >= {least}, "
                                 f"got {v!r}")
        m = opts["min_mass"]
        if not isinstance(m, Real) or isinstance(m, bool) or not 0.0 <= m <= 1.0:
            raise ValueError(f"estep_params['min_mass'] must be a float in [0, 1], got {m!r}")
        if not isinstance(opts["track"], (bool, np.bool_)):
            raise ValueError(f"estep_params['track'] must be True or False, got "
                             f"{opts['track']!r}")
        if len(extent) > 2:
            raise ValueError(f"estep='coarse-to-fine' searches 1-D and 2-D grids; the extent "
                             f"{tuple(extent)} has {len(extent)} dimensions")
        self._refuse_outside_batch("estep='coarse-to-fine'", "estep='exact'")
        shape = (1, extent[0]) if len(extent) == 1 else tuple(extent)
        stride, keep = int(opts["stride"]), int(opts["keep"])
        top_k = self.posterior_top_k
        if top_k is None:
            top_k = keep * (2 * stride - 1) ** 2
        top_k = min(int(top_k), grid_size(extent))
        return (EStepSearch(shape, stride, keep, float(m), top_k, bool(opts["track"])),
                int(opts["exact_iter"]))

    def _subsample_size(self, n_samples, L):
        """Documents of the first fit of progressive fitting, or None (``subsample``)."""
        n_first = resolve_subsample(self.subsample, n_samples, L)
        if n_first is not None:
            self._refuse_outside_batch("subsample (progressive fitting)", "subsample=None")
        return n_first

    def _refuse_outside_batch(self, option, off):
        """ValueError naming ``option`` (and how to turn it ``off``) unless the fit is
        batch EM: the options of issue 29 change batch EM's passes."""
        if self.learning_method != "batch":
            raise ValueError(f"{option} runs in batch EM; use learning_method='batch' or "
                             f"{off}")

    def _resolve_floor(self, L):
        f = self.posterior_floor
        if f == "auto":
            return 1.0 / (1e7 * L)
        if not f < 1.0 / L:
            raise ValueError(f"posterior_floor must be 'auto' or a float in [0, 1/L) = "
                             f"[0, {1.0 / L:.3g}), got {f!r}")
        return float(f)

    def _initial_pi(self, init_pi, extent, n_features, dtype, rng):
        L = grid_size(extent)
        if init_pi is None:
            # 1 + U(0, 1) per entry, drawn cell by cell in float64 (so float32 and
            # float64 models share their start) in blocks to bound the memory
            out = np.empty((n_features, L), dtype=dtype)
            step = max(1, (1 << 22) // n_features)
            for c0 in range(0, L, step):
                block = 1.0 + rng.random((min(L, c0 + step) - c0, n_features))
                block /= block.sum(axis=1, keepdims=True)
                out[:, c0:c0 + block.shape[0]] = block.T
            return out
        else:
            pi = as_real_array(init_pi, "init_pi")
            if pi.shape not in (tuple(extent) + (n_features,), (L, n_features)):
                raise ValueError(f"init_pi has shape {pi.shape}; expected "
                                 f"{tuple(extent) + (n_features,)} or {(L, n_features)}")
            pi = pi.reshape(L, n_features).astype(np.float64)
            if not np.isfinite(pi).all() or (pi <= 0).any():
                raise ValueError("init_pi must be finite and strictly positive")
        pi = pi / pi.sum(axis=1, keepdims=True)
        return np.ascontiguousarray(pi.T, dtype=dtype)

    def fit(self, X, y=None, init_pi=None):
        """Learn the grid by EM.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), ChunkSource \
or dask array
            Non-negative counts (int or float).  Sparse input is used as CSR.  A
            :class:`countgrid.streaming.ChunkSource` is read chunk by chunk at every pass
            (out of core: memory O(L n_features + chunk)); a dask array of row blocks is
            fitted on the dask.distributed cluster of the current client (docs/scale.md).
        y : ignored
        init_pi : array-like of shape ``extent + (n_features,)``, optional
            Strictly positive starting grid (normalised over features);
            replaces the random initialisation.

        Returns
        -------
        self
        """
        dtype, nt = start_fit(self, X)
        distributed = is_dask_collection(X)
        if distributed:
            if self.learning_method == "online":
                raise ValueError("learning_method='online' reads minibatches in order on this "
                                 "machine; fit a dask array with learning_method='batch'")
            data = DaskBlocks(X, partial(block_counts, dtype=dtype), self.num_threads)
        else:
            data = Blocks(X, partial(block_counts, dtype=dtype))
        if data.n_tokens <= 0:
            raise ValueError("X contains no counts: every document is empty")
        extent, window, schedule = self._grid_and_schedule(data.n_samples)
        search, exact_iter = self._estep_search(extent)
        accelerate = bool(self.accelerate)
        if accelerate:
            self._refuse_outside_batch("accelerate (extrapolated EM)", "accelerate=False")
        L = grid_size(extent)
        Z = data.n_features
        # pi, h, log h, the statistics and the fitted copies (Z x L each), a posterior block
        check_memory(dtype.itemsize * (6 * Z * L + 3 * max(L, BLOCK_ELEMENTS)),
                     f"a counting grid of extent {extent} ({L} cells) over {Z} features",
                     "use a smaller extent, fewer features (e.g. "
                     "countgrid.text.select_by_resolving_power) or dtype=numpy.float32")
        rho = self._resolve_pseudocount(data.mean_length, L)
        floor = self._resolve_floor(L)
        rng = check_random_state(self.random_state)
        pi = self._initial_pi(init_pi, extent, Z, dtype, rng)
        log_prior = None
        top_k = None if self.posterior_top_k is None else int(self.posterior_top_k)
        if distributed:
            estep_all = distributed_estep(data, self.learn_prior, top_k)
        else:
            estep_all = local_estep(data, nt, top_k)

        def checkpoint(stage_window, stage):
            # pi is updated in place only by the M-step: between two M-steps it holds a
            # complete update, so a checkpoint needs no copy (docs/architecture.md,
            # "Interrupted fits")
            def on_update(done, log_prior, monitor):
                if done is None:
                    self._checkpoint(None)
                    return
                history = list(monitor.history)

                def apply():
                    h = np.empty_like(pi)
                    _wrappers.histograms(pi, extent, stage_window, h, np.empty_like(pi),
                                             nt)
                    self._set_fitted(pi.copy(), h, log_prior, history, done, False, rho,
                                     floor, extent, Z)
                    return f"the grid after {done} EM updates{stage}"
                self._checkpoint(apply)
            return on_update

        # (window, iterations, tol, min_iter, stage name, E-step over which documents)
        stages = [(win, iters, 0.0, 0, f" window {win}", estep_all) for win, iters in schedule]
        stages.append((window, int(self.n_iter), float(self.tol), int(self.min_iter), "",
                       estep_all))
        n_first = self._subsample_size(data.n_samples, L)
        if n_first is not None:
            # progressive fitting: every stage on a subsample, then the target window on
            # all documents from its grid (docs/scale.md, "Progressive fitting")
            first = subsample_blocks(data, n_first, rng, partial(block_counts, dtype=dtype))
            first_estep = local_estep(first, nt, top_k)
            part = f" on {n_first} documents"
            stages = [(win, iters, tol, min_iter, f"{stage or ' target window'}{part}",
                       first_estep) for win, iters, tol, min_iter, stage, _ in stages]
            stages.append((window, int(self.n_iter), float(self.tol), 0,
                           " on all documents", estep_all))
        position_mass = np.zeros(L)
        # (fraction of positions scored, of documents scanned in full) of every iteration
        self._estep_scored = scored = []
        with limit_blas_threads(nt, active=data.is_dense):
            for win, iters, tol, min_iter, stage, stage_estep in stages:
                label = f" of the{stage} stage" if stage else f" (of n_iter={self.n_iter})"
                if self.learning_method == "online":
                    monitor, log_prior, h = self._online_passes(
                        data, pi, extent, win, iters, tol, min_iter, rho, floor, log_prior,
                        nt, data.n_samples, stage, checkpoint(win, label))
                else:
                    done = len(scored)
                    monitor, log_prior, h = run_em(
                        stage_estep, pi, extent, win, iters, tol, min_iter, rho, floor,
                        log_prior, self.learn_prior, nt, self.verbose, stage=stage,
                        on_update=checkpoint(win, label), position_mass=position_mass,
                        search=search, search_from=max(0, exact_iter - done),
                        scored=scored,
                        accelerate=bool(accelerate) and tol > 0)
                    if search is not None and self.verbose:
                        part = scored[done:]
                        print(f"[CountingGrid]{stage} coarse-to-fine E-step: "
                              f"{np.mean([f for f, _ in part]):.1%} of the positions "
                              f"scored, {np.mean([g for _, g in part]):.2%} of the "
                              f"documents in full (mean of {len(part)} iterations)")
        self._set_fitted(pi, h, log_prior, monitor.history, monitor.n_updates,
                         monitor.converged, rho, floor, extent, Z)
        if self.learning_method == "batch":
            self.n_batch_iter_ = 0
            warn_unused_cells(unused_cells(position_mass, extent, window, nt), extent, window,
                              data.n_samples)
        self._stepwise = None
        return self

    # --------------------------------------------------------- online EM
    def _batch_size(self, data):
        """``batch_size``, or "auto": the minibatch whose E-step costs about one M-step,
        ``40 n_features / (mean distinct words per document + 10)``, at least 256
        (docs/scale.md, "Online EM")."""
        if self.batch_size != "auto":
            return int(self.batch_size)
        per_doc = data.n_nonzero / max(data.n_samples, 1)
        return int(max(256, np.ceil(40.0 * data.n_features / (per_doc + 10.0))))

    def _online_passes(self, data, pi, extent, window, n_passes, tol, min_iter, rho, floor,
                       log_prior, nt, total, stage, on_update):
        """Stepwise EM over the minibatches of ``data``, ``n_passes`` times at most; the
        monitor records the summed minibatch log-likelihoods of each pass."""
        monitor = EMMonitor("CountingGrid", n_passes, tol, min_iter=min_iter,
                            verbose=self.verbose, stage=stage, label="online log-likelihood")
        self._stepwise = None
        batch = self._batch_size(data)
        for done in range(1, n_passes + 1):
            loglik = 0.0
            for counts in data.minibatches(batch):
                ll, log_prior = self._stepwise_update(counts, pi, extent, window, rho, floor,
                                                      log_prior, nt, total, on_update)
                loglik += ll
                on_update(len(monitor.history), log_prior, monitor)
            if monitor.record(loglik, n_updates=done):
                break
        monitor.finish()
        h = np.empty_like(pi)
        _wrappers.histograms(pi, extent, window, h, np.empty_like(pi), nt)
        return monitor, log_prior, h

    def _stepwise_update(self, counts, pi, extent, window, rho, floor, log_prior, nt, total,
                         on_update):
        """One minibatch of stepwise EM (Cappe & Moulines 2009; Liang & Klein 2009):
        ``s <- (1 - rho_t) s + rho_t (total / n_b) s_b`` on the window statistics, then the
        M-step from ``s`` (docs/scale.md, "Online EM").  Returns (the minibatch's
        log-likelihood before the update, log_prior)."""
        Z, L = pi.shape
        state = getattr(self, "_stepwise", None)
        if state is None or state["stats"].n.shape != pi.shape:
            state = self._stepwise = {
                "stats": None, "step": getattr(self, "n_batch_iter_", 0),
                "batch": GridStatistics(Z, L, pi.dtype, self.learn_prior),
                "h": np.empty_like(pi), "logh": np.empty_like(pi),
                "scratch": np.empty_like(pi)}
        h, logh, batch = state["h"], state["logh"], state["batch"]
        _wrappers.histograms(pi, extent, window, h, logh, nt)
        batch.reset()
        top_k = None if self.posterior_top_k is None else int(self.posterior_top_k)
        block_statistics(counts, logh, log_prior, floor, nt, batch, top_k)
        scale = float(total) / counts.n_samples
        if state["stats"] is None:
            state["stats"] = GridStatistics(Z, L, pi.dtype, self.learn_prior)
            state["stats"].blend(batch, 1.0, scale)
        else:
            rho_t = minibatch_rho(state["step"], float(self.learning_offset),
                                  float(self.learning_decay))
            state["stats"].blend(batch, rho_t, scale)
        if on_update is not None:
            on_update(None, None, None)
        new_log_prior = m_step(state["stats"], h, pi, extent, window, rho, nt,
                               scratch=state["scratch"])
        if self.learn_prior:
            log_prior = new_log_prior
        state["step"] += 1
        self.n_batch_iter_ = state["step"]
        return batch.log_likelihood, log_prior

    def partial_fit(self, X, y=None):
        """One pass of stepwise (online) EM over ``X``, in minibatches of ``batch_size``.

        The first call initialises the grid from ``random_state`` (and the pseudocount
        from X's mean document length); later calls continue from the fitted grid.  The
        statistics of each minibatch are scaled to ``total_samples`` documents and blended
        with step ``(learning_offset + t)^-learning_decay`` (docs/scale.md, "Online EM").

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or ChunkSource
            Non-negative counts.
        y : ignored

        Returns
        -------
        self

        Notes
        -----
        The running statistics live in the estimator, not in model files: a grid loaded
        with :func:`countgrid.io.load` continues its step schedule (``n_batch_iter_``) but
        rebuilds the statistics from its next minibatch.
        """
        self._validate_params()
        if self.estep != "exact":
            raise ValueError("partial_fit runs stepwise (online) EM, whose E-step is exact: "
                             "estep='coarse-to-fine' is for fit with learning_method='batch'")
        for option, off in (("accelerate", False), ("subsample", None)):
            if getattr(self, option) != off:
                raise ValueError(f"partial_fit runs stepwise (online) EM on the minibatches "
                                 f"given: {option}={getattr(self, option)!r} is for fit with "
                                 f"learning_method='batch'; use {option}={off!r}")
        first = not hasattr(self, "pi_")
        # extent="auto" of a first call: sized for the corpus the minibatches come from
        extent, window, _ = self._grid_and_schedule(
            int(self.total_samples) if first else None)
        nt = effective_n_threads(self.num_threads)
        dtype, n_features = minibatch_inputs(self, X, "pi_")
        if not first and tuple(self.pi_.shape[:-1]) != tuple(extent):
            raise ValueError(f"extent {extent} differs from the fitted grid's "
                             f"{tuple(self.pi_.shape[:-1])}: refit with fit")
        data = Blocks(X, lambda M, name, nf: grid_counts(
            M, dtype, n_features=n_features if nf is None else nf, name=name,
            owner=None if first else type(self).__name__))
        L = grid_size(extent)
        Z = data.n_features
        if first:
            check_memory(dtype.itemsize * (7 * Z * L + 3 * max(L, BLOCK_ELEMENTS)),
                         f"a counting grid of extent {extent} ({L} cells) over {Z} features",
                         "use a smaller extent, fewer features or dtype=numpy.float32")
            if data.n_tokens <= 0:
                raise ValueError("X contains no counts: every document is empty")
            rho = self._resolve_pseudocount(data.mean_length, L)
            floor = self._resolve_floor(L)
            pi = self._initial_pi(None, extent, Z, dtype, check_random_state(self.random_state))
            log_prior, history = None, []
            self.n_batch_iter_ = 0
        else:
            rho, floor = self.pseudocount_, self.posterior_floor_
            pi = np.ascontiguousarray(self.pi_.reshape(L, Z).T)
            log_prior = None
            if getattr(self, "prior_", None) is not None:
                log_prior = np.log(np.asarray(self.prior_, dtype=np.float64).ravel()
                                   ).astype(dtype)
            history = list(self.log_likelihood_)
        loglik = 0.0
        batch = self._batch_size(data)
        try:
            with limit_blas_threads(nt, active=data.is_dense):
                for counts in data.minibatches(batch):
                    ll, log_prior = self._stepwise_update(
                        counts, pi, extent, window, rho, floor, log_prior, nt,
                        int(self.total_samples), None)
                    loglik += ll
        except BaseException:
            self._stepwise = None   # the running statistics may be half updated
            raise
        h = np.empty_like(pi)
        _wrappers.histograms(pi, extent, window, h, np.empty_like(pi), nt)
        history.append(loglik)
        self._set_fitted(pi, h, log_prior, history, len(history), False, rho, floor,
                         extent, Z)
        return self

    def _set_fitted(self, pi, h, log_prior, history, n_updates, converged, rho, floor,
                    extent, Z):
        self.pi_ = np.ascontiguousarray(pi.T).reshape(tuple(extent) + (Z,))
        self.h_ = np.ascontiguousarray(h.T).reshape(tuple(extent) + (Z,))
        self.log_likelihood_ = np.asarray(history, dtype=np.float64)
        self.n_iter_ = int(n_updates)
        self.converged_ = bool(converged)
        if log_prior is not None and self.learn_prior:
            self.prior_ = np.exp(log_prior.astype(np.float64)).reshape(extent)
        elif hasattr(self, "prior_"):
            del self.prior_
        self.pseudocount_ = rho
        self.posterior_floor_ = floor
        self.n_features_in_ = Z

    def _derive_array(self, name):
        """``h_`` from ``pi_`` and ``window`` (model files need not store it)."""
        if name != "h_":
            return super()._derive_array(name)
        pi_lz, _, _ = self._histogram_source()
        h = np.empty_like(pi_lz)
        # a block of words at a time: loading then costs pi_ and h_ plus a few MB, not
        # three more copies of pi_
        for a, b, hb in self._histogram_blocks():
            h[:, a:b] = hb.T
        return h.reshape(self.pi_.shape)

    def _defer_derived(self, name):
        """Leave ``h_`` to be derived when first read (countgrid.io, ``defer_derived``):
        inference and the map read what they need of it from ``pi_`` a block of words at
        a time (:meth:`_model`, :meth:`_window_values`), and ``self.h_`` derives it
        whole.  ``pi_`` and ``window`` are checked now, as deriving it would."""
        if name != "h_":
            return super()._defer_derived(name)
        self._histogram_source()
        self.__dict__["_h_deferred"] = True

    def __getattr__(self, name):
        # called only for an attribute that is not set: a deferred h_ is derived on first
        # read (and kept)
        d = self.__dict__
        if name == "h_" and d.get("_h_deferred") and "pi_" in d:
            d["h_"] = self._derive_array("h_")
            return d["h_"]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _h_is_deferred(self):
        d = self.__dict__
        return "h_" not in d and bool(d.get("_h_deferred")) and "pi_" in d

    def _grid_window(self):
        """The window over every axis of ``pi_``'s extent (``window`` itself here; a
        layered grid prepends 1 for its layer axis)."""
        return self.window

    def _fitted_grid(self):
        """``(extent, window)`` of the fitted grid, checked (the shape every reader of a
        fitted grid's windows uses)."""
        return check_grid(tuple(np.shape(self.pi_)[:-1]), self._grid_window())

    def _histogram_source(self):
        """``(pi as (L, Z), extent, window)``, checked as deriving ``h_`` needs them."""
        pi = fitted_array(self, "pi_", nonnegative=True)
        if pi.ndim < 2 or pi.dtype not in (np.float32, np.float64):
            raise ValueError(f"pi_ must be a float array of shape extent + (n_features,), "
                             f"got {pi.dtype} {pi.shape}")
        extent, Z = tuple(pi.shape[:-1]), pi.shape[-1]
        window = check_grid(extent, self._grid_window())[1]
        return pi.reshape(grid_size(extent), Z), extent, window

    def _histogram_blocks(self):
        """``(a, b, hb)`` for consecutive blocks of words ``[a, b)``: ``hb = h_[:, a:b].T``
        of shape (b - a, L), computed from ``pi_`` (each word's window sums are its own;
        every reader of a derived ``h_`` goes through these same blocks, so that they all
        see the same bits)."""
        pi_lz, extent, window = self._histogram_source()
        L, Z = pi_lz.shape
        nt = effective_n_threads(self.num_threads)
        step = max(1, _HISTOGRAM_BLOCK // max(L, 1))
        for a in range(0, Z, step):
            b = min(Z, a + step)
            block = np.ascontiguousarray(pi_lz[:, a:b].T)
            hb = np.empty_like(block)
            _wrappers.histograms(block, extent, window, hb, np.empty_like(block), nt)
            yield a, b, hb

    def _window_values(self, cells, words):
        """``h_[cells, words]`` (cells flattened; index arrays of one shape), read from
        ``h_``, or while it is deferred from ``pi_`` a block of words at a time (without
        a second table of the grid's size)."""
        cells, words = np.asarray(cells, dtype=np.int64), np.asarray(words, dtype=np.int64)
        if not self._h_is_deferred():
            h = np.asarray(self.h_)
            return h.reshape(-1, h.shape[-1])[cells, words]
        out = np.empty(cells.shape, dtype=self.pi_.dtype)
        flat_cells, flat_words, flat_out = cells.ravel(), words.ravel(), out.reshape(-1)
        order = np.argsort(flat_words, kind="stable")
        ordered = flat_words[order]
        for a, b, hb in self._histogram_blocks():
            lo, hi = np.searchsorted(ordered, [a, b])
            if lo < hi:
                sel = order[lo:hi]
                flat_out[sel] = hb[flat_words[sel] - a, flat_cells[sel]]
        return out

    def _window_loglik(self, X, corners):
        """:func:`countgrid.grid._browse.map_window_loglik` of validated counts ``X`` in
        the windows ``corners``; sparse counts read only the entries of ``h_`` they need
        (:meth:`_window_values`)."""
        if sp.issparse(X):
            return map_window_loglik(X, self._window_values, corners)
        h = np.asarray(self.h_)
        return map_window_loglik(X, h.reshape(-1, h.shape[-1]), corners)

    # ------------------------------------------------------------ inference
    def _model(self):
        """``(dtype, logh, log_prior)`` of the fitted grid, from the fitted attributes only
        (parameters changed by ``set_params`` after fit do not reach inference)."""
        check_is_fitted(self, "pi_")
        pi = self.pi_
        dtype = pi.dtype if pi.dtype in (np.float32, np.float64) else np.float64
        L = grid_size(pi.shape[:-1])
        if self._h_is_deferred():
            # h_ as the model file left it, derived from pi_ a block of words at a time
            # straight into the (Z, L) table: pi_ and one table, not pi_, h_ and a table
            logh = np.empty((pi.shape[-1], L), dtype=dtype)
            for a, b, hb in self._histogram_blocks():
                logh[a:b] = hb
        else:
            # a copy (np.array copies), its log taken in place: one (Z, L) table, not two
            logh = np.array(np.asarray(self.h_, dtype=dtype).reshape(L, -1).T, order="C")
        with np.errstate(divide="ignore"):
            np.log(logh, out=logh)
        log_prior = None
        if getattr(self, "prior_", None) is not None:
            with np.errstate(divide="ignore"):
                log_prior = np.log(np.asarray(self.prior_, dtype=np.float64).ravel()).astype(dtype)
        return dtype, logh, log_prior

    def _check_fitted_state(self):
        """Fitted attributes consistent with each other (called by countgrid.io.load); the
        word distributions of ``pi_`` and ``h_`` (every cell's) and ``prior_`` (over the
        cells) sum to 1, as every M-step normalises them."""
        pi = fitted_array(self, "pi_", nonnegative=True)
        if pi.ndim < 2:
            raise ValueError(f"pi_ must have shape extent + (n_features,), got {pi.shape}")
        check_distribution("pi_", pi, axis=-1)
        extent, Z = pi.shape[:-1], pi.shape[-1]
        check_grid(extent, (1,) * len(extent))
        if fitted_int(self, "n_features_in_", 1) != Z:
            raise ValueError(f"n_features_in_ = {self.n_features_in_} but pi_ has {Z} features")
        # a model file leaves h_ out when it recomputes it (countgrid.io derives it after
        # this check); one that stores it (format 1 and 2) has it checked
        h = fitted_array(self, "h_", shape=pi.shape, nonnegative=True, optional=True)
        if h is not None and h.dtype != pi.dtype:
            raise ValueError(f"h_ has dtype {h.dtype} but pi_ has {pi.dtype}")
        if h is not None:
            check_distribution("h_", h, axis=-1)
        # prior_ is float64, normalised in the grid's dtype
        fitted_distribution(self, "prior_", axis=None, shape=extent, optional=True,
                            precision=pi.dtype)
        fitted_array(self, "log_likelihood_", ndim=1, finite=False)
        fitted_int(self, "n_iter_", 0)
        if hasattr(self, "n_batch_iter_"):
            fitted_int(self, "n_batch_iter_", 0)
        fitted_bool(self, "converged_")
        fitted_real(self, "pseudocount_", 0)
        fitted_real(self, "posterior_floor_", 0, 1)

    def _counts(self, X, dtype, owner=None):
        return grid_counts(X, dtype, n_features=self.n_features_in_,
                           owner=owner or type(self).__name__)

    def transform(self, X):
        """Posterior over window positions for each document.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or dask array
            Non-negative counts over the training features (dense or sparse; processed
            in blocks of rows).  A dask array of row blocks is transformed on the
            dask.distributed cluster of the current client.

        Returns
        -------
        Q : ndarray (dask array for a dask X) of shape (n_samples, L)
            ``Q[t, k] = q_t(k)``, positions in C order of ``extent``; each row
            sums to 1 and is floored at ``posterior_floor_`` as in learning.
            An empty document gets the prior (uniform by default).
        """
        if is_dask_collection(X):
            check_is_fitted(self, "pi_")
            return dask_transform(self, X, grid_size(self.pi_.shape[:-1]))
        dtype, logh, log_prior = self._model()
        counts = self._counts(X, dtype)
        L = logh.shape[1]
        check_memory(dtype.itemsize * counts.n_samples * L,
                     f"the posteriors of {counts.n_samples} documents over {L} positions",
                     "transform fewer documents at a time; positions() and score_samples() "
                     "work in blocks of rows")
        nt = effective_n_threads(self.num_threads)
        with limit_blas_threads(nt, active=not counts.is_sparse):
            q, _ = posteriors(counts, logh, log_prior, self.posterior_floor_, nt)
        return q

    def score_samples(self, X):
        """Exact log-likelihood of each document.

        ``log p(c) = log sum_k p(k) prod_z h_k(z)^{c_z}`` with the uniform
        location prior ``p(k) = 1/L`` (or ``prior_`` if learned); the
        multinomial coefficient is omitted, as in the papers.

        Returns
        -------
        ndarray of shape (n_samples,), float64
        """
        dtype, logh, log_prior = self._model()
        counts = self._counts(X, dtype)
        nt = effective_n_threads(self.num_threads)
        with limit_blas_threads(nt, active=not counts.is_sparse):
            return blocked_estep(counts, logh, log_prior, 0.0, nt)

    def score(self, X, y=None):
        """Total exact log-likelihood of X (see :meth:`score_samples`)."""
        return float(np.sum(self.score_samples(X)))

    def positions(self, X, anchor="corner"):
        """MAP window position of each document.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        anchor : {"corner", "center"}, default="corner"
            "corner": the window's first cell ``k = argmax_k q_t(k)`` (the index of
            ``h_`` and of the columns of :meth:`transform`; the 0.1.0 contract).
            "center": the window's centre cell ``(k + window // 2) mod extent``, where a
            document sits on a picture of the grid (for an even window side, the cell
            just after the middle).

        Returns
        -------
        ndarray of shape (n_samples, D), int64
            Grid coordinates.

        Examples
        --------
        >>> import numpy as np, countgrid
        >>> X = np.random.default_rng(0).poisson(1.0, size=(30, 12))
        >>> cg = countgrid.CountingGrid((8, 8), (3, 3), n_iter=5, random_state=0).fit(X)
        >>> corner, centre = cg.positions(X), cg.positions(X, anchor="center")
        >>> bool(np.all(centre == (corner + 1) % 8))
        True
        """
        if anchor not in ("corner", "center"):
            raise ValueError(f"anchor must be 'corner' or 'center', got {anchor!r}")
        best = []
        self._visit_posteriors(X, lambda t0, t1, qb, llb: best.append(np.argmax(qb, axis=1)))
        extent = tuple(np.shape(self.pi_)[:-1])
        pos = np.stack(np.unravel_index(np.concatenate(best), extent), axis=1).astype(np.int64)
        if anchor == "center":
            pos = _words.window_centres(pos, *self._fitted_grid())
        return pos

    def word_map(self, word, feature_names=None):
        """Where a word lives: its probability ``pi_[..., w]`` in every cell.

        Parameters
        ----------
        word : int or str
            A feature index, or a word looked up in ``feature_names``.
        feature_names : sequence of str, optional
            The vocabulary (default: ``feature_names_in_`` if the model has one).

        Returns
        -------
        ndarray of shape ``extent``
            A copy; :func:`countgrid.plotting.plot_word_map` draws it.

        Raises
        ------
        ValueError
            If the word is not in the vocabulary (the message lists close matches) or
            the index is out of range.

        Examples
        --------
        >>> import numpy as np, countgrid
        >>> X = np.random.default_rng(0).poisson(1.0, size=(30, 3))
        >>> cg = countgrid.CountingGrid((4, 4), (2, 2), n_iter=3, random_state=0).fit(X)
        >>> cg.word_map("cat", feature_names=["cat", "dog", "fish"]).shape
        (4, 4)
        """
        check_is_fitted(self, "pi_")
        return _words.word_map(self.pi_, word, self._vocabulary(feature_names))

    def word_cells(self, word, n_cells=10, feature_names=None):
        """The cells where a word is most probable.

        Parameters
        ----------
        word : int or str
            As for :meth:`word_map`.
        n_cells : int, default=10
            Number of cells (at most the number of cells of the grid).
        feature_names : sequence of str, optional
            As for :meth:`word_map`.

        Returns
        -------
        cells : ndarray of shape (n, D), int64
            Cell coordinates, most probable first (ties in C order of the cells).
        weights : ndarray of shape (n,)
            ``pi_`` of the word at those cells.

        Examples
        --------
        >>> import numpy as np, countgrid
        >>> X = np.random.default_rng(0).poisson(1.0, size=(30, 3))
        >>> cg = countgrid.CountingGrid((4, 4), (2, 2), n_iter=3, random_state=0).fit(X)
        >>> cells, weights = cg.word_cells(1, n_cells=3)
        >>> cells.shape, bool(weights[0] == cg.pi_[tuple(cells[0]) + (1,)])
        ((3, 2), True)
        """
        check_is_fitted(self, "pi_")
        return _words.word_cells(self.pi_, word, n_cells, self._vocabulary(feature_names))

    def top_words(self, n_words=10, feature_names=None, weighting="relevance", X=None):
        """The words that describe every cell best: by default the most relevant.

        Cell ``i`` ranks word ``w`` by ``pi_i(w) * f(w)``
        (:func:`countgrid.grid.word_weights`).  The default "relevance" is LDAvis'
        relevance ``0.7 log pi_i(w) + 0.3 log(pi_i(w) / p(w))`` with ``p(w)`` the grid's
        average word distribution (:func:`countgrid.grid.word_relevance`): words frequent
        in the cell *and* more frequent there than on the whole grid, so that words used
        everywhere ("data", "system") give way to the cell's own (docs/counting_grids.md,
        "Which words a cell shows").  ``weighting="probability"`` gives the most probable
        words, as until 0.2.0.dev0.

        Parameters
        ----------
        n_words : int, default=10
        feature_names : sequence of str, optional
            The vocabulary (default: ``feature_names_in_`` if the model has one).
        weighting : {"relevance", "probability", "lift", "idf"} or array-like, \
default="relevance"
            How words are ranked (:func:`countgrid.grid.word_weights`): "relevance"
            (lambda = :data:`countgrid.grid.RELEVANCE_LAMBDA`), "probability" (``pi_``
            itself), "lift" (``pi_ / p``: rare words win), "idf" (``pi_`` times the
            smooth idf of ``X``), or one non-negative factor per feature.
        X : {array-like, sparse matrix} of shape (n_documents, n_features), optional
            The documents whose idf weights the words, for ``weighting="idf"``.

        Returns
        -------
        ndarray of shape ``extent + (n_words,)``
            Best first (ties by feature index): words when a vocabulary is known, else
            int64 feature indices.

        Examples
        --------
        >>> import numpy as np, countgrid
        >>> X = np.random.default_rng(0).poisson(1.0, size=(30, 3))
        >>> cg = countgrid.CountingGrid((4, 4), (2, 2), n_iter=3, random_state=0).fit(X)
        >>> cg.top_words(2, feature_names=["cat", "dog", "fish"]).shape
        (4, 4, 2)
        >>> most_probable = cg.top_words(2, weighting="probability")
        >>> bool((most_probable[..., 0] == np.argmax(cg.pi_, axis=-1)).all())
        True
        """
        check_is_fitted(self, "pi_")
        return _words.top_words(self.pi_, n_words, self._vocabulary(feature_names),
                                weighting=weighting, X=X, prior=getattr(self, "prior_", None),
                                window=self._fitted_grid()[1])

    def _vocabulary(self, feature_names):
        return getattr(self, "feature_names_in_", None) if feature_names is None else feature_names

    def _visit_posteriors(self, X, visit, owner=None):
        """Posteriors of X block by block: visit(t0, t1, q_block, loglik_block); the
        public name is :func:`countgrid.grid.visit_posteriors`.  ``owner``: the estimator
        named in messages about X (an estimator built on this grid; default the grid).

        Memory stays O(block * L) whatever the number of documents.  Inside
        :func:`countgrid._utils.progress.passes`, the pass is reported (stage " posteriors",
        unit "document") when it starts and after every block."""
        dtype, logh, log_prior = self._model()
        counts = self._counts(X, dtype, owner)
        nt = effective_n_threads(self.num_threads)
        n = counts.n_samples
        _progress.report_pass(" posteriors", 0, n, "document")

        def visit_and_report(t0, t1, qb, llb):
            visit(t0, t1, qb, llb)
            _progress.report_pass(" posteriors", t1, n, "document")

        # sparse counts: the E-step is ours (OpenMP) and BLAS serves only the visits' side
        # products, so it gets one thread: OpenBLAS's threads spin for a while after each
        # call and slowed the next OpenMP region 2-6x on 2 cores (the map of 100,000
        # documents: 5.4 s -> 3.9 s, docs/map.md, "The notebook widget")
        with limit_blas_threads(1 if counts.is_sparse else nt):
            return blocked_estep(counts, logh, log_prior, self.posterior_floor_, nt,
                                 visit_and_report)

    # -------------------------------------------------- browsing (countgrid.maps)
    def documents_near(self, X, cell, n_documents=10, ranking="depth"):
        """The documents that sit at ``cell``: centred there, and surely.

        Document ``t`` scores ``c_t(cell) = sum_k q_t(k) K(cell - k)``, the posterior mean
        of the *depth* of the cell in the document's window (``K`` =
        ``countgrid.grid._browse.window_depth``: 1 at the window's centre, 1/2 on its
        border and 1/4 in its corners for a 4x4 window; q_t: :meth:`transform`).  Scores
        equal to 3 decimals are ordered by the document's log-likelihood per token in its
        most probable window, then by index.  The interactive map (:meth:`to_html`) lists
        the same ranking (docs/map.md, "Pin a cell").

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        cell : tuple of int or int
            0-based coordinates into ``pi_`` (``cell = (r, c)`` is ``pi_[r, c]``), or a flat
            C-order index.
        n_documents : int, default=10
        ranking : {"depth", "coverage"}, default="depth"
            "depth": the rule above.  "coverage": the probability that the document's
            window contains the cell, ``s_t(cell) = sum over corners k with cell in W_k of
            q_t(k)``, ties by lower index (the ranking until 0.2.0.dev0: on a large corpus many
            documents score 1 for every cell their windows cover).

        Returns
        -------
        indices : ndarray of shape (min(n_documents, n_samples),), int64
            Row indices of X, best first.
        scores : ndarray of the same shape, float64
            Their ``c_t(cell)`` (or ``s_t(cell)``), in [0, 1].
        """
        check_is_fitted(self, "pi_")
        if not isinstance(n_documents, Integral) or isinstance(n_documents, bool):
            raise TypeError(f"n_documents must be an int, got {n_documents!r}")
        if n_documents < 1:
            raise ValueError(f"n_documents must be >= 1, got {n_documents}")
        if ranking not in ("depth", "coverage"):
            raise ValueError(f"ranking must be 'depth' or 'coverage', got {ranking!r}")
        extent, window = self._fitted_grid()
        flat = check_cell(cell, extent)
        parts, best = [], []
        if ranking == "coverage":
            corners = cell_corners(flat, extent, window)
            self._visit_posteriors(X, lambda t0, t1, qb, llb: parts.append(
                qb[:, corners].sum(axis=1, dtype=np.float64)))
            scores = np.concatenate(parts) if parts else np.zeros(0)
            order = rank_scores(scores, int(n_documents))
            return order.astype(np.int64), scores[order]
        depth = corner_depths(flat, extent, window)
        corners = np.flatnonzero(depth)

        def visit(t0, t1, qb, llb):
            parts.append(np.asarray(qb[:, corners], dtype=np.float64) @ depth[corners])
            best.append(np.argmax(qb, axis=1))

        self._visit_posteriors(X, visit)
        scores = np.concatenate(parts) if parts else np.zeros(0)
        counts = self._counts(X, np.dtype(np.float64))
        loglik = self._window_loglik(counts.X, np.concatenate(best) if best else
                                     np.zeros(0, np.int64))
        order = rank_scores(scores, int(n_documents), loglik)
        return order.astype(np.int64), scores[order]

    def to_html(self, path=None, X=None, **kwargs):
        """Write the interactive offline map of this 2-D grid to ``path``, or return it.

        Calls :func:`countgrid.maps.write_html` (docs/map.md) with this grid.  In a
        notebook, :func:`countgrid.maps.embed` shows the map in the output.

        Parameters
        ----------
        path : str or path-like, optional
            The file to write (``.html``); None returns the page as a str.
        X : {array-like, sparse matrix} of shape (n_documents, n_features), optional
            The documents listed when a cell is clicked (usually the training data).
        **kwargs
            The keyword arguments of :func:`countgrid.maps.write_html` (``corpus``,
            ``feature_names``, ``titles``, ``metadata``, ``title``, ...).

        Returns
        -------
        pathlib.Path or str
            The path written, or the page when ``path`` is None.
        """
        return _display.to_html(self, path, X, **kwargs)

    def widget(self, X=None, **kwargs):
        """The interactive map of this 2-D grid as a notebook widget with two-way selection.

        Calls :func:`countgrid.widget` (docs/map.md, "The notebook widget"); needs the
        ``notebook`` extra (anywidget).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_documents, n_features), optional
            The documents (usually the training data).
        **kwargs
            ``height``, ``background`` and the keyword arguments of
            :func:`countgrid.maps.write_html` but ``data_format`` (``corpus``, ``titles``,
            ``metadata``, ``color_by``, ...).

        Returns
        -------
        MapWidget
            ``w.selection`` is the table of the documents selected in the map,
            ``w.highlight`` and ``w.color_by`` change it from Python.
        """
        return _display.widget(self, X, **kwargs)

    def _repr_html_(self):
        """A static preview in notebooks (drawn by countgrid.maps through
        countgrid.grid._display): the grid's size and its words on a sample of cells;
        None (the plain repr) unless fitted and 2-D."""
        if not hasattr(self, "pi_"):
            return None
        return _display.preview(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """In a Jupyter kernel with the ``notebook`` extra, a fitted 2-D grid displays as
        its map widget (:meth:`widget`, without documents); elsewhere this adds nothing and
        the notebook shows the static preview of :meth:`_repr_html_`."""
        return _display.widget_bundle(self)
