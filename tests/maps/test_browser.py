"""The map in a real headless Chromium: what the page holds is what the model holds."""
import csv
import io

import numpy as np
import pytest

from countgrid.maps import map_data, rank_documents, write_html

EXTENT = (10, 13)


@pytest.fixture(scope="module")
def map_files(fitted, map_options, tmp_path_factory):
    d = tmp_path_factory.mktemp("maps")
    kw = map_options
    return {fmt: write_html(fitted["grid"], d / f"map_{fmt}.html", fitted["X"],
                            data_format=fmt, title="test map", **kw)
            for fmt in ("json", "gzip")}, kw


def screenshot_array(pg):
    import zlib
    png = pg.page.locator("#cg-canvas").screenshot()
    return decode_png(png, zlib)


def decode_png(png, zlib):
    """RGB(A) pixels of a PNG (8-bit, non-interlaced, as Chromium writes): no Pillow needed."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, ihdr = 8, [], None
    while pos < len(png):
        n = int.from_bytes(png[pos:pos + 4], "big")
        kind, body = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = body
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + n
    w, h = int.from_bytes(ihdr[:4], "big"), int.from_bytes(ihdr[4:8], "big")
    depth, ctype = ihdr[8], ihdr[9]
    assert depth == 8 and ctype in (2, 6)
    ch = 3 if ctype == 2 else 4
    raw = np.frombuffer(zlib.decompress(b"".join(chunks)), dtype=np.uint8)
    stride = w * ch
    out = np.zeros((h, stride), dtype=np.int64)
    prev = np.zeros(stride, dtype=np.int64)
    for y in range(h):
        f, line = raw[y * (stride + 1)], raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)]
        cur = line.astype(np.int64)
        if f == 1:
            for x in range(ch, stride):
                cur[x] = (cur[x] + cur[x - ch]) & 255
        elif f == 2:
            cur = (cur + prev) & 255
        elif f == 3:
            for x in range(stride):
                left = cur[x - ch] if x >= ch else 0
                cur[x] = (cur[x] + (left + prev[x]) // 2) & 255
        elif f == 4:
            for x in range(stride):
                a = cur[x - ch] if x >= ch else 0
                b, c = prev[x], prev[x - ch] if x >= ch else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                cur[x] = (cur[x] + pred) & 255
        out[y], prev = cur, cur
    return out.reshape(h, w, ch)[:, :, :3]


@pytest.mark.parametrize("fmt", ["json", "gzip"])
def test_loads_without_errors_and_draws(open_map, map_files, fmt):
    pg = open_map(map_files[0][fmt], width=900, height=600)
    assert pg("countgridMap.extent") == list(EXTENT)
    assert "10 × 13 grid" in pg.page.inner_text("#cg-stats")
    assert "240 documents" in pg.page.inner_text("#cg-stats")
    img = pg.page.screenshot()
    assert len(img) > 5000
    pixels = screenshot_array(pg)
    assert pixels.std() > 10                       # not blank: cells, lines and words
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 50
    assert pg("countgridMap.firstFrameMs") > 0
    assert pg.errors == []


def test_search_highlights_the_rule(open_map, map_files, fitted):
    pg = open_map(map_files[0]["gzip"])
    pi = fitted["grid"].pi_.reshape(-1, len(fitted["words"]))
    for word in ("w1_3", "w2_0"):
        pg.page.fill("#cg-search", word)
        pg.page.press("#cg-search", "Enter")
        z = fitted["words"].index(word)
        expected = np.flatnonzero(pi[:, z] >= 0.5 * pi[:, z].max()).tolist()
        assert pg("countgridMap.highlightedCells()") == expected
        assert f"{len(expected)} cell" in pg.page.inner_text("#cg-search-info")
    both = pg("countgridMap.search('w0_1 W1_2')")     # several words: the union; any case
    union = set()
    for word in ("w0_1", "w1_2"):
        z = fitted["words"].index(word)
        union |= set(np.flatnonzero(pi[:, z] >= 0.5 * pi[:, z].max()).tolist())
    assert both == sorted(union)
    assert pg("countgridMap.search('nosuchword')") == []
    assert "not in the vocabulary" in pg.page.inner_text("#cg-search-info")
    assert pg.errors == []


def test_click_lists_the_python_ranking(open_map, map_files, fitted):
    pg = open_map(map_files[0]["json"])
    data = map_data(fitted["grid"], fitted["X"], **map_files[1])
    box = pg.page.locator("#cg-canvas").bounding_box()
    for r, c in [(0, 0), (4, 7), (9, 12)]:
        x, y = pg("([r, c]) => countgridMap.cellCenter(r, c)", [r, c])
        pg.page.mouse.click(box["x"] + x, box["y"] + y)       # a real click on the canvas
        listed = pg("countgridMap.listedDocuments()")
        idx, scores = rank_documents(data, (r, c))
        assert listed == idx.tolist()                          # exactly the page's rule
        assert pg("countgridMap.listedScores()") == scores.tolist()
        ref_idx, ref_scores = fitted["grid"].documents_near(fitted["X"], (r, c), 10)
        np.testing.assert_allclose(scores[:10], ref_scores, atol=1.001e-3)
        items = pg.page.locator("#cg-docs li")
        assert items.count() == len(listed)
        first = fitted["titles"][listed[0]]
        assert items.nth(0).locator(".cg-doc-title a").inner_text() == first
        assert items.nth(0).locator("a").get_attribute("href") == fitted["links"][listed[0]]
        assert f"Cell ({r}, {c})" in pg.page.inner_text("#cg-panel-info")
    # hovering a document outlines its MAP window
    positions = fitted["grid"].positions(fitted["X"])
    pg.page.locator("#cg-docs li").nth(2).hover()
    assert pg("countgridMap.outlinedWindow()") == positions[listed[2]].tolist()
    pg.page.mouse.move(box["x"] + 5, box["y"] + 5)
    assert pg("countgridMap.outlinedWindow()") is None
    assert pg.errors == []


def test_pan_wraps_around_the_torus(open_map, map_files):
    pg = open_map(map_files[0]["gzip"], width=900, height=600)
    pg("countgridMap.zoom(2)")
    v = pg("countgridMap.view()")
    cx, cy = v["width"] / 2, v["height"] / 2
    r0, c0 = pg("([x, y]) => countgridMap.cellAt(x, y)", [cx, cy])
    before = screenshot_array(pg)
    # a drag with the mouse across the seam (more than the grid's width in cells)
    box = pg.page.locator("#cg-canvas").bounding_box()
    pg.page.mouse.move(box["x"] + 450, box["y"] + 300)
    pg.page.mouse.down()
    pg.page.mouse.move(box["x"] + 250, box["y"] + 200, steps=5)
    pg.page.mouse.up()
    pg.page.wait_for_timeout(50)
    moved = pg("countgridMap.view()")
    assert moved["ox"] == pytest.approx(v["ox"] + 200 / v["s"])
    assert pg("countgridMap.listedDocuments()") == []        # a drag is not a click
    r1, c1 = pg("([x, y]) => countgridMap.cellAt(x, y)", [cx, cy])
    assert [r1, c1] == [int(np.floor(moved["oy"] + cy / v["s"])) % 10,
                        int(np.floor(moved["ox"] + cx / v["s"])) % 13]
    assert moved["ox"] + cx / v["s"] > 13 or v["ox"] + cx / v["s"] < 13 - 200 / v["s"] or \
        c1 != c0
    # panning by whole extents (forward and back) is the identity on the torus
    before = screenshot_array(pg)
    for dx, dy in [(13, 0), (0, -10), (26, 20), (-13 * 3, -10)]:
        pg("([dx, dy]) => countgridMap.pan(dx, dy)", [dx, dy])
        assert pg("([x, y]) => countgridMap.cellAt(x, y)", [cx, cy]) == [r1, c1]
        np.testing.assert_array_equal(screenshot_array(pg), before)
    r0, c0 = r1, c1
    # half a grid further: the centre cell moves by that many cells, modulo the extent
    pg("countgridMap.pan(8, 7)")
    assert pg("([x, y]) => countgridMap.cellAt(x, y)", [cx, cy]) == [(r0 + 7) % 10,
                                                                       (c0 + 8) % 13]
    assert pg.errors == []


def test_csv_export(open_map, map_files, fitted):
    pg = open_map(map_files[0]["gzip"])
    assert pg.page.locator("#cg-csv").is_disabled()
    listed = pg("countgridMap.pin(4, 7)")
    scores = pg("countgridMap.listedScores()")
    with pg.page.expect_download() as dl:
        pg.page.click("#cg-csv")
    download = dl.value
    assert download.suggested_filename == "countgrid-documents-4-7.csv"
    text = open(download.path(), encoding="utf-8", newline="").read()
    assert text == pg("countgridMap.csv()")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["rank", "index", "id", "title", "score", "link", "snippet"]
    assert [int(r[1]) for r in rows[1:]] == listed
    for k, row in enumerate(rows[1:]):
        t = int(row[1])
        assert row[0] == str(k + 1) and row[2] == str(t)
        assert row[3] == fitted["titles"][t] and row[5] == fitted["links"][t]
        assert row[6] == fitted["snippets"][t]           # quotes, comma and newline survive
        assert float(row[4]) == pytest.approx(scores[k], abs=1e-6)
    assert pg.errors == []


def test_colour_by_metadata(open_map, map_files, fitted):
    pg = open_map(map_files[0]["gzip"], width=900, height=600)
    data = map_data(fitted["grid"], fitted["X"], **map_files[1])
    pg.page.select_option("#cg-color", label="topic")
    legend = pg.page.inner_text("#cg-legend")
    assert "topic" in legend and "alpha (80)" in legend and "gamma (80)" in legend
    P = data["colorings"][0]["values"]
    palette = np.array([[0, 114, 178], [213, 94, 0], [0, 158, 115]], dtype=float)
    expected = 255 + (P @ palette - 255) * 0.55      # the level colours mixed, then with white
    got = np.array([pg(f"countgridMap.cellColor({i})") for i in range(130)])
    np.testing.assert_allclose(got, expected, atol=0.51)
    # what is drawn: the pixel near a cell's corner (no words there) has the cell's colour
    pixels = screenshot_array(pg)
    v = pg("countgridMap.view()")
    for i in (0, 17, 64, 129):
        x, y = pg("([r, c]) => countgridMap.cellCenter(r, c)", [i // 13, i % 13])
        px, py = int(x - v["s"] / 2 + 3), int(y - v["s"] / 2 + 3)
        if 0 <= px < pixels.shape[1] and 0 <= py < pixels.shape[0]:
            assert np.abs(pixels[py, px] - got[i]).max() <= 3
    pg.page.select_option("#cg-color", label="length")
    assert "length" in pg.page.inner_text("#cg-legend")
    assert pg.page.locator("#cg-legend .cg-bar").count() == 1
    pg.page.select_option("#cg-color", label="none")
    assert pg.page.locator("#cg-legend").is_hidden()
    assert pg.errors == []


def test_png_export_and_zoom(open_map, map_files):
    pg = open_map(map_files[0]["json"])
    s0 = pg("countgridMap.view()")["s"]
    box = pg.page.locator("#cg-canvas").bounding_box()
    pg.page.mouse.move(box["x"] + 100, box["y"] + 100)
    pg.page.mouse.wheel(0, -300)
    pg.page.wait_for_timeout(100)
    assert pg("countgridMap.view()")["s"] > s0 * 1.2
    with pg.page.expect_download() as dl:
        pg.page.click("#cg-png")
    import zlib
    png = open(dl.value.path(), "rb").read()
    pixels = decode_png(png, zlib)
    assert pixels.shape[0] > 100 and pixels.std() > 10
    assert pg("countgridMap.png()").startswith("data:image/png;base64,")
    assert pg.errors == []


def test_map_without_documents(open_map, fitted, tmp_path):
    path = write_html(fitted["grid"], tmp_path / "bare.html", feature_names=fitted["words"])
    pg = open_map(path)
    assert pg("countgridMap.pin(1, 2)") == []
    assert "no documents" in pg.page.inner_text("#cg-panel-info")
    assert len(pg("countgridMap.search('w0_0')")) > 0
    assert pg.errors == []
