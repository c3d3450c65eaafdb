"""Generative embeddings built on counting grids (Bicego et al., Neurocomputing 2013, with
counting grids as the generative model; docs/counting_grids.md): the posterior over
window positions (the analogue of the mixture of topics) and the terms of the free energy.
"""
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.special import xlogy

from countgrid._utils.counts import check_counts
from countgrid._engine.embedding import _GenerativeEmbedding
from countgrid._utils.param_validation import (GridShape, InstanceOf, Interval, Options,
                                         validate_call_params)
from countgrid._utils.validation import check_is_fitted
from countgrid.grid._counting_grid import CountingGrid
from countgrid.grid._torus import grid_size

__all__ = ["CountingGridPosterior", "CountingGridFESS", "cg_fess_terms"]


@validate_call_params({"grid": [InstanceOf(CountingGrid, "a fitted CountingGrid")],
                       "reduce": [Options("positions", "features")]})
def cg_fess_terms(grid, X, reduce="positions"):
    """Free-energy terms (FESS, Perina et al. 2009) of a fitted :class:`~countgrid.CountingGrid`.

    With ``l_t(k) = sum_z c_z ln h_k(z)``, the location prior ``p(k)`` (uniform ``1/L``
    unless ``learn_prior``) and ``q_t(k)`` = ``grid.transform(X)`` (the E-step of Jojic &
    Perina, UAI 2011, eq. 3, floored at ``posterior_floor_``), the free energy is

    ``F_t = sum_k q_t(k) ln q_t(k) - sum_k q_t(k) [l_t(k) + ln p(k)] = sum A + sum P - sum E``

    with ``A_k = -q_t(k) l_t(k)`` (emission), ``P_k = -q_t(k) ln p(k)`` (location prior) and
    ``E_k = -q_t(k) ln q_t(k)`` (entropy), all >= 0.  ``F_t = -B_t`` is minus the bound
    ``B_t`` of their eq. 2 with the prior term kept (the exact-likelihood convention, not the
    authors' code's "loglikelihood", which drops ``ln p(k)``; docs/counting_grids.md,
    "Likelihood conventions"): ``F_t >= -ln p(c_t)`` (``score_samples``), with equality
    when ``q_t`` is the exact posterior, i.e. for ``posterior_floor=0``.

    Parameters
    ----------
    grid : CountingGrid
        Fitted grid.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    reduce : {"positions", "features"}, default="positions"
        "positions": ``[A_k, P_k, E_k]`` per window position (``3 L`` columns, C order of
        ``extent``); "features": the emission term split by feature,
        ``A_z = -c_z sum_k q_t(k) ln h_k(z)`` (``W`` columns), followed by ``sum_k P_k`` and
        ``sum_k E_k`` (``W + 2`` columns).

    Returns
    -------
    ndarray of shape (n_samples, 3 L) or (n_samples, n_features + 2), non-negative
    """
    check_is_fitted(grid, "pi_")
    _, logh, log_prior = grid._model()
    logh = np.asarray(logh, dtype=np.float64)                 # (W, L)
    L = logh.shape[1]
    log_p = (np.full(L, -np.log(L)) if log_prior is None
             else np.asarray(log_prior, dtype=np.float64))
    C = check_counts(X, np.float64, n_features=grid.n_features_in_,
                     owner=type(grid).__name__)[0]
    q = np.asarray(grid.transform(C), dtype=np.float64)       # (D, L)
    P = -q * log_p[None, :]
    # -q ln q >= 0 for q <= 1; a posterior normalised to 1 + ulp would make it -1e-16
    E = np.maximum(-xlogy(q, q), 0.0)
    if reduce == "positions":
        ell = np.asarray(C @ logh)                             # (D, L)
        return np.hstack([-q * ell, P, E])
    expected = q @ logh.T                                      # (D, W): sum_k q_k ln h_k(z)
    A = -(C.multiply(expected).toarray() if sp.issparse(C) else C * expected)
    return np.hstack([A, P.sum(axis=1, keepdims=True), E.sum(axis=1, keepdims=True)])


