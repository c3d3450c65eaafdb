"""The map in a notebook (issue 22, item 10): a fitted grid shows a static preview
(``_repr_html_``), ``to_html()`` without a path returns the page, and ``maps.embed`` puts
the map in a sandboxed ``srcdoc`` iframe that keeps its size and cannot restyle or reach
the host page, tested in Chromium with a hostile host page."""
import contextlib
import html
import re

import numpy as np
import pytest

import countgrid
from countgrid import maps


def test_preview_is_static_escaped_html(fitted):
    grid = fitted["grid"]
    words = [f"<script>w{j}</script>" for j in range(grid.n_features_in_)]
    out = maps._preview.preview_html(grid, feature_names=words)
    assert "<script" not in out and "&lt;script&gt;w" in out
    assert out.count("<tr>") == min(grid.pi_.shape[0], 12)
    assert "countgrid.maps.embed" in out
    assert grid._repr_html_().startswith("<div>")
    assert countgrid.CountingGrid()._repr_html_() is None


def test_to_html_without_a_path_returns_the_page(fitted, tmp_path):
    grid, X = fitted["grid"], fitted["X"]
    page = grid.to_html(X=X, titles=fitted["titles"])
    assert isinstance(page, str) and page.startswith("<!DOCTYPE html>")
    grid.to_html(tmp_path / "m.html", X, titles=fitted["titles"])
    assert (tmp_path / "m.html").read_text(encoding="utf-8") == page


def test_the_grid_draws_through_what_the_map_layer_registers(fitted, monkeypatch):
    """CountingGrid.to_html and _repr_html_ call what countgrid.maps registered with
    countgrid.grid._display (the grid imports nothing from the map layer)."""
    from countgrid.grid import _display
    grid, X = fitted["grid"], fitted["X"]
    assert _display._RENDERER == {"to_html": maps._html.grid_to_html,
                                  "preview": maps._preview.preview_html,
                                  "widget": maps._widget.widget}
    assert grid.to_html(X=X) == maps._html.render_html(maps.map_data(grid, X))
    monkeypatch.setattr(_display, "_RENDERER", {})
    assert grid._repr_html_() is None
    with pytest.raises(RuntimeError, match="import countgrid.maps"):
        grid.to_html(X=X)
    calls = []
    _display.register_map(lambda *a, **k: calls.append((a, k)) or "page",
                          lambda g: "preview")
    assert grid.to_html("m.html", X, title="t") == "page"
    assert calls == [((grid, "m.html", X), {"title": "t"})]
    assert grid._repr_html_() == "preview"
    with pytest.raises(RuntimeError, match="no map layer with a widget"):
        grid.widget(X)
    _display.register_map(None, None, lambda g, X, **k: calls.append((g, X, k)) or "widget")
    assert grid.widget(X, height=300) == "widget" and calls[-1] == (grid, X, {"height": 300})


@pytest.mark.parametrize("height", [0, 99, 2.5, "640", True])
def test_embed_checks_its_height(fitted, height):
    with pytest.raises(ValueError, match="height"):
        maps.embed(fitted["grid"], height=height)


HOST = """<!DOCTYPE html><html><head><style>
* { font-size: 3px !important; }
canvas, div { height: 7px !important; display: block; }
body { background: rgb(1, 2, 3); }
</style></head><body><p id="host">host page</p>{{FRAME}}</body></html>"""


@contextlib.contextmanager
def host_page(browser, path, host):
    """(page, the map's frame once ready, page errors) of the host page ``host`` at
    ``path``; the page is closed after."""
    path.write_text(host, encoding="utf-8")
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(path.as_uri())
        inner = next(f for f in page.frames if f != page.main_frame)
        # polled on a timer: headless Chromium at times runs no animation frame in the
        # sandboxed frame, and Playwright polls on animation frames by default (CI at 62928ea)
        inner.wait_for_function("window.countgridMap && countgridMap.ready", timeout=30000,
                                polling=50)
        yield page, inner, errors
    finally:
        page.close()


def test_the_embedded_map_is_isolated_and_keeps_its_size(fitted, browser, tmp_path):
    grid, X = fitted["grid"], fitted["X"]
    frame = maps.embed(grid, X, height=600, titles=fitted["titles"])._repr_html_()
    assert re.match(r'<iframe sandbox="allow-scripts allow-downloads" ', frame)
    with host_page(browser, tmp_path / "host.html", HOST.replace("{{FRAME}}", frame)) as (
            page, inner, errors):
        size = inner.evaluate("(() => { const c = document.querySelector('canvas');"
                              " const r = c.getBoundingClientRect();"
                              " return [r.width, r.height]; })()")
        assert size[0] > 300 and size[1] > 300, size            # the host's CSS cannot reach it
        # the map's styles do not reach the host, and its script cannot reach the host
        assert page.evaluate("getComputedStyle(document.body).backgroundColor") == \
            "rgb(1, 2, 3)"
        assert page.evaluate("document.getElementById('host').textContent") == "host page"
        blocked = inner.evaluate("(() => { try { return window.parent.document.title + 'X'; }"
                                 " catch (e) { return 'blocked'; } })()")
        assert blocked == "blocked"
        box = page.evaluate("document.querySelector('iframe').getBoundingClientRect().height")
        assert box == pytest.approx(600, abs=4)
        assert not errors, errors
    assert html.unescape(frame.split('srcdoc="', 1)[1][:-len('"></iframe>')]).startswith(
        "<!DOCTYPE html>")
    assert np.isfinite(size).all()


def test_a_map_hidden_until_shown_is_fitted_when_shown(fitted, browser, tmp_path):
    """A map whose page has no size yet (a collapsed notebook output, a frame not laid out)
    waits for its first real size: fitted to 1 pixel, it drew ~10^8 cells once shown and
    the tab hung (about 1 in 12 fresh browsers loading the embedded map, CI at a922441)."""
    grid, X = fitted["grid"], fitted["X"]
    frame = maps.embed(grid, X, height=600, titles=fitted["titles"])._repr_html_()
    host = HOST.replace("{{FRAME}}", frame.replace("<iframe ", '<iframe class="later" ', 1))
    host = host.replace("</style>", ".later { display: none; }</style>")
    with host_page(browser, tmp_path / "host.html", host) as (page, inner, errors):
        hidden = inner.evaluate("countgridMap.view()")
        assert hidden["width"] == 0 and hidden["s"] >= 1, hidden
        page.evaluate("document.querySelector('iframe').classList.remove('later')")
        inner.wait_for_function("countgridMap.view().width > 300", timeout=10000, polling=50)
        shown = inner.evaluate("countgridMap.view()")
        E1, E2 = grid.extent
        assert shown["s"] == pytest.approx(min(shown["width"] / E2, shown["height"] / E1))
        assert inner.evaluate("countgridMap.cellAt(5, 5)") is not None
        assert not errors, errors
