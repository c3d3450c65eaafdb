"""Generative topographic mapping with a zero-inflated Poisson observation model.

Alvarez-Medina & Hidalgo-Silva, *ZIP and data document visualization*
(equations 1–10), on top of the GTM of Bishop, Svensén & Williams (1998).
"""
import numbers

import numpy as np
from scipy.special import gammaln, logsumexp

from countgrid._base import BaseEstimator
from countgrid._counts import sorted_csc
from countgrid._validation import (check_counts, check_is_fitted, check_random_state,
                                   check_shape_tuple, limit_blas_threads, resolve_num_threads)

_BASES = ("sinh", "rbf")
_LATENTS = ("grid", "random")
_INITS = ("pca", "random")


# --------------------------------------------------------------------------- the ZIP model
def _softplus(x):
    return np.logaddexp(0.0, x)


def zip_terms(eta, zeta):
    """Per-cell pieces of the ZIP log-pmf (paper eqs. 1–3).

    With ``lambda = exp(eta)`` (log link, eq. 1) and ``p = sigmoid(zeta)``
    (logit link, eq. 2), ``log P(t = 0) = log(p + (1 - p) e^{-lambda})`` and
    ``log P(t) = log(1 - p) - lambda + t eta - log t!`` for ``t > 0``.

    Parameters
    ----------
    eta, zeta : ndarray of shape (n_latent, n_features)
        Log-rates and zero logits; ``zeta=None`` is the plain Poisson model
        (``p = 0``).

    Returns
    -------
    log_p0 : ndarray
        ``log P(t = 0)``.
    delta : ndarray
        ``log(1 - p) - lambda - log P(t = 0)``: the correction that turns the
        zero term into the non-zero term, so that
        ``log P(t) = log_p0 + [t > 0] (delta + t eta - log t!)``.
    log_zero_state : ndarray or None
        ``log p``, the log-prior of the structural-zero state.
    """
    lam = np.exp(eta)
    if zeta is None:
        return -lam, np.zeros_like(eta), None
    log_p = -_softplus(-zeta)
    log_q = -_softplus(zeta)
    log_p0 = np.logaddexp(log_p, log_q - lam)
    return log_p0, log_q - lam - log_p0, log_p


def log_px_given_latent(X, nz, log_fact, eta, log_p0, delta):
    """``log p(t_n | x_k)`` for all documents and latent points, shape (n_samples, n_latent).

    The sum over words splits into a dense part over all words (every word
    taken as a zero) plus a correction on the non-zeros only:
    ``sum_j log_p0[k, j] + sum_{j: t_nj > 0} (delta[k, j] + t_nj eta[k, j]) - sum_j log t_nj!``,
    i.e. two (sparse) matrix products ``nz @ delta.T + X @ eta.T``.
    """
    out = np.asarray(X @ eta.T)
    out += np.asarray(nz @ delta.T)
    out += log_p0.sum(axis=1)[None, :]
    out -= log_fact[:, None]
    return out


