"""Retrieval evaluation: recall-precision curves as in Gehler, Holub & Welling (ICML 2006).

Each query document ranks every corpus document by similarity of their codes
(latent coordinates, tf-idf vectors, ...); a retrieved document is relevant
iff it has the query's label.  Recall (eq. 11) and precision (eq. 12) after
retrieving 1, 2, 4, 8, ... documents are averaged over the queries (paper
section 3.2).
"""
from collections import namedtuple

import numpy as np
import scipy.sparse as sp

from countgrid._memory import check_memory
from countgrid._validation import asarray_or_sparse, check_matrix

__all__ = ["cosine_similarity", "precision_recall_curve_retrieval", "RetrievalCurve"]

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
