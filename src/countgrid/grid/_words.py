"""Where words live on a fitted counting grid: a word's map, its top cells, each cell's
top words and a document's window centre (the helpers behind CountingGrid.word_map,
word_cells, top_words and positions(anchor="center"); docs/counting_grids.md, "Working
with a fitted grid").

This is the one home of the rule that chooses the words a cell shows (docs/counting_grids.md,
"Which words a cell shows"): every picture, the map, ``countgrid top-words`` and
:meth:`CountingGrid.top_words` rank the words of cell ``i`` by ``pi_i(w) * f(w)`` with the
per-word factor ``f`` of :func:`word_weights`.  The default, "relevance", is LDAvis'
relevance (Sievert & Shirley 2014)
``r_i(w) = lam log pi_i(w) + (1 - lam) log(pi_i(w) / p(w))`` with ``p(w)`` the grid's
average word distribution (:func:`word_marginal`) and ``lam`` = :data:`RELEVANCE_LAMBDA`:
``exp(r_i(w)) = pi_i(w) p(w)^(lam - 1)``, so ranking by ``r`` is ranking by ``pi * f`` with
``f = p^(lam - 1)``.
"""
import difflib
from numbers import Integral, Real

import numpy as np

from countgrid._utils import progress as _progress
from countgrid._utils.counts import check_counts
from countgrid._utils.memory import check_memory
from countgrid.grid._browse import window_coverage

__all__ = ["resolve_word", "word_map", "word_cells", "top_words", "window_centres",
           "word_marginal", "word_relevance", "word_weights", "smooth_idf",
           "RELEVANCE_LAMBDA", "WEIGHTINGS"]

#: The lambda of the relevance ranking, chosen by measurement (docs/results.md, "Which
#: words a cell shows"; experiments/word_relevance.py).
RELEVANCE_LAMBDA = 0.7
#: The named word rankings (besides an array of per-word factors).
WEIGHTINGS = ("relevance", "probability", "lift", "idf")

#: Cells whose top words are ranked at once (bounds the (cells, n_features) scratch).
_TOP_WORDS_BLOCK = 1 << 22


def _names(feature_names, n_features):
    if feature_names is None:
        return None
    names = np.asarray(feature_names)
    if names.ndim != 1 or names.shape[0] != n_features:
        raise ValueError(f"feature_names has {names.size} entries; the grid has "
                         f"{n_features} features")
    return names.astype(str)


def resolve_word(word, feature_names, n_features):
    """The feature index of ``word`` (an int index, or a str looked up in feature_names).

    Raises ValueError naming the word (with close matches) when it is not in the
    vocabulary, TypeError for anything but an int or a str."""
    if isinstance(word, (bool, np.bool_)):
        raise TypeError(f"word must be an int feature index or a str, got {word!r}")
    if isinstance(word, Integral):
        w = int(word)
        if not -n_features <= w < n_features:
            raise ValueError(f"word index {w} is out of range for a grid of {n_features} "
                             "features")
        return w % n_features
    if isinstance(word, (str, np.str_)):
        names = _names(feature_names, n_features)
        if names is None:
            raise ValueError(f"word {str(word)!r} is a str: pass feature_names (the "
                             "vocabulary) or an int feature index")
        hits = np.flatnonzero(names == str(word))
        if hits.size:
            return int(hits[0])
        close = difflib.get_close_matches(str(word), names.tolist(), n=5)
        hint = f"; close matches: {', '.join(repr(c) for c in close)}" if close else ""
        raise ValueError(f"word {str(word)!r} is not in feature_names{hint}")
    raise TypeError(f"word must be an int feature index or a str, got "
                    f"{type(word).__name__}")


def word_map(pi, word, feature_names=None):
    """``pi[..., w]``: the probability of the word in every cell (a copy, shape extent)."""
    w = resolve_word(word, feature_names, pi.shape[-1])
    return np.array(pi[..., w])


def word_cells(pi, word, n_cells=10, feature_names=None):
    """The ``n_cells`` cells where the word is most probable, most probable first (ties in
    C order of the cells): ``(cells (n, D) int64, weights (n,))``."""
    if isinstance(n_cells, (bool, np.bool_)) or not isinstance(n_cells, Integral):
        raise TypeError(f"n_cells must be an int, got {type(n_cells).__name__}")
    if n_cells < 1:
        raise ValueError(f"n_cells must be >= 1, got {n_cells}")
    m = word_map(pi, word, feature_names)
    flat = m.ravel()
    n = min(int(n_cells), flat.size)
    order = np.argsort(-flat, kind="stable")[:n]
    cells = np.stack(np.unravel_index(order, m.shape), axis=1).astype(np.int64)
    return cells, flat[order]


