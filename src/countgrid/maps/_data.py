"""What the interactive map embeds: plain arrays computed from a fitted 2-D grid.

Every number the page shows comes from here, so that the tests can compare the page
with Python (docs/map.md):

- the words of each cell, ranked by ``pi_[r, c] * f`` with the per-word factor ``f`` of
  :func:`countgrid.grid.word_weights` (default: relevance; or probability, lift, idf), and
  their probabilities ``pi_[r, c]`` (the font sizes);
- for the search box, the cells where each word lives: cell ``i`` for word ``w`` when
  ``pi_i(w) >= SEARCH_FRACTION * max_j pi_j(w)`` (:data:`SEARCH_FRACTION` = 1/2);
- per document its location posterior ``q_t`` truncated to its largest entries (the
  fewest that hold at least :data:`POSTERIOR_MASS` of it, at most
  :data:`MAX_POSITIONS`), its MAP window corner ``argmax_k q_t(k)`` (outlined when the
  document is hovered) and its log-likelihood per token in that window, from which the
  page ranks the documents of a clicked cell by the depth of the cell in their windows
  ``c_t(cell)`` (countgrid.grid._browse), ties by that log-likelihood, exactly as
  :func:`rank_documents` does here;
- colourings: per cell, the coverage-weighted class distribution (categorical metadata,
  the classifier's label embedding ``gamma_``) or mean (numeric metadata) over documents,
  ``sum_t s_t(i) y_t / sum_t s_t(i)``, with the colour of every level
  (countgrid._utils.palette: one per level up to 50 levels, or the levels chosen).

The corpus may come from anyone (docs/map.md, "Untrusted corpora"): every text the page
shows is cut at a stated length (:func:`truncate_text`; ``MAX_*_CHARS``), and links are
kept only when :func:`safe_link` allows them.
"""
import re
import unicodedata
from collections import defaultdict
from numbers import Integral

import numpy as np

from countgrid._utils.counts import check_counts
from countgrid._utils.dates import parse_dates, period_codes
from countgrid._utils.docs import fill_doc
from countgrid._utils.memory import check_memory
from countgrid._utils.palette import MAX_LEVELS, OTHER, choose_levels, level_colors
from countgrid._utils.threads import effective_n_threads
from countgrid._utils.validation import check_is_fitted, check_random_state
from countgrid.grid import CountingGrid, region_words, regions, visit_posteriors
from countgrid.grid._browse import (RANK_DECIMALS, check_cell, corner_depths, rank_key,
                                    window_coverage, window_depth)
from countgrid.grid._groups import add_group_corners, cell_masses
from countgrid.grid._layers import LayeredCountingGrid, spatial_view, word_layers
from countgrid.grid._posteriors import largest_posteriors
from countgrid.grid._time_slices import TimeSlicedCountingGrid, periods_view
from countgrid.grid._torus import check_grid
from countgrid.grid._words import RELEVANCE_LAMBDA, smooth_idf, top_words, word_weights
from countgrid.maps._versus import CORPUS_COLUMN, combine_corpora

__all__ = ["map_data", "rank_documents", "search_cells", "safe_link", "truncate_text",
           "SEARCH_FRACTION", "POSTERIOR_MASS", "MAX_POSITIONS", "MAX_LEVELS",
           "MAX_TITLE_CHARS", "MAX_ID_CHARS", "MAX_SNIPPET_CHARS", "MAX_LABEL_CHARS",
           "MAX_NAME_CHARS", "MAX_WORD_CHARS", "MAX_LINK_CHARS"]

#: A searched word lights the cells whose pi for it is at least this fraction of its maximum.
SEARCH_FRACTION = 0.5
#: Each document keeps the fewest largest posterior entries holding this much mass ...
POSTERIOR_MASS = 1.0 - 1e-3
#: ... but at most this many.
MAX_POSITIONS = 32
# MAX_LEVELS (countgrid._utils.palette): categorical metadata keeps its most frequent levels;
# the rest are shown as "other".
# Limits on the text the page shows (docs/map.md, "Untrusted corpora"), in characters
# (code points, Python's len), the ellipsis included; longer texts are cut by
# truncate_text.  They bound the file (a few KB per document at most) and the work of the
# browser (a 200,000-character title froze the tab for seconds on each click).
#: Titles of the documents (three lines of the document list) and of the page.
MAX_TITLE_CHARS = 200
#: Ids of the documents as shown (the CSV's ``index`` column identifies the row exactly).
MAX_ID_CHARS = 100
#: Snippets (a paragraph; the list shows three lines of it).
MAX_SNIPPET_CHARS = 1000
#: Levels of a categorical colouring (legend, status line), the classes of a classifier.
MAX_LABEL_CHARS = 100
#: The colouring of a layered grid's map by each document's most probable layer.
LAYER_COLUMN = "layer"
#: Names of the colourings (metadata columns: the menu, legend title, status line).
MAX_NAME_CHARS = 100
#: Words of the vocabulary (drawn in the cells, suggested by the search box).
MAX_WORD_CHARS = 50
#: Links longer than this are dropped (a cut link would point elsewhere).
MAX_LINK_CHARS = 2048
#: Documents listed for a clicked cell (as BrowseCloud's pin).
LIST_LENGTH = 100
#: Cells per region of the map's region levels (zoomed out the names of about L / 200
#: regions, then of about L / 50; docs/map.md, "Regions").
REGION_CELLS = (200, 50)
#: Words in a region's name.
REGION_NAME_WORDS = 3
#: Kept posterior entries (rows x MAX_POSITIONS) selected at once: a few MB of scratch,
#: and few calls of the selection kernel (each a parallel region).
_TRUNCATE_ELEMENTS = 1 << 18


# ---------------------------------------------------------------- untrusted text
_ELLIPSIS = "\u2026"
#: At most this many code points are given back to keep a character whole: the most
#: non-starters in a row of Unicode's stream-safe text format (UAX #15).
_MAX_BACKOFF = 30


def _extends(ch):
    """Whether ``ch`` belongs to the character before it (no cut before it): a
    combining or enclosing mark, a spacing mark, a variation selector, an emoji skin
    tone modifier, a tag character, a conjoining Hangul vowel or final consonant, the
    second half of a surrogate pair, a zero-width joiner."""
    o = ord(ch)
    return (unicodedata.combining(ch) != 0 or unicodedata.category(ch) in ("Mn", "Me", "Mc")
            or o == 0x200D or 0xFE00 <= o <= 0xFE0F or 0xE0100 <= o <= 0xE01EF
            or 0x1F3FB <= o <= 0x1F3FF or 0xE0020 <= o <= 0xE007F
            or 0x1160 <= o <= 0x11FF or 0xD7B0 <= o <= 0xD7FF or 0xDC00 <= o <= 0xDFFF)


def _regional(ch):
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF     # two of them make a flag


