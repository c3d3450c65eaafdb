"""A large corpus's widget in a real JupyterLab: the map without its documents first, then
the whole map in its place (docs/map.md, "The notebook widget").

The kernel places the documents in a thread; here the thread waits for a gate the test
opens, so that the preview is there to be looked at and used: it shows the words, and a
click in it waits for the documents.  Once the gate opens, the whole map's frame must
take the preview's place with its zoom and the click, and with the colouring Python asked
for; the kernel's ``w.selection`` is then the click's documents.

Without JupyterLab, anywidget or Chromium the tests skip, except in CI, where they fail.
"""
import io
import json
import os
import re
import sys
import time

import pytest

from countgrid.maps import map_data, rank_documents
from tests.maps.conftest import widget_lab_folder

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "tools"))
from lab_session import LabSession  # noqa: E402

NOTEBOOK = [
    "import threading, numpy as np, countgrid\n"
    "import countgrid.maps._widget as W\n"
    "W.BACKGROUND_WORK = 0            # every corpus is large here\n"
    "gate, stages = threading.Event(), W.map_stages\n"
    "def gated(*args, **kwargs):      # the documents wait for the test\n"
    "    s = stages(*args, **kwargs)\n"
    "    yield next(s)\n"
    "    gate.wait(300)\n"
    "    yield next(s)\n"
    "W.map_stages = gated\n"
    "grid = countgrid.load('grid.npz')\n"
    "d = np.load('corpus.npz')\n"
    "w = countgrid.widget(grid, d['X'], feature_names=list(d['words']),\n"
    "                     metadata={'topic': d['topic']}, color_by='topic', height=560)\n"
    "w",
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory, browser):
    files = widget_lab_folder(tmp_path_factory)
    with LabSession(files["root"], browser, width=1300, height=900) as session:
        session.run_notebook(NOTEBOOK)
        yield dict(files, session=session, page=session.page, errors=session.errors)


def preview_frame(lab, timeout=120):
    """The widget's frame once it has drawn its map (documents not in)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for frame in lab["page"].frames:
            if frame is lab["page"].main_frame:
                continue
            try:
                if frame.evaluate("!!(window.countgridMap && countgridMap.host && "
                                  "countgridMap.firstFrameMs)"):
                    return frame
            except Exception:        # a frame navigating or detached
                continue
        lab["page"].wait_for_timeout(50)
    raise AssertionError("the widget's preview did not open:\n" + lab["session"].log()[-2000:])


def test_the_preview_then_the_whole_map_in_its_place(lab):
    page, session = lab["page"], lab["session"]
    preview = preview_frame(lab)
    # the map without its documents: the words are there, the colouring of the
    # documents' topics not yet, and the status says the documents are coming
    assert preview.evaluate("countgridMap.ready") is False
    assert preview.evaluate("countgridMap.shown") is False
    assert preview.evaluate("countgridMap.colouring()") is None
    words = preview.evaluate("countgridMap.cellWords(0)")
    expected_words = [lab["words"][j] for j in map_data(lab["grid"])["top_words"][0]]
    assert words == expected_words
    assert "loading the documents" in preview.locator("#cg-stats").inner_text()
    shot = page.locator("iframe.countgrid-widget").screenshot()
    import matplotlib.image as mpimg
    img = mpimg.imread(io.BytesIO(shot), format="png")[..., :3]
    assert img.std() > 0.05
    assert json.loads(session.kernel("import json; print(json.dumps(w.ready))")) is False
    # the user zooms and clicks a cell before the documents are in
    view = preview.evaluate("countgridMap.zoom(1.5)")
    preview.locator("#cg-canvas").click(position={"x": view["width"] / 2,
                                                  "y": view["height"] / 2})
    # the cell clicked, as the page's status line names the cell under the pointer
    status = preview.locator("#cg-status").inner_text()
    r, c = (int(v) for v in re.match(r"cell \((\d+), (\d+)\)", status).groups())
    data = map_data(lab["grid"], lab["X"])
    cell = r * 13 + c
    assert "Loading the documents" in preview.locator("#cg-panel-info").inner_text()

    session.kernel("gate.set()")
    whole = session.map_frame(timeout=120)
    assert whole is not preview
    deadline = time.monotonic() + 20
    while page.locator("iframe.countgrid-widget").count() != 1:
        assert time.monotonic() < deadline, "the preview's frame was not removed"
        page.wait_for_timeout(50)
    # its place, the click and the colouring Python asked for
    got = whole.evaluate("countgridMap.view()")
    assert got["s"] == pytest.approx(view["s"], rel=1e-3)
    expected, _ = rank_documents(data, cell, n_documents=1000)
    assert len(expected) > 0
    listed = whole.evaluate("countgridMap.listedDocuments()")
    assert len(listed) > 0 and listed == expected[:len(listed)].tolist()
    assert whole.evaluate("countgridMap.colouring()") == "topic"
    deadline = time.monotonic() + 20
    while True:
        kind, cells, docs, ready = json.loads(session.kernel(
            "import json; print(json.dumps([w.selection_kind, "
            "[list(p) for p in w.selected_cells], w.selection['document'].tolist(), "
            "w.ready]))"))
        if kind == "cell" or time.monotonic() > deadline:
            break
        page.wait_for_timeout(200)
    assert (kind, cells, ready) == ("cell", [[r, c]], True)
    assert docs == expected.tolist()
    assert not lab["errors"], lab["errors"]


FAILING = [
    "import numpy as np, countgrid\n"
    "import countgrid.maps._widget as W\n"
    "stages = W.map_stages\n"
    "def failing(*args, **kwargs):    # the documents cannot be placed\n"
    "    s = stages(*args, **kwargs)\n"
    "    yield next(s)\n"
    "    raise MemoryError('no room for the documents')\n"
    "W.map_stages = failing\n"
    "grid = countgrid.load('grid.npz')\n"
    "d = np.load('corpus.npz')\n"
    "w = countgrid.widget(grid, d['X'], feature_names=list(d['words']), background=True)\n"
    "w",
]


def test_a_failure_to_place_the_documents_is_shown_in_the_map(lab):
    session = lab["session"]
    session.run_notebook(FAILING, name="failing.ipynb")
    frame = preview_frame(lab)
    deadline = time.monotonic() + 60
    while not frame.locator("#cg-error").is_visible():
        assert time.monotonic() < deadline, "the failure was not shown"
        lab["page"].wait_for_timeout(100)
    text = frame.locator("#cg-error").inner_text()
    assert "the documents could not be placed" in text and "no room" in text
    assert session.kernel("try:\n    w.wait(10)\nexcept MemoryError as e:\n    print('raised', e)"
                          ).strip() == "raised no room for the documents"
