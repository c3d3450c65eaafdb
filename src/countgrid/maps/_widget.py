"""The map as a notebook widget (docs/map.md, "The notebook widget"): :func:`widget`.

The widget is an ``anywidget`` (the optional extra ``countgrid[notebook]``), so that it
runs wherever Jupyter widgets do (JupyterLab, Notebook 7, VS Code, Colab, marimo) with no
build step.  Its view (assets/widget.js) holds the map's own page, the one
:func:`countgrid.maps.write_html` writes, in a sandboxed frame: one source of the map's
JavaScript and styles, isolated from the notebook.  The data travel as two binary buffers
(:func:`countgrid.maps._html.encode_binary`), not JSON.

The frame reports what is selected in it (a clicked cell, a rectangle, a lasso) as cells;
the kernel side ranks the documents of those cells itself, with the rules of the page
(:func:`selection_table`), so that ``w.selection`` is what Python computes.

A large corpus's documents are placed (their E-step) in a thread after :func:`widget`
returns: the frame shows the map without them first (`countgrid.maps._data.map_stages`'
preview), and the whole map once they are in.
"""
import threading
import time

import numpy as np

from countgrid.grid._browse import check_cell
from countgrid.maps._annotations import apply_annotations
from countgrid.maps._data import map_stages, rank_documents, window_centre_cells
from countgrid.maps._html import _asset, encode_binary, render_host_page
from countgrid.maps._parts import split_documents

__all__ = ["widget", "selection_table", "highlight_cells"]

INSTALL_HINT = ("the notebook widget needs anywidget: pip install 'countgrid[notebook]' "
                "(countgrid.maps.embed shows the map without it)")


def _widget_class():
    try:
        import anywidget
        import traitlets
    except ImportError as err:
        raise ImportError(INSTALL_HINT) from err
    global _MapWidget
    if _MapWidget is None:
        _MapWidget = _define(anywidget, traitlets)
    return _MapWidget


_MapWidget = None
#: The tallest widget, in pixels.
MAX_HEIGHT = 20_000
#: Documents x cells above which the documents are placed in a thread after
#: :func:`widget` returns, the map shown without them meanwhile (about 0.3 s of E-step
#: and truncation on 2 cores; docs/map.md, "The notebook widget").
BACKGROUND_WORK = 20_000_000


