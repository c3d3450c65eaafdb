"""Sharing a view (docs/map.md, "Sharing a view"), in a real headless Chromium: the URL
fragment holds centre, zoom, pinned cell or selection, search and colouring; a copied
link reopens the same view; a hostile fragment changes nothing and breaks nothing."""
import pytest

from countgrid.maps import write_html


@pytest.fixture(scope="module")
def map_path(fitted, tmp_path_factory):
    d = tmp_path_factory.mktemp("view_state")
    return write_html(fitted["grid"], d / "map.html", fitted["X"],
                      feature_names=fitted["words"], titles=fitted["titles"],
                      metadata=fitted["meta"])


def fresh_page(browser, url, width=1100, height=700):
    page = browser.new_page(viewport={"width": width, "height": height})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(url)
    page.wait_for_function("window.countgridMap && countgridMap.ready", timeout=30000, polling=50)
    return page, errors


def snapshot(page):
    return page.evaluate("""() => {
      const v = countgridMap.view();
      return { centre: countgridMap.cellAt(v.width / 2, v.height / 2),
               zoom: v.s, listed: countgridMap.listedDocuments(),
               highlighted: countgridMap.highlightedCells(),
               colour: countgridMap.colouring(),
               query: document.getElementById('cg-search').value };
    }""")


def test_a_copied_link_reopens_the_view(browser, map_path, fitted):
    page, errors = fresh_page(browser, map_path.as_uri())
    word = fitted["words"][3]
    page.evaluate("countgridMap.colorBy('topic')")
    page.evaluate("w => countgridMap.search(w)", word)
    page.evaluate("countgridMap.pin(4, 7)")
    page.evaluate("countgridMap.zoom(1.7)")
    page.evaluate("countgridMap.pan(3.25, -2.5)")
    page.wait_for_function("location.hash === countgridMap.viewState()", timeout=5000, polling=50)
    link = page.evaluate("location.href")
    before = snapshot(page)
    assert "#" in link and before["listed"] and before["highlighted"]
    other, errors2 = fresh_page(browser, link)
    after = snapshot(other)
    assert after["centre"] == before["centre"]
    assert after["zoom"] == pytest.approx(before["zoom"], rel=1e-3)
    assert after["listed"] == before["listed"]
    assert after["highlighted"] == before["highlighted"]
    assert (after["colour"], after["query"]) == ("topic", word)
    # a different window size keeps the centre and the zoom relative to the fitted view
    small, _ = fresh_page(browser, link, width=800, height=520)
    assert snapshot(small)["centre"] == before["centre"]
    for p in (page, other, small):
        p.close()
    assert errors == errors2 == []


@pytest.mark.parametrize("fragment", [
    "#x=NaN&y=Infinity&z=-3&pin=a,b&c=%3Cscript%3Ewindow.__pwned%3D1%3C%2Fscript%3E",
    "#z=1e308&x=1e308&y=-1e308&pin=999999999,-999999999",
    "#q=%3Cimg%20src%3Dx%20onerror%3Dwindow.__pwned%3D1%3E&c=nope",
    "#" + "x=1&" * 5000,
    "#%E0%A4%A",
])
def test_hostile_fragments_are_ignored(browser, map_path, fragment):
    page, errors = fresh_page(browser, map_path.as_uri() + fragment)
    assert errors == []
    assert page.evaluate("window.__pwned") is None
    state = snapshot(page)
    assert state["colour"] is None
    v = page.evaluate("countgridMap.view()")
    assert v["s"] > 0 and all(abs(v[k]) < 1e7 for k in ("ox", "oy"))
    page.close()


def test_the_selection_travels_in_the_link(browser, map_path):
    page, errors = fresh_page(browser, map_path.as_uri())
    chosen = page.evaluate("countgridMap.selectCells(8, 11, 11, 14)")      # across the seam
    page.wait_for_function("location.hash === countgridMap.viewState()", timeout=5000,
                           polling=50)
    link = page.evaluate("location.href")
    assert "s=8%2C11%2C11%2C14" in link and chosen
    other, errors2 = fresh_page(browser, link)
    assert other.evaluate("countgridMap.listedDocuments()") == \
        page.evaluate("countgridMap.listedDocuments()")
    # a malformed or inverted rectangle is ignored
    for bad in ("#s=3,3,1,1", "#s=1,2,3", "#s=a,b,c,d", "#s=9999999,0,0,0"):
        other.evaluate("countgridMap.pin(0, 0)")
        other.evaluate("(h) => countgridMap.applyViewState(h)", bad)
        assert "s=" not in other.evaluate("countgridMap.viewState()")
    assert errors == [] and errors2 == []
    page.close()
    other.close()
