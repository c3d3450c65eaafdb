"""The zero-inflated Poisson observation model of the GTM and the penalised Newton (IRLS)
solvers of its M-step (Alvarez-Medina & Hidalgo-Silva, eqs. 1-3 and 8-9)."""
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from countgrid._utils.param_validation import Interval, validate_params
from countgrid._utils.validation import check_matrix

__all__ = ["zip_terms", "log_px_given_latent", "poisson_glm_fun", "logistic_glm_fun",
           "irls_poisson", "newton_columns"]


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


