"""A plain NumPy/SciPy counting grid (EM), the peer of the countgrid benchmark.

Same algorithm and conventions as ``countgrid.CountingGrid`` (Jojic & Perina,
UAI 2011, eqs. 1, 3 and 7, with the authors' code conventions of
docs/counting_grids.md, "Code conventions"), written the way a careful
NumPy user would write it, without any compiled code of our own:

* grid stored feature-major, ``pi`` of shape ``(Z,) + extent`` (C order), so
  that ``pi.reshape(Z, L)`` is the right-hand side of the E-step product;
* toroidal window sums: separable, one grid axis at a time, on a circularly
  padded copy, as the sum of ``W_d`` shifted slices (only additions, no
  cumulative-sum cancellation; ``method="cumsum"`` gives the cumulative-sum
  variant of the paper's section 2.2, eq. 8);
* E-step: ``S = C @ log(h)`` (sparse CSR times dense, or a BLAS GEMM when the
  counts are a dense array), a numerically stable softmax over positions
  (subtract the row max, exponentiate, normalise), exact log-likelihood
  ``max + log(sum) - log L``, then the posterior floor
  ``q <- max(q, floor)`` and renormalisation;
* M-step (paper eq. 7 as the authors' code computes it; docs/counting_grids.md,
  "Learning"):
  ``n = C.T @ Q``, ``QH = backward window sum of n / (h + |W| alpha)``,
  ``QH = max(QH, 0)``, ``U = rho + QH (pi + alpha)``, ``pi = U / sum_z U``
  (uniform where the sum is 0), ``alpha = 1e-10``,
  ``rho = mean document length / (2.5 L)``, floor ``= 1 / (1e7 L)``;
* documents are processed in blocks of rows (about 4M posterior entries per
  block, as countgrid does) so memory stays ``O(Z L + block L)``.

``fit`` returns the history of the exact total log-likelihood (uniform
location prior) after each iteration -- the same quantity as
``CountingGrid.log_likelihood_`` -- and the wall time of every iteration.
"""
import time

import numpy as np
import scipy.sparse as sp

ALPHA = 1e-10
BLOCK_ELEMENTS = 1 << 22


def initial_pi(extent, n_features, random_state=0, dtype=np.float64):
    """Symmetry-breaking start ``normalise(1 + U(0, 1))``, shape extent + (Z,).

    Uses ``numpy.random.default_rng(random_state).random((L, Z))``."""
    L = int(np.prod(extent))
    pi = 1.0 + np.random.default_rng(random_state).random((L, n_features))
    pi /= pi.sum(axis=1, keepdims=True)
    return pi.reshape(tuple(extent) + (n_features,)).astype(dtype, copy=False)


def _slice(a, axis, start, stop):
    idx = [slice(None)] * a.ndim
    idx[axis] = slice(start, stop)
    return a[tuple(idx)]


def _box_axis(a, axis, w, backward, method):
    """Circular box sum of width w along one axis (forward: starting at i;
    backward: ending at i)."""
    E = a.shape[axis]
    if w == 1:
        return a
    if backward:
        ext = np.concatenate([_slice(a, axis, E - (w - 1), E), a], axis=axis)
    else:
        ext = np.concatenate([a, _slice(a, axis, 0, w - 1)], axis=axis)
    if method == "cumsum":
        F = np.cumsum(ext, axis=axis)                 # F[j] = sum ext[0..j]
        out = _slice(F, axis, w - 1, w - 1 + E).copy()  # sum ext[0..i+w-1]
        _slice(out, axis, 1, E)[...] -= _slice(F, axis, 0, E - 1)
        return out
    out = _slice(ext, axis, 0, E).copy()
    for j in range(1, w):
        out += _slice(ext, axis, j, j + E)
    return out


def window_sum(a, window, backward=False, method="shift"):
    """Toroidal window sums over the last len(window) axes of a.

    forward:  out[k] = sum_{0 <= delta < W} a[k + delta]   (window histograms)
    backward: out[i] = sum_{0 <= delta < W} a[i - delta]   (M-step transpose)
    """
    D = len(window)
    for d, w in enumerate(window):
        a = _box_axis(a, a.ndim - D + d, int(w), backward, method)
    return a


def histograms(pi, window, method="shift"):
    """h_k(z) = window mean of pi (shape (Z,) + extent) and log h."""
    h = window_sum(pi, window, method=method)
    h *= 1.0 / float(np.prod(window))
    with np.errstate(divide="ignore"):
        logh = np.log(h)
    return h, logh