_CG_PARAMS_DOC = """
    Parameters
    ----------
    mode : {"per_class", "whole_data"} or "1"/"2", default="per_class"
        One grid per class (blocks concatenated in the order of ``classes_``) or one grid on
        all training documents.
    extent, window : tuple of int
        Grid and window shapes of every :class:`~countgrid.CountingGrid`.
    n_iter : int, default=100
    posterior_floor : "auto" or float, default="auto"
        Passed to the grids (0 makes ``q`` the exact posterior).
    random_state : None, int or numpy.random.Generator
    num_threads : int, optional
"""


_CG_CONSTRAINTS = {
    "extent": [GridShape()],
    "window": [GridShape()],
    "mode": [Options("per_class", "whole_data", "1", "2", "-1", "-2"), Options(1, 2)],
    "n_iter": [Interval(Integral, 1, None)],
    "posterior_floor": [Options("auto"), Interval(Real, 0, 1)],
    "random_state": ["random_state"],
    "num_threads": ["num_threads"],
}


class _CGEmbedding(_GenerativeEmbedding):
    """Per-class or whole-data counting grids."""

    _parameter_constraints = _CG_CONSTRAINTS
    _model_class = CountingGrid

    def __init__(self, extent=(10, 10), window=(3, 3), mode="per_class", n_iter=100,
                 posterior_floor="auto", random_state=None, num_threads=None):
        self.extent = extent
        self.window = window
        self.mode = mode
        self.n_iter = n_iter
        self.posterior_floor = posterior_floor
        self.random_state = random_state
        self.num_threads = num_threads

    def _new_model(self, seed):
        # the embeddings are float64 features for kernels and classifiers: their grids keep
        # float64 (the grid's own default is float32, docs/choosing.md "Defaults")
        return CountingGrid(self.extent, self.window, n_iter=self.n_iter,
                            posterior_floor=self.posterior_floor, num_threads=self.num_threads,
                            dtype=np.float64, random_state=seed)


class CountingGridPosterior(_CGEmbedding):
    __doc__ = """MT analogue on counting grids: the posterior ``q_t(k)`` over window positions.

    ``CountingGrid.transform`` (Jojic & Perina, UAI 2011, eq. 3, with the posterior floor;
    docs/counting_grids.md, "Learning"): ``L = prod(extent)`` dims per grid, each block sums
    to 1.
    """ + _CG_PARAMS_DOC

    def _embed(self, model, i, X):
        return np.asarray(model.transform(X), dtype=np.float64)

    def _block_width(self, model, i):
        return grid_size(model.pi_.shape[:-1])


class CountingGridFESS(_CGEmbedding):
    __doc__ = """FESS on counting grids: the free-energy terms of :func:`cg_fess_terms` per grid.

    ``reduce="positions"``: ``[A_k, P_k, E_k]`` (``3 L`` dims per grid);
    ``reduce="features"``: ``[A_z, sum P, sum E]`` (``W + 2`` dims).  Their signed sum
    ``sum A + sum P - sum E`` is the free energy ``F_t >= -ln p(c_t)`` (equal for
    ``posterior_floor=0``); all entries >= 0.
    """ + _CG_PARAMS_DOC + """
    reduce : {"positions", "features"}, default="positions"
    """

    def __init__(self, extent=(10, 10), window=(3, 3), mode="per_class", reduce="positions",
                 n_iter=100, posterior_floor="auto", random_state=None, num_threads=None):
        super().__init__(extent, window, mode, n_iter, posterior_floor, random_state,
                         num_threads)
        self.reduce = reduce

    _parameter_constraints = {**_CG_CONSTRAINTS, "reduce": [Options("positions", "features")]}

    _inference_params = ("reduce",)

    def _embed(self, model, i, X):
        return cg_fess_terms(model, X, self.reduce)

    def _block_width(self, model, i):
        if self.reduce == "positions":
            return 3 * grid_size(model.pi_.shape[:-1])
        return model.n_features_in_ + 2
