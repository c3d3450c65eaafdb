"""The pages of countgrid.maps.write_bundle and of one file's two data parts in real
headless Chromium (docs/map.md, "Bundles"): the documents come after the first frame and
give the same lists, searches and filters as Python; a missing chunk is named; over HTTP
(a static host), a click made before the documents are in runs once they are."""
import numpy as np

from countgrid.maps import map_data, rank_documents, write_bundle
from countgrid.maps._bundle import CHUNK_FOLDER

from _map_page import decode



def test_bundle_page_lists_searches_and_filters_as_python(open_map, fitted, map_options,
                                                          tmp_path):
    index = write_bundle(fitted["grid"], tmp_path / "b", fitted["X"], chunk_documents=70,
                         **map_options)
    data = map_data(fitted["grid"], fitted["X"], **map_options)
    pg = open_map(index)
    assert pg("countgridMap.documentsMs") >= pg("countgridMap.firstFrameMs") > 0
    for r, c in [(0, 0), (4, 7), (9, 12)]:
        pg("([r, c]) => countgridMap.pin(r, c)", [r, c])
        idx, scores = rank_documents(data, (r, c))
        assert pg("countgridMap.listedDocuments()") == idx.tolist()
        assert pg("countgridMap.listedScores()") == scores.tolist()
    # the documents of the last chunk are found, by title
    title = fitted["titles"][237]
    assert 237 in pg("q => countgridMap.searchDocuments(q)", title)
    pg("countgridMap.setFilter('topic', ['beta'])")
    keep = np.asarray(fitted["meta"]["topic"]) == "beta"
    assert pg("countgridMap.keptDocuments()") == np.flatnonzero(keep).tolist()
    assert pg.errors == []


def test_single_file_documents_come_after_the_first_frame(open_map, fitted, map_options,
                                                          tmp_path):
    from countgrid.maps import write_html
    path = write_html(fitted["grid"], tmp_path / "m.html", fitted["X"], **map_options)
    assert decode(path.read_text("utf-8"))["titles"] == fitted["titles"]
    pg = open_map(path)
    assert pg("countgridMap.documentsMs") >= pg("countgridMap.firstFrameMs") > 0


def test_a_missing_chunk_is_named_and_the_map_still_drawn(browser, fitted, map_options,
                                                          tmp_path):
    index = write_bundle(fitted["grid"], tmp_path / "b", fitted["X"], chunk_documents=70,
                         **map_options)
    (tmp_path / "b" / CHUNK_FOLDER / "chunk-00002.js").unlink()
    page = browser.new_page()
    page.goto(index.as_uri())
    page.wait_for_function("window.countgridMap && 'error' in countgridMap", timeout=30000,
                           polling=50)
    assert "chunk-00002.js" in page.evaluate("countgridMap.error")
    assert "chunk-00002.js" in page.inner_text("#cg-error")
    assert page.evaluate("countgridMap.firstFrameMs") > 0
    assert "10 × 13 grid" in page.inner_text("#cg-stats")
    page.close()


def test_over_http_a_click_before_the_documents_runs_once_they_are_in(browser, fitted,
                                                                       map_options, tmp_path):
    """A static web host (Python's http.server) holding back the last chunk: the map is
    drawn, a pin waits, and lists the Python ranking once the chunk is served."""
    import functools
    import http.server
    import threading

    write_bundle(fitted["grid"], tmp_path / "b", fitted["X"], chunk_documents=70, **map_options)
    release = threading.Event()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            if self.path.endswith("chunk-00003.js"):
                release.wait(30)
            super().do_GET()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(tmp_path / "b")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    page = browser.new_page()
    try:
        page.goto(f"http://127.0.0.1:{server.server_port}/index.html")
        page.wait_for_function("window.countgridMap && countgridMap.firstFrameMs > 0",
                               timeout=30000, polling=50)
        page.wait_for_function("document.getElementById('cg-stats').textContent"
                               ".includes('documents 3/4')", timeout=30000, polling=50)
        assert page.evaluate("countgridMap.ready") is False
        assert page.evaluate("countgridMap.pin(4, 7)") is None
        assert "Loading the documents" in page.inner_text("#cg-panel-info")
        release.set()
        page.wait_for_function("countgridMap.ready", timeout=30000, polling=50)
        idx, _ = rank_documents(map_data(fitted["grid"], fitted["X"], **map_options), (4, 7))
        assert page.evaluate("countgridMap.listedDocuments()") == idx.tolist()
        assert "documents 3/4" not in page.inner_text("#cg-stats")
    finally:
        release.set()
        page.close()
        server.shutdown()
