"""The time slider (docs/map.md, "Time") in a real headless Chromium: the page's density of
every period and range and its regions' shares are countgrid.grid.shares_by_period's, the
lists keep the documents of the range in the page's ranking, the slider and the play
button move the range, and a copied fragment restores it (a hostile one is clamped)."""
import numpy as np
import pytest

from countgrid.grid import shares_by_period
from countgrid.maps import map_data, rank_documents, write_html


def dates_of(fitted):
    """Six months, topic 0 early and topic 2 late; every 25th document has no date."""
    topic = fitted["topic"]
    n = len(topic)
    month = np.clip(topic * 2 + np.arange(n) % 2, 0, 5)
    days = np.array([f"2024-{1 + m:02d}-{1 + t % 27:02d}" for t, m in enumerate(month)],
                    dtype=object)
    days[::25] = ""
    return days


@pytest.fixture(scope="module")
def time_map(fitted, tmp_path_factory):
    meta = dict(fitted["meta"], published=dates_of(fitted))
    return write_html(fitted["grid"], tmp_path_factory.mktemp("time") / "map.html",
                      fitted["X"], metadata=meta, titles=fitted["titles"], time="published",
                      period="month")


def test_every_period_and_range_is_python_s_density(open_map, fitted, time_map):
    pg = open_map(time_map)
    res = shares_by_period(fitted["grid"], fitted["X"], dates_of(fitted), period="month")
    assert res.period == "month"
    assert pg("countgridMap.timeLabels()") == res.labels
    assert pg("countgridMap.timeRange()") is None
    for p0, p1 in [(p, p) for p in range(6)] + [(0, 5), (2, 4), (4, 1)]:
        got = np.array(pg("([a, b]) => countgridMap.setTime(a, b)", [p0, p1]))
        lo, hi = min(p0, p1), max(p0, p1)
        want = res.mass[lo:hi + 1].sum(axis=0) / res.n_documents[lo:hi + 1].sum()
        np.testing.assert_allclose(got, want.ravel(), rtol=1e-5, atol=1e-7)
        assert pg("countgridMap.timeRange()") == [lo, hi]
        assert pg("countgridMap.colouring()").startswith("published: ")
    assert pg.errors == []


def test_region_sparklines_are_python_s_shares(open_map, fitted, time_map):
    pg = open_map(time_map)
    data = map_data(fitted["grid"], fitted["X"], metadata=dict(
        fitted["meta"], published=dates_of(fitted)), time="published", period="month")
    assert [c["name"] for c in data["colorings"]] == ["topic", "length"]   # not a colouring
    for level in data["regions"]:
        labels = level["labels"].reshape(fitted["grid"].pi_.shape[:-1]).astype(np.int64)
        res = shares_by_period(fitted["grid"], fitted["X"], dates_of(fitted), "month",
                               labels=labels)
        got = np.array(pg("(n) => countgridMap.regionShares(n)", level["n_regions"]))
        np.testing.assert_allclose(got, res.region_share, rtol=1e-5, atol=1e-7)
    assert pg("document.querySelectorAll('#cg-regions canvas.cg-spark').length") == \
        data["regions"][0]["n_regions"]


def test_the_lists_keep_the_documents_of_the_range(open_map, fitted, time_map):
    pg = open_map(time_map)
    data = map_data(fitted["grid"], fitted["X"], metadata=dict(
        fitted["meta"], published=dates_of(fitted)), time="published",
        period="month", titles=fitted["titles"])
    periods = data["time"]["doc_periods"]
    everyone = rank_documents(data, (4, 6), n_documents=len(periods))[0].tolist()
    pg("countgridMap.setTime(1, 2)")
    listed = pg("countgridMap.pin(4, 6)")
    want = [t for t in everyone if 1 <= periods[t] <= 2][:100]
    assert listed == want and len(listed) > 0
    info = pg("document.getElementById('cg-panel-info').textContent")
    assert "of 2024-02 – 2024-03 cover it" in info
    # the selection and the document search keep them too
    sel = pg("countgridMap.selectCells(0, 0, 9, 12)")
    assert sorted(sel) == [t for t in range(len(periods)) if 1 <= periods[t] <= 2]
    found = pg("countgridMap.searchDocuments('topic 1')")
    assert found and all(1 <= periods[t] <= 2 for t in found)
    # "All dates" lists every document again
    pg("countgridMap.setTime(null)")
    assert pg("countgridMap.timeRange()") is None
    assert pg("countgridMap.pin(4, 6)") == everyone[:100]
    # so does choosing a colouring, which ends the time view: the pinned cell's list
    # follows at once (it kept the range's documents until the next click)
    pg("countgridMap.setTime(1, 2)")
    assert pg("countgridMap.listedDocuments()") == want
    pg("countgridMap.colorBy('topic')")
    assert pg("countgridMap.timeRange()") is None
    assert pg("countgridMap.listedDocuments()") == everyone[:100]


def test_the_sliders_the_play_button_and_the_fragment(open_map, time_map):
    pg = open_map(time_map)
    assert pg("getComputedStyle(document.getElementById('cg-time')).display") != "none"
    pg.page.fill("#cg-time-from", "3")
    pg.page.dispatch_event("#cg-time-from", "input")
    assert pg("countgridMap.timeRange()") == [3, 5]
    pg.page.fill("#cg-time-to", "4")
    pg.page.dispatch_event("#cg-time-to", "input")
    assert pg("countgridMap.timeRange()") == [3, 4]
    pg.page.fill("#cg-time-from", "1")
    pg.page.dispatch_event("#cg-time-from", "input")
    assert pg("countgridMap.timeRange()") == [1, 4]
    assert "2024-02 – 2024-05" in pg("document.getElementById('cg-time-info').textContent")
    pg.page.fill("#cg-time-to", "0")             # below "from": the range is that period
    pg.page.dispatch_event("#cg-time-to", "input")
    assert pg("countgridMap.timeRange()") == [0, 0]
    pg("countgridMap.setTime(1, 4)")
    state = pg("countgridMap.viewState()")
    assert "t=1-4" in state
    pg("countgridMap.setTime(null)")
    pg("(s) => countgridMap.applyViewState(s)", state)
    assert pg("countgridMap.timeRange()") == [1, 4]
    pg("(s) => countgridMap.applyViewState(s)", "#t=999999-4&x=1")     # clamped
    assert pg("countgridMap.timeRange()") == [4, 5]
    pg("(s) => countgridMap.applyViewState(s)", "#t=-1-2")              # ignored
    assert pg("countgridMap.timeRange()") == [4, 5]
    pg.page.click("#cg-time-play")
    assert pg("countgridMap.playing()")
    first = pg("countgridMap.timeRange()")
    pg.page.wait_for_function("countgridMap.timeRange()[0] > %d" % first[0], timeout=5000,
                              polling=50)
    pg.page.click("#cg-time-play")
    assert not pg("countgridMap.playing()")
    # choosing a colouring ends the time view
    pg.page.select_option("#cg-color", label="topic")
    assert pg("countgridMap.timeRange()") is None and pg("countgridMap.colouring()") == "topic"
    assert pg.errors == []


def test_a_map_without_dates_has_no_time_bar(open_map, fitted, tmp_path):
    path = write_html(fitted["grid"], tmp_path / "plain.html", fitted["X"])
    pg = open_map(path)
    assert pg("document.getElementById('cg-time').hidden")
    assert pg("countgridMap.timeLabels()") == [] and pg("countgridMap.setTime(0, 0)") is None
