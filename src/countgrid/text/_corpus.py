"""The corpus object: documents as counts, plus what a map of them needs (issue 11).

A :class:`Corpus` holds a canonical CSR count matrix, its vocabulary and, per document, a
unique id, a title, a text snippet, an optional link and metadata columns.  Everything is a
plain numpy array (numbers or numpy unicode strings, never objects), so a corpus saves to
one compressed ``.npz`` without pickle and embeds in a model file (``to_dict``).  The file
layout is described in docs/text.md ("The corpus file").
"""
import io as io_module
import json
import numbers
import os
import re
import sys
import warnings
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp

from countgrid._utils.counts import check_counts
from countgrid._utils.param_validation import Interval, Options, validate_call_params
from countgrid._utils.validation import check_random_state
from countgrid._version import __version__
from countgrid import io
from countgrid._utils.atomic import atomic_write
from countgrid._utils.fitted import array as _array
from countgrid._utils.fitted import check_declared
from countgrid._utils.npz import digest as _digest
from countgrid._utils.npz import open_archive, parse_json, resolve_max_bytes

__all__ = ["Corpus"]

FORMAT_NAME = "countgrid-corpus"
FORMAT_VERSION = 1
HEADER_KEY = "header"
SNIPPET_LENGTH = 300
TITLE_LENGTH = 80
# Words of two or more characters that start with a letter: scikit-learn's default pattern
# (?u)\b\w\w+\b also keeps pure numbers ("00", "1993"), which fill a map with noise.  Every
# token of this pattern is a token of scikit-learn's (same \b boundaries), so a vocabulary
# learnt with it is matched in full by scikit-learn's pattern (used for a fixed vocabulary).
DEFAULT_TOKEN_PATTERN = r"(?u)\b[^\W\d_]\w+\b"
SKLEARN_TOKEN_PATTERN = r"(?u)\b\w\w+\b"
_INT32_MAX = np.iinfo(np.int32).max
#: What a corpus file may hold, checked from the .npy headers before anything is
#: decompressed (docs/security.md): n documents, m terms, nnz stored counts.
_SCHEMA = {"counts_data": _array("real", "nnz"), "counts_indices": _array("int", "nnz"),
           "counts_indptr": _array("int", "n+1"), "counts_shape": _array("int", 2),
           "vocabulary": _array("str", "m"), "ids": _array("str", "n"),
           "titles": _array("str", "n"), "snippets": _array("str", "n"),
           "links": _array("str", "n")}
_METADATA_FIELD = _array("label", "n")
#: The corpus header (format, version, metadata names, checksum): a few kilobytes.
_HEADER_MAX_BYTES = 16 * 2**20


# --------------------------------------------------------------------------- small helpers
def _collapse(text, limit):
    """``text`` with runs of whitespace made single spaces, cut to ``limit`` characters
    (the last one an ellipsis when cut); NUL characters are dropped (numpy strings would
    lose trailing ones)."""
    head = text[: limit * 4 + 64]     # enough for the limit after collapsing, usually
    out = " ".join(head.replace("\x00", "").split())
    if len(out) < limit and len(head) < len(text):
        out = " ".join(text.replace("\x00", "").split())
    if len(out) > limit:
        out = out[: limit - 1].rstrip() + "\u2026"
    return out


def snippet_of(text):
    """The first ~300 characters of ``text``, whitespace collapsed."""
    return _collapse(text, SNIPPET_LENGTH)


def title_of(text):
    """The first non-empty line of ``text``, whitespace collapsed, at most 80 characters."""
    for line in text.splitlines():
        if line.strip():
            return _collapse(line, TITLE_LENGTH)
    return ""


def _is_str_sequence_input(values):
    return not isinstance(values, (str, bytes, Mapping)) and (
        isinstance(values, np.ndarray) or hasattr(values, "__len__")
        or hasattr(values, "__iter__"))


def _str_array(values, name, n=None, what="document"):
    """``values`` as a 1-D numpy unicode array (length ``n`` when given)."""
    if not _is_str_sequence_input(values):
        raise TypeError(f"{name} must be a sequence of str, got {type(values).__name__}")
    if isinstance(values, np.ndarray) and values.dtype.kind == "U":
        arr = values
    else:
        items = list(values) if not isinstance(values, np.ndarray) else values.tolist()
        for i, v in enumerate(items):
            if not isinstance(v, str):
                raise TypeError(f"{name} must hold str, but {name}[{i}] is "
                                f"{type(v).__name__} {v!r}")
            if v.endswith("\x00"):
                raise ValueError(f"{name}[{i}] ends with a NUL character, which numpy "
                                 "strings cannot hold")
        arr = np.array(items, dtype=str) if items else np.array([], dtype="<U1")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} entries, expected {n} (one per {what})")
    return arr.copy()


def _check_unique(arr, name):
    uniq, first, counts = np.unique(arr, return_index=True, return_counts=True)
    if uniq.shape[0] != arr.shape[0]:
        j = int(np.flatnonzero(counts > 1)[0])
        where = np.flatnonzero(arr == uniq[j])[:3].tolist()
        raise ValueError(f"{name} must be unique, but {str(uniq[j])!r} appears {counts[j]} times "
                         f"(at positions {', '.join(map(str, where))}"
                         f"{', ...' if counts[j] > 3 else ''})")


