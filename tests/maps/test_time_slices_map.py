"""The map of a TimeSlicedCountingGrid (docs/map.md, "Time-sliced grids"): its data computed
from the model (each document under its period's grid, each period's words), and the page
in a real headless Chromium (the slider on one period shows that period's words)."""
import warnings

import numpy as np
import pytest

import countgrid
from countgrid.grid import window_loglik
from countgrid.grid._time_slices import periods_view
from countgrid.maps import map_data, write_html

from tests.maps.conftest import small_corpus

YEARS = np.array(["2019-05-01", "2020-05-01", "2021-05-01"])


@pytest.fixture(scope="module")
def sliced():
    X, words, meta, titles, snippets, links, topic = small_corpus(seed=3)
    dates = YEARS[np.arange(len(X)) % 3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", countgrid.ConvergenceWarning)
        tg = countgrid.TimeSlicedCountingGrid((10, 13), (3, 4), n_iter=10, smoothness=0.2,
                                              random_state=0).fit(X, times=dates)
    return dict(model=tg, X=X, words=words, dates=dates, titles=titles)


def test_map_data_reads_each_period(sliced):
    tg, X, dates = sliced["model"], sliced["X"], sliced["dates"]
    data = map_data(tg, X, feature_names=sliced["words"], time=dates)
    T = data["time"]
    assert T["labels"] == ["2019", "2020", "2021"] and T["grids"].tolist() == [0, 1, 2]
    # the words of each period: those of its grid's own map
    for p in range(3):
        own = map_data(tg.period_grid(p), feature_names=sliced["words"])
        assert np.array_equal(T["top_words"][p], own["top_words"])
        np.testing.assert_allclose(T["top_weights"][p], own["top_weights"], rtol=1e-6)
        np.testing.assert_allclose(T["top_scores"][p], own["top_scores"], rtol=1e-6)
    # the words at all dates: the periods' grids averaged by their documents
    w = tg.n_documents_ / tg.n_documents_.sum()
    average = np.einsum("p,pijz->ijz", w, tg.pi_.astype(np.float64))
    np.testing.assert_allclose(data["top_weights"], np.take_along_axis(
        average.reshape(130, -1), data["top_words"], axis=1), rtol=1e-5)
    # each document sits where its period's grid puts it
    q = tg.transform(X, times=dates)
    assert np.array_equal(data["doc_map"], np.argmax(q, axis=1))
    for p in range(3):
        rows = np.flatnonzero(dates == YEARS[p])
        np.testing.assert_allclose(
            data["doc_loglik"][rows],
            window_loglik(tg.period_grid(p), X[rows], data["doc_map"][rows]), rtol=1e-5)
    assert (data["time"]["counts"] == 80).all()


def test_the_periods_view_visits_each_document_under_its_period(sliced):
    tg, X, dates = sliced["model"], sliced["X"], sliced["dates"]
    codes = tg.periods(dates)
    codes[::7] = -1                      # no period: under the average grid
    view = periods_view(tg, codes)
    got_q, got_ll = [], []
    view._visit_posteriors(X, lambda t0, t1, q, ll: (got_q.append(q.copy()),
                                                     got_ll.append(ll.copy())))
    q, ll = np.concatenate(got_q), np.concatenate(got_ll)
    for p in (-1, 0, 1, 2):
        rows = np.flatnonzero(codes == p)
        grid = view._average if p < 0 else tg.period_grid(p)
        np.testing.assert_array_equal(q[rows], grid.transform(X[rows]))
        np.testing.assert_allclose(ll[rows], grid.score_samples(X[rows]), rtol=1e-12)
    np.testing.assert_array_equal(view.transform(X), q)
    with pytest.raises(ValueError, match="periods"):
        view.transform(X[:5])
    with pytest.raises(TypeError, match="not a saveable"):
        countgrid.io.save(view, "never.npz")


def test_map_of_a_sliced_grid_needs_the_dates(sliced):
    tg, X = sliced["model"], sliced["X"]
    with pytest.raises(ValueError, match="time"):
        map_data(tg, X)
    with pytest.raises(ValueError, match="period"):
        map_data(tg, X, time=sliced["dates"], period="month")
    # without documents: the average's words, no slider
    data = map_data(tg, feature_names=sliced["words"])
    assert data["time"] is None and data["n_documents"] == 0


def test_the_slider_shows_each_period_s_words(open_map, sliced, tmp_path):
    tg, X = sliced["model"], sliced["X"]
    path = write_html(tg, tmp_path / "slices.html", X, feature_names=sliced["words"],
                      titles=sliced["titles"], time=sliced["dates"])
    data = map_data(tg, X, feature_names=sliced["words"], time=sliced["dates"])
    words = np.asarray(sliced["words"])
    pg = open_map(path, width=900, height=700)
    assert "one grid per year" in pg.page.inner_text("#cg-stats")
    cells = [0, 17, 64, 129]
    base = [words[data["top_words"][i]].tolist() for i in cells]
    assert [pg(f"countgridMap.cellWords({i})") for i in cells] == base
    changed = 0
    for p in range(3):
        pg(f"countgridMap.setTime({p}, {p})")
        shown = [pg(f"countgridMap.cellWords({i})") for i in cells]
        assert shown == [words[data["time"]["top_words"][p][i]].tolist() for i in cells]
        changed += shown != base
    assert changed > 0
    # a range of periods, or all dates: the average's words again
    pg("countgridMap.setTime(0, 2)")
    assert [pg(f"countgridMap.cellWords({i})") for i in cells] == base
    pg("countgridMap.setTime(1, 1)")
    pg("countgridMap.setTime(null)")
    assert [pg(f"countgridMap.cellWords({i})") for i in cells] == base
