"""Probabilistic latent semantic analysis (Hofmann, UAI 1999; docs/topics.md).

Asymmetric form ``P(d, w) = P(d) sum_z P(z|d) P(w|z)``, learned by EM over the
non-zero counts in C/OpenMP.  No ``n_nonzero x n_components`` responsibility
array is stored: a document pass (parallel over documents, CSR) updates
``P(z|d)`` and a word pass (parallel over words, CSC) accumulates ``P(w|z)``,
each recomputing the posteriors ``P(z|d,w)`` it needs.
"""
from functools import partial
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from countgrid._utils import progress as _progress
from countgrid._base import BaseEstimator, TransformerMixin
from countgrid._utils.counts import MAX_DOCUMENT_LENGTH, Counts, check_document_lengths
from countgrid.streaming._blocks import Blocks, is_dask_collection
from countgrid.streaming._dask import DaskBlocks
from countgrid.streaming._dask import transform as dask_transform
from countgrid._engine.em_loop import (N_BATCH_ITER_DOC, STEP_SIZE_CONSTRAINTS,
                                       STEP_SIZE_PARAMS_DOC, EMMonitor, minibatch_inputs,
                                       minibatch_rho, start_fit)
from countgrid._utils.fitted import (array, fitted_array, fitted_bool, fitted_distribution,
                               fitted_int, fitted_real, scalar)
from countgrid._utils.memory import check_memory
from countgrid._utils.param_validation import Interval, Options
from countgrid._utils.threads import effective_n_threads
from countgrid._utils.validation import check_is_fitted, check_random_state
from countgrid.topics import _wrappers

__all__ = ["PLSA", "select_n_components_bic", "MAX_DOCUMENT_LENGTH"]


def _docs_pass(counts, phi, phib, theta, n_iter, tol, nt):
    X = counts.csr
    loglik = np.empty(X.shape[0])
    _wrappers.plsa_docs(X.indptr, X.indices, X.data, phi, phib, theta, n_iter, tol, loglik, nt)
    return loglik


# Counts beyond these bounds are rescaled by an exact power of two before EM: the kernels
# form n(d,w) / sum_z P(z|d) P(w|z), which overflows for huge counts (1e150 with a small
# denominator) long before the log-likelihood does (docs/robustness.md, "Numerical range").
_SAFE_COUNTS = (2.0**-64, 2.0**64)


def _count_exponent(values):
    """0, or the power of two that brings the largest of ``values`` into [0.5, 1) when it
    lies outside _SAFE_COUNTS."""
    top = float(np.max(values)) if np.size(values) else 0.0
    if top == 0.0 or _SAFE_COUNTS[0] <= top <= _SAFE_COUNTS[1]:
        return 0
    return -int(np.frexp(top)[1])


def _row_exponents(csr):
    """Per-document exponents of :func:`_count_exponent` (folding-in is invariant to a
    document's scale, so each is rescaled on its own)."""
    exps = np.zeros(csr.shape[0], dtype=np.int64)
    nonempty = np.flatnonzero(np.diff(csr.indptr) > 0)
    if nonempty.size:
        top = np.maximum.reduceat(csr.data, csr.indptr[nonempty]).astype(np.float64)
        far = (top > _SAFE_COUNTS[1]) | (top < _SAFE_COUNTS[0])
        exps[nonempty[far]] = -np.frexp(top[far])[1]
    return exps


class _ScaledCounts:
    """The CSR view the EM passes read, with every row's counts times 2**exps (exact)."""

    def __init__(self, csr, exps):
        data = np.ldexp(csr.data, np.repeat(exps, np.diff(csr.indptr))).astype(csr.dtype)
        self.csr = sp.csr_matrix((data, csr.indices, csr.indptr), shape=csr.shape)


def _with_rows(blocks, theta):
    """``(counts, theta rows of its documents)`` for each block (a Counts is one block)."""
    if isinstance(blocks, Counts):
        yield blocks, theta
        return
    r0 = 0
    for counts in blocks():
        yield counts, theta[r0:r0 + counts.n_samples]
        r0 += counts.n_samples


def block_step(counts, theta, phi, phib, nt):
    """One EM step on a block of documents (docs/scale.md): the unnormalised statistics
    of ``P(w|z)`` (n_words x K) and the log-likelihood at entry; the block's ``P(z|d)``
    (``theta``) is updated in place.  Shared by the in-memory, out-of-core, online and
    distributed fits; the kernels release the GIL."""
    acc = _words_pass(counts, theta, phib, nt)
    loglik = _docs_pass(counts, phi, phib, theta, 1, 0.0, nt)
    return acc, float(loglik.sum())