def _boundary(s, k):
    """The largest cut ``j <= k`` that keeps the characters of ``s[:j]`` whole (as seen:
    a base and its marks, a ZWJ emoji sequence, a flag, a surrogate pair), giving back
    at most _MAX_BACKOFF code points (else ``k``)."""
    j = k
    while j > 0 and k - j <= _MAX_BACKOFF:
        a, b = s[j - 1], s[j]
        if _extends(b) or a == "\u200d":
            j -= 1
            continue
        if _regional(a) and _regional(b):
            run = 0
            while run < j and _regional(s[j - 1 - run]):
                run += 1
            if run % 2:                     # a is the first half of a flag
                j -= 1
                continue
        return j
    return j if k - j <= _MAX_BACKOFF else k


def truncate_text(text, limit):
    r"""``text`` cut to at most ``limit`` characters, ending with an ellipsis when cut.

    Characters are code points (Python's ``len``), the ellipsis (U+2026) included.  The
    cut never splits what is seen as one character: it is moved back before combining
    marks, variation selectors, emoji modifiers and zero-width-joiner sequences, within a
    flag (a pair of regional indicators) or a surrogate pair, by at most 30 code points
    (Unicode's stream-safe text format; a longer run of marks is cut where it stands).

    Parameters
    ----------
    text : str
    limit : int
        At least 1.

    Returns
    -------
    str
        ``text`` itself when it is not longer than ``limit``.

    Examples
    --------
    >>> from countgrid.maps import truncate_text
    >>> truncate_text("counting grids", 8)
    'countin…'
    >>> truncate_text("cafe\u0301s", 5)          # the accent stays with its e
    'caf…'
    """
    if len(text) <= limit:
        return text
    return text[:_boundary(text, limit - 1)] + _ELLIPSIS


def _truncate_all(values, limit, distinct=False):
    """truncate_text of each value; with ``distinct``, cut values that became equal to
    another value are numbered (``"abc… (1)"``, ``"abc… (2)"``, within the limit, in
    order of first appearance), so that cutting never merges two distinct values
    silently; uncut values are kept, and equal values stay equal."""
    out = [v if len(v) <= limit else truncate_text(v, limit) for v in values]
    if not distinct:
        return out
    cut = [i for i, v in enumerate(values) if len(v) > limit]
    if not cut:
        return out
    sources = defaultdict(set)          # shown text -> the values shown so
    for v, o in zip(values, out):
        sources[o].add(v)
    taken, renamed = set(out), {}
    for i in cut:
        v = values[i]
        if len(sources[out[i]]) < 2:
            continue
        if v not in renamed:
            k = 1
            while True:
                suffix = f" ({k})"
                candidate = truncate_text(v, limit - len(suffix)) + suffix
                if candidate not in taken:
                    break
                k += 1
            renamed[v] = candidate
            taken.add(candidate)
        out[i] = renamed[v]
    return out


#: WHATWG URL parsing: leading and trailing C0 controls and spaces are stripped, ASCII
#: tab and newline removed anywhere; a scheme is a letter then letters, digits, + - .
_URL_STRIP = re.compile(r"^[\x00-\x20]+|[\x00-\x20]+$")
_URL_TAB_NEWLINE = re.compile(r"[\t\n\r]")
_URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_URL_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def safe_link(url):
    r"""The link as the map writes it into ``href``, or ``None`` when it is dropped.

    The rule (docs/map.md, "Untrusted corpora"): the text is first cleaned as browsers
    parse URLs (WHATWG URL Standard: leading and trailing C0 control characters and
    spaces stripped, ASCII tab, LF and CR removed anywhere), so that what is checked
    here is what the browser resolves.  Then it is kept only when it is

    - an absolute ``http:`` or ``https:`` URL (scheme in any case), or
    - a relative reference: no scheme (no ``letter [letters digits + - .]* :`` at the
      start), and not protocol-relative (not starting with two of ``/`` and ``\``,
      which browsers read as ``//host``);

    and at most :data:`MAX_LINK_CHARS` long, with no other control character.  Anything
    else (``javascript:``, ``data:``, ``file:``, ``vbscript:``, ``//host``, ...) is
    dropped: the page then shows the title as plain text.

    Parameters
    ----------
    url : str or None

    Returns
    -------
    str or None
        The cleaned link, or None (dropped, or nothing given).

    Examples
    --------
    >>> from countgrid.maps import safe_link
    >>> safe_link(" https://example.org/a?b=1 ")
    'https://example.org/a?b=1'
    >>> safe_link("notes/2.html")
    'notes/2.html'
    >>> safe_link("java\tscript:alert(1)") is None
    True
    >>> safe_link("//example.org") is None
    True
    """
    if not isinstance(url, str):
        return None
    url = _URL_TAB_NEWLINE.sub("", _URL_STRIP.sub("", url))
    if not url or len(url) > MAX_LINK_CHARS or _URL_CONTROL.search(url):
        return None
    scheme = _URL_SCHEME.match(url)
    if scheme:
        return url if scheme.group(0).lower() in ("http:", "https:") else None
    if len(url) >= 2 and url[0] in "/\\" and url[1] in "/\\":
        return None
    return url


def _strings(values, n, name, default):
    if values is None:
        return [default(i) for i in range(n)]
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of {n} strings, got a single string")
    if not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a sequence of {n} strings, got "
                        f"{type(values).__name__}")
    out = ["" if v is None else str(v) for v in values]
    if len(out) != n:
        raise ValueError(f"{name} has {len(out)} entries but X has {n} documents")
    return out


def _vocabulary(model, feature_names, Z):
    feature_names = _known_words(model, feature_names, Z)
    if feature_names is None:
        return [f"f{j}" for j in range(Z)]
    if isinstance(feature_names, dict):     # CountVectorizer.vocabulary_: word -> column
        inv = [None] * len(feature_names)
        for word, j in feature_names.items():
            if not 0 <= j < len(inv):
                raise ValueError(f"feature_names maps {word!r} to column {j}, out of range")
            inv[j] = word
        feature_names = inv
    if isinstance(feature_names, (str, bytes)):
        raise TypeError("feature_names must be a sequence of strings, got a single string")
    names = [str(v) for v in feature_names]
    if len(names) != Z:
        raise ValueError(f"feature_names has {len(names)} entries; the grid has {Z} features")
    return names


def _known_words(model, feature_names, Z):
    """The map's words when they are known (``feature_names``, else the model's own), or
    None (the map then names the columns f0, f1, ...)."""
    if feature_names is not None:
        return feature_names
    for attr in ("feature_names_in_", "vocabulary_"):
        names = getattr(model, attr, None)
        if names is not None and len(names) == Z:
            return names
    return None


