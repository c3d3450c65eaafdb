"""The notebook widget's Python side (docs/map.md, "The notebook widget"), without a
browser: what it sends (the page and two binary parts), the tables of ``w.selection``
against slow references, ``w.highlight``'s cells, ``w.color_by`` and the errors.  The
page and the kernel together are tested in a real JupyterLab (test_widget_lab.py)."""
import json
import sys
import types

import numpy as np
import pytest

import countgrid
from countgrid.maps import _widget, map_data
from countgrid.maps._html import encode_binary
from countgrid.maps._parts import split_documents

pytest.importorskip("anywidget")


@pytest.fixture(scope="module")
def made(fitted, map_options):
    w = countgrid.widget(fitted["grid"], fitted["X"], **map_options)
    return w, map_data(fitted["grid"], fitted["X"], **map_options)


def decode(raw):
    """The header and blob of a binary part (the page's decodeBinary, in Python)."""
    n = int.from_bytes(raw[:4], "little")
    return json.loads(raw[4:4 + n].decode()), raw[4 + n:]


def array(node, blob):
    kind, offset, length = node["$a"]
    dtype = {"Float32Array": "<f4", "Float64Array": "<f8", "Uint32Array": "<u4",
             "Int32Array": "<i4", "Uint16Array": "<u2", "Uint8Array": "<u1"}[kind]
    return np.frombuffer(blob, dtype=dtype, count=length, offset=offset)


def test_the_widget_sends_the_map_as_binary_parts(made):
    w, data = made
    head, docs = split_documents(data)
    assert w._map_part == encode_binary(head) and w._documents_part == encode_binary(docs)
    header, blob = decode(w._documents_part)
    np.testing.assert_array_equal(array(header["doc_map"], blob), data["doc_map"])
    np.testing.assert_array_equal(array(header["doc_posteriors"], blob),
                                  data["doc_posteriors"])
    assert header["titles"] == list(data["titles"])
    header, blob = decode(w._map_part)
    assert "doc_map" not in header and header["extent"]["$a"][2] == 2
    np.testing.assert_array_equal(array(header["top_words"], blob), data["top_words"].ravel())
    # the page of the file, with an empty data block the frame's parent fills
    assert 'data-format="host"' in w._page and "countgrid:hello" in w._page
    assert 'id="cg-documents"' not in w._page
    assert w.height == 640 and w.color_by == ""
    assert countgrid.widget is countgrid.maps.widget


def test_widget_method_and_options(fitted, map_options):
    w = fitted["grid"].widget(fitted["X"], height=300, color_by="topic", **map_options)
    assert w.height == 300 and w.color_by == "topic"
    assert type(w).__name__ == "MapWidget"