def _metadata_array(values, name, n):
    """One metadata column: 1-D numbers (bool, int, float) or numpy unicode strings."""
    label = f"metadata[{name!r}]"
    if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__len__"):
        raise TypeError(f"{label} must be a 1-D sequence of numbers or str, got "
                        f"{type(values).__name__}")
    if isinstance(values, np.ndarray) and values.dtype.kind in "biufU":
        arr = values.copy()
    elif isinstance(values, np.ndarray) and values.dtype.kind != "O":
        raise TypeError(f"{label} must hold numbers or str, got dtype {values.dtype}")
    else:
        items = values.tolist() if isinstance(values, np.ndarray) else list(values)
        if all(isinstance(v, str) for v in items):
            arr = np.array(items, dtype=str) if items else np.array([], dtype="<U1")
        elif all(isinstance(v, (bool, np.bool_)) for v in items):
            arr = np.array(items, dtype=bool)
        elif all(v is None or (isinstance(v, numbers.Real)
                               and not isinstance(v, (bool, np.bool_))) for v in items):
            try:
                if all(isinstance(v, numbers.Integral) for v in items):
                    try:
                        arr = np.array(items, dtype=np.int64)
                    except OverflowError:
                        arr = np.array(items, dtype=np.float64)
                else:
                    arr = np.array([np.nan if v is None else float(v) for v in items],
                                   dtype=np.float64)
            except OverflowError:
                big = next(v for v in items if v is not None and not -1e308 < v < 1e308)
                raise ValueError(f"{label} holds a number beyond the float range "
                                 f"({str(big)[:20]}...); scale it or store it as str") from None
        else:
            bad = next(i for i, v in enumerate(items) if not isinstance(v, (str, numbers.Real)))\
                if any(not isinstance(v, (str, numbers.Real)) for v in items) else None
            if bad is not None:
                raise TypeError(f"{label} must hold numbers or str, but entry {bad} is "
                                f"{type(items[bad]).__name__} {items[bad]!r}")
            raise TypeError(f"{label} mixes str and numbers: a column holds either numbers "
                            "(continuous) or str (categorical); convert it first")
    if arr.ndim != 1:
        raise ValueError(f"{label} must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"{label} has {arr.shape[0]} entries, expected {n} (one per "
                         "document)")
    if arr.dtype.kind == "U" and any(v.endswith("\x00") for v in values
                                     if isinstance(v, str)):
        raise ValueError(f"{label} holds a str ending with a NUL character")
    return arr


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def warn(message):
    """A UserWarning attributed to the first caller outside the countgrid package."""
    frame, level = sys._getframe(0), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, UserWarning, stacklevel=level)


def _warn_empty(ids, empty, n, advice):
    if not empty.size:
        return
    shown = ", ".join(repr(str(ids[i])) for i in empty[:5])
    more = ", ..." if empty.size > 5 else ""
    warn(f"{empty.size} of {n} documents have no word ({advice}): ids {shown}{more}; "
         "they are kept as empty rows (drop them with "
         "corpus.subset(corpus.counts.getnnz(axis=1) > 0))")


# ------------------------------------------------------------------------ vectorising text
#: Terms in the snippet of a pre-vectorised document (its most frequent ones).
SNIPPET_WORDS = 12


def _top_words(X, terms):
    """Per document, its most frequent terms as a snippet (pre-vectorised input has no
    text to quote)."""
    out = []
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        cols, vals = X.indices[lo:hi], X.data[lo:hi]
        top = cols[np.argsort(-vals, kind="stable")[:SNIPPET_WORDS]]
        out.append(" ".join(terms[top].tolist()))
    return out


def counts_corpus(X, terms, label, *, ids=None, titles=None, snippets=None, metadata=None):
    """A Corpus of pre-vectorised counts (every counts reader: npz, mtx, UCI, 10x, h5ad);
    problems of the counts name the file, the snippets are each document's most frequent
    terms, documents without a count are kept with one warning, and a file of only such
    documents is refused."""
    try:
        corpus = Corpus(X, terms, ids=ids, titles=titles, snippets=snippets,
                        metadata=metadata, source=label)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{label}: {exc}") from None
    nnz = np.diff(corpus.counts.indptr)
    if not nnz.any():
        raise ValueError(f"{label}: every document is empty (no count above zero)")
    if snippets is None:
        corpus.snippets = np.array(_top_words(corpus.counts, corpus.vocabulary), dtype=str)
    _warn_empty(corpus.ids, np.flatnonzero(nnz == 0), len(corpus), "all counts zero")
    return corpus


def _count_vectorizer():
    try:
        from sklearn.feature_extraction.text import CountVectorizer
    except ImportError as exc:
        raise ImportError("vectorising raw text needs scikit-learn (its CountVectorizer): "
                          "pip install countgrid[text]") from exc
    return CountVectorizer


