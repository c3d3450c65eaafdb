"""Region names on the map (docs/map.md, "Regions"), in a real headless Chromium: zoomed
out the map names regions, a coarser level further out, cell words zoomed in; names never
overlap and stand in their own region."""
import warnings

import numpy as np
import pytest

import countgrid
from countgrid.grid import region_words, regions
from countgrid.maps import map_data, write_html



@pytest.fixture(scope="module")
def big_grid():
    rng = np.random.default_rng(0)
    topic = np.arange(300) % 6
    X = rng.poisson(0.3, size=(300, 48))
    for k in range(6):
        X[topic == k, 8 * k:8 * k + 8] += rng.poisson(2.0, size=((topic == k).sum(), 8))
    words = [f"t{k}w{j}" for k in range(6) for j in range(8)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid = countgrid.CountingGrid((32, 32), (4, 4), n_iter=10, random_state=0).fit(X)
    return grid, X, words


def test_map_data_holds_nested_named_levels(big_grid):
    grid, X, words = big_grid
    data = map_data(grid, X, feature_names=words)
    levels = data["regions"]
    assert [lev["n_regions"] for lev in levels] == [5, 20]
    expected = regions(grid, [5, 20])
    for lev, lab in zip(levels, expected):
        np.testing.assert_array_equal(lev["labels"], lab.ravel())
        names = region_words(grid, lab, 3, feature_names=words)
        assert lev["names"] == [" ".join(n) for n in names]
        assert [lab.ravel()[a] for a in lev["anchors"]] == list(range(lev["n_regions"]))
    coarse, fine = levels[0]["labels"], levels[1]["labels"]
    for r in range(20):
        assert np.unique(coarse[fine == r]).size == 1


def test_names_by_zoom_without_overlap(open_map, big_grid, tmp_path):
    grid, X, words = big_grid
    path = write_html(grid, tmp_path / "regions.html", X, feature_names=words)
    pg = open_map(path, width=1200, height=760)
    data = map_data(grid, X, feature_names=words)
    names = {lev["n_regions"]: lev["names"] for lev in data["regions"]}
    assert pg("countgridMap.regionLevels()") == [5, 20]

    def labels_now():
        placed = pg("countgridMap.regionLabels()")
        for i, a in enumerate(placed):           # no two names overlap
            for b in placed[i + 1:]:
                assert not (a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"]
                            and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]), (a, b)
        for b in placed:                          # each name in its own region
            assert b["text"] == names[b["level"]][b["region"]]
            r, c = pg("([x, y]) => countgridMap.cellAt(x, y)",
                      [b["x"] + b["w"] / 2, b["y"] + b["h"] / 2])
            assert pg("([i, n]) => countgridMap.regionOf(i, n)",
                      [r * 32 + c, b["level"]]) == b["region"]
        return placed

    def zoom_to(s):
        pg("s => countgridMap.zoom(s / countgridMap.view().s)", s)
        assert pg("countgridMap.view().s") == pytest.approx(s)

    zoom_to(30)       # the fine level's regions span 30 sqrt(1024 / 20) = 215 px >= 150
    first = labels_now()
    assert first and {b["level"] for b in first} == {20}
    pg("countgridMap.pan(32, -32)")      # a whole period: the same names in the same places
    assert [(b["text"], round(b["x"], 3), round(b["y"], 3)) for b in labels_now()] == \
        [(b["text"], round(b["x"], 3), round(b["y"], 3)) for b in first]
    zoom_to(15)       # they span 107 px, the coarse level's 215
    coarse = labels_now()
    assert coarse and {b["level"] for b in coarse} == {5}
    assert {b["text"] for b in coarse} != {b["text"] for b in first}
    pg("countgridMap.zoom(8)")                    # cells of 42 px or more: their own words
    assert pg("countgridMap.view().s") >= 42
    assert pg("countgridMap.regionLabels()") == []


def test_region_list_flies_to_the_region(open_map, big_grid, tmp_path):
    grid, X, words = big_grid
    path = write_html(grid, tmp_path / "regions.html", X, feature_names=words)
    pg = open_map(path, width=1200, height=760)
    data = map_data(grid, X, feature_names=words)
    coarse = data["regions"][0]
    # each document counts in the region of the centre of its most probable window
    corners = np.unravel_index(data["doc_map"], (32, 32))
    centres = np.ravel_multi_index([(c + 2) % 32 for c in corners], (32, 32))
    expected = np.bincount(coarse["labels"][centres], minlength=5) / X.shape[0]
    np.testing.assert_allclose(coarse["doc_share"], expected, rtol=1e-6)
    items = pg.page.locator("#cg-regions li")
    assert items.count() == 5
    for k in range(5):
        text = items.nth(k).inner_text()
        assert coarse["names"][k] in text and f"{100 * expected[k]:.1f} %" in text
    items.nth(3).click()
    view = pg("countgridMap.view()")
    centre = pg("([x, y]) => countgridMap.cellAt(x, y)", [view["width"] / 2, view["height"] / 2])
    anchor = int(coarse["anchors"][3])
    assert centre == [anchor // 32, anchor % 32]
    assert view["s"] < 42 and pg("countgridMap.regionLabels()")
    assert pg("countgridMap.listedDocuments()")          # the anchor cell is pinned
