"""Evaluation measures: retrieval curves and held-out perplexity by document completion.

Retrieval (Gehler, Holub & Welling, ICML 2006): each query document ranks every corpus
document by similarity of their codes (latent coordinates, tf-idf vectors, ...); a
retrieved document is relevant iff it has the query's label.  Recall (eq. 11) and
precision (eq. 12) after retrieving 1, 2, 4, 8, ... documents are averaged over the
queries (paper section 3.2).

Document completion (Wallach, Murray, Salakhutdinov & Mimno, ICML 2009): each test
document's tokens are split at random into an observed and a held-out half; the model
infers the document from the observed half only and the held-out half is scored under
the resulting predictive distribution (:func:`completion_perplexity`,
:func:`completion_split`; docs/topics.md, "Held-out perplexity by document completion").

Topic coherence (Röder, Both & Hinneburg, WSDM 2015; Mimno et al., EMNLP 2011): how often
the top words of each topic (cell, region, hidden unit, map node) occur together in a
reference corpus, by UMass, UCI, NPMI and C_V as gensim's ``CoherenceModel`` computes them,
from co-occurrence counts made in C (:func:`topic_coherence`, :func:`topic_top_words`;
docs/diagnostics.md).
"""
import hashlib
import math
import warnings
from collections import namedtuple
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from countgrid._base import BaseEstimator
from countgrid._utils import coherence as _coherence
from countgrid._utils import diagnostics as _diag
from countgrid._utils.counts import Counts
from countgrid._utils.memory import check_memory
from countgrid._utils.param_validation import Interval, Options, validate_call_params
from countgrid._utils.results import ResultDict, TableResult
from countgrid._utils.threads import effective_n_threads, limit_blas_threads
from countgrid._utils.validation import (asarray_or_sparse, check_is_fitted, check_matrix,
                                   check_random_state)
from countgrid.exceptions import not_fitted_error
from countgrid.grid import CountingGrid, region_words, visit_posteriors
from countgrid.grid import regions as grid_regions
from countgrid.grid._torus import grid_size, window_sums
from countgrid.gtm import ZIPGTM
from countgrid.rap import RAP
from countgrid.topics import _wrappers
from countgrid.topics._plsa import PLSA

__all__ = ["cosine_similarity", "precision_recall_curve_retrieval", "RetrievalCurve",
           "completion_split", "completion_perplexity", "topic_coherence",
           "topic_top_words", "TopicCoherence", "topic_diagnostics", "TopicDiagnostics",
           "DIAGNOSTIC_COLUMNS"]

RetrievalCurve = namedtuple("RetrievalCurve", ["precision", "recall", "n_retrieved", "auc"])
RetrievalCurve.__doc__ = """Averaged recall-precision curve of a retrieval run.

Fields: ``precision`` and ``recall`` (ndarrays of shape (n_points,)), averaged
over the queries; ``n_retrieved`` (the cut-offs 1, 2, 4, ..., n_corpus);
``auc``, the area under precision as a function of recall (see
:func:`precision_recall_curve_retrieval`).
"""


def _pow2_rows(A):
    """Exponents ``e`` with ``2**e * max|row|`` in [0.5, 1) (0 for zero rows)."""
    if A.shape[1] == 0:
        return np.zeros(A.shape[0], dtype=np.int64)
    top = abs(A).max(axis=1)
    top = np.asarray(top.toarray() if sp.issparse(top) else top, dtype=np.float64).ravel()
    return -np.frexp(top)[1]


def _ldexp_rows(A, e):
    """``diag(2**e) A`` (exact unless entries leave the float range)."""
    if sp.issparse(A):
        out = A.copy()
        out.data = np.ldexp(out.data, np.repeat(e, np.diff(out.indptr)))
        return out
    return np.ldexp(A, e[:, None])


