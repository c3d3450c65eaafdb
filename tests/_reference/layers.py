"""Slow, obviously-correct NumPy reference of the layered counting grid
(docs/counting_grids.md, "Layered grids"), written layer by layer and position by position
with the single-grid references of ``grid.py``, independently of the estimator's
(layers x grid) 3-D layout.

Shapes: ``pi`` (n_layers, Z, P) per-layer grids as the kernels' (Z, P) rows, ``lam``
(n_layers, P) per-cell layer weights, counts ``C`` dense (N, Z).
"""
import numpy as np

from tests._reference.grid import histograms_ref, log_scores_ref, window_sum_ref

__all__ = ["layered_prior_ref", "layered_estep_ref", "layered_em_step_ref"]


def layered_prior_ref(lam, extent, window):
    """``p(l, k) = rho_k(l) / P``, ``rho_k(l)`` the mean of ``lam[l]`` over the window at
    ``k`` (n_layers, P)."""
    lam = np.array(lam, dtype=np.float64)
    P = lam.shape[1]
    wvol = int(np.prod(window))
    rho = np.stack([window_sum_ref(lam[l][None, :], extent, window)[0] / wvol
                    for l in range(lam.shape[0])])
    return rho / P


def layered_estep_ref(C, pi, lam, extent, window):
    """Exact posterior ``q[t, l, k]`` over (layer, position) and the log-likelihood of
    every document: ``s = sum_z c_z log h_{l,k}(z) + log p(l, k)``, ``q = softmax(s)``
    over all (l, k), ``loglik = logsumexp(s)``."""
    n_layers = pi.shape[0]
    prior = layered_prior_ref(lam, extent, window)
    s = np.stack([log_scores_ref(C, histograms_ref(pi[l], extent, window)[1])
                  + np.log(prior[l])[None, :] for l in range(n_layers)], axis=1)
    flat = s.reshape(s.shape[0], -1)
    m = flat.max(axis=1, keepdims=True)
    loglik = (m + np.log(np.exp(flat - m).sum(axis=1, keepdims=True)))[:, 0]
    q = np.exp(s - loglik[:, None, None])
    return q, loglik


def layered_em_step_ref(C, pi, lam, extent, window, rho, layer_rho, alpha=1e-10):
    """One EM update: ``(pi_new, lam_new, loglik)`` with ``loglik`` the documents'
    log-likelihoods under the old parameters.

    Words, for each layer l (the counting-grid M-step with that layer's posterior mass):
    ``n[z, k] = sum_t q[t, l, k] c[t, z]``,
    ``pi_new[l][z, i] ∝ rho + (pi[l][z, i] + alpha) * sum_{k: i in W_k} n[z, k] /
    (h_{l,k}(z) + |W| alpha)``.
    Layer weights, for each cell i (the same update with the layers as features):
    ``m[l, k] = sum_t q[t, l, k]``,
    ``lam_new[l, i] ∝ layer_rho + (lam[l, i] + alpha) * sum_{k: i in W_k} m[l, k] /
    (rho_k(l) + |W| alpha)``.
    """
    C = np.array(C, dtype=np.float64)
    pi = np.array(pi, dtype=np.float64)
    lam = np.array(lam, dtype=np.float64)
    n_layers, Z, P = pi.shape
    wvol = int(np.prod(window))
    q, loglik = layered_estep_ref(C, pi, lam, extent, window)
    pi_new = np.empty_like(pi)
    for l in range(n_layers):
        h, _ = histograms_ref(pi[l], extent, window)
        n = C.T @ q[:, l, :]
        covered = window_sum_ref(n / (h + wvol * alpha), extent, window, backward=True)
        U = rho + np.maximum(covered, 0.0) * (pi[l] + alpha)
        pi_new[l] = U / U.sum(axis=0, keepdims=True)
    rho_k = layered_prior_ref(lam, extent, window) * P
    m = q.sum(axis=0)
    covered = np.stack([window_sum_ref((m[l] / (rho_k[l] + wvol * alpha))[None, :], extent,
                                       window, backward=True)[0] for l in range(n_layers)])
    U = layer_rho + np.maximum(covered, 0.0) * (lam + alpha)
    lam_new = U / U.sum(axis=0, keepdims=True)
    return pi_new, lam_new, loglik
