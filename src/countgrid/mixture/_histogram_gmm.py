"""EM for Gaussian mixtures fitted to weighted histograms (plain, symmetric, circular).

Kobayashi, *Higher-order co-occurrence features based on discriminative
co-clusters for image classification*, supplementary material, Algorithms 1–3
(after Xiao & Xuan, *Fast EM algorithm of multi-dimensional histogram*, 2002).
"""
import functools
from numbers import Integral, Real

import numpy as np
from scipy.linalg import solve_triangular
from scipy.special import logsumexp

from countgrid._base import BaseEstimator
from countgrid._engine.em_loop import EMMonitor
from countgrid._utils.docs import fill_doc
from countgrid._utils.fitted import array, fitted_array, fitted_bool, fitted_int, scalar
from countgrid._utils.memory import check_memory
from countgrid._utils.param_validation import Interval, Options
from countgrid._utils.validation import as_real_array, check_is_fitted, check_random_state

_DOMAINS = ("euclidean", "symmetric", "circular")

#: The parameters of the density methods (countgrid._utils.docs).
_POINTS_PARAMETERS_DOC = """Parameters
----------
points : array-like of shape (..., n_dims)
    Finite coordinates."""


_LOG_2PI = np.log(2.0 * np.pi)
#: Points whose direct log-joints stay below this magnitude use them as they are (see
#: HistogramGMM._log_resp_norm).
_DIRECT_LIMIT = 1e4


