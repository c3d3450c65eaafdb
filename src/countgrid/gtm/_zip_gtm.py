"""Generative topographic mapping with a zero-inflated Poisson observation model.

Alvarez-Medina & Hidalgo-Silva, *ZIP and data document visualization*
(equations 1–10), on top of the GTM of Bishop, Svensén & Williams (1998).
"""
import math
from concurrent.futures import ThreadPoolExecutor
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

from countgrid._base import BaseEstimator, TransformerMixin
from countgrid._utils.counts import Counts
from countgrid._utils.fitted import array, scalar
from countgrid._engine.em_loop import EMMonitor
from countgrid._utils.memory import check_memory
from countgrid._utils.param_validation import GridShape, Interval, Options
from countgrid._utils.threads import effective_n_threads, limit_blas_threads
from countgrid._utils.validation import check_is_fitted, check_random_state, resolve_dtype
from countgrid.gtm import _display, _wrappers
from countgrid.gtm._glm import (MAX_DISPERSION, MIN_DISPERSION, log_px_given_latent,
                                logistic_glm_fun, nb_count_terms, nb_glm_fun, nb_terms,
                                newton_columns, poisson_glm_fun, softplus, update_dispersion,
                                zip_terms)


#: Largest count ZIPGTM accepts.  EM works with the log-rates ``eta = log lambda`` of
#: the counts (about ``log t <= 461`` up to this limit) and sums ``n_samples x
#: n_features`` terms ``t eta`` and ``log t!``: up to 1e200 every rate ``exp(eta)`` stays
#: a factor ``e^248 ~ 1e108`` below the float64 overflow (room for Newton steps that
#: overshoot, which the line search then refuses) and every sum below ``1e230``.
#: Larger counts raise a ValueError (rescale them).
MAX_COUNT = 1e200

#: Largest log-rate ``eta`` a fitted model may hold (``exp`` overflows float64 above).
_MAX_ETA = math.log(np.finfo(np.float64).max)


# --------------------------------------------------------------------------- estimator
#: count matrices up to this many entries (8 MiB dense) get the dense SVD for the PCA start
_DENSE_PCA_ENTRIES = 2**20