def _check_options(lowercase, stop_words, token_pattern, vocabulary):
    """The CountVectorizer arguments of the options (the value checks scikit-learn would
    make, with messages naming our arguments); returns (stop_words, pattern, vocabulary)."""
    if stop_words is not None and not (isinstance(stop_words, str) and stop_words == "english"):
        if isinstance(stop_words, str) or not hasattr(stop_words, "__iter__"):
            raise (ValueError if isinstance(stop_words, str) else TypeError)(
                f"stop_words must be 'english', None or a list of str, got {stop_words!r}")
        stop_words = list(stop_words)
        if not all(isinstance(w, str) for w in stop_words):
            raise TypeError("stop_words must hold str")
    if token_pattern is not None:
        try:
            compiled = re.compile(token_pattern)
        except re.error as exc:
            raise ValueError(f"token_pattern {token_pattern!r} is not a valid regular "
                             f"expression: {exc}") from None
        if compiled.groups > 1:
            raise ValueError(f"token_pattern {token_pattern!r} has {compiled.groups} "
                             "capturing groups; at most one is allowed (use (?:...))")
        if compiled.fullmatch("") is not None:
            # scikit-learn would count the empty string between every two characters as
            # a word: a vocabulary of one empty term
            raise ValueError(f"token_pattern {token_pattern!r} matches the empty string; a "
                             "token must hold at least one character (e.g. \\w+ rather "
                             "than \\w*)")
    if vocabulary is not None:
        vocabulary = _str_array(vocabulary, "vocabulary", what="term")
        if vocabulary.shape[0] == 0:
            raise ValueError("vocabulary is empty")
        _check_unique(vocabulary, "vocabulary")
    return stop_words, token_pattern, vocabulary


def _prune(X, terms, min_df, max_df, max_features):
    """scikit-learn's document-frequency and max_features selection, made with the number
    of documents known (CountVectorizer._limit_features; ties of max_features broken by
    the alphabetical order).  Thresholds a tiny corpus cannot meet are relaxed with a
    warning instead of leaving no term."""
    n = X.shape[0]
    lo = float(min_df) if isinstance(min_df, numbers.Integral) else float(min_df) * n
    hi = float(max_df) if isinstance(max_df, numbers.Integral) else float(max_df) * n
    relaxed = []
    if lo > n:
        lo = float(n)
        relaxed.append(f"min_df={n}")
    if hi < lo:
        hi = float(n)
        relaxed.append("max_df=1.0")
    if relaxed:
        warn(f"min_df={min_df!r} and max_df={max_df!r} select no word in a corpus of {n} "
             f"document{'s' if n != 1 else ''}: using {' and '.join(relaxed)} (pass smaller "
             "thresholds to silence this)")
    df = np.bincount(X.indices, minlength=X.shape[1])
    mask = (df >= lo) & (df <= hi)
    if max_features is not None and int(mask.sum()) > max_features:
        kept = np.flatnonzero(mask)
        tf = np.asarray(X.sum(axis=0)).ravel()[kept]
        mask[:] = False
        mask[kept[np.argsort(-tf, kind="stable")[:max_features]]] = True
    if not mask.any():
        raise ValueError(
            f"no word is left: min_df={min_df!r} keeps words found in at least {lo:g} "
            f"documents and max_df={max_df!r} words found in at most {hi:g} of the {n}, and "
            "no word of the corpus qualifies; pass a smaller min_df (1 keeps every word) or "
            "a larger max_df (1.0 keeps every word)")
    keep = np.flatnonzero(mask)
    return X[:, keep], terms[keep]


def _vectorize(texts, lowercase, stop_words, token_pattern, vocabulary, min_df, max_df,
               max_features):
    """(counts, terms, n_documents) of an iterable of str, read once."""
    CountVectorizer = _count_vectorizer()
    fixed = vocabulary is not None
    if token_pattern is None:
        token_pattern = SKLEARN_TOKEN_PATTERN if fixed else DEFAULT_TOKEN_PATTERN
    if fixed:
        if lowercase and any(t != t.lower() for t in vocabulary):
            warn("the vocabulary holds terms with capital letters, which lowercase=True "
                 "never produces; pass lowercase=False")
        pattern = re.compile(token_pattern)
        unreachable = [t for t in vocabulary if not pattern.fullmatch(t)]
        if unreachable:
            warn(f"{len(unreachable)} vocabulary terms are not tokens of token_pattern "
                 f"{token_pattern!r} and are never counted (e.g. "
                 f"{', '.join(map(repr, unreachable[:5]))}); pass a token_pattern that "
                 "produces them")
    # min_df, max_df and max_features are applied by _prune once the number of documents
    # is known, so that the texts stream through in one pass; stop words do not apply to
    # a fixed vocabulary (it already says which words count)
    vec = CountVectorizer(lowercase=lowercase, stop_words=None if fixed else stop_words,
                          token_pattern=token_pattern, dtype=np.int64,
                          vocabulary=vocabulary.tolist() if fixed else None)
    with warnings.catch_warnings():
        # stop-word lists tokenised differently from the pattern: harmless here
        warnings.filterwarnings("ignore", message="Your stop_words may be inconsistent")
        # said above, with the argument to change
        warnings.filterwarnings("ignore", message="Upper case characters found in vocabulary")
        try:
            X = vec.fit_transform(texts)
        except ValueError as exc:
            if "empty vocabulary" not in str(exc):
                raise
            return None, None
    X = sp.csr_matrix(X)
    terms = np.asarray(vec.get_feature_names_out()).astype(str)
    if not fixed and (terms == "").any():
        # a pattern that matches the empty string only in context (e.g. \b\w*\b): the
        # empty token is no word
        keep = np.flatnonzero(terms != "")
        X, terms = X[:, keep], terms[keep]
    if not fixed:
        X, terms = _prune(X, terms, min_df, max_df, max_features)
    return X, terms