def widget(grid, X=None, *, height=640, background=None, **kwargs):
    """The interactive map of a fitted 2-D grid as a notebook widget, with two-way
    selection.

    The map of :func:`countgrid.maps.write_html` (zoom, pan, search, colourings, regions,
    time, filters), inside the notebook's output and sized to its width.  What is
    selected in it (a clicked cell, a shift-dragged rectangle, a lasso drawn with the
    "Lasso" button or alt-drag) is ``w.selection`` in Python, a table of its documents;
    ``w.highlight = [...]`` lights words, documents or cells in it from Python, and
    ``w.color_by = "column"`` recolours it.  Needs ``anywidget`` (``pip install
    'countgrid[notebook]'``); without it a fitted grid still shows a static preview.

    Parameters
    ----------
    grid : CountingGrid or CountingGridClassifier
        Fitted, 2-D.
    X : {array-like, sparse matrix} of shape (n_documents, n_features), optional
        The documents (usually the training data).
    height : int, default=640
        The height of the map in pixels (at least 100); its width is the output's.
    background : bool, optional
        Whether a thread places the documents (their E-step) after ``widget()`` returns,
        the map shown without them meanwhile (``ready``, below).  Default: for more than
        20 million documents x cells.  False places them before it returns, for a
        notebook front-end that cannot update a widget from a thread.
    **kwargs
        The keyword arguments of :func:`countgrid.maps.write_html` but ``data_format``
        (``corpus``, ``feature_names``, ``titles``, ``metadata``, ``color_by``, ``time``,
        ``annotations``, ...).

    Returns
    -------
    MapWidget
        An ``anywidget.AnyWidget`` with the traits

        - ``selection``: the documents selected in the map, best first (read-only,
          observable with ``w.observe(callback, names="selection")`` or
          ``w.on_select(callback)``): a ``pandas.DataFrame`` when pandas is installed, else a dict
          of arrays, with the columns ``document`` (row of X), ``id``, ``title``,
          ``row``, ``col`` (the cell at the centre of its most probable window),
          ``score`` and one column per metadata column.  For a clicked cell, the
          documents whose windows cover it with ``score`` = how central the cell is in
          the document's window (:func:`countgrid.maps.rank_documents`, the page's list);
          for a rectangle or a lasso, the documents whose most probable window is
          centred in a selected cell, by row, with ``score`` = the posterior probability
          that the window is centred there.  Documents a time range or a filter of the
          page hides are left out.
        - ``selected_cells``: the selected cells, ``(row, col)`` pairs (read-only).
        - ``selection_kind``: ``"cell"``, ``"cells"`` or ``""`` (nothing selected).
        - ``highlight``: what Python lights (as the page's search does): words of the
          vocabulary, documents (rows of X as ints, or ids as str) and cells
          (``(row, col)``), or a dict ``{"words": [...], "documents": [...],
          "ids": [...], "cells": [...]}``; ``[]`` clears it.
        - ``color_by``: the colouring shown (a metadata column, ``""`` for none); kept
          in step with the page's menu.
        - ``height``: the height in pixels.
        - ``ready``: whether the documents are placed (read-only, observable; its
          observers run in the thread that placed them).  With ``background`` (by
          default above 20 million documents x cells,
          ``countgrid.maps._widget.BACKGROUND_WORK``), a thread places them (their
          E-step) after ``widget()`` returns and the map shows without them meanwhile
          (docs/map.md, "The notebook widget"); else they are placed before it returns.

        and the methods ``on_select(callback)`` (called with each new selection),
        ``documents_at(cells, kind="cells")`` (the table of cells chosen in Python) and
        ``wait(timeout=None)`` (until ``ready``; raises what placing the documents
        raised).  Setting ``highlight`` and ``documents_at`` wait by themselves.

    Raises
    ------
    ImportError
        Without anywidget.
    TypeError, ValueError
        As :func:`countgrid.maps.map_data`, and for a ``height`` that is not an int of at
        least 100.

    Examples
    --------
    >>> import countgrid
    >>> corpus = countgrid.datasets.load_news20_same(max_docs=300)   # doctest: +SKIP
    >>> grid = countgrid.CountingGrid(random_state=0).fit(corpus.counts)  # doctest: +SKIP
    >>> w = countgrid.widget(grid, corpus=corpus)                    # doctest: +SKIP
    >>> w                                      # the map, in the output   # doctest: +SKIP
    >>> w.selection                            # after a click or a lasso # doctest: +SKIP
    >>> w.highlight = ["space", "nasa"]                              # doctest: +SKIP
    """
    cls = _widget_class()
    if isinstance(height, bool) or not isinstance(height, (int, np.integer)) or \
            not 100 <= height <= MAX_HEIGHT:
        raise ValueError(f"height must be an int in [100, {MAX_HEIGHT}] pixels, got "
                         f"{height!r}")
    if "data_format" in kwargs:
        raise TypeError("data_format is not an argument of widget(): the widget sends "
                        "binary buffers")
    if background is not None and not isinstance(background, (bool, np.bool_)):
        raise TypeError(f"background must be True, False or None, got {background!r}")
    annotations = kwargs.pop("annotations", None)
    stages = map_stages(grid, X, **kwargs)
    preview, colourings, color_by = next(stages)    # every argument is checked here
    if annotations is not None:
        apply_annotations(preview, annotations)

    def finish():
        data = next(stages)
        return data if annotations is None else apply_annotations(data, annotations)

    metadata = kwargs.get("metadata")
    corpus = kwargs.get("corpus")
    if metadata is None and corpus is not None and kwargs.get("versus") is None:
        metadata = getattr(corpus, "metadata", None)
    if background is None:
        work = int(preview["n_documents"]) * int(np.prod(preview["extent"]))
        background = work > BACKGROUND_WORK
    return cls(preview, colourings, color_by, finish, metadata=metadata, height=int(height),
               background=bool(background))


def _centres(data):
    return window_centre_cells(np.asarray(data["doc_map"], dtype=np.int64),
                               tuple(int(e) for e in data["extent"]),
                               tuple(int(w) for w in data["window"]))