#: words per block of the M-step's Newton solves, counted from word 0: the blocks depend
#: on the number of words only, so the solves give the same bits on any number of threads
_NEWTON_BLOCK = 256


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
    statistics are C/OpenMP kernels (``csrc/gtm.c``), the Newton solves run
    in fixed blocks of words on the threads and BLAS on one thread, so a fit
    and its outputs are bit-identical for any ``num_threads``; dense input
    uses NumPy/BLAS, whose last bits may depend on the thread count.

    Counts up to :data:`MAX_COUNT` (1e200) are modelled in float64 without
    overflow; larger ones raise a ValueError.  ``fit`` is transactional: Ctrl-C
    keeps the last complete EM iteration (and says so), any other error leaves
    the estimator unfitted; the kernels check for Ctrl-C between blocks of rows.
    Limits and guarantees: ``docs/zip_gtm.md``.

    Parameters
    ----------
    grid_shape : tuple of 2 ints, default=(15, 18)
        Number of latent points ``K = grid_shape[0] * grid_shape[1]``.  A side
        of length 1 puts its points at coordinate 0 (``(1, 1)``: a single
        latent point at the origin, i.e. one ZIP model of all documents).
    n_basis : int, default=25
        Number of basis functions ``M`` (a perfect square: their centres
        ``mu_m`` form a ``sqrt(M) x sqrt(M)`` grid); a constant column is added.
        A basis column that is zero at every latent point (e.g. ``"sinh"`` on a
        single point at the origin) stays zero and its weights stay 0.
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
    distribution : {"poisson", "negative_binomial"}, default="poisson"
        The count state's distribution.  ``"negative_binomial"``: mean ``lambda_kj`` and a
        dispersion ``r_j`` learned for every feature (variance ``lambda + lambda^2 / r_j``,
        ``dispersion_``), for counts more variable than a Poisson at a latent point (UMI
        counts of cells, microbiome reads).  With ``zero_inflation`` it is the
        zero-inflated negative binomial.  The E-step keeps the Poisson's cost (the slope
        of ``t`` becomes ``log(lambda/(r + lambda))``, the zero term
        ``r log(r/(r + lambda))``); the M-step adds Newton steps for ``log r_j``
        (docs/zip_gtm.md, "Negative binomial").  Not with ``size_factors``.
    size_factors : bool, default=False
        A Poisson with per-document size factors (needs ``zero_inflation=False``): the
        counts of document ``n`` are ``Poisson(s_n lambda_kj)`` with ``s_n`` its total
        count, so that ``lambda_kj`` is a rate per count — the sequencing depth (library
        size) of a cell or sample, or a document's length, does not place it on the map.
        The E-step's log-likelihood is ``sum_j t_nj eta_kj - s_n sum_j lambda_kj + const``
        and the M-step's exposures ``S_kj = sum_n theta_nk s_n`` (docs/zip_gtm.md, "Size
        factors"); the same size factors in ``transform`` and ``score_samples``.
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
        Threads of the OpenMP kernels, of the M-step's Newton solves (blocks of
        256 words) and, for dense input, of BLAS (through threadpoolctl when it
        is installed; sparse input runs BLAS on one thread, for determinism);
        None = all cores, honouring ``OMP_NUM_THREADS``.
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
    dispersion_ : ndarray of shape (n_features,)
        The negative binomial's ``r_j``, in ``[1e-4, 1e6]`` (absent with the Poisson).
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
        "size_factors": ["boolean"],
        "distribution": [Options("poisson", "negative_binomial")],
        "alpha": [Interval(Real, 0, None)],
        "n_iter": [Interval(Integral, 1, None)],
        "tol": [Interval(Real, 0, None)],
        "n_irls": [Interval(Integral, 1, None)],
        "init": [Options("pca", "random")],
        "random_state": ["random_state"],
        "num_threads": ["num_threads"],
        "verbose": ["boolean", Interval(Integral, 0, None)],
    }
    # the size factors change what transform and score_samples compute
    _inference_params = ("size_factors",)
    _sklearn_expected_failed_checks = {
        check: "scikit-learn's sparse-input check reads the classifier tags of every "
               "estimator with predict_proba; ZIPGTM's are responsibilities over the "
               "latent grid, not class probabilities"
        for check in ("check_estimator_sparse_array", "check_estimator_sparse_matrix")}
    _fitted_schema = {"latent_": array("float", "n_nodes", 2),
                      "basis_centers_": array("float", "n_basis", 2),
                      "phi_": array("float", "n_nodes", "n_basis+1"),
                      "rate_coef_": array("float", "n_basis+1", "n_features"),
                      "zero_coef_": array("float", "n_basis+1", "n_features"),
                      "dispersion_": array("float", "n_features"),
                      "mixing_": array("float", "n_nodes"),
                      "log_likelihood_": array("float", "n_iter+1"),
                      "objective_": array("float", "n_iter+1"),
                      "n_iter_": scalar("int", bind="n_iter"), "converged_": scalar("bool"),
                      "n_features_in_": scalar("int", bind="n_features")}

    def __init__(self, grid_shape=(15, 18), n_basis=25, basis="sinh", latent="grid",
                 zero_inflation=True, alpha=1e-2, n_iter=100, tol=1e-5, n_irls=2, init="pca",
                 random_state=None, num_threads=None, verbose=0, size_factors=False,
                 distribution="poisson"):
        self.grid_shape = grid_shape
        self.n_basis = n_basis
        self.basis = basis
        self.latent = latent
        self.zero_inflation = zero_inflation
        self.size_factors = size_factors
        self.distribution = distribution
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
        if self.size_factors and self.zero_inflation:
            raise ValueError("size_factors=True needs zero_inflation=False: the size factors "
                             "scale the Poisson rates, whose zeros then depend on every "
                             "document (see docs/zip_gtm.md, 'Size factors')")
        if self.size_factors and self.distribution != "poisson":
            raise ValueError("size_factors=True needs distribution='poisson': a negative "
                             "binomial's zero term r log(r/(r + s_n lambda)) would depend on "
                             "every document (see docs/zip_gtm.md, 'Negative binomial')")
        r = math.isqrt(int(self.n_basis))
        if r * r != self.n_basis:
            raise ValueError(f"n_basis must be a positive perfect square (a sqrt x sqrt grid of "
                             f"centres), got {self.n_basis!r}")
        return tuple(int(g) for g in self.grid_shape), effective_n_threads(self.num_threads)

    @staticmethod
    def _check_count_range(counts, name="X"):
        """Refuse counts above :data:`MAX_COUNT`."""
        values = counts.X.data if counts.is_sparse else counts.X
        if values.size and float(values.max()) > MAX_COUNT:
            raise ValueError(f"{name} holds counts up to {float(values.max()):.6g}; ZIPGTM "
                             f"models counts up to {MAX_COUNT:g} (countgrid.gtm.MAX_COUNT: "
                             "beyond, the Poisson rates would overflow float64): rescale the "
                             "counts")
        return counts

    @staticmethod
    def _check_sizes(n_rows, K, D, M1, what, fit=False):
        """check_memory for the working set of an E-step over ``n_rows`` documents (and,
        ``fit=True``, of the M-step's Newton systems), with Python ints (no overflow)."""
        n_bytes = 8 * (4 * math.prod((n_rows, K)) + 12 * math.prod((K, D)))
        if fit:
            # per-word Newton systems (M1 x M1, and the solver's copy), the products of
            # basis columns (K x M1(M1+1)/2) and their per-word curvature sums
            n_bytes += 8 * (3 * math.prod((D, M1, M1)) + math.prod((K, M1, M1 + 1)) // 2
                            + 8 * math.prod((K, D)))
        check_memory(n_bytes, f"ZIPGTM {what} with {K} latent points, {M1 - 1} basis "
                     f"functions, {D} words and {n_rows} documents",
                     "use a smaller grid_shape or n_basis, fewer words (e.g. "
                     "countgrid.text.select_by_resolving_power), or fewer documents per call")

    # --------------------------------------------------------------- set-up
    def _latent_and_basis(self, grid, rng):
        K = math.prod(grid)
        r = math.isqrt(int(self.n_basis))
        # latent points, basis centres and matrix, the rbf's squared distances
        check_memory(8 * (2 * K + 2 * r * r + 4 * math.prod((K, r * r + 1))),
                     f"the ZIPGTM basis of {K} latent points and {r * r} basis functions",
                     "use a smaller grid_shape or n_basis")

        def axis(n):
            # a side of one point sits at the centre (linspace(-1, 1, 1) would be -1)
            return np.linspace(-1, 1, n) if n > 1 else np.zeros(1)

        if self.latent == "grid":
            a, b = np.meshgrid(axis(grid[0]), axis(grid[1]), indexing="ij")
            latent = np.c_[a.ravel(), b.ravel()]
        else:
            latent = rng.standard_normal((K, 2))
        v = axis(r)
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
        # a column that vanishes at every latent point stays 0 (its weights then stay 0)
        phi = phi / np.where(rms > 0, rms, 1.0)
        return latent, centers, np.c_[phi, np.ones(K)]

    def _initial_coefs(self, X, is_sparse, latent, phi, rng):
        N, D = X.shape
        # float64 accumulators: a float32 column sum may overflow float32
        mean = np.asarray(X.mean(axis=0, dtype=np.float64), dtype=np.float64).ravel()
        nnz_col = (np.bincount(X.indices, minlength=D) if is_sparse
                   else np.count_nonzero(X, axis=0)).astype(np.float64)
        frac0 = 1.0 - nnz_col / N
        base = np.log(mean + 1e-3)
        M1 = phi.shape[1]
        if self.init == "pca" and min(N, D) >= 3:
            target = np.broadcast_to(base, (phi.shape[0], D))
            # an all-zero matrix has no principal components (ARPACK would fail on it)
            if np.count_nonzero(mean):
                excursion, top = self._pca_excursion(X, is_sparse, latent, rng)
                target = np.minimum(base + excursion, top)
            coef = np.linalg.lstsq(phi, target, rcond=None)[0]
        else:
            coef = 0.1 * rng.standard_normal((M1, D))
            coef[-1] = base
        if self.size_factors:
            # rates per count: the constant basis column carries -log(mean total)
            total = float(np.asarray(X.sum(axis=1), dtype=np.float64).mean())
            coef[-1] -= np.log(max(total, 1e-300))
        gamma = log_r = None
        if self.distribution == "negative_binomial":
            log_r = self._initial_dispersion(X, mean)
        if self.zero_inflation:
            e0 = np.exp(-mean)
            p0 = np.clip((frac0 - e0) / np.maximum(1 - e0, 1e-12), 0.01, 0.99)
            gamma = np.zeros((M1, D))
            gamma[-1] = np.log(p0 / (1 - p0))
        return coef, gamma, log_r

    @staticmethod
    def _initial_dispersion(X, mean):
        """The moments' dispersion of every feature, ``mean^2 / (var - mean)`` (a feature
        no more variable than a Poisson starts at the upper bound)."""
        sq = (np.asarray(X.multiply(X).mean(axis=0, dtype=np.float64)).ravel()
              if sp.issparse(X) else (np.asarray(X, dtype=np.float64) ** 2).mean(axis=0))
        excess = sq - mean * mean - mean
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(excess > 0, mean * mean / excess, MAX_DISPERSION)
        return np.log(np.clip(np.nan_to_num(r, nan=MAX_DISPERSION), MIN_DISPERSION,
                              MAX_DISPERSION))

    @staticmethod
    def _pca_excursion(X, is_sparse, latent, rng):
        """Log-rate excursions of the latent points on the plane of the two leading
        principal components of log(1 + t) (the usual GTM start), at most up to e times the
        largest count."""
        N = X.shape[0]
        # one draw whatever the path, so that the rest of the fit sees the same generator
        v0 = rng.uniform(-1.0, 1.0, size=min(X.shape))
        # small matrices take the dense SVD whatever their format: LAPACK is deterministic
        # when singular values tie, ARPACK returns an arbitrary basis of the tied plane
        if is_sparse and X.shape[0] * X.shape[1] <= _DENSE_PCA_ENTRIES:
            X, is_sparse = X.toarray(), False
        Y = X.copy() if is_sparse else np.asarray(X, dtype=np.float64)
        if is_sparse:
            Y = Y.astype(np.float64)
            Y.data = np.log1p(Y.data)
        else:
            Y = np.log1p(Y)
        mu = np.asarray(Y.mean(axis=0)).ravel()
        if is_sparse:
            from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, svds

            # ARPACK can stall on subnormal values (counts of 1e-320): then the same
            # decomposition of the matrix rescaled to a largest entry of 1
            scale = float(Y.data.max())
            for c in (1.0, scale):
                try:
                    _, s, vt = svds(_centred_operator(Y, mu, c), k=2, v0=v0)
                    s = s * c
                    break
                except (ArpackError, ArpackNoConvergence):
                    s = vt = None
            if s is None:
                return np.zeros((latent.shape[0], X.shape[1])), np.inf
            order = np.argsort(s)[::-1]
            s, vt = s[order], vt[order]
        else:
            _, s, vt = np.linalg.svd(Y - mu, full_matrices=False)
            s, vt = s[:2], vt[:2]
        # singular vectors have arbitrary signs, which differ between LAPACK (dense) and
        # ARPACK (sparse): make each one's largest-magnitude entry positive, so dense and
        # sparse counts give the same map, not its mirror image
        vt = vt * np.where(vt[np.arange(vt.shape[0]), np.abs(vt).argmax(axis=1)] < 0,
                           -1.0, 1.0)[:, None]
        # standardised latent coordinates; an axis without spread (a side of one point, a
        # single latent point) contributes nothing
        sd = latent.std(axis=0)
        z = np.where(sd > 0, latent - latent.mean(axis=0), 0.0) / np.where(sd > 0, sd, 1.0)
        excursion = z @ ((s / np.sqrt(N))[:, None] * vt)
        # the excursions of log(1 + t) of huge counts would overflow exp: no starting rate
        # above e times the largest count
        xmax = float(X.data.max() if X.nnz else 0.0) if is_sparse else float(X.max())
        return excursion, float(np.log1p(xmax)) + 1.0

    # ---------------------------------------------------------------- pieces
    def _penalty(self, coef, gamma):
        pen = (coef ** 2).sum() + (0.0 if gamma is None else (gamma ** 2).sum())
        return 0.5 * float(self.alpha) * pen

    def _estep(self, data, phi, coef, gamma, log_r, log_mix):
        eta = phi @ coef
        zeta = None if gamma is None else phi @ gamma
        if log_r is None:
            log_p0, delta, log_p = zip_terms(eta, zeta)
            slope, log_norm = eta, data.log_fact
        else:
            log_p0, delta, slope, log_p = nb_terms(eta, log_r, zeta)
            log_norm = data.log_fact - data.nb_count_terms(log_r)
        theta, lse = _responsibilities(data, slope, log_p0, delta, log_mix,
                                       log_norm)                                   # eq. 5
        return theta, lse, log_p0, log_p

    def _mstep(self, data, phi, PhiPhi, theta, coef, gamma, log_r, log_p0, log_p):
        Nk = theta.sum(axis=0)
        R, C = _statistics(data, theta)     # sum_n theta_nk t_nj, sum_{n: t_nj > 0} theta_nk
        alpha = float(self.alpha)
        if data.size is not None:
            S = np.broadcast_to((theta.T @ data.size)[:, None], R.shape)
        elif gamma is None:
            S = np.broadcast_to(Nk[:, None], R.shape)
        else:
            Z = np.exp(log_p - log_p0)                        # P(zero state | t = 0, k)
            A = Z * (Nk[:, None] - C)
            S = Nk[:, None] - A
            gamma = _newton_blocks(phi, PhiPhi, gamma, lambda c0, c1: logistic_glm_fun(
                A[:, c0:c1], np.broadcast_to(Nk[:, None], (A.shape[0], c1 - c0))),
                alpha, int(self.n_irls), data.nt)                                  # eq. 9
        if log_r is None:
            coef = _newton_blocks(phi, PhiPhi, coef,
                                  lambda c0, c1: poisson_glm_fun(R[:, c0:c1], S[:, c0:c1]),
                                  alpha, int(self.n_irls), data.nt)                # eq. 8
        else:
            coef = _newton_blocks(phi, PhiPhi, coef, lambda c0, c1: nb_glm_fun(
                R[:, c0:c1], S[:, c0:c1], log_r[c0:c1]), alpha, int(self.n_irls), data.nt)
            log_r = update_dispersion(log_r, R, S, phi @ coef, data.nonzeros()[1:],
                                      int(self.n_irls))
        with np.errstate(divide="ignore"):
            log_mix = np.log(Nk / Nk.sum())                                       # eq. 10
        return coef, gamma, log_r, log_mix

    # ------------------------------------------------------------------- fit
    def _data(self, X, nt, n_features=None):
        """Validated counts (float32/float64 kept, dense stays dense) and what the E- and
        M-steps need of them."""
        counts = Counts(X, resolve_dtype(None, X), n_features=n_features, dense_min_density=0.0,
                        owner=type(self).__name__)
        return _Data(self._check_count_range(counts), nt, bool(self.size_factors))

    def _set_fitted(self, latent, centers, phi, coef, gamma, log_r, log_mix, ll, history,
                    n_iter, converged, n_features):
        self.latent_ = latent
        self.basis_centers_ = centers
        self.phi_ = phi
        self.rate_coef_ = coef
        for name, value in (("zero_coef_", gamma),
                            ("dispersion_", None if log_r is None else np.exp(log_r))):
            if value is not None:
                setattr(self, name, value)
            elif hasattr(self, name):
                delattr(self, name)
        self.mixing_ = np.exp(log_mix)
        self.log_likelihood_ = np.asarray(ll, dtype=np.float64)
        self.objective_ = np.asarray(history, dtype=np.float64)
        self.n_iter_ = int(n_iter)
        self.converged_ = bool(converged)
        self.n_features_in_ = int(n_features)

    def fit(self, X, y=None):
        """Fit the map by EM.

        Ctrl-C keeps the last complete EM iteration (see the class description).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative counts (documents x words), at most :data:`MAX_COUNT`;
            float32 and float64 are kept, CSR/CSC stay sparse.
        y : ignored

        Returns
        -------
        self : ZIPGTM
        """
        grid, nt = self._grid_and_threads()
        K, M1 = math.prod(grid), int(self.n_basis) + 1
        data = self._data(X, nt)
        counts = data.counts
        self._check_sizes(counts.n_samples, K, counts.n_features, M1, "fit", fit=True)
        rng = check_random_state(self.random_state)
        n_iter = int(self.n_iter)
        # sparse counts: one BLAS thread (OpenBLAS's last bits depend on its thread count;
        # the threads go to the OpenMP kernels and the blocks of Newton solves instead)
        with limit_blas_threads(1 if counts.is_sparse else nt):
            latent, centers, phi = self._latent_and_basis(grid, rng)
            coef, gamma, log_r = self._initial_coefs(counts.X, counts.is_sparse, latent, phi,
                                                     rng)
            iu = np.triu_indices(phi.shape[1])
            PhiPhi = phi[:, iu[0]] * phi[:, iu[1]]        # upper triangle of phi_k phi_k^T
            log_mix = np.full(phi.shape[0], -np.log(phi.shape[0]))
            theta, lse, log_p0, log_p = self._estep(data, phi, coef, gamma, log_r, log_mix)
            ll = [float(lse.sum())]
            monitor = EMMonitor("ZIPGTM", n_iter, float(self.tol),
                                verbose=self.verbose, label="objective")
            monitor.record(ll[0] - self._penalty(coef, gamma), n_updates=0)
            for it in range(n_iter):
                coef, gamma, log_r, log_mix = self._mstep(data, phi, PhiPhi, theta, coef,
                                                          gamma, log_r, log_p0, log_p)
                theta, lse, log_p0, log_p = self._estep(data, phi, coef, gamma, log_r,
                                                        log_mix)
                ll.append(float(lse.sum()))
                done = monitor.record(ll[-1] - self._penalty(coef, gamma), n_updates=it + 1)
                if not done and it + 1 < n_iter:
                    # the arrays of this iteration are not updated in place later: the
                    # checkpoint keeps references, and copies of the growing lists
                    state = (latent, centers, phi, coef, gamma, log_r, log_mix, list(ll),
                             list(monitor.history), it + 1, False, counts.n_features)
                    # hold it as the fitted state too: the transactional fit applies a
                    # checkpoint only once the fitted attributes changed
                    self._set_fitted(*state)
                    self._checkpoint(lambda state=state: self._apply_checkpoint(state, n_iter))
                if done:
                    break
            monitor.finish()
        self._set_fitted(latent, centers, phi, coef, gamma, log_r, log_mix, ll,
                         monitor.history, monitor.n_updates, monitor.converged,
                         counts.n_features)
        return self

    def _apply_checkpoint(self, state, n_iter):
        self._set_fitted(*state)
        return f"EM iteration {state[9]} of {n_iter}"

    # ------------------------------------------------------------- fitted state
    def _check_fitted_shapes(self):
        """The cheap consistency check of every read-out: the arrays the E-step uses exist
        and agree in shape with each other and with ``n_features_in_``; returns (K, D)."""
        check_is_fitted(self, "rate_coef_")
        for name in ("latent_", "phi_", "mixing_", "n_features_in_"):
            if not hasattr(self, name):
                raise ValueError(f"this ZIPGTM has rate_coef_ but no {name}: its fitted "
                                 "state is incomplete; fit it again")

        def arr(name, ndim):
            a = getattr(self, name)
            if not isinstance(a, np.ndarray) or a.ndim != ndim or a.dtype != np.float64:
                raise ValueError(f"{name} must be a {ndim}-D float64 array, got "
                                 f"{getattr(a, 'dtype', type(a).__name__)} of shape "
                                 f"{getattr(a, 'shape', '?')}")
            return a

        phi, coef, latent = arr("phi_", 2), arr("rate_coef_", 2), arr("latent_", 2)
        mixing = arr("mixing_", 1)
        K, M1 = phi.shape
        D = coef.shape[1]
        nfi = self.n_features_in_
        if isinstance(nfi, (bool, np.bool_)) or not isinstance(nfi, Integral) or nfi != D:
            raise ValueError(f"n_features_in_ is {nfi!r} but rate_coef_ has shape {coef.shape}")
        if K < 1 or M1 < 1 or D < 1:
            raise ValueError(f"phi_ has shape {phi.shape} and rate_coef_ {coef.shape}: no "
                             "latent point, basis function or word")
        for name, a, shape in (("rate_coef_", coef, (M1, D)), ("latent_", latent, (K, 2)),
                               ("mixing_", mixing, (K,))):
            if a.shape != shape:
                raise ValueError(f"{name} has shape {a.shape}; phi_ ({phi.shape}) and "
                                 f"n_features_in_ ({D}) give {shape}")
        if hasattr(self, "zero_coef_"):
            gamma = arr("zero_coef_", 2)
            if gamma.shape != (M1, D):
                raise ValueError(f"zero_coef_ has shape {gamma.shape}; rate_coef_ has "
                                 f"{coef.shape}")
        if hasattr(self, "dispersion_"):
            r = arr("dispersion_", 1)
            if r.shape != (D,):
                raise ValueError(f"dispersion_ has shape {r.shape}; rate_coef_ has "
                                 f"{coef.shape}")
            if not (np.all(r >= MIN_DISPERSION) and np.all(r <= MAX_DISPERSION)):
                raise ValueError(f"dispersion_ must lie in [{MIN_DISPERSION:g}, "
                                 f"{MAX_DISPERSION:g}] (the negative binomial's r)")
        return K, D

    def _check_fitted_state(self):
        """Validate every fitted attribute against the others (shapes, dtypes, finiteness,
        probabilities in [0, 1], rates that do not overflow); raise ValueError naming the
        first inconsistent one (called by :func:`countgrid.load`).  An unfitted estimator
        passes."""
        names = [n for n in self._fitted_arrays if n not in ("zero_coef_", "dispersion_")]
        if not any(hasattr(self, n) for n in self._fitted_arrays):
            return None
        missing = [n for n in names if not hasattr(self, n)]
        if missing:
            raise ValueError(f"the fitted ZIPGTM lacks {', '.join(missing)}")
        K, D = self._check_fitted_shapes()
        centers = self.basis_centers_
        M1 = self.phi_.shape[1]
        if (not isinstance(centers, np.ndarray) or centers.dtype != np.float64
                or centers.shape != (M1 - 1, 2)):
            raise ValueError(f"basis_centers_ must be a float64 array of shape ({M1 - 1}, 2), "
                             f"got {getattr(centers, 'dtype', type(centers).__name__)} of "
                             f"shape {getattr(centers, 'shape', '?')}")
        for name in ("latent_", "basis_centers_", "phi_", "rate_coef_", "zero_coef_",
                     "mixing_"):
            if hasattr(self, name) and not np.isfinite(getattr(self, name)).all():
                raise ValueError(f"{name} contains NaN or infinity")
        mixing = self.mixing_
        if mixing.min() < 0 or mixing.max() > 1 or abs(mixing.sum() - 1.0) > 1e-6:
            raise ValueError("mixing_ must hold probabilities in [0, 1] summing to 1")
        if float(np.max(self.phi_ @ self.rate_coef_)) >= _MAX_ETA:
            raise ValueError("rate_coef_ gives Poisson rates exp(phi_ @ rate_coef_) that "
                             "overflow float64")
        n_iter = self.n_iter_
        if isinstance(n_iter, (bool, np.bool_)) or not isinstance(n_iter, Integral) or n_iter < 0:
            raise ValueError(f"n_iter_ must be an int >= 0, got {n_iter!r}")
        for name in ("log_likelihood_", "objective_"):
            a = getattr(self, name)
            if (not isinstance(a, np.ndarray) or a.dtype != np.float64
                    or a.shape != (n_iter + 1,) or np.isnan(a).any()):
                raise ValueError(f"{name} must be a float64 array of shape ({n_iter + 1},) "
                                 "(n_iter_ + 1) without NaN")
        if not isinstance(self.converged_, (bool, np.bool_)):
            raise ValueError(f"converged_ must be a bool, got {self.converged_!r}")
        return None

    # ------------------------------------------------------------- read-out
    def _posterior(self, X):
        K, D = self._check_fitted_shapes()
        data = self._data(X, effective_n_threads(self.num_threads), self.n_features_in_)
        self._check_sizes(data.counts.n_samples, K, D, self.phi_.shape[1], "read-out")
        gamma = getattr(self, "zero_coef_", None)
        log_r = np.log(self.dispersion_) if hasattr(self, "dispersion_") else None
        with np.errstate(divide="ignore"):
            log_mix = np.log(self.mixing_)
        with limit_blas_threads(1 if data.counts.is_sparse else data.nt):
            theta, lse, _, _ = self._estep(data, self.phi_, self.rate_coef_, gamma, log_r,
                                           log_mix)
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
        """Poisson rates ``lambda_kj = exp(Phi W)`` of the latent points (eq. 1).

        Returns
        -------
        ndarray of shape (K, n_features)
            ``exp(phi_ @ rate_coef_)``: row ``k`` is the rate of every word at
            ``latent_[k]``.

        Raises
        ------
        ValueError
            When the fitted coefficients give rates that overflow float64 (or NaN): a
            corrupt fitted state.
        """
        self._check_fitted_shapes()
        eta = self.phi_ @ self.rate_coef_
        if not eta.max() < _MAX_ETA:
            raise ValueError("rate_coef_ gives Poisson rates exp(phi_ @ rate_coef_) that "
                             "overflow float64 (or NaN): the fitted state is corrupt")
        return np.exp(eta)

    def zero_probabilities(self):
        """Zero-inflation probabilities ``p_kj = sigmoid(Phi Gamma)`` (eq. 2).

        Returns
        -------
        ndarray of shape (K, n_features)
            ``sigmoid(phi_ @ zero_coef_)``: the probability that word ``j`` is a structural
            zero at ``latent_[k]``; all zeros when the model has no zero inflation
            (``zero_inflation=False``, no ``zero_coef_``).
        """
        self._check_fitted_shapes()
        if not hasattr(self, "zero_coef_"):
            return np.zeros((self.phi_.shape[0], self.n_features_in_))
        return np.exp(-softplus(-(self.phi_ @ self.zero_coef_)))

    def plot(self, X, y=None, ax=None, label_names=None, **scatter_kw):
        """Scatter the documents at their map coordinates, coloured by label.

        The map of :func:`countgrid.plotting.plot_zip_gtm_map`, which draws it, without
        the latent points: each document at ``transform(X)``, one colour and marker per
        label, the legend right of the map.  Needs matplotlib (``pip install
        countgrid[plot]``; an ImportError says so).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), optional
            Labels for the colours and the legend.
        ax : matplotlib Axes, optional
            Draw on it (default: a new figure).
        label_names : sequence of str, optional
            Legend text for the sorted unique labels.
        **scatter_kw
            Passed to ``ax.scatter`` (e.g. ``s``, ``alpha``), over the map's own settings.

        Returns
        -------
        ax : matplotlib Axes
            One scatter collection per label (sorted), whose offsets are the
            ``transform(X)`` of its documents.
        """
        return _display.draw_map(self, X, labels=y, ax=ax, label_names=label_names,
                                 show_latent=False, legend=y is not None, labels_name="y",
                                 **scatter_kw)