def _normalize_rows(A):
    """Rows scaled to unit Euclidean norm (zero rows stay 0).  Each row is first scaled by
    the power of two that brings its largest magnitude into [0.5, 1), so the norm neither
    overflows (entries up to the largest float) nor underflows (subnormal entries)."""
    A = _ldexp_rows(A, _pow2_rows(A))
    if sp.issparse(A):
        norms = np.sqrt(np.asarray(A.multiply(A).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sp.diags(1.0 / norms) @ A
    norms = np.linalg.norm(A, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return A / norms


def _dense(M):
    return M.toarray() if sp.issparse(M) else np.asarray(M)


def _ties_in_corpus_order(S, order, tol):
    """``order`` (each row of S sorted by decreasing value) with every run of values less
    than ``tol`` apart from the next put in corpus (column) order."""
    v = np.take_along_axis(S, order, axis=1)
    group = np.zeros(order.shape, dtype=np.int64)
    np.cumsum(v[:, :-1] - v[:, 1:] >= tol, axis=1, out=group[:, 1:])
    return np.take_along_axis(order, np.lexsort((order, group), axis=1), axis=1)


def cosine_similarity(A, B):
    """Cosine of the angle between every row of ``A`` and every row of ``B``.

    Rows of zeros have similarity 0 with everything.

    Parameters
    ----------
    A : {array-like, sparse matrix} of shape (n_a, n_dims)
        Finite values; dense or any scipy.sparse format (A and B may differ).
    B : {array-like, sparse matrix} of shape (n_b, n_dims)

    Returns
    -------
    S : ndarray of shape (n_a, n_b), float64
        Rows of any finite magnitude give the cosine of the rows rescaled to unit norm.
        Each row is first rescaled by the power of two that brings its largest magnitude
        into [0.5, 1) (exact), so scaling rows by powers of two changes no bit of ``S``;
        other scales round the rows themselves, which moves ``S`` by a few ulp (and rows
        scaled into the subnormal range, e.g. by 1e-320, lose bits).
    """
    A = check_matrix(asarray_or_sparse(A, "A"), "A", np.float64)
    B = check_matrix(asarray_or_sparse(B, "B"), "B", np.float64)
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"A has {A.shape[1]} columns and B has {B.shape[1]}")
    check_memory(A.shape[0] * B.shape[0] * 16, f"a {A.shape[0]} x {B.shape[0]} similarity "
                 "matrix", "compare fewer rows of A at a time")
    return _dense(_normalize_rows(A) @ _normalize_rows(B).T)


def precision_recall_curve_retrieval(query_codes, corpus_codes, query_labels, corpus_labels,
                                     metric="cosine", batch_size=256):
    """Averaged recall-precision curve of ranking a corpus for each query (paper §3.2).

    For every query, all corpus documents are ranked by decreasing similarity
    (ties broken by corpus order; for "cosine", similarities less than
    ``(n_dims + 4) 2**-50`` apart, the rounding error of a computed cosine, are
    ties); after retrieving ``k = 1, 2, 4, 8, ...``
    documents (and finally all of them),
    ``precision = #relevant retrieved / k`` (eq. 12) and
    ``recall = #relevant retrieved / #relevant in the corpus`` (eq. 11), where
    relevant means "same label as the query".  Both are averaged over the
    queries that have at least one relevant corpus document (the others are
    left out).  ``precision[0]`` is the 1-NN classification accuracy.

    The area under the curve (AUC) integrates the averaged precision over the
    averaged recall with the trapezoidal rule, from recall 0 (at the
    precision of the first point) to the recall of the last point (1).  A
    perfect ranking has AUC 1; a random one about the class prior.

    "cosine" is scale-free.  Each row is rescaled by the power of two that brings its
    largest magnitude into [0.5, 1) before its norm and products (no square overflows or
    underflows), so multiplying rows by powers of two (``2**1000``, ``2**-1060``, one per
    row, ...) leaves the curve bit-identical, as long as the scaled codes are exact (not
    subnormal with bits lost).  Any other positive scale rounds the codes themselves
    (by up to half an ulp each), which moves their cosines by a few ulp; such moves stay
    within the tie tolerance above, so the curve of ``codes * 1e300`` or ``codes * 3``
    equals that of ``codes`` unless two distinct cosines of one query lie within about
    that tolerance of each other.  Codes scaled into the subnormal range (below about
    ``2.2e-308``) lose bits (``1e-320`` keeps about 11 of 53): their curve is that of
    the rounded codes.

    Parameters
    ----------
    query_codes : {array-like, sparse matrix} of shape (n_queries, n_dims)
        Finite values; dense or any scipy.sparse format.
    corpus_codes : {array-like, sparse matrix} of shape (n_corpus, n_dims)
    query_labels : array-like of shape (n_queries,)
    corpus_labels : array-like of shape (n_corpus,)
        Labels comparable with the query labels.
    metric : {"cosine", "dot"}, default="cosine"
        Similarity of codes: cosine of the angle (the paper's) or inner product.  For
        "dot", codes whose products would overflow are rescaled by powers of two (a
        positive scale per query and one for the corpus, which leaves every ranking
        unchanged).
    batch_size : int, default=256
        Queries ranked at once (memory ``batch_size * n_corpus``).

    Returns
    -------
    RetrievalCurve
        Named tuple ``(precision, recall, n_retrieved, auc)``.

    Examples
    --------
    >>> import numpy as np
    >>> from countgrid.metrics import precision_recall_curve_retrieval
    >>> codes = np.eye(2)[[0, 0, 1, 1]]
    >>> curve = precision_recall_curve_retrieval(codes, codes, [0, 0, 1, 1], [0, 0, 1, 1])
    >>> curve.n_retrieved.tolist(), curve.precision.tolist()
    ([1, 2, 4], [1.0, 1.0, 0.5])
    """
    if not isinstance(metric, str) or metric not in ("cosine", "dot"):
        raise ValueError(f"metric must be 'cosine' or 'dot', got {metric!r}")
    if isinstance(batch_size, (bool, np.bool_)) or not isinstance(batch_size,
                                                                    (int, np.integer)):
        raise TypeError(f"batch_size must be a positive int, got {batch_size!r}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    Q = check_matrix(asarray_or_sparse(query_codes, "query_codes"), "query_codes", np.float64)
    C = check_matrix(asarray_or_sparse(corpus_codes, "corpus_codes"), "corpus_codes", np.float64)
    if Q.shape[1] != C.shape[1]:
        raise ValueError(f"query_codes has {Q.shape[1]} columns but corpus_codes has "
                         f"{C.shape[1]}")
    yq, yc = asarray_or_sparse(query_labels, "query_labels"), asarray_or_sparse(corpus_labels, "corpus_labels")
    if yq.ndim != 1 or yq.shape[0] != Q.shape[0]:
        raise ValueError(f"query_labels must have shape ({Q.shape[0]},), got {yq.shape}")
    if yc.ndim != 1 or yc.shape[0] != C.shape[0]:
        raise ValueError(f"corpus_labels must have shape ({C.shape[0]},), got {yc.shape}")
    if Q.shape[0] == 0 or C.shape[0] == 0:
        raise ValueError("query_codes and corpus_codes need at least one document each")
    batch_size = int(min(batch_size, Q.shape[0]))
    check_memory(batch_size * C.shape[0] * 64, f"ranking {batch_size} queries against "
                 f"{C.shape[0]} corpus documents", "use a smaller batch_size")
    tie = 0.0
    if metric == "cosine":
        Q, C = _normalize_rows(Q), _normalize_rows(C)
        # a computed cosine is within (n_dims + 2) 2**-52 of the cosine of its (rounded)
        # codes; rounding the codes (a scale that is not a power of two) moves it by a few
        # ulp more: cosines this close are ties, broken by corpus order as exact ties are
        tie = (Q.shape[1] + 4) * 2.0 ** -50
    else:
        eq, ec = _pow2_rows(Q), _pow2_rows(C)
        # |q . c| <= n_dims max|q| max|c|: rescale (exactly, by powers of two) only when
        # that bound could overflow, so that rankings of tiny products are kept too
        if C.shape[0] and Q.shape[1] and (-eq).max() + (-ec).max() + np.log2(Q.shape[1]) > 1000:
            Q, C = _ldexp_rows(Q, eq), _ldexp_rows(C, np.full(C.shape[0], ec.min()))
    n_c = C.shape[0]
    ks = [1]
    while ks[-1] * 2 < n_c:
        ks.append(ks[-1] * 2)
    if ks[-1] != n_c:
        ks.append(n_c)
    ks = np.asarray(ks, dtype=np.int64)
    try:
        _, codes = np.unique(np.concatenate([yq, yc]), return_inverse=True)
    except TypeError as exc:
        raise TypeError(f"query_labels and corpus_labels must hold comparable labels: "
                        f"{exc}") from None
    codes = codes.ravel()
    cq, cc = codes[:yq.shape[0]], codes[yq.shape[0]:]
    n_rel_class = np.bincount(cc, minlength=codes.max() + 1)
    prec_sum = np.zeros(ks.shape[0])
    rec_sum = np.zeros(ks.shape[0])
    n_used = 0
    CT = C.T
    for q0 in range(0, Q.shape[0], batch_size):
        q1 = min(Q.shape[0], q0 + batch_size)
        S = _dense(Q[q0:q1] @ CT)
        order = np.argsort(-S, axis=1, kind="stable")
        if tie:
            order = _ties_in_corpus_order(S, order, tie)
        rel = cc[order] == cq[q0:q1, None]
        hits = np.cumsum(rel, axis=1)[:, ks - 1]
        n_rel = n_rel_class[cq[q0:q1]]
        keep = n_rel > 0
        prec_sum += (hits[keep] / ks).sum(axis=0)
        rec_sum += (hits[keep] / n_rel[keep, None]).sum(axis=0)
        n_used += int(keep.sum())
    if n_used == 0:
        raise ValueError("no query has a relevant document: no label of query_labels occurs in "
                         "corpus_labels")
    precision, recall = prec_sum / n_used, rec_sum / n_used
    r = np.concatenate([[0.0], recall])
    p = np.concatenate([[precision[0]], precision])
    auc = float(np.sum(np.diff(r) * (p[1:] + p[:-1]) / 2.0))
    return RetrievalCurve(precision, recall, ks, auc)


# ---------------------------------------------------------------- document completion

#: Documents of this many tokens or more cannot be split (numpy's hypergeometric sampler
#: takes fewer than 10**9 items of each kind).
_MAX_COMPLETION_TOKENS = 10**9


def _completion_counts(X, n_features=None, owner=None):
    """``X`` validated as integer counts (CSR float64): tokens are what is split."""
    counts = Counts(X, np.float64, n_features=n_features, name="X", owner=owner)
    data = counts.csr.data
    frac = data != np.floor(data)
    if frac.any():
        raise ValueError(f"X must hold integer counts (document completion splits tokens), "
                         f"found {data[np.argmax(frac)]!r}")
    longest = float(counts.lengths.max()) if counts.n_samples else 0.0
    if longest >= _MAX_COMPLETION_TOKENS:
        raise ValueError(f"X has a document of {longest:.4g} tokens: document completion "
                         f"splits documents of fewer than 10**9 tokens")
    return counts


def _split_held_out(csr, rng):
    """Held-out token counts, aligned with ``csr.data`` (int64): ``floor(n/2)`` of each
    document's ``n`` tokens, drawn without replacement (the sequential multivariate
    hypergeometric over the document's words in index order).  Documents are visited in
    the order of a hash of their content (ties: row order) and draw from one stream, one
    word slot at a time across documents, so that permuting the rows permutes the split."""
    indptr = np.asarray(csr.indptr, dtype=np.int64)
    indices = np.asarray(csr.indices, dtype=np.int64)
    data = csr.data.astype(np.int64)
    n_docs = indptr.size - 1
    keys = np.empty(n_docs, dtype=np.uint64)
    for d in range(n_docs):
        h = hashlib.blake2b(digest_size=8)
        h.update(indices[indptr[d]:indptr[d + 1]].tobytes())
        h.update(data[indptr[d]:indptr[d + 1]].tobytes())
        keys[d] = int.from_bytes(h.digest(), "little")
    order = np.argsort(keys, kind="stable")
    start = indptr[:-1][order]
    nnz = np.diff(indptr)[order]
    left = np.zeros(n_docs, dtype=np.int64)
    nonempty = np.diff(indptr) > 0
    if data.size:
        left[nonempty] = np.add.reduceat(data, indptr[:-1][nonempty])
    left = left[order]                      # tokens of the words not visited yet
    need = left // 2                        # tokens still to hold out
    held = np.zeros(data.size, dtype=np.int64)
    active = np.flatnonzero(need > 0)
    j = 0
    while active.size:
        p = start[active] + j
        c = data[p]
        rest = left[active] - c
        x = rng.hypergeometric(c, rest, need[active])
        held[p] = x
        need[active] -= x
        left[active] = rest
        j += 1
        active = active[(need[active] > 0) & (nnz[active] > j)]
    return held


@validate_call_params({"random_state": ["random_state"]})
def completion_split(X, random_state=0):
    """Split each document's tokens into an observed and a held-out half.

    The held-out half of a document of ``n`` tokens is a uniformly random subset of
    ``floor(n / 2)`` of its tokens, drawn without replacement (tokens, not distinct
    words: a word counted ``c`` times can fall in both halves); the other
    ``ceil(n / 2)`` are observed.  A document of fewer than 2 tokens has nothing held out.
    Each document's split depends only on its content, ``random_state`` and the other
    documents' contents, not on the row order: permuting the rows of ``X`` permutes the
    rows of both halves.  This is the split of :func:`completion_perplexity`
    (docs/topics.md, "Held-out perplexity by document completion").

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Non-negative integer counts (any numeric dtype holding integers); documents of
        fewer than ``10**9`` tokens.
    random_state : None, int or numpy.random.Generator, default=0
        Seeds the split.  The same seed gives the same split, so that models compared
        with it are scored on the same tokens; the default is fixed for that reason.

    Returns
    -------
    X_observed, X_heldout : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        float64 integer counts with ``X_observed + X_heldout == X``.

    Raises
    ------
    ValueError
        If ``X`` holds negative, non-finite or non-integer values, or a document of
        ``10**9`` tokens or more.

    Examples
    --------
    >>> import numpy as np
    >>> from countgrid.metrics import completion_split
    >>> X = np.array([[4, 0, 2], [1, 0, 0]])
    >>> obs, held = completion_split(X, random_state=0)
    >>> held.sum(axis=1).A1.tolist(), bool(np.array_equal((obs + held).toarray(), X))
    ([3.0, 0.0], True)
    """
    counts = _completion_counts(X)
    return _halves(counts.csr, _split_held_out(counts.csr, check_random_state(random_state)))


def _halves(csr, held):
    held = held.astype(np.float64)
    shape = csr.shape
    heldout = sp.csr_matrix((held, csr.indices.copy(), csr.indptr.copy()), shape=shape)
    observed = sp.csr_matrix((csr.data - held, csr.indices.copy(), csr.indptr.copy()),
                             shape=shape)
    heldout.eliminate_zeros()
    observed.eliminate_zeros()
    return observed, heldout


def _row_blocks(n_rows, width):
    """Row blocks of about 4M entries of a (rows x width) array."""
    step = int(max(1, min(max(n_rows, 1), (1 << 22) // max(int(width), 1))))
    return [(r0, min(n_rows, r0 + step)) for r0 in range(0, n_rows, step)]


def _score_block(heldout, phi, theta, nt):
    """``sum_w n(d,w) log sum_k theta[d,k] phi[w,k]`` per row of ``heldout`` (the pLSA
    folding-in kernel with no update: its log-likelihood at entry)."""
    X = heldout
    data = X.data.astype(phi.dtype)
    indptr = np.asarray(X.indptr, dtype=np.int64)
    indices = np.asarray(X.indices, dtype=np.int64)
    theta = np.ascontiguousarray(theta, dtype=phi.dtype)
    loglik = np.empty(X.shape[0])
    _wrappers.plsa_docs(indptr, indices, data, phi, None, theta, 0, 0.0, loglik, nt)
    return loglik


def _model_threads(model):
    return effective_n_threads(getattr(model, "num_threads", None))


def _grid_scores(model, observed, heldout):
    """Held-out log-likelihood per row under ``sum_k q(k) h_k(w)``, ``q`` the grid's
    posterior (floored as in ``transform``) from the observed half."""
    check_is_fitted(model, "pi_")
    pi = model.pi_
    extent, W = tuple(np.shape(pi)[:-1]), np.shape(pi)[-1]
    L = grid_size(extent)
    dtype = pi.dtype if pi.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    check_memory(dtype.itemsize * W * L, f"the window histograms of a {L}-position grid "
                 f"over {W} words", "score a smaller grid")
    phi = np.ascontiguousarray(np.asarray(model.h_, dtype=dtype).reshape(L, W).T)
    nt = _model_threads(model)
    out = np.empty(observed.shape[0])

    def visit(t0, t1, q, _):
        out[t0:t1] = _score_block(heldout[t0:t1], phi, q, nt)

    visit_posteriors(model, observed, visit)
    return out


def _topic_word(model, n_features):
    """``(phi, is_plsa)``: P(w|z) word-major (n_features x K) from ``components_``."""
    if isinstance(model, PLSA):
        check_is_fitted(model, "components_")
        comp = np.asarray(model.components_)
        return np.ascontiguousarray(comp.T), True
    comp = getattr(model, "components_", None)
    if comp is None:
        raise not_fitted_error(f"model ({type(model).__name__}) has no components_: fit it "
                               f"first (document completion needs a topic-word model)")
    try:
        comp = np.asarray(comp, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"model.components_ must be an array of numbers: {exc}") from None
    if comp.ndim != 2 or comp.shape[0] < 1 or comp.shape[1] != n_features:
        raise ValueError(f"model.components_ must have shape (n_topics, {n_features}) "
                         f"(topics x the columns of X), got {comp.shape}")
    sums = comp.sum(axis=1) if np.isfinite(comp).all() else np.array([np.nan])
    if not np.isfinite(sums).all() or (comp < 0).any() or (sums <= 0).any():
        raise ValueError("model.components_ must be finite and non-negative with positive "
                         "row sums (unnormalised topic-word weights)")
    return np.ascontiguousarray((comp / sums[:, None]).T), False


def _topic_scores(model, observed, heldout):
    """Held-out log-likelihood per row under ``sum_z theta(z) phi(w|z)``, ``theta`` from
    ``model.transform`` of the observed half."""
    phi, own = _topic_word(model, observed.shape[1])
    K = phi.shape[1]
    nt = _model_threads(model) if own else effective_n_threads(None)
    out = np.empty(observed.shape[0])
    for r0, r1 in _row_blocks(observed.shape[0], K):
        theta = model.transform(observed[r0:r1])
        if not own:
            theta = _check_doc_topic(theta, r1 - r0, K)
        out[r0:r1] = _score_block(heldout[r0:r1], phi, theta, nt)
    return out


def _rap_scores(model, observed, heldout):
    """Held-out log-likelihood per row under the multinomial of RAP's Poisson rates at the
    mean-field hidden state of the observed half, ``softmax_w(a_w + sum_j W_wj E[h_j|x])``
    (eq. 1 with ``h`` replaced by ``E[h | x_observed]``, eq. 2)."""
    W = np.asarray(model.components_, dtype=np.float64)          # (K, V)
    a = np.asarray(model.intercept_visible_, dtype=np.float64)
    out = np.empty(observed.shape[0])
    for r0, r1 in _row_blocks(observed.shape[0], W.shape[1]):
        H = np.asarray(model.expected_hidden(observed[r0:r1]), dtype=np.float64)
        with limit_blas_threads(_model_threads(model)):
            eta = H @ W + a
        eta -= eta.max(axis=1, keepdims=True)
        log_p = eta - np.log(np.exp(eta).sum(axis=1, keepdims=True))
        held = heldout[r0:r1].tocoo()
        out[r0:r1] = np.bincount(held.row, weights=held.data * log_p[held.row, held.col],
                                 minlength=r1 - r0)
    return out


def _check_doc_topic(theta, n_rows, K):
    if sp.issparse(theta):
        theta = theta.toarray()
    try:
        theta = np.asarray(theta, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"model.transform must return an array of numbers: {exc}") from None
    if theta.shape != (n_rows, K):
        raise ValueError(f"model.transform returned shape {theta.shape} for {n_rows} "
                         f"documents, expected ({n_rows}, {K}) (documents x topics of "
                         f"components_)")
    sums = theta.sum(axis=1) if np.isfinite(theta).all() else np.array([np.nan])
    if not np.isfinite(sums).all() or (theta < 0).any() or (sums <= 0).any():
        raise ValueError("model.transform must return finite, non-negative document-topic "
                         "weights with positive row sums")
    return theta / sums[:, None]


@validate_call_params({"random_state": ["random_state"]})
def completion_perplexity(model, X, random_state=0):
    """Held-out perplexity of ``model`` on ``X`` by document completion.

    Each document's tokens are split by :func:`completion_split` (``floor(n/2)`` of its
    ``n`` tokens held out at random, the rest observed).  The model infers the document
    from the observed half only, the held-out half is scored under the predictive
    distribution, and

        perplexity = exp(- sum_d log P(held-out half of d | observed half) / N_held-out)

    over the documents of at least 2 tokens (the others have nothing held out and do
    not count).  Lower is better; a model predicting the uniform distribution scores
    ``n_features``.  Unlike :meth:`countgrid.PLSA.score`, which folds in the same tokens
    it scores, no held-out token is seen by the inference (Wallach et al., ICML 2009;
    docs/topics.md, "Held-out perplexity by document completion").

    Parameters
    ----------
    model : PLSA, CountingGrid, RAP or fitted topic-word model
        :class:`countgrid.PLSA`: ``P(z|d)`` by folding-in (``transform``) of the observed
        half, predictive ``sum_z P(z|d) P(w|z)``.  :class:`countgrid.CountingGrid`: the
        location posterior ``q(k)`` of the observed half (``transform``: floored and
        with the learned prior, as in learning), predictive ``sum_k q(k) h_k(w)`` (for a
        classifier built on a grid, pass its ``grid_``).  Any other fitted model with
        ``components_`` of shape (n_topics, n_features), non-negative topic-word weights
        normalised here per row to ``P(w|z)``, and ``transform(X)`` returning
        (n_samples, n_topics) non-negative document-topic weights, normalised here per
        row, e.g. scikit-learn's ``LatentDirichletAllocation``.
        :class:`countgrid.RAP`: the mean-field hidden state ``E[h | x]`` of the observed
        half (``expected_hidden``), predictive the multinomial of the Poisson rates at
        that state, ``softmax_w(a_w + sum_j W_wj E[h_j | x])`` (a plug-in: the
        harmonium's exact predictive sums over ``h``; docs/rap.md, "Held-out
        perplexity").
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Non-negative integer counts of the test documents (documents of fewer than
        ``10**9`` tokens).
    random_state : None, int or numpy.random.Generator, default=0
        Seeds the split; models scored with the same seed on the same ``X`` are scored
        on exactly the same tokens.

    Returns
    -------
    float
        The perplexity, ``>= 1``; ``inf`` when the model gives a held-out token
        probability 0.

    Raises
    ------
    TypeError
        If ``model`` is another countgrid estimator or has no ``transform``.
    NotFittedError
        If ``model`` is not fitted.
    ValueError
        If ``X`` is not integer counts over the model's features, or no document of
        ``X`` has 2 tokens or more; if an external model's ``components_`` or
        ``transform`` output is not as described.

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> from countgrid.metrics import completion_perplexity
    >>> rng = np.random.default_rng(0)
    >>> X = rng.poisson(2.0, size=(40, 10))
    >>> model = countgrid.PLSA(n_components=2, random_state=0).fit(X)
    >>> 1.0 <= completion_perplexity(model, X, random_state=0) < 20
    True
    """
    grid = isinstance(model, CountingGrid)
    rap = isinstance(model, RAP)
    if not (grid or rap) and (isinstance(model, BaseEstimator)
                              and not isinstance(model, PLSA)):
        raise TypeError(f"model must be a PLSA, a CountingGrid, a RAP or a topic-word model "
                        f"with components_ and transform; got {type(model).__name__}"
                        + (" (pass its grid_)" if hasattr(model, "grid_") else ""))
    if not callable(getattr(model, "transform", None)):
        raise TypeError(f"model must have a transform method (document-topic weights of "
                        f"new documents), got {type(model).__name__}")
    if grid:
        check_is_fitted(model, "pi_")
        n_features = int(np.shape(model.pi_)[-1])
    elif isinstance(model, (PLSA, RAP)):
        check_is_fitted(model, "components_")
        n_features = int(np.shape(model.components_)[1])
    else:
        comp = getattr(model, "components_", None)
        n_features = None if comp is None or np.ndim(comp) != 2 else int(np.shape(comp)[1])
        if comp is None:
            _topic_word(model, None)        # the NotFittedError
    counts = _completion_counts(X, n_features=n_features, owner=type(model).__name__)
    held = _split_held_out(counts.csr, check_random_state(random_state))
    observed, heldout = _halves(counts.csr, held)
    rows = np.flatnonzero(np.diff(heldout.indptr) > 0)
    if rows.size == 0:
        raise ValueError("X has no document of 2 tokens or more: document completion has "
                         "nothing to hold out")
    observed, heldout = observed[rows], heldout[rows]
    scores = (_grid_scores if grid else _rap_scores if rap else _topic_scores)(
        model, observed, heldout)
    total = math.fsum(scores.tolist())
    n_tokens = float(held.sum())
    with np.errstate(over="ignore"):
        return float(np.exp(-total / n_tokens))


# ---------------------------------------------------------------- topic coherence

class TopicCoherence(ResultDict):
    """The result of :func:`topic_coherence`: a dict whose keys are also attributes.

    Keys: ``per_topic`` (ndarray of shape (n_topics,), float64; NaN where the measure is
    undefined), ``mean`` (the mean of the defined topics' values, float; NaN when none is
    defined), ``undefined`` (ndarray of bool, the topics with a NaN), ``missing_words``
    (int64 indices of the top words that no reference document or window holds),
    ``top_words`` (ndarray (n_topics, n_top) of int64 word indices, best first),
    ``measure``, ``window`` (None: boolean documents), ``window_rule`` (None for boolean
    documents), ``epsilon``, ``gamma`` and ``n_documents`` (the reference's documents or
    windows, the denominator of every probability).
    """

    def __repr__(self):
        return (f"TopicCoherence(measure={self['measure']!r}, mean={self['mean']:.6g}, "
                f"n_topics={len(self['per_topic'])}, n_documents={self['n_documents']})")


def _feature_index(vocabulary, n_features=None):
    """{word: index} of a vocabulary (a sequence of str, one per column)."""
    if isinstance(vocabulary, (str, bytes)) or not hasattr(vocabulary, "__len__"):
        raise TypeError(f"vocabulary must be a sequence of str (one per column), got "
                        f"{type(vocabulary).__name__}")
    names = [str(w) for w in vocabulary]
    if n_features is not None and len(names) != n_features:
        raise ValueError(f"vocabulary has {len(names)} words for {n_features} columns")
    index = {w: i for i, w in enumerate(names)}
    if len(index) != len(names):
        raise ValueError("vocabulary holds a word twice")
    return index


def _rank_rows(weights, n_words, name):
    """The ``n_words`` largest entries of each row, best first (ties by column)."""
    W = _diag.topic_word_matrix(weights, name)
    if n_words > W.shape[1]:
        raise ValueError(f"n_words={n_words} exceeds the {W.shape[1]} words of {name}")
    out = np.empty((W.shape[0], n_words), dtype=np.int64)
    step = max(1, (1 << 22) // W.shape[1])
    for r0 in range(0, W.shape[0], step):
        out[r0:r0 + step] = np.argsort(-W[r0:r0 + step], axis=1, kind="stable")[:, :n_words]
    return out


def _names_to_indices(words, model):
    """Word names (a grid's top_words with a vocabulary) back to feature indices."""
    words = np.asarray(words)
    if words.dtype.kind in "iu":
        return words.astype(np.int64)
    index = _feature_index(model.feature_names_in_)
    return np.vectorize(index.__getitem__, otypes=[np.int64])(words)


@validate_call_params({"n_words": [Interval(Integral, 1, None)],
                       "weighting": [None, str, "array-like"]})
def topic_top_words(source, n_words=10, *, regions=None, weighting=None):
    """The top words of every topic of a fitted model or of a topic-word matrix.

    What a "topic" is and how its words are ranked, per model (best first, ties by feature
    index):

    * :class:`countgrid.PLSA`: each topic's words by ``P(w|z)`` (``components_``);
    * :class:`countgrid.CountingGrid`: each cell's words as
      :meth:`~countgrid.CountingGrid.top_words` ranks them (by default LDAvis' relevance),
      cells in C order (reshape to the grid's extent); with ``regions``, each region's
      words as :func:`countgrid.grid.region_words` ranks them;
    * :class:`countgrid.RAP`: each hidden unit's words by their weight ``W_ij``
      (``components_``: the log-rate the unit adds to the word);
    * :class:`countgrid.ZIPGTM`: each latent node's words by the expected count
      ``(1 - p_kj) lambda_kj`` (:meth:`~countgrid.ZIPGTM.rates` and
      :meth:`~countgrid.ZIPGTM.zero_probabilities`);
    * any other fitted model with ``components_`` of shape (n_topics, n_features), e.g.
      scikit-learn's ``LatentDirichletAllocation`` or ``NMF``: each row's largest weights;
    * a 2-D array of real weights (topics x words): each row's largest weights.

    Parameters
    ----------
    source : fitted model or array-like of shape (n_topics, n_features)
    n_words : int, default=10
        Top words per topic.
    regions : int or array-like of int, optional
        Counting grids only: a number of regions (:func:`countgrid.grid.regions`) or the
        region of every cell (shape ``extent``); their words replace the cells'.
    weighting : str or array-like, optional
        Counting grids only: how cells (regions) rank words, as in
        :meth:`~countgrid.CountingGrid.top_words` (default: its default, "relevance").

    Returns
    -------
    ndarray of shape (n_topics, n_words), int64
        Feature indices, best first.

    Raises
    ------
    TypeError
        If ``source`` is neither a model named above nor a matrix.
    NotFittedError
        If the model is not fitted.
    ValueError
        If ``n_words`` exceeds the number of words, or ``regions`` or ``weighting`` is
        given for a model that is not a counting grid.

    Examples
    --------
    >>> import numpy as np
    >>> from countgrid.metrics import topic_top_words
    >>> topic_top_words(np.array([[0.1, 0.5, 0.4], [0.7, 0.2, 0.1]]), n_words=2).tolist()
    [[1, 2], [0, 1]]
    """
    n_words = int(n_words)
    grid = isinstance(source, CountingGrid)
    if not grid and (regions is not None or weighting is not None):
        raise ValueError("regions and weighting apply to counting grids only (got a "
                         f"{type(source).__name__})")
    if grid:
        check_is_fitted(source, "pi_")
        n_features = int(np.shape(source.pi_)[-1])
        if n_words > n_features:
            raise ValueError(f"n_words={n_words} exceeds the grid's {n_features} words")
        kw = {} if weighting is None else {"weighting": weighting}
        if regions is None:
            words = source.top_words(n_words, **kw)
        else:
            labels = (grid_regions(source, int(regions))
                      if isinstance(regions, Integral) and not isinstance(regions, bool)
                      else regions)
            words = region_words(source, labels, n_words, **kw)
        return _names_to_indices(words, source).reshape(-1, n_words)
    if isinstance(source, ZIPGTM):
        check_is_fitted(source, "rate_coef_")
        return _rank_rows(source.rates() * (1.0 - source.zero_probabilities()), n_words,
                          "the ZIPGTM's expected counts")
    if isinstance(source, BaseEstimator) or hasattr(source, "fit"):
        if isinstance(source, BaseEstimator) and not isinstance(source, (PLSA, RAP)):
            raise TypeError(f"topic_top_words takes a PLSA, CountingGrid, RAP, ZIPGTM, a "
                            f"model with components_ or a topic-word matrix; got "
                            f"{type(source).__name__}"
                            + (" (pass its grid_)" if hasattr(source, "grid_") else ""))
        if isinstance(source, (PLSA, RAP)):
            check_is_fitted(source, "components_")
        comp = getattr(source, "components_", None)
        if comp is None:
            raise not_fitted_error(f"{type(source).__name__} has no components_: fit it "
                                   f"first (topic_top_words ranks the words of each row)")
        return _rank_rows(comp, n_words, f"{type(source).__name__}.components_")
    if sp.issparse(source):
        source = source.toarray()
    try:
        arr = np.asarray(source)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"source must be a fitted model or a topic-word matrix: {exc}") \
            from None
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"source must be a fitted model or a topic-word matrix of real "
                        f"numbers, got {type(source).__name__} of dtype {arr.dtype}")
    return _rank_rows(arr, n_words, "the topic-word matrix")


_MEASURE_NAMES = tuple(_coherence.MEASURES)


def _top_word_array(topics, n_words, vocabulary, n_features):
    """``topics`` as (n_topics, n_top) int64 word indices."""
    if isinstance(topics, BaseEstimator) or hasattr(topics, "components_") \
            or hasattr(topics, "fit"):
        return topic_top_words(topics, 10 if n_words is None else n_words)
    if sp.issparse(topics):
        raise TypeError("topics must be top words (an array of word indices or words), a "
                        "fitted model or a dense topic-word matrix, not a sparse matrix")
    try:
        arr = np.asarray(topics)
    except ValueError as exc:
        raise ValueError(f"topics must be rectangular (n_topics, n_top): {exc}") from None
    if arr.dtype.kind == "f":                # a topic-word weight matrix
        return topic_top_words(arr, 10 if n_words is None else n_words)
    if arr.ndim != 2 or arr.shape[0] < 1:
        raise ValueError(f"topics must have shape (n_topics, n_top) with at least one "
                         f"topic, got shape {arr.shape}")
    if arr.dtype.kind in "US" or (arr.dtype.kind == "O" and arr.size
                                  and all(isinstance(w, str) for w in arr.ravel())):
        if vocabulary is None:
            raise ValueError("topics holds words: give vocabulary (the feature names, one "
                             "per column) to map them to word indices")
        index = _feature_index(vocabulary, n_features)
        unknown = [str(w) for w in arr.ravel() if str(w) not in index]
        if unknown:
            raise ValueError(f"topics holds words that are not in vocabulary: "
                             f"{unknown[:5]}")
        arr = np.vectorize(lambda w: index[str(w)], otypes=[np.int64])(arr)
    elif arr.dtype.kind not in "iu":
        raise TypeError(f"topics must hold int word indices or str words, got dtype "
                        f"{arr.dtype}")
    arr = arr.astype(np.int64)
    if n_words is not None:
        if n_words > arr.shape[1]:
            raise ValueError(f"n_words={n_words} exceeds the {arr.shape[1]} top words given "
                             f"per topic")
        arr = arr[:, :n_words]
    if arr.min() < 0 or (n_features is not None and arr.max() >= n_features):
        bad = int(arr.min()) if arr.min() < 0 else int(arr.max())
        raise ValueError(f"topics holds the word index {bad}, outside [0, "
                         f"{n_features if n_features is not None else 'n_features'})")
    dup = np.sort(arr, axis=1)
    if (dup[:, 1:] == dup[:, :-1]).any():
        t = int(np.flatnonzero((dup[:, 1:] == dup[:, :-1]).any(axis=1))[0])
        raise ValueError(f"topic {t} lists a word twice: each topic's top words must be "
                         "distinct (a topic-word matrix of integer counts: pass it as floats)")
    return np.ascontiguousarray(arr)


def _owner_name(topics):
    """How X's feature-count message names what fixed the features."""
    if isinstance(topics, np.ndarray):
        return (f"topics (a float array, read as a topic-word weight matrix of "
                f"{topics.shape[1]} words)")
    return type(topics).__name__


def _model_features(topics):
    """``(n_features, vocabulary)`` that ``topics`` fixes: a fitted model's features and
    ``feature_names_in_``, a float topic-word matrix's columns; else None."""
    if sp.issparse(topics) or isinstance(topics, (list, tuple)):
        return None, None
    if isinstance(topics, np.ndarray):
        return (topics.shape[1] if topics.dtype.kind == "f" and topics.ndim == 2
                else None), None
    names = getattr(topics, "feature_names_in_", None)
    if isinstance(topics, CountingGrid) and hasattr(topics, "pi_"):
        return int(np.shape(topics.pi_)[-1]), names
    n = getattr(topics, "n_features_in_", None)
    if n is None and np.ndim(getattr(topics, "components_", None)) == 2:
        n = np.shape(topics.components_)[1]
    return (None if n is None else int(n)), names


@validate_call_params({
    "measure": [Options(*_MEASURE_NAMES)],
    "n_words": [None, Interval(Integral, 2, None)],
    "window": [None, Interval(Integral, 1, None)],
    "window_rule": [Options("boolean", "gensim")],
    "epsilon": [Interval(Real, 0, None, closed="neither")],
    "gamma": [Interval(Integral, 1, None)],
    "num_threads": ["num_threads"],
})
def topic_coherence(topics, X=None, *, texts=None, measure="c_npmi", n_words=None,
                    window=None, window_rule="boolean", vocabulary=None, epsilon=1e-12,
                    gamma=1, num_threads=None):
    """Coherence of the top words of every topic, on a reference corpus.

    The four steps of Röder, Both & Hinneburg (WSDM 2015), exactly as gensim's
    ``CoherenceModel`` takes them (docs/diagnostics.md): each topic's top words
    ``w_1..w_N`` (best first) are *segmented* into pairs, the pairs are *confirmed* with
    probabilities *estimated* from the reference, and the confirmations are *averaged*:

    ============  ==============================  ===========================================
    ``measure``   segments                        confirmation of a segment
    ============  ==============================  ===========================================
    "u_mass"      ``(w_i, w_j)``, ``j < i``       ``log((P(w_i, w_j) + eps) / P(w_j))``
                                                  (Mimno et al., EMNLP 2011)
    "c_uci"       ``(w_i, w_j)``, ``i != j``      PMI ``log((P(w_i, w_j) + eps) /
                                                  (P(w_i) P(w_j)))``
    "c_npmi"      ``(w_i, w_j)``, ``i != j``      NPMI ``PMI / -log(P(w_i, w_j) + eps)``
    "c_v"         ``(w_i, {w_1..w_N})``           cosine of the context vectors
                                                  ``v(W')_j = sum_{w in W'} NPMI(w, w_j)^gamma``
    ============  ==============================  ===========================================

    ``P(w)`` and ``P(w, w')`` are the fractions of the reference's boolean documents
    (``window=None``: a document holds a word when it has a non-zero count of it) or of its
    boolean sliding windows of ``window`` consecutive tokens (``texts`` needed) that hold
    the word(s).  The counts are made in C with OpenMP for the union of the top words only
    (integers: the result does not depend on ``num_threads``).  Higher is more coherent;
    NPMI and C_V lie in [-1, 1] (C_V in [0, 1] in practice), UMass and UCI are unbounded
    log-ratios.  The reference may be another corpus than the training one (UMass is
    usually computed on the training corpus, NPMI and C_V on a large external one).

    Parameters
    ----------
    topics : fitted model, array-like of shape (n_topics, n_top) or (n_topics, n_features)
        The top words of each topic: int word indices (columns of ``X``) or str words
        (with ``vocabulary``), best first, distinct within a topic; or a topic-word
        matrix of real weights (a float array) or a fitted model, whose ``n_words`` top
        words :func:`topic_top_words` finds (PLSA topics, counting-grid cells, RAP
        hidden units, ZIP-GTM nodes, any ``components_``; for a grid's regions pass
        ``topic_top_words(grid, n, regions=...)``).
    X : {array-like, sparse matrix} of shape (n_documents, n_features), optional
        The reference corpus as counts (boolean documents; float32, float64 or integers,
        dense or any scipy.sparse format).  Empty documents count in ``n_documents``.
    texts : sequence of sequences, optional
        The reference corpus as token sequences, instead of ``X``: each a sequence of int
        word indices (a negative index: a word outside the vocabulary, which keeps its
        place in the windows) or of str words (with ``vocabulary``; unknown words keep
        their place too).  Needed for ``window``; without it, each text is a boolean
        document.
    measure : {"c_npmi", "u_mass", "c_uci", "c_v"}, default="c_npmi"
    n_words : int >= 2, optional
        Top words per topic of a model or matrix (default 10); for given top words, the
        first ``n_words`` of each (default all).
    window : int >= 1, optional
        Boolean sliding windows of this many tokens over ``texts`` (a text shorter than
        the window is one window, as in gensim); None (default): boolean documents.
        gensim's defaults are 110 for C_V and 10 for NPMI and UCI (Röder et al.'s best).
    window_rule : {"boolean", "gensim"}, default="boolean"
        "boolean": a word is in a window when one of its tokens is (Röder et al.).
        "gensim": as gensim 4.x's ``WordOccurrenceAccumulator``, which drops a word when
        one of its tokens leaves the window even if another stays: it undercounts words
        repeated within a window; use it only to reproduce numbers computed with gensim.
    vocabulary : sequence of str, optional
        The word of every column, for str top words or str texts (default: a fitted
        model's ``feature_names_in_``).
    epsilon : float > 0, default=1e-12
        Added to the joint probability (gensim's and Röder et al.'s value; Mimno et al.
        add one document, ``epsilon = 1 / n_documents``).
    gamma : int >= 1, default=1
        C_V's exponent of the NPMI context vectors.
    num_threads : int, optional
        OpenMP threads of the counting (None: the OpenMP default, negative: all CPUs but
        ``-num_threads - 1``).

    Returns
    -------
    TopicCoherence
        A dict with attribute access: ``per_topic``, ``mean``, ``undefined``,
        ``missing_words``, ``top_words``, ``n_documents``, and the settings.

    Raises
    ------
    TypeError
        If ``topics``, ``X`` or ``texts`` is of the wrong kind.
    ValueError
        If neither or both of ``X`` and ``texts`` are given, ``window`` without ``texts``,
        a word index outside the vocabulary, a topic listing a word twice, or fewer than
        two top words.

    Warns
    -----
    RuntimeWarning
        When top words never occur in the reference: NPMI, UCI and C_V are then undefined
        for their topics (NaN in ``per_topic``, left out of ``mean``); UMass keeps
        gensim's rule (a pair whose conditioning word ``w_j`` never occurs adds 0).

    Examples
    --------
    >>> import numpy as np
    >>> from countgrid.metrics import topic_coherence
    >>> X = np.array([[1, 1, 0, 0], [2, 1, 0, 0], [0, 0, 1, 1], [0, 1, 1, 1]])
    >>> result = topic_coherence([[0, 1], [2, 3]], X, measure="c_npmi")
    >>> np.round(result.per_topic, 3).tolist(), result.n_documents
    ([0.415, 1.0], 4)
    """
    if (X is None) == (texts is None):
        raise ValueError("give the reference corpus as X (counts) or as texts (token "
                         "sequences), one of the two")
    if window is not None and texts is None:
        raise ValueError("window needs texts: sliding windows run over token sequences "
                         "(X has no token order)")
    n_features, model_vocabulary = _model_features(topics)
    if vocabulary is None:
        vocabulary = model_vocabulary
    counts = None
    if X is not None:
        counts = Counts(X, np.float32 if getattr(X, "dtype", None) == np.float32
                        else np.float64, n_features=n_features, name="X",
                        owner=_owner_name(topics) if n_features is not None else None)
        n_features = counts.n_features
    elif n_features is None and vocabulary is not None:
        n_features = len(vocabulary)
    top = _top_word_array(topics, n_words, vocabulary, n_features)
    if top.shape[1] < 2:
        raise ValueError(f"coherence needs at least 2 top words per topic, got "
                         f"{top.shape[1]}")
    nt = effective_n_threads(num_threads)
    words, top_c = _coherence.relevant_words(top)
    if counts is not None:
        C, n_docs = _coherence.document_counts(counts.csr, words, nt)
    else:
        offsets, tokens = _coherence.text_tokens(texts, words, vocabulary, n_features)
        C, n_docs = _coherence.window_counts(offsets, tokens, words.size, window,
                                             1 if window_rule == "gensim" else 0, nt)
    if n_docs == 0:
        raise ValueError("the reference corpus has no documents")
    values, undefined = _coherence.confirm(C, n_docs, top_c, measure, float(epsilon),
                                           int(gamma))
    missing = words[np.diagonal(C) == 0]
    if missing.size:
        what = ("their topics' values are NaN and left out of the mean"
                if measure != "u_mass" else
                "UMass adds 0 for each pair conditioned on one of them (gensim's rule)")
        n_hit = int(np.isin(top, missing).any(axis=1).sum())
        warnings.warn(f"{missing.size} top word(s) never occur in the reference corpus "
                      f"(word indices {missing[:5].tolist()}"
                      f"{'...' if missing.size > 5 else ''}, in {n_hit} of {len(values)} "
                      f"topic(s)): {what}", RuntimeWarning, stacklevel=3)
    elif undefined.any():
        warnings.warn(f"{int(undefined.sum())} of {len(values)} topic(s) have an undefined "
                      f"{measure} (a context vector of norm 0): NaN, left out of the mean",
                      RuntimeWarning, stacklevel=3)
    defined = values[~undefined]
    mean = float(np.mean(defined)) if defined.size else float("nan")
    return TopicCoherence(per_topic=values, mean=mean, undefined=undefined,
                          missing_words=missing, top_words=top, measure=measure,
                          window=None if window is None else int(window),
                          window_rule=None if window is None else window_rule,
                          epsilon=float(epsilon), gamma=int(gamma), n_documents=int(n_docs))


# ---------------------------------------------------------------- the diagnostics table

#: The per-topic columns of :func:`topic_diagnostics`, in table order.
DIAGNOSTIC_COLUMNS = ("tokens", "share", "rank1_documents", "document_entropy",
                      "effective_words", "uniform_distance", "corpus_distance",
                      "exclusivity", "frex", "coherence")


class TopicDiagnostics(TableResult):
    """The result of :func:`topic_diagnostics`: a dict whose keys are also attributes.

    Keys: one array of shape (n_topics,) per column of ``DIAGNOSTIC_COLUMNS``
    (``tokens``, ``share``, ``rank1_documents``, ``document_entropy``, ``effective_words``,
    ``uniform_distance``, ``corpus_distance``, ``exclusivity``, ``frex``, ``coherence``),
    ``top_words`` (int64 word indices, shape (n_topics, n_words), best first), ``topics``
    (what a row is: "topic", "cell", "region", "unit" or "node"), ``coherence_measure``,
    ``frex_weight``, ``n_documents`` and ``n_tokens``.  ``table()`` gives the columns,
    ``to_frame()`` a pandas DataFrame indexed by topic.
    """

    _frame_index = "topic"

    def __repr__(self):
        return (f"TopicDiagnostics(n_topics={len(self['tokens'])}, "
                f"topics={self['topics']!r}, n_documents={self['n_documents']})")

    def table(self, vocabulary=None):
        """The diagnostics as columns, one row per topic.

        Parameters
        ----------
        vocabulary : sequence of str, optional
            The word of every column of the documents: the top words are given as words
            (default: as word indices).

        Returns
        -------
        dict
            ``"topic"`` (0, 1, ...), the columns of ``DIAGNOSTIC_COLUMNS``, and
            ``"top_words"`` (one space-separated str per topic).
        """
        top = self["top_words"]
        if vocabulary is not None:
            names = np.asarray([str(w) for w in vocabulary], dtype=object)
            if top.size and top.max() >= names.size:
                raise ValueError(f"vocabulary has {names.size} words; the top words index "
                                 f"word {int(top.max())}")
            words = [" ".join(names[row]) for row in top]
        else:
            words = [" ".join(map(str, row)) for row in top]
        out = {"topic": np.arange(top.shape[0])}
        out.update((c, self[c].copy()) for c in DIAGNOSTIC_COLUMNS)
        out["top_words"] = words
        return out


def _grid_cell_weights(grid, labels):
    """``(phi, visit)`` of a counting grid's cells (``labels=None``) or regions: each
    cell's ``pi_`` (a region's mean over its cells, as region_words ranks it) and a visitor
    of the documents' share of tokens drawn from each, ``sum_k q(k) [c in W_k] / |W|``
    (each token picks a cell of its window uniformly, paper eq. 1)."""
    pi = np.asarray(grid.pi_, dtype=np.float64)
    extent, V = tuple(pi.shape[:-1]), pi.shape[-1]
    window = grid._fitted_grid()[1]
    phi = pi.reshape(-1, V)
    indicator = None
    if labels is not None:
        flat = np.asarray(labels).ravel().astype(np.int64)
        counts = np.bincount(flat)
        indicator = sp.csr_matrix((np.ones(flat.size), (np.arange(flat.size), flat)),
                                  shape=(flat.size, counts.size))
        phi = np.asarray((indicator.T @ phi) / counts[:, None])
    nt = _model_threads(grid)
    scale = 1.0 / grid_size(window)

    def visit(X, add):
        lengths = np.asarray(X.sum(axis=1)).ravel()

        def block(t0, t1, q, _):
            cells = window_sums(q, extent, window, backward=True, scale=scale,
                                num_threads=nt)
            add(cells if indicator is None else cells @ indicator, lengths[t0:t1])
        visit_posteriors(grid, X, block)

    return phi, visit


def _rows_visitor(transform, n_topics):
    """A visitor of ``transform`` (documents -> non-negative topic weights) by row blocks."""
    def visit(X, add):
        lengths = np.asarray(X.sum(axis=1)).ravel()
        for r0, r1 in _row_blocks(X.shape[0], n_topics):
            add(_check_doc_topic(transform(X[r0:r1]), r1 - r0, n_topics), lengths[r0:r1])
    return visit


def _diagnostic_source(model, n_words, regions, n_features):
    """``(phi, top, visit, kind)`` of a fitted model: its topics' word distributions
    (topics x words, rows summing to 1), their top words, a visitor of the documents'
    topic weights, and what a topic is."""
    if isinstance(model, CountingGrid):
        check_is_fitted(model, "pi_")
        labels = None
        if regions is not None:
            labels = (grid_regions(model, int(regions))
                      if isinstance(regions, Integral) and not isinstance(regions, bool)
                      else np.asarray(regions))
        top = topic_top_words(model, n_words, regions=labels)
        phi, visit = _grid_cell_weights(model, labels)
        return phi, top, visit, "cell" if labels is None else "region"
    if regions is not None:
        raise ValueError(f"regions apply to counting grids only (got a "
                         f"{type(model).__name__})")
    if isinstance(model, BaseEstimator) and not isinstance(model, (PLSA, RAP, ZIPGTM)):
        raise TypeError(f"topic_diagnostics takes a PLSA, CountingGrid, RAP, ZIPGTM, a model "
                        f"with components_ and transform or a topic-word matrix; got "
                        f"{type(model).__name__}"
                        + (" (pass its grid_)" if hasattr(model, "grid_") else ""))
    top = topic_top_words(model, n_words)
    if isinstance(model, RAP):
        W, a, _ = model.canonical_parameters()
        eta = a[None, :] + W.T                   # log-rates with one unit on (eq. 1)
        phi = np.exp(eta - eta.max(axis=1, keepdims=True))
        phi = _diag.normalized_rows(phi, "the RAP's unit word distributions")
        return phi, top, _rows_visitor(model.expected_hidden, phi.shape[0]), "unit"
    if isinstance(model, ZIPGTM):
        phi = _diag.normalized_rows(model.rates() * (1.0 - model.zero_probabilities()),
                                    "the ZIPGTM's expected counts")
        return phi, top, _rows_visitor(model.predict_proba, phi.shape[0]), "node"
    phi = _diag.normalized_rows(model.components_, f"{type(model).__name__}.components_")
    if phi.shape[1] != n_features:
        raise ValueError(f"{type(model).__name__}.components_ has {phi.shape[1]} words; X "
                         f"has {n_features} columns")
    if not callable(getattr(model, "transform", None)):
        raise TypeError(f"model must have a transform method (document-topic weights), got "
                        f"{type(model).__name__}")
    return phi, top, _rows_visitor(model.transform, phi.shape[0]), "topic"


@validate_call_params({
    "n_words": [Interval(Integral, 2, None)],
    "coherence": [Options(*_MEASURE_NAMES)],
    "frex_weight": [Interval(Real, 0, 1, closed="neither")],
    "num_threads": ["num_threads"],
})
def topic_diagnostics(model, X, *, n_words=10, regions=None, doc_topic=None,
                      coherence="u_mass", frex_weight=0.7, num_threads=None):
    """MALLET-style diagnostics of every topic (cell, region, unit, node) on documents.

    One row per topic, from its word distribution ``phi_k`` (``sum_w phi_kw = 1``), its
    ``n_words`` top words and the documents' topic weights ``theta_dk`` (normalised per
    document), with ``n_d`` a document's tokens and ``a_dk = n_d theta_dk``
    (docs/diagnostics.md, "The diagnostics table"):

    ====================  ===================================================================
    ``tokens``            expected tokens of the topic, ``T_k = sum_d a_dk`` (MALLET's tokens)
    ``share``             ``T_k / sum_k T_k``
    ``rank1_documents``   documents whose largest weight is the topic's (MALLET's rank_1_docs)
    ``document_entropy``  entropy (nats) of ``a_dk / T_k`` over documents: low when a few
                          documents hold the topic
    ``effective_words``   ``1 / sum_w phi_kw^2`` (MALLET's eff_num_words)
    ``uniform_distance``  ``KL(phi_k || uniform)`` (MALLET's uniform_dist)
    ``corpus_distance``   ``KL(phi_k || p)``, ``p`` the word distribution of ``X``
                          (MALLET's corpus_dist); ``inf`` when the topic uses a word ``X``
                          never does
    ``exclusivity``       mean over the top words of ``phi_kw / sum_k' phi_k'w`` (MALLET's)
    ``frex``              mean over the top words of FREX, the weighted harmonic mean of the
                          ranks (empirical CDFs within the topic) of exclusivity and of
                          ``phi_kw`` (stm's ``exclusivity(M, frexw)`` divided by ``M``)
    ``coherence``         :func:`topic_coherence` of the top words on ``X``
    ====================  ===================================================================

    What a topic, its word distribution and the documents' weights are, per model:

    * :class:`countgrid.PLSA` and any fitted model with ``components_`` and ``transform``
      (e.g. scikit-learn's ``LatentDirichletAllocation``): a topic, ``components_``
      normalised per row, ``transform(X)`` normalised per row;
    * :class:`countgrid.CountingGrid`: a cell, its ``pi_``, and the share of a document's
      tokens drawn from the cell, ``sum_k q(k) [c in W_k] / |W|`` (each token of a
      document at window ``k`` picks a cell of the window uniformly); with ``regions``, a
      region, the mean ``pi_`` of its cells (as :func:`countgrid.grid.region_words`) and
      the sum of its cells' shares;
    * :class:`countgrid.RAP`: a hidden unit, the multinomial of the Poisson rates with
      that unit alone on (``softmax(a + W_j)``, eq. 1), and the document's expected
      hidden activities ``E[h | x]`` normalised per document (shares of activity: a
      harmonium's units are not a mixture, read the document columns as such);
    * :class:`countgrid.ZIPGTM`: a latent node, its expected counts ``(1 - p_k)
      lambda_k`` normalised, and the responsibilities (``predict_proba``);
    * a topic-word matrix (a 2-D float array): its rows normalised, and ``doc_topic``.

    Parameters
    ----------
    model : fitted model or array-like of shape (n_topics, n_features)
    X : {array-like, sparse matrix} of shape (n_documents, n_features)
        The documents (counts): usually those the model was fitted on.
    n_words : int >= 2, default=10
        Top words per topic (:func:`topic_top_words`: the model's own ranking), for
        exclusivity, FREX and coherence.
    regions : int or array-like of int, optional
        Counting grids only: a number of regions (:func:`countgrid.grid.regions`) or the
        region of every cell; one row per region instead of per cell.
    doc_topic : array-like of shape (n_documents, n_topics), optional
        For a topic-word matrix only (and needed there): the documents' topic weights.
    coherence : {"u_mass", "c_npmi", "c_uci", "c_v"}, default="u_mass"
        The coherence measure, on the documents of ``X`` as boolean documents (UMass, as
        MALLET and stm report; gensim's ``epsilon``).
    frex_weight : float in (0, 1), default=0.7
        FREX's weight on exclusivity (stm's ``frexw`` of ``exclusivity``).
    num_threads : int, optional
        Threads of the coherence counts (None: the OpenMP default).

    Returns
    -------
    TopicDiagnostics

    Raises
    ------
    TypeError
        If ``model`` is neither a model named above nor a matrix.
    NotFittedError
        If the model is not fitted.
    ValueError
        If ``X`` is not counts over the model's words, ``regions`` is given for a model
        that is not a grid, ``doc_topic`` is missing or misshapen for a matrix (or given
        for a model), or ``n_words`` exceeds the words.

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> from countgrid.metrics import topic_diagnostics
    >>> X = np.random.default_rng(0).poisson(1.0, size=(60, 12))
    >>> model = countgrid.PLSA(n_components=3, random_state=0).fit(X)
    >>> d = topic_diagnostics(model, X, n_words=4)
    >>> d.tokens.shape, bool(np.isclose(d.tokens.sum(), X.sum()))
    ((3,), True)
    """
    n_words = int(n_words)
    n_features, _ = _model_features(model)
    counts = Counts(X, np.float64, n_features=n_features, name="X",
                    owner=_owner_name(model) if n_features is not None else None)
    csr = counts.csr
    is_matrix = not (isinstance(model, BaseEstimator) or hasattr(model, "fit")
                     or hasattr(model, "components_"))
    if is_matrix:
        if regions is not None:
            raise ValueError("regions apply to counting grids only (got a topic-word matrix)")
        if doc_topic is None:
            raise ValueError("doc_topic is needed with a topic-word matrix: the documents' "
                             "topic weights (n_documents x n_topics)")
        if sp.issparse(model):
            model = model.toarray()
        phi = _diag.normalized_rows(model, "the topic-word matrix")
        if phi.shape[1] != counts.n_features:
            raise ValueError(f"the topic-word matrix has {phi.shape[1]} words; X has "
                             f"{counts.n_features} columns")
        if n_words > phi.shape[1]:
            raise ValueError(f"n_words={n_words} exceeds the {phi.shape[1]} words of the "
                             f"topic-word matrix")
        top = _rank_rows(phi, n_words, "the topic-word matrix")
        theta = _check_doc_topic(doc_topic, counts.n_samples, phi.shape[0])

        def visit(Xc, add):
            add(theta, np.asarray(Xc.sum(axis=1)).ravel())
        kind = "topic"
    else:
        if doc_topic is not None:
            raise ValueError("doc_topic is for a topic-word matrix; a model gives its "
                             "documents' weights itself")
        phi, top, visit, kind = _diagnostic_source(model, n_words, regions,
                                                   counts.n_features)
    check_memory(8 * 4 * phi.size, f"the word statistics of {phi.shape[0]} topics x "
                 f"{phi.shape[1]} words", "use regions of a grid, or fewer words")
    totals = _diag.DocumentTotals(phi.shape[0])
    visit(csr, totals.add)
    out = totals.result()
    word_counts = np.asarray(csr.sum(axis=0)).ravel()
    if not word_counts.sum() > 0:
        raise ValueError("X has no tokens")
    out.update(_diag.word_statistics(phi, word_counts / word_counts.sum()))
    share = _diag.shares(phi)
    out["exclusivity"] = _diag.exclusivity(share, top)
    out["frex"] = _diag.frex(phi, share, top, float(frex_weight))
    out["coherence"] = topic_coherence(top, csr, measure=coherence,
                                       num_threads=num_threads).per_topic
    return TopicDiagnostics(out, top_words=top, topics=kind, coherence_measure=coherence,
                            frex_weight=float(frex_weight), n_documents=counts.n_samples,
                            n_tokens=float(word_counts.sum()))
