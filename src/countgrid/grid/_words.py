"""Where words live on a fitted counting grid: a word's map, its top cells, each cell's
top words and a document's window centre (the helpers behind CountingGrid.word_map,
word_cells, top_words and positions(anchor="center"); docs/counting_grids.md, "Working
with a fitted grid")."""
import difflib
from numbers import Integral

import numpy as np

from countgrid._memory import check_memory

__all__ = ["resolve_word", "word_map", "word_cells", "top_words", "window_centres"]

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


def top_words(pi, n_words=10, feature_names=None):
    """The ``n_words`` most probable features of every cell, most probable first (ties by
    feature index): shape ``extent + (n_words,)``, names when feature_names is given, else
    int64 indices."""
    if isinstance(n_words, (bool, np.bool_)) or not isinstance(n_words, Integral):
        raise TypeError(f"n_words must be an int, got {type(n_words).__name__}")
    if n_words < 1:
        raise ValueError(f"n_words must be >= 1, got {n_words}")
    extent, Z = pi.shape[:-1], pi.shape[-1]
    names = _names(feature_names, Z)
    k = min(int(n_words), Z)
    flat = pi.reshape(-1, Z)
    L = flat.shape[0]
    check_memory(8 * L * k, f"the top {k} words of {L} cells", "ask for fewer words")
    out = np.empty((L, k), dtype=np.int64)
    step = max(1, _TOP_WORDS_BLOCK // max(Z, 1))
    for c0 in range(0, L, step):
        block = flat[c0:c0 + step]
        out[c0:c0 + block.shape[0]] = _top_k_rows(block, k)
    out = out.reshape(tuple(extent) + (k,))
    return out if names is None else names[out]


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
