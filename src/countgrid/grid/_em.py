"""The counting-grid EM engine on internal ``(n_features, L)`` arrays (Jojic & Perina,
UAI 2011, eqs. 3 and 7; docs/counting_grids.md).

Documents are processed in blocks of rows so that peak memory is O(L * Z + block * L)
rather than O(T * L).  Sparse counts go through the C kernels (CSR E-step, CSC M-step
statistics); dense counts with at least 25% non-zeros use BLAS for the two products.
"""
import numpy as np

from countgrid._counts import Counts, check_document_lengths
from countgrid._em_loop import EMMonitor
from countgrid.grid import _grid_kernels

# Rows per block: about 32 MB of float64 posteriors, whatever the grid size.
BLOCK_ELEMENTS = 1 << 22
# Dense inputs at least this dense use the BLAS path (GEMM); sparser ones go to CSR.
DENSE_BLAS_MIN_DENSITY = 0.25
ALPHA = 1e-10


def block_rows(n_rows, L):
    return int(max(1, min(n_rows, BLOCK_ELEMENTS // max(L, 1))))


def grid_counts(X, dtype, n_features=None, name="X", owner=None):
    """Validated counts for the grid kernels (dense inputs of density >= 25% stay dense)."""
    return check_document_lengths(
        Counts(X, dtype, n_features=n_features, name=name, owner=owner,
               dense_min_density=DENSE_BLAS_MIN_DENSITY), name)


def _dense_logh(logh):
    # A zero count times log(0) = -inf would give NaN in a GEMM.
    tiny = np.log(np.finfo(logh.dtype).tiny)
    if np.isneginf(logh).any():
        return np.maximum(logh, tiny)
    return logh


def estep(counts, t0, t1, logh, log_prior, floor, q, loglik, num_threads):
    """Posteriors of rows [t0, t1) into q[:t1-t0], exact log-likelihoods into loglik."""
    if counts.is_sparse:
        X = counts.X
        _grid_kernels.estep_csr(X.indptr, X.indices, X.data, t0, t1, logh, log_prior, floor,
                                q, loglik, num_threads)
    else:
        out = q[: t1 - t0]
        np.matmul(counts.X[t0:t1], _dense_logh(logh), out=out)
        _grid_kernels.posterior(out, log_prior, floor, loglik, num_threads)


def accumulate(counts, t0, t1, q, n, cursor, num_threads):
    """n += C[t0:t1].T @ q[:t1-t0] (cursor: the CSC positions of row t0, see new_cursor)."""
    if counts.is_sparse:
        csc = counts.csc
        _grid_kernels.accumulate_csc(csc.indptr, csc.indices, csc.data, cursor, t0, t1, q, n,
                                     num_threads)
    else:
        n += counts.X[t0:t1].T @ q[: t1 - t0]


def new_cursor(counts):
    return counts.csc.indptr[:-1].copy() if counts.is_sparse else None


def posteriors(counts, logh, log_prior, floor, num_threads):
    """Full posterior matrix (T, L) and per-document log-likelihoods."""
    T, L = counts.n_samples, logh.shape[1]
    q = np.empty((T, L), dtype=counts.dtype)
    loglik = np.empty(T, dtype=np.float64)
    estep(counts, 0, T, logh, log_prior, floor, q, loglik, num_threads)
    return q, loglik


def blocked_estep(counts, logh, log_prior, floor, num_threads, visit=None):
    """Run the E-step block by block, calling visit(t0, t1, q_block, loglik_block) (if
    given); returns the log-likelihood of every document."""
    T, L = counts.n_samples, logh.shape[1]
    B = block_rows(T, L)
    q = np.empty((B, L), dtype=counts.dtype)
    loglik = np.empty(T, dtype=np.float64)
    for t0 in range(0, T, B):
        t1 = min(T, t0 + B)
        estep(counts, t0, t1, logh, log_prior, floor, q, loglik[t0:t1], num_threads)
        if visit is not None:
            visit(t0, t1, q[: t1 - t0], loglik[t0:t1])
    return loglik


def run_em(counts, pi, extent, window, n_iter, tol, min_iter, rho, floor, log_prior,
           learn_prior, num_threads, verbose=0, stage="", on_update=None):
    """EM iterations in place on pi (Z, L).

    Returns (monitor, log_prior, h): ``monitor.history[i]`` is the exact total
    log-likelihood after i + 1 updates (countgrid._em_loop.EMMonitor), and h the window
    histograms of the final pi.  ``on_update(n_updates, log_prior, monitor)`` is called
    when pi holds a complete update (and ``on_update(None, None, monitor)`` just before
    the M-step starts changing it in place), for checkpoints.
    """
    Z, L = pi.shape
    h = np.empty_like(pi)
    logh = np.empty_like(pi)
    n = np.empty_like(pi)
    monitor = EMMonitor("CountingGrid", n_iter, tol, min_iter=min_iter, verbose=verbose,
                        stage=stage)

    def statistics(cursor, qsum):
        """What the M-step needs of each block: n += C^T q (and the prior's posterior mass)."""
        def visit(t0, t1, qb, llb):
            accumulate(counts, t0, t1, qb, n, cursor, num_threads)
            if qsum is not None:
                qsum[:] += qb.sum(axis=0, dtype=np.float64)
        return visit

    for it in range(n_iter + 1):
        _grid_kernels.histograms(pi, extent, window, h, logh, num_threads)
        last = it == n_iter
        if last:   # the log-likelihood of the final parameters only
            visit = None
        else:
            n.fill(0)
            qsum = np.zeros(L) if learn_prior else None
            visit = statistics(new_cursor(counts), qsum)
        loglik = blocked_estep(counts, logh, log_prior, floor, num_threads, visit)
        if it > 0 and monitor.record(np.sum(loglik), n_updates=it):
            break
        if last:
            break
        if on_update is not None:
            on_update(None, None, monitor)
        _grid_kernels.mstep(n, h, pi, extent, window, rho, ALPHA, num_threads)
        if learn_prior:
            prior = qsum + 1e-12 * max(qsum.sum(), 1.0) / L
            prior /= prior.sum()
            log_prior = np.log(prior).astype(pi.dtype)
        if on_update is not None:
            on_update(it + 1, log_prior, monitor)
    monitor.finish()
    return monitor, log_prior, h