def cells_reference(data, cells, kept=None):
    """Slow reference of an area's table: loops over the documents and their stored
    posterior entries."""
    E1, E2 = (int(e) for e in data["extent"])
    W1, W2 = (int(w) for w in data["window"])
    chosen = set(cells)
    rows, scores = [], []
    for t in range(len(data["doc_index"])):
        k = int(data["doc_map"][t])
        centre = ((k // E2 + W1 // 2) % E1) * E2 + (k % E2 + W2 // 2) % E2
        if centre not in chosen:
            continue
        if kept is not None and int(data["doc_index"][t]) not in kept:
            continue
        mass = 0.0
        for j in range(data["doc_offsets"][t], data["doc_offsets"][t + 1]):
            p = int(data["doc_positions"][j])
            c = ((p // E2 + W1 // 2) % E1) * E2 + (p % E2 + W2 // 2) % E2
            mass += float(data["doc_posteriors"][j]) if c in chosen else 0.0
        rows.append(int(data["doc_index"][t]))
        scores.append(mass)
    return rows, scores


@pytest.mark.parametrize("cells", [[0], [14, 15, 27, 28], list(range(40, 80)), []])
def test_an_area_selection_is_the_reference(made, fitted, cells):
    w, data = made
    w._selection_state = {"kind": "cells", "cells": cells, "kept": None}
    table = w.selection
    rows, scores = cells_reference(data, cells)
    assert table["document"].tolist() == rows
    np.testing.assert_allclose(table["score"].to_numpy(), scores, rtol=1e-6)
    # every document listed sits in a selected cell (its MAP window's centre)
    centre = fitted["grid"].positions(fitted["X"], anchor="center")
    E2 = int(data["extent"][1])
    assert set((centre[rows, 0] * E2 + centre[rows, 1]).tolist()) <= set(cells)
    assert w.selection_kind == "cells"
    assert w.selected_cells == [divmod(c, E2) for c in sorted(cells)]
    # titles, ids and the metadata follow the rows
    assert table["title"].tolist() == [fitted["titles"][r] for r in rows]
    assert table["topic"].tolist() == [fitted["meta"]["topic"][r] for r in rows]
    assert (table["row"] * E2 + table["col"]).tolist() == \
        (centre[rows, 0] * E2 + centre[rows, 1]).tolist()


def test_a_cell_selection_is_the_pages_ranking(made, fitted):
    w, data = made
    for cell in (0, 37, 129):
        w._selection_state = {"kind": "cell", "cells": [cell], "kept": None}
        rows, scores = countgrid.maps.rank_documents(data, cell, n_documents=10_000)
        assert w.selection["document"].tolist() == rows.tolist()
        np.testing.assert_allclose(w.selection["score"].to_numpy(), scores)
        # the model's own ranking agrees (on the full posteriors; the map's keep
        # 99.9 % of each document's mass)
        near, _ = fitted["grid"].documents_near(fitted["X"], divmod(cell, 13), 5)
        assert set(near[:3].tolist()) <= set(rows[:8].tolist())


def test_documents_the_page_hides_are_left_out(made):
    w, data = made
    cells = list(range(130))
    kept = [int(r) for r in data["doc_index"][::3]]
    w._selection_state = {"kind": "cells", "cells": cells, "kept": kept}
    assert w.selection["document"].tolist() == cells_reference(data, cells, set(kept))[0]
    w._selection_state = {"kind": "cell", "cells": [5], "kept": kept}
    assert set(w.selection["document"].tolist()) <= set(kept)


@pytest.mark.parametrize("message", [
    {"kind": "everything", "cells": [1]},
    {"kind": "cells", "cells": [1, 10_000]},
    {"kind": "cells", "cells": ["1"]},
    {"kind": "cell", "cells": [1, 2]},
    {"kind": "cells", "cells": [1], "kept": "all"},
    {},
])
def test_a_malformed_message_changes_nothing(made, message):
    w, _ = made
    w._selection_state = {"kind": "cells", "cells": [3], "kept": None}
    before = w.selection.copy()
    w._selection_state = message
    assert w.selection.equals(before) and w.selected_cells == [(0, 3)]


def test_highlight_resolves_words_documents_and_cells(made, fitted):
    w, data = made
    E2 = 13
    word = fitted["words"][4]
    j = fitted["words"].index(word)
    offsets, cells = countgrid.maps.search_cells(
        np.asarray(fitted["grid"].pi_).reshape(-1, len(fitted["words"])))
    centre = fitted["grid"].positions(fitted["X"], anchor="center")
    doc = 17
    w.highlight = [word, doc, (9, 12)]
    want = set(cells[offsets[j]:offsets[j + 1]].tolist()) | \
        {int(centre[doc, 0] * E2 + centre[doc, 1]), 9 * E2 + 12}
    state = dict(w._highlight_state)
    assert state.pop("seq") >= 1 and state == {"cells": sorted(want), "terms": [word]}
    # ids (str that are no word) and the explicit form
    w.highlight = {"ids": [str(doc)], "cells": [(0, 0)]}
    assert w._highlight_state["cells"] == sorted({int(centre[doc, 0] * E2 + centre[doc, 1]),
                                                  0})
    seq = w._highlight_state["seq"]
    w.highlight = []
    assert w._highlight_state == {"cells": [], "terms": [], "seq": seq + 1}
    w.highlight = []            # again: the page gets it again
    assert w._highlight_state["seq"] == seq + 2
    w.highlight = [(1, 1)]
    w.highlight = None          # clears too
    assert w._highlight_state["cells"] == [] and w.highlight is None


@pytest.mark.parametrize("value, error, match", [
    (["no such word"], ValueError, "neither a word of the vocabulary nor a document id"),
    ([10_000], ValueError, "document 10000 is not in the map"),
    ([(10, 0)], ValueError, "out of range"),
    ([1.5], TypeError, "not a word, a document"),
    ("w0_1", TypeError, "highlight must be a list"),
    ({"rows": [1]}, ValueError, "unknown keys"),
    ({"words": ["nope"]}, ValueError, "not a word of the vocabulary"),
])
def test_bad_highlights_are_refused(made, value, error, match):
    w, _ = made
    w.highlight = [(1, 1)]
    with pytest.raises(error, match=match):
        w.highlight = value
    assert w._highlight_state["cells"] == [14]       # unchanged


def test_colour_and_height_are_checked(made):
    w, _ = made
    w.color_by = "topic"
    w.color_by = ""
    with pytest.raises(ValueError, match="is not a colouring of this map"):
        w.color_by = "nope"
    with pytest.raises(ValueError, match=r"height must be in \[100, 20000\]"):
        w.height = 50
    with pytest.raises(ValueError, match="height must be in"):
        w.height = 10**9
    for bad in ("640", True, None, 640.0):
        with pytest.raises(TypeError, match="height must be an int"):
            w.height = bad
    with pytest.raises(TypeError, match="color_by must be a colouring's name"):
        w.color_by = 5
    w.color_by = "topic"
    w.color_by = None                      # none
    assert w.color_by == ""


def test_bad_arguments(fitted):
    for bad in (20, 10**6, 2.5, "640", True):
        with pytest.raises(ValueError, match=r"height must be an int in \[100, 20000\]"):
            countgrid.widget(fitted["grid"], fitted["X"], height=bad)
    with pytest.raises(TypeError, match="data_format"):
        countgrid.widget(fitted["grid"], fitted["X"], data_format="json")
    with pytest.raises(ValueError, match="color_by"):
        countgrid.widget(fitted["grid"], fitted["X"], color_by="topic")   # no metadata


def test_on_select_calls_back(made):
    w, _ = made
    seen = []
    w.on_select(lambda table: seen.append(len(table)))
    w._selection_state = {"kind": "cells", "cells": list(range(130)), "kept": None}
    assert seen == [len(w.selection)] and seen[0] > 0


def test_without_pandas_the_selection_is_a_dict(fitted, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    w = countgrid.widget(fitted["grid"], fitted["X"])
    w._selection_state = {"kind": "cells", "cells": list(range(20)), "kept": None}
    assert isinstance(w.selection, dict)
    assert set(w.selection) == {"document", "id", "title", "row", "col", "score"}
    assert all(len(v) == len(w.selection["document"]) for v in w.selection.values())


def test_without_anywidget_a_clear_error(fitted, monkeypatch):
    monkeypatch.setitem(sys.modules, "anywidget", None)
    monkeypatch.setattr(_widget, "_MapWidget", None)
    with pytest.raises(ImportError, match=r"pip install 'countgrid\[notebook\]'"):
        countgrid.widget(fitted["grid"], fitted["X"])


def test_a_grid_displays_as_its_widget_only_in_a_kernel(fitted, monkeypatch):
    grid = fitted["grid"]
    assert grid._repr_mimebundle_() is None          # no kernel here: the static preview
    assert "<table" in grid._repr_html_()
    import IPython
    import ipykernel      # noqa: F401 - a kernel's process has it imported
    monkeypatch.setattr(IPython, "get_ipython",
                        lambda: types.SimpleNamespace(kernel=object()))
    bundle = grid._repr_mimebundle_()
    view = bundle["application/vnd.jupyter.widget-view+json"]
    assert view["model_id"] and bundle["text/plain"] == repr(grid)
    assert countgrid.CountingGrid()._repr_mimebundle_() is None        # not fitted
    monkeypatch.setitem(sys.modules, "anywidget", None)
    monkeypatch.setattr(_widget, "_MapWidget", None)
    assert grid._repr_mimebundle_() is None          # no extra: the static preview


def test_documents_at_is_the_selection_of_those_cells(made):
    w, data = made
    w._selection_state = {"kind": "cells", "cells": [14, 15, 27], "kept": None}
    assert w.documents_at([(1, 1), (1, 2), (2, 1)]).equals(w.selection)
    w._selection_state = {"kind": "cell", "cells": [40], "kept": None}
    assert w.documents_at([40], kind="cell").equals(w.selection)
    with pytest.raises(ValueError, match="out of range"):
        w.documents_at([(0, 13)])
    with pytest.raises(ValueError, match="kind must be"):
        w.documents_at([1], kind="lasso")


def test_a_map_without_documents_selects_nothing(fitted):
    w = countgrid.widget(fitted["grid"])
    w._selection_state = {"kind": "cells", "cells": list(range(130)), "kept": None}
    assert len(w.selection) == 0 and w.selection_kind == "cells"
    assert len(w.documents_at([5], kind="cell")) == 0


@pytest.fixture
def gated(monkeypatch):
    """Widgets whose documents wait for ``gate`` (placed in a thread for every corpus)."""
    import threading
    gate, stages = threading.Event(), _widget.map_stages

    def waiting(*args, **kwargs):
        s = stages(*args, **kwargs)
        yield next(s)
        assert gate.wait(60)
        yield next(s)

    monkeypatch.setattr(_widget, "BACKGROUND_WORK", 0)
    monkeypatch.setattr(_widget, "map_stages", waiting)
    yield gate
    gate.set()


def test_a_large_corpus_shows_its_map_before_its_documents(fitted, map_options, gated):
    import threading
    w = countgrid.widget(fitted["grid"], fitted["X"], color_by="topic", **map_options)
    seen = []
    w.observe(lambda change: seen.append(change["new"]), names="ready")
    # the preview: the map part of a map whose documents are coming, no documents part
    assert w.ready is False and w._documents_part == b""
    header, _ = decode(w._map_part)
    assert header["n_documents"] == fitted["X"].shape[0]
    assert header["colorings"] == [] and header["color_by"] is None and header["time"] is None
    assert all("doc_share" not in level for level in header["regions"])
    assert w.color_by == "topic"            # known before the documents are in
    assert len(w.selection) == 0 and "topic" in w.selection.columns
    w.color_by = ""
    w.color_by = "topic"
    # what needs the documents waits for them
    threading.Timer(0.3, gated.set).start()
    w.highlight = [3]
    assert w.ready is True and seen == [True]
    data = map_data(fitted["grid"], fitted["X"], color_by="topic", **map_options)
    head, docs = split_documents(data)
    assert w._map_part == encode_binary(head) and w._documents_part == encode_binary(docs)
    assert w._highlight_state["cells"] == _widget.highlight_cells(data, [3])[0]
    assert w.wait(0) is w


def test_the_documents_part_comes_in_one_message_with_the_map_part(fitted, map_options,
                                                                   gated):
    w = countgrid.widget(fitted["grid"], fitted["X"], **map_options)
    sent = []
    w.send_state = lambda key=None: sent.append(sorted(key) if key else None)
    gated.set()
    w.wait(30)
    assert ["_documents_part", "_map_part"] in sent


def test_a_failure_placing_the_documents_is_raised_by_wait(fitted, map_options,
                                                           monkeypatch):
    stages = _widget.map_stages

    def failing(*args, **kwargs):
        s = stages(*args, **kwargs)
        yield next(s)
        raise MemoryError("no room for the documents")

    monkeypatch.setattr(_widget, "BACKGROUND_WORK", 0)
    monkeypatch.setattr(_widget, "map_stages", failing)
    w = countgrid.widget(fitted["grid"], fitted["X"], **map_options)
    with pytest.raises(MemoryError, match="no room"):
        w.wait(30)
    assert "could not be placed" in w._error and w.ready is False
    with pytest.raises(MemoryError):
        w.documents_at([0])
    # a small corpus is placed before widget() returns: the failure is raised there
    monkeypatch.setattr(_widget, "BACKGROUND_WORK", 10 ** 12)
    with pytest.raises(MemoryError, match="no room"):
        countgrid.widget(fitted["grid"], fitted["X"], **map_options)


def test_bad_arguments_are_refused_before_any_thread(fitted, gated):
    import threading
    before = threading.active_count()
    with pytest.raises(ValueError, match="color_by"):
        countgrid.widget(fitted["grid"], fitted["X"], color_by="nothing")
    with pytest.raises(ValueError, match="titles"):
        countgrid.widget(fitted["grid"], fitted["X"], titles=["one"])
    assert threading.active_count() == before


def test_the_stages_preview_and_whole_map(fitted, map_options):
    from countgrid.maps._data import map_stages
    stages = map_stages(fitted["grid"], fitted["X"], color_by="topic", **map_options)
    preview, names, color_by = next(stages)
    whole = next(stages)
    assert names == [c["name"] for c in whole["colorings"]] and color_by == "topic"
    assert preview["n_documents"] == whole["n_documents"] == fitted["X"].shape[0]
    assert preview["colorings"] == [] and preview["color_by"] is None
    for key in ("doc_index", "doc_map", "doc_posteriors", "doc_loglik"):
        assert len(preview[key]) == 0
    # the same words, search index and regions, the documents' shares aside
    for key in ("top_words", "top_scores", "search_cells", "search_offsets"):
        np.testing.assert_array_equal(preview[key], whole[key])
    for a, b in zip(preview["regions"], whole["regions"]):
        np.testing.assert_array_equal(a["labels"], b["labels"])
        assert a["names"] == b["names"] and a["names"] is not b["names"]
        assert "doc_share" not in a and b["doc_share"].sum() == pytest.approx(1.0)
    head = split_documents(whole)[0]
    ref = split_documents(map_data(fitted["grid"], fitted["X"], color_by="topic",
                                   **map_options))[0]
    assert encode_binary(head) == encode_binary(ref)


def test_background_chooses_when_the_documents_are_placed(fitted, map_options, gated):
    # gated sets the threshold to 0: every corpus would be placed in a thread
    w = countgrid.widget(fitted["grid"], fitted["X"], background=True, **map_options)
    assert w.ready is False
    gated.set()
    assert w.wait(30).ready is True
    w = countgrid.widget(fitted["grid"], fitted["X"], background=False, **map_options)
    assert w.ready is True and len(w._documents_part) > 4
    with pytest.raises(TypeError, match="background must be"):
        countgrid.widget(fitted["grid"], fitted["X"], background="yes")
