"""The coherence measures of topics' top words from co-occurrence counts (the engine of
:func:`countgrid.metrics.topic_coherence`; docs/diagnostics.md).

Röder, Both & Hinneburg, "Exploring the space of topic coherence measures" (WSDM 2015)
split a coherence measure into four steps, and gensim's ``CoherenceModel`` (4.x) is the
implementation everyone compares with; the steps here are gensim's, named as in the paper:

1. *segmentation* of a topic's top words ``W = (w_1, ..., w_N)`` (best first) into pairs
   ``(W', W*)``: S_one_pre ``{(w_i, w_j): j < i}`` (UMass), S_one_one ``{(w_i, w_j): i != j}``
   (UCI, NPMI), S_one_set ``{(w_i, W)}`` (C_V);
2. *probability estimation* from a reference corpus: ``P(w)`` and ``P(w, w')`` are the
   fractions of boolean documents (P_bd) or of boolean sliding windows of ``k`` tokens
   (P_sw(k)) that hold the word(s) -- the counts of the kernels in csrc/cooc;
3. *confirmation*, with gensim's ``epsilon = 1e-12`` and natural logarithms:
   UMass (Mimno et al., EMNLP 2011) ``log((P(w', w*) + eps) / P(w*))``;
   PMI ``log((P(w', w*) + eps) / (P(w') P(w*)))`` (UCI, Newman et al. 2010);
   NPMI ``PMI / -log(P(w', w*) + eps)`` (Bouma 2009);
   C_V's indirect cosine: the context vector ``v(W')_j = sum_{w in W'} NPMI(w, w_j)^gamma``
   over the topic's words ``w_j`` and ``cos(v({w_i}), v(W))``;
4. *aggregation*: the arithmetic mean over the segments, and over the topics.

Words that never occur in the reference corpus make ``P(w) = 0``: UMass keeps gensim's
rule (a pair whose ``w*`` never occurs contributes 0), the others are undefined for the
topic (NaN, reported).  This module needs only numpy and the ``_cooc`` extension.
"""
import numpy as np
import scipy.sparse as sp

from countgrid._utils import _cooc
from countgrid._utils.memory import check_memory

__all__ = ["MEASURES", "EPSILON", "relevant_words", "document_counts", "text_tokens",
           "window_counts", "confirm"]

#: The measures: name -> (segmentation, confirmation) in Röder et al.'s terms.
MEASURES = {"u_mass": ("one-preceding", "log conditional probability"),
            "c_uci": ("one-one", "PMI"),
            "c_npmi": ("one-one", "NPMI"),
            "c_v": ("one-set", "cosine of NPMI context vectors")}

#: gensim's ``direct_confirmation_measure.EPSILON`` (Röder et al.'s epsilon).
EPSILON = 1e-12


def relevant_words(top):
    """``(words, top_c)``: the sorted union of the top words (int64) and ``top`` written
    in positions of ``words`` (int64, same shape)."""
    words = np.unique(top)
    return words, np.searchsorted(words, top)