def block_counts(block, name, n_features, dtype):
    """The validated counts of one block (``make_counts`` of countgrid.streaming._blocks.Blocks and
    countgrid.streaming._dask.DaskBlocks)."""
    return check_document_lengths(Counts(block, dtype, n_features=n_features, name=name),
                                  name)


def _distributed_step(counts, theta, params, nt):
    phi, phib = params
    return block_step(counts, theta, phi, phib, nt)


def _distributed_loglik(counts, theta, phi, nt):
    return float(_docs_pass(counts, phi, None, theta.copy(), 0, 0.0, nt).sum())


def _words_pass(counts, theta, phib, nt):
    C = counts.csc
    acc = np.empty_like(phib)
    _wrappers.plsa_words(C.indptr, C.indices, C.data, theta, phib, acc, nt)
    return acc


class PLSA(TransformerMixin, BaseEstimator):
    __doc__ = """Probabilistic latent semantic analysis, fitted by (tempered) EM.

    Parameters
    ----------
    n_components : int, default=10
        Number of topics ``Z``.
    tempered : bool or "auto", default="auto"
        Tempered EM (Hofmann 1999): a fraction ``holdout`` of the tokens is held
        out; EM runs with early stopping on their likelihood, then the inverse
        temperature ``beta`` is lowered by ``beta_step`` while the held-out
        likelihood improves (and ``beta >= beta_min``); finally EM resumes on
        all counts at the chosen ``beta_``.  The tempered E-step is
        ``P(z|d,w) ∝ P(z|d) P(w|z)^beta`` (the mixing weight outside the power).
        "auto" tempers where tempering is possible, batch EM on an in-memory X, and
        runs plain EM on a chunk source, a dask array and with
        ``learning_method="online"`` (where True is an error).  Measured by held-out
        document completion (:func:`countgrid.metrics.completion_perplexity`) on
        validation splits of the training documents of reuters_r8 and news20_full,
        20-100 topics, with the default ``smoothing``: tempering lowered the perplexity
        by 1.5-17 % (the more so the more topics), for 0.6-2.2 times the fit time of
        plain EM, which stopped at ``n_iter`` without converging (docs/results.md,
        "Held-out document completion").  False until issue 22.
    beta_min : float in (0, 1], default=0.5
        Smallest inverse temperature tried.
    beta_step : float in (0, 1), default=0.9
        Factor by which ``beta`` is lowered.
    holdout : float in (0, 1), default=0.1
        Fraction of tokens held out for tempering (binomial thinning of each count).
    n_iter : int, default=100
        Maximum EM iterations (per phase when tempered).
    tol : float, default=1e-6
        Stop when the relative change of the log-likelihood falls below ``tol``.
    init : {"docs", "random"} or array of shape (n_components, n_features), default="docs"
        "docs": each ``P(w|z)`` is the word distribution of a random training
        document smoothed with half an average document, ``P(z|d)`` uniform
        (converges in far fewer iterations); "random": uniform random entries,
        normalised (as in the Sivic/Fergus code); an array: a starting ``P(w|z)``
        with uniform ``P(z|d)``.
    smoothing : float, default=0.03
        Pseudo-count added to every ``P(w|z)`` numerator (in units of the counts of X)
        before normalising, so that no word gets probability 0 (0 gives exact EM).
        Measured as ``tempered`` above: 0.03 was within 0.5 % of the best of 1e-10,
        0.01, 0.03, 0.1 and 0.3 in every case, and the defaults together (tempered EM,
        0.03) gave 13-83 % lower held-out perplexity than the defaults before issue 22
        (plain EM, 1e-10, which leaves a word unseen in a topic at about 1e-14 there).
    fold_in_iter, fold_in_tol : int, float, default=500, 1e-10
        Folding-in (``transform``): EM on ``P(z|d)`` with ``P(w|z)`` fixed from a
        uniform start, until ``max_z |change| < fold_in_tol``.  Options of inference:
        changing them on a fitted model takes effect at the next ``transform`` /
        ``score_samples``, without a refit.
    dtype : {numpy.float32, numpy.float64}, default=numpy.float64
    num_threads : int, optional
        OpenMP threads (None = all cores).  Results do not depend on it.
    random_state : None, int or numpy.random.Generator
    verbose : int, default=0
    learning_method : {"batch", "online"}, default="batch"
        "batch": EM over all documents per iteration (on a chunk source, one pass per
        iteration); "online": stepwise EM over minibatches of ``batch_size`` documents,
        ``n_iter`` passes at most, each minibatch folded in (``fold_in_iter``,
        ``fold_in_tol``) and its statistics blended with step
        ``(learning_offset + t)^-learning_decay`` (docs/scale.md, "Online EM").
    batch_size : int, default=128
        Documents per minibatch of online EM and :meth:`partial_fit`.
    """ + STEP_SIZE_PARAMS_DOC + """

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        ``P(w|z)``; rows sum to 1.
    doc_topic_ : ndarray of shape (n_samples, n_components)
        ``P(z|d)`` of the training documents.
    log_likelihood_ : ndarray
        ``sum_d sum_w n(d,w) log sum_z P(z|d) P(w|z)`` after each iteration of the
        last phase (the ``log P(d)`` term is omitted; docs/topics.md, "Log-likelihood
        convention").
    beta_ : float
        Inverse temperature used at the end (1 without tempering).
    n_iter_ : int
        EM iterations of the last phase.
    converged_ : bool
        Whether the last phase met ``tol`` (else a ``ConvergenceWarning`` was issued).
    n_features_in_ : int
        Vocabulary size seen in ``fit``.
    """ + N_BATCH_ITER_DOC + """

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> X = np.random.default_rng(0).poisson(1.0, size=(30, 12))
    >>> model = countgrid.PLSA(n_components=3, random_state=0).fit(X)
    >>> model.transform(X).shape
    (30, 3)
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None)],
        "tempered": ["boolean", Options("auto")],
        "beta_min": [Interval(Real, 0, 1, closed="right")],
        "beta_step": [Interval(Real, 0, 1, closed="neither")],
        "holdout": [Interval(Real, 0, 1, closed="neither")],
        "n_iter": [Interval(Integral, 1, None)],
        "tol": [Interval(Real, 0, None)],
        "init": [Options("docs", "random"), "array-like"],
        "smoothing": [Interval(Real, 0, None)],
        "fold_in_iter": [Interval(Integral, 0, None)],
        "fold_in_tol": [Interval(Real, 0, None)],
        "dtype": ["dtype", None],
        "num_threads": ["num_threads"],
        "random_state": ["random_state"],
        "verbose": ["boolean", Interval(Integral, 0, None)],
        "learning_method": [Options("batch", "online")],
        "batch_size": [Interval(Integral, 1, None)],
        **STEP_SIZE_CONSTRAINTS,
    }
    _fitted_schema = {"components_": array("float", "n_topics", "n_features"),
                      "doc_topic_": array("float", "n_documents", "n_topics"),
                      "log_likelihood_": array("float", "n_history"),
                      "beta_": scalar("real"), "n_iter_": scalar("int"),
                      "converged_": scalar("bool"),
                      "n_features_in_": scalar("int", bind="n_features"),
                      "n_batch_iter_": scalar("int")}

    def __init__(self, n_components=10, tempered="auto", beta_min=0.5, beta_step=0.9, holdout=0.1,
                 n_iter=100, tol=1e-6, init="docs", smoothing=0.03, fold_in_iter=500,
                 fold_in_tol=1e-10, dtype=np.float64, num_threads=None, random_state=None,
                 verbose=0, learning_method="batch", batch_size=128, learning_offset=10.0,
                 learning_decay=0.7, total_samples=1_000_000):
        self.n_components = n_components
        self.tempered = tempered
        self.beta_min = beta_min
        self.beta_step = beta_step
        self.holdout = holdout
        self.n_iter = n_iter
        self.tol = tol
        self.init = init
        self.smoothing = smoothing
        self.fold_in_iter = fold_in_iter
        self.fold_in_tol = fold_in_tol
        self.dtype = dtype
        self.num_threads = num_threads
        self.random_state = random_state
        self.verbose = verbose
        self.learning_method = learning_method
        self.batch_size = batch_size
        self.learning_offset = learning_offset
        self.learning_decay = learning_decay
        self.total_samples = total_samples

    # ------------------------------------------------------------------- fit
    def fit(self, X, y=None):
        """Learn ``P(w|z)`` and the training ``P(z|d)`` by (tempered) EM.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), ChunkSource \
