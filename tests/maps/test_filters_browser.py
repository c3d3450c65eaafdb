"""Filters on metadata (docs/map.md, "Filters") in a real headless Chromium: the documents
kept are those Python selects (levels ticked, numbers in range, and the time range), the
lists and the document search keep only them, each cell fades by the share of its
documents' mass kept (as countgrid.grid.shares_by_period / compare_groups spread it), the
controls and a copied fragment set them, and a hostile fragment is ignored."""
import numpy as np
import pytest

from countgrid.grid._groups import group_masses
from countgrid.maps import map_data, rank_documents, write_html


def dates_of(n):
    return np.array([f"2024-{1 + t % 4:02d}-10" for t in range(n)], dtype=object)


@pytest.fixture(scope="module")
def filter_map(fitted, tmp_path_factory):
    meta = dict(fitted["meta"], published=dates_of(len(fitted["topic"])))
    return write_html(fitted["grid"], tmp_path_factory.mktemp("filters") / "map.html",
                      fitted["X"], metadata=meta, titles=fitted["titles"], time="published",
                      period="month")


def kept(fitted, levels=None, lo=-np.inf, hi=np.inf, months=None):
    topic, length = fitted["meta"]["topic"], fitted["meta"]["length"]
    keep = np.ones(len(topic), bool)
    if levels is not None:
        keep &= np.isin(topic, levels)
    keep &= (length >= lo) & (length <= hi)
    if months is not None:
        keep &= np.isin(np.arange(len(topic)) % 4, months)
    return keep


@pytest.mark.parametrize("levels, lo, hi", [(["alpha"], None, None),
                                            (["beta", "gamma"], 20, None),
                                            (None, None, 25.5), ([], None, None)])
def test_the_documents_kept_and_the_fading_are_python_s(open_map, fitted, filter_map,
                                                       levels, lo, hi):
    pg = open_map(filter_map)
    if levels is not None:
        pg("(v) => countgridMap.setFilter('topic', v)", levels)
    if lo is not None or hi is not None:
        pg("(v) => countgridMap.setFilter('length', v)", [lo, hi])
    keep = kept(fitted, levels, -np.inf if lo is None else lo, np.inf if hi is None else hi)
    assert pg("countgridMap.keptDocuments()") == np.flatnonzero(keep).tolist()
    info = pg("document.getElementById('cg-filter-info').textContent")
    assert info == f"{keep.sum()} of {len(keep)} documents kept"
    fade = np.array(pg("countgridMap.cellFade()"))
    masses = group_masses(fitted["grid"], fitted["X"], keep.astype(np.int64), 2)
    share = np.divide(masses[1], masses.sum(axis=0))
    want = share / share.max() if share.max() > 0 else np.zeros_like(share)
    # the page sums the stored posteriors (all but at most 1e-3 of each document's mass)
    np.testing.assert_allclose(fade, want, atol=0.02)
    assert pg.errors == []


def test_lists_and_searches_keep_the_filtered_documents(open_map, fitted, filter_map):
    pg = open_map(filter_map)
    data = map_data(fitted["grid"], fitted["X"], titles=fitted["titles"])
    everyone = rank_documents(data, (5, 5), n_documents=len(fitted["topic"]))[0]
    pg("countgridMap.setFilter('topic', ['beta'])")
    keep = kept(fitted, ["beta"])
    assert pg("countgridMap.pin(5, 5)") == [t for t in everyone if keep[t]][:100]
    found = pg("countgridMap.searchDocuments('document')")
    assert found == np.flatnonzero(keep).tolist()
    # with the time range too: both must hold
    pg("countgridMap.setTime(1, 2)")
    both = keep & kept(fitted, months=[1, 2])
    assert pg("countgridMap.keptDocuments()") == np.flatnonzero(both).tolist()
    assert pg("countgridMap.pin(5, 5)") == [t for t in everyone if both[t]][:100]
    pg("countgridMap.setTime(null)")
    pg("countgridMap.setFilter('topic', null)")
    assert pg("countgridMap.cellFade()") is None
    assert pg("countgridMap.keptDocuments()") == list(range(len(keep)))


def test_the_controls_and_the_fragment(open_map, fitted, filter_map):
    pg = open_map(filter_map)
    pg("document.getElementById('cg-filters-box').open = true")
    boxes = pg.page.locator("#cg-filters fieldset").nth(0).locator("input[type=checkbox]")
    assert boxes.count() == 3
    boxes.nth(1).uncheck()
    assert pg("countgridMap.filters()") == [["topic", ["alpha", "gamma"]]]
    lo = pg.page.locator("#cg-filters fieldset").nth(1).locator("input[type=number]").nth(0)
    lo.fill("22")
    lo.dispatch_event("change")
    # (an open end is Infinity in the page, null once serialised)
    assert pg("countgridMap.filters()") == [["topic", ["alpha", "gamma"]], ["length", [22, None]]]
    keep = kept(fitted, ["alpha", "gamma"], 22)
    assert pg("countgridMap.keptDocuments()") == np.flatnonzero(keep).tolist()
    state = pg("countgridMap.viewState()")
    assert "f=" in state
    pg.page.locator("#cg-filters fieldset").nth(0).locator("button", has_text="all").click()
    pg("countgridMap.setFilter('length', null)")
    assert pg("countgridMap.filters()") == []
    assert pg("countgridMap.keptDocuments()") == list(range(len(keep)))
    pg("(s) => countgridMap.applyViewState(s)", state)
    assert pg("countgridMap.keptDocuments()") == np.flatnonzero(keep).tolist()
    assert not boxes.nth(1).is_checked() and boxes.nth(0).is_checked()
    # malformed parts are ignored; levels that do not exist tick nothing
    for hostile, n_kept in [("#f=99:1", len(keep)), ("#f=0:x", len(keep)),
                            ("#f=1:1~2~3", len(keep)), ("#f=1:~", len(keep)),
                            ("#f=" + "_" * 100, len(keep)),
                            ("#f=0:" + ".".join(["7"] * 5000), len(keep)),   # cut: malformed
                            ("#f=0:7", 0)]:
        pg("countgridMap.setFilter('topic', null)")
        pg("countgridMap.setFilter('length', null)")
        pg("(s) => countgridMap.applyViewState(s)", hostile)
        assert len(pg("countgridMap.keptDocuments()")) == n_kept, hostile[:40]
    assert pg.errors == []


def test_a_map_without_metadata_has_no_filters(open_map, fitted, tmp_path):
    pg = open_map(write_html(fitted["grid"], tmp_path / "plain.html", fitted["X"]))
    assert pg("document.getElementById('cg-filters-box').hidden")
    assert pg("countgridMap.setFilter('topic', ['alpha'])") is None
