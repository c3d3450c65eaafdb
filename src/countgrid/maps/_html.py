"""One self-contained HTML file: template + inlined CSS/JS + the data of :func:`map_data`.

The data travel in two parts (countgrid.maps._parts): the map part in a block before the
script, the documents part in a block after it (or in a bundle's chunk files).  Each part
is a payload: a JSON header in which every numpy array is replaced by
``{"$a": [dtype, byte offset, length]}`` into a binary blob of little-endian typed arrays
(4-byte aligned).  Maps whose payload is small are embedded as plain JSON (arrays as
``{"$a": [dtype, [values]]}``), readable by any browser; larger ones as
``uint32 header length | header | blob``, gzip-compressed and base64-encoded, which the
page decodes with ``DecompressionStream("gzip")`` (docs/map.md).
"""
import base64
import gzip
import html
import json
import math
import os
import pathlib
import re
from importlib import resources

import numpy as np

from countgrid._utils.atomic import atomic_write
from countgrid._utils.docs import fill_doc
from countgrid.maps._annotations import apply_annotations
from countgrid.maps._data import DOCUMENTS_DOC, map_data
from countgrid.maps._parts import split_documents

__all__ = ["write_html", "render_html", "render_host_page", "encode_payload", "encode_binary"]

#: Payloads up to this many bytes are embedded as plain JSON when data_format="auto".
JSON_LIMIT = 256 * 1024

_JS_TYPES = {  # numpy dtype -> (name of the JavaScript typed array, dtype sent)
    "uint8": ("Uint8Array", "<u1"), "uint16": ("Uint16Array", "<u2"),
    "uint32": ("Uint32Array", "<u4"), "int32": ("Int32Array", "<i4"),
    "float32": ("Float32Array", "<f4"), "float64": ("Float64Array", "<f8"),
}


def _wire(arr):
    """The array as sent: int64 as int32/uint32 (JavaScript has no 64-bit typed array
    without BigInt), bool as uint8."""
    arr = np.asarray(arr)
    if arr.dtype.kind == "b":
        arr = arr.astype(np.uint8)
    elif arr.dtype.kind in "iu" and arr.dtype.itemsize == 8:
        lo, hi = (int(arr.min()), int(arr.max())) if arr.size else (0, 0)
        if lo >= 0 and hi < 2**32:
            arr = arr.astype(np.uint32)
        elif -2**31 <= lo and hi < 2**31:
            arr = arr.astype(np.int32)
        else:
            raise ValueError(f"an integer array of the map does not fit 32 bits ({lo}..{hi})")
    elif arr.dtype.kind == "i" and arr.dtype.itemsize < 4:
        arr = arr.astype(np.int32)
    if str(arr.dtype) not in _JS_TYPES:
        raise TypeError(f"cannot embed an array of dtype {arr.dtype}")
    return np.ascontiguousarray(arr.ravel())


def encode_binary(data):
    """The data as ``uint32 header length | JSON header | binary blob`` (bytes): the layout
    of a gzip part once decompressed, and what the notebook widget sends as it is."""
    return _encode(data, "binary")


def encode_payload(data, data_format="auto"):
    """(format, text) of the data: format "json" (plain JSON) or "gzip" (base64)."""
    if data_format not in ("auto", "json", "gzip"):
        raise ValueError(f"data_format must be 'auto', 'json' or 'gzip', got {data_format!r}")
    return _encode(data, data_format)


