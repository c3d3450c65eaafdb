"""The counting-grid EM engine on internal ``(n_features, L)`` arrays (Jojic & Perina,
UAI 2011, eqs. 3 and 7; docs/counting_grids.md).

Documents are processed in blocks of rows so that peak memory is O(L * Z + block * L)
rather than O(T * L).  Sparse counts go through the C kernels (CSR E-step, CSC M-step
statistics); dense counts with at least 25% non-zeros use BLAS for the two products.
"""
import numpy as np
import scipy.sparse as sp

from countgrid._utils.counts import Counts, check_document_lengths
from countgrid._engine.em_loop import EMMonitor
from countgrid.grid import _wrappers

# Rows per block: about 32 MB of float64 posteriors, whatever the grid size.
BLOCK_ELEMENTS = 1 << 22
# Sparse posteriors of up to this many (position, value) pairs are gathered before one
# accumulation: every accumulation sweeps the rows of n its words touch, so the sweep is
# shared by many more documents than a posterior block holds (docs/scale.md).
TOPK_ELEMENTS = 1 << 22
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


def block_counts(block, name, n_features, dtype):
    """:func:`grid_counts` of one block of a chunk source or dask array (the
    ``make_counts`` of countgrid.streaming._blocks.Blocks and
    countgrid.streaming._dask.DaskBlocks)."""
    return grid_counts(block, dtype, n_features=n_features, name=name)


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
        _wrappers.estep_csr(X.indptr, X.indices, X.data, t0, t1, logh, log_prior, floor,
                                q, loglik, num_threads)
    else:
        out = q[: t1 - t0]
        np.matmul(counts.X[t0:t1], _dense_logh(logh), out=out)
        _wrappers.posterior(out, log_prior, floor, loglik, num_threads)