class _Data:
    """Counts with what the E- and M-steps reuse every iteration: the row sums of
    ``log t!``, the CSC copy (sparse) or the indicator ``[T > 0]`` (dense), and (negative
    binomial) the document, word and value of every non-zero."""

    def __init__(self, counts, num_threads, size_factors=False):
        self.counts, self.nt = counts, int(num_threads)
        self.log_fact = counts.log_factorials
        # size factors s_n (the documents' totals) and sum_j t_nj log s_n
        self.size = self.t_log_size = None
        if size_factors:
            self.size = np.asarray(counts.X.sum(axis=1), dtype=np.float64).ravel()
            with np.errstate(divide="ignore", invalid="ignore"):
                self.t_log_size = np.where(self.size > 0, self.size * np.log(self.size), 0.0)
        self.nz = None
        if not counts.is_sparse:
            n, D = counts.X.shape
            check_memory(counts.X.itemsize * math.prod((n, D)),
                         f"the non-zero indicator of dense counts of shape ({n}, {D})",
                         "pass the counts as a scipy.sparse matrix")
            self.nz = (counts.X > 0).astype(counts.X.dtype)
        self._nonzeros = None

    def nonzeros(self):
        """(rows, cols, values) of the non-zero counts, values in float64 (made once)."""
        if self._nonzeros is None:
            X = self.counts.X
            nnz = X.nnz if self.counts.is_sparse else int(np.count_nonzero(X))
            check_memory(24 * nnz, f"the {nnz} non-zero counts' positions and values",
                         "use fewer documents or words")
            if self.counts.is_sparse:
                rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
                cols, values = X.indices.astype(np.intp), X.data
            else:
                rows, cols = np.nonzero(X)
                values = X[rows, cols]
            self._nonzeros = (rows, cols, np.asarray(values, dtype=np.float64))
        return self._nonzeros

    def nb_count_terms(self, log_r):
        """Per document, the sum of ``lgamma(t + r) - lgamma(r)`` over its non-zeros
        (:func:`~countgrid.gtm._glm.nb_count_terms`)."""
        rows, cols, values = self.nonzeros()
        return nb_count_terms(rows, cols, values, log_r, self.counts.X.shape[0])


