"""Generative topographic mapping with a zero-inflated Poisson observation model.

Alvarez-Medina & Hidalgo-Silva, *ZIP and data document visualization*
(equations 1–10), on top of the GTM of Bishop, Svensén & Williams (1998).
"""
from numbers import Integral, Real

import numpy as np
from scipy.special import logsumexp

from countgrid._base import BaseEstimator, TransformerMixin
from countgrid._counts import Counts
from countgrid._em_loop import EMMonitor
from countgrid._param_validation import GridShape, Interval, Options
from countgrid._threads import effective_n_threads, limit_blas_threads
from countgrid._validation import check_is_fitted, check_random_state, resolve_dtype
from countgrid.gtm import _gtm_kernels
from countgrid.gtm._glm import (log_px_given_latent, logistic_glm_fun, newton_columns,
                                poisson_glm_fun, softplus, zip_terms)


# --------------------------------------------------------------------------- estimator
class ZIPGTM(TransformerMixin, BaseEstimator):
    """Generative topographic mapping of count data with a zero-inflated Poisson model.

    ``K = prod(grid_shape)`` latent points ``x_k`` in the plane are mapped
    through ``n_basis`` basis functions ``phi_m`` (plus a constant) to, for
    every word ``j``, a Poisson rate and a structural-zero probability:

    * ``log lambda_kj = sum_m phi_km w_mj``  (log link, eq. 1),
    * ``logit p_kj = sum_m phi_km gamma_mj`` (logit link, eq. 2).

    A document ``t_n`` is drawn by picking a latent point with probability
    ``alpha_k`` and every word count from
    ``ZIP(t; lambda_kj, p_kj) = p [t = 0] + (1 - p) Poisson(t; lambda)``
    (eq. 3).  The paper's covariates ``G_nj`` of the zero part are not
    specified beyond a random initialisation; here they are the same basis
    functions, so the zero probability, like the rate, is a smooth function
    on the map (set ``zero_inflation=False`` for the plain Poisson GTM,
    ``p = 0``).

    EM (section 3): the E-step computes the responsibilities
    ``theta_nk`` (eq. 5) and, for the zero counts, the posterior probability
    ``Z_kj = p_kj / P(t = 0 | k)`` of the structural-zero state (Lambert
    1992; it depends on ``n`` only through ``t_nj = 0``).  The M-step is
    exact in ``alpha`` (eq. 10) and one or more penalised Newton (IRLS) steps
    for ``W`` (eq. 8: a weighted Poisson GLM per word with responses
    ``R = theta^T T`` and exposures ``S_kj = sum_n theta_nk (1 - Z_nkj)``)
    and for ``Gamma`` (eq. 9: a weighted logistic regression per word with
    ``A_kj = sum_{n: t_nj = 0} theta_nk Z_kj`` successes out of
    ``N_k = sum_n theta_nk``).  Newton steps are halved until the penalised
    expected complete-data log-likelihood does not decrease, so this is a
    generalised EM: the penalised log-likelihood ``objective_`` never
    decreases (``alpha=0``: the log-likelihood itself).

    All sums run over the non-zeros of the (sparse) count matrix: one
    iteration costs ``O(nnz K + K D M^2)``; sparse input stays sparse.  For
    sparse input the E-step (fused with the softmax) and the M-step
    statistics are C/OpenMP kernels (``csrc/gtm.c``) whose results do not
    depend on the thread count; dense input uses NumPy/BLAS.

    Parameters
    ----------
    grid_shape : tuple of 2 ints, default=(15, 18)
        Number of latent points ``K = grid_shape[0] * grid_shape[1]``.
    n_basis : int, default=25
        Number of basis functions ``M`` (a perfect square: their centres
        ``mu_m`` form a ``sqrt(M) x sqrt(M)`` grid); a constant column is added.
    basis : {"sinh", "rbf"}, default="sinh"
        ``"sinh"``: ``phi_km = sinh(x_k . mu_m)`` (eq. 4) with the centres on a
        grid over the half-plane ``[0.2, 1] x [-1, 1]`` (so that no two basis
        functions are negatives of each other); ``"rbf"``: Gaussian bumps
        ``exp(-|x_k - mu_m|^2 / (2 s^2))`` centred on a grid over
        ``[-1, 1]^2`` with ``s`` the centre spacing.  Every basis column is
        scaled to unit root-mean-square over the latent points.
    latent : {"grid", "random"}, default="grid"
        Latent points on a regular grid over ``[-1, 1]^2``, or drawn from a
        standard normal distribution (the paper's random sampling).
    zero_inflation : bool, default=True
        False fits the plain Poisson GTM (the zero part switched off).
    alpha : float, default=1e-2
        Ridge penalty ``alpha/2 (|W|^2 + |Gamma|^2)`` (a Gaussian prior on the
        weights, as in GTM) that keeps the Newton systems well conditioned.
    n_iter : int, default=100
        Maximum number of EM iterations.
    tol : float, default=1e-5
        Stop when the relative improvement of ``objective_`` falls below
        ``tol``; 0 runs ``n_iter`` iterations.
    n_irls : int, default=2
        Newton (IRLS) steps per M-step for ``W`` and for ``Gamma``.
    init : {"pca", "random"}, default="pca"
        ``"pca"``: the log-rates start on the plane of the two leading
        principal components of ``log(1 + t)`` (the usual GTM start);
        ``"random"``: small random weights.  Both start from the observed
        mean counts and excess-zero fractions.
    random_state : None, int or numpy.random.Generator
        Seeds random latent points, random initial weights and the PCA
        solver.
    num_threads : int, optional
        Threads of the OpenMP kernels and of BLAS (through threadpoolctl when
        it is installed); None = all cores, honouring ``OMP_NUM_THREADS``.
        On a busy machine 1 is often fastest (threads waiting for each other).
    verbose : int, default=0

    Attributes
    ----------
    latent_ : ndarray of shape (K, 2)
        Latent points ``x_k``.
    basis_centers_ : ndarray of shape (n_basis, 2)
    phi_ : ndarray of shape (K, n_basis + 1)
        Basis matrix (last column constant).
    rate_coef_ : ndarray of shape (n_basis + 1, n_features)
        ``W`` of eq. 1.
    zero_coef_ : ndarray of shape (n_basis + 1, n_features)
        ``Gamma`` of eq. 2 (absent when ``zero_inflation=False``).
    mixing_ : ndarray of shape (K,)
        ``alpha_k`` (eq. 10).
    log_likelihood_ : ndarray of shape (n_iter_ + 1,)
        Observed-data log-likelihood ``sum_n log sum_k alpha_k p(t_n | x_k)``
        at the start and after every iteration.
    objective_ : ndarray of shape (n_iter_ + 1,)
        ``log_likelihood_`` minus the ridge penalty (non-decreasing).
    n_iter_ : int
        EM iterations run.
    converged_ : bool
        Whether the relative improvement of ``objective_`` fell below ``tol``
        (else a ``ConvergenceWarning`` was issued).
    n_features_in_ : int
        Number of words (columns of X) seen in ``fit``.

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> X = np.random.default_rng(0).poisson(0.5, size=(60, 30))
    >>> gtm = countgrid.ZIPGTM(grid_shape=(5, 5), n_basis=9, n_iter=5, random_state=0).fit(X)
    >>> gtm.transform(X).shape
    (60, 2)
    """

    _parameter_constraints = {
        "grid_shape": [GridShape(ndim=2)],
        "n_basis": [Interval(Integral, 1, None)],
        "basis": [Options("sinh", "rbf")],
        "latent": [Options("grid", "random")],
        "zero_inflation": ["boolean"],
        "alpha": [Interval(Real, 0, None)],
        "n_iter": [Interval(Integral, 1, None)],
        "tol": [Interval(Real, 0, None)],
        "n_irls": [Interval(Integral, 1, None)],
        "init": [Options("pca", "random")],
        "random_state": ["random_state"],
        "num_threads": ["num_threads"],
        "verbose": ["boolean", Interval(Integral, 0, None)],
    }
    _fitted_arrays = ("latent_", "basis_centers_", "phi_", "rate_coef_", "zero_coef_", "mixing_",
                      "log_likelihood_", "objective_", "n_iter_", "converged_", "n_features_in_")

    def __init__(self, grid_shape=(15, 18), n_basis=25, basis="sinh", latent="grid",
                 zero_inflation=True, alpha=1e-2, n_iter=100, tol=1e-5, n_irls=2, init="pca",
                 random_state=None, num_threads=None, verbose=0):
        self.grid_shape = grid_shape
        self.n_basis = n_basis
        self.basis = basis
        self.latent = latent
        self.zero_inflation = zero_inflation
        self.alpha = alpha
        self.n_iter = n_iter
        self.tol = tol
        self.n_irls = n_irls
        self.init = init
        self.random_state = random_state
        self.num_threads = num_threads
        self.verbose = verbose

    # ------------------------------------------------------------ validation
    def _grid_and_threads(self):
        self._validate_params()
        r = int(round(np.sqrt(self.n_basis)))
        if r * r != self.n_basis:
            raise ValueError(f"n_basis must be a positive perfect square (a sqrt x sqrt grid of "
                             f"centres), got {self.n_basis!r}")
        return tuple(int(g) for g in self.grid_shape), effective_n_threads(self.num_threads)

    # --------------------------------------------------------------- set-up
    def _latent_and_basis(self, grid, rng):
        K = grid[0] * grid[1]
        if self.latent == "grid":
            a, b = np.meshgrid(np.linspace(-1, 1, grid[0]), np.linspace(-1, 1, grid[1]),
                               indexing="ij")
            latent = np.c_[a.ravel(), b.ravel()]
        else:
            latent = rng.standard_normal((K, 2))
        r = int(round(np.sqrt(self.n_basis)))
        v = np.linspace(-1, 1, r) if r > 1 else np.zeros(1)
        if self.basis == "sinh":
            u = np.linspace(0.2, 1, r) if r > 1 else np.ones(1)
            a, b = np.meshgrid(u, v, indexing="ij")
            centers = np.c_[a.ravel(), b.ravel()]
            phi = np.sinh(latent @ centers.T)
        else:
            a, b = np.meshgrid(v, v, indexing="ij")
            centers = np.c_[a.ravel(), b.ravel()]
            s = 2.0 / (r - 1) if r > 1 else 1.0
            d2 = ((latent[:, None, :] - centers[None, :, :]) ** 2).sum(axis=-1)
            phi = np.exp(-d2 / (2 * s * s))
        rms = np.sqrt((phi ** 2).mean(axis=0))
        phi = phi / np.where(rms > 0, rms, 1.0)
        return latent, centers, np.c_[phi, np.ones(K)]

    def _initial_coefs(self, X, is_sparse, latent, phi, rng):
        N, D = X.shape
        mean = np.asarray(X.mean(axis=0), dtype=np.float64).ravel()
        nnz_col = (np.bincount(X.indices, minlength=D) if is_sparse
                   else np.count_nonzero(X, axis=0)).astype(np.float64)
        frac0 = 1.0 - nnz_col / N
        base = np.log(mean + 1e-3)
        M1 = phi.shape[1]
        if self.init == "pca" and min(N, D) >= 3:
            Y = X.copy() if is_sparse else np.asarray(X, dtype=np.float64)
            if is_sparse:
                Y = Y.astype(np.float64)
                Y.data = np.log1p(Y.data)
            else:
                Y = np.log1p(Y)
            mu = np.asarray(Y.mean(axis=0)).ravel()
            if is_sparse:
                from scipy.sparse.linalg import LinearOperator, svds

                op = LinearOperator((N, D), dtype=np.float64,
                                    matvec=lambda v: Y @ v.ravel() - mu @ v.ravel(),
                                    rmatvec=lambda u: Y.T @ u.ravel() - mu * u.sum())
                _, s, vt = svds(op, k=2, random_state=rng)
                order = np.argsort(s)[::-1]
                s, vt = s[order], vt[order]
            else:
                _, s, vt = np.linalg.svd(Y - mu, full_matrices=False)
                s, vt = s[:2], vt[:2]
            z = (latent - latent.mean(axis=0)) / latent.std(axis=0)
            target = base + z @ ((s / np.sqrt(N))[:, None] * vt)
            coef = np.linalg.lstsq(phi, target, rcond=None)[0]
        else:
            coef = 0.1 * rng.standard_normal((M1, D))
            coef[-1] = base
        gamma = None
        if self.zero_inflation:
            e0 = np.exp(-mean)
            p0 = np.clip((frac0 - e0) / np.maximum(1 - e0, 1e-12), 0.01, 0.99)
            gamma = np.zeros((M1, D))
            gamma[-1] = np.log(p0 / (1 - p0))
        return coef, gamma

    # ---------------------------------------------------------------- pieces
    def _penalty(self, coef, gamma):
        pen = (coef ** 2).sum() + (0.0 if gamma is None else (gamma ** 2).sum())
        return 0.5 * float(self.alpha) * pen

    def _estep(self, data, phi, coef, gamma, log_mix):
        eta = phi @ coef
        zeta = None if gamma is None else phi @ gamma
        log_p0, delta, log_p = zip_terms(eta, zeta)
        theta, lse = _responsibilities(data, eta, log_p0, delta, log_mix)  # eq. 5
        return theta, lse, log_p0, log_p

    def _mstep(self, data, phi, PhiPhi, theta, coef, gamma, log_p0, log_p):
        Nk = theta.sum(axis=0)
        R, C = _statistics(data, theta)     # sum_n theta_nk t_nj, sum_{n: t_nj > 0} theta_nk
        alpha = float(self.alpha)
        if gamma is None:
            S = np.broadcast_to(Nk[:, None], R.shape)
        else:
            Z = np.exp(log_p - log_p0)                        # P(zero state | t = 0, k)
            A = Z * (Nk[:, None] - C)
            S = Nk[:, None] - A
            gamma = newton_columns(phi, PhiPhi, gamma,
                                   logistic_glm_fun(A, np.broadcast_to(Nk[:, None], A.shape)),
                                   alpha, int(self.n_irls))                       # eq. 9
        coef = newton_columns(phi, PhiPhi, coef, poisson_glm_fun(R, S), alpha,
                              int(self.n_irls))                                    # eq. 8
        with np.errstate(divide="ignore"):
            log_mix = np.log(Nk / Nk.sum())                                       # eq. 10
        return coef, gamma, log_mix

    # ------------------------------------------------------------------- fit
    def _data(self, X, nt, n_features=None):
        """Validated counts (float32/float64 kept, dense stays dense) and what the E- and
        M-steps need of them."""
        counts = Counts(X, resolve_dtype(None, X), n_features=n_features, dense_min_density=0.0)
        return _Data(counts, nt)

    def fit(self, X, y=None):
        """Fit the map by EM.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative counts (documents x words); float32 and float64 are
            kept, CSR/CSC stay sparse.
        y : ignored

        Returns
        -------
        self : ZIPGTM
        """
        grid, nt = self._grid_and_threads()
        data = self._data(X, nt)
        counts = data.counts
        rng = check_random_state(self.random_state)
        with limit_blas_threads(nt):
            latent, centers, phi = self._latent_and_basis(grid, rng)
            coef, gamma = self._initial_coefs(counts.X, counts.is_sparse, latent, phi, rng)
            iu = np.triu_indices(phi.shape[1])
            PhiPhi = phi[:, iu[0]] * phi[:, iu[1]]        # upper triangle of phi_k phi_k^T
            log_mix = np.full(phi.shape[0], -np.log(phi.shape[0]))
            theta, lse, log_p0, log_p = self._estep(data, phi, coef, gamma, log_mix)
            ll = [float(lse.sum())]
            monitor = EMMonitor("ZIPGTM", int(self.n_iter), float(self.tol),
                                verbose=self.verbose, label="objective")
            monitor.record(ll[0] - self._penalty(coef, gamma), n_updates=0)
            for it in range(int(self.n_iter)):
                coef, gamma, log_mix = self._mstep(data, phi, PhiPhi, theta, coef, gamma,
                                                   log_p0, log_p)
                theta, lse, log_p0, log_p = self._estep(data, phi, coef, gamma, log_mix)
                ll.append(float(lse.sum()))
                if monitor.record(ll[-1] - self._penalty(coef, gamma), n_updates=it + 1):
                    break
            monitor.finish()
        self.latent_ = latent
        self.basis_centers_ = centers
        self.phi_ = phi
        self.rate_coef_ = coef
        if gamma is not None:
            self.zero_coef_ = gamma
        elif hasattr(self, "zero_coef_"):
            del self.zero_coef_
        self.mixing_ = np.exp(log_mix)
        self.log_likelihood_ = np.asarray(ll)
        self.objective_ = np.asarray(monitor.history)
        self.n_iter_ = monitor.n_updates
        self.converged_ = monitor.converged
        self.n_features_in_ = counts.n_features
        return self

    # ------------------------------------------------------------- read-out
    def _posterior(self, X):
        check_is_fitted(self, "rate_coef_")
        data = self._data(X, effective_n_threads(self.num_threads), self.n_features_in_)
        gamma = getattr(self, "zero_coef_", None)
        with np.errstate(divide="ignore"):
            log_mix = np.log(self.mixing_)
        theta, lse, _, _ = self._estep(data, self.phi_, self.rate_coef_, gamma, log_mix)
        return theta, lse

    def predict_proba(self, X):
        """Responsibilities ``theta_nk`` of the latent points (eq. 5).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Counts of documents over the training vocabulary.

        Returns
        -------
        theta : ndarray of shape (n_samples, K)
        """
        return self._posterior(X)[0]

    def transform(self, X):
        """Posterior-mean map coordinates ``sum_k theta_nk x_k``, shape (n_samples, 2)."""
        return self.predict_proba(X) @ self.latent_

    def score_samples(self, X):
        """Log-likelihood ``log sum_k alpha_k p(t_n | x_k)`` of every document (with ``log t!``)."""
        return self._posterior(X)[1]

    def score(self, X, y=None):
        """Mean log-likelihood per document."""
        return float(np.mean(self.score_samples(X)))

    def rates(self):
        """``lambda_kj = exp(Phi W)``, shape (K, n_features) (eq. 1)."""
        check_is_fitted(self, "rate_coef_")
        return np.exp(self.phi_ @ self.rate_coef_)

    def zero_probabilities(self):
        """``p_kj = sigmoid(Phi Gamma)``, shape (K, n_features) (eq. 2); zeros without inflation."""
        check_is_fitted(self, "rate_coef_")
        if not hasattr(self, "zero_coef_"):
            return np.zeros((self.phi_.shape[0], self.n_features_in_))
        return np.exp(-softplus(-(self.phi_ @ self.zero_coef_)))

    def plot(self, X, y=None, ax=None, label_names=None, **scatter_kw):
        """Scatter the documents at their map coordinates, coloured by label.

        Needs matplotlib (the optional ``plot`` extra).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), optional
            Labels for the colours and the legend.
        ax : matplotlib Axes, optional
        label_names : sequence of str, optional
            Legend text for the sorted unique labels.

        Returns
        -------
        ax : matplotlib Axes
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:
            raise ImportError("ZIPGTM.plot needs matplotlib: pip install matplotlib") from exc
        Z = self.transform(X)
        if ax is None:
            _, ax = plt.subplots(figsize=(5.5, 5))
        markers = "o^sDvP*X"
        if y is None:
            ax.scatter(Z[:, 0], Z[:, 1], s=12, **scatter_kw)
        else:
            y = np.asarray(y)
            if y.shape[0] != Z.shape[0]:
                raise ValueError(f"y has {y.shape[0]} labels for {Z.shape[0]} documents")
            for i, lab in enumerate(np.unique(y)):
                name = label_names[i] if label_names is not None else str(lab)
                m = y == lab
                ax.scatter(Z[m, 0], Z[m, 1], s=12, marker=markers[i % len(markers)],
                           label=name, alpha=0.7, **scatter_kw)
            ax.legend(loc="best", fontsize=8)
        ax.set_xlabel("latent 1")
        ax.set_ylabel("latent 2")
        ax.set_aspect("equal", adjustable="datalim")
        return ax


class _Data:
    """Counts with what the E- and M-steps reuse every iteration: the row sums of
    ``log t!``, the CSC copy (sparse) or the indicator ``[T > 0]`` (dense)."""

    def __init__(self, counts, num_threads):
        self.counts, self.nt = counts, int(num_threads)
        self.log_fact = counts.log_factorials
        self.nz = None if counts.is_sparse else (counts.X > 0).astype(counts.X.dtype)


def _responsibilities(data, eta, log_p0, delta, log_mix):
    """``theta_nk`` (eq. 5) and ``log sum_k alpha_k p(t_n | x_k)`` of every document.

    Sparse counts run the fused C/OpenMP E-step over CSR rows; dense counts use NumPy/BLAS
    (:func:`~countgrid.gtm._glm.log_px_given_latent`)."""
    X = data.counts.X
    if data.counts.is_sparse:
        return _gtm_kernels.estep_csr(X.indptr, X.indices, X.data, X.shape[1],
                                      np.ascontiguousarray(log_p0.sum(axis=1)),
                                      np.ascontiguousarray(log_mix, dtype=np.float64),
                                      data.log_fact, np.ascontiguousarray(delta.T),
                                      np.ascontiguousarray(eta.T), data.nt)
    lj = log_px_given_latent(X, data.nz, data.log_fact, eta, log_p0, delta)
    lj += log_mix[None, :]
    lse = logsumexp(lj, axis=1)
    with np.errstate(invalid="ignore"):
        return np.exp(lj - lse[:, None]), lse


def _statistics(data, theta):
    """The M-step statistics ``theta^T T`` and ``theta^T [T > 0]``, each (K, n_features)
    (sparse counts: the C/OpenMP kernel over CSC columns)."""
    if data.counts.is_sparse:
        C = data.counts.csc
        RT, CT = _gtm_kernels.accumulate_csc(C.indptr, C.indices, C.data,
                                             np.ascontiguousarray(theta), data.nt)
        return RT.T, CT.T
    X = data.counts.X
    return np.asarray(X.T @ theta).T, np.asarray(data.nz.T @ theta).T