def _encode(data, data_format):
    blobs, size = [], [0]

    def binary(node):
        if isinstance(node, np.ndarray):
            arr = _wire(node)
            js, wire = _JS_TYPES[str(arr.dtype)]
            pad = (-size[0]) % 8
            if pad:
                blobs.append(b"\0" * pad)
                size[0] += pad
            raw = arr.astype(wire).tobytes()
            ref = {"$a": [js, size[0], int(arr.size)]}
            blobs.append(raw)
            size[0] += len(raw)
            return ref
        return _walk(node, binary)

    def plain(node):
        if isinstance(node, np.ndarray):
            arr = _wire(node)
            js = _JS_TYPES[str(arr.dtype)][0]
            values = [None if isinstance(v, float) and not math.isfinite(v) else v
                      for v in arr.tolist()] if arr.dtype.kind == "f" else arr.tolist()
            return {"$a": [js, values]}
        return _walk(node, plain)

    fmt = data_format
    if fmt == "auto":
        header = json.dumps(binary(data), ensure_ascii=False, allow_nan=False)
        fmt = "json" if len(header.encode()) + size[0] <= JSON_LIMIT else "gzip"
    if fmt == "json":
        return "json", json.dumps(plain(data), ensure_ascii=False, allow_nan=False,
                                  separators=(",", ":"))
    blobs.clear()
    size[0] = 0
    header = json.dumps(binary(data), ensure_ascii=False, allow_nan=False,
                        separators=(",", ":")).encode()
    raw = len(header).to_bytes(4, "little") + header + b"".join(blobs)
    if fmt == "binary":
        return raw
    # mtime=0: the same map gives the same bytes
    return "gzip", base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode()


#: Lone surrogates: file names that are not UTF-8 (os.fsdecode's surrogateescape) or
#: broken text; UTF-8 cannot encode them, the page shows U+FFFD instead.
_SURROGATES = re.compile("[\ud800-\udfff]")


def _text(s):
    return _SURROGATES.sub("\ufffd", s)


