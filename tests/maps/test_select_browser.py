"""Selecting cells on the map (docs/map.md, "Select cells"), in a real headless Chromium:
a rectangle (also across the seam) lists the documents whose most probable window is
centred in it, with the category mix, and the CSV exports them."""
import numpy as np
import pytest

from countgrid.maps import map_data, write_html


@pytest.fixture(scope="module")
def select_map(fitted, tmp_path_factory):
    kw = dict(titles=fitted["titles"], metadata=fitted["meta"])
    path = write_html(fitted["grid"], tmp_path_factory.mktemp("select") / "map.html",
                      fitted["X"], **kw)
    return path, map_data(fitted["grid"], fitted["X"], **kw)


def expected_docs(data, rows, cols):
    extent = tuple(data["extent"])
    corners = np.unravel_index(data["doc_map"].astype(np.int64), extent)
    window = tuple(data["window"])
    r = (corners[0] + window[0] // 2) % extent[0]
    c = (corners[1] + window[1] // 2) % extent[1]
    inside = np.isin(r, [x % extent[0] for x in rows]) & np.isin(c, [x % extent[1] for x in cols])
    return data["doc_index"][inside].tolist()


@pytest.mark.parametrize("rect", [(2, 3, 5, 7), (8, 11, 11, 14), (0, 0, 0, 0), (-2, -3, 1, 2)])
def test_rectangle_lists_the_documents_centred_there(open_map, select_map, rect):
    path, data = select_map
    pg = open_map(path)
    pg("countgridMap.colorBy('topic')")
    got = pg("r => countgridMap.selectCells(...r)", list(rect))
    r0, c0, r1, c1 = rect
    assert got == expected_docs(data, range(r0, r1 + 1), range(c0, c1 + 1))
    assert pg("countgridMap.listedDocuments()") == got[:100]
    info = pg.page.inner_text("#cg-panel-info")
    assert f"{len(got)} document" in info
    if got:
        topics = np.asarray(data["colorings"][0]["levels"])[
            data["colorings"][0]["doc_levels"][np.searchsorted(data["doc_index"], got)]]
        top = max(set(topics), key=lambda v: (np.sum(topics == v), v))
        assert f"{top} {100 * np.mean(topics == top):.0f} %" in info
        csv = pg("countgridMap.csv()")
        assert len(csv.strip().splitlines()) == min(len(got), 100) + 1
    assert pg.errors == []


def test_shift_drag_selects(open_map, select_map):
    path, data = select_map
    pg = open_map(path)
    a, b = pg("countgridMap.cellCenter(2, 3)"), pg("countgridMap.cellCenter(4, 6)")
    box = pg.page.locator("#cg-canvas").bounding_box()
    pg.page.keyboard.down("Shift")
    pg.page.mouse.move(box["x"] + a[0], box["y"] + a[1])
    pg.page.mouse.down()
    pg.page.mouse.move(box["x"] + b[0], box["y"] + b[1], steps=5)
    pg.page.mouse.up()
    pg.page.keyboard.up("Shift")
    assert pg("countgridMap.listedDocuments()") == expected_docs(data, range(2, 5),
                                                                 range(3, 7))[:100]
