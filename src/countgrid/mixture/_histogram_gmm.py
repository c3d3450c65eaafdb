"""EM for Gaussian mixtures fitted to weighted histograms (plain, symmetric, circular).

Kobayashi, *Higher-order co-occurrence features based on discriminative
co-clusters for image classification*, supplementary material, Algorithms 1–3
(after Xiao & Xuan, *Fast EM algorithm of multi-dimensional histogram*, 2002).
"""
from numbers import Integral, Real

import numpy as np
from scipy.special import logsumexp

from countgrid._base import BaseEstimator
from countgrid._em_loop import EMMonitor
from countgrid._param_validation import Interval, Options
from countgrid._validation import check_is_fitted, check_random_state

_DOMAINS = ("euclidean", "symmetric", "circular")
_LOG_2PI = np.log(2.0 * np.pi)


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
    _fitted_arrays = ("means_", "covariances_", "weights_", "log_likelihood_", "n_iter_",
                      "converged_", "n_dims_")

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
        if isinstance(weights, (str, bytes)):
            raise TypeError("weights must be an array of non-negative numbers")
        W = np.asarray(weights)
        if W.dtype.kind not in "biuf":
            raise TypeError(f"weights must hold real numbers, got dtype {W.dtype}")
        W = W.astype(np.float64)
        if W.ndim == 0 or W.size == 0:
            raise ValueError(f"weights must be a non-empty array, got shape {W.shape}")
        if not np.isfinite(W).all():
            raise ValueError("weights contains NaN or infinity")
        if W.min() < 0:
            raise ValueError(f"weights must be non-negative; found the value {W.min()!r}")
        total = W.sum()
        if not total > 0:
            raise ValueError("weights must have a positive sum")
        if isinstance(bin_centers, (list, tuple)):
            if len(bin_centers) != W.ndim:
                raise ValueError(f"bin_centers as a list needs one 1-D array per axis of weights "
                                 f"({W.ndim}), got {len(bin_centers)}")
            axes = []
            for a, c in enumerate(bin_centers):
                c = np.asarray(c)
                if c.dtype.kind not in "biuf":
                    raise TypeError(f"bin_centers[{a}] must hold real numbers, got dtype {c.dtype}")
                if c.ndim != 1 or c.shape[0] != W.shape[a]:
                    raise ValueError(f"bin_centers[{a}] must be 1-D of length {W.shape[a]}, "
                                     f"got shape {c.shape}")
                axes.append(c.astype(np.float64))
            X = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)
        else:
            X = np.asarray(bin_centers)
            if X.dtype.kind not in "biuf":
                raise TypeError(f"bin_centers must hold real numbers, got dtype {X.dtype}")
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

    def _check_points(self, points, name="points"):
        X = np.asarray(points)
        if X.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold real numbers, got dtype {X.dtype}")
        if X.ndim < 1 or X.shape[-1] != self.n_dims_:
            raise ValueError(f"{name} must have shape (..., {self.n_dims_}), got {X.shape}")
        return X.astype(np.float64)

    # --------------------------------------------------------------- helpers
    def _diff(self, X, mu):
        """x - mu, wrapped into [-period/2, period/2) on the circular domain."""
        d = X - mu
        if self.domain == "circular":
            P = float(self.period)
            d = d - P * np.floor(d / P + 0.5)
        return d

    def _log_gauss(self, X, means, covs):
        """log N(x; mu_k, S_k) (or N_circ) of shape (n, K)."""
        n, d = X.shape
        out = np.empty((n, means.shape[0]))
        for k in range(means.shape[0]):
            L = np.linalg.cholesky(covs[k])
            z = np.linalg.solve(L, self._diff(X, means[k]).T)
            logdet = 2.0 * np.log(np.diag(L)).sum()
            out[:, k] = -0.5 * (d * _LOG_2PI + logdet + (z * z).sum(axis=0))
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

    def _log_joint(self, X, means, covs, weights):
        m, S, w = self._expanded(means, covs, weights)
        with np.errstate(divide="ignore"):
            return self._log_gauss(X, m, S) + np.log(w)

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
        rng = check_random_state(self.random_state)
        means, covs, w = self._initialise(X, p, rng)
        # the weighted mean log-likelihood is a per-unit mean: an absolute tolerance
        monitor = EMMonitor("HistogramGMM", int(self.n_iter), float(self.tol), relative=False)
        log_joint = self._log_joint(X, means, covs, w)
        log_norm = logsumexp(log_joint, axis=1)
        monitor.record(p @ log_norm, n_updates=0)
        for it in range(int(self.n_iter)):
            log_resp = log_joint - log_norm[:, None]
            means, covs, w = self._mstep(X, p, log_resp, means, covs)
            log_joint = self._log_joint(X, means, covs, w)
            log_norm = logsumexp(log_joint, axis=1)
            if monitor.record(p @ log_norm, n_updates=it + 1):
                break
        monitor.finish()
        self.means_ = means
        self.covariances_ = covs
        self.weights_ = w
        self.log_likelihood_ = np.asarray(monitor.history)
        self.n_iter_ = monitor.n_updates
        self.converged_ = monitor.converged
        self.n_dims_ = d
        return self

    def score_samples(self, points):
        """Log density ``log f(x)`` at arbitrary points.

        Parameters
        ----------
        points : array-like of shape (..., n_dims)

        Returns
        -------
        log_density : ndarray of shape (...)
        """
        check_is_fitted(self, "means_")
        X = self._check_points(points)
        shape = X.shape[:-1]
        lj = self._log_joint(X.reshape(-1, self.n_dims_), self.means_, self.covariances_,
                             self.weights_)
        return logsumexp(lj, axis=1).reshape(shape)

    def pdf(self, points):
        """Mixture density ``f(x)`` at arbitrary points (shape ``points.shape[:-1]``)."""
        return np.exp(self.score_samples(points))

    def predict_proba(self, points):
        """Component responsibilities, shape ``points.shape[:-1] + (n_components,)``.

        In the symmetric domain the two mirror halves of a component are summed.
        """
        check_is_fitted(self, "means_")
        X = self._check_points(points)
        shape = X.shape[:-1]
        lj = self._log_joint(X.reshape(-1, self.n_dims_), self.means_, self.covariances_,
                             self.weights_)
        r = np.exp(lj - logsumexp(lj, axis=1, keepdims=True))
        if self.domain == "symmetric":
            r = r[:, :self.n_components] + r[:, self.n_components:]
        return r.reshape(shape + (self.n_components,))

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