def _build(texts, *, ids, titles, links, metadata, source, lowercase, stop_words, min_df,
           max_df, max_features, token_pattern, vocabulary, name="texts", late_fields=None):
    """Corpus of an iterable of str read once.  ``late_fields()``, when given, returns the
    ids, titles (None entries: the text's first line), links and metadata collected by a
    reader while the texts streamed; it is called after the stream is exhausted."""
    stop_words, token_pattern, vocabulary = _check_options(lowercase, stop_words,
                                                           token_pattern, vocabulary)
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"{name} must be an iterable of str (one per document), got a "
                        f"single {type(texts).__name__}")
    if not hasattr(texts, "__iter__"):
        raise TypeError(f"{name} must be an iterable of str, got {type(texts).__name__}")
    snippets, first_lines = [], []

    def stream():
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                hint = (" (decode it first, or read files with countgrid.text.read_corpus("
                        "..., encoding=...))" if isinstance(text, (bytes, bytearray)) else "")
                raise TypeError(f"{name}[{i}] is {type(text).__name__}, not str{hint}")
            snippets.append(snippet_of(text))
            first_lines.append(title_of(text))
            yield text

    X, terms = _vectorize(stream(), lowercase, stop_words, token_pattern, vocabulary,
                          min_df, max_df, max_features)
    n = len(snippets)
    if n == 0:
        raise ValueError(f"{name} holds no document")
    if late_fields is not None:
        late = late_fields()
        ids, titles, links, metadata = (late["ids"], late["titles"], late["links"],
                                        late["metadata"])
    if X is None:
        raise ValueError(f"no word at all in the {n} documents: every token is a stop word "
                         f"(stop_words={stop_words if isinstance(stop_words, str) else '[...]'!r}) "
                         "or does not match token_pattern (by default words of two or more "
                         "characters starting with a letter); pass stop_words=None or "
                         "another token_pattern")
    ids = np.arange(n).astype(str) if ids is None else _str_array(ids, "ids", n)
    if titles is None:
        titles = first_lines
    elif isinstance(titles, list) and len(titles) == n and any(t is None for t in titles):
        titles = [first_lines[i] if t is None else t for i, t in enumerate(titles)]
    X.sort_indices()
    empty = np.flatnonzero(np.diff(X.indptr) == 0)
    if empty.size == n:
        raise ValueError(f"none of the {n} documents contains a word of the vocabulary "
                         f"({len(terms)} terms, e.g. {', '.join(map(repr, terms[:5].tolist()))})"
                         ": check lowercase, token_pattern and that the texts are in the "
                         "vocabulary's language")
    corpus = Corpus(X, terms, ids=ids, titles=titles, snippets=snippets, links=links,
                    metadata=metadata, source=source)
    _warn_empty(corpus.ids, empty, n, "no kept token" if vocabulary is None
                else "no word of the vocabulary")
    return corpus


_TEXT_OPTIONS = {
    "lowercase": ["boolean"],
    "min_df": [Interval(numbers.Integral, 1, None), Interval(numbers.Real, 0, 1)],
    "max_df": [Interval(numbers.Integral, 1, None), Interval(numbers.Real, 0, 1)],
    "max_features": [None, Interval(numbers.Integral, 1, None)],
    "token_pattern": [None, str],
    "stop_words": [None, Options("english"), list, tuple, set, frozenset],
    "source": [None, str],
}