def _utf8_encodable(s):
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _walk(node, f):
    if isinstance(node, str):
        return _text(node)
    if isinstance(node, dict):
        return {_text(str(k)): f(v) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        if node and set(map(type, node)) == {str}:
            # a list of texts (titles, snippets: 100,000 of them) checked at once: ASCII
            # (known without a scan) or UTF-8-encodable text holds no lone surrogate
            joined = "".join(node)
            if joined.isascii() or _utf8_encodable(joined):
                return list(node)
            return [_text(v) for v in node]
        return [f(v) for v in node]
    if isinstance(node, (np.integer,)):
        return int(node)
    if isinstance(node, (np.floating, float)):
        v = float(node)
        return v if math.isfinite(v) else None
    if isinstance(node, np.bool_):
        return bool(node)
    return node


def _asset(name):
    return resources.files("countgrid.maps").joinpath("assets", name).read_text("utf-8")


def _script_safe(text):
    # Inside <script>, "</" could close the element and "<!--" start an escaped section;
    # U+2028 and U+2029 end a line in JavaScript before ES2019.  The spellings below mean
    # the same in JSON strings and JavaScript string literals, where alone they can occur
    return (text.replace("</", "<\\/").replace("<!--", "\\u003c!--")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _data_element(element_id, fmt, payload):
    text = payload if fmt == "gzip" else _script_safe(payload)
    return (f'<script id="{element_id}" type="application/octet-stream" '
            f'data-format="{fmt}">{text}</script>')


def render_host_page(title):
    """The page of the notebook widget: the map's template, style and script with an empty
    data block of format "host" (the page asks its parent frame for the data; docs/map.md,
    "The notebook widget")."""
    return _fill(title, '<script id="cg-data" type="application/octet-stream" '
                        'data-format="host"></script>', "")


def render_html(data, data_format="auto", bundle_files=None):
    """The page's text for the data of :func:`map_data`.

    The map part (what the first frame needs) comes before the script, the documents part
    after it, so that the page draws before it reads the documents (docs/map.md, "Size
    and speed").  ``bundle_files``: the relative paths of a bundle's document chunks, which
    the page loads instead (:func:`write_bundle`)."""
    head, docs = split_documents(data)
    if bundle_files is not None:
        head["bundle"] = {"files": list(bundle_files)}
    docs_block = ""
    if bundle_files is None:
        docs_block = _data_element("cg-documents", *encode_payload(docs, data_format))
    return _fill(data["title"], _data_element("cg-data", *encode_payload(head, data_format)),
                 docs_block)


def _fill(title, data_block, docs_block):
    page = _asset("template.html")
    parts = {
        "{{TITLE}}": html.escape(_text(title)),
        "{{CSS}}": _asset("map.css"),
        "{{JS}}": _script_safe(_asset("map.js")),
        "{{DATA}}": data_block,
        "{{DOCS}}": docs_block,
    }
    for key in parts:
        if key not in page:
            raise RuntimeError(f"the map template lacks {key}")
    # one pass: a title or data containing "{{JS}}" is not expanded again
    return re.sub(r"\{\{(TITLE|CSS|JS|DATA|DOCS)\}\}",
                  lambda m: parts[m.group(0)], page)


@fill_doc(documents=DOCUMENTS_DOC)
def write_html(grid, path, X=None, *, corpus=None, feature_names=None, titles=None,
               snippets=None, links=None, ids=None, metadata=None, color_by=None, levels=None,
               n_words=10, weighting="relevance", idf=False, max_docs=None, random_state=0,
               title="countgrid map", data_format="auto", escape_formulas=True, time=None,
               period="auto", annotations=None, versus=None,
               names=("this corpus", "the other corpus")):
    """Write the interactive map of a fitted 2-D counting grid as one offline HTML file.

    The page opens from ``file://`` with no network (no CDN, no server): each cell shows
    its most relevant words (``weighting``); wheel zoom and drag pan wrap around the torus;
    a search box lights the cells where a word lives; clicking a cell lists the documents
    whose windows cover it, those centred there surely first, ranked as
    :meth:`CountingGrid.documents_near`; hovering a document outlines its MAP window; cells
    can be coloured by a metadata column or the label embedding (a colour per level up to
    50); the list exports as CSV and the view as PNG (docs/map.md).

    The corpus may come from anyone (docs/map.md, "Untrusted corpora"): every text is
    cut at a stated length, links other than ``http:``, ``https:`` and relative ones are
    dropped (:func:`safe_link`), all text reaches the page as text (never markup), and
    the CSV export neutralises spreadsheet formulas (``escape_formulas``).

    Parameters
    ----------
    grid : CountingGrid or CountingGridClassifier
        Fitted, 2-D.  A classifier's ``grid_`` is shown and its label embedding
        ``gamma_`` offered as a colouring ("label embedding").
    path : str or path-like
        The file to write (``.html``).
    {documents}
    titles, snippets, links, ids : sequence of str, optional
        One per document (defaults: "document i", none, none, the row index).  Titles
        are cut at :data:`MAX_TITLE_CHARS` (200) characters, ids at
        :data:`MAX_ID_CHARS` (100), snippets at :data:`MAX_SNIPPET_CHARS` (1000), with an
        ellipsis (:func:`truncate_text`; ids, words, levels and names that cutting made
        equal are numbered, ``"… (2)"``).  A link is kept only when :func:`safe_link`
        allows it (``http:``, ``https:`` or relative, at most :data:`MAX_LINK_CHARS`
        characters); otherwise the title is shown as plain text.
    metadata : dict of str -> 1-D array, optional
        Colourings: strings (or bools) are categorical (legend; a colour per level up to
        50 levels, else the 49 most frequent and the rest "other"), numbers continuous
        (colour bar; NaN = missing).  A cell's colour is the coverage-weighted class distribution or
        mean over documents.  Names are cut at :data:`MAX_NAME_CHARS` (100) characters,
        levels at :data:`MAX_LABEL_CHARS` (100).
    color_by : str, optional
        The colouring shown at start (a metadata name, as passed or as shown, or
        "label embedding").
    levels : sequence of str, optional
        The levels of the ``color_by`` colouring that get a colour of their own, in this
        order (at most 64); the other documents are "other" (grey).
    n_words : int, default=10
        Words stored per cell (the page shows as many as fit at the current zoom).
    weighting : {"relevance", "probability", "lift", "idf"} or array-like, \
default="relevance"
        How a cell ranks its words (:func:`countgrid.grid.word_weights`): LDAvis'
        relevance with lambda = :data:`countgrid.grid.RELEVANCE_LAMBDA` (words frequent
        in the cell and specific to it), the most probable words (the ranking until
        0.2.0.dev0), the lift, ``pi * idf`` (smooth idf over X), or one factor per word.  Font
        sizes follow ``pi``.
    idf : bool, default=False
        The same as ``weighting="idf"``.
    max_docs : int, optional
        Keep a seeded random sample of this many documents (larger corpora).
    random_state : int, default=0
        Seed of that sample.
    title : str, default="countgrid map"
        The title of the page (cut at :data:`MAX_TITLE_CHARS`).
    data_format : {"auto", "json", "gzip"}, default="auto"
        How the data are embedded: plain JSON for small maps, else gzip + base64.
    escape_formulas : bool, default=True
        The CSV export writes a text cell (id, title, link, snippet) whose first character
        is one of ``= + - @``, tab or carriage return with a leading apostrophe ``'``, so
        that a spreadsheet does not run it as a formula (OWASP "CSV Injection"); False
        exports the texts as they are.
    time : str or array-like of shape (n_documents,), optional
        The documents' dates for the time slider (docs/map.md, "Time"): a metadata
        column's name (then not a colouring) or one date per document (ISO 8601 strings,
        Unix timestamps in seconds, ``datetime``/``datetime64``; missing dates are left
        out of the periods).
    period : {"auto", "day", "week", "month", "year"}, default="auto"
        The slider's periods ("auto": the finest giving at most 60 periods).
    annotations : str, path-like or dict, optional
        Region names and cell notes saved from a map of this grid ("Save notes";
        :func:`read_annotations`; docs/map.md, "Names and notes"): the regions get those
        names, the cells those notes.
    versus : Corpus or count matrix, optional
        A second corpus over the same words: the map holds both, coloured by "corpus",
        and opens on where they differ (docs/map.md, "Two corpora"; :func:`map_data`).
    names : pair of str, default=("this corpus", "the other corpus")
        The two corpora's names.

    Returns
    -------
    pathlib.Path
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"path must be a file name (str or os.PathLike), got "
                        f"{type(path).__name__}")
    path = pathlib.Path(os.fsdecode(path))
    if not path.name or path.name in (".", ".."):
        raise ValueError(f"path {str(path)!r} is not a file name: give one such as map.html")
    data = map_data(grid, X, corpus=corpus, feature_names=feature_names, titles=titles,
                    snippets=snippets, links=links, ids=ids, metadata=metadata,
                    color_by=color_by, levels=levels, n_words=n_words, weighting=weighting,
                    idf=idf, max_docs=max_docs,
                    random_state=random_state, title=title,
                    escape_formulas=escape_formulas, time=time, period=period,
                    versus=versus, names=names)
    if annotations is not None:
        apply_annotations(data, annotations)
    page = render_html(data, data_format)
    with atomic_write(path, "w", encoding="utf-8") as fh:     # docs/security.md, "Writing"
        fh.write(page)
    return path


def grid_to_html(grid, path=None, X=None, **kwargs):
    """``CountingGrid.to_html``: :func:`write_html` to ``path``, or the page as a str when
    ``path`` is None (registered with countgrid.grid by ``countgrid.maps``)."""
    if path is None:
        data_format = kwargs.pop("data_format", "auto")
        annotations = kwargs.pop("annotations", None)
        data = map_data(grid, X, **kwargs)
        if annotations is not None:
            apply_annotations(data, annotations)
        return render_html(data, data_format)
    return write_html(grid, path, X, **kwargs)