def _check_count_memory(n_words, num_threads):
    n = int(n_words)
    per_thread = (n * (n + 1) // 2 + 4 * n) * 8
    check_memory(per_thread * max(1, num_threads) + 2 * n * n * 8,
                 f"co-occurrence counts of {n} distinct top words on {num_threads} threads",
                 "score fewer topics or fewer top words at a time, or use num_threads=1")


def document_counts(csr, words, num_threads):
    """Boolean-document counts of ``words`` (int64 column indices) over the rows of a
    canonical CSR matrix (no explicit zeros): ``(counts, n_documents)``."""
    _check_count_memory(words.size, num_threads)
    relevant = np.full(csr.shape[1], -1, dtype=np.int32)
    relevant[words] = np.arange(words.size, dtype=np.int32)
    indptr, indices = csr.indptr, csr.indices
    if indices.dtype != indptr.dtype or indices.dtype not in (np.int32, np.int64):
        indptr, indices = indptr.astype(np.int64), indices.astype(np.int64)
    counts = _cooc.docs(np.ascontiguousarray(indptr), np.ascontiguousarray(indices),
                        csr.shape[1], relevant, words.size, num_threads)
    return counts, csr.shape[0]


def _is_str_token(t):
    return isinstance(t, (str, np.str_))


def text_tokens(texts, words, vocabulary, n_features):
    """``(offsets, tokens)`` of texts for the window kernel: offsets (int64, n_texts + 1)
    and every token as its position in ``words`` (int32) or -1 for any other word.

    A text is a sequence of int word indices (negative: a word outside the vocabulary,
    which keeps its place) or of str words (looked up in ``vocabulary``; unknown words are
    outside it).  Raises TypeError for anything else and ValueError for an index
    ``>= n_features`` (when known)."""
    if isinstance(texts, (str, bytes)) or sp.issparse(texts) or not hasattr(texts, "__iter__"):
        raise TypeError(f"texts must be a sequence of texts (each a sequence of int word "
                        f"indices or of str words), got {type(texts).__name__}")
    texts = list(texts)
    lengths = np.empty(len(texts), dtype=np.int64)
    parts, kinds = [], set()
    for i, text in enumerate(texts):
        if isinstance(text, (str, bytes)):
            raise TypeError(f"texts[{i}] is a {type(text).__name__}: give each text as a "
                            f"sequence of tokens (e.g. text.split())")
        arr = np.asarray(text)
        if arr.ndim != 1:
            if arr.size:
                raise ValueError(f"texts[{i}] must be a 1-D sequence of tokens, got shape "
                                 f"{arr.shape}")
            arr = arr.reshape(0)
        if arr.size == 0:
            kind = None
        elif arr.dtype.kind in "iu":
            kind = "int"
        elif arr.dtype.kind == "U" or (arr.dtype.kind == "O"
                                       and all(_is_str_token(t) for t in arr)):
            kind = "str"
        else:
            raise TypeError(f"texts[{i}] must hold int word indices or str words, got "
                            f"dtype {arr.dtype}")
        if kind is not None:
            kinds.add(kind)
        lengths[i] = arr.size
        parts.append(arr)
    if len(kinds) > 1:
        raise TypeError("texts mix int word indices and str words: use one kind")
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    position = {int(w): i for i, w in enumerate(words.tolist())}
    if "str" in kinds:
        if vocabulary is None:
            raise ValueError("texts hold str words: give vocabulary (the feature names, "
                             "one per column) to map them to word indices")
        relevant = {str(vocabulary[w]): i for w, i in position.items()}
        tokens = np.fromiter((relevant.get(t, -1) for part in parts for t in part.tolist()),
                             dtype=np.int32, count=int(offsets[-1]))
        return offsets, tokens
    ids = (np.concatenate([p.astype(np.int64, copy=False) for p in parts])
           if parts and offsets[-1] else np.zeros(0, dtype=np.int64))
    if ids.size and n_features is not None and ids.max() >= n_features:
        raise ValueError(f"texts hold the word index {int(ids.max())}, beyond the "
                         f"{n_features} words of the vocabulary")
    top = int(max(int(ids.max()) if ids.size else -1, int(words.max()) if words.size else -1))
    lut = np.full(top + 2, -1, dtype=np.int32)          # the last entry: negative ids
    lut[words] = np.arange(words.size, dtype=np.int32)
    tokens = lut[np.where(ids < 0, top + 1, ids)]
    return offsets, np.ascontiguousarray(tokens, dtype=np.int32)


def window_counts(offsets, tokens, n_words, window, rule, num_threads):
    """Boolean-sliding-window counts (``window`` None: each text one boolean document):
    ``(counts, n_windows)``; ``rule`` 0 (a word is in a window when one of its tokens is)
    or 1 (gensim's incremental update)."""
    _check_count_memory(n_words, num_threads)
    if window is None:
        lengths = np.diff(offsets)
        window = int(lengths.max()) + 1 if lengths.size else 1
    return _cooc.windows(offsets, tokens, int(window), int(rule), int(n_words), num_threads)


def _pairs_one_pre(n):
    """S_one_pre: (i, j) with j < i, in gensim's order (i ascending, then j)."""
    return np.tril_indices(n, -1)


def _pairs_one_one(n):
    """S_one_one: (i, j) with i != j, in gensim's order (i ascending, then j)."""
    i, j = np.divmod(np.arange(n * n), n)
    keep = i != j
    return i[keep], j[keep]


def confirm(counts, n_docs, top_c, measure, epsilon=EPSILON, gamma=1):
    """Per-topic coherence from co-occurrence counts.

    Parameters
    ----------
    counts : ndarray (n_words, n_words) of int64
        Documents (windows) holding each word (diagonal) and each pair.
    n_docs : int
        Documents (windows) of the reference, ``> 0``.
    top_c : ndarray (n_topics, n_top) of int
        Each topic's top words (best first) as positions in ``counts``.
    measure : {"u_mass", "c_uci", "c_npmi", "c_v"}
    epsilon : float
    gamma : int
        C_V's exponent of the NPMI context vectors.

    Returns
    -------
    values : ndarray (n_topics,) of float64
        NaN where the measure is undefined.
    undefined : ndarray (n_topics,) of bool
        Topics with a word that never occurs (NPMI, UCI, C_V) or a context vector of norm
        zero (C_V).
    """
    n = float(n_docs)
    T, N = top_c.shape
    df = np.diagonal(counts)
    missing = (df[top_c] == 0).any(axis=1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if measure == "u_mass":
            i, j = _pairs_one_pre(N)
            a, b = top_c[:, i], top_c[:, j]
            p_star = df[b] / n
            sims = np.log((counts[a, b] / n + epsilon) / p_star)
            sims[df[b] == 0] = 0.0          # gensim: ZeroDivisionError -> 0
            values = sims.mean(axis=1)
            undefined = ~np.isfinite(values)
        elif measure in ("c_uci", "c_npmi"):
            i, j = _pairs_one_one(N)
            a, b = top_c[:, i], top_c[:, j]
            joint = counts[a, b] / n + epsilon
            sims = np.log(joint / ((df[a] / n) * (df[b] / n)))
            if measure == "c_npmi":
                sims = sims / -np.log(joint)
            values = sims.mean(axis=1)
            undefined = missing | ~np.isfinite(values)
        elif measure == "c_v":
            a, b = top_c[:, :, None], top_c[:, None, :]
            joint = counts[a, b] / n + epsilon
            m = np.log(joint / ((df[a] / n) * (df[b] / n))) / -np.log(joint)
            m = m ** int(gamma)             # (T, N, N): NPMI(w_i, w_j)^gamma
            whole = m.sum(axis=1)           # v(W)_j = sum_i NPMI(w_i, w_j)^gamma
            dots = np.einsum("tij,tj->ti", m, whole)
            norms = np.sqrt((m * m).sum(axis=2)) * np.sqrt((whole * whole).sum(axis=1))[:, None]
            values = (dots / norms).mean(axis=1)
            undefined = missing | ~np.isfinite(values)
        else:                               # pragma: no cover (checked by the caller)
            raise ValueError(f"unknown measure {measure!r}")
    values = np.where(undefined, np.nan, values)
    return values, undefined