# ---------------------------------------------------------------------------------- corpus
class Corpus:
    """Documents as counts, with the vocabulary, ids, titles, snippets, links and metadata.

    Build one from raw texts with :meth:`from_texts`, from files with
    :func:`countgrid.text.read_corpus`, or from a count matrix directly.  Every attribute
    is a numpy array of numbers or of numpy unicode strings (no object arrays), so a
    corpus saves without pickle (:meth:`save`, :meth:`to_dict`).

    Parameters
    ----------
    counts : {array-like, sparse matrix} of shape (n_documents, n_terms)
        Non-negative finite counts (documents x terms); stored as canonical CSR float64.
    vocabulary : sequence of str of length n_terms
        The term of each column; unique.
    ids : sequence of str of length n_documents, optional
        Unique document ids; default the row numbers ``"0"``, ``"1"``, ...
    titles : sequence of str, optional
        Default: the ids.
    snippets : sequence of str, optional
        Short extracts of the texts (:meth:`from_texts` keeps the first ~300 characters,
        whitespace collapsed); default empty strings.
    links : sequence of str, optional
        One URL (or path) per document; None when there are none.
    metadata : dict of str to 1-D array-like, optional
        Columns of length n_documents, in insertion order: numbers (continuous) or str
        (categorical).
    source : str, default=""
        Where the documents came from (a file name, "texts", ...).

    Attributes
    ----------
    counts : scipy.sparse.csr_matrix of shape (n_documents, n_terms)
        Canonical (sorted indices, no duplicates, no explicit zeros), float64.
    vocabulary, ids, titles, snippets : ndarray of str
    links : ndarray of str or None
    metadata : dict of str to ndarray
    source : str

    Raises
    ------
    TypeError
        For an argument of the wrong type (the message names it).
    ValueError
        For negative or non-finite counts, a length that does not match the counts, or
        repeated ids or terms.

    Examples
    --------
    >>> from countgrid.text import Corpus
    >>> corpus = Corpus([[2, 0, 1], [0, 3, 0]], ["cat", "dog", "fish"],
    ...                 ids=["a", "b"], metadata={"year": [1999, 2004]})
    >>> corpus
    Corpus(2 documents x 3 terms, metadata=['year'])
    >>> len(corpus), corpus.n_terms
    (2, 3)
    >>> corpus.counts.toarray()
    array([[2., 0., 1.],
           [0., 3., 0.]])
    """

    def __init__(self, counts, vocabulary, *, ids=None, titles=None, snippets=None,
                 links=None, metadata=None, source=""):
        X, is_sparse = check_counts(counts, np.float64, name="counts")
        if not is_sparse:
            X = sp.csr_matrix(X)
        X = sp.csr_matrix(X)
        X.sort_indices()
        n, m = X.shape
        self.counts = X
        self.vocabulary = _str_array(vocabulary, "vocabulary", m, what="column of counts")
        _check_unique(self.vocabulary, "vocabulary")
        self.ids = np.arange(n).astype(str) if ids is None else _str_array(ids, "ids", n)
        _check_unique(self.ids, "ids")
        self.titles = self.ids.copy() if titles is None else _str_array(titles, "titles", n)
        self.snippets = (np.full(n, "", dtype="<U1") if snippets is None
                         else _str_array(snippets, "snippets", n))
        self.links = None if links is None else _str_array(links, "links", n)
        if metadata is None:
            metadata = {}
        if not isinstance(metadata, Mapping):
            raise TypeError(f"metadata must be a dict of column name to values, got "
                            f"{type(metadata).__name__}")
        self.metadata = {}
        for key, values in metadata.items():
            if not isinstance(key, str) or not key:
                raise TypeError(f"metadata names must be non-empty str, got {key!r}")
            self.metadata[key] = _metadata_array(values, key, n)
        if source is None:
            source = ""
        if not isinstance(source, str):
            raise TypeError(f"source must be a str, got {type(source).__name__}")
        self.source = source

    # ------------------------------------------------------------------------- basics
    @property
    def n_documents(self):
        """Number of documents (rows of ``counts``)."""
        return self.counts.shape[0]

    @property
    def n_terms(self):
        """Number of terms (columns of ``counts``)."""
        return self.counts.shape[1]

    def __len__(self):
        return self.counts.shape[0]

    def __repr__(self):
        extra = f", metadata={list(self.metadata)}" if self.metadata else ""
        src = f", source={self.source!r}" if self.source else ""
        return f"Corpus({self.n_documents} documents x {self.n_terms} terms{extra}{src})"

    # --------------------------------------------------------------------- selection
    def subset(self, indices):
        """A new corpus with the documents ``indices`` (in that order).

        Parameters
        ----------
        indices : array-like of int or of bool
            Row numbers (negative ones count from the end; no repeats) or a boolean mask
            of length n_documents.

        Returns
        -------
        Corpus
            Same vocabulary and source; counts, ids, titles, snippets, links and
            metadata of the selected documents.

        Examples
        --------
        >>> from countgrid.text import Corpus
        >>> corpus = Corpus([[1, 0], [0, 2], [3, 1]], ["x", "y"])
        >>> corpus.subset([2, 0]).ids
        array(['2', '0'], dtype='<U21')
        >>> corpus.subset(corpus.counts.getnnz(axis=1) > 1).ids
        array(['2'], dtype='<U21')
        """
        n = self.n_documents
        idx = np.asarray(indices)
        if idx.dtype == object and idx.size and all(
                isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))
                for v in idx.ravel()):
            try:
                idx = idx.astype(np.int64)
            except OverflowError:
                raise ValueError(f"indices holds {max(idx.ravel(), key=abs)}, out of range "
                                 f"for {n} documents") from None
        if idx.dtype == bool:
            if idx.shape != (n,):
                raise ValueError(f"indices as a boolean mask must have shape ({n},), got "
                                 f"{idx.shape}")
            idx = np.flatnonzero(idx)
        elif idx.size == 0:
            idx = idx.astype(np.int64).ravel()
        elif idx.dtype.kind not in "iu":
            raise TypeError(f"indices must be integers or a boolean mask, got dtype "
                            f"{idx.dtype}")
        if idx.ndim != 1:
            raise ValueError(f"indices must be 1-D, got shape {idx.shape}")
        if idx.size == 0:
            raise ValueError("indices selects no document; a corpus holds at least one")
        if idx.min() < -n or idx.max() >= n:
            bad = idx[(idx < -n) | (idx >= n)][0]
            raise ValueError(f"indices holds {bad}, out of range for {n} documents")
        idx = np.where(idx < 0, idx + n, idx).astype(np.int64)
        if np.unique(idx).size != idx.size:
            raise ValueError("indices repeats a document (ids must stay unique)")
        return Corpus(self.counts[idx], self.vocabulary, ids=self.ids[idx],
                      titles=self.titles[idx], snippets=self.snippets[idx],
                      links=None if self.links is None else self.links[idx],
                      metadata={k: v[idx] for k, v in self.metadata.items()},
                      source=self.source)

    def sample(self, n, random_state=None):
        """A random subset of at most ``n`` documents, in their original order.

        Parameters
        ----------
        n : int
            Number of documents to keep (all of them when the corpus is not larger).
        random_state : None, int or numpy.random.Generator, default=None
            Seed of the draw: the same seed gives the same documents.

        Returns
        -------
        Corpus

        Examples
        --------
        >>> import numpy as np
        >>> from countgrid.text import Corpus
        >>> corpus = Corpus(np.eye(6), list("abcdef"))
        >>> corpus.sample(3, random_state=0).ids.tolist() == \\
        ...     corpus.sample(3, random_state=0).ids.tolist()
        True
        >>> len(corpus.sample(100))
        6
        """
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral):
            raise TypeError(f"n must be an int, got {n!r}")
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        rng = check_random_state(random_state)
        total = self.n_documents
        if n >= total:
            return self.subset(np.arange(total))
        return self.subset(np.sort(rng.choice(total, size=int(n), replace=False)))

    # ------------------------------------------------------------------- from texts
    @classmethod
    @validate_call_params(_TEXT_OPTIONS)
    def from_texts(cls, texts, *, ids=None, titles=None, links=None, metadata=None,
                   lowercase=True, stop_words="english", min_df=2, max_df=0.5,
                   max_features=None, token_pattern=None, vocabulary=None, source="texts"):
        """Vectorise raw texts with scikit-learn's ``CountVectorizer``.

        The texts are read once (any iterable, e.g. a generator over files).  Titles
        default to the first non-empty line of each text, snippets are its first ~300
        characters with whitespace collapsed.  Documents left without a word are kept as
        empty rows and reported by one ``UserWarning`` naming the first few ids.

        Parameters
        ----------
        texts : iterable of str
            One string per document.
        ids, titles, links : sequence of str, optional
            One per document; ids must be unique (default ``"0"``, ``"1"``, ...).
        metadata : dict of str to 1-D array-like, optional
            Numbers (continuous) or str (categorical) columns, one value per document.
        lowercase : bool, default=True
            Lowercase before tokenising.
        stop_words : "english", list of str or None, default="english"
            Words removed (scikit-learn's English list by default).  Not applied with a
            fixed ``vocabulary``.
        min_df : int or float in [0, 1], default=2
            Keep words found in at least this many documents (a float: this fraction).
        max_df : int or float in [0, 1], default=0.5
            Keep words found in at most this many documents (a float: this fraction).
            When ``min_df`` and ``max_df`` select no word because the corpus is tiny,
            they are relaxed (``min_df`` to the number of documents, ``max_df`` to 1.0)
            with a warning.
        max_features : int, optional
            Then keep only this many words, the most frequent ones.
        token_pattern : str, optional
            Regular expression of a token.  Default: words of two or more characters
            starting with a letter, ``(?u)\\b[^\\W\\d_]\\w+\\b`` (scikit-learn's default,
            ``(?u)\\b\\w\\w+\\b``, also keeps numbers; it is the default with a fixed
            ``vocabulary``).
        vocabulary : sequence of str, optional
            A fixed vocabulary (e.g. a fitted model's): the texts are counted over these
            terms, in this order, and ``stop_words``, ``min_df``, ``max_df`` and
            ``max_features`` do not apply.
        source : str, default="texts"
            Recorded in ``Corpus.source``.

        Returns
        -------
        Corpus

        Raises
        ------
        ImportError
            Without scikit-learn (``pip install countgrid[text]``).
        TypeError
            For a text that is not a str (the message gives its position) or an option
            of the wrong type.
        ValueError
            For no documents, no word left in any document, or an invalid option.

        Examples
        --------
        >>> from countgrid.text import Corpus
        >>> texts = ["The cat sat on the mat.", "A dog and a cat.", "The dog barked."]
        >>> corpus = Corpus.from_texts(texts, min_df=1, max_df=1.0)
        >>> corpus.vocabulary
        array(['barked', 'cat', 'dog', 'mat', 'sat'], dtype='<U6')
        >>> corpus.counts.toarray()
        array([[0., 1., 0., 1., 1.],
               [0., 1., 1., 0., 0.],
               [1., 0., 1., 0., 0.]])
        >>> new = Corpus.from_texts(["Cats? One cat, two dogs, one dog."],
        ...                         vocabulary=corpus.vocabulary)
        >>> new.counts.toarray()
        array([[0., 1., 1., 0., 0.]])
        """
        return _build(texts, ids=ids, titles=titles, links=links, metadata=metadata,
                      source=source, lowercase=lowercase, stop_words=stop_words,
                      min_df=min_df, max_df=max_df, max_features=max_features,
                      token_pattern=token_pattern, vocabulary=vocabulary)

    # ---------------------------------------------------------------------- storage
    def to_dict(self):
        """The corpus as plain arrays (name -> ndarray), e.g. to embed it in another file.

        The names carry no prefix (add your own) and none is a prefix of another.  The
        ``"header"`` entry is a JSON string with the format name ``"countgrid-corpus"``,
        its version, the metadata names and a SHA-256 checksum of all the arrays.  Counts
        are stored as int32 when they are whole numbers that fit.

        Returns
        -------
        dict of str to ndarray

        Examples
        --------
        >>> from countgrid.text import Corpus
        >>> corpus = Corpus([[1, 0], [0, 2]], ["x", "y"], metadata={"year": [2001, 2002]})
        >>> d = corpus.to_dict()
        >>> sorted(d)[:4]
        ['counts_data', 'counts_indices', 'counts_indptr', 'counts_shape']
        >>> d["counts_data"].dtype
        dtype('int32')
        >>> Corpus.from_dict(d).metadata["year"]
        array([2001, 2002])
        """
        X = self.counts
        data = X.data
        integral = data.size == 0 or (bool(np.all(data == np.floor(data)))
                                      and float(data.max()) <= _INT32_MAX)
        arrays = {"counts_data": data.astype(np.int32) if integral else data.copy(),
                  "counts_indices": X.indices.copy(), "counts_indptr": X.indptr.copy(),
                  "counts_shape": np.array(X.shape, dtype=np.int64),
                  "vocabulary": self.vocabulary, "ids": self.ids, "titles": self.titles,
                  "snippets": self.snippets}
        if self.links is not None:
            arrays["links"] = self.links
        width = len(str(max(len(self.metadata) - 1, 0)))
        keys = [f"metadata_{i:0{width}d}" for i in range(len(self.metadata))]
        for key, values in zip(keys, self.metadata.values()):
            arrays[key] = values
        header = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION,
                  "countgrid_version": __version__, "source": self.source,
                  "links": self.links is not None,
                  "metadata": [[name, key] for name, key in zip(self.metadata, keys)]}
        header["sha256"] = _digest(header, arrays)
        arrays[HEADER_KEY] = np.array(json.dumps(header))
        return arrays

    @classmethod
    def from_dict(cls, d):
        """The corpus of :meth:`to_dict`'s arrays; everything is checked.

        Parameters
        ----------
        d : mapping of str to ndarray
            Exactly the entries ``to_dict`` wrote (e.g. read back from a file).

        Returns
        -------
        Corpus
            The corpus those arrays describe.

        Raises
        ------
        ValueError
            If the entries are not a countgrid corpus, are damaged (checksum mismatch)
            or inconsistent.
        TypeError
            If ``d`` is not a mapping.

        Examples
        --------
        >>> from countgrid.text import Corpus
        >>> corpus = Corpus([[1, 0], [0, 2]], ["x", "y"])
        >>> Corpus.from_dict(corpus.to_dict()).counts.toarray()
        array([[1., 0.],
               [0., 2.]])
        """
        return _from_dict(d, "the corpus dictionary")

    def save(self, path):
        """Save to one compressed ``.npz`` file (no pickle): the arrays of :meth:`to_dict`.

        Parameters
        ----------
        path : str, path-like or binary file object
            Written as given (no ``.npz`` is appended).

        Examples
        --------
        >>> import os, tempfile
        >>> from countgrid.text import Corpus
        >>> corpus = Corpus([[1, 0], [0, 2]], ["x", "y"], ids=["a", "b"])
        >>> path = os.path.join(tempfile.mkdtemp(), "corpus.npz")
        >>> corpus.save(path)
        >>> Corpus.load(path).ids
        array(['a', 'b'], dtype='<U1')
        """
        if isinstance(path, (str, bytes, os.PathLike)):
            if not os.fspath(path):
                raise ValueError("path is empty: give a file name such as corpus.npz")
        elif not hasattr(path, "write") or isinstance(path, io_module.TextIOBase):
            raise TypeError(f"path must be a file name or a binary file object, got "
                            f"{type(path).__name__}")
        arrays = self.to_dict()
        if isinstance(path, (str, bytes, os.PathLike)):
            with atomic_write(path, "wb") as fh:       # docs/security.md, "Writing"
                np.savez_compressed(fh, **arrays)
        else:
            np.savez_compressed(path, **arrays)     # the caller's file object

    @classmethod
    def load(cls, path, max_bytes=None):
        """Load a corpus written by :meth:`save`.

        Nothing in the file is trusted (docs/security.md): nothing is unpickled, and every
        array's name, dtype and shape is checked from its header, with the total against
        ``max_bytes``, before anything is decompressed.

        Parameters
        ----------
        path : str, path-like or binary file object
        max_bytes : int or str, optional
            The most bytes of arrays (decompressed) the file may declare, e.g. ``"8G"``.
            Default: ``COUNTGRID_MAX_LOAD_BYTES`` when set, else 2 GiB.

        Returns
        -------
        Corpus
            The corpus that was saved: counts, vocabulary, ids, titles, snippets, links
            and metadata.

        Raises
        ------
        ValueError
            If the file is not a countgrid corpus, is damaged (checksum mismatch,
            truncated) or inconsistent, has a newer format version or declares more than
            ``max_bytes``; the message names the file.
        OSError
            If the file cannot be read.

        Examples
        --------
        See :meth:`save`.
        """
        if not (isinstance(path, (str, bytes, os.PathLike))
                or (hasattr(path, "read") and hasattr(path, "seek")
                    and not isinstance(path, io_module.TextIOBase))):
            raise TypeError(f"path must be a file name (str or os.PathLike) or a binary "
                            f"file object, got {type(path).__name__}")
        label = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) \
            else getattr(path, "name", "the file")
        return _from_dict(_load_npz(path, label, max_bytes), label)

    @classmethod
    def _check_members(cls, members, read_small):
        """Check the members of a corpus (``{name: countgrid._utils.npz.Member}``, names without
        prefix) from their headers, before any is decompressed; ``read_small(name, limit)``
        reads a small member (the header, the shape).  Raises ValueError."""
        _check_members(members, read_small, "the corpus")


