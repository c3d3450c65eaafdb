"""Layered counting grids: several word distributions per cell, one chosen per document
(the layered model of Perina & Jojic's reference code ``cg_layers.m``; equations and the
choices made here in docs/counting_grids.md, "Layered grids").

A grid of ``n_layers`` layers over a spatial extent ``E`` is fitted as a counting grid of
extent ``(n_layers,) + E`` whose window spans one layer, ``(1,) + W``: a document's window
then lies in one layer, and the same E-step and M-step kernels serve.  What makes it
layered is the prior over ``(layer, position)``: ``p(l, k) = rho_k(l) / |E|`` with
``rho_k(l)`` the window mean of per-cell layer weights ``lambda_i(l)``, learned by the
counting grid's own M-step with the layers as its features.
"""
from functools import partial
from numbers import Integral, Real

import numpy as np

from countgrid._engine.em_loop import EMMonitor, start_fit
from countgrid._utils.fitted import array, check_distribution, fitted_array, fitted_int, scalar
from countgrid._utils.memory import check_memory
from countgrid._utils.param_validation import Interval
from countgrid._utils.threads import effective_n_threads, limit_blas_threads
from countgrid._utils.validation import check_is_fitted, check_random_state, check_shape_tuple
from countgrid.grid import _wrappers
from countgrid.grid._counting_grid import (GRID_PARAMETER_CONSTRAINTS, CountingGrid, fit_state,
                                           grid_init, grid_like, grid_view)
from countgrid.grid._em import (ALPHA, BLOCK_ELEMENTS, GridStatistics, block_counts,
                                distributed_estep, local_estep, m_step)
from countgrid.grid._torus import check_grid, grid_size, refuse_bare_int
from countgrid.streaming._blocks import Blocks, is_dask_collection
from countgrid.streaming._dask import DaskBlocks

__all__ = ["LayeredCountingGrid"]


def layer_log_prior(layer_prior, extent, window, num_threads):
    """``(rho, p(l, k), log p(l, k))``: ``rho`` (n_layers, |E|, the grid's dtype) the window
    mean of ``layer_prior`` (n_layers, |E|) over the window at each k, and the prior
    ``p(l, k) = rho_k(l) / |E|`` over the layered grid's positions in C order of
    ``(n_layers,) + extent``, float64 and (its log) the grid's dtype."""
    n_layers, P = layer_prior.shape
    rho = np.empty_like(layer_prior)
    _wrappers.histograms(layer_prior, extent, window, rho, np.empty_like(layer_prior),
                         num_threads)
    prior = rho.astype(np.float64).ravel() / P
    with np.errstate(divide="ignore"):
        log_prior = np.log(prior).astype(layer_prior.dtype)
    return rho, prior, log_prior


def perturbed_layers(pi, n_layers, rng):
    """The layers' starting grids from one grid ``pi`` (n_features, P): ``n_layers``
    copies, each entry times ``1 + U(0, 1)``, renormalised per cell (drawn in float64,
    so float32 and float64 fits share their start).  The layers start where the grid
    is, each a little different, and EM draws them apart (docs/counting_grids.md)."""
    Z, P = pi.shape
    out = np.empty((Z, n_layers * P), dtype=pi.dtype)
    for layer in range(n_layers):
        block = pi.astype(np.float64) * (1.0 + rng.random((Z, P)))
        block /= block.sum(axis=0, keepdims=True)
        out[:, layer * P:(layer + 1) * P] = block
    return out