def _newton_columns(Phi, PhiPhi, coef, fun, alpha, n_steps):
    """Penalised Newton (IRLS) steps for independent per-column GLMs.

    Maximises, for every column ``j``, ``sum_k f(eta_kj) - alpha/2 |coef_j|^2``
    with ``eta = Phi @ coef``.  ``fun(eta)`` returns the per-column objective
    (shape (n_features,)), ``df/deta`` and ``-d2f/deta2`` (shape (K, n_features));
    ``fun(eta, cols)`` evaluates the columns ``cols`` only.
    Each step is halved until the column's objective does not decrease
    (a column that cannot improve, or whose Newton decrement ``g^T H^-1 g`` is
    below ``1e-13 (|objective| + 1)``, keeps its coefficients).
    """
    K, M1 = Phi.shape
    D = coef.shape[1]
    if PhiPhi.shape[1] == M1 * M1:
        PhiPhi = PhiPhi[:, np.triu_indices(M1)[0] * M1 + np.triu_indices(M1)[1]]
    ridge = max(alpha, 1e-10)
    for _ in range(n_steps):
        eta = Phi @ coef
        q_old, d1, curv = fun(eta)
        q_old = q_old - 0.5 * alpha * (coef ** 2).sum(axis=0)
        grad = Phi.T @ d1 - alpha * coef                              # (M1, D)
        iu = np.triu_indices(M1)                                      # symmetric: upper half
        hess = np.empty((D, M1, M1))
        hess[:, iu[0], iu[1]] = (PhiPhi.T @ curv).T                   # Phi^T diag(c_j) Phi
        hess[:, iu[1], iu[0]] = hess[:, iu[0], iu[1]]
        hess[:, np.arange(M1), np.arange(M1)] += ridge
        step = np.linalg.solve(hess, grad.T[:, :, None])[:, :, 0].T   # (M1, D)
        t = np.ones(D)
        # columns whose Newton decrement is at round-off level have converged
        todo = np.flatnonzero((grad * step).sum(axis=0) > 1e-13 * (np.abs(q_old) + 1.0))
        new = coef.copy()
        for _ in range(30):
            cand = coef[:, todo] + t[todo] * step[:, todo]
            with np.errstate(over="ignore", invalid="ignore"):
                q_new = (fun(Phi @ cand, todo)[0]
                         - 0.5 * alpha * (cand ** 2).sum(axis=0))
            ok = np.isfinite(q_new) & (q_new >= q_old[todo])
            new[:, todo[ok]] = cand[:, ok]
            todo = todo[~ok]
            if todo.size == 0:
                break
            t[todo] *= 0.5
        coef = new
    return coef


def poisson_glm_fun(R, S):
    """Objective pieces of the weighted Poisson GLM ``sum_k R eta - S exp(eta)`` (eq. 8)."""
    def fun(eta, cols=slice(None)):
        r, s = R[:, cols], S[:, cols]
        lam = np.exp(eta)
        return (r * eta - s * lam).sum(axis=0), r - s * lam, s * lam
    return fun


def logistic_glm_fun(A, Ntot):
    """Objective pieces of the weighted logistic regression ``sum_k A zeta - N softplus(zeta)`` (eq. 9)."""
    def fun(zeta, cols=slice(None)):
        a, n = A[:, cols], Ntot[:, cols]
        sp_pos = _softplus(zeta)
        p = np.exp(zeta - sp_pos)
        return (a * zeta - n * sp_pos).sum(axis=0), a - n * p, n * p * (1 - p)
    return fun


def irls_poisson(Phi, R, S, alpha=0.0, coef=None, n_steps=50):
    """Solve the weighted Poisson GLM of the W M-step (eq. 8) by IRLS.

    Maximises ``sum_kj R_kj eta_kj - S_kj exp(eta_kj) - alpha/2 |W|^2`` with
    ``eta = Phi @ W``, independently for every column ``j``.

    Parameters
    ----------
    Phi : ndarray of shape (n_latent, n_basis)
    R, S : ndarray of shape (n_latent, n_features)
        Expected counts ``sum_n theta_nk t_nj`` and expected exposures
        ``sum_n theta_nk (1 - Z_nkj)`` of the Poisson state.
    alpha : float
    coef : ndarray of shape (n_basis, n_features), optional
        Starting point (zeros by default).
    n_steps : int

    Returns
    -------
    coef : ndarray of shape (n_basis, n_features)
    """
    Phi = np.asarray(Phi, dtype=np.float64)
    PhiPhi = (Phi[:, :, None] * Phi[:, None, :]).reshape(Phi.shape[0], -1)
    if coef is None:
        coef = np.zeros((Phi.shape[1], R.shape[1]))
    return _newton_columns(Phi, PhiPhi, coef, poisson_glm_fun(R, S), alpha, n_steps)