def _check_members(members, read_small, label):
    header_member = members.get(HEADER_KEY)
    if header_member is None:
        raise ValueError(f"{label} is not a countgrid corpus file (it holds "
                         f"{sorted(members)[:6]}); read other .npz files with "
                         "countgrid.text.read_corpus")
    if header_member.dtype.kind != "U" or header_member.shape != ():
        raise ValueError(f"{label} has a corrupt corpus header")
    header = _parse_header(str(read_small(HEADER_KEY, _HEADER_MAX_BYTES)), label)
    meta = _metadata_keys(header, label)
    schema = dict(_SCHEMA)
    if not header.get("links"):
        del schema["links"]
    for _, key in meta:
        if key in schema or key == HEADER_KEY:
            raise ValueError(f"{label} has a corrupt corpus header (metadata)")
        schema[key] = _METADATA_FIELD
    _check_entries(label, set(schema), set(members) - {HEADER_KEY})
    shape_member = members["counts_shape"]
    if shape_member.dtype.kind not in "iu" or shape_member.shape != (2,):
        raise ValueError(f"{label}: counts_shape must be two non-negative integers")
    n, m = (int(v) for v in read_small("counts_shape", 16))
    if n < 0 or m < 0:
        raise ValueError(f"{label}: counts_shape must be two non-negative integers")
    declared = {k: ("array", members[k].dtype, members[k].shape) for k in schema}
    check_declared(schema, declared, {}, label, sizes={"n": n, "m": m})