class LayeredCountingGrid(CountingGrid):
    __doc__ = """Layered counting grid: ``n_layers`` word distributions in every cell.

    Each cell ``i`` of a grid of shape ``extent`` holds one distribution over words per
    layer, ``pi_[l, i]``, and a distribution over the layers, ``layer_prior_[:, i]``.  A
    document picks a window position ``k`` (uniformly), a layer ``l`` with probability
    ``rho_k(l)``, the mean of ``layer_prior_`` over the window ``W_k``, and draws every
    token from that layer's window histogram ``h_[l, k]``:
    ``p(c) = sum_{l,k} rho_k(l) / |E| prod_z h_{l,k}(z)^{c_z}``.  Neighbouring positions
    share most of their window, so their priors over the layers are alike: each place of
    the map can hold two contexts of a theme, one per layer (Perina & Jojic's layered
    grids, the model behind ``cg_layers.m``; docs/counting_grids.md, "Layered grids").

    The fit has two stages: a :class:`CountingGrid` with the same parameters (its window
    schedule included), then EM of the layered model from ``n_layers`` perturbed copies
    of that grid, with the exact posterior over (layer, position) pairs.

    Parameters
    ----------
    extent : "auto" or tuple of int, default="auto"
        Spatial grid shape, as :class:`CountingGrid` (the layers are not counted in it).
    window : tuple of int, default=(4, 4)
        Window shape, as :class:`CountingGrid`.
    n_layers : int, default=2
        Number of layers ``n_layers >= 1``; the model has ``n_layers`` times the word
        distributions of a grid of the same extent.
    layer_pseudocount : float, default=1.0
        Pseudocount of the layer weights' M-step: each cell starts with this many
        documents' worth of every layer (0: the maximum-likelihood update).
    n_iter : int, default=100
        Maximum number of EM iterations of each stage (the grid's target window, then the
        layers).
    tol : float, default=1e-5
        Relative change of the log-likelihood that stops each stage (as CountingGrid).
    pseudocount : "auto" or float, default="auto"
        ``rho`` of the word distributions' M-step; "auto" is the grid's rule,
        ``mean document length / (2.5 L)``, with ``L`` the cells of all layers in the
        layered stage.
    posterior_floor : "auto" or float, default="auto"
        Floor of the posteriors in learning, as CountingGrid (``1 / (1e7 L)``, ``L``
        counting every layer's positions in the layered stage).
    window_schedule : "auto", None or list, default="auto"
        Coarse-to-fine windows of the first stage, as CountingGrid.
    min_iter : int, default=30
        Iterations of each stage before the convergence test applies.
    dtype : numpy float dtype or None, default=numpy.float32
    num_threads : int or None, default=None
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the grid's start and the layers' perturbation; the same seed gives the same
        model whatever ``num_threads``.
    verbose : bool or int, default=0

    Attributes
    ----------
    pi_ : ndarray of shape (n_layers,) + extent + (n_features,)
        Word distribution of every layer's cells.
    h_ : ndarray of shape (n_layers,) + extent + (n_features,)
        Window histograms of every layer.
    layer_prior_ : ndarray of shape (n_layers,) + extent
        ``lambda_i(l)``: each cell's weights over the layers (sums to 1 over axis 0).
    prior_ : ndarray of shape (n_layers,) + extent, float64
        ``p(l, k) = rho_k(l) / |E|``, the prior over (layer, window position) pairs
        (derived from ``layer_prior_``).
    log_likelihood_ : ndarray of shape (n_history,)
        Exact log-likelihood of the training documents after each layered update.
    n_iter_ : int
        EM updates of the layered stage.
    converged_ : bool
    grid_n_iter_ : int
        EM updates of the first stage's target window.
    pseudocount_ : float
    posterior_floor_ : float
    n_features_in_ : int

    Notes
    -----
    The posterior (:meth:`transform`) is over (layer, position) pairs, in C order of
    ``(n_layers,) + extent``; :meth:`positions` returns ``(layer, row, column)``
    coordinates and :meth:`layer_posterior` each document's probability of each layer.
    Online learning (``partial_fit``) is not offered: the layers start from a fitted
    grid.

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> X = np.random.default_rng(0).poisson(1.0, size=(60, 20))
    >>> lcg = countgrid.grid.LayeredCountingGrid((8, 8), (3, 3), n_layers=2, n_iter=5,
    ...                                          random_state=0).fit(X)
    >>> lcg.pi_.shape, lcg.layer_prior_.shape
    ((2, 8, 8, 20), (2, 8, 8))
    >>> lcg.transform(X).shape
    (60, 128)
    >>> lcg.positions(X).shape
    (60, 3)
    """

    _parameter_constraints = {**GRID_PARAMETER_CONSTRAINTS,
                              "n_layers": [Interval(Integral, 1, None)],
                              "layer_pseudocount": [Interval(Real, 0, None)]}
    del _parameter_constraints["learn_prior"]
    _fitted_schema = {**CountingGrid._fitted_schema,
                      "layer_prior_": array("float", "extent..."),
                      "grid_n_iter_": scalar("int")}
    _derived_arrays = ("h_", "prior_")

    def __init__(self, extent="auto", window=(4, 4), n_layers=2, layer_pseudocount=1.0,
                 n_iter=100, tol=1e-5, pseudocount="auto", posterior_floor="auto",
                 window_schedule="auto", min_iter=30, dtype=np.float32, num_threads=None,
                 random_state=None, verbose=0):
        grid_init(self, extent, window, n_iter, tol, pseudocount, posterior_floor,
                  window_schedule, False, min_iter, dtype, num_threads, random_state,
                  verbose)
        self.n_layers = n_layers
        self.layer_pseudocount = layer_pseudocount

    # read by the base class's online path, which a layered grid does not offer
    learning_method = "batch"
    posterior_top_k = None

    def _grid_window(self):
        refuse_bare_int(self.window, "window", 2)
        return (1,) + check_shape_tuple(self.window, "window")

    def fit(self, X, y=None, init_pi=None):
        """Learn the grid, then its layers, by EM.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), ChunkSource \
or dask array
            Non-negative counts, as :meth:`CountingGrid.fit`.
        y : ignored
        init_pi : array-like of shape ``extent + (n_features,)``, optional
            Starting grid of the first stage (as :meth:`CountingGrid.fit`).

        Returns
        -------
        self
        """
        dtype, nt = start_fit(self, X)
        rng = check_random_state(self.random_state)
        grid = grid_like(self, self.extent, self.window, rng).fit(X, init_pi=init_pi)
        extent = tuple(grid.pi_.shape[:-1])
        window = check_grid(extent, self.window)[1]
        n_layers = int(self.n_layers)
        P, Z = grid_size(extent), grid.n_features_in_
        L = n_layers * P
        extent3 = (n_layers,) + extent
        check_memory(dtype.itemsize * (6 * Z * L + 3 * max(L, BLOCK_ELEMENTS)),
                     f"a layered counting grid of {n_layers} layers of extent {extent} over "
                     f"{Z} features", "use fewer layers, a smaller extent or fewer features")
        if is_dask_collection(X):
            data = DaskBlocks(X, partial(block_counts, dtype=dtype), self.num_threads)
            estep_all = distributed_estep(data, True)
        else:
            data = Blocks(X, partial(block_counts, dtype=dtype))
            estep_all = local_estep(data, nt)
        rho = self._resolve_pseudocount(data.mean_length, L)
        floor = self._resolve_floor(L)
        pi = perturbed_layers(np.ascontiguousarray(grid.pi_.reshape(P, Z).T, dtype=dtype),
                              n_layers, rng)
        layer_prior = np.full((n_layers, P), 1.0 / n_layers, dtype=dtype)
        with limit_blas_threads(nt, active=data.is_dense):
            monitor, h = self._layered_em(estep_all, pi, layer_prior, extent, window, rho,
                                          floor, nt)
        self._set_fitted(pi, h, None, monitor.history, monitor.n_updates, monitor.converged,
                         rho, floor, extent3, Z)
        self.layer_prior_ = layer_prior.reshape(extent3)
        self.prior_ = self._derive_array("prior_")
        self.grid_n_iter_ = int(grid.n_iter_)
        self.n_batch_iter_ = 0
        return self

    def _layered_em(self, estep_all, pi, layer_prior, extent, window, rho, floor, nt):
        """EM of the layered model in place on ``pi`` (Z, n_layers * P) and
        ``layer_prior`` (n_layers, P); returns (monitor, h)."""
        n_layers = layer_prior.shape[0]
        extent3, window3 = (n_layers,) + extent, (1,) + window
        Z, L = pi.shape
        h, logh = np.empty_like(pi), np.empty_like(pi)
        stats = GridStatistics(Z, L, pi.dtype, True)
        monitor = EMMonitor("LayeredCountingGrid", int(self.n_iter), float(self.tol),
                            min_iter=int(self.min_iter), verbose=self.verbose,
                            stage=" layers")
        for it in range(int(self.n_iter) + 1):
            _wrappers.histograms(pi, extent3, window3, h, logh, nt)
            rho_h, _, log_prior = layer_log_prior(layer_prior, extent, window, nt)
            last = it == self.n_iter
            loglik = estep_all(logh, log_prior, floor, None if last else stats.reset())
            if (it > 0 and monitor.record(loglik, n_updates=it)) or last:
                break
            m_step(stats, h, pi, extent3, window3, rho, nt)
            # the layer weights: the grid's M-step with the layers as its features and
            # each document's mass at (l, k) as its count (docs/counting_grids.md)
            # (rho_h: the window means of the weights this iteration's E-step used)
            mass = stats.qsum.reshape(n_layers, -1).astype(layer_prior.dtype)
            _wrappers.mstep(mass, rho_h, layer_prior, extent, window,
                            float(self.layer_pseudocount), ALPHA, nt)
        monitor.finish()
        return monitor, h

    @property
    def partial_fit(self):
        # an AttributeError (Python then asks __getattr__, which says why): hasattr() is
        # False, so scikit-learn and countgrid's own online paths see a batch-only estimator
        raise AttributeError("partial_fit")

    def __getattr__(self, name):
        if name == "partial_fit":
            raise AttributeError("LayeredCountingGrid learns by batch EM only (its layers "
                                 "start from a fitted grid): it has no partial_fit; call fit")
        return super().__getattr__(name)

    # ------------------------------------------------------------ fitted state
    def _derive_array(self, name):
        """``prior_`` from ``layer_prior_`` and ``window``; ``h_`` as CountingGrid."""
        if name != "prior_":
            return super()._derive_array(name)
        pi = fitted_array(self, "pi_")
        weights = fitted_array(self, "layer_prior_", shape=pi.shape[:-1], nonnegative=True)
        extent, window = self._fitted_grid()
        layer_prior = np.ascontiguousarray(weights, dtype=pi.dtype).reshape(extent[0], -1)
        _, prior, _ = layer_log_prior(layer_prior, extent[1:], window[1:],
                                      effective_n_threads(self.num_threads))
        return prior.reshape(extent)

    def _check_fitted_state(self):
        super()._check_fitted_state()
        pi = self.pi_
        if pi.ndim < 3:
            raise ValueError(f"pi_ of a layered grid has shape (n_layers,) + extent + "
                             f"(n_features,), got {pi.shape}")
        weights = fitted_array(self, "layer_prior_", shape=pi.shape[:-1], nonnegative=True)
        if weights.dtype != pi.dtype:
            raise ValueError(f"layer_prior_ has dtype {weights.dtype} but pi_ has {pi.dtype}")
        check_distribution("layer_prior_", weights, axis=0)
        fitted_int(self, "grid_n_iter_", 0)
        if self.n_layers != pi.shape[0]:
            raise ValueError(f"n_layers = {self.n_layers} but pi_ has {pi.shape[0]} layers")

    # ------------------------------------------------------------ inference
    def layer_grid(self, layer):
        """One layer as a fitted :class:`CountingGrid`, for every tool that reads a plain
        grid (``top_words``, ``countgrid.plotting``, ``to_html``, regions).

        Parameters
        ----------
        layer : int
            ``0 <= layer < n_layers``.

        Returns
        -------
        CountingGrid
            With ``pi_ = self.pi_[layer]`` (a copy), the window, the fit's scalars and
            ``feature_names_in_``; no prior, so its own inference (``transform``,
            ``score``) is that of a plain grid holding this layer alone.
        """
        check_is_fitted(self, "pi_")
        n_layers = np.shape(self.pi_)[0]
        if not isinstance(layer, (Integral, np.integer)) or isinstance(layer, bool):
            raise TypeError(f"layer must be an int, got {layer!r}")
        if not 0 <= layer < n_layers:
            raise ValueError(f"layer must be in [0, {n_layers}), got {layer}")
        return grid_view(self, self.pi_[layer],
                         None if self._h_is_deferred() else self.h_[layer], **fit_state(self))

    def layer_posterior(self, X):
        """Each document's posterior probability of each layer.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_layers), float64
            ``sum_k q_t(l, k)``; rows sum to 1.
        """
        check_is_fitted(self, "pi_")
        n_layers = np.shape(self.pi_)[0]
        parts = []
        self._visit_posteriors(X, lambda t0, t1, qb, llb: parts.append(
            qb.reshape(t1 - t0, n_layers, -1).sum(axis=2, dtype=np.float64)))
        return np.concatenate(parts) if parts else np.zeros((0, n_layers))