def accumulate(counts, t0, t1, q, n, cursor, num_threads):
    """n += C[t0:t1].T @ q[:t1-t0] (cursor: the CSC positions of row t0, see new_cursor)."""
    if counts.is_sparse:
        csc = counts.csc
        _wrappers.accumulate_csc(csc.indptr, csc.indices, csc.data, cursor, t0, t1, q, n,
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


class GridStatistics:
    """Sufficient statistics of a set of documents under fixed parameters: what the M-step
    (paper eq. 7) needs, summed over documents.

    Attributes
    ----------
    n : ndarray of shape (n_features, L)
        ``n[z, k] = sum_t c_tz q_t(k)``.
    qsum : ndarray of shape (L,) or None
        ``sum_t q_t(k)`` (the learned prior's numerator; None when the prior is fixed).
    log_likelihood : float
        Exact log-likelihood of the documents (the posteriors' normalisers); with the
        coarse-to-fine E-step, over the positions scored (a lower bound).
    n_documents : int
    n_scored, n_full : int
        Window positions scored (summed over documents) and documents scanned at every
        position (all of them for the exact E-step; docs/scale.md).
    """

    __slots__ = ("n", "qsum", "log_likelihood", "n_documents", "n_scored", "n_full")

    def __init__(self, n_features, L, dtype, learn_prior):
        self.n = np.zeros((n_features, L), dtype=dtype)
        self.qsum = np.zeros(L) if learn_prior else None
        self.log_likelihood = 0.0
        self.n_documents = self.n_scored = self.n_full = 0

    def reset(self):
        """Back to the statistics of no document (the buffers are reused)."""
        self.n.fill(0)
        if self.qsum is not None:
            self.qsum.fill(0)
        self.log_likelihood = 0.0
        self.n_documents = self.n_scored = self.n_full = 0
        return self

    def add(self, other):
        """``self += other`` (a reduction step of a distributed fit); returns self."""
        self.n += other.n
        if self.qsum is not None:
            self.qsum += other.qsum
        self.log_likelihood += other.log_likelihood
        self.n_documents += other.n_documents
        self.n_scored += other.n_scored
        self.n_full += other.n_full
        return self

    def blend(self, other, rho, scale):
        """Stepwise EM (Cappe & Moulines 2009): ``s <- (1 - rho) s + rho * scale * s_b``."""
        self.n *= 1.0 - rho
        self.n += (rho * scale) * other.n
        if self.qsum is not None:
            self.qsum *= 1.0 - rho
            self.qsum += (rho * scale) * other.qsum
        self.log_likelihood = other.log_likelihood
        self.n_documents = other.n_documents
        self.n_scored, self.n_full = other.n_scored, other.n_full
        return self


class EStepSearch:
    """The coarse-to-fine E-step of :func:`block_statistics` (docs/scale.md, "A
    coarse-to-fine E-step"; the kernel cg_grid_estep_search_csr): each document is scored
    on the positions whose row and column are multiples of ``stride``, then in the
    ``(2 stride - 1)^2`` boxes around its ``keep`` best lattice points; a document whose
    lattice posterior puts less than ``min_mass`` on those points is scanned in full.
    The ``top_k`` largest posterior entries of a document enter the statistics.

    ``grid_shape`` is the grid's ``(rows, columns)`` (``(1, E)`` for a ring of E cells).
    ``lattice``: the lattice columns of the current ``logh``
    (``_wrappers.search_lattice``), set by :func:`run_em` for one E-step so that its
    kernel calls do not each build them; None: each call builds them.
    ``track``: tracking (docs/scale.md, "Tracking") — each document's most probable
    position of the last E-step (``hints``, by its row in the corpus; reset by
    :func:`run_em` at each stage) is tried first, with its box and a check lattice of
    stride ``2 stride``; local and out-of-core fits (a distributed E-step keeps no
    per-document state and searches).
    """

    __slots__ = ("grid_shape", "stride", "keep", "min_mass", "top_k", "lattice", "track",
                 "hints")

    def __init__(self, grid_shape, stride, keep, min_mass, top_k, track=False):
        self.grid_shape = tuple(int(v) for v in grid_shape)
        self.stride, self.keep = int(stride), int(keep)
        self.min_mass, self.top_k = float(min_mass), int(top_k)
        self.lattice = None
        self.track = bool(track)
        self.hints = None

    def block_hints(self, row0, n_rows):
        """The tracking hints of documents [row0, row0 + n_rows) of the corpus (-1 where
        none yet), an int32 view the kernel updates; None when not tracking."""
        if not self.track or row0 is None:
            return None
        end = row0 + n_rows
        if self.hints is None or len(self.hints) < end:
            grown = np.full(max(end, 2 * (0 if self.hints is None else len(self.hints))), -1,
                            dtype=np.int32)
            if self.hints is not None:
                grown[:len(self.hints)] = self.hints
            self.hints = grown
        return self.hints[row0:end]


def block_statistics(counts, logh, log_prior, floor, num_threads, stats, top_k=None,
                     search=None, row0=None):
    """E-step of one block of documents under ``logh`` / ``log_prior``, its statistics added
    into ``stats`` (a GridStatistics); returns ``stats``.

    ``top_k``: sparse posteriors (sparse counts only; docs/scale.md) — each document's
    posterior is cut to its ``top_k`` most probable positions, renormalised, before it
    enters ``n``; the log-likelihood and the prior's mass stay exact.
    ``search``: an :class:`EStepSearch`, the coarse-to-fine E-step instead of the full
    scan (its own ``top_k`` applies; the log-likelihood is over the positions scored);
    ``row0``, the block's first row in the corpus, lets it track documents.

    Pure apart from ``stats``: the one step shared by the in-memory, out-of-core, online and
    distributed fits (docs/scale.md).  The kernels release the GIL.
    """
    if search is not None:
        return _search_statistics(counts, logh, log_prior, floor, num_threads, stats,
                                  search, row0)
    cursor = new_cursor(counts)
    L = logh.shape[1]
    sparse_q = top_k is not None and counts.is_sparse and top_k < L
    if sparse_q:
        csc = counts.csc
        span = max(block_rows(counts.n_samples, L), TOPK_ELEMENTS // top_k)
        span = min(span, counts.n_samples)
        idx = np.empty((span, top_k), dtype=np.int32)
        val = np.empty((span, top_k), dtype=counts.dtype)
        pending = [0, 0]                       # first row, rows gathered

        def flush():
            start, rows = pending
            if rows:
                _wrappers.accumulate_csc_topk(csc.indptr, csc.indices, csc.data, cursor,
                                                  start, start + rows, idx[:rows],
                                                  val[:rows], stats.n, num_threads)
            pending[0], pending[1] = start + rows, 0

    def visit(t0, t1, qb, llb):
        if sparse_q:
            if pending[1] + (t1 - t0) > span:
                flush()
            rows = pending[1]
            _wrappers.topk_posterior(qb, top_k, idx[rows:rows + t1 - t0],
                                         val[rows:rows + t1 - t0], num_threads)
            pending[1] += t1 - t0
        else:
            accumulate(counts, t0, t1, qb, stats.n, cursor, num_threads)
        if stats.qsum is not None:
            stats.qsum += qb.sum(axis=0, dtype=np.float64)

    loglik = blocked_estep(counts, logh, log_prior, floor, num_threads, visit)
    if sparse_q:
        flush()
    stats.log_likelihood += float(np.sum(loglik))
    stats.n_documents += counts.n_samples
    stats.n_scored += counts.n_samples * L
    stats.n_full += counts.n_samples
    return stats


#: The coarse-to-fine E-step's statistics leave out positions holding less than this of a
#: document's posterior: at most k 2^-30 (1e-7 for k = 100) of its mass, within float32's
#: rounding of the kept values' sum; converged posteriors are so peaked that this leaves
#: ~3 of the 100 positions a document and the M-step's accumulation ~5x faster
#: (docs/scale.md, "A million documents").
NEGLIGIBLE_POSTERIOR = 2.0 ** -30


def _search_statistics(counts, logh, log_prior, floor, num_threads, stats, search, row0):
    """:func:`block_statistics` with the coarse-to-fine E-step (``search``)."""
    T, L = counts.n_samples, logh.shape[1]
    hints = search.block_hints(row0, T)
    k = min(search.top_k, L)
    span = max(1, min(T, TOPK_ELEMENTS // k))
    idx = np.empty((span, k), dtype=np.int32)
    val = np.empty((span, k), dtype=counts.dtype)
    loglik = np.empty(span)
    scored = np.empty(span, dtype=np.int64)
    cursor = new_cursor(counts)
    # a full scan scores the lattice and then every position
    n_lattice = _wrappers.lattice_size(search.grid_shape, search.stride)
    for t0 in range(0, T, span):
        t1 = min(T, t0 + span)
        rows = t1 - t0
        if counts.is_sparse:
            X, r0 = counts.X, t0
        else:     # the kernel reads CSR rows: the block's, converted
            X, r0 = sp.csr_matrix(counts.X[t0:t1]), 0
        _wrappers.estep_search_csr(X.indptr, X.indices, X.data, r0, r0 + rows,
                                   search.grid_shape, logh, log_prior, floor, search.stride,
                                   search.keep, search.min_mass, idx[:rows], val[:rows],
                                   loglik[:rows], scored[:rows], num_threads,
                                   search.lattice, None if hints is None else hints[t0:t1])
        block_val = val[:rows]
        block_val[block_val < NEGLIGIBLE_POSTERIOR] = 0     # the kernel skips zeros
        if counts.is_sparse:
            csc = counts.csc
            _wrappers.accumulate_csc_topk(csc.indptr, csc.indices, csc.data, cursor, t0, t1,
                                          idx[:rows], val[:rows], stats.n, num_threads)
        else:
            q = np.zeros((rows, L), dtype=counts.dtype)
            np.put_along_axis(q, idx[:rows], val[:rows], axis=1)
            accumulate(counts, t0, t1, q, stats.n, cursor, num_threads)
        if stats.qsum is not None:
            stats.qsum += np.bincount(idx[:rows].ravel(), weights=val[:rows].ravel(),
                                      minlength=L)
        stats.log_likelihood += float(np.sum(loglik[:rows]))
        stats.n_scored += int(np.sum(scored[:rows]))
        stats.n_full += int(np.count_nonzero(scored[:rows] >= L + n_lattice))
    stats.n_documents += T
    return stats


def m_step(stats, h, pi, extent, window, rho, num_threads, scratch=None):
    """New ``pi`` (in place) and log-prior from summed statistics (paper eq. 7; draft eq. 10).

    ``h`` holds the window histograms of the current ``pi``.  The kernel uses its count
    argument as scratch: ``scratch`` (same shape as ``stats.n``) keeps ``stats.n`` intact
    (online EM keeps its running statistics); without it ``stats.n`` is overwritten.
    """
    n = stats.n
    if scratch is not None:
        np.copyto(scratch, n)
        n = scratch
    _wrappers.mstep(n, h, pi, extent, window, rho, ALPHA, num_threads)
    if stats.qsum is None:
        return None
    L = pi.shape[1]
    prior = stats.qsum + 1e-12 * max(stats.qsum.sum(), 1.0) / L
    prior /= prior.sum()
    return np.log(prior).astype(pi.dtype)


#: Extrapolated EM (``CountingGrid(accelerate=True)``; docs/scale.md, "Extrapolated EM"):
#: SQUAREM's longest step starts at 1 (plain EM), grows by this factor whenever a step
#: reaches it and shrinks by it after a step that lost likelihood (Varadhan & Roland 2008,
#: section 4; their R package's ``mstep``) ...
SQUAREM_STEP_GROWTH = 4.0
#: ... up to this bound.
SQUAREM_STEP_MAX = 1e4


def squarem(p0, p1, p2, step_max, out, num_threads=0):
    """``out`` = the SQUAREM extrapolation of three successive grids ``p0 -> p1 -> p2``
    (scheme S3, cg_grid_squarem); ``out`` may be ``p0``.  Returns the step used (<= -1;
    -1 is ``p2`` itself)."""
    return _wrappers.squarem(p0, p1, p2, float(step_max), out, num_threads)


def local_estep(blocks, num_threads, top_k=None):
    """The E-step over ``blocks()`` (an iterable of Counts) on this machine, block after
    block: ``estep(logh, log_prior, floor, stats, search=None)`` for :func:`run_em`."""
    def estep_all(logh, log_prior, floor, stats, search=None):
        total, row0 = 0.0, 0
        for counts in blocks():
            if stats is None:
                total += float(np.sum(blocked_estep(counts, logh, log_prior, floor,
                                                    num_threads)))
            else:
                block_statistics(counts, logh, log_prior, floor, num_threads, stats, top_k,
                                 search, row0)
            row0 += counts.n_samples
        return total if stats is None else stats.log_likelihood
    return estep_all


def block_task(counts, params, num_threads):
    """The block step as a task of a distributed fit: ``params = (logh, log_prior, floor,
    want_statistics, learn_prior, top_k, search)``; the block's statistics, or its
    log-likelihood."""
    logh, log_prior, floor, want_statistics, learn_prior, top_k, search = params
    if not want_statistics:
        return float(np.sum(blocked_estep(counts, logh, log_prior, floor, num_threads)))
    stats = GridStatistics(logh.shape[0], logh.shape[1], logh.dtype, learn_prior)
    return block_statistics(counts, logh, log_prior, floor, num_threads, stats, top_k,
                            search)


def distributed_estep(blocks, learn_prior, top_k=None):
    """The E-step over the blocks of a countgrid.streaming._dask.DaskBlocks, as
    :func:`local_estep`."""
    def estep_all(logh, log_prior, floor, stats, search=None):
        if stats is None:
            return float(sum(blocks.gathered(block_task, (logh, log_prior, floor, False,
                                                          learn_prior, top_k, None))))
        stats.add(blocks.summed(block_task, (logh, log_prior, floor, True, learn_prior,
                                             top_k, search)))
        return stats.log_likelihood
    return estep_all


def run_em(estep_all, pi, extent, window, n_iter, tol, min_iter, rho, floor, log_prior,
           learn_prior, num_threads, verbose=0, stage="", on_update=None,
           position_mass=None, search=None, search_from=0, scored=None, accelerate=False):
    """Batch EM iterations in place on pi (Z, L).

    ``estep_all(logh, log_prior, floor, stats)`` runs the E-step over all documents and
    returns their total log-likelihood, adding their statistics into ``stats`` unless it is
    None (:func:`local_estep` on this machine, ``countgrid.streaming._dask`` on a cluster).
    Returns (monitor, log_prior, h): ``monitor.history[i]`` is the exact total
    log-likelihood after i + 1 updates (countgrid._engine.em_loop.EMMonitor), and h the window
    histograms of the final pi.  ``on_update(n_updates, log_prior, monitor)`` is called
    when pi holds a complete update (and ``on_update(None, None, monitor)`` just before
    the M-step starts changing it in place), for checkpoints.  ``position_mass`` (L,),
    if given, receives the tokens placed at each window position by the last E-step
    with statistics, ``sum_t |c_t| q_t(k)`` (countgrid.grid._capacity).
    ``search`` (an :class:`EStepSearch`) replaces the full scan from iteration
    ``search_from`` on (the log-likelihoods recorded are then over the positions scored,
    and the convergence test waits for two of them); ``scored``, a list, receives each
    iteration's ``(fraction of positions scored, fraction of documents scanned in full)``.
    """
    Z, L = pi.shape
    h = np.empty_like(pi)
    logh = np.empty_like(pi)
    stats = GridStatistics(Z, L, pi.dtype, learn_prior)
    if search is not None:
        min_iter = max(min_iter, search_from + 2)
        search.hints = None         # a new stage: new windows, maybe other documents
    monitor = EMMonitor("CountingGrid", n_iter, tol, min_iter=min_iter, verbose=verbose,
                        stage=stage)
    if accelerate:
        # SQUAREM cycles of two EM maps: p0 -> p1 -> p2, then an extrapolated grid whose
        # E-step starts the next cycle; p2 is kept in case it loses likelihood
        p0, p1 = np.empty_like(pi), np.empty_like(pi)
        step_max, cycle, extrapolated = 1.0, 0, False
    for it in range(n_iter + 1):
        _wrappers.histograms(pi, extent, window, h, logh, num_threads)
        last = it == n_iter
        if last:   # the log-likelihood of the final parameters only
            loglik = estep_all(logh, log_prior, floor, None)
        elif search is not None and it >= search_from:
            search.lattice = _wrappers.search_lattice(logh, search.grid_shape, search.stride)
            try:
                loglik = estep_all(logh, log_prior, floor, stats.reset(), search)
            finally:
                search.lattice = None
        else:
            loglik = estep_all(logh, log_prior, floor, stats.reset())
        if scored is not None and not last:
            scored.append((stats.n_scored / max(stats.n_documents * L, 1),
                           stats.n_full / max(stats.n_documents, 1)))
        if accelerate and extrapolated:
            extrapolated, cycle = False, 0
            # an extrapolated grid always follows a recorded iteration (its p1)
            if loglik < monitor.history[-1]:
                # it lost likelihood: back to p2, the plain EM update, held in p1
                np.copyto(pi, p1)
                step_max = max(1.0, step_max / SQUAREM_STEP_GROWTH)
                if not last:
                    continue
                # the final parameters are p2: score them
                _wrappers.histograms(pi, extent, window, h, logh, num_threads)
                loglik = estep_all(logh, log_prior, floor, None)
        if it > 0 and monitor.record(loglik, n_updates=it):
            break
        if last:
            break
        if on_update is not None:
            on_update(None, None, monitor)
        if position_mass is not None:   # before the M-step overwrites stats.n
            np.sum(stats.n, axis=0, dtype=np.float64, out=position_mass)
        if accelerate:
            np.copyto(p0 if cycle == 0 else p1, pi)
        new_log_prior = m_step(stats, h, pi, extent, window, rho, num_threads)
        if accelerate:
            cycle += 1
            if cycle == 2:
                # p0 -> p1 -> pi (= p2): the extrapolated grid goes to pi, p2 to p1
                step = squarem(p0, p1, pi, step_max, p0, num_threads)
                if step <= -step_max:
                    step_max = min(step_max * SQUAREM_STEP_GROWTH, SQUAREM_STEP_MAX)
                np.copyto(p1, pi)
                np.copyto(pi, p0)
                extrapolated = True
        if learn_prior:
            log_prior = new_log_prior
        if on_update is not None:
            on_update(it + 1, log_prior, monitor)
    monitor.finish()
    return monitor, log_prior, h