def _resolve_grid(grid):
    """(CountingGrid, label colouring or None); a LayeredCountingGrid's spatial view, a
    TimeSlicedCountingGrid's view of its periods (its documents' periods set later)."""
    if hasattr(grid, "grids_") and not hasattr(grid, "grid_"):
        raise TypeError("a GenerativeCountingGridClassifier holds one grid per class; "
                        "map one of its grids_ instead")
    label = None
    if isinstance(grid, TimeSlicedCountingGrid):
        # the map at all dates; each document under its period's grid once the dates are
        # read (docs/map.md, "Time-sliced grids")
        check_is_fitted(grid, "pi_")
        if np.ndim(grid.pi_) != 4:
            raise ValueError(f"the map shows 2-D grids; this grid has extent "
                             f"{tuple(np.shape(grid.pi_)[1:-1])}")
        return periods_view(grid, np.zeros(0, dtype=np.int64)), None
    if hasattr(grid, "get_params") and "extent" in grid.get_params() and hasattr(
            type(grid), "_readout"):
        check_is_fitted(grid, "grid_")
        gamma = np.asarray(grid.gamma_, dtype=np.float64)
        classes = getattr(grid, "classes_", None)
        label = (gamma, classes)
        grid = grid.grid_
    if not isinstance(grid, CountingGrid):
        raise TypeError(f"grid must be a fitted CountingGrid or CountingGridClassifier, got "
                        f"{type(grid).__name__}")
    check_is_fitted(grid, "pi_")
    if isinstance(grid, LayeredCountingGrid) and np.ndim(grid.pi_) == 4:
        # the spatial grid: cells show their layers' words, documents sit where their
        # layers' posteriors put them (docs/map.md, "Layered grids")
        return spatial_view(grid), label
    if np.ndim(grid.pi_) != 3:
        raise ValueError(f"the map shows 2-D grids; this grid has extent "
                         f"{tuple(np.shape(grid.pi_)[:-1])} ({np.ndim(grid.pi_) - 1}-D)")
    return grid, label


def _top_words_by_block(pi2, f, k):
    """(top, scores, probabilities), each (L, k): every cell's ``k`` words of highest
    ``pi * f`` (f None: 1), descending, ties by lower word -- the rule of
    ``countgrid.grid._words.top_words``, which takes the cells a block at a time (on
    1,600 cells x 38,559 words the whole-table sort took 2 GB)."""
    top = top_words(pi2, k, weighting="probability" if f is None else f)
    probs = np.take_along_axis(pi2, top, axis=1).astype(np.float64)
    return top, (probs if f is None else probs * f[top]), probs


