"""The notebook widget in a real JupyterLab (docs/map.md, "The notebook widget").

A JupyterLab server is started headless on a free local port, with its settings, runtime
files and workspaces in a temporary folder; Chromium (through Playwright, as the other
browser tests) opens a notebook there and runs it: the notebook makes the widget of a grid
fitted here.  The tests then act in the page as a user does (a mouse click on a cell, an
alt-drag lasso, the colour menu) and read the kernel's side by running code in the same
kernel (``jupyterapp``'s session, exposed with ``--LabApp.expose_app_in_browser``); and
they set ``w.highlight`` and ``w.color_by`` in the kernel and look at the page's pixels.
What the kernel reports is compared with what this process computes from the model
(``CountingGrid.positions``, :func:`countgrid.maps.rank_documents`).

Without JupyterLab, anywidget or Chromium the tests skip, except in CI, where they fail.
"""
import json
import os
import sys
import time

import numpy as np
import pytest

from countgrid.maps import map_data, rank_documents
from tests.maps.conftest import widget_lab_folder

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "tools"))
from lab_session import LabSession  # noqa: E402

NOTEBOOK = [
    "import numpy as np, countgrid\n"
    "grid = countgrid.load('grid.npz')\n"
    "d = np.load('corpus.npz')\n"
    "w = countgrid.widget(grid, d['X'], feature_names=list(d['words']),\n"
    "                     titles=list(d['titles']), metadata={'topic': d['topic']},\n"
    "                     height=560)\n"
    "seen = []\n"
    "w.on_select(lambda table: seen.append(len(table)))\n"
    "w",
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory, browser):
    files = widget_lab_folder(tmp_path_factory)
    with LabSession(files["root"], browser, width=1300, height=900) as session:
        session.run_notebook(NOTEBOOK)
        frame = session.map_frame()
        yield dict(files, session=session, page=session.page, frame=frame,
                   errors=session.errors)


def kernel(lab, code):
    return lab["session"].kernel(code)


def kernel_json(lab, expr):
    return json.loads(kernel(lab, f"import json; print(json.dumps({expr}))"))


def wait_kernel(lab, expr, want, timeout=20):
    """Poll the kernel until ``expr`` (JSON) satisfies ``want``; return its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = kernel_json(lab, expr)
        if want(value) or time.monotonic() > deadline:
            return value
        lab["page"].wait_for_timeout(200)


def canvas_point(lab, r, c):
    """The page pixel of the centre of cell (r, c) on the widget's canvas."""
    frame = lab["frame"]
    x, y = frame.evaluate(f"countgridMap.cellCenter({r}, {c})")
    box = frame.locator("#cg-canvas").bounding_box()    # page coordinates, frame included
    return box["x"] + x, box["y"] + y


def canvas_pixels(lab):
    import io

    import matplotlib.image as mpimg
    png = lab["frame"].locator("#cg-canvas").screenshot()
    return (mpimg.imread(io.BytesIO(png), format="png")[..., :3] * 255).round()


def test_the_widget_renders_in_jupyterlab(lab):
    import io

    import matplotlib.image as mpimg
    shot = lab["page"].locator("iframe.countgrid-widget").screenshot()
    img = mpimg.imread(io.BytesIO(shot), format="png")[..., :3]
    assert img.shape[0] >= 500 and img.shape[1] >= 600      # the height asked, the cell's width
    assert img.std() > 0.05
    assert len(np.unique((img * 255).astype(np.uint8).reshape(-1, 3), axis=0)) > 50
    frame = lab["frame"]
    assert frame.evaluate("countgridMap.extent") == [10, 13]
    # the map's styles stay in the frame: the notebook keeps its own
    assert lab["page"].evaluate("getComputedStyle(document.body).backgroundColor") != \
        frame.evaluate("getComputedStyle(document.body).backgroundColor")
    assert not lab["errors"], lab["errors"]


def test_a_click_is_the_kernels_selection(lab):
    data = map_data(lab["grid"], lab["X"])
    cell = max(range(130), key=lambda i: len(rank_documents(data, i, 1000)[0]))
    r, c = divmod(cell, 13)
    expected, scores = rank_documents(data, cell, n_documents=1000)
    assert len(expected) > 5
    lab["page"].mouse.click(*canvas_point(lab, r, c))
    got = wait_kernel(lab, "[w.selection_kind, [list(p) for p in w.selected_cells], "
                           "w.selection['document'].tolist(), w.selection['score'].tolist()]",
                      lambda v: v[0] == "cell" and v[1] == [[r, c]])
    assert got[0] == "cell" and got[1] == [[r, c]]
    assert got[2] == expected.tolist()
    np.testing.assert_allclose(got[3], scores)
    # the page lists the first of them, in the same order
    listed = lab["frame"].evaluate("countgridMap.listedDocuments()")
    assert listed == expected[:len(listed)].tolist()
    assert kernel_json(lab, "seen[-1]") == len(expected)      # on_select was called