def _parse_header(text, label):
    header = parse_json(text, label, "corpus header")
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        raise ValueError(f"{label} is not a countgrid corpus (its header names no "
                         f"{FORMAT_NAME!r} format)")
    version = header.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or not \
            1 <= version <= FORMAT_VERSION:
        raise ValueError(f"{label} has corpus format version {version!r}; this countgrid "
                         f"reads version {FORMAT_VERSION} (a newer countgrid wrote it?)")
    return header


def _metadata_keys(header, label):
    meta = header.get("metadata")
    if not isinstance(meta, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(s, str) for s in p)
            for p in meta):
        raise ValueError(f"{label} has a corrupt corpus header (metadata)")
    return meta


def _check_entries(label, expected, present):
    """The entries of a corpus file or dictionary are exactly the ``expected`` ones."""
    missing, extra = expected - present, present - expected
    if missing or extra:
        raise ValueError(f"{label} is not a consistent corpus: "
                         + (f"missing {sorted(missing)}" if missing else "")
                         + ("; " if missing and extra else "")
                         + (f"unexpected {sorted(extra)[:6]}" if extra else ""))


def _load_npz(path, label, max_bytes=None):
    """{name: array} of a corpus file, every member checked (names, dtypes, shapes, the
    total against ``max_bytes``) before any is decompressed."""
    limit = resolve_max_bytes(max_bytes)
    with open_archive(path, label, ".npz file") as archive:
        _check_members(archive.members, archive.read_small, label)
        archive.check_budget(archive.members, limit)
        return {name: archive.read(name) for name in archive.members}


