"""The zero-inflated Poisson observation model of the GTM and the penalised Newton (IRLS)
solvers of its M-step (Alvarez-Medina & Hidalgo-Silva, eqs. 1-3 and 8-9)."""
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from scipy.special import digamma, gammaln, polygamma

from countgrid._utils.param_validation import Interval, validate_params
from countgrid._utils.validation import check_matrix

__all__ = ["zip_terms", "nb_terms", "log_px_given_latent", "poisson_glm_fun",
           "nb_glm_fun", "logistic_glm_fun", "irls_poisson", "newton_columns",
           "nb_count_terms", "update_dispersion", "MIN_DISPERSION", "MAX_DISPERSION"]

#: Bounds of the negative binomial's dispersion (its size ``r``): variance
#: ``lambda + lambda^2 / r``.  Below 1e-4 a feature would be all but one count at one
#: latent point; above 1e6 the model is a Poisson to within ``lambda^2 / 2r`` of each
#: count's log-probability, and ``lgamma(t + r) - lgamma(r)`` starts to lose digits to
#: cancellation (``1e-16 r log r``, 1e-9 at 1e6).
MIN_DISPERSION, MAX_DISPERSION = 1e-4, 1e6


def softplus(x):
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
    log_p = -softplus(-zeta)
    log_q = -softplus(zeta)
    log_p0 = np.logaddexp(log_p, log_q - lam)
    return log_p0, log_q - lam - log_p0, log_p


def nb_terms(eta, log_r, zeta):
    """Per-cell pieces of the (zero-inflated) negative binomial log-pmf (docs/zip_gtm.md,
    "Negative binomial").

    With mean ``lambda = exp(eta)`` and dispersion ``r`` (variance ``lambda + lambda^2/r``),
    ``log NB(t) = lgamma(t + r) - lgamma(r) - log t! + r log(r/(r + lambda))
    + t log(lambda/(r + lambda))``.  The last term is linear in ``t`` with slope
    ``log(lambda/(r + lambda))`` in place of the Poisson's ``eta``, and ``lgamma(t + r) -
    lgamma(r)`` depends on the document and the word, not on the latent point: so the
    E-step is the Poisson's with these pieces (:func:`nb_count_terms` gives the
    per-document part).

    Parameters
    ----------
    eta : ndarray of shape (n_latent, n_features)
        Log-means.
    log_r : ndarray of shape (n_features,)
        Log-dispersions.
    zeta : ndarray of shape (n_latent, n_features) or None
        Zero logits (None: no zero inflation).

    Returns
    -------
    log_p0 : ndarray
        ``log P(t = 0)``: ``r log(r/(r + lambda))``, mixed with the structural zero when
        ``zeta`` is given.
    delta : ndarray
        The correction from the zero term to the non-zero term, as in :func:`zip_terms`
        (0 without zero inflation).
    slope : ndarray
        ``log(lambda/(r + lambda))``, the coefficient of ``t``.
    log_zero_state : ndarray or None
        ``log p``.
    """
    x = eta - log_r[None, :]
    log_nb0 = -np.exp(log_r)[None, :] * softplus(x)    # r log(r/(r+lam)), never above 0
    slope = -softplus(-x)                                # log(lam/(r+lam)) = log sigmoid(x)
    if zeta is None:
        return log_nb0, np.zeros_like(eta), slope, None
    log_p = -softplus(-zeta)
    log_q = -softplus(zeta)
    log_p0 = np.logaddexp(log_p, log_q + log_nb0)
    return log_p0, log_q + log_nb0 - log_p0, slope, log_p


def _lgamma_excess(t, r):
    """``lgamma(t + r) - lgamma(r)``, elementwise."""
    return gammaln(t + r) - gammaln(r)


def nb_count_terms(rows, cols, values, log_r, n_rows):
    """``lgamma(t + r_j) - lgamma(r_j)`` over the non-zeros, summed per document: the part
    of the negative binomial's log-pmf that is not linear in ``t`` and does not depend on
    the latent point (the E-step's; :func:`update_dispersion` sums the same terms per
    word).

    Parameters
    ----------
    rows, cols : ndarray of shape (nnz,)
        Document and word of every non-zero count.
    values : ndarray of shape (nnz,)
        The counts (float64).
    log_r : ndarray of shape (n_features,)
    n_rows : int

    Returns
    -------
    ndarray of shape (n_rows,)
    """
    return np.bincount(rows, weights=_lgamma_excess(values, np.exp(log_r)[cols]),
                       minlength=n_rows)


