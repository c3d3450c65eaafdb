"""Slow, obviously-correct NumPy references of the counting-grid kernels.

These functions mirror the kernels of ``countgrid._kernels`` (Jojic & Perina,
UAI 2011, eqs. 1-8, with the conventions of docs/counting_grids.md) with the
simplest possible NumPy code.  They are deliberately slow: no cumulative
sums, no fusing, no in-place tricks.  Every reference

* converts its inputs to float64 first (so a float32 kernel is checked against
  a float64 computation on exactly the same input values), and
* returns new float64 arrays, never modifying its arguments.

Layout conventions (the kernels' internal layout):

* a grid of extent ``E = (E_1, ..., E_D)`` has ``L = prod(E)`` cells stored in
  C order;
* per-feature grids are arrays of shape ``(Z, L)``, one feature per row;
* the window at position ``k`` is ``W_k = {k + d : 0 <= d_m < W_m}`` modulo
  ``E`` (a torus): windows start at ``k`` and extend forward;
* counts are a dense ``(N, Z)`` matrix ``C`` (``C[t, z] = c^t_z``) and
  posteriors a dense ``(N, L)`` matrix ``Q``.
"""
import itertools

import numpy as np

__all__ = [
    "grid_size",
    "window_offsets",
    "window_sum_ref",
    "window_sum_loop_ref",
    "histograms_ref",
    "log_scores_ref",
    "posterior_ref",
    "estep_ref",
    "accumulate_ref",
    "topk_posterior_ref",
    "accumulate_topk_ref",
    "mstep_ref",
    "exact_loglik_ref",
    "code_convention_loglik_ref",
]


def _f64(x):
    return np.array(x, dtype=np.float64, copy=True)


def _shape(extent):
    return tuple(int(e) for e in np.atleast_1d(extent))


def grid_size(extent):
    """Number of cells ``L = prod(extent)``."""
    return int(np.prod(_shape(extent)))


def window_offsets(window):
    """All offsets ``d`` with ``0 <= d_m < window_m`` (a list of tuples)."""
    return list(itertools.product(*(range(int(w)) for w in np.atleast_1d(window))))


def window_sum_ref(a, extent, window, backward=False, scale=1.0):
    """Toroidal window sums of every row of ``a`` (shape ``(n_vec, L)``).

    forward:  ``out[:, k] = scale * sum_{0 <= d < W} a[:, k + d]``
    backward: ``out[:, i] = scale * sum_{0 <= d < W} a[:, i - d]``
    (indices modulo the extent).  The backward sum at ``i`` is the sum over all
    windows covering cell ``i``; it is the transpose of the forward operator.

    Implementation: reshape each row to the grid and add ``np.roll`` copies,
    one per offset ``d`` (``np.roll(g, -d)[k] = g[k + d]``).
    """
    shape = _shape(extent)
    a = _f64(a)
    if a.ndim != 2 or a.shape[1] != grid_size(shape):
        raise ValueError("a must have shape (n_vec, prod(extent))")
    axes = tuple(range(1, len(shape) + 1))
    g = a.reshape((a.shape[0],) + shape)
    out = np.zeros_like(g)
    sign = 1 if backward else -1
    for d in window_offsets(window):
        out += np.roll(g, tuple(sign * x for x in d), axis=axes)
    return scale * out.reshape(a.shape)


def window_sum_loop_ref(a, extent, window, backward=False, scale=1.0):
    """Same as :func:`window_sum_ref` with explicit Python loops over every
    cell and offset (modular index arithmetic).  Very slow; used only on tiny
    grids to cross-check the ``np.roll`` reference itself."""
    shape = _shape(extent)
    a = _f64(a)
    out = np.zeros_like(a)
    sign = -1 if backward else 1
    for v in range(a.shape[0]):
        g = a[v].reshape(shape)
        o = out[v].reshape(shape)
        for k in itertools.product(*(range(e) for e in shape)):
            s = 0.0
            for d in window_offsets(window):
                idx = tuple((k[m] + sign * d[m]) % shape[m] for m in range(len(shape)))
                s += g[idx]
            o[k] = scale * s
    return out


def histograms_ref(pi, extent, window):
    """Window histograms ``h = forward window mean of pi`` and ``log h``.

    ``h[z, k] = (1/|W|) sum_{i in W_k} pi[z, i]``.  Returns ``(h, logh)``.
    """
    wvol = int(np.prod(np.atleast_1d(window)))
    h = window_sum_ref(pi, extent, window, backward=False, scale=1.0 / wvol)
    with np.errstate(divide="ignore"):
        logh = np.log(h)
    return h, logh


def log_scores_ref(C, logh):
    """Log-scores ``l[t, k] = sum_z C[t, z] * logh[z, k]`` (dense counts).

    Terms with ``C[t, z] == 0`` are skipped, so a ``-inf`` in ``logh`` of an
    absent feature does not produce NaN.
    """
    C = _f64(C)
    logh = _f64(logh)
    out = np.zeros((C.shape[0], logh.shape[1]))
    for t in range(C.shape[0]):
        for z in np.flatnonzero(C[t]):
            out[t] += C[t, z] * logh[z]
    return out


