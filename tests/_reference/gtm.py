"""Slow NumPy references of the ZIP-GTM kernels (Alvarez-Medina & Hidalgo-Silva, eqs. 5
and 8-9): row by row, word by word."""
import numpy as np
from scipy.special import logsumexp

__all__ = ["estep_reference", "accumulate_reference"]


def estep_reference(X, base, log_mix, log_fact, deltaT, etaT):
    """Row by row, word by word: responsibilities and log-likelihoods."""
    n, K = X.shape[0], base.shape[0]
    lj = np.empty((n, K))
    for i in range(n):
        acc = base + log_mix - log_fact[i]
        for p in range(X.indptr[i], X.indptr[i + 1]):
            j, t = X.indices[p], float(X.data[p])
            acc = acc + deltaT[j] + t * etaT[j]
        lj[i] = acc
    ll = logsumexp(lj, axis=1)
    return np.exp(lj - ll[:, None]), ll


def accumulate_reference(X, theta):
    D, K = X.shape[1], theta.shape[1]
    RT, CT = np.zeros((D, K)), np.zeros((D, K))
    Xc = X.tocoo()
    for n, j, t in zip(Xc.row, Xc.col, Xc.data):
        RT[j] += float(t) * theta[n]
        CT[j] += theta[n]
    return RT, CT