def _centred_operator(Y, mu, c=1.0):
    """``(Y - 1 mu^T) / c`` as a LinearOperator (the centred sparse matrix, never formed)."""
    from scipy.sparse.linalg import LinearOperator

    if c == 1.0:
        return LinearOperator(Y.shape, dtype=np.float64,
                              matvec=lambda v: Y @ v.ravel() - mu @ v.ravel(),
                              rmatvec=lambda u: Y.T @ u.ravel() - mu * u.sum())
    Yc, muc = Y / c, mu / c
    return LinearOperator(Y.shape, dtype=np.float64,
                          matvec=lambda v: Yc @ v.ravel() - muc @ v.ravel(),
                          rmatvec=lambda u: Yc.T @ u.ravel() - muc * u.sum())


def _newton_blocks(phi, PhiPhi, coef, block_fun, alpha, n_steps, num_threads):
    """:func:`~countgrid.gtm._glm.newton_columns` over blocks of ``_NEWTON_BLOCK`` words
    (the columns are independent GLMs), each with one BLAS thread, on up to
    ``num_threads`` threads; ``block_fun(c0, c1)`` gives the GLM pieces of words
    ``c0:c1``.  The blocks are fixed by the number of words, so the result does not
    depend on ``num_threads``."""
    D = coef.shape[1]
    blocks = [(c0, min(D, c0 + _NEWTON_BLOCK)) for c0 in range(0, D, _NEWTON_BLOCK)]
    out = np.empty_like(coef)

    def solve(block):
        c0, c1 = block
        out[:, c0:c1] = newton_columns(phi, PhiPhi, np.ascontiguousarray(coef[:, c0:c1]),
                                       block_fun(c0, c1), alpha, n_steps)

    with limit_blas_threads(1):
        if num_threads <= 1 or len(blocks) == 1:
            for block in blocks:
                solve(block)
        else:
            with ThreadPoolExecutor(max_workers=min(num_threads, len(blocks))) as pool:
                list(pool.map(solve, blocks))
    return out