# --------------------------------------------------------------------------- estimator
class ZIPGTM(BaseEstimator):
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
    converged_ : bool
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> X = np.random.default_rng(0).poisson(0.5, size=(60, 30))
    >>> gtm = countgrid.ZIPGTM(grid_shape=(5, 5), n_basis=9, n_iter=5, random_state=0).fit(X)
    >>> gtm.transform(X).shape
    (60, 2)
    """

    _estimator_kind = "transformer"
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
    def _validate_params(self):
        grid = check_shape_tuple(self.grid_shape, "grid_shape", ndim=2)
        m = self.n_basis
        if isinstance(m, (bool, np.bool_)) or not isinstance(m, numbers.Integral):
            raise TypeError(f"n_basis must be an int, got {m!r}")
        r = int(round(np.sqrt(m))) if m > 0 else 0
        if m < 1 or r * r != m:
            raise ValueError(f"n_basis must be a positive perfect square (a sqrt x sqrt grid of "
                             f"centres), got {m!r}")
        for name, allowed in (("basis", _BASES), ("latent", _LATENTS), ("init", _INITS)):
            v = getattr(self, name)
            if not isinstance(v, str) or v not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {v!r}")
        if not isinstance(self.zero_inflation, (bool, np.bool_)):
            raise TypeError(f"zero_inflation must be a bool, got {self.zero_inflation!r}")
        for name, lo in (("n_iter", 1), ("n_irls", 1)):
            v = getattr(self, name)
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral) or v < lo:
                raise ValueError(f"{name} must be an int >= {lo}, got {v!r}")
        for name in ("alpha", "tol"):
            v = getattr(self, name)
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
                raise TypeError(f"{name} must be a float, got {v!r}")
            if not np.isfinite(v) or v < 0:
                raise ValueError(f"{name} must be a finite float >= 0, got {v!r}")
        return grid, resolve_num_threads(self.num_threads)

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

    def _estep(self, counts, phi, coef, gamma, log_mix):
        eta = phi @ coef
        zeta = None if gamma is None else phi @ gamma
        log_p0, delta, log_p = zip_terms(eta, zeta)
        theta, lse = counts.estep(eta, log_p0, delta, log_mix)            # eq. 5
        return theta, lse, log_p0, log_p

    def _mstep(self, counts, phi, PhiPhi, theta, coef, gamma, log_p0, log_p):
        Nk = theta.sum(axis=0)
        R, C = counts.stats(theta)          # sum_n theta_nk t_nj, sum_{n: t_nj > 0} theta_nk
        alpha = float(self.alpha)
        if gamma is None:
            S = np.broadcast_to(Nk[:, None], R.shape)
        else:
            Z = np.exp(log_p - log_p0)                        # P(zero state | t = 0, k)
            A = Z * (Nk[:, None] - C)
            S = Nk[:, None] - A
            gamma = _newton_columns(phi, PhiPhi, gamma,
                                    logistic_glm_fun(A, np.broadcast_to(Nk[:, None], A.shape)),
                                    alpha, int(self.n_irls))                      # eq. 9
        coef = _newton_columns(phi, PhiPhi, coef, poisson_glm_fun(R, S), alpha,
                               int(self.n_irls))                                   # eq. 8
        with np.errstate(divide="ignore"):
            log_mix = np.log(Nk / Nk.sum())                                       # eq. 10
        return coef, gamma, log_mix

    # ------------------------------------------------------------------- fit
    def _check_X(self, X, n_features=None):
        dtype = X.dtype if getattr(X, "dtype", None) in (np.float32, np.float64) else np.float64
        return check_counts(X, dtype, n_features=n_features)

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
        grid, nt = self._validate_params()
        X, is_sparse = self._check_X(X)
        rng = check_random_state(self.random_state)
        with limit_blas_threads(nt):
            latent, centers, phi = self._latent_and_basis(grid, rng)
            coef, gamma = self._initial_coefs(X, is_sparse, latent, phi, rng)
            iu = np.triu_indices(phi.shape[1])
            PhiPhi = phi[:, iu[0]] * phi[:, iu[1]]        # upper triangle of phi_k phi_k^T
            counts = _Counts(X, is_sparse, nt, csc=True)
            log_mix = np.full(phi.shape[0], -np.log(phi.shape[0]))
            theta, lse, log_p0, log_p = self._estep(counts, phi, coef, gamma, log_mix)
            ll = [float(lse.sum())]
            obj = [ll[0] - self._penalty(coef, gamma)]
            converged = False
            n_done = 0
            for it in range(int(self.n_iter)):
                coef, gamma, log_mix = self._mstep(counts, phi, PhiPhi, theta, coef, gamma,
                                                   log_p0, log_p)
                theta, lse, log_p0, log_p = self._estep(counts, phi, coef, gamma, log_mix)
                ll.append(float(lse.sum()))
                obj.append(ll[-1] - self._penalty(coef, gamma))
                n_done += 1
                if self.verbose:
                    print(f"ZIPGTM iter {it + 1}: log-likelihood {ll[-1]:.6f} "
                          f"objective {obj[-1]:.6f}")
                if abs(obj[-1] - obj[-2]) <= float(self.tol) * abs(obj[-2]):
                    converged = True
                    break
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
        self.objective_ = np.asarray(obj)
        self.n_iter_ = n_done
        self.converged_ = converged
        self.n_features_in_ = X.shape[1]
        return self

    def fit_transform(self, X, y=None):
        """Fit and return the posterior-mean coordinates of ``X``."""
        return self.fit(X).transform(X)

    # ------------------------------------------------------------- read-out
    def _posterior(self, X):
        check_is_fitted(self, "rate_coef_")
        X, is_sparse = self._check_X(X, self.n_features_in_)
        counts = _Counts(X, is_sparse, resolve_num_threads(self.num_threads))
        gamma = getattr(self, "zero_coef_", None)
        with np.errstate(divide="ignore"):
            log_mix = np.log(self.mixing_)
        theta, lse, _, _ = self._estep(counts, self.phi_, self.rate_coef_, gamma, log_mix)
        return theta, lse

    def predict_proba(self, X):
        """Responsibilities ``theta_nk`` of the latent points (eq. 5).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

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
        return np.exp(-_softplus(-(self.phi_ @ self.zero_coef_)))

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