class _SpatialView(CountingGrid, saveable=False):
    """A layered grid seen on its spatial extent, as the map and the region tools read a
    grid (docs/map.md, "Layered grids"): ``pi_`` is each cell's mixture of its layers,
    ``sum_l lambda_i(l) pi_{l,i}``; the posteriors are the layered model's summed over the
    layers, ``q_t(k) = sum_l q_t(l, k)``; a document's log-likelihood in window ``k`` is
    ``log sum_l rho_k(l) p(c | l, k)``.  Built by :func:`spatial_view`; not saveable."""

    def transform(self, X):
        """``q_t(k) = sum_l q_t(l, k)``: the layered posterior summed over the layers."""
        layered = self._layered
        q = layered.transform(X)
        return q.reshape(q.shape[0], np.shape(layered.pi_)[0], -1).sum(axis=1)

    def score_samples(self, X):
        """The layered model's exact log-likelihood of each document."""
        return self._layered.score_samples(X)

    def _visit_posteriors(self, X, visit, owner=None):
        layered = self._layered
        n_layers = np.shape(layered.pi_)[0]

        def summed(t0, t1, qb, llb):
            visit(t0, t1, qb.reshape(t1 - t0, n_layers, -1).sum(axis=1), llb)
        layered._visit_posteriors(X, summed, owner or "LayeredCountingGrid")

    def _window_loglik(self, X, corners):
        layered = self._layered
        n_layers = np.shape(layered.pi_)[0]
        P = grid_size(np.shape(self.pi_)[:-1])
        corners = np.asarray(corners, dtype=np.int64)
        tokens = np.asarray(X.sum(axis=1), dtype=np.float64).ravel()
        with np.errstate(divide="ignore"):
            log_rho = np.log(np.asarray(layered.prior_, dtype=np.float64).reshape(n_layers, P)
                             * P)
        per_layer = np.empty((len(corners), n_layers))
        full = tokens > 0
        for layer in range(n_layers):
            per_token = layered._window_loglik(X, layer * P + corners)
            per_layer[:, layer] = np.where(full, per_token * np.where(full, tokens, 1.0),
                                           0.0) + log_rho[layer, corners]
        top = per_layer.max(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            total = top + np.log(np.exp(per_layer - top[:, None]).sum(axis=1))
            return np.where(full, total / np.where(full, tokens, 1.0), -np.inf)


def spatial_view(layered):
    """The :class:`_SpatialView` of a fitted :class:`LayeredCountingGrid`."""
    check_is_fitted(layered, "pi_")
    pi = np.asarray(layered.pi_)
    weights = np.asarray(layered.layer_prior_, dtype=pi.dtype)
    view = _SpatialView(tuple(pi.shape[1:-1]), layered.window, dtype=layered.dtype,
                        num_threads=layered.num_threads)
    mixture = np.zeros(pi.shape[1:], dtype=np.float64)
    for layer in range(pi.shape[0]):      # a layer at a time: no (layers x grid) temporary
        mixture += weights[layer][..., None] * pi[layer]
    view.pi_ = mixture.astype(pi.dtype)
    for name, value in fit_state(layered).items():
        setattr(view, name, value)
    view._defer_derived("h_")
    view.__dict__["_layered"] = layered
    view._remember_inference_params()
    return view


def word_layers(layered, top):
    """The layer each shown word comes from: ``argmax_l lambda_i(l) pi_{l,i}(w)`` for the
    words ``top`` (P, K) of every cell ``i`` of the spatial extent (ties: the lower
    layer)."""
    pi = np.asarray(layered.pi_)
    n_layers, Z = pi.shape[0], pi.shape[-1]
    weights = np.asarray(layered.layer_prior_, dtype=np.float64).reshape(n_layers, -1)
    cells = np.arange(top.shape[0])[:, None]
    share = np.stack([weights[layer][:, None] * pi[layer].reshape(-1, Z)[cells, top]
                      for layer in range(n_layers)])
    return np.argmax(share, axis=0)
