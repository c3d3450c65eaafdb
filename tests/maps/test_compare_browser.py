"""Where groups differ, on the map (docs/map.md, "Compare groups"), in a real headless
Chromium: the page's log-odds, standard errors and outlined cells are those of
countgrid.grid.compare_groups."""
import numpy as np
import pytest

from countgrid.grid import compare_groups
from countgrid.maps import write_html


@pytest.fixture(scope="module")
def compare_map(fitted, tmp_path_factory):
    return write_html(fitted["grid"], tmp_path_factory.mktemp("compare") / "map.html",
                      fitted["X"], metadata=fitted["meta"])


@pytest.mark.parametrize("a, b", [("alpha", "beta"), ("gamma", None), ("beta", "alpha")])
def test_the_page_computes_what_python_does(open_map, fitted, compare_map, a, b):
    pg = open_map(compare_map)
    got = pg("([a, b]) => countgridMap.compare('topic', a, b)", [a, b])
    res = compare_groups(fitted["grid"], fitted["X"], fitted["meta"]["topic"], a, b)
    np.testing.assert_allclose(got["delta"], res.delta.ravel(), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(got["std"], res.std.ravel(), rtol=1e-3, atol=1e-4)
    near = np.minimum(np.abs(res.low), np.abs(res.high)).ravel() < 1e-3
    assert (np.array(got["marked"], bool) == res.marked.ravel())[~near].all()
    assert pg.errors == []


def test_the_compare_controls(open_map, compare_map):
    pg = open_map(compare_map)
    pg("countgridMap.colorBy('topic')")
    box = pg.page.locator("#cg-legend .cg-compare")
    box.locator("select").nth(0).select_option("beta")
    box.locator("button").click()
    assert pg("countgridMap.colouring()") == "topic: beta vs the rest"
    assert "outlined" in pg.page.inner_text("#cg-legend")
    pg.page.locator("#cg-legend button", has_text="back to topic").click()
    assert pg("countgridMap.colouring()") == "topic"
    assert pg("countgridMap.compare('topic', 'nope', null)") is None
    assert pg("countgridMap.compare('length', 'alpha', null)") is None   # continuous
    assert pg.errors == []


@pytest.mark.parametrize("a, b", [("alpha", None), ("beta", "gamma")])
def test_the_region_list_compares_regions_as_python(open_map, fitted, compare_map, a, b):
    """Region by region (the listed level), as compare_groups(..., labels=): more
    documents per unit, so regions differ where single cells cannot show it."""
    from countgrid.maps import map_data
    pg = open_map(compare_map)
    pg("([a, b]) => countgridMap.compare('topic', a, b)", [a, b])
    got = pg("countgridMap.compareRegions()")
    data = map_data(fitted["grid"], fitted["X"], metadata=fitted["meta"])
    coarse = min(data["regions"], key=lambda lev: lev["n_regions"])
    labels = coarse["labels"].reshape(fitted["grid"].pi_.shape[:-1]).astype(np.int64)
    res = compare_groups(fitted["grid"], fitted["X"], fitted["meta"]["topic"], a, b,
                         labels=labels)
    np.testing.assert_allclose(got["delta"], res.delta, rtol=1e-3, atol=1e-4)
    assert got["marked"] == res.marked.astype(int).tolist() and any(got["marked"])
    shown = pg("Array.from(document.querySelectorAll('#cg-regions .cg-region-diff'))"
               ".map((e) => e.textContent)")
    assert len(shown) == coarse["n_regions"] and all(" ± " in t for t in shown)
    pg("countgridMap.colorBy('topic')")
    assert pg("document.querySelectorAll('#cg-regions .cg-region-diff').length") == 0
    assert pg("countgridMap.compareRegions()") is None and pg.errors == []
