"""Slow, obviously-correct NumPy references for the RAP model (Gehler, Holub & Welling,
ICML 2006, eqs. 1, 2, 6 and 10).

Conventions: ``W`` is (D, K), ``a`` (D,), ``beta`` (K,), ``M`` (K,); all
computations in float64 on copies of the inputs.
"""
import itertools

import numpy as np
from scipy.special import gammaln, logsumexp


def sigmoid(u):
    return 1.0 / (1.0 + np.exp(-np.asarray(u, dtype=np.float64)))


def log_marginal_ref(X, W, a, beta, M):
    """Eq. (6) without log Z, one value per row, by explicit loops over units."""
    X = np.asarray(X, dtype=np.float64)
    out = np.zeros(X.shape[0])
    for n, x in enumerate(X):
        s = 0.0
        for i in range(X.shape[1]):
            s += a[i] * x[i] - gammaln(x[i] + 1.0)
        for j in range(W.shape[1]):
            s += M[j] * np.logaddexp(0.0, float(x @ W[:, j]) - beta[j])
        out[n] = s
    return out


def hidden_mean_ref(X, W, beta, M):
    """E[h | x] = M sigmoid(W^T x - beta) (eq. 2)."""
    return np.asarray(M, float) * sigmoid(np.asarray(X, float) @ W - beta)


def visible_rate_ref(H, W, a, max_lograte=30.0):
    """E[x | h] = exp(min(a + W h, max_lograte)) (eq. 1, clipped)."""
    return np.exp(np.minimum(a + np.asarray(H, float) @ W.T, max_lograte))


def cd_stats_ref(X0, X1, W, beta, M):
    """Batch-average statistics of eq. (10): (gW, ga, gbeta) for x0 and x1."""
    X0 = np.asarray(X0, float)
    X1 = np.asarray(X1, float)
    P0 = hidden_mean_ref(X0, W, beta, M)
    P1 = hidden_mean_ref(X1, W, beta, M)
    n = X0.shape[0]
    return (X0.T @ P0 - X1.T @ P1) / n, (X0 - X1).mean(0), -(P0 - P1).mean(0)


def truncated_states(D, max_count):
    """All count vectors with entries in {0, ..., max_count}, as a (S, D) array."""
    return np.array(list(itertools.product(range(max_count + 1), repeat=D)), dtype=np.float64)


def exact_loglik_ref(X, W, a, beta, M, max_count):
    """Mean exact log-likelihood of X under the RAP model with visible counts
    truncated at ``max_count`` (so that Z is an explicit finite sum)."""
    S = truncated_states(W.shape[0], max_count)
    log_z = logsumexp(log_marginal_ref(S, W, a, beta, M))
    return float(np.mean(log_marginal_ref(X, W, a, beta, M)) - log_z)


def mean_field_cd_step_ref(X0, W, a, beta, M, vW, va, vbeta, lr, momentum, weight_decay,
                           cd_steps=1, max_lograte=30.0):
    """One mean-field CD-k momentum step of eq. (10) (paper section 2.3, last paragraph):
    h = E[h | x], x1 = E[x | h] (clipped log-rates), iterated k times; returns the new
    (W, a, beta, vW, va, vbeta) as float64 copies."""
    X0 = np.asarray(X0, float)
    H = hidden_mean_ref(X0, W, beta, M)
    for _ in range(cd_steps):
        X1 = visible_rate_ref(H, W, a, max_lograte)
        H = hidden_mean_ref(X1, W, beta, M)
    gW, ga, gbeta = cd_stats_ref(X0, X1, W, beta, M)
    gW = gW - weight_decay * W
    vW = momentum * vW + lr * gW
    va = momentum * va + lr * ga
    vbeta = momentum * vbeta + lr * gbeta
    return W + vW, a + va, beta + vbeta, vW, va, vbeta
