"""Slow, dense NumPy references of held-out perplexity by document completion (Wallach et
al., ICML 2009; docs/topics.md, "Held-out perplexity by document completion"): the token
split written as scalar loops, folding-in and the grid posterior as dense EM, and the
predictive log-likelihood of the held-out half as a dense product."""
import hashlib

import math

import numpy as np

from _reference.grid import estep_ref
from _reference.plsa import docs_ref

__all__ = ["document_key_ref", "split_ref", "fold_in_ref", "grid_posterior_ref",
           "heldout_loglik_ref", "perplexity_ref"]


def document_key_ref(row):
    """The order key of a dense document: blake2b (8 bytes, little-endian) of its word
    indices (int64) followed by its counts (int64)."""
    idx = np.flatnonzero(row).astype(np.int64)
    h = hashlib.blake2b(digest_size=8)
    h.update(idx.tobytes())
    h.update(np.asarray(row, dtype=np.float64)[idx].astype(np.int64).tobytes())
    return int.from_bytes(h.digest(), "little")


def split_ref(X, seed):
    """(observed, heldout) dense float64 halves of dense integer counts ``X``.

    Documents in increasing key order (ties: row order); each holds out floor(n/2) of its
    n tokens by the sequential hypergeometric over its words in index order, the draws
    taken one word slot at a time across the documents (slot 0 of every document that
    still needs tokens, then slot 1, ...), one scalar draw at a time from
    ``numpy.random.default_rng(seed)``."""
    X = np.asarray(X, dtype=np.float64)
    rng = np.random.default_rng(seed)
    order = sorted(range(X.shape[0]), key=lambda d: (document_key_ref(X[d]), d))
    words = {d: np.flatnonzero(X[d]) for d in order}
    left = {d: int(X[d].sum()) for d in order}
    need = {d: left[d] // 2 for d in order}
    held = np.zeros_like(X)
    j = 0
    while any(need[d] > 0 and len(words[d]) > j for d in order):
        for d in order:
            if need[d] > 0 and len(words[d]) > j:
                w = words[d][j]
                c = int(X[d, w])
                x = int(rng.hypergeometric(c, left[d] - c, need[d]))
                held[d, w] = x
                need[d] -= x
                left[d] -= c
        j += 1
    return X - held, held


def fold_in_ref(C, phi, n_iter=500, tol=1e-10):
    """P(z|d) of dense counts ``C`` (D x W) by folding-in into ``phi`` (W x Z, P(w|z)
    word-major): EM on theta from the uniform start until max |change| < tol."""
    C = np.asarray(C, dtype=np.float64)
    phi = np.asarray(phi, dtype=np.float64)
    theta = np.full((C.shape[0], phi.shape[1]), 1.0 / phi.shape[1])
    for _ in range(n_iter):
        new, _ = docs_ref(C, theta, phi)
        change = np.max(np.abs(new - theta)) if new.size else 0.0
        theta = new
        if change < tol:
            break
    return theta


def grid_posterior_ref(C, h, log_prior=None, floor=0.0):
    """Location posteriors q (D x L) of dense counts ``C`` under window histograms ``h``
    (W x L), floored at ``floor`` and renormalised."""
    with np.errstate(divide="ignore"):
        logh = np.log(np.asarray(h, dtype=np.float64))
    return estep_ref(C, logh, log_prior, floor)[0]


def heldout_loglik_ref(H, theta, phi):
    """sum_w H[d, w] log sum_k theta[d, k] phi[w, k] per document (dense)."""
    P = np.asarray(theta, dtype=np.float64) @ np.asarray(phi, dtype=np.float64).T
    H = np.asarray(H, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.where(H > 0, H * np.log(np.where(H > 0, P, 1.0)), 0.0).sum(axis=1)


def perplexity_ref(H, theta, phi):
    """exp(- total held-out log-likelihood / held-out tokens)."""
    return float(np.exp(-heldout_loglik_ref(H, theta, phi).sum() / np.asarray(H).sum()))


def rap_predictive_ref(C, W, a, b_hidden, M):
    """RAP's plug-in predictive of dense counts ``C``: for each document, every unit's
    ``E[h_j | x] = M_j sigmoid(sum_i x_i W[i, j] + b_hidden[j])`` (eq. 2) and the word
    distribution ``P(w) ∝ exp(a_w + sum_j W[w, j] E[h_j])``, written out per entry
    (D x V; ``W`` is words x units)."""
    C = np.asarray(C, dtype=np.float64)
    D, V = C.shape
    K = W.shape[1]
    out = np.empty((D, V))
    for d in range(D):
        Eh = [M[j] / (1.0 + math.exp(-(sum(C[d, i] * W[i, j] for i in range(V))
                                       + b_hidden[j]))) for j in range(K)]
        eta = [a[w] + sum(W[w, j] * Eh[j] for j in range(K)) for w in range(V)]
        top = max(eta)
        z = sum(math.exp(e - top) for e in eta)
        out[d] = [math.exp(e - top) / z for e in eta]
    return out