def _row_blocks(n, cost_per_row):
    """Blocks of rows of about ``16 * _wrappers.block_work()`` multiply-adds (2**28 by
    default) for the dense (BLAS) paths: Python checks for Ctrl-C between them.  BLAS
    results depend on the shapes of the products, so the blocks depend on the sizes only
    (never on the thread count), and inputs of one block compute exactly as unblocked."""
    step = max(1, (16 * _wrappers.block_work()) // max(1, cost_per_row))
    return [(r0, min(n, r0 + step)) for r0 in range(0, n, step)]


def _responsibilities(data, eta, log_p0, delta, log_mix, log_norm):
    """``theta_nk`` (eq. 5) and ``log sum_k alpha_k p(t_n | x_k)`` of every document.

    ``eta`` is the coefficient of the counts (the log-rates of a Poisson) and ``log_norm``
    each document's term subtracted whatever the latent point (``sum_j log t_nj!``; the
    negative binomial's less its ``lgamma(t + r) - lgamma(r)``).

    Sparse counts run the fused C/OpenMP E-step over CSR rows; dense counts use NumPy/BLAS
    (:func:`~countgrid.gtm._glm.log_px_given_latent`) in blocks of rows.  A document whose
    log-likelihood is not finite (only possible with a corrupt model) raises ValueError:
    never NaN responsibilities."""
    X = data.counts.X
    if data.size is not None:
        theta, lse = _responsibilities_scaled(data, eta, log_mix)
    elif data.counts.is_sparse:
        theta, lse = _wrappers.estep_csr(X.indptr, X.indices, X.data, X.shape[1],
                                            np.ascontiguousarray(log_p0.sum(axis=1)),
                                            np.ascontiguousarray(log_mix, dtype=np.float64),
                                            log_norm, np.ascontiguousarray(delta.T),
                                            np.ascontiguousarray(eta.T), data.nt)
    else:
        n, K = X.shape[0], eta.shape[0]
        theta, lse = np.empty((n, K)), np.empty(n)
        for r0, r1 in _row_blocks(n, 2 * X.shape[1] * K):
            lj = log_px_given_latent(X[r0:r1], data.nz[r0:r1], log_norm[r0:r1], eta,
                                     log_p0, delta)
            lj += log_mix[None, :]
            lse[r0:r1] = logsumexp(lj, axis=1)
            with np.errstate(invalid="ignore"):
                theta[r0:r1] = np.exp(lj - lse[r0:r1, None])
    if not np.isfinite(lse).all():
        bad = int(np.flatnonzero(~np.isfinite(lse))[0])
        raise ValueError(f"ZIPGTM: the log-likelihood of document {bad} is {lse[bad]} under "
                         "this model (its rates or mixing weights are corrupt)")
    return theta, lse


def _responsibilities_scaled(data, eta, log_mix):
    """``theta`` and the log-likelihoods under Poisson(s_n lambda_kj) (``size_factors``):
    ``sum_j t_nj (eta_kj + log s_n) - s_n Lambda_k - sum_j log t_nj!`` with
    ``Lambda_k = sum_j lambda_kj``, in blocks of rows (a sparse-dense product: one thread,
    the same bits whatever ``num_threads``)."""
    X = data.counts.X
    n, K = X.shape[0], eta.shape[0]
    Lam = np.exp(eta).sum(axis=1)
    theta, lse = np.empty((n, K)), np.empty(n)
    for r0, r1 in _row_blocks(n, 2 * X.shape[1] * K):
        lj = np.asarray(X[r0:r1] @ eta.T, dtype=np.float64)
        lj -= data.size[r0:r1, None] * Lam[None, :]
        lj += (data.t_log_size[r0:r1] - data.log_fact[r0:r1])[:, None] + log_mix[None, :]
        lse[r0:r1] = logsumexp(lj, axis=1)
        with np.errstate(invalid="ignore"):
            theta[r0:r1] = np.exp(lj - lse[r0:r1, None])
    return theta, lse


def _statistics(data, theta):
    """The M-step statistics ``theta^T T`` and ``theta^T [T > 0]``, each (K, n_features)
    (sparse counts: the C/OpenMP kernel over CSC columns; dense: BLAS over blocks of
    columns)."""
    if data.counts.is_sparse:
        C = data.counts.csc
        RT, CT = _wrappers.accumulate_csc(C.indptr, C.indices, C.data,
                                             np.ascontiguousarray(theta), data.nt)
        return RT.T, CT.T
    X = data.counts.X
    n, D = X.shape
    K = theta.shape[1]
    R, C = np.empty((K, D)), np.empty((K, D))
    for c0, c1 in _row_blocks(D, 2 * n * K):
        R[:, c0:c1] = np.asarray(X[:, c0:c1].T @ theta).T
        C[:, c0:c1] = np.asarray(data.nz[:, c0:c1].T @ theta).T
    return R, C