or dask array
            Non-negative counts.  A :class:`countgrid.streaming.ChunkSource` is read chunk
            by chunk at every pass (out of core; ``doc_topic_``, n_samples x n_components,
            stays in memory); a dask array of row blocks is fitted on the
            dask.distributed cluster of the current client, ``doc_topic_`` then being a
            dask array whose blocks stay on the workers (docs/scale.md).
        y : ignored

        Returns
        -------
        self
        """
        dtype, nt = start_fit(self, X)
        # "auto": tempered EM where it is possible (batch EM on an in-memory X)
        auto = isinstance(self.tempered, str)
        asked = not auto and bool(self.tempered)
        if asked and self.learning_method == "online":
            raise ValueError("tempered=True needs learning_method='batch' (tempering holds "
                             "out tokens of the whole corpus); set tempered=False for "
                             "online EM")
        if is_dask_collection(X):
            if asked or self.learning_method == "online":
                raise ValueError("a dask array is fitted by batch EM without tempering: set "
                                 "tempered=False and learning_method='batch'")
            data = DaskBlocks(X, partial(block_counts, dtype=dtype), self.num_threads)
        else:
            data = Blocks(X, partial(block_counts, dtype=dtype))
            if asked and not data.in_memory:
                raise ValueError("tempered=True holds out tokens of an in-memory X: pass a "
                                 "matrix, or tempered=False with a chunk source")
        # one exact power of two for all documents (and the smoothing, so that the M-step
        # is unchanged): P(w|z) and P(z|d) are those of the original counts
        exp = _count_exponent([data.max_count()])
        smoothing = float(self.smoothing)
        if exp > 0 and smoothing > 0:
            # tiny counts: no further than keeps the scaled smoothing in range (it then
            # dominates the statistics anyway)
            exp = min(exp, 1000 - int(np.frexp(smoothing)[1]))
        if exp:
            data.map_counts(lambda c: Counts(
                _ScaledCounts(c.csr, np.full(c.n_samples, exp)).csr, dtype))
            smoothing = float(np.ldexp(smoothing, exp))
        D, W = data.n_samples, data.n_features
        K = int(self.n_components)
        # theta and its copies (D x K), phi and the statistics (W x K); in memory, the
        # counts' CSC copy of the word pass and tempered EM's held-out split (no per-entry
        # responsibilities: the kernels form them on the fly; a chunk source holds one
        # chunk at a time)
        per_entry = 3 * (np.dtype(dtype).itemsize + 8) if getattr(data, "in_memory",
                                                                  False) else 0
        check_memory(np.dtype(dtype).itemsize * K * (3 * D + 4 * W) + per_entry * data.n_nonzero,
                     f"pLSA with {K} topics on {D} documents x {W} words",
                     "use fewer topics (n_components), fewer words or dtype=numpy.float32")
        if data.n_tokens <= 0:
            raise ValueError("X contains no counts: every document is empty")
        rng = check_random_state(self.random_state)
        theta, phi = self._initial(rng, data, K, dtype)
        if self.learning_method == "online":
            self._stepwise = None
            phi, history, done, converged = self._online(data, phi, nt, smoothing, D)
            theta = self._fold_in_blocks(data, phi, nt)
            self._set_fitted(theta, phi, history, 1.0, done, converged, exp)
            return self
        tempered = asked or (auto and self.learning_method == "batch"
                             and isinstance(data, Blocks) and data.in_memory)
        if tempered:
            theta, phi, beta = self._temper(data.whole, theta, phi, rng, nt, smoothing)
        else:
            beta = 1.0
        if not isinstance(data, Blocks):
            data.set_state(theta)           # the blocks' P(z|d) go to their workers
            theta = None
        theta, phi, history, done, converged = self._em(data, theta, phi, beta, nt,
                                                        int(self.n_iter), smoothing, exp)
        if theta is None:
            theta = data.state_array(phi.dtype)
        self._set_fitted(theta, phi, history, beta, done, converged, exp)
        self.n_batch_iter_ = 0
        return self

    # ------------------------------------------------------------ online EM
    def _online(self, data, phi, nt, smoothing, total):
        """Stepwise EM passes over the minibatches (docs/scale.md, "Online EM")."""
        monitor = EMMonitor("PLSA", int(self.n_iter), self.tol, verbose=self.verbose,
                            label="online log-likelihood")
        for done in range(1, int(self.n_iter) + 1):
            loglik = 0.0
            for counts in data.minibatches(int(self.batch_size)):
                ll, phi = self._stepwise_update(counts, phi, nt, smoothing, total)
                loglik += ll
            if monitor.record(loglik, n_updates=done):
                break
        return phi, monitor.history, monitor.n_updates, monitor.finish()

    def _stepwise_update(self, counts, phi, nt, smoothing, total):
        """One minibatch: fold in its ``P(z|d)`` under ``phi``, blend its statistics of
        ``P(w|z)`` scaled to ``total`` documents into the running ones with step
        ``(learning_offset + t)^-learning_decay``, M-step.  Returns (log-likelihood, phi)."""
        theta = np.full((counts.n_samples, phi.shape[1]), 1.0 / phi.shape[1], dtype=phi.dtype)
        _docs_pass(counts, phi, None, theta, int(self.fold_in_iter), float(self.fold_in_tol),
                   nt)
        acc, loglik = block_step(counts, theta, phi, phi, nt)
        scale = float(total) / counts.n_samples
        state = getattr(self, "_stepwise", None)
        if state is None or state["stats"].shape != acc.shape:
            state = self._stepwise = {"stats": acc.astype(np.float64) * scale,
                                      "step": getattr(self, "n_batch_iter_", 0)}
        else:
            rho = minibatch_rho(state["step"], float(self.learning_offset),
                                float(self.learning_decay))
            state["stats"] *= 1.0 - rho
            state["stats"] += (rho * scale) * acc
        state["step"] += 1
        self.n_batch_iter_ = state["step"]
        return loglik, np.ascontiguousarray(self._m_step(state["stats"], smoothing),
                                            dtype=phi.dtype)

    def _fold_in_blocks(self, data, phi, nt):
        """``P(z|d)`` of every document of ``data`` under ``phi`` (folding-in)."""
        parts = []
        for counts in data():
            theta = np.full((counts.n_samples, phi.shape[1]), 1.0 / phi.shape[1],
                            dtype=phi.dtype)
            _docs_pass(counts, phi, None, theta, int(self.fold_in_iter),
                       float(self.fold_in_tol), nt)
            parts.append(theta)
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    def partial_fit(self, X, y=None):
        """One pass of stepwise (online) EM over ``X`` in minibatches of ``batch_size``.

        Each minibatch is folded in under the current ``P(w|z)``; its statistics, scaled
        to ``total_samples`` documents, are blended into the running ones with step
        ``(learning_offset + t)^-learning_decay`` (Cappe & Moulines 2009; docs/scale.md).
        ``doc_topic_`` holds the ``P(z|d)`` of the last call's documents.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or ChunkSource
        y : ignored

        Returns
        -------
        self
        """
        self._validate_params()
        first = not hasattr(self, "components_")
        nt = effective_n_threads(self.num_threads)
        dtype, n_features = minibatch_inputs(self, X, "components_")
        if not first and np.shape(self.components_)[0] != int(self.n_components):
            raise ValueError(f"n_components is {self.n_components} but the model has "
                             f"{np.shape(self.components_)[0]} topics: refit with fit")
        data = Blocks(X, lambda M, name, nf: check_document_lengths(Counts(
            M, dtype, n_features=n_features if nf is None else nf, name=name,
            owner=None if first else "PLSA"), name))
        if _count_exponent([data.max_count()]):
            raise ValueError("X has counts beyond 2**64 or below 2**-64: partial_fit needs "
                             "counts in range (fit rescales them)")
        if first:
            if data.n_tokens <= 0:
                raise ValueError("X contains no counts: every document is empty")
            K, W = int(self.n_components), data.n_features
            # P(w|z), its running statistics and the start's float64 copies (W x K each)
            check_memory(8 * K * 4 * W, f"pLSA with {K} topics over {W} words",
                         "use fewer topics (n_components) or fewer words")
            _, phi = self._initial(check_random_state(self.random_state), data, K, dtype)
            history = []
            self.n_batch_iter_ = 0
        else:
            phi = np.ascontiguousarray(np.asarray(self.components_).T)
            history = list(self.log_likelihood_)
        loglik = 0.0
        try:
            for counts in data.minibatches(int(self.batch_size)):
                ll, phi = self._stepwise_update(counts, phi, nt, float(self.smoothing),
                                                int(self.total_samples))
                loglik += ll
            theta = self._fold_in_blocks(data, phi, nt)
        except BaseException:
            self._stepwise = None   # the running statistics may be half updated
            raise
        history.append(loglik)
        self._set_fitted(theta, phi, history, 1.0, len(history), False)
        return self

    def _set_fitted(self, theta, phi, history, beta, done, converged, exp=0):
        self.components_ = np.ascontiguousarray(phi.T)
        self.doc_topic_ = theta
        # the log-likelihood is linear in the counts: back to the units of X
        self.log_likelihood_ = np.ldexp(np.asarray(history, dtype=np.float64), -exp)
        self.beta_ = float(beta)
        self.n_iter_ = int(done)
        self.converged_ = bool(converged)
        self.n_features_in_ = phi.shape[0]

    def _initial(self, rng, data, K, dtype):
        D, W = data.n_samples, data.n_features
        if isinstance(self.init, str):
            if self.init == "random":
                theta = rng.random((D, K)) + 1e-3
                phi = rng.random((W, K)) + 1e-3
            elif self.init == "docs":
                # P(w|z) from K random documents, smoothed with half an average document
                rows = rng.choice(D, size=K, replace=K > D)
                mean_doc = data.column_sums() / D
                phi = (data.rows(rows).toarray().T + 0.5 * mean_doc[:, None] + 1e-6)
                theta = np.ones((D, K))
        else:
            comp = np.asarray(self.init, dtype=np.float64)
            if comp.shape != (K, W):
                raise ValueError(f"init has shape {comp.shape}, expected {(K, W)}")
            if not np.isfinite(comp).all() or (comp < 0).any() or (comp.sum(axis=1) <= 0).any():
                raise ValueError("init must be finite, non-negative, with positive row sums")
            phi = comp.T.copy()
            theta = np.ones((D, K))
        theta /= theta.sum(axis=1, keepdims=True)
        phi /= phi.sum(axis=0, keepdims=True)
        return np.ascontiguousarray(theta, dtype=dtype), np.ascontiguousarray(phi, dtype=dtype)

    @staticmethod
    def _m_step(acc, smoothing):
        acc = acc.astype(np.float64) + smoothing
        totals = acc.sum(axis=0)
        totals[totals <= 0] = 1.0
        return acc / totals

    def _step(self, blocks, theta, phi, beta, nt, smoothing):
        """One EM iteration over ``blocks`` (a Blocks, a DaskBlocks or a Counts); returns
        (theta, phi, loglik at entry)."""
        phib = phi if beta == 1.0 else np.ascontiguousarray(phi ** beta, dtype=phi.dtype)
        if isinstance(blocks, DaskBlocks):     # distributed: theta stays on the workers
            acc, loglik = blocks.stateful_step(_distributed_step, (phi, phib))
        else:
            acc, loglik = None, 0.0
            for counts, theta_block in _with_rows(blocks, theta):
                acc_block, ll = block_step(counts, theta_block, phi, phib, nt)
                acc = acc_block if acc is None else acc.__iadd__(acc_block)
                loglik += ll
        new_phi = np.ascontiguousarray(self._m_step(acc, smoothing), dtype=phi.dtype)
        return theta, new_phi, loglik

    def _loglik(self, blocks, theta, phi, nt):
        if isinstance(blocks, DaskBlocks):
            return blocks.state_values(_distributed_loglik, phi)
        return sum(float(_docs_pass(counts, phi, None, theta_block.copy(), 0, 0.0, nt).sum())
                   for counts, theta_block in _with_rows(blocks, theta))

    def _em(self, counts, theta, phi, beta, nt, n_iter, smoothing, exp=0):
        """EM iterations; history[i] is the log-likelihood after i + 1 updates."""
        monitor = EMMonitor("PLSA", n_iter, self.tol, verbose=self.verbose)
        for it in range(n_iter):
            # the log-likelihood at entry is that of the parameters after `it` updates
            theta, phi, loglik_at_entry = self._step(counts, theta, phi, beta, nt, smoothing)
            if it > 0 and monitor.record(loglik_at_entry, n_updates=it):
                break
            if theta is None:       # distributed: P(z|d) stays on the workers
                continue
            # checkpoint for Ctrl-C: the next step updates theta in place, phi is new
            self._checkpoint(lambda th=theta.copy(), ph=phi, done=it + 1, hist=list(
                monitor.history): (self._set_fitted(th, ph, hist, beta, done, False, exp),
                                   f"the model after {done} EM updates")[1])
        done = it + 1
        history = monitor.history + [self._loglik(counts, theta, phi, nt)]
        _progress.report("PLSA", done, n_iter, history[-1])
        return theta, phi, history, done, monitor.finish()

    def _temper(self, counts, theta, phi, rng, nt, smoothing):
        """Tempered EM on a token split (docs/topics.md, "Tempered EM"): best model and beta."""
        X = counts.csr
        # binomial thinning of the whole tokens of every count (the fraction stays in
        # training); beyond 2**62 tokens, beyond the sampler, the expected share
        whole = np.floor(X.data.astype(np.float64))
        huge = whole > 2.0**62
        held = np.empty_like(whole)
        held[~huge] = rng.binomial(whole[~huge].astype(np.int64), self.holdout)
        held[huge] = np.floor(whole[huge] * self.holdout)
        held = held.astype(X.dtype)
        train = counts.csr.copy()
        train.data = (X.data - held).astype(X.dtype)
        test = counts.csr.copy()
        test.data = held
        train.eliminate_zeros()
        test.eliminate_zeros()
        train_counts, test_counts = Counts(train, X.dtype), Counts(test, X.dtype)

        def heldout(th, ph):
            return self._loglik(test_counts, th, ph, nt)

        best = (heldout(theta, phi), theta.copy(), phi.copy(), 1.0)
        beta = 1.0
        while beta >= self.beta_min:
            improved_here = False
            for _ in range(int(self.n_iter)):
                theta, phi, _ = self._step(train_counts, theta, phi, beta, nt, smoothing)
                score = heldout(theta, phi)
                if score > best[0] + self.tol * abs(best[0]):
                    best = (score, theta.copy(), phi.copy(), beta)
                    improved_here = True
                else:
                    break
            if self.verbose:
                print(f"[PLSA] beta {beta:.4f}: held-out log-likelihood {best[0]:.6e}", flush=True)
            if not improved_here and beta < 1.0:
                break
            theta, phi = best[1].copy(), best[2].copy()
            beta *= self.beta_step
        return best[1], best[2], best[3]

    # ------------------------------------------------------------ inference
    _inference_options = ("fold_in_iter", "fold_in_tol")

    def _check_fitted_state(self):
        """Fitted attributes consistent with each other (called by countgrid.io.load); the
        rows of ``components_`` (``P(w|z)``) and of ``doc_topic_`` (``P(z|d)``, an empty
        document's too) are distributions, as every EM update normalises them."""
        phi = fitted_distribution(self, "components_", axis=1, ndim=2)
        Z, W = phi.shape
        if Z < 1 or fitted_int(self, "n_features_in_", 1) != W:
            raise ValueError(f"components_ of shape {phi.shape} does not match "
                             f"n_features_in_ = {self.n_features_in_}")
        doc_topic = fitted_distribution(self, "doc_topic_", axis=1, ndim=2)
        if doc_topic.shape[1] != Z:
            raise ValueError(f"doc_topic_ has {doc_topic.shape[1]} topics, components_ {Z}")
        fitted_array(self, "log_likelihood_", ndim=1, finite=False)
        fitted_real(self, "beta_", 0, 1)
        fitted_int(self, "n_iter_", 0)
        if hasattr(self, "n_batch_iter_"):
            fitted_int(self, "n_batch_iter_", 0)
        fitted_bool(self, "converged_")

    def _fold_in(self, X):
        check_is_fitted(self, "components_")
        phi = np.ascontiguousarray(np.asarray(self.components_).T)
        counts = check_document_lengths(Counts(X, phi.dtype, n_features=self.n_features_in_,
                                       owner="PLSA"))
        nt = effective_n_threads(self.num_threads)
        exps = _row_exponents(counts.csr)
        work = _ScaledCounts(counts.csr, exps) if exps.any() else counts
        theta = np.full((counts.csr.shape[0], phi.shape[1]), 1.0 / phi.shape[1], dtype=phi.dtype)
        _docs_pass(work, phi, None, theta, int(self.fold_in_iter), float(self.fold_in_tol), nt)
        loglik = _docs_pass(work, phi, None, theta.copy(), 0, 0.0, nt)
        return theta, np.ldexp(loglik, -exps), counts

    def transform(self, X):
        """Topic mixtures ``P(z|d)`` of new documents by folding-in (docs/topics.md, "Folding-in").

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or dask array
            Non-negative counts; a dask array of row blocks is transformed on the
            dask.distributed cluster of the current client.

        Returns
        -------
        ndarray (dask array for a dask X) of shape (n_samples, n_components); rows sum
        to 1 (uniform for empty documents).
        """
        if is_dask_collection(X):
            check_is_fitted(self, "components_")
            return dask_transform(self, X, np.shape(self.components_)[0])
        return self._fold_in(X)[0]

    def score_samples(self, X):
        """``ell(d) = sum_w n(d,w) log sum_z P(z|d) P(w|z)`` after folding-in.

        ``P(z|d)`` is folded in from the same tokens that are then scored, so this is an
        in-sample fit, not a prediction: it keeps improving as the model overfits (more
        topics, less smoothing).  To compare models on held-out tokens use
        :func:`countgrid.metrics.completion_perplexity`.  The ``log P(d)`` term of
        Hofmann's likelihood is omitted (docs/topics.md, "Log-likelihood convention").

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative counts.

        Returns
        -------
        ndarray of shape (n_samples,), float64
            ``ell(d)`` of every document (0 for an empty one).
        """
        return self._fold_in(X)[1]

    def score(self, X, y=None):
        """Total log-likelihood of X after folding-in X itself (in-sample).

        The sum of :meth:`score_samples`: each document's ``P(z|d)`` is fitted to the
        tokens it is scored on, so ``exp(-score(X) / X.sum())`` is an optimistic
        perplexity (on validation documents of reuters_r8 and news20_full with
        ``smoothing=0.03``, 5-41 % below the held-out one, the more so the more topics
        and without tempering; with the defaults before issue 22, up to 91 % below on
        their test documents).
        For held-out perplexity by document completion, where the inference sees half
        of each document's tokens and the other half is scored, use
        :func:`countgrid.metrics.completion_perplexity` (docs/topics.md, "Held-out
        perplexity by document completion").

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative counts.
        y : ignored

        Returns
        -------
        float
            ``sum_d ell(d)``.
        """
        return float(np.sum(self.score_samples(X)))

    def n_parameters(self, n_samples):
        """Free parameters ``Z (W - 1) + D (Z - 1)`` of ``P(w|z)`` and ``P(z|d)``.

        Those the likelihood without ``log P(d)`` depends on (docs/topics.md, "BIC").

        Parameters
        ----------
        n_samples : int
            Number of documents ``D`` (each has its own ``P(z|d)``).

        Returns
        -------
        int
            The number ``k`` of free parameters.

        Raises
        ------
        NotFittedError
            Before ``fit`` (``Z`` and ``W`` are those of the fitted ``components_``).
        """
        check_is_fitted(self, "components_")
        if isinstance(n_samples, (bool, np.bool_)) or not isinstance(n_samples,
                                                                       (int, np.integer)):
            raise TypeError(f"n_samples must be an int (a number of documents), got "
                            f"{type(n_samples).__name__}")
        if n_samples < 0:
            raise ValueError(f"n_samples must be >= 0, got {n_samples}")
        K, W = np.shape(self.components_)
        return int(K * (W - 1) + int(n_samples) * (K - 1))

    def bic(self, X, n_obs="tokens"):
        """Bayesian information criterion ``-2 L + k log(n_obs)`` on X (docs/topics.md, "BIC").

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Usually the training counts.
        n_obs : {"tokens", "documents"}, default="tokens"
            Number of observations in the penalty: total counts, or documents.

        Returns
        -------
        float
            ``-2 L + k log(n_obs)`` with ``L`` the log-likelihood of X after folding-in
            (:meth:`score`) and ``k`` = :meth:`n_parameters` of X's documents; lower is
            better.

        Raises
        ------
        ValueError
            If ``n_obs`` is neither "tokens" nor "documents", or X holds none of them.
        """
        theta, loglik, counts = self._fold_in(X)
        if n_obs == "tokens":
            n = float(counts.lengths.sum())
        elif n_obs == "documents":
            n = float(counts.csr.shape[0])
        else:
            raise ValueError(f"n_obs must be 'tokens' or 'documents', got {n_obs!r}")
        if n <= 0:       # log(0): BIC is undefined without observations
            raise ValueError(f"X holds no {n_obs}: the BIC needs at least one observation")
        return float(-2.0 * loglik.sum() + self.n_parameters(counts.csr.shape[0]) * np.log(n))


def select_n_components_bic(X, candidates, n_obs="tokens", **params):
    """Fit a :class:`PLSA` per number of topics and keep the one with the lowest BIC.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    candidates : iterable of int
        Numbers of topics to try.
    n_obs : {"tokens", "documents"}
    **params
        Other :class:`PLSA` parameters.

    Returns
    -------
    best : PLSA
        The fitted model with the lowest BIC.
    table : dict
        ``{n_components: bic}`` for every candidate.
    """
    if n_obs not in ("tokens", "documents"):
        raise ValueError(f"n_obs must be 'tokens' or 'documents', got {n_obs!r}")
    if isinstance(candidates, (str, bytes)) or not hasattr(candidates, "__iter__"):
        raise TypeError(f"candidates must be an iterable of ints (numbers of topics), got "
                        f"{type(candidates).__name__}")
    candidates = list(candidates)
    if not candidates:
        raise ValueError("candidates is empty")
    table, best, best_bic = {}, None, np.inf
    for k in candidates:
        # PLSA's own checks name n_components for a non-integer or non-positive candidate
        model = PLSA(n_components=k, **params).fit(X)
        table[int(k)] = model.bic(X, n_obs=n_obs)
        if best is None or table[int(k)] < best_bic:
            best, best_bic = model, table[int(k)]
    return best, table