def _from_dict(d, label):
    if not isinstance(d, Mapping):
        raise TypeError(f"d must be a mapping of names to arrays, got {type(d).__name__}")
    if HEADER_KEY not in d:
        raise ValueError(f"{label} is not a countgrid corpus: it has no {HEADER_KEY!r} entry")
    try:
        text = str(np.asarray(d[HEADER_KEY])[()])
    except (TypeError, ValueError, IndexError):
        raise ValueError(f"{label} has a corrupt corpus header") from None
    header = _parse_header(text, label)
    arrays = {}
    for key in d:
        if key == HEADER_KEY:
            continue
        arr = np.asarray(d[key])
        if arr.dtype.kind not in "biufU":
            raise ValueError(f"{label}: the entry {key!r} has the unsupported dtype "
                             f"{arr.dtype}")
        arrays[key] = arr
    if header.get("sha256") != _digest(header, arrays):
        raise ValueError(f"{label} is damaged: its SHA-256 checksum does not match its "
                         "content")
    meta = _metadata_keys(header, label)
    expected = {"counts_data", "counts_indices", "counts_indptr", "counts_shape",
                "vocabulary", "ids", "titles", "snippets"} | {key for _, key in meta}
    if header.get("links"):
        expected.add("links")
    _check_entries(label, expected, set(arrays))
    shape = arrays["counts_shape"]
    if shape.dtype.kind not in "iu" or shape.shape != (2,) or shape.min() < 0:
        raise ValueError(f"{label}: counts_shape must be two non-negative integers")
    data, indices, indptr = (arrays["counts_data"], arrays["counts_indices"],
                             arrays["counts_indptr"])
    if data.dtype.kind not in "iuf" or indices.dtype.kind not in "iu" or \
            indptr.dtype.kind not in "iu" or data.ndim != 1 or indices.ndim != 1 or \
            indptr.ndim != 1:
        raise ValueError(f"{label}: the counts arrays must be 1-D numbers and integers")
    if indptr.shape[0] != int(shape[0]) + 1 or indices.shape[0] != data.shape[0]:
        raise ValueError(f"{label}: corrupt counts (counts_indptr has {indptr.shape[0]} "
                         f"entries for {int(shape[0])} rows, counts_indices "
                         f"{indices.shape[0]} for {data.shape[0]} values)")
    try:
        X = sp.csr_matrix((data.astype(np.float64), indices, indptr),
                          shape=(int(shape[0]), int(shape[1])))
        return Corpus(X, arrays["vocabulary"], ids=arrays["ids"], titles=arrays["titles"],
                      snippets=arrays["snippets"], links=arrays.get("links"),
                      metadata={name: arrays[key] for name, key in meta},
                      source=header.get("source", ""))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{label} is not a consistent corpus: {exc}") from None


io.register_corpus_type(Corpus)