def selection_table(data, kind, cells, kept=None, metadata=None):
    """The documents of cells selected in the map, with the page's rules (the table of
    ``MapWidget.selection``).

    Parameters
    ----------
    data : dict
        The map's data (:func:`countgrid.maps.map_data`).
    kind : {"cell", "cells"}
        A clicked cell (the documents whose windows cover it, ranked as the page's list:
        :func:`countgrid.maps.rank_documents`) or an area (the documents whose most
        probable window is centred in one of the cells, by row).
    cells : sequence of int
        Flat C-order cells; one for ``"cell"``.
    kept : sequence of int, optional
        Rows of X the page shows (a time range or a filter hides the others); None: all.
    metadata : dict of str -> array-like, optional
        Columns added to the table, indexed by row of X.

    Returns
    -------
    dict of str -> ndarray
        ``document``, ``id``, ``title``, ``row``, ``col``, ``score`` and the metadata
        columns, one entry per document.

    Raises
    ------
    ValueError
        For an unknown ``kind`` or a cell outside the grid.
    """
    extent = tuple(int(e) for e in data["extent"])
    L = int(np.prod(extent))
    cells = np.asarray([check_cell(int(c), extent, "cells") for c in cells], dtype=np.int64)
    n = len(data["doc_index"])
    # map_data keeps the rows of X in order (all of them, or a sorted sample)
    doc_index = np.asarray(data["doc_index"], dtype=np.int64)
    centres = _centres(data)
    if kind == "cell":
        if len(cells) != 1:
            raise ValueError(f"a 'cell' selection has one cell, got {len(cells)}")
        rows, scores = rank_documents(data, int(cells[0]), n_documents=max(n, 1))
        where = np.searchsorted(doc_index, rows)
    elif kind == "cells":
        chosen = np.zeros(L, dtype=bool)
        chosen[cells] = True
        where = np.flatnonzero(chosen[centres])
        # P(the window is centred in a chosen cell) from the stored posteriors
        offsets = np.asarray(data["doc_offsets"], dtype=np.int64)
        pos_centres = window_centre_cells(np.asarray(data["doc_positions"], dtype=np.int64),
                                          extent, tuple(int(w) for w in data["window"]))
        mass = np.where(chosen[pos_centres], np.asarray(data["doc_posteriors"], np.float64), 0)
        per_doc = np.bincount(np.repeat(np.arange(n), np.diff(offsets)), weights=mass,
                              minlength=n)
        scores = per_doc[where]
        rows = doc_index[where]
    else:
        raise ValueError(f"kind must be 'cell' or 'cells', got {kind!r}")
    if kept is not None:
        keep = np.isin(rows, np.asarray(kept, dtype=np.int64))
        rows, scores, where = rows[keep], scores[keep], where[keep]
    centre = centres[where]
    table = {
        "document": rows.astype(np.int64),
        "id": np.asarray([data["ids"][t] for t in where], dtype=object),
        "title": np.asarray([data["titles"][t] for t in where], dtype=object),
        "row": (centre // extent[1]).astype(np.int64),
        "col": (centre % extent[1]).astype(np.int64),
        "score": np.asarray(scores, dtype=np.float64),
    }
    for name, values in (metadata or {}).items():
        column = np.asarray(values)
        if column.ndim == 1 and len(column) > (rows.max() if len(rows) else -1) \
                and str(name) not in table:
            table[str(name)] = column[rows]
    return table


def highlight_cells(data, items):
    """The cells and words lit by ``MapWidget.highlight`` (sorted flat cells, words).

    A word lights the cells the page's word search lights (``search_cells``: pi of the
    word at least half its largest value); a document lights the cell at the centre of
    its most probable window; a cell lights itself.

    Parameters
    ----------
    data : dict
        The map's data.
    items : sequence or dict
        Words (str of the vocabulary), documents (ints: rows of X; str that are not words
        of the vocabulary: ids), cells (pairs ``(row, col)``); or a dict with any of the
        keys ``"words"``, ``"documents"`` (rows), ``"ids"`` and ``"cells"``.  None or an
        empty list clears.

    Returns
    -------
    cells : list of int
    words : list of str

    Raises
    ------
    TypeError, ValueError
        Naming the item that is none of these (a word not in the vocabulary and no id, a
        row not in the map, a cell outside the grid).
    """
    extent = tuple(int(e) for e in data["extent"])
    vocab = list(data["vocabulary"])
    word_at = {w: j for j, w in reversed(list(enumerate(vocab)))}
    if items is None:
        return [], []
    if isinstance(items, dict):
        unknown = set(items) - {"words", "documents", "ids", "cells"}
        if unknown:
            raise ValueError(f"highlight: unknown keys {sorted(unknown)}; use 'words', "
                             f"'documents', 'ids' and 'cells'")
        groups = {k: list(_as_list(items.get(k), f"highlight {k!r}")) for k in
                  ("words", "documents", "ids", "cells")}
    else:
        groups = {"words": [], "documents": [], "ids": [], "cells": []}
        for item in _as_list(items, "highlight"):
            if isinstance(item, str):
                groups["words" if item in word_at else "ids"].append(item)
            elif isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
                groups["documents"].append(item)
            elif isinstance(item, (tuple, list, np.ndarray)) and len(item) == 2:
                groups["cells"].append(item)
            else:
                raise TypeError(f"highlight: {item!r} is not a word, a document (a row as "
                                f"int, an id as str) or a cell (row, col)")
    lit, words = set(), []
    offsets, search = data["search_offsets"], data["search_cells"]
    for w in groups["words"]:
        if not isinstance(w, str) or w not in word_at:
            raise ValueError(f"highlight: {w!r} is not a word of the vocabulary")
        j = word_at[w]
        lit.update(int(c) for c in search[offsets[j]:offsets[j + 1]])
        words.append(w)
    centres = _centres(data)
    doc_index = np.asarray(data["doc_index"], dtype=np.int64)
    row_at = {int(r): t for t, r in enumerate(doc_index)}
    for r in groups["documents"]:
        if isinstance(r, (bool, np.bool_)) or not isinstance(r, (int, np.integer)):
            raise TypeError(f"highlight: a document is a row of X as int, got {r!r}")
        if int(r) not in row_at:
            raise ValueError(f"highlight: document {int(r)} is not in the map (rows of X; a "
                             f"map made with max_docs holds a sample)")
        lit.add(int(centres[row_at[int(r)]]))
    if groups["ids"]:
        id_at = {}
        for t, i in enumerate(data["ids"]):
            id_at.setdefault(i, t)
        for i in groups["ids"]:
            if not isinstance(i, str) or i not in id_at:
                raise ValueError(f"highlight: {i!r} is neither a word of the vocabulary nor "
                                 f"a document id of the map")
            lit.add(int(centres[id_at[i]]))
    for cell in groups["cells"]:
        lit.add(check_cell(tuple(int(v) if isinstance(v, (int, np.integer)) and not
                                 isinstance(v, (bool, np.bool_)) else v for v in cell),
                           extent, "highlight cell"))
    return sorted(lit), words


def _as_list(value, name):
    if value is None:
        return []
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a list, got {type(value).__name__}")
    return list(value)


def _table(columns):
    """A pandas DataFrame of the columns when pandas is installed, else the dict."""
    try:
        import pandas as pd
    except ImportError:
        return columns
    return pd.DataFrame(columns)


def _define(anywidget, traitlets):
    t = traitlets

    class Checked(t.Any):
        """Any value, None included, goes to the trait's validator (traitlets' Any lets
        None past it whatever ``allow_none`` says)."""
        allow_none = False

    class MapWidget(anywidget.AnyWidget):
        """The map of a counting grid in a notebook (made by :func:`countgrid.widget`)."""

        _esm = _asset("widget.js")
        _page = t.Unicode("").tag(sync=True)
        _map_part = t.Bytes(b"").tag(sync=True)
        _documents_part = t.Bytes(b"").tag(sync=True)
        _highlight_state = t.Dict().tag(sync=True)
        _selection_state = t.Dict().tag(sync=True)
        _error = t.Unicode("").tag(sync=True)
        # Any, checked below: a wrong value raises TypeError/ValueError naming the trait
        # (traitlets' own types raise TraitError)
        height = Checked(640).tag(sync=True)
        color_by = Checked("").tag(sync=True)
        highlight = Checked(None)
        selection = t.Any(read_only=True)
        selected_cells = t.List(read_only=True)
        selection_kind = t.Unicode("", read_only=True)
        ready = t.Bool(False, read_only=True)

        def __init__(self, preview, colourings, color_by, finish, metadata=None, height=640,
                     background=False):
            self._data = None
            self._failure = None
            self._place_seconds = None
            self._done = threading.Event()
            self._metadata = dict(metadata) if metadata else None
            self._colourings = list(colourings)
            if background:      # the preview now, the whole map from the thread
                data, parts = None, {"_map_part": encode_binary(split_documents(preview)[0])}
            else:
                t0 = time.perf_counter()
                data, parts = self._whole(finish)
                self._place_seconds = time.perf_counter() - t0
            super().__init__(_page=render_host_page(preview["title"]), height=height,
                             color_by=color_by or "", **parts)
            # an empty selection's table (its columns), from the preview's empty documents
            self.set_trait("selection", _table(selection_table(preview, "cells", [], None,
                                                               self._metadata)))
            if background:
                threading.Thread(target=self._place, args=(finish,), daemon=True,
                                 name="countgrid-widget-documents").start()
            else:
                self._data = data
                self.set_trait("ready", True)
                self._done.set()

        @staticmethod
        def _whole(finish):
            """The whole map's data (its documents' E-step) and its two parts."""
            data = finish()
            head, docs = split_documents(data)
            return data, {"_map_part": encode_binary(head),
                          "_documents_part": encode_binary(docs)}

        def _place(self, finish):
            """:meth:`_whole` in the thread of a large corpus, then the frame's data."""
            t0 = time.perf_counter()
            try:
                data, parts = self._whole(finish)
            except BaseException as err:       # raised again by wait()
                self._failure = err
                self._error = f"the documents could not be placed: {err}"[:500]
                self._done.set()
                return
            self._data = data
            with self.hold_sync():              # one message: the page gets both parts
                self._map_part = parts["_map_part"]
                self._documents_part = parts["_documents_part"]
            self.set_trait("ready", True)
            self._place_seconds = time.perf_counter() - t0     # benchmarks/bench_widget.py
            self._done.set()

        def wait(self, timeout=None):
            """Wait until the documents are placed (``ready``); the widget.

            Parameters
            ----------
            timeout : float, optional
                Seconds; None waits as long as it takes.

            Raises
            ------
            TimeoutError
                When they are not placed within ``timeout``.
            Exception
                What placing them raised (a MemoryError, say).
            """
            if not self._done.wait(timeout):
                raise TimeoutError(f"the map's documents were not placed within {timeout} s")
            if self._failure is not None:
                raise self._failure
            return self

        @t.validate("height")
        def _check_height(self, proposal):
            v = proposal["value"]
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"height must be an int (pixels), got {type(v).__name__}")
            if not 100 <= v <= MAX_HEIGHT:
                raise ValueError(f"height must be in [100, {MAX_HEIGHT}] pixels, got {v}")
            return int(v)

        @t.validate("color_by")
        def _check_color(self, proposal):
            v = "" if proposal["value"] is None else proposal["value"]
            if not isinstance(v, str):
                raise TypeError(f"color_by must be a colouring's name (str) or None, got "
                                f"{type(v).__name__}")
            if v and v not in self._colourings:
                raise ValueError(f"color_by={v!r} is not a colouring of this map; choose "
                                   f"one of {self._colourings} or '' for none")
            return v

        @t.validate("highlight")
        def _check_highlight(self, proposal):
            cells, words = highlight_cells(self.wait()._data, proposal["value"])
            # numbered: the same highlight set again reaches the page (a search there
            # may have replaced it)
            seq = (self._highlight_state or {}).get("seq", 0) + 1
            self._highlight_state = {"cells": cells, "terms": words, "seq": seq}
            return proposal["value"]

        @t.observe("_selection_state")
        def _on_selection(self, change):
            msg = change["new"] or {}
            kind = msg.get("kind")
            cells = msg.get("cells")
            kept = msg.get("kept")
            # the frame's message is checked as any input: kind, cells and rows in range
            if kind not in ("cell", "cells") or not isinstance(cells, list) or \
                    not all(isinstance(c, int) for c in cells):
                return
            if kept is not None and not (isinstance(kept, list) and
                                         all(isinstance(r, int) for r in kept)):
                return
            if self._data is None:     # only the whole map's frame sends selections
                return
            try:
                table = selection_table(self._data, kind, cells, kept, self._metadata)
            except (TypeError, ValueError):
                return
            E2 = int(self._data["extent"][1])
            self.set_trait("selection_kind", kind)
            self.set_trait("selected_cells", [(c // E2, c % E2) for c in sorted(set(cells))])
            self.set_trait("selection", _table(table))

        def documents_at(self, cells, kind="cells"):
            """The table ``w.selection`` would be for these cells, selected from Python:
            ``kind="cells"`` as a rectangle or a lasso, ``"cell"`` (one cell) as a click.

            Parameters
            ----------
            cells : sequence of (row, col) pairs or flat cell indices
            kind : {"cells", "cell"}, default="cells"

            Returns
            -------
            pandas.DataFrame or dict of ndarray
            """
            extent = tuple(int(e) for e in self.wait()._data["extent"])
            flat = []
            for c in _as_list(cells, "cells"):
                if not isinstance(c, (int, np.integer, tuple, list, np.ndarray)):
                    raise TypeError(f"cells: {c!r} is not a cell ((row, col) or a flat int)")
                flat.append(check_cell(c if isinstance(c, (int, np.integer)) else tuple(c),
                                       extent, "cells"))
            return _table(selection_table(self._data, kind, flat, None, self._metadata))

        def on_select(self, callback):
            """Call ``callback(selection)`` with the table each time the selection in the
            map changes."""
            self.observe(lambda change: callback(change["new"]), names="selection")

    return MapWidget