def posterior_ref(l, log_prior=None, floor=0.0):
    """Posterior over window positions from log-scores ``l`` (shape ``(n, L)``).

    Returns ``(q, loglik)``:

    * ``s[t, k] = l[t, k] + log_prior[k]`` (``log_prior`` omitted if None);
    * ``q[t] = softmax(s[t])``; if ``floor > 0`` then ``q = max(q, floor)``
      renormalised to sum 1 (so entries may end slightly below ``floor``);
    * ``loglik[t] = logsumexp_k(s[t, k]) - log L`` without a prior,
      ``logsumexp_k(s[t, k])`` with one (the prior replaces ``-log L``);
    * a row that is ``-inf`` everywhere gets ``q = 1/L`` (or
      ``exp(log_prior)``) and ``loglik = -inf``.
    """
    s = _f64(l)
    n, L = s.shape
    if log_prior is not None:
        s = s + _f64(log_prior)[None, :]
    q = np.empty_like(s)
    loglik = np.empty(n)
    for t in range(n):
        m = np.max(s[t])
        if m == -np.inf:
            q[t] = np.exp(_f64(log_prior)) if log_prior is not None else 1.0 / L
            loglik[t] = -np.inf
            continue
        e = np.exp(s[t] - m)
        tot = e.sum()
        q[t] = e / tot
        loglik[t] = m + np.log(tot) - (0.0 if log_prior is not None else np.log(L))
        if floor > 0:
            q[t] = np.maximum(q[t], floor)
            q[t] /= q[t].sum()
    return q, loglik


def estep_ref(C, logh, log_prior=None, floor=0.0):
    """E-step on dense counts ``C`` (shape ``(N, Z)``): ``posterior_ref`` of
    ``log_scores_ref(C, logh)``.  Returns ``(q, loglik)``."""
    return posterior_ref(log_scores_ref(C, logh), log_prior, floor)


def accumulate_ref(C, Q):
    """M-step statistics ``n[z, k] = sum_t C[t, z] * Q[t, k]``, i.e. ``C.T @ Q``
    (written as an explicit sum of outer products)."""
    C = _f64(C)
    Q = _f64(Q)
    n = np.zeros((C.shape[1], Q.shape[1]))
    for t in range(C.shape[0]):
        n += np.outer(C[t], Q[t])
    return n


def topk_posterior_ref(Q, k):
    """Sparse posteriors: for each row of ``Q`` (shape ``(n, L)``) the ``min(k, L)``
    largest entries, ties broken by the lower position.

    Returns ``(idx, val)`` of shape ``(n, min(k, L))``: the kept positions in ascending
    order and their values divided by their sum.  Implementation: a full stable sort of
    each row by decreasing value (``np.argsort`` of ``-q``, kind "stable", keeps equal
    values in increasing position order), the first ``min(k, L)`` positions, sorted.
    """
    Q = _f64(Q)
    n, L = Q.shape
    kk = min(int(k), L)
    idx = np.empty((n, kk), dtype=np.int64)
    val = np.empty((n, kk))
    for t in range(n):
        order = np.argsort(-Q[t], kind="stable")
        keep = np.sort(order[:kk])
        idx[t] = keep
        val[t] = Q[t, keep] / Q[t, keep].sum()
    return idx, val


def accumulate_topk_ref(C, idx, val, L):
    """M-step statistics from sparse posteriors: ``n[z, idx[t, j]] += C[t, z] * val[t, j]``
    with explicit loops (shape ``(Z, L)``); equal to ``C.T @ Q`` for the dense ``Q`` with
    ``Q[t, idx[t, j]] = val[t, j]``."""
    C = _f64(C)
    val = _f64(val)
    n = np.zeros((C.shape[1], int(L)))
    for t in range(C.shape[0]):
        for z in np.flatnonzero(C[t]):
            for j in range(idx.shape[1]):
                n[z, idx[t, j]] += C[t, z] * val[t, j]
    return n


def mstep_ref(n, h, pi, extent, window, rho, alpha):
    """The counting-grid M-step (docs/counting_grids.md, "Learning"); returns the new ``pi``.

    ``A  = n / (h + |W| alpha)``
    ``QH = max(backward window sum of A, 0)``
    ``U  = rho + QH * (pi + alpha)``
    ``pi_new[z, i] = U[z, i] / sum_z' U[z', i]`` (``1/Z`` where that sum is 0).
    """
    n, h, pi = _f64(n), _f64(h), _f64(pi)
    Z = pi.shape[0]
    wvol = int(np.prod(np.atleast_1d(window)))
    A = n[:Z] / (h[:Z] + wvol * alpha)
    QH = np.maximum(window_sum_ref(A, extent, window, backward=True), 0.0)
    U = rho + QH * (pi + alpha)
    col = U.sum(axis=0)
    out = np.full_like(U, 1.0 / Z)
    ok = col > 0
    out[:, ok] = U[:, ok] / col[ok]
    return out


def exact_loglik_ref(C, pi, extent, window, log_prior=None):
    """Exact log-likelihood ``ln p(c^t)`` of every bag (docs/counting_grids.md, "Likelihood
    conventions"):
    ``ln sum_k p(k) prod_z h_k(z)^{c_z}`` with ``p(k) = 1/L`` by default."""
    _, logh = histograms_ref(pi, extent, window)
    return posterior_ref(log_scores_ref(C, logh), log_prior)[1]


def code_convention_loglik_ref(q, l):
    """The value the authors' code reports per bag (docs/counting_grids.md, "Likelihood
    conventions"):
    ``sum_k q(k) l(k) - sum_k q(k) ln q(k)`` (no prior term); at the exact
    posterior it equals the exact log-likelihood + ``ln L``."""
    q = _f64(q)
    l = _f64(l)
    with np.errstate(divide="ignore", invalid="ignore"):
        qlq = np.where(q > 0, q * np.log(q), 0.0)
        ql = np.where(q > 0, q * l, 0.0)
    return ql.sum(axis=1) - qlq.sum(axis=1)