def log_px_given_latent(X, nz, log_fact, eta, log_p0, delta):
    """``log p(t_n | x_k)`` for all documents and latent points.

    The sum over words splits into a dense part over all words (every word
    taken as a zero) plus a correction on the non-zeros only:
    ``sum_j log_p0[k, j] + sum_{j: t_nj > 0} (delta[k, j] + t_nj eta[k, j]) - sum_j log t_nj!``,
    i.e. two (sparse) matrix products ``nz @ delta.T + X @ eta.T``.  The arguments are
    not validated (this is the dense E-step of :class:`ZIPGTM`, which checks them).

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Counts ``t_nj``.
    nz : {ndarray, sparse matrix} of shape (n_samples, n_features)
        The indicator ``[t_nj > 0]`` of X (1.0 where X is non-zero, else 0.0).
    log_fact : ndarray of shape (n_samples,)
        ``sum_j log t_nj!`` of every document.
    eta : ndarray of shape (n_latent, n_features)
        Log-rates ``log lambda_kj``.
    log_p0, delta : ndarray of shape (n_latent, n_features)
        ``log P(t = 0)`` and the non-zero correction, as returned by :func:`zip_terms`.

    Returns
    -------
    ndarray of shape (n_samples, n_latent)
        ``log p(t_n | x_k)``, the ``log t!`` terms included.
    """
    out = np.asarray(X @ eta.T)
    out += np.asarray(nz @ delta.T)
    out += log_p0.sum(axis=1)[None, :]
    out -= log_fact[:, None]
    return out


def newton_columns(Phi, PhiPhi, coef, fun, alpha, n_steps):
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
    for _ in range(n_steps):
        eta = Phi @ coef
        q_old, d1, curv = fun(eta)
        q_old = q_old - 0.5 * alpha * (coef ** 2).sum(axis=0)
        grad = Phi.T @ d1 - alpha * coef                              # (M1, D)
        iu = np.triu_indices(M1)                                      # symmetric: upper half
        hess = np.empty((D, M1, M1))
        hess[:, iu[0], iu[1]] = (PhiPhi.T @ curv).T                   # Phi^T diag(c_j) Phi
        hess[:, iu[1], iu[0]] = hess[:, iu[0], iu[1]]
        diag = hess[:, np.arange(M1), np.arange(M1)]
        # damping of the step (the objective keeps alpha): at least 1e-10, and 1e-10 of the
        # largest curvature, so that a rank-deficient curvature (mass on few latent points)
        # of huge counts does not leave a numerically singular system
        with np.errstate(invalid="ignore"):
            ridge = np.maximum(max(alpha, 1e-10), 1e-10 * np.nan_to_num(diag.max(axis=1)))
        hess[:, np.arange(M1), np.arange(M1)] = diag + ridge[:, None]
        step = _solve(hess, grad)                                     # (M1, D)
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


def _solve(hess, grad):
    """Newton steps ``hess[j]^-1 grad[:, j]`` of every column; a column whose system is
    singular (or not finite) gets a zero step (it keeps its coefficients)."""
    try:
        return np.linalg.solve(hess, grad.T[:, :, None])[:, :, 0].T
    except np.linalg.LinAlgError:
        step = np.zeros_like(grad)
        for j in range(grad.shape[1]):
            try:
                step[:, j] = np.linalg.solve(hess[j], grad[:, j])
            except np.linalg.LinAlgError:
                pass
        return step