def test_a_lasso_is_the_kernels_selection(lab):
    page, frame = lab["page"], lab["frame"]
    frame.evaluate("countgridMap.reset()")
    # a diamond around cell (5, 6): rows 3..7, columns 4..8 at its widest
    pts = [canvas_point(lab, 3, 6), canvas_point(lab, 5, 8.4), canvas_point(lab, 7, 6),
           canvas_point(lab, 5, 3.6), canvas_point(lab, 3, 6)]
    page.keyboard.down("Alt")
    page.mouse.move(*pts[0])
    page.mouse.down()
    for a, b in zip(pts, pts[1:]):
        for s in np.linspace(0, 1, 8)[1:]:
            page.mouse.move(a[0] + s * (b[0] - a[0]), a[1] + s * (b[1] - a[1]))
    page.mouse.up()
    page.keyboard.up("Alt")
    cells = frame.evaluate("countgridMap.selectedCells()")
    assert 9 <= len(cells) <= 30 and 5 * 13 + 6 in cells
    centres = lab["grid"].positions(lab["X"], anchor="center")
    flat = centres[:, 0] * 13 + centres[:, 1]
    expected = np.flatnonzero(np.isin(flat, cells))
    assert len(expected) > 0
    want_cells = [list(divmod(i, 13)) for i in sorted(cells)]
    # the kernel sets the kind, the cells and the table one trait at a time: wait for all
    got = wait_kernel(lab, "[w.selection_kind, [list(p) for p in w.selected_cells], "
                           "w.selection['document'].tolist()]",
                      lambda v: v[0] == "cells" and v[1] == want_cells
                      and v[2] == expected.tolist())
    assert got[1] == want_cells
    assert got[2] == expected.tolist()


def test_highlight_from_python_changes_the_pixels(lab):
    frame = lab["frame"]
    frame.evaluate("countgridMap.reset()")
    frame.evaluate("countgridMap.pin(0, 0)")       # no selection tint over the cells read
    frame.evaluate("countgridMap.selectCells(9, 12, 9, 12)")
    before = canvas_pixels(lab)
    kernel(lab, "w.highlight = [(2, 3), (6, 9)]")
    deadline = time.monotonic() + 20
    while frame.evaluate("countgridMap.highlightedCells()") != [2 * 13 + 3, 6 * 13 + 9]:
        assert time.monotonic() < deadline, frame.evaluate("countgridMap.highlightedCells()")
        lab["page"].wait_for_timeout(100)
    after = canvas_pixels(lab)
    view = frame.evaluate("countgridMap.view()")
    s = view["s"]

    def mean(img, r, c):
        x, y = frame.evaluate(f"countgridMap.cellCenter({r}, {c})")
        h = int(s * 0.35)
        return img[int(y) - h:int(y) + h, int(x) - h:int(x) + h].reshape(-1, 3).mean(axis=0)

    for r, c in ((2, 3), (6, 9)):
        b, a = mean(before, r, c), mean(after, r, c)
        # the search-hit amber: more red than blue, and darker blue than before
        assert a[2] < b[2] - 15 and a[0] - a[2] > b[0] - b[2] + 15, (r, c, b, a)
    for r, c in ((8, 1), (4, 6)):
        np.testing.assert_allclose(mean(after, r, c), mean(before, r, c), atol=1.0)
    # a search in the page replaces the highlight; the same one set again comes back
    frame.evaluate("countgridMap.search('')")
    assert frame.evaluate("countgridMap.highlightedCells()") == []
    kernel(lab, "w.highlight = [(2, 3), (6, 9)]")
    deadline = time.monotonic() + 20
    while frame.evaluate("countgridMap.highlightedCells()") != [2 * 13 + 3, 6 * 13 + 9]:
        assert time.monotonic() < deadline
        lab["page"].wait_for_timeout(100)
    kernel(lab, "w.highlight = []")
    deadline = time.monotonic() + 20
    while frame.evaluate("countgridMap.highlightedCells()"):
        assert time.monotonic() < deadline
        lab["page"].wait_for_timeout(100)


def test_colour_both_ways(lab):
    frame = lab["frame"]
    kernel(lab, "w.color_by = 'topic'")
    deadline = time.monotonic() + 20
    while frame.evaluate("countgridMap.colouring()") != "topic":
        assert time.monotonic() < deadline
        lab["page"].wait_for_timeout(100)
    frame.select_option("#cg-color", label="none")
    assert wait_kernel(lab, "w.color_by", lambda v: v == "") == ""
    frame.select_option("#cg-color", label="topic")
    assert wait_kernel(lab, "w.color_by", lambda v: v == "topic") == "topic"
    assert not lab["errors"], lab["errors"]

