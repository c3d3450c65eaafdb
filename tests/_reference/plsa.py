"""Slow, dense NumPy references of the pLSA kernels (Hofmann, UAI 1999): the posteriors
P(z|d,w) of every (document, word) pair, then the folding-in and word updates."""
import numpy as np

__all__ = ["posterior_ref", "docs_ref", "words_ref"]


def posterior_ref(C, theta, phi, beta=1.0):
    """P_beta(z|d,w) for every (d, w): array (D, W, Z) (dense, slow)."""
    r = theta[:, None, :] * (phi ** beta)[None, :, :]
    s = r.sum(axis=2, keepdims=True)
    return np.divide(r, s, out=np.zeros_like(r), where=s > 0)


def docs_ref(C, theta, phi, beta=1.0):
    """One folding-in update of theta and the log-likelihood at entry."""
    C = np.asarray(C, dtype=np.float64)
    with np.errstate(divide="ignore"):
        ll = (C * np.log(theta @ phi.T)).sum(axis=1, where=C > 0)
    R = posterior_ref(C, theta, phi, beta)
    n = C.sum(axis=1, keepdims=True)
    new = np.where(n > 0, np.einsum("dw,dwz->dz", C, R) / np.where(n > 0, n, 1), theta)
    return new, ll


def words_ref(C, theta, phi, beta=1.0):
    R = posterior_ref(np.asarray(C, dtype=np.float64), theta, phi, beta)
    return np.einsum("dw,dwz->wz", np.asarray(C, dtype=np.float64), R)