def poisson_glm_fun(R, S):
    """Objective pieces of the weighted Poisson GLM ``sum_k R eta - S exp(eta)`` (eq. 8).

    Parameters
    ----------
    R, S : ndarray of shape (n_latent, n_features)
        Expected counts ``sum_n theta_nk t_nj`` and expected exposures
        ``sum_n theta_nk (1 - Z_nkj)`` of the Poisson state (see :func:`irls_poisson`).

    Returns
    -------
    callable
        ``fun(eta, cols=slice(None))`` which, for log-rates ``eta`` of shape
        (n_latent, n_cols) of the columns ``cols``, returns the objective of every column
        (shape (n_cols,)), its first derivative ``R - S exp(eta)`` and its negated second
        derivative ``S exp(eta)`` (both of shape (n_latent, n_cols)).
    """
    def fun(eta, cols=slice(None)):
        r, s = R[:, cols], S[:, cols]
        lam = np.exp(eta)
        return (r * eta - s * lam).sum(axis=0), r - s * lam, s * lam
    return fun


def nb_glm_fun(R, S, log_r):
    """Objective pieces of the weighted negative-binomial GLM of the log-means at fixed
    dispersions: ``sum_k R eta - (R + S r) log(r + exp(eta))`` per column (the expected
    complete-data log-likelihood up to terms without ``eta``).

    Parameters
    ----------
    R, S : ndarray of shape (n_latent, n_features)
        Expected counts ``sum_n theta_nk t_nj`` and expected documents in the count state
        (``N_k``, or ``sum_n theta_nk (1 - Z_nkj)`` with zero inflation).
    log_r : ndarray of shape (n_features,)

    Returns
    -------
    callable
        ``fun(eta, cols=slice(None))``: the objective of every column, its first
        derivative ``r (R - S lambda) / (r + lambda)`` and its negated second derivative
        ``(R + S r) r lambda / (r + lambda)^2``.
    """
    def fun(eta, cols=slice(None)):
        r, s, lr = R[:, cols], S[:, cols], log_r[cols]
        x = eta - lr[None, :]
        w = r + s * np.exp(lr)[None, :]
        sp_x = softplus(x)
        p = np.exp(x - sp_x)                             # lam / (r + lam)
        # log(r + lam) = log r + softplus(x); its log r part does not depend on eta
        return (r * eta - w * sp_x).sum(axis=0), r - w * p, w * p * (1 - p)
    return fun


def _dispersion_objective(log_r, R, S, eta, count_terms):
    """The dispersions' part of the expected complete-data log-likelihood, per word, and
    the pieces of its derivatives in ``log r`` (docs/zip_gtm.md, "Negative binomial")."""
    r = np.exp(log_r)
    x = eta - log_r[None, :]
    sp_x = softplus(x)
    # sum_k S r log(r/(r+lam)) + R log(1/(r+lam)) = -sum_k S r sp + R (log r + sp)
    value = count_terms - (S * r * sp_x + R * (log_r[None, :] + sp_x)).sum(axis=0)
    return value, r, sp_x, np.exp(x - sp_x)


def update_dispersion(log_r, R, S, eta, nonzeros, n_steps):
    """Newton steps in ``log r`` for every word's dispersion at fixed log-means ``eta``.

    Maximises ``sum_{n, t_nj > 0} [lgamma(t + r) - lgamma(r)] + sum_k [S_kj r log(r /
    (r + lambda_kj)) - R_kj log(r + lambda_kj)]`` over ``log r`` in
    ``[log MIN_DISPERSION, log MAX_DISPERSION]``; a step is halved until the word's
    objective does not decrease (an ascent step of 1 where the objective is not concave),
    so the generalised EM stays monotone.

    Parameters
    ----------
    log_r : ndarray of shape (n_features,)
    R, S : ndarray of shape (n_latent, n_features)
        As in :func:`nb_glm_fun`.
    eta : ndarray of shape (n_latent, n_features)
    nonzeros : tuple (cols, values)
        Word (int) and count (float64) of every non-zero of the counts.
    n_steps : int

    Returns
    -------
    ndarray of shape (n_features,)
    """
    cols, values = nonzeros
    D = log_r.size
    lo, hi = np.log(MIN_DISPERSION), np.log(MAX_DISPERSION)

    def count_terms(lr):
        return np.bincount(cols, weights=_lgamma_excess(values, np.exp(lr)[cols]),
                           minlength=D)

    log_r = log_r.copy()
    for _ in range(n_steps):
        value, r, sp_x, p = _dispersion_objective(log_r, R, S, eta, count_terms(log_r))
        rc = r[cols]
        a1 = np.bincount(cols, weights=digamma(values + rc) - digamma(rc), minlength=D)
        a2 = np.bincount(cols, weights=polygamma(1, values + rc) - polygamma(1, rc),
                         minlength=D)
        # derivatives in log r (d sp/d log r = -p, d p/d log r = -p (1 - p))
        grad = r * a1 - (S * r * (sp_x - p) + R * (1 - p)).sum(axis=0)
        curv = (r * a1 + r * r * a2
                - (S * r * (sp_x - p - p * p) + R * p * (1 - p)).sum(axis=0))
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(curv < 0, -grad / curv, np.sign(grad))
        step = np.clip(np.nan_to_num(step), -3.0, 3.0)
        t = np.ones(D)
        todo = np.flatnonzero((step != 0) & (np.clip(log_r + step, lo, hi) != log_r))
        for _ in range(30):
            if todo.size == 0:
                break
            cand = log_r.copy()
            cand[todo] = np.clip(log_r[todo] + t[todo] * step[todo], lo, hi)
            new = _dispersion_objective(cand, R, S, eta, count_terms(cand))[0]
            ok = np.isfinite(new[todo]) & (new[todo] >= value[todo])
            log_r[todo[ok]] = cand[todo[ok]]
            todo = todo[~ok]
            t[todo] *= 0.5
    return log_r