def top_words(pi, n_words=10, feature_names=None, weighting="probability", X=None,
              prior=None, window=None, marginal_pi=None):
    """The ``n_words`` best features of every cell, best first (ties by feature index):
    shape ``extent + (n_words,)``, names when feature_names is given, else int64 indices.

    Cells rank words by ``pi * word_weights(...)`` (:func:`word_weights`; "probability":
    ``pi`` itself).  ``marginal_pi`` is the grid whose average word distribution is
    ``p(w)`` when ``pi`` is a summary of it (block means): default ``pi``.  The cells are
    ranked a block at a time; inside :func:`countgrid._utils.progress.passes` the pass is
    reported (stage " word ranking", unit "cell")."""
    if isinstance(n_words, (bool, np.bool_)) or not isinstance(n_words, Integral):
        raise TypeError(f"n_words must be an int, got {type(n_words).__name__}")
    if n_words < 1:
        raise ValueError(f"n_words must be >= 1, got {n_words}")
    extent, Z = pi.shape[:-1], pi.shape[-1]
    names = _names(feature_names, Z)
    f = word_weights(pi if marginal_pi is None else marginal_pi, weighting, X=X,
                     prior=prior, window=window)
    k = min(int(n_words), Z)
    flat = pi.reshape(-1, Z)
    L = flat.shape[0]
    check_memory(8 * L * k, f"the top {k} words of {L} cells", "ask for fewer words")
    out = np.empty((L, k), dtype=np.int64)
    step = max(1, _TOP_WORDS_BLOCK // max(Z, 1))
    _progress.report_pass(" word ranking", 0, L, "cell")
    for c0 in range(0, L, step):
        block = flat[c0:c0 + step]
        if f is not None:
            block = np.asarray(block, dtype=np.float64) * f
        out[c0:c0 + block.shape[0]] = _top_k_rows(block, k)
        _progress.report_pass(" word ranking", c0 + block.shape[0], L, "cell")
    out = out.reshape(tuple(extent) + (k,))
    return out if names is None else names[out]


def word_marginal(pi, prior=None, window=None):
    """The grid's average word distribution ``p(w)``: what the model generates when the
    window position is drawn from its prior.

    With the uniform prior, ``p(w) = mean_k h_k(w) = mean_i pi_i(w)`` (every cell lies in
    as many windows); with a learned ``prior`` over window corners (``prior_``),
    ``p(w) = sum_k prior_k h_k(w) = sum_i c_i pi_i(w)`` with ``c_i`` the prior mass of the
    windows covering cell ``i`` divided by the window size.

    Parameters
    ----------
    pi : ndarray of shape ``extent + (n_features,)``
        Word distributions of the cells (a grid's ``pi_``).
    prior : ndarray of shape ``extent``, optional
        A learned location prior (``prior_``); needs ``window``.
    window : tuple of int, optional

    Returns
    -------
    ndarray of shape (n_features,), float64
    """
    pi = np.asarray(pi)
    Z = pi.shape[-1]
    flat = pi.reshape(-1, Z)
    if prior is None:
        return np.asarray(flat.mean(axis=0, dtype=np.float64), dtype=np.float64)
    extent = tuple(pi.shape[:-1])
    prior = np.asarray(prior, dtype=np.float64).reshape(1, -1)
    c = window_coverage(prior / prior.sum(), extent, window)[0] / float(np.prod(window))
    return c @ np.asarray(flat, dtype=np.float64)


def _check_lambda(lam):
    if isinstance(lam, (bool, np.bool_)) or not isinstance(lam, Real) or not 0 <= lam <= 1:
        raise ValueError(f"relevance_lambda must be a number in [0, 1], got {lam!r}")
    return float(lam)


def word_relevance(pi, relevance_lambda=RELEVANCE_LAMBDA, marginal=None):
    """LDAvis' relevance of every word in every cell.

    ``r_i(w) = lam log pi_i(w) + (1 - lam) log(pi_i(w) / p(w))`` (Sievert & Shirley 2014),
    with ``p(w)`` the grid's average word distribution (:func:`word_marginal`): ``lam = 1``
    ranks words by probability, ``lam = 0`` by lift, the default
    :data:`RELEVANCE_LAMBDA` (0.7) was chosen by measurement (docs/results.md, "Which words
    a cell shows").  Ranking a cell's words by ``r`` is ranking them by
    ``pi_i(w) * p(w)^(lam - 1)`` (:func:`word_weights`).

    Parameters
    ----------
    pi : ndarray of shape ``extent + (n_features,)``
        A grid's ``pi_`` (or any distributions over the words, last axis).
    relevance_lambda : float in [0, 1], default=RELEVANCE_LAMBDA
    marginal : ndarray of shape (n_features,), optional
        ``p(w)``; default :func:`word_marginal` of ``pi``.

    Returns
    -------
    ndarray of the shape of ``pi``, float64
        ``-inf`` where ``pi`` is 0.

    Examples
    --------
    >>> import numpy as np
    >>> from countgrid.grid import word_relevance
    >>> pi = np.full((3, 1, 4), 0.05)          # a 3 x 1 grid of 4 words
    >>> pi[..., 0] = 0.5                       # word 0 is everywhere
    >>> for i in range(3):
    ...     pi[i, 0, i + 1] = 0.4              # word i + 1 is cell i's own
    >>> np.argmax(pi, axis=-1).ravel().tolist()                  # the most probable
    [0, 0, 0]
    >>> np.argmax(word_relevance(pi), axis=-1).ravel().tolist()  # the most relevant
    [1, 2, 3]
    """
    lam = _check_lambda(relevance_lambda)
    pi = np.asarray(pi, dtype=np.float64)
    p = word_marginal(pi) if marginal is None else np.asarray(marginal, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.log(pi) - (1.0 - lam) * np.log(np.maximum(p, np.finfo(np.float64).tiny))


def smooth_idf(X):
    """scikit-learn's smooth inverse document frequency of every feature of counts ``X``:
    ``log((1 + n) / (1 + df)) + 1`` (the map's and the pictures' ``idf`` weighting).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_documents, n_features)

    Returns
    -------
    ndarray of shape (n_features,), float64
    """
    Xc, is_sparse = check_counts(X, np.float64)
    df = (np.bincount(Xc.indices, minlength=Xc.shape[1]) if is_sparse
          else np.count_nonzero(Xc, axis=0))
    return np.log((1.0 + Xc.shape[0]) / (1.0 + df)) + 1.0


def word_weights(pi, weighting="relevance", X=None, prior=None, window=None,
                 relevance_lambda=RELEVANCE_LAMBDA):
    """The per-word factor ``f(w)`` by which cells rank their words: ``pi_i(w) * f(w)``.

    Parameters
    ----------
    pi : ndarray of shape ``extent + (n_features,)``
        A grid's ``pi_``.
    weighting : {"relevance", "probability", "lift", "idf"} or array-like, \
default="relevance"
        "relevance": ``f = p(w)^(lam - 1)``, LDAvis' relevance with ``lam =
        relevance_lambda`` (:func:`word_relevance`); "probability" (or "pi"): ``f = 1``,
        the most probable words; "lift": ``f = 1 / p(w)``, the words most over-represented
        in the cell (relevance with ``lam = 0``: rare words win); "idf": ``f`` = the smooth
        idf of ``X``, ``log((1 + n) / (1 + df)) + 1``; an array of ``n_features``
        non-negative finite numbers is ``f`` itself.
    X : {array-like, sparse matrix}, optional
        The documents, for "idf".
    prior, window : optional
        A learned location prior and the window, for ``p(w)`` (:func:`word_marginal`).
    relevance_lambda : float in [0, 1], default=RELEVANCE_LAMBDA

    Returns
    -------
    ndarray of shape (n_features,), float64, or None for "probability" (``f = 1``)
    """
    Z = np.shape(pi)[-1]
    if isinstance(weighting, str):
        if weighting in ("probability", "pi"):
            return None
        if weighting == "idf":
            if X is None:
                raise ValueError("weighting='idf' weights words by their document frequency "
                                 "in the documents: pass X")
            f = smooth_idf(X)
            if f.shape[0] != Z:
                raise ValueError(f"X has {f.shape[0]} features; the grid has {Z}")
            return f
        if weighting in ("relevance", "lift"):
            lam = 0.0 if weighting == "lift" else _check_lambda(relevance_lambda)
            p = np.maximum(word_marginal(pi, prior, window), np.finfo(np.float64).tiny)
            return p ** (lam - 1.0)
        raise ValueError(f"weighting must be one of {', '.join(map(repr, WEIGHTINGS))} or an "
                         f"array of {Z} per-word factors, got {weighting!r}")
    try:
        f = np.asarray(weighting, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"weighting must be one of {', '.join(map(repr, WEIGHTINGS))} or an "
                        f"array of {Z} per-word factors, got {type(weighting).__name__}") \
            from None
    if f.shape != (Z,):
        raise ValueError(f"weighting has shape {f.shape}; per-word factors need shape ({Z},)")
    if not np.isfinite(f).all() or (f < 0).any():
        raise ValueError("weighting's per-word factors must be finite and non-negative")
    return f


def _top_k_rows(block, k):
    """Column indices of the k largest entries of every row, largest first, ties by
    column index: a partition finds each row's k-th largest value, and only the entries
    at least as large are sorted (by row, then value, stably: columns stay ascending)."""
    n, Z = block.shape
    if k == Z:
        return np.argsort(-block, axis=1, kind="stable")
    kth = -np.partition(-block, k - 1, axis=1)[:, k - 1:k]
    rows, cols = np.nonzero(block >= kth)              # row-major: columns ascending
    order = np.lexsort((-block[rows, cols], rows))
    starts = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=n))[:-1]))
    return cols[order][starts[:, None] + np.arange(k)]


def window_centres(corners, extent, window):
    """The window centre ``(k + W // 2) mod E`` of windows whose first cell is ``k``."""
    corners = np.asarray(corners, dtype=np.int64)
    return (corners + np.asarray(window, dtype=np.int64) // 2) % np.asarray(extent,
                                                                            dtype=np.int64)