def search_cells(pi, fraction=SEARCH_FRACTION):
    """The search rule of the map: the cells where each word lives.

    Word ``w`` lights the cells ``i`` with ``pi[i, w] >= fraction * max_j pi[j, w]``.

    Parameters
    ----------
    pi : ndarray of shape (L, Z)
        Word distributions of the cells (a grid's ``pi_`` with the cells flattened in
        C order).
    fraction : float, default=SEARCH_FRACTION
        The fraction of the word's largest probability a cell needs (1/2).

    Returns
    -------
    offsets : ndarray of shape (Z + 1,), int64
        CSR offsets: word ``w`` lights ``cells[offsets[w]:offsets[w + 1]]``.
    cells : ndarray of shape (offsets[-1],), int64
        Flat cell indices, ascending within each word.
    """
    L, Z = pi.shape
    offsets = np.zeros(Z + 1, dtype=np.int64)
    parts = []
    step = max(1, (1 << 22) // max(L, 1))
    for j0 in range(0, Z, step):
        sub = pi[:, j0:j0 + step]
        words, cells = np.nonzero((sub >= fraction * sub.max(axis=0)).T)
        offsets[j0 + 1:j0 + sub.shape[1] + 1] = np.bincount(words, minlength=sub.shape[1])
        parts.append(cells)
    np.cumsum(offsets, out=offsets)
    return offsets, (np.concatenate(parts) if parts else np.zeros(0, np.int64))


def rank_documents(data, cell, n_documents=LIST_LENGTH):
    """The page's ranking of the documents of a pinned cell, from the embedded arrays.

    Document ``t`` scores ``c_t(cell) = sum_k q_t(k) K(cell - k)`` over its stored
    posterior entries, in stored order and in float64 as the page does: the posterior mean
    depth of the cell in the document's window (``K``:
    ``countgrid.grid._browse.window_depth``, stored as ``rank_depth``).  Documents with
    a positive score are listed by the score rounded to 3 decimals
    (``floor(1000 c + 1/2)``), then by their log-likelihood per token in their MAP window
    (``doc_loglik``), then by index: the page's list exactly.  This is the rule of
    :meth:`CountingGrid.documents_near` on the truncated posteriors.

    Parameters
    ----------
    data : dict
        The arrays of the map, as returned by :func:`map_data`.
    cell : tuple of int or int
        0-based coordinates ``(r, c)`` into the grid, or a flat C-order index.
    n_documents : int, default=LIST_LENGTH
        At most this many documents (the page lists 100).

    Returns
    -------
    indices : ndarray, int64
        Row indices of the documents in the X given to :func:`map_data` (the original
        rows, also when ``max_docs`` sampled them) of the documents with a positive
        score, best first.
    scores : ndarray of the same shape, float64
        Their scores ``c_t(cell)``.

    Raises
    ------
    TypeError, ValueError
        If ``cell`` is not a cell of the grid, or ``n_documents`` is not a positive int.
    """
    if isinstance(n_documents, (bool, np.bool_)) or not isinstance(n_documents,
                                                                       (int, np.integer)):
        raise TypeError(f"n_documents must be an int, got {type(n_documents).__name__}")
    if n_documents < 1:
        raise ValueError(f"n_documents must be >= 1, got {n_documents}")
    extent = tuple(int(e) for e in data["extent"])
    window = tuple(int(w) for w in data["window"])
    depth = corner_depths(check_cell(cell, extent), extent, window)
    offsets, pos, q = data["doc_offsets"], data["doc_positions"], data["doc_posteriors"]
    scores = np.zeros(len(offsets) - 1)
    for t in range(len(offsets) - 1):
        s = 0.0
        for j in range(offsets[t], offsets[t + 1]):
            d = depth[pos[j]]
            if d > 0:
                s += float(q[j]) * float(d)
        scores[t] = s
    loglik = np.asarray(data["doc_loglik"], dtype=np.float64)
    order = np.lexsort((np.arange(len(scores)), -loglik, -rank_key(scores)))
    order = order[scores[order] > 0][:n_documents]
    return data["doc_index"][order].astype(np.int64), scores[order]


def _factorize(labels):
    """``np.unique(labels, return_inverse=True, return_counts=True)`` of a list of str,
    by hashing (a sort of 100,000 Python strings took 0.2 s; the levels are few)."""
    code = {}
    first = np.fromiter((code.setdefault(v, len(code)) for v in labels), dtype=np.int64,
                        count=len(labels))
    found = list(code)
    order = sorted(range(len(found)), key=found.__getitem__)
    rank = np.empty(len(found), dtype=np.int64)
    rank[order] = np.arange(len(found))
    inverse = rank[first]
    names = np.array([found[k] for k in order], dtype=object)
    return names, inverse, np.bincount(inverse, minlength=len(names))


def _metadata_columns(metadata, n, lumped, levels=None, levels_of=None):
    """[(name, kind, codes or values, levels)] of the metadata columns; the names of the
    categorical ones whose rarest levels were lumped into "other" are added to lumped.
    ``levels`` chooses the coloured levels of the column ``levels_of``."""
    if metadata is None:
        return []
    if not isinstance(metadata, dict):
        raise TypeError(f"metadata must be a dict name -> 1-D array, got "
                        f"{type(metadata).__name__}")
    out = []
    for name, values in metadata.items():
        arr = np.asarray(values)
        shown = truncate_text(str(name), MAX_NAME_CHARS)      # in messages
        if arr.ndim != 1 or arr.shape[0] != n:
            raise ValueError(f"metadata[{shown!r}] must be 1-D with {n} entries (one per "
                             f"document); got shape {arr.shape}")
        chosen = levels if levels is not None and str(name) == levels_of else None
        if arr.dtype.kind in "iuf":
            if chosen is not None:
                raise ValueError(f"levels: the colouring {shown!r} is numeric (a colour bar), "
                                 "it has no levels to choose")
            vals = arr.astype(np.float64)
            if np.isinf(vals).any():
                raise ValueError(f"metadata[{shown!r}] has infinite values")
            out.append((str(name), "continuous", vals, None))
        else:
            names, inverse, counts = _factorize(
                ["(missing)" if v is None or (isinstance(v, float) and v != v) else str(v)
                 for v in arr.tolist()])
            # the most frequent levels (all up to MAX_LEVELS), in sorted order: the class
            # order of the classifiers and of the pictures (countgrid.plotting), so a class
            # has the same colour there; or the levels chosen, in their order
            keep, lump = choose_levels(names.tolist(), counts, chosen, MAX_LEVELS, "levels")
            rank = np.full(len(names), len(keep), dtype=np.int64)
            rank[keep] = np.arange(len(keep))
            shown_levels = _truncate_all([str(names[k]) for k in keep], MAX_LABEL_CHARS,
                                         distinct=True)
            if lump:
                shown_levels.append(OTHER if OTHER not in shown_levels else f"({OTHER})")
                lumped.add(str(name))
            out.append((str(name), "categorical", rank[inverse.ravel()], shown_levels))
    return out


def window_centre_cells(corners, extent, window):
    """The flat cell at the centre of each window (corner + window // 2 on the torus)."""
    rc = np.unravel_index(np.asarray(corners, dtype=np.int64), extent)
    centre = [(r + w // 2) % e for r, w, e in zip(rc, window, extent)]
    return np.ravel_multi_index(centre, extent).astype(np.int64)


def region_levels(grid, vocabulary, weighting="relevance", centres=None):
    """The region levels the map names when zoomed out: for each number of regions of
    :data:`REGION_CELLS`, the region of every cell (:func:`countgrid.grid.regions`, one
    merge tree, so the levels nest), each region's name (its
    :data:`REGION_NAME_WORDS` best words, :func:`countgrid.grid.region_words`) and its
    anchor, the cell where the name is drawn: the cell farthest from the region's border
    (steps on the torus; ties by the first in C order); with the cells at the centre of
    the documents' MAP windows (``centres``), each region's share of the documents."""
    extent = tuple(int(e) for e in np.shape(grid.pi_)[:-1])
    L = int(np.prod(extent))
    counts = sorted({min(L, max(2, round(L / c))) for c in REGION_CELLS})
    if L < 4:
        return []
    labels = regions(grid, counts)
    out = []
    for k, lab in zip(counts, labels):
        words = region_words(grid, lab, REGION_NAME_WORDS, np.asarray(vocabulary),
                             weighting=weighting)
        level = {"n_regions": k, "labels": lab.ravel().astype(np.int32),
                 "names": [" ".join(w) for w in words], "anchors": _region_anchors(lab, k)}
        out.append(level)
    return out if centres is None else add_document_shares(out, centres)


def add_document_shares(levels, centres):
    """The region levels of :func:`region_levels` with each region's share of the
    documents (``doc_share``), from the cells at the centre of the documents' MAP
    windows (none: the levels as they are)."""
    if not len(centres):
        return levels
    out = []
    for level in levels:
        counts = np.bincount(level["labels"][centres], minlength=level["n_regions"])
        out.append({**level, "doc_share": (counts / len(centres)).astype(np.float32)})
    return out


def _region_anchors(labels, k):
    """Per region, the cell of largest distance (4-neighbour steps on the torus) to a
    cell of another region."""
    depth = np.full(labels.shape, -1, dtype=np.int64)
    frontier = np.zeros(labels.shape, dtype=bool)
    for axis in range(labels.ndim):
        for step in (-1, 1):
            frontier |= np.roll(labels, step, axis=axis) != labels
    if not frontier.any():                         # one region: its first cell
        return np.zeros(k, dtype=np.int64)
    depth[frontier] = 0
    d = 0
    while (depth < 0).any():
        grown = np.zeros(labels.shape, dtype=bool)
        for axis in range(labels.ndim):
            for step in (-1, 1):
                grown |= np.roll(depth == d, step, axis=axis) & \
                    (np.roll(labels, step, axis=axis) == labels)
        d += 1
        new = grown & (depth < 0)
        if not new.any():
            break
        depth[new] = d
    flat_l, flat_d = labels.ravel(), depth.ravel()
    order = np.lexsort((np.arange(flat_l.size), -flat_d, flat_l))
    first = np.searchsorted(flat_l[order], np.arange(k))
    return order[first].astype(np.int64)


def _check_int(value, name, low, allow_none=False):
    if value is None and allow_none:
        return None
    if not isinstance(value, Integral) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an int{' or None' if allow_none else ''}, "
                        f"got {value!r}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)


#: The arguments that give the documents and their words, documented once for map_data
#: and write_html (countgrid._utils.docs).
DOCUMENTS_DOC = """\
X : {array-like, sparse matrix} of shape (n_documents, n_features), optional
    The documents listed when a cell is clicked (usually the training data).
corpus : object, optional
    Fills X, feature_names, titles, snippets, links, ids and metadata (those not given)
    from its attributes ``counts``, ``vocabulary``, ``titles``, ``snippets``,
    ``links``, ``ids`` and ``metadata``.
feature_names : sequence of str, optional
    The words (default: the grid's ``feature_names_in_`` if any, else ``f0, f1, ...``);
    cut at :data:`MAX_WORD_CHARS` (50) characters."""


@fill_doc(documents=DOCUMENTS_DOC)
def map_data(grid, X=None, *, corpus=None, feature_names=None, titles=None, snippets=None,
             links=None, ids=None, metadata=None, color_by=None, levels=None, n_words=10,
             weighting="relevance", idf=False, max_docs=None, random_state=0,
             title="countgrid map", escape_formulas=True, time=None, period="auto",
             versus=None, names=("this corpus", "the other corpus")):
    """The arrays the interactive map embeds (see :func:`write_html`; docs/map.md).

    Parameters
    ----------
    grid : CountingGrid or CountingGridClassifier
        Fitted, 2-D.  A classifier's ``grid_`` is used and its label embedding ``gamma_``
        added as the colouring "label embedding".
    {documents}
    titles, snippets, links, ids : sequence of str, optional
        One per document (defaults: "document i", none, none, the row index); they need
        X.  Texts the corpus may get from anyone (docs/map.md, "Untrusted corpora"):
        titles are cut at :data:`MAX_TITLE_CHARS` (200) characters, ids at
        :data:`MAX_ID_CHARS` (100), snippets at :data:`MAX_SNIPPET_CHARS` (1000), with an
        ellipsis (:func:`truncate_text`; words, ids, levels and names that cutting
        made equal are numbered, ``"… (2)"``); a link is kept only when :func:`safe_link`
        allows it (``http:``, ``https:`` or relative, at most :data:`MAX_LINK_CHARS`), else
        the title is shown as plain text.
    metadata : dict of str -> 1-D array, optional
        Colourings (need X): strings (or bools) are categorical (a colour per level up to
        50 levels, else the 49 most frequent and the rest "other"), numbers continuous
        (NaN = missing).  Names are cut at :data:`MAX_NAME_CHARS` (100) characters, levels
        (and the classes of a classifier) at :data:`MAX_LABEL_CHARS` (100).
    color_by : str, optional
        The colouring shown at start (a metadata name, as passed or as shown, or
        "label embedding").
    levels : sequence of str, optional
        The levels of the ``color_by`` colouring (categorical) that get a colour, in this
        order (at most 64); every other level is shown as "other".
    n_words : int, default=10
        Words stored per cell.
    weighting : {"relevance", "probability", "lift", "idf"} or array-like, \
default="relevance"
        How a cell ranks its words (:func:`countgrid.grid.word_weights`): LDAvis'
        relevance (lambda = :data:`countgrid.grid.RELEVANCE_LAMBDA`), the most probable
        words, the lift, ``pi * idf`` (smooth idf over X; needs X), or one non-negative
        factor per word.  Font sizes follow ``pi`` in every case.
    idf : bool, default=False
        The same as ``weighting="idf"`` (the option of 0.2).
    max_docs : int, optional
        Keep a seeded random sample of this many documents.
    random_state : int, numpy Generator or None, default=0
        Seed of that sample.
    title : str, default="countgrid map"
        The title of the page (cut at :data:`MAX_TITLE_CHARS`).
    escape_formulas : bool, default=True
        Whether the page's CSV export neutralises formulas: a text cell (id, title, link,
        snippet) whose first character is one of ``= + - @``, tab or carriage return is
        written with a leading apostrophe ``'`` (spreadsheet formula injection; the
        computed numbers rank, index and score are not text).  Carried in the data
        (``"escape_formulas"``).
    time : str or array-like of shape (n_documents,), optional
        The documents' dates, for the time slider (docs/map.md, "Time"): the name of a
        metadata column (then not a colouring) or one date per document (ISO 8601
        strings, Unix timestamps in seconds, ``datetime``/``datetime64`` values; missing
        dates leave a document out of the periods).  Needs X.
    period : {"auto", "day", "week", "month", "year"}, default="auto"
        The slider's periods (:func:`countgrid.grid.shares_by_period`; "auto": the finest
        giving at most 60 periods).
    versus : Corpus or count matrix, optional
        A second corpus over the same words (docs/map.md, "Two corpora"): the map holds
        the documents of both (X's rows first, then ``versus``'s; the row indices of the
        map count on), a categorical colouring "corpus" tells them apart, and the page
        opens on where the two differ (:func:`countgrid.grid.compare_groups` of that
        column).  Metadata columns that only one corpus has are dropped.
    names : pair of str, default=("this corpus", "the other corpus")
        The two corpora's names (the levels of "corpus").

    Returns
    -------
    dict
        Plain numpy arrays, lists of strings and scalars; the page decodes the same
        values (keys documented in docs/map.md).  Its texts are those the page shows
        and exports: cut, and ``""`` for a dropped link.

    Raises
    ------
    TypeError, ValueError
        For an unfitted or non-2-D grid, counts that are not counts or do not match the
        grid's words, per-document sequences or metadata of the wrong length or without X,
        a ``color_by`` that is not a colouring, or a parameter of the wrong type or value
        (naming the argument).
    MemoryError
        When the document arrays would not fit in the available memory (before
        allocating; pass ``max_docs``).
    """
    stages = map_stages(**locals())     # map_data's arguments, passed on as they are
    next(stages)
    return next(stages)


def map_stages(grid, X=None, **kwargs):
    """:func:`map_data` in two stages (a generator), for a map shown before its documents
    are in (the notebook widget; docs/map.md, "The notebook widget").

    The first ``next`` checks every argument (it raises what :func:`map_data` raises)
    and gives ``(preview, colourings, color_by)``: the data of the map without what the
    documents' posteriors give (the documents' entries are empty, ``n_documents`` is the
    number that will come; the colourings from documents, the documents' shares of the
    regions, the time block and the two corpora's comparison are left out), the names of
    every colouring the map will have and the one shown at start.  The second ``next``
    runs the documents' E-step and gives the data of :func:`map_data`.  Without
    documents both stages hold the same map.
    """
    return _map_stages(grid, X, **kwargs)


def _map_stages(grid, X=None, *, corpus=None, feature_names=None, titles=None,
                snippets=None, links=None, ids=None, metadata=None, color_by=None,
                levels=None, n_words=10, weighting="relevance", idf=False, max_docs=None,
                random_state=0, title="countgrid map", escape_formulas=True, time=None,
                period="auto", versus=None, names=("this corpus", "the other corpus")):
    model, label = _resolve_grid(grid)
    if corpus is not None:
        if not hasattr(corpus, "counts") or not hasattr(corpus, "vocabulary"):
            raise TypeError(f"corpus must be a countgrid.text.Corpus (with counts, vocabulary, "
                            f"titles, ...), got {type(corpus).__name__}")
        X = corpus.counts if X is None else X
        feature_names = getattr(corpus, "vocabulary", None) if feature_names is None \
            else feature_names
        titles = getattr(corpus, "titles", None) if titles is None else titles
        snippets = getattr(corpus, "snippets", None) if snippets is None else snippets
        links = getattr(corpus, "links", None) if links is None else links
        ids = getattr(corpus, "ids", None) if ids is None else ids
        metadata = getattr(corpus, "metadata", None) if metadata is None else metadata
        metadata = metadata or None
    compare = None
    if versus is not None:
        if X is None:
            raise ValueError("versus compares two corpora: pass X (or corpus=) too")
        Z = np.shape(model.pi_)[-1]
        both = combine_corpora(dict(X=X, titles=titles, snippets=snippets, links=links,
                                    ids=ids, metadata=metadata), versus, names, Z,
                               vocabulary=_known_words(model, feature_names, Z))
        X, titles, snippets, links, ids, metadata = (
            both[k] for k in ("X", "titles", "snippets", "links", "ids", "metadata"))
        if color_by is None:
            color_by = CORPUS_COLUMN
        compare = [CORPUS_COLUMN] + _truncate_all(list(names), MAX_LABEL_CHARS, distinct=True)
    n_words = _check_int(n_words, "n_words", 1)
    max_docs = _check_int(max_docs, "max_docs", 1, allow_none=True)
    if not isinstance(idf, (bool, np.bool_)):
        raise TypeError(f"idf must be a bool, got {idf!r}")
    if idf:
        if not (isinstance(weighting, str) and weighting in ("relevance", "idf")):
            raise ValueError(f"idf=True is weighting='idf'; it contradicts "
                             f"weighting={weighting!r}")
        weighting = "idf"
    if not isinstance(title, str):
        raise TypeError(f"title must be a str, got {type(title).__name__}")
    if not isinstance(escape_formulas, (bool, np.bool_)):
        raise TypeError(f"escape_formulas must be a bool, got {escape_formulas!r}")

    pi = np.asarray(model.pi_)
    extent = tuple(int(e) for e in pi.shape[:-1])
    _, window = check_grid(extent, model.window)
    L, Z = int(np.prod(extent)), pi.shape[-1]
    pi2 = pi.reshape(L, Z)
    vocabulary = _truncate_all(_vocabulary(model, feature_names, Z), MAX_WORD_CHARS,
                               distinct=True)

    # ---- documents (validated once, sampled when max_docs is exceeded)
    n_total = 0
    doc_index = np.zeros(0, dtype=np.int64)
    if X is not None:
        Xc, _ = check_counts(X, np.float64, n_features=Z, owner="the map's grid")
        n_total = Xc.shape[0]
        doc_index = np.arange(n_total, dtype=np.int64)
        if max_docs is not None and n_total > max_docs:
            rng = check_random_state(random_state)
            doc_index = np.sort(rng.choice(n_total, size=max_docs, replace=False))
            Xc = Xc[doc_index]
    for name, value in (("titles", titles), ("snippets", snippets), ("links", links),
                        ("ids", ids), ("metadata", metadata)):
        if X is None and value is not None:
            raise ValueError(f"{name} describe documents: pass X (or corpus=) too")
    if X is None and isinstance(weighting, str) and weighting == "idf":
        raise ValueError("idf=True (weighting='idf') weights words by their document "
                         "frequency in X: pass X")
    n = len(doc_index)

    def pick(values):   # per-document sequences follow the sample
        if values is None or n == n_total:
            return values
        values = list(values) if not isinstance(values, np.ndarray) else values
        if len(values) != n_total:
            return values       # the length check below names the argument
        return [values[i] for i in doc_index]

    # untrusted text: cut at the limits, links checked (docs/map.md, "Untrusted corpora")
    titles = _truncate_all(_strings(pick(titles), n, "titles",
                                    lambda i: f"document {doc_index[i]}"), MAX_TITLE_CHARS)
    ids = _truncate_all(_strings(pick(ids), n, "ids", lambda i: str(doc_index[i])),
                        MAX_ID_CHARS, distinct=True)
    snippets = _truncate_all(_strings(pick(snippets), n, "snippets", lambda i: ""),
                             MAX_SNIPPET_CHARS)
    links = None if links is None else [safe_link(v) or "" for v in
                                        _strings(pick(links), n, "links", None)]
    if metadata is not None and not isinstance(metadata, dict):
        raise TypeError(f"metadata must be a dict name -> 1-D array, got "
                        f"{type(metadata).__name__}")
    layered = getattr(model, "_layered", None)
    layer_column = None
    if layered is not None and X is not None:
        # each document's most probable layer, a categorical colouring (the default one)
        layer_column = LAYER_COLUMN
        while metadata is not None and layer_column in [str(k) for k in metadata]:
            layer_column = f"({layer_column})"
        chosen = np.full(n_total, "", dtype=object)
        if n:
            chosen[doc_index] = [f"layer {k}" for k in
                                 np.argmax(layered.layer_posterior(Xc), axis=1)]
        metadata = {**(metadata or {}), layer_column: chosen}
        if color_by is None and versus is None:
            color_by = layer_column
    time_name, dates = None, None
    sliced = getattr(model, "_sliced", None)
    if time is not None:
        if X is None:
            raise ValueError("time gives the documents' dates: pass X (or corpus=) too")
        if isinstance(time, str):
            have = [] if metadata is None else [str(k) for k in metadata]
            if time not in have:
                raise ValueError(f"time={truncate_text(time, MAX_NAME_CHARS)!r} is not a "
                                 f"metadata column (the columns: {have[:20]})")
            key = next(k for k in metadata if str(k) == time)
            time_name, raw_dates = time, metadata[key]
            metadata = {k: v for k, v in metadata.items() if k is not key} or None
        else:
            time_name, raw_dates = "date", time
        raw_dates = np.asarray(raw_dates)
        if raw_dates.ndim == 1 and raw_dates.shape[0] != n_total:
            raise ValueError(f"time must hold one date per document ({n_total}), got "
                             f"{raw_dates.shape[0]}")
        dates = parse_dates(pick(raw_dates) if raw_dates.ndim == 1 else raw_dates, "time")
        if sliced is not None:       # the slider's periods are the model's
            if not (isinstance(period, str) and period in ("auto", sliced.period_)):
                raise ValueError(f"period={period!r}: a time-sliced grid has one grid per "
                                 f"{sliced.period_}; leave period='auto'")
            period = sliced.period_ if sliced.period_ != "all" else "auto"
            model.__dict__["_doc_periods"] = sliced.periods(dates)
        period_name, period_of, period_labels, _ = period_codes(dates, period, "period")
    elif not (isinstance(period, str) and period == "auto"):
        raise ValueError(f"period={period!r} chooses the periods of time=: pass time too")
    elif sliced is not None and X is not None:
        raise ValueError("time: a time-sliced grid places each document under its "
                         "period's grid; pass the documents' dates (a metadata column or "
                         "one date per document)")
    lumped = set()
    raw_names = [] if metadata is None else [str(k) for k in metadata]
    shown_names = _truncate_all(raw_names, MAX_NAME_CHARS, distinct=True)
    levels_of = None
    if levels is not None:
        if isinstance(color_by, str) and color_by in raw_names:
            levels_of = color_by
        elif isinstance(color_by, str) and color_by in shown_names:
            levels_of = raw_names[shown_names.index(color_by)]
        elif not (color_by == "label embedding" and label is not None):
            raise ValueError(f"levels choose the coloured levels of color_by, which is "
                             f"{color_by!r}: pass color_by= a categorical metadata column "
                             "(or 'label embedding' of a classifier)")
    columns = _metadata_columns(None if metadata is None else
                                {k: pick(np.asarray(v) if np.ndim(v) == 1 else v)
                                 for k, v in metadata.items()}, n, lumped, levels, levels_of)

    # ---- words: top words per cell (by pi * f, countgrid.grid.word_weights) and the
    # search index; the df of idf is the whole corpus's, not the sample's
    idf_weights = None
    if isinstance(weighting, str) and weighting == "idf":
        f = idf_weights = smooth_idf(Xc if n == n_total else X)
    else:
        f = word_weights(pi, weighting, prior=getattr(model, "prior_", None), window=window)
    top, tops, topw = _top_words_by_block(pi2, f, min(n_words, Z))
    weighting_name = weighting if isinstance(weighting, str) else "custom"
    weighting_name = "probability" if weighting_name == "pi" else weighting_name
    search_offsets, search_cells_ = search_cells(pi2)
    period_words = None
    if sliced is not None and dates is not None:
        # each period's own words, shown when the slider stands on one period
        period_words = [_top_words_by_block(
            np.asarray(pi_p).reshape(L, Z),
            idf_weights if idf_weights is not None else
            word_weights(pi_p, weighting, window=window), min(n_words, Z))
            for pi_p in np.asarray(sliced.pi_)]
    layers_data = None
    if layered is not None:
        n_layers = np.shape(layered.pi_)[0]
        layers_data = {"names": [f"layer {k}" for k in range(n_layers)],
                       "colors": level_colors(n_layers),
                       "top_layers": word_layers(layered, top).astype(np.uint8)}

    # ---- colourings known before the documents' posteriors: a classifier's label
    # embedding, and the names of the documents' colourings
    colorings = []
    if label is not None:
        gamma, classes = label
        if gamma.ndim == 3:
            G = gamma.reshape(L, -1)
            tot = G.sum(axis=1, keepdims=True)
            P = np.divide(G, tot, out=np.full_like(G, 1.0 / G.shape[1]), where=tot > 0)
            names = [str(c) for c in classes] if classes is not None else \
                [f"class {c}" for c in range(G.shape[1])]
            # a colour per class up to MAX_LEVELS (or the levels chosen); the rest summed
            # into "other"
            keep, lump = choose_levels(names, G.sum(axis=0),
                                       levels if color_by == "label embedding" else None,
                                       MAX_LEVELS, "levels")
            shown_levels = _truncate_all([names[k] for k in keep], MAX_LABEL_CHARS,
                                         distinct=True)
            if lump:
                rest = np.setdiff1d(np.arange(len(names)), keep)
                P = np.concatenate([P[:, keep], P[:, rest].sum(axis=1, keepdims=True)], axis=1)
                shown_levels.append(OTHER if OTHER not in shown_levels else f"({OTHER})")
            colorings.append({"name": "label embedding", "kind": "categorical",
                              "levels": shown_levels, "lumped": bool(lump),
                              "colors": level_colors(len(shown_levels), lump),
                              "values": np.ascontiguousarray(P).astype(np.float32)})
        else:
            if levels is not None and color_by == "label embedding":
                raise ValueError("levels: the label embedding of a regressor is continuous "
                                 "(a colour bar), it has no levels to choose")
            g = gamma.reshape(L)
            colorings.append({"name": "label embedding", "kind": "continuous",
                              "values": g.astype(np.float32),
                              "vmin": float(np.min(g)), "vmax": float(np.max(g))})
    # the names shown: cut, and kept distinct; color_by may give the name as passed
    shown = dict(zip([c[0] for c in columns],
                     _truncate_all([c[0] for c in columns], MAX_NAME_CHARS, distinct=True)))
    if isinstance(color_by, str) and color_by in shown:
        color_by = shown[color_by]
    coloring_names = [c["name"] for c in colorings] + \
        ([shown[c[0]] for c in columns] if n else [])
    if color_by is not None and color_by not in coloring_names:
        raise ValueError(f"color_by={color_by!r} is not a colouring of this map; choose one "
                         f"of {coloring_names} (metadata columns, 'label embedding' for a "
                         f"classifier)")
    cap = min(MAX_POSITIONS, L)
    if n:
        check_memory(8 * n * (cap + 4), f"the map data of {n} documents",
                     "pass max_docs= to sample the documents")
    pos_dtype = np.uint16 if L <= 1 << 16 else np.uint32
    region_data = region_levels(model, vocabulary, "probability" if f is None else f)

    def result(documents, colorings, time_data, compare, color_by):
        return {
            "title": truncate_text(title, MAX_TITLE_CHARS),
            "escape_formulas": bool(escape_formulas),
            "extent": np.asarray(extent, dtype=np.int64),
            "window": np.asarray(window, dtype=np.int64),
            "n_features": Z,
            "n_documents": n,
            "n_documents_total": n_total,
            "vocabulary": vocabulary,
            "weighting": weighting_name,
            "relevance_lambda": RELEVANCE_LAMBDA,
            "idf": weighting_name == "idf",
            "idf_weights": None if idf_weights is None else idf_weights.astype(np.float32),
            "top_words": top.astype(np.int64),
            "top_weights": topw.astype(np.float32),
            "top_scores": tops.astype(np.float32),
            "search_fraction": SEARCH_FRACTION,
            "search_offsets": search_offsets,
            "search_cells": search_cells_.astype(pos_dtype),
            "posterior_mass": POSTERIOR_MASS,
            "max_positions": cap,
            "list_length": LIST_LENGTH,
            **documents,
            "rank_depth": window_depth(window).ravel(),
            "rank_decimals": RANK_DECIMALS,
            "titles": titles,
            "snippets": snippets,
            "links": links,
            "ids": ids,
            "colorings": colorings,
            "regions": region_data,
            "color_by": color_by,
            "time": time_data,
            "compare": compare,
            "layers": layers_data,
        }

    no_documents = {"doc_index": np.zeros(0, dtype=np.int64),
                    "doc_offsets": np.zeros(1, dtype=np.int64),
                    "doc_positions": np.zeros(0, dtype=pos_dtype),
                    "doc_posteriors": np.zeros(0, dtype=np.float32),
                    "doc_map": np.zeros(0, dtype=pos_dtype),
                    "doc_loglik": np.zeros(0, dtype=np.float32)}
    preview = result(no_documents, list(colorings), None, None,
                     color_by if color_by in [c["name"] for c in colorings] else None)
    # its own region names (annotations rename them in place)
    preview["regions"] = [dict(lev, names=list(lev["names"])) for lev in region_data]
    yield preview, coloring_names, color_by

    # ---- documents: truncated posteriors, MAP corners, colouring statistics
    counts_pos, pos_parts, q_parts, map_parts = [], [], [], []
    stats = {}
    for name, kind, vals, lev in columns:
        if kind == "categorical":
            stats[name] = np.zeros((len(lev), L))
        else:
            stats[name] = np.zeros((2, L))
    time_stats = None if dates is None else np.zeros((len(period_labels), L))
    if n:
        threads = effective_n_threads(model.num_threads)

        def truncate(q):       # rows of posteriors -> their largest entries
            part, vals = largest_posteriors(q, cap, threads)   # descending, ties by lower cell
            map_parts.append(part[:, 0])
            vals = vals.astype(np.float64)
            total = q.sum(axis=1, dtype=np.float64, keepdims=True)
            enough = np.cumsum(vals, axis=1) >= POSTERIOR_MASS * total
            m = np.where(enough.any(axis=1), np.argmax(enough, axis=1) + 1, cap)
            keep = np.arange(cap)[None, :] < m[:, None]
            counts_pos.append(m)
            pos_parts.append(part[keep])
            q_parts.append(vals[keep].astype(np.float32))

        rows = max(1, _TRUNCATE_ELEMENTS // cap)

        def visit(t0, t1, qb, llb):
            # the block in the grid's dtype: a float64 copy of each float32 block cost
            # half as much time as the E-step that made it (100,000 documents, 48x48)
            for r0 in range(0, t1 - t0, rows):     # every row on its own: same result
                truncate(qb[r0:r0 + rows])
            for name, kind, values, lev in columns:
                v = values[t0:t1]
                if kind == "categorical":
                    onehot = np.zeros((len(lev), t1 - t0), dtype=qb.dtype)
                    onehot[v, np.arange(t1 - t0)] = 1.0
                    stats[name] += onehot @ qb
                else:    # any finite float64 value, so the product is float64
                    ok = np.isfinite(v)
                    stats[name][0] += np.where(ok, v, 0.0) @ qb
                    stats[name][1] += ok.astype(qb.dtype) @ qb
            if time_stats is not None:       # each period's document mass (per corner)
                add_group_corners(time_stats, period_of[t0:t1], qb)

        visit_posteriors(model, Xc, visit)
    doc_offsets = np.zeros(n + 1, dtype=np.int64)
    if n:
        np.cumsum(np.concatenate(counts_pos), out=doc_offsets[1:])
    doc_positions = (np.concatenate(pos_parts) if pos_parts else np.zeros(0)).astype(pos_dtype)
    doc_posteriors = np.concatenate(q_parts) if q_parts else np.zeros(0, np.float32)
    doc_map = (np.concatenate(map_parts) if map_parts else np.zeros(0)).astype(pos_dtype)
    # the tie-break of the document lists: log-likelihood per token in the MAP window
    # (countgrid.grid.window_loglik without checking Xc and the MAP windows a second time)
    doc_loglik = model._window_loglik(Xc, doc_map.astype(np.int64)) if n else np.zeros(0)

    for name, kind, values, lev in columns:
        if n == 0:
            continue
        C = window_coverage(stats[name], extent, window)
        if kind == "categorical":
            tot = C.sum(axis=0, keepdims=True)
            P = np.divide(C, tot, out=np.full_like(C, 1.0 / C.shape[0]), where=tot > 0)
            colorings.append({"name": shown[name], "kind": "categorical", "levels": lev,
                              "lumped": name in lumped,
                              "colors": level_colors(len(lev), name in lumped),
                              "values": np.ascontiguousarray(P.T).astype(np.float32),
                              "counts": np.bincount(values, minlength=len(lev))
                              .astype(np.int64),
                              # each cell's document mass (compare_groups' y summed over
                              # the levels): level masses are values x mass
                              "mass": (tot[0] / float(np.prod(window))).astype(np.float32),
                              "doc_levels": np.asarray(values).astype(
                                  np.uint8 if len(lev) <= 256 else np.uint16)})
        else:
            mean = np.divide(C[0], C[1], out=np.full(L, np.nan), where=C[1] > 0)
            finite = mean[np.isfinite(mean)]
            colorings.append({"name": shown[name], "kind": "continuous",
                              "values": mean.astype(np.float32),
                              "vmin": float(finite.min()) if finite.size else 0.0,
                              "vmax": float(finite.max()) if finite.size else 1.0,
                              # each document's value (NaN: missing), for the filters
                              "doc_values": np.asarray(values, dtype=np.float32)})
    time_data = None
    if dates is not None:
        # countgrid.grid.shares_by_period's mass, from the same pass of posteriors
        mass = cell_masses(time_stats, extent, window) if len(period_labels) \
            else np.zeros((0, L))
        time_data = {"name": truncate_text(time_name, MAX_NAME_CHARS), "period": period_name,
                     "labels": period_labels,
                     "counts": np.bincount(period_of[period_of >= 0],
                                           minlength=len(period_labels)).astype(np.int64),
                     "n_undated": int((period_of < 0).sum()),
                     "doc_periods": period_of.astype(np.int16 if len(period_labels) < 32767
                                                     else np.int32),
                     "mass": np.ascontiguousarray(mass).astype(np.float32)}
        if period_words is not None:
            fitted = {str(v): k for k, v in enumerate(np.asarray(sliced.period_labels_))}
            time_data.update({
                "grids": np.array([fitted.get(v, -1) for v in period_labels], dtype=np.int32),
                "top_words": np.stack([w[0] for w in period_words]).astype(np.int32),
                "top_scores": np.stack([w[1] for w in period_words]).astype(np.float32),
                "top_weights": np.stack([w[2] for w in period_words]).astype(np.float32)})
    if layers_data is not None and layer_column is not None:
        # the documents' layer colouring in the words' colours, whatever layers it lacks
        for col in colorings:
            if col["name"] == shown.get(layer_column) and not col.get("lumped"):
                col["colors"] = np.asarray([layers_data["colors"][int(v.split()[-1])]
                                            for v in col["levels"]], dtype=np.uint8)
    region_data = add_document_shares(region_data, window_centre_cells(doc_map, extent, window))
    yield result({"doc_index": doc_index, "doc_offsets": doc_offsets,
                  "doc_positions": doc_positions, "doc_posteriors": doc_posteriors,
                  "doc_map": doc_map, "doc_loglik": doc_loglik.astype(np.float32)},
                 colorings, time_data, compare, color_by)