class _Counts:
    """The count matrix with what the E- and M-steps need.

    Sparse input runs the C/OpenMP kernels of ``_gtm_kernels`` (fused E-step over
    CSR rows, M-step statistics over CSC columns); dense input uses NumPy/BLAS.
    Both compute ``log_px_given_latent`` (the E-step) and ``theta^T T``,
    ``theta^T [T > 0]`` (the M-step statistics).
    """

    def __init__(self, X, is_sparse, num_threads, csc=False):
        self.X, self.sparse, self.nt = X, is_sparse, int(num_threads)
        if is_sparse:
            lf = X.copy()
            lf.data = gammaln(X.data.astype(np.float64) + 1.0)
            self.log_fact = np.asarray(lf.sum(axis=1), dtype=np.float64).ravel()
            if csc:
                self.csc = sorted_csc(X)
        else:
            self.nz = (X > 0).astype(X.dtype)
            self.log_fact = gammaln(X.astype(np.float64) + 1.0).sum(axis=1)

    def estep(self, eta, log_p0, delta, log_mix):
        if self.sparse:
            from countgrid import _gtm_kernels

            X = self.X
            return _gtm_kernels.estep_csr(X.indptr, X.indices, X.data, X.shape[1],
                                          np.ascontiguousarray(log_p0.sum(axis=1)),
                                          np.ascontiguousarray(log_mix, dtype=np.float64),
                                          self.log_fact, np.ascontiguousarray(delta.T),
                                          np.ascontiguousarray(eta.T), self.nt)
        lj = log_px_given_latent(self.X, self.nz, self.log_fact, eta, log_p0, delta)
        lj += log_mix[None, :]
        lse = logsumexp(lj, axis=1)
        with np.errstate(invalid="ignore"):
            return np.exp(lj - lse[:, None]), lse

    def stats(self, theta):
        if self.sparse:
            from countgrid import _gtm_kernels

            C = self.csc
            RT, CT = _gtm_kernels.accumulate_csc(C.indptr, C.indices, C.data,
                                                 np.ascontiguousarray(theta), self.nt)
            return RT.T, CT.T
        return np.asarray(self.X.T @ theta).T, np.asarray(self.nz.T @ theta).T
