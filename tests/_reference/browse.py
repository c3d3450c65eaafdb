"""Slow, obviously correct reference of the window coverage the map ranks documents by
(countgrid.grid._browse, docs/map.md)."""
import itertools

import numpy as np


def coverage_reference(Q, extent, window):
    """s_t(i) = sum over corners k whose window k + [0, W) (mod E) contains i of q_t(k)."""
    L = int(np.prod(extent))
    S = np.zeros((Q.shape[0], L))
    for k in range(L):
        kc = np.unravel_index(k, extent)
        for d in itertools.product(*[range(w) for w in window]):
            i = np.ravel_multi_index(tuple((a + b) % e for a, b, e in zip(kc, d, extent)),
                                     extent)
            S[:, i] += Q[:, k]
    return S


def depth_reference(Q, extent, window):
    """c_t(i) = sum over corners k whose window contains i of q_t(k) times the depth of i in
    that window: prod over axes of min(d + 1, W - d) / ceil(W / 2), d = i - k (mod E)."""
    L = int(np.prod(extent))
    C = np.zeros((Q.shape[0], L))
    for k in range(L):
        kc = np.unravel_index(k, extent)
        for d in itertools.product(*[range(w) for w in window]):
            i = np.ravel_multi_index(tuple((a + b) % e for a, b, e in zip(kc, d, extent)),
                                     extent)
            depth = 1.0
            for o, w in zip(d, window):
                depth *= min(o + 1, w - o) / ((w + 1) // 2)
            C[:, i] += Q[:, k] * depth
    return C


def map_loglik_reference(X, h, Q):
    """Per-token log-likelihood of every document in its MAP window argmax_k q_t(k):
    sum_z X[t, z] log h[k, z] / sum_z X[t, z] (-inf for an empty document)."""
    X = np.asarray(X, dtype=np.float64)
    out = np.full(X.shape[0], -np.inf)
    for t in range(X.shape[0]):
        k = int(np.argmax(Q[t]))
        n = X[t].sum()
        if n > 0:
            out[t] = sum(X[t, z] * np.log(h[k, z]) for z in range(X.shape[1]) if X[t, z] > 0) / n
    return out


def depth_ranking_reference(C, loglik, n):
    """The documents' order: score rounded to 3 decimals (floor(1000 c + 1/2)) descending,
    then the log-likelihood descending, then the index."""
    key = [np.floor(c * 1000.0 + 0.5) for c in C]
    return sorted(range(len(C)), key=lambda t: (-key[t], -loglik[t], t))[:n]