@fill_doc(parameters=_POINTS_PARAMETERS_DOC)
class HistogramGMM(BaseEstimator):
    """Gaussian mixture fitted by EM to a non-negative weighted histogram.

    The histogram ``W`` (any number of axes) is normalised to a probability
    distribution over its bins, ``p(x_b) = W_b / sum(W)``, and EM maximises the
    weighted log-likelihood ``l = sum_b p(x_b) log f(x_b)`` of the bin centres
    ``x_b`` (supplement, Algorithm 1: E-step line 3, M-step lines 4–6).

    Three domains are supported:

    ``"euclidean"``
        Algorithm 1, the plain mixture ``f(x) = sum_k w_k N(x; mu_k, S_k)``.
    ``"symmetric"``
        Algorithm 2, for symmetric histograms ``W_ij = W_ji`` of paired
        coordinates ``x = [a; b]`` (the dimension must be even).  Every
        component is doubled with its mirror image ``flip([a; b]) = [b; a]``
        (``flip`` of a covariance swaps its diagonal blocks and transposes its
        off-diagonal blocks) and the density is
        ``f(x) = sum_k w_k / 2 [N(x; mu_k, S_k) + N(x; flip(mu_k), flip(S_k))]``.
        The E-step runs over the ``2 n_components`` doubled components
        (line 4); the M-step averages each component with the flipped copy of
        its mirror (lines 8–10).  We average with the weights
        ``alpha~_k`` and ``alpha~_{D+k}`` of line 5, which is the exact M-step
        of the tied model (so the likelihood never decreases) and equals the
        paper's plain average when ``W`` is symmetric, because then
        ``alpha~_k = alpha~_{D+k}``.
    ``"circular"``
        Algorithm 3, for angles of period ``period`` on every coordinate (a
        torus).  Differences are wrapped into ``[-period/2, period/2)``
        (the paper's circular minus), means are circular means
        ``arg(sum_b p_b gamma_bk exp(i 2 pi x_b / period))`` (line 5), and the
        component density ``N_circ`` is the Gaussian of the wrapped
        difference.  As the paper notes, ``N_circ`` is not normalised on the
        torus; it is close to normalised when the components are narrow
        compared with the period.  For the same reason Algorithm 3 is EM only
        approximately: the circular mean is not the exact maximiser of the
        ``N_circ`` objective, and the log-likelihood can dip by tiny amounts
        (we observe ``< 1e-6`` for localised clusters; more when mass is spread
        over the whole torus).

    Numerical safety: after every M-step the eigenvalues of each covariance
    are floored at ``reg_covar`` (``S <- V max(Lambda, reg_covar) V^T``).
    Responsibilities are computed from log-density *differences* between
    components, expanded around a reference component and evaluated on
    rescaled coordinates, so that points arbitrarily far from every component
    (up to the largest float) get proper responsibilities instead of NaN and
    log densities ``-inf`` only when they underflow.  Where every component's log
    density is below the float range and rounding leaves the expansion undecided (a
    component and its mirror image at a point on the mirror plane), the component of
    positive weight nearest in the scaled Mahalanobis distance takes the point (equal
    distances: the largest ``log w_k - log|2 pi S_k|/2``; equal constants share it).
    Histogram weights of any finite magnitude are normalised without overflow; bin
    centres whose spread
    would overflow the Mahalanobis distances (``spread**2 / reg_covar`` beyond
    ``1e300``) are rejected.
    That is the exact maximiser of the M-step objective over covariances
    with all eigenvalues ``>= reg_covar``, so EM stays monotone (Algorithms
    1 and 2).  A component
    whose responsibility mass falls below ``1e-12`` keeps its previous mean
    and covariance.

    Parameters
    ----------
    n_components : int
        Number of mixture components ``D`` (before doubling in the symmetric
        domain).
    domain : {"euclidean", "symmetric", "circular"}, default="euclidean"
        Algorithm 1, 2 or 3.
    period : float, default=2*pi
        Period of every coordinate in the circular domain (ignored otherwise).
    n_iter : int, default=200
        Maximum number of EM iterations.
    tol : float, default=1e-7
        Stop when the weighted mean log-likelihood improves by less than
        ``tol``.  0 runs exactly ``n_iter`` iterations.
    reg_covar : float, default=1e-6
        Floor on the covariance eigenvalues, in squared units of the bin
        coordinates.
    random_state : None, int or numpy.random.Generator
        Seeds the initial means (weighted k-means++ over the bins).

    Attributes
    ----------
    means_ : ndarray of shape (n_components, n_dims)
        Component means (in ``[0, period)`` for the circular domain).
    covariances_ : ndarray of shape (n_components, n_dims, n_dims)
    weights_ : ndarray of shape (n_components,)
        Mixing weights, summing to 1 (in the symmetric domain each half of a
        doubled component carries ``weights_[k] / 2``).
    log_likelihood_ : ndarray of shape (n_iter_ + 1,)
        Weighted mean log-likelihood ``sum_b p_b log f(x_b)`` at the
        initialisation and after each iteration.
    n_iter_ : int
        EM iterations run.  An interrupted ``fit`` (Ctrl-C) keeps the last complete
        iteration.
    converged_ : bool
    n_dims_ : int
        Dimension of the bin coordinates.

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> rng = np.random.default_rng(0)
    >>> sample = np.r_[rng.normal(-2, 0.5, (500, 2)), rng.normal(2, 0.5, (500, 2))]
    >>> edges = np.linspace(-4, 4, 41)
    >>> W, _, _ = np.histogram2d(sample[:, 0], sample[:, 1], bins=[edges, edges])
    >>> centres = (edges[:-1] + edges[1:]) / 2
    >>> gmm = countgrid.HistogramGMM(2, random_state=0).fit(W, [centres, centres])
    >>> np.round(np.sort(gmm.means_[:, 0]))
    array([-2.,  2.])
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None)],
        "domain": [Options(*_DOMAINS)],
        "period": [Interval(Real, 0, None, closed="neither")],
        "n_iter": [Interval(Integral, 1, None)],
        "tol": [Interval(Real, 0, None)],
        "reg_covar": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }
    _inference_params = ("n_components", "domain", "period")
    _fitted_schema = {"means_": array("float", "n_components", "n_dims"),
                      "covariances_": array("float", "n_components", "n_dims", "n_dims"),
                      "weights_": array("float", "n_components"),
                      "log_likelihood_": array("float", "n_history"),
                      "n_iter_": scalar("int"), "converged_": scalar("bool"),
                      "n_dims_": scalar("int", bind="n_dims")}

    def __init__(self, n_components, domain="euclidean", period=2 * np.pi, n_iter=200, tol=1e-7,
                 reg_covar=1e-6, random_state=None):
        self.n_components = n_components
        self.domain = domain
        self.period = period
        self.n_iter = n_iter
        self.tol = tol
        self.reg_covar = reg_covar
        self.random_state = random_state

    # ------------------------------------------------------------ validation
    @staticmethod
    def _check_histogram(weights, bin_centers):
        """Flattened ``(x, p)``: bin coordinates (n_bins, d) and normalised weights."""
        W = as_real_array(weights, "weights").astype(np.float64)
        if W.ndim == 0 or W.size == 0:
            raise ValueError(f"weights must be a non-empty array, got shape {W.shape}")
        if not np.isfinite(W).all():
            raise ValueError("weights contains NaN or infinity")
        if W.min() < 0:
            raise ValueError(f"weights must be non-negative; found the value {W.min()!r}")
        top = W.max()
        if not top > 0:
            raise ValueError("weights must have a positive sum")
        # scaled by a power of two before summing: no overflow (1e308) or underflow (1e-320)
        W = np.ldexp(W, -np.frexp(top)[1])
        total = W.sum()
        if isinstance(bin_centers, (list, tuple)):
            if len(bin_centers) != W.ndim:
                raise ValueError(f"bin_centers as a list needs one 1-D array per axis of weights "
                                 f"({W.ndim}), got {len(bin_centers)}")
            axes = []
            for a, c in enumerate(bin_centers):
                c = as_real_array(c, f"bin_centers[{a}]")
                if c.ndim != 1 or c.shape[0] != W.shape[a]:
                    raise ValueError(f"bin_centers[{a}] must be 1-D of length {W.shape[a]}, "
                                     f"got shape {c.shape}")
                axes.append(c.astype(np.float64))
            X = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)
        else:
            X = as_real_array(bin_centers, "bin_centers")
            if X.ndim != W.ndim + 1 or X.shape[:-1] != W.shape or X.shape[-1] < 1:
                raise ValueError(f"bin_centers must have shape weights.shape + (n_dims,) = "
                                 f"{W.shape} + (n_dims,), got {X.shape}")
            X = X.astype(np.float64)
        if not np.isfinite(X).all():
            raise ValueError("bin_centers contains NaN or infinity")
        X = X.reshape(-1, X.shape[-1])
        p = W.reshape(-1) / total
        keep = p > 0
        return X[keep], p[keep]

    def _check_spread(self, X):
        """Bin centres whose squared spread over reg_covar fits in float64."""
        if self.domain == "circular":
            return
        spread = float(np.max(X.max(axis=0) - X.min(axis=0), initial=0.0))
        with np.errstate(over="ignore"):
            reach = spread * spread / float(self.reg_covar) * X.shape[1]
        if not reach <= 1e300:
            raise ValueError(f"bin_centers spread over {spread:.3g}: with reg_covar="
                             f"{float(self.reg_covar):g} the squared Mahalanobis distances "
                             "overflow float64; rescale bin_centers or raise reg_covar")

    def _check_points(self, points, name="points"):
        X = as_real_array(points, name)
        if X.ndim < 1 or X.shape[-1] != self.n_dims_:
            raise ValueError(f"{name} must have shape (..., {self.n_dims_}), got {X.shape}")
        X = X.astype(np.float64)
        if not np.isfinite(X).all():
            raise ValueError(f"{name} contains NaN or infinity")
        return X

    # --------------------------------------------------------------- helpers
    def _diff(self, X, mu):
        """x - mu, wrapped into [-period/2, period/2) on the circular domain."""
        if self.domain != "circular":
            return X - mu
        P = float(self.period)
        # far coordinates are wrapped first (np.remainder is exact), so that they keep
        # their angle instead of losing it in X - mu
        X = np.where(np.abs(X) > 2.0 ** 20 * P, np.remainder(X, P), X)
        d = X - mu
        return d - P * np.floor(d / P + 0.5)

    def _components(self, means, covs, weights):
        """Cholesky factors, precisions and log constants ``log w_k - log((2 pi)^(d/2)
        |S_k|^(1/2))`` of the E-step components."""
        m, S, w = self._expanded(means, covs, weights)
        L = np.linalg.cholesky(S)
        eye = np.eye(S.shape[-1])
        Linv = np.stack([solve_triangular(Lk, eye, lower=True) for Lk in L])
        prec = np.einsum("kji,kjl->kil", Linv, Linv)            # S^-1 = L^-T L^-1
        logdet = 2.0 * np.log(np.diagonal(L, axis1=1, axis2=2)).sum(axis=1)
        with np.errstate(divide="ignore"):
            const = np.log(w) - 0.5 * (S.shape[-1] * _LOG_2PI + logdet)
        return m, L, prec, const

    def _log_joint(self, X, means, covs, weights):
        """``log w_k N(x; mu_k, S_k)`` (or N_circ) of shape (n, K), directly (may overflow
        to -inf for points extremely far away; see _log_resp_norm)."""
        m, S, w = self._expanded(means, covs, weights)
        n, d = X.shape
        out = np.empty((n, m.shape[0]))
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for k in range(m.shape[0]):
                L = np.linalg.cholesky(S[k])
                z = np.linalg.solve(L, self._diff(X, m[k]).T)
                logdet = 2.0 * np.log(np.diag(L)).sum()
                out[:, k] = -0.5 * (d * _LOG_2PI + logdet + (z * z).sum(axis=0))
            return out + np.log(w)

    def _scaled_quadratics(self, X, m, L):
        """Squared Mahalanobis distances ``|L_k^-1 (x - m_k)|^2 = 2^(2e) s_k`` on coordinates
        scaled by a power of two ``2^-e`` per point: returns ``s`` (n, K), finite for every
        finite point, and ``e`` (n,); euclidean and symmetric domains.  In the symmetric
        domain a mirror component's distance is that of its component at the mirrored
        point (the same arithmetic), so a point on the mirror plane is exactly as far from
        both."""
        n, K = X.shape[0], m.shape[0]
        e = np.frexp(np.maximum(np.abs(X).max(axis=1, initial=0.0),
                                np.abs(m).max(initial=0.0)))[1]
        Xs = np.ldexp(X, -e[:, None])
        half = K // 2 if self.domain == "symmetric" else K
        s = np.empty((n, K))
        for k in range(half):
            z = solve_triangular(L[k], (Xs - np.ldexp(m[k], -e[:, None])).T, lower=True)
            s[:, k] = (z * z).sum(axis=0)
            if half < K:
                z = solve_triangular(L[k], (self._flip_vec(Xs)
                                            - np.ldexp(m[k], -e[:, None])).T, lower=True)
                s[:, half + k] = (z * z).sum(axis=0)
        return s, e

    def _log_resp_norm(self, X, means, covs, weights):
        """Log responsibilities (n, K) over the E-step components and log densities (n,).

        Points whose log-joints are all finite and below ``_DIRECT_LIMIT`` in magnitude
        (every point near the mixture) use the direct log-joints and a log-sum-exp; their
        rounding error in a responsibility is below ``1e-12``.  Farther points (euclidean
        and symmetric domains; distances on the torus are bounded) would lose the
        responsibilities to cancellation between huge quadratic forms, or get NaN when
        those overflow.  For them, the log-joint of component k is written as that of a
        reference component r plus
            delta_k = c_k - c_r - 1/2 [y^T (P_k - P_r) y - 2 y^T P_k dm + dm^T P_k dm],
        y = x - mu_r, dm = mu_k - mu_r, P = S^-1, with y = 2^e v (|v| < 2), evaluated as
        ldexp(ldexp(alpha, e) + beta, e) + gamma: no term cancels against a much larger
        one (far points are decided by the quadratic, then the linear terms), nothing
        overflows to NaN, and r moves to the largest delta until no component beats it.
        Points for which that does not settle (possible only when every log-joint is
        below the float range: the log density is -inf) are decided by :meth:`_nearest`.
        """
        lj = self._log_joint(X, means, covs, weights)
        n, K = lj.shape
        log_resp, log_norm = np.empty((n, K)), np.empty(n)
        safe = np.isfinite(lj).all(axis=1)
        if self.domain != "circular":
            safe &= np.abs(lj).max(axis=1, initial=0.0) <= _DIRECT_LIMIT
        log_norm[safe] = logsumexp(lj[safe], axis=1)
        log_resp[safe] = lj[safe] - log_norm[safe, None]
        far = np.flatnonzero(~safe)
        if far.size == 0:
            return log_resp, log_norm
        m, L, prec, const = self._components(means, covs, weights)
        Xf = X[far]
        s, e = self._scaled_quadratics(Xf, m, L)
        with np.errstate(over="ignore"):
            # -inf only where the log-joint is below the float range
            direct = const - np.ldexp(0.5 * s, 2 * e[:, None])
        todo = np.arange(far.size)
        # the reference: the largest log-joint, or (all below the float range) the nearest
        # component of positive weight; a component of weight 0 never is one
        ref = np.where(np.isfinite(direct).any(axis=1), np.argmax(direct, axis=1),
                       np.argmin(np.where(np.isfinite(const), s, np.inf), axis=1))
        delta = np.zeros((far.size, K))
        for _ in range(K + 1):
            if todo.size == 0:
                break
            for r in np.unique(ref[todo]):
                idx = todo[ref[todo] == r]
                delta[idx] = self._delta(Xf[idx], m, prec, const, r)
            best = np.argmax(delta[todo], axis=1)
            moved = delta[todo, best] > 0
            todo = todo[moved]
            ref[todo] = best[moved]
        top = delta.max(axis=1)
        with np.errstate(invalid="ignore"):
            lse = top + np.log(np.exp(delta - top[:, None]).sum(axis=1))
        log_resp[far] = delta - lse[:, None]
        log_norm[far] = direct[np.arange(far.size), ref] + lse
        # beyond the float range the rounding of quadratic forms that are equal in some
        # direction (a component and its mirror image at a point on the mirror plane) is
        # multiplied by 2^(2e) and can make every component beat another (+inf both ways)
        lost = ~(top <= 0) | ~np.isfinite(lse) | np.isnan(delta).any(axis=1)
        if lost.any():
            rows = far[lost]
            log_resp[rows] = self._nearest(s[lost], const)
            log_norm[rows] = logsumexp(direct[lost], axis=1)
        return log_resp, log_norm

    @staticmethod
    def _nearest(s, const):
        """Log responsibilities of points whose log-joints are all below the float range:
        there, the smallest quadratic form takes all (the others' densities are smaller by
        a factor below ``exp(-1e292)``), so one-hot on the smallest scaled squared
        Mahalanobis distance ``s`` among the components of positive weight; equal
        distances go to the largest constant ``log w_k - log|2 pi S_k|/2``, and equal
        constants share equally (a component and its mirror image at a point on the mirror
        plane)."""
        ok = np.isfinite(const)[None, :]
        s = np.where(ok, s, np.inf)
        cand = s == s.min(axis=1, keepdims=True)
        c = np.where(cand, const[None, :], -np.inf)
        win = cand & (c == c.max(axis=1, keepdims=True))
        with np.errstate(divide="ignore"):
            return np.log(win / win.sum(axis=1, keepdims=True))

    @staticmethod
    def _delta(X, m, prec, const, r):
        """delta_k of every point of X for the reference component r (see
        _log_resp_norm)."""
        e = np.frexp(np.maximum(np.abs(X).max(axis=1, initial=0.0),
                                np.abs(m[r]).max(initial=0.0)))[1]
        V = np.ldexp(X, -e[:, None]) - np.ldexp(m[r][None, :], -e[:, None])
        dm = m - m[r]
        b = np.einsum("kij,kj->ki", prec, dm)
        alpha = -0.5 * np.einsum("ni,kij,nj->nk", V, prec - prec[r], V)
        beta = V @ b.T
        with np.errstate(over="ignore", invalid="ignore"):
            gamma = const - const[r] - 0.5 * np.einsum("ki,ki->k", dm, b)
            out = np.ldexp(np.ldexp(alpha, e[:, None]) + beta, e[:, None]) + gamma
        out[:, r] = 0.0
        out[:, ~np.isfinite(const)] = -np.inf         # weight 0 (not inf - inf = NaN)
        return out

    def _flip_vec(self, v):
        h = v.shape[-1] // 2
        return np.concatenate([v[..., h:], v[..., :h]], axis=-1)

    def _flip_cov(self, S):
        h = S.shape[-1] // 2
        perm = np.r_[np.arange(h, 2 * h), np.arange(h)]
        return S[..., perm, :][..., :, perm]

    def _expanded(self, means, covs, weights):
        """Components of the E-step (doubled with their mirrors when symmetric)."""
        if self.domain != "symmetric":
            return means, covs, weights
        return (np.concatenate([means, self._flip_vec(means)]),
                np.concatenate([covs, self._flip_cov(covs)]),
                np.concatenate([weights, weights]) / 2.0)

    def _floor_cov(self, S):
        S = 0.5 * (S + S.T)
        lam, V = np.linalg.eigh(S)
        lam = np.maximum(lam, float(self.reg_covar))
        return (V * lam) @ V.T

    def _weighted_mean(self, X, r, nk):
        if self.domain == "circular":
            ang = X * (2.0 * np.pi / float(self.period))
            s = r @ np.sin(ang)
            c = r @ np.cos(ang)
            return np.mod(np.arctan2(s, c) * (float(self.period) / (2.0 * np.pi)),
                          float(self.period))
        return (r @ X) / nk

    def _mstep(self, X, p, log_resp, means, covs):
        """Lines 4–6 of Algorithm 1/3, or lines 5–11 of Algorithm 2."""
        R = np.exp(log_resp) * p[:, None]                     # p_b gamma_bk
        D = self.n_components
        new_means, new_covs = means.copy(), covs.copy()
        if self.domain == "symmetric":
            Xf = self._flip_vec(X)
            nk = R[:, :D].sum(axis=0) + R[:, D:].sum(axis=0)  # alpha~_k + alpha~_{D+k}
            for k in range(D):
                if nk[k] <= 1e-12:
                    continue
                mu = (R[:, k] @ X + R[:, D + k] @ Xf) / nk[k]
                d1, d2 = X - mu, Xf - mu
                S = ((d1 * R[:, k, None]).T @ d1 + (d2 * R[:, D + k, None]).T @ d2) / nk[k]
                new_means[k], new_covs[k] = mu, self._floor_cov(S)
        else:
            nk = R.sum(axis=0)
            for k in range(D):
                if nk[k] <= 1e-12:
                    continue
                mu = self._weighted_mean(X, R[:, k], nk[k])
                dx = self._diff(X, mu)
                S = (dx * R[:, k, None]).T @ dx / nk[k]
                new_means[k], new_covs[k] = mu, self._floor_cov(S)
        weights = np.maximum(nk, 1e-300)
        return new_means, new_covs, weights / weights.sum()

    def _initialise(self, X, p, rng):
        """Weighted k-means++ means; the pooled covariance shrunk by D^(2/d)."""
        D, d = self.n_components, X.shape[1]
        means = np.empty((D, d))
        means[0] = X[rng.choice(len(p), p=p)]
        dist = np.full(len(p), np.inf)
        for k in range(1, D):
            dist = np.minimum(dist, (self._diff(X, means[k - 1]) ** 2).sum(axis=1))
            prob = p * dist
            if prob.sum() <= 0:
                means[k] = X[rng.choice(len(p), p=p)]
            else:
                means[k] = X[rng.choice(len(p), p=prob / prob.sum())]
        mu = self._weighted_mean(X, p, 1.0)
        dx = self._diff(X, mu)
        S = (dx * p[:, None]).T @ dx / D ** (2.0 / d)
        covs = np.stack([self._floor_cov(S) for _ in range(D)])
        return means, covs, np.full(D, 1.0 / D)

    # ------------------------------------------------------------------- API
    def fit(self, weights, bin_centers):
        """Fit the mixture to a weighted histogram by EM.

        Parameters
        ----------
        weights : array-like of shape (L_1, ..., L_m)
            Non-negative bin weights (any number of axes, e.g. ``L x L``);
            normalised to sum to 1 internally.
        bin_centers : array-like of shape (L_1, ..., L_m, n_dims) or list of m 1-D arrays
            Coordinates of every bin, either in full or as per-axis centre
            arrays of lengths ``L_1, ..., L_m`` (then ``n_dims = m`` and the
            bins form their Cartesian product).

        Returns
        -------
        self : HistogramGMM
        """
        self._validate_params()
        X, p = self._check_histogram(weights, bin_centers)
        d = X.shape[1]
        if self.domain == "symmetric" and d % 2:
            raise ValueError(f"domain='symmetric' needs an even number of coordinates "
                             f"([a; b] pairs), got n_dims={d}")
        self._check_spread(X)
        self._check_size(X.shape[0], d, "the histogram's bins")
        rng = check_random_state(self.random_state)
        means, covs, w = self._initialise(X, p, rng)
        # the weighted mean log-likelihood is a per-unit mean: an absolute tolerance
        monitor = EMMonitor("HistogramGMM", int(self.n_iter), float(self.tol), relative=False)
        log_resp, log_norm = self._log_resp_norm(X, means, covs, w)
        monitor.record(p @ log_norm, n_updates=0)
        for it in range(int(self.n_iter)):
            means, covs, w = self._mstep(X, p, log_resp, means, covs)
            log_resp, log_norm = self._log_resp_norm(X, means, covs, w)
            converged = monitor.record(p @ log_norm, n_updates=it + 1)
            # Ctrl-C from here on keeps this complete iteration (the M-step returns new
            # arrays, so these references are not changed by later iterations).  The
            # state is also set now: BaseEstimator's fit wrapper applies a checkpoint only
            # when the fit changed fitted attributes.
            state = (means, covs, w, list(monitor.history), it + 1, False, d)
            self._checkpoint(functools.partial(self._set_fitted, *state))
            self._set_fitted(*state)
            if converged:
                break
        monitor.finish()
        self._set_fitted(means, covs, w, monitor.history, monitor.n_updates,
                         monitor.converged, d)
        return self

    def _check_fitted_state(self):
        """Fitted attributes consistent with each other and the parameters (called by
        countgrid.io.load): K components in n_dims_ dimensions, symmetric positive-definite
        covariances, mixing weights that sum to 1."""
        K = int(self.n_components)
        d = fitted_int(self, "n_dims_", 1)
        fitted_array(self, "means_", shape=(K, d))
        covs = fitted_array(self, "covariances_", shape=(K, d, d))
        weights = fitted_array(self, "weights_", shape=(K,), nonnegative=True)
        if not abs(float(np.sum(weights)) - 1.0) <= 1e-6:
            raise ValueError(f"weights_ must sum to 1, got {float(np.sum(weights))!r}")
        if not np.allclose(covs, np.swapaxes(covs, 1, 2), rtol=1e-10, atol=0.0):
            raise ValueError("covariances_ must be symmetric")
        try:
            np.linalg.cholesky(covs.astype(np.float64))
        except np.linalg.LinAlgError:
            raise ValueError("covariances_ must be positive definite") from None
        fitted_array(self, "log_likelihood_", ndim=1)
        fitted_int(self, "n_iter_", 0)
        fitted_bool(self, "converged_")
        if self.domain == "symmetric" and d % 2:
            raise ValueError(f"n_dims_ must be even for domain='symmetric', got {d}")

    def _set_fitted(self, means, covs, weights, history, n_iter, converged, n_dims):
        self.means_ = means
        self.covariances_ = covs
        self.weights_ = weights
        self.log_likelihood_ = np.asarray(history, dtype=np.float64)
        self.n_iter_ = int(n_iter)
        self.converged_ = bool(converged)
        self.n_dims_ = int(n_dims)
        return f"iteration {n_iter} of {self.n_iter}"

    def _check_size(self, n_points, n_dims, what):
        """The E-step holds a few (points x components) arrays and per-component
        matrices."""
        K = self.n_components * (2 if self.domain == "symmetric" else 1)
        check_memory(n_points * K * 8 * 6 + K * n_dims * (n_dims + 1) * 8 * 6,
                     f"{what}: {n_points} points x {K} components",
                     "use fewer points at a time or a smaller n_components")

    def _evaluate(self, points):
        check_is_fitted(self, "means_")
        X = self._check_points(points)
        shape = X.shape[:-1]
        X = X.reshape(-1, self.n_dims_)
        self._check_size(X.shape[0], self.n_dims_, "points")
        log_resp, log_norm = self._log_resp_norm(X, self.means_, self.covariances_,
                                                 self.weights_)
        return shape, log_resp, log_norm

    def score_samples(self, points):
        """Log density ``log f(x)`` at arbitrary points.

        {parameters}

        Returns
        -------
        log_density : ndarray of shape (...)
            ``-inf`` only where the density underflows float64 (points extremely far
            from every component).
        """
        shape, _, log_norm = self._evaluate(points)
        return log_norm.reshape(shape)

    def pdf(self, points):
        """Mixture density ``f(x)`` at arbitrary points: ``exp`` of :meth:`score_samples`.

        {parameters}

        Returns
        -------
        density : ndarray of shape (...)
            ``f(x)``, one value per point (shape ``points.shape[:-1]``); 0 only where the
            density underflows float64.
        """
        return np.exp(self.score_samples(points))

    def predict_proba(self, points):
        """Component responsibilities, shape ``points.shape[:-1] + (n_components,)``.

        In the symmetric domain the two mirror halves of a component are summed.  Points
        far from every component get the responsibilities the exact densities give
        (typically one component takes all: the one whose quadratic form grows slowest
        in the point's direction; a component of weight 0 never does).  Every row is a
        distribution (no NaN), also for points whose log density is ``-inf``.
        """
        shape, log_resp, _ = self._evaluate(points)
        r = np.exp(log_resp)
        if self.domain == "symmetric":
            r = r[:, :self.n_components] + r[:, self.n_components:]
        return r.reshape(shape + (self.n_components,))

    def predict(self, points):
        """The most responsible component of each point (shape ``points.shape[:-1]``)."""
        return np.argmax(self.predict_proba(points), axis=-1)

    def sample(self, n_samples=1, random_state=None):
        """Draw points from the fitted mixture.

        Parameters
        ----------
        n_samples : int >= 1, default=1
        random_state : None, int or numpy.random.Generator, optional
            Seeds the draw (None: the estimator's ``random_state``).

        Returns
        -------
        X : ndarray of shape (n_samples, n_dims)
            In the circular domain wrapped into ``[0, period)``; in the symmetric domain
            each point comes from a component or, with probability 1/2, its mirror.
        labels : ndarray of shape (n_samples,)
            The component of each point.
        """
        check_is_fitted(self, "means_")
        if isinstance(n_samples, (bool, np.bool_)) or not isinstance(n_samples, Integral):
            raise TypeError(f"n_samples must be an int, got {n_samples!r}")
        if n_samples < 1:
            raise ValueError(f"n_samples must be >= 1, got {n_samples}")
        check_memory(int(n_samples) * self.n_dims_ * 8 * 3, f"{n_samples} samples",
                     "draw fewer samples at a time")
        rng = check_random_state(self.random_state if random_state is None else random_state)
        labels = rng.choice(self.n_components, size=int(n_samples), p=self.weights_)
        L = np.linalg.cholesky(self.covariances_)
        z = rng.standard_normal((int(n_samples), self.n_dims_))
        X = self.means_[labels] + np.einsum("nij,nj->ni", L[labels], z)
        if self.domain == "symmetric":
            flip = rng.random(int(n_samples)) < 0.5
            X[flip] = self._flip_vec(X[flip])
        elif self.domain == "circular":
            X = np.mod(X, float(self.period))
        return X, labels

    def score(self, weights, bin_centers):
        """Weighted mean log-likelihood ``sum_b p_b log f(x_b)`` of a histogram.

        Parameters are as in :meth:`fit`; ``weights`` is normalised to sum to 1.
        """
        check_is_fitted(self, "means_")
        X, p = self._check_histogram(weights, bin_centers)
        if X.shape[1] != self.n_dims_:
            raise ValueError(f"bin_centers has {X.shape[1]} coordinates, but the model was "
                             f"fitted with {self.n_dims_}")
        return float(p @ self.score_samples(X))
