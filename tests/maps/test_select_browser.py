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


def lasso_cells(points, extent):
    """The cells whose centres the polygon encloses (even-odd rule, matplotlib's Path as
    the reference), taken modulo the extent."""
    from matplotlib.path import Path
    pts = np.asarray(points, dtype=float)
    lo, hi = np.floor(pts.min(axis=0)).astype(int), np.ceil(pts.max(axis=0)).astype(int)
    ys, xs = np.mgrid[lo[0]:hi[0], lo[1]:hi[1]]
    centres = np.column_stack([ys.ravel() + 0.5, xs.ravel() + 0.5])
    # closed=True: the last vertex only closes the path, so the first is repeated
    inside = Path(np.vstack([pts, pts[:1]]), closed=True).contains_points(centres)
    cells = {int((y % extent[0]) * extent[1] + x % extent[1])
             for y, x in zip(ys.ravel()[inside], xs.ravel()[inside])}
    return sorted(cells)


@pytest.mark.parametrize("points", [
    [(1.2, 2.1), (6.7, 4.0), (3.3, 9.6)],                             # a triangle
    [(4, 3), (4, 9), (8.5, 9), (8.5, 6.2), (6, 6.2), (6, 3)],         # an L, not convex
    [(-2.5, -3.2), (2.6, -3.1), (2.4, 2.7), (-2.2, 2.5)],             # across both seams
    [(0.1, 0.1), (0.2, 0.3), (0.3, 0.1)],                             # no centre inside
])
def test_lasso_selects_the_cells_it_encloses(open_map, select_map, points):
    path, data = select_map
    pg = open_map(path)
    extent = tuple(int(e) for e in data["extent"])
    got = pg("p => countgridMap.selectLasso(p)", [list(p) for p in points])
    cells = lasso_cells(points, extent)
    assert pg("countgridMap.selectedCells()") == cells
    assert got == expected_docs_in(data, cells)
    if len(points) == 3 and points[0] == (1.2, 2.1):
        assert len(cells) > 5 and got
    assert pg("countgridMap.listedDocuments()") == got[:100]
    assert pg("countgridMap.viewState()").find("&s=") < 0        # a lasso is not in the address
    assert pg.errors == []


def expected_docs_in(data, cells):
    extent = tuple(data["extent"])
    window = tuple(data["window"])
    corners = np.unravel_index(data["doc_map"].astype(np.int64), extent)
    flat = ((corners[0] + window[0] // 2) % extent[0]) * extent[1] + \
        (corners[1] + window[1] // 2) % extent[1]
    return data["doc_index"][np.isin(flat, cells)].tolist()


@pytest.mark.parametrize("how", ["alt", "button"])
def test_drawing_a_lasso_selects(open_map, select_map, how):
    path, data = select_map
    pg = open_map(path)
    box = pg.page.locator("#cg-canvas").bounding_box()
    corners = [(2, 3), (2, 8), (6, 8), (6, 3), (2, 3)]      # cell centres: a rectangle's
    pts = [pg(f"countgridMap.cellCenter({r}, {c})") for r, c in corners]
    if how == "button":
        pg.page.click("#cg-lasso")
        assert pg.page.get_attribute("#cg-lasso", "aria-pressed") == "true"
    else:
        pg.page.keyboard.down("Alt")
    pg.page.mouse.move(box["x"] + pts[0][0], box["y"] + pts[0][1])
    pg.page.mouse.down()
    for p in pts[1:]:
        pg.page.mouse.move(box["x"] + p[0], box["y"] + p[1], steps=4)
    pg.page.mouse.up()
    if how == "alt":
        pg.page.keyboard.up("Alt")
    # the polygon through the centres of the corner cells encloses the cells strictly
    # inside it: rows 3..5, columns 4..7 (centres on the edge fall either way)
    cells = pg("countgridMap.selectedCells()")
    E2 = int(data["extent"][1])
    inner = [r * E2 + c for r in range(3, 6) for c in range(4, 8)]
    outer = [r * E2 + c for r in range(2, 7) for c in range(3, 9)]
    assert set(inner) <= set(cells) <= set(outer)
    assert pg("countgridMap.listedDocuments()") == expected_docs_in(data, cells)[:100]
    assert pg.errors == []