def estep_block(Cb, logh2d, floor, L):
    """Posteriors (rows, L) and exact log-likelihoods (float64) of a block."""
    S = Cb @ logh2d
    if sp.issparse(S):
        S = S.toarray()
    S = np.asarray(S)
    m = S.max(axis=1, keepdims=True)
    S -= m
    np.exp(S, out=S)
    s = S.sum(axis=1, keepdims=True, dtype=np.float64)
    loglik = m[:, 0].astype(np.float64) + np.log(s[:, 0]) - np.log(L)
    S *= (1.0 / s).astype(S.dtype)
    if floor > 0:
        np.maximum(S, S.dtype.type(floor), out=S)
        S *= (1.0 / S.sum(axis=1, keepdims=True, dtype=np.float64)).astype(S.dtype)
    return S, loglik


def mstep(n, h, pi, window, rho, method="shift"):
    """One M-step; n, h, pi of shape (Z,) + extent.  Returns the new pi."""
    wvol = float(np.prod(window))
    n /= h + wvol * ALPHA
    QH = window_sum(n, window, backward=True, method=method)
    np.maximum(QH, 0, out=QH)
    pi += ALPHA
    QH *= pi
    QH += rho
    U = QH
    colsum = U.sum(axis=0, dtype=np.float64)       # per cell, over features
    ok = colsum > 0
    inv = np.where(ok, 1.0 / np.where(ok, colsum, 1.0), 0.0).astype(U.dtype)
    U *= inv
    if not ok.all():
        U[:, ~ok] = 1.0 / U.shape[0]
    return U


def as_counts(X, dtype):
    """CSR (or dense C array) of the given dtype, canonical, no explicit zeros."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=dtype, copy=True)
        X.eliminate_zeros()
        X.sum_duplicates()
        X.sort_indices()
        return X
    return np.ascontiguousarray(X, dtype=dtype)


def fit(X, extent, window, n_iter=10, init_pi=None, random_state=0, dtype=np.float64,
        pseudocount="auto", posterior_floor="auto", method="shift", block_elements=BLOCK_ELEMENTS):
    """Run exactly n_iter EM iterations (no convergence test).

    Returns a dict with ``pi`` (extent + (Z,)), ``log_likelihood`` (exact total
    log-likelihood after each iteration, as countgrid's ``log_likelihood_``),
    ``iter_seconds`` (wall time of each iteration: E-step + accumulation of
    n + M-step + new histograms), ``iter_cpu_seconds`` (process CPU time, all
    threads, of the same), ``rho`` and ``floor``.
    """
    extent = tuple(int(e) for e in extent)
    window = tuple(int(w) for w in window)
    dtype = np.dtype(dtype)
    C = as_counts(X, dtype)
    T, Z = C.shape
    L = int(np.prod(extent))
    doclen = np.asarray(C.sum(axis=1), dtype=np.float64).ravel()
    rho = doclen.mean() / (2.5 * L) if pseudocount == "auto" else float(pseudocount)
    floor = 1.0 / (1e7 * L) if posterior_floor == "auto" else float(posterior_floor)
    if init_pi is None:
        init_pi = initial_pi(extent, Z, random_state)
    pi = np.asarray(init_pi, dtype=np.float64).reshape(L, Z)
    pi = pi / pi.sum(axis=1, keepdims=True)
    pi = np.ascontiguousarray(pi.T, dtype=dtype).reshape((Z,) + extent)
    B = int(max(1, min(T, block_elements // L)))

    h, logh = histograms(pi, window, method)
    history, times, cpu = [], [], []
    for it in range(n_iter + 1):
        tic, ctic = time.perf_counter(), time.process_time()
        last = it == n_iter
        logh2d = logh.reshape(Z, L)
        n = None if last else np.zeros((Z, L), dtype=dtype)
        total = 0.0
        for t0 in range(0, T, B):
            Cb = C[t0:t0 + B]
            Qb, llb = estep_block(Cb, logh2d, floor, L)
            total += float(llb.sum())
            if not last:
                n += Cb.T @ Qb
        if it > 0:
            history.append(total)
        if last:
            break
        pi = mstep(n.reshape((Z,) + extent), h, pi, window, rho, method)
        del n
        h, logh = histograms(pi, window, method)
        times.append(time.perf_counter() - tic)
        cpu.append(time.process_time() - ctic)
    return {
        "pi": np.ascontiguousarray(np.moveaxis(pi, 0, -1)),
        "log_likelihood": np.asarray(history),
        "iter_seconds": np.asarray(times),
        "iter_cpu_seconds": np.asarray(cpu),
        "rho": rho,
        "floor": floor,
    }
