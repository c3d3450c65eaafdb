"""The counting-grid EM engine on internal (n_features, L) arrays.

Documents are processed in blocks of rows so that peak memory is
O(L * Z + block * L) rather than O(T * L).
"""
import numpy as np

from countgrid import _kernels
from countgrid._counts import Counts

# Rows per block: about 32 MB of float64 posteriors, whatever the grid size.
BLOCK_ELEMENTS = 1 << 22
# Dense inputs at least this dense use the BLAS path (GEMM); sparser ones go to CSR.
DENSE_BLAS_MIN_DENSITY = 0.25
ALPHA = 1e-10


def block_rows(n_rows, L):
    return int(max(1, min(n_rows, BLOCK_ELEMENTS // max(L, 1))))


class Corpus(Counts):
    """Validated counts, ready for the counting-grid kernels (dense BLAS path when dense)."""

    def __init__(self, X, dtype, n_features=None, name="X"):
        super().__init__(X, dtype, n_features=n_features, name=name,
                         dense_min_density=DENSE_BLAS_MIN_DENSITY)

    def doc_lengths(self):
        return self.lengths

    def estep(self, t0, t1, logh, log_prior, floor, q, loglik, num_threads):
        """Posteriors of rows [t0, t1) into q[:t1-t0], log-likelihoods into loglik."""
        if self.is_sparse:
            X = self.X
            _kernels.estep_csr(X.indptr, X.indices, X.data, t0, t1, logh, log_prior, floor,
                               q, loglik, num_threads)
        else:
            out = q[: t1 - t0]
            np.matmul(self.X[t0:t1], self._dense_logh(logh), out=out)
            _kernels.posterior(out, log_prior, floor, loglik, num_threads)

    def accumulate(self, t0, t1, q, n, cursor, num_threads):
        """n += C[t0:t1].T @ q[:t1-t0]."""
        if self.is_sparse:
            csc = self.csc
            _kernels.accumulate_csc(csc.indptr, csc.indices, csc.data, cursor, t0, t1, q, n,
                                    num_threads)
        else:
            n += self.X[t0:t1].T @ q[: t1 - t0]

    def new_cursor(self):
        return self.csc.indptr[:-1].copy() if self.is_sparse else None

    def _dense_logh(self, logh):
        # A zero count times log(0) = -inf would give NaN in a GEMM.
        tiny = np.log(np.finfo(logh.dtype).tiny)
        if np.isneginf(logh).any():
            return np.maximum(logh, tiny)
        return logh


def posteriors(corpus, logh, log_prior, floor, num_threads):
    """Full posterior matrix (T, L) and per-document log-likelihoods."""
    T, L = corpus.n_samples, logh.shape[1]
    q = np.empty((T, L), dtype=corpus.dtype)
    loglik = np.empty(T, dtype=np.float64)
    corpus.estep(0, T, logh, log_prior, floor, q, loglik, num_threads)
    return q, loglik


def blocked_estep(corpus, logh, log_prior, floor, num_threads, visit):
    """Run the E-step block by block, calling visit(t0, t1, q_block, loglik_block)."""
    T, L = corpus.n_samples, logh.shape[1]
    B = block_rows(T, L)
    q = np.empty((B, L), dtype=corpus.dtype)
    loglik = np.empty(T, dtype=np.float64)
    for t0 in range(0, T, B):
        t1 = min(T, t0 + B)
        corpus.estep(t0, t1, logh, log_prior, floor, q, loglik[t0:t1], num_threads)
        visit(t0, t1, q[: t1 - t0], loglik[t0:t1])
    return loglik


def run_em(corpus, pi, extent, window, n_iter, tol, min_iter, rho, floor, log_prior,
           learn_prior, num_threads, verbose=0, stage=""):
    """EM iterations in place on pi (Z, L).

    Returns (history, n_iter_done, converged, log_prior, h): history[i] is the
    exact total log-likelihood after i + 1 updates, and h the window
    histograms of the final pi.
    """
    import time

    Z, L = pi.shape
    h = np.empty_like(pi)
    logh = np.empty_like(pi)
    n = np.empty_like(pi)
    total_count = float(corpus.doc_lengths().sum())
    history = []
    converged = False
    done = 0
    for it in range(n_iter + 1):
        tic = time.perf_counter()
        _kernels.histograms(pi, extent, window, h, logh, num_threads)
        last = it == n_iter
        if not last:
            n.fill(0)
            cursor = corpus.new_cursor()
            qsum = np.zeros(L) if learn_prior else None

            def visit(t0, t1, qb, llb):
                corpus.accumulate(t0, t1, qb, n, cursor, num_threads)
                if qsum is not None:
                    qsum[:] += qb.sum(axis=0, dtype=np.float64)
        else:
            def visit(t0, t1, qb, llb):
                pass
        loglik = blocked_estep(corpus, logh, log_prior, floor, num_threads, visit)
        total = float(np.sum(loglik))
        if it > 0:
            history.append(total)
            done = it
            if verbose:
                print(f"[countgrid{stage}] iteration {it:4d}  log-likelihood {total:.6e}"
                      f"  ({time.perf_counter() - tic:.3f} s)", flush=True)
            if tol > 0 and it >= max(min_iter, 2) and len(history) >= 2:
                f_new, f_old = history[-1] / total_count, history[-2] / total_count
                denom = abs(0.5 * (f_new + f_old))
                if denom > 0 and (f_new - f_old) / denom < tol:
                    converged = True
                    break
        if last:
            break
        _kernels.mstep(n, h, pi, extent, window, rho, ALPHA, num_threads)
        if learn_prior:
            prior = qsum + 1e-12 * max(qsum.sum(), 1.0) / L
            prior /= prior.sum()
            log_prior = np.log(prior).astype(pi.dtype)
    return np.asarray(history, dtype=np.float64), done, converged, log_prior, h