def logistic_glm_fun(A, Ntot):
    """Objective pieces of the weighted logistic regression (eq. 9).

    ``sum_k A zeta - N softplus(zeta)`` per column.

    Parameters
    ----------
    A : ndarray of shape (n_latent, n_features)
        Expected structural zeros ``sum_{n: t_nj = 0} theta_nk Z_nkj``.
    Ntot : ndarray of shape (n_latent, n_features)
        Expected trials ``N_k = sum_n theta_nk`` of every latent point (the same in every
        column).

    Returns
    -------
    callable
        ``fun(zeta, cols=slice(None))`` which, for zero logits ``zeta`` of shape
        (n_latent, n_cols) of the columns ``cols``, returns the objective of every column
        (shape (n_cols,)), its first derivative ``A - N p`` and its negated second
        derivative ``N p (1 - p)`` with ``p = sigmoid(zeta)`` (both of shape
        (n_latent, n_cols)).
    """
    def fun(zeta, cols=slice(None)):
        a, n = A[:, cols], Ntot[:, cols]
        sp_pos = softplus(zeta)
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

    Raises
    ------
    TypeError, ValueError
        For non-numeric arguments, shapes that do not match, NaN or infinity, negative
        ``R``, ``S`` or ``alpha``, or ``n_steps`` that is not a positive int (naming the
        argument).
    """
    validate_params({"alpha": [Interval(Real, 0, None)],
                     "n_steps": [Interval(Integral, 1, None)]},
                    {"alpha": alpha, "n_steps": n_steps}, "irls_poisson")
    Phi = check_matrix(Phi, "Phi", dtype=np.float64)
    R = check_matrix(R, "R", dtype=np.float64, nonnegative=True)
    S = check_matrix(S, "S", dtype=np.float64, nonnegative=True)
    if sp.issparse(Phi) or sp.issparse(R) or sp.issparse(S):
        raise TypeError("irls_poisson takes dense arrays Phi, R and S")
    if R.shape[0] != Phi.shape[0] or S.shape != R.shape:
        raise ValueError(f"R and S must have shape (n_latent, n_features) with n_latent = "
                         f"{Phi.shape[0]} (the rows of Phi), got {R.shape} and {S.shape}")
    if coef is None:
        coef = np.zeros((Phi.shape[1], R.shape[1]))
    else:
        coef = check_matrix(coef, "coef", dtype=np.float64)
        if sp.issparse(coef) or coef.shape != (Phi.shape[1], R.shape[1]):
            raise ValueError(f"coef must be a dense array of shape {(Phi.shape[1], R.shape[1])}"
                             f" (n_basis, n_features), got {coef.shape}")
    PhiPhi = (Phi[:, :, None] * Phi[:, None, :]).reshape(Phi.shape[0], -1)
    return newton_columns(Phi, PhiPhi, coef, poisson_glm_fun(R, S), float(alpha),
                          int(n_steps))


