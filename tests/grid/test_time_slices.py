"""TimeSlicedCountingGrid: its anchored M-step against the NumPy reference
(tests/_reference/time_slices.py), the periods it makes of dates, inference under each
document's period, thread-independent fits and model files."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.exceptions import ConvergenceWarning
from countgrid.grid import CountingGrid, TimeSlicedCountingGrid
from countgrid.grid._time_slices import anchored_mstep, choose_slices
from countgrid._utils.dates import parse_dates
from tests._reference.grid import histograms_ref, mstep_ref
from tests._reference.time_slices import anchored_mstep_ref

EXTENT, WINDOW = (5, 6), (2, 3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("num_threads", [1, 2])
@pytest.mark.parametrize("weight", [0.0, 0.3, 25.0])
def test_anchored_mstep_matches_reference(dtype, num_threads, weight):
    rng = np.random.default_rng(0)
    Z, L = 12, 30
    pi = np.ascontiguousarray(rng.dirichlet(np.ones(Z), size=L).T, dtype=dtype)
    anchor = np.ascontiguousarray(rng.dirichlet(np.ones(Z), size=L).T, dtype=dtype)
    n = (rng.random((Z, L)) * 3).astype(dtype)
    h, _ = histograms_ref(pi, EXTENT, WINDOW)
    h = np.ascontiguousarray(h, dtype=dtype)
    expected = anchored_mstep_ref(n, h, pi, EXTENT, WINDOW, 0.02, 1e-10, anchor, weight)
    out = np.array(pi)
    anchored_mstep(np.array(n), h, out, EXTENT, WINDOW, 0.02, 1e-10, anchor, weight,
                   num_threads)
    tol = 3e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, expected, rtol=tol, atol=tol * 1e-3)
    if weight == 0.0:        # the plain M-step
        np.testing.assert_allclose(out, mstep_ref(n, h, pi, EXTENT, WINDOW, 0.02, 1e-10),
                                   rtol=tol, atol=tol * 1e-3)


def _drifting(seed=0, per_period=60, Z=30):
    """Three yearly periods of documents from 3 topics, the third topic's words changing
    from period to period."""
    rng = np.random.default_rng(seed)
    rows, dates = [], []
    for year in range(3):
        for t in range(per_period):
            k = t % 3
            rate = np.full(Z, 0.2)
            lo = 8 * k + (2 * year if k == 2 else 0)
            rate[lo:lo + 8] += 2.0
            rows.append(rng.poisson(rate))
            dates.append(f"{2019 + year}-{1 + t % 12:02d}-15")
    X = np.array(rows, dtype=np.float64)
    X[:, 0] += 1
    return X, np.array(dates)


def _fit(X, dates, **kw):
    params = dict(extent=EXTENT, window=WINDOW, n_iter=8, random_state=0)
    params.update(kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return TimeSlicedCountingGrid(**params).fit(X, times=dates)


def test_periods_layout_and_each_period_s_documents():
    X, dates = _drifting()
    tg = _fit(X, dates)
    assert tg.period_ == "year" and tg.period_labels_.tolist() == ["2019", "2020", "2021"]
    assert tg.n_documents_.tolist() == [60, 60, 60]
    assert tg.pi_.shape == (3,) + EXTENT + (X.shape[1],)
    # one prior weight: smoothness times the cell's share of an average period's tokens
    beta = 2.0 * np.prod(WINDOW) * X.sum() / 3 / np.prod(EXTENT)
    np.testing.assert_allclose(tg.anchor_weight_, beta, rtol=1e-12)
    # every period descends from the layout, the CountingGrid of all the dated documents
    # of the same parameters and seed: a prior that outweighs the data keeps it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        layout = CountingGrid(EXTENT, WINDOW, n_iter=8, random_state=0).fit(X)
    rigid = _fit(X, dates, smoothness=1e9)
    for p in range(3):
        np.testing.assert_allclose(rigid.pi_[p], layout.pi_, atol=1e-5)
    # each period's grid explains its own documents better than the previous grid does
    for p in (1, 2):
        rows = slice(60 * p, 60 * p + 60)
        own = tg.period_grid(p).score(X[rows])
        assert own > tg.period_grid(p - 1).score(X[rows])
        assert tg.log_likelihood_[p] == pytest.approx(own, rel=1e-5)


def test_smoothness_keeps_the_map_in_place():
    X, dates = _drifting(1)
    drift = {s: _fit(X, dates, smoothness=s).drift().mean() for s in (0.0, 0.5, 5.0)}
    assert drift[5.0] < drift[0.5] < drift[0.0]
    # drift is 1 - Bhattacharyya coefficient of consecutive window distributions
    tg = _fit(X, dates)
    h = tg.h_.astype(np.float64)
    np.testing.assert_allclose(tg.drift(), 1 - np.sqrt(h[1:] * h[:-1]).sum(-1), atol=1e-12)


def test_a_sparse_period_keeps_the_cells_its_documents_do_not_reach():
    """A period of two documents on a grid sized for sixty: the cells they do not reach
    keep the previous period's words (the prior outweighs the pseudocount there) instead
    of fading to the uniform distribution, and the next period finds them in place."""
    X, dates = _drifting(8)
    keep = np.r_[0:60, 60:62, 120:180]
    X, dates = X[keep], dates[keep]
    tg = _fit(X, dates, extent=(8, 8), window=(2, 2))
    assert tg.n_documents_.tolist() == [60, 2, 60]
    Z = X.shape[1]
    peak = tg.pi_.reshape(3, -1, Z).max(axis=-1)
    # no cell of any period is near uniform: its most probable word keeps 3x uniform
    assert peak.min() > 3.0 / Z
    # the sparse period moves the map less than the dense one after it
    drift = tg.drift().reshape(2, -1).mean(axis=1)
    assert drift[0] < drift[1]


def test_span_uses_the_last_periods_documents():
    X, dates = _drifting(2)
    tg = _fit(X, dates, span=2)
    assert tg.n_documents_.tolist() == [60, 120, 120]


def test_inference_under_each_document_s_period():
    X, dates = _drifting(3)
    tg = _fit(X, dates)
    Q = tg.transform(X, times=dates)
    ll = tg.score_samples(X, times=dates)
    pos = tg.positions(X, times=dates)
    for p in range(3):
        rows = slice(60 * p, 60 * p + 60)
        grid = tg.period_grid(str(tg.period_labels_[p]))
        np.testing.assert_array_equal(Q[rows], grid.transform(X[rows]))
        np.testing.assert_array_equal(ll[rows], grid.score_samples(X[rows]))
        np.testing.assert_array_equal(pos[rows], grid.positions(X[rows]))
    assert tg.score(X, times=dates) == pytest.approx(ll.sum())
    assert tg.periods(["2020-06-01", None, "1990-01-01"]).tolist() == [1, -1, -1]
    with pytest.raises(ValueError, match="outside the fitted periods"):
        tg.transform(X[:2], times=["2020-06-01", "1990-01-01"])
    with pytest.raises(ValueError, match="one date per document"):
        tg.transform(X[:3], times=dates[:2])
    with pytest.raises(ValueError, match="times"):
        tg.transform(X[:3])


def test_undated_documents_are_left_out_and_no_dates_means_one_period():
    X, dates = _drifting(4)
    dates = dates.astype(object)
    dates[::7] = None
    tg = _fit(X, dates)
    assert tg.n_documents_.sum() == sum(d is not None for d in dates)
    one = _fit(X, None)
    assert one.period_ == "all" and one.pi_.shape[0] == 1
    np.testing.assert_array_equal(one.transform(X), one.period_grid(0).transform(X))
    with pytest.raises(ValueError, match="no document has a date"):
        _fit(X, [None] * len(X))


def test_auto_periods():
    months = parse_dates(np.array([f"2020-{m:02d}-01" for m in range(1, 13)]))
    assert choose_slices(months) == "month"
    years = parse_dates(np.array([f"{y}-06-01" for y in range(2000, 2020)]))
    assert choose_slices(years) == "year"


def test_same_model_whatever_the_threads_and_files_round_trip(tmp_path):
    X, dates = _drifting(5)
    Xs = sp.csr_matrix(X)
    a, b = (_fit(Xs, dates, num_threads=nt) for nt in (1, 2))
    for name in ("pi_", "log_likelihood_", "n_iter_"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    countgrid.io.save(a, tmp_path / "slices.npz")
    back = countgrid.io.load(tmp_path / "slices.npz")
    assert type(back) is TimeSlicedCountingGrid and back.get_params() == a.get_params()
    for name in ("pi_", "h_", "period_labels_", "n_documents_", "log_likelihood_",
                 "n_iter_", "anchor_weight_"):
        assert np.array_equal(getattr(back, name), getattr(a, name)), name
    assert back.period_ == a.period_
    np.testing.assert_array_equal(back.transform(X, times=dates), a.transform(X, times=dates))


@pytest.mark.parametrize("params, match", [
    ({"span": 0}, "span"), ({"smoothness": -1.0}, "smoothness"), ({"period": "decade"},
                                                                     "period"),
])
def test_bad_parameters_are_named(params, match):
    X, dates = _drifting()
    with pytest.raises((ValueError, TypeError), match=match):
        _fit(X, dates, **params)


def test_region_changes_follow_the_reference_regions():
    X, dates = _drifting(6)
    tg = _fit(X, dates, smoothness=1.0)
    rc = tg.region_changes(X, dates, n_regions=4)
    labels = countgrid.grid.regions(tg.period_grid(0), 4)
    assert np.array_equal(rc.regions, labels)
    np.testing.assert_allclose(rc.share.sum(axis=1), 1.0, rtol=1e-6)   # float32 posteriors
    # a region's share: its cells' mass under each period's grid, over the period's docs
    for p in range(3):
        rows = slice(60 * p, 60 * p + 60)
        q = tg.period_grid(p).transform(X[rows]).astype(np.float64)
        mass = countgrid.grid._groups.cell_masses(q.sum(axis=0)[None, :], EXTENT, WINDOW)[0]
        np.testing.assert_allclose(rc.share[p], np.bincount(labels.ravel(), mass, 4) / 60,
                                   rtol=1e-5)
    pi = tg.pi_.reshape(3, -1, X.shape[1]).astype(np.float64)
    mean = np.stack([[pi[p, labels.ravel() == r].mean(0) for r in range(4)] for p in range(3)])
    np.testing.assert_allclose(rc.drift, 1 - np.sqrt(mean[1:] * mean[:-1]).sum(-1), atol=1e-12)
    # births and deaths: presence changing between consecutive periods, with hysteresis
    ev = tg.region_changes(X, dates, n_regions=4, threshold=0.3)
    for p in range(3):
        for r in range(4):
            was = ev.present[p - 1, r] if p else False
            now = ev.share[p, r] >= (0.15 if was else 0.3)
            assert ev.present[p, r] == now, (p, r)
    expected = [(tg.period_labels_[p], r, "born" if ev.present[p, r] else "died")
                for p in (1, 2) for r in range(4) if ev.present[p, r] != ev.present[p - 1, r]]
    assert ev.events == expected
    assert list(ev.table())[:3] == ["period", "region 0 share", "region 0 drift"]


def test_anchored_kernel_refuses_bad_arguments():
    from countgrid.grid import _wrappers
    Z, L = 4, 30
    pi = np.full((Z, L), 0.25)
    with pytest.raises(ValueError):
        _wrappers.mstep_anchored(np.ones((Z, L)), pi.copy(), pi.copy(), EXTENT, WINDOW,
                                 pi.copy(), -1.0, 0.1, 1e-10)
    with pytest.raises(ValueError):
        _wrappers.mstep_anchored(np.ones((Z, L)), pi.copy(), pi.copy(), EXTENT, WINDOW,
                                 pi.copy(), float("nan"), 0.1, 1e-10)
    with pytest.raises(ValueError, match="anchor"):
        _wrappers.mstep_anchored(np.ones((Z, L)), pi.copy(), pi.copy(), EXTENT, WINDOW,
                                 np.full((Z - 1, L), 0.25), 1.0, 0.1, 1e-10)


def test_region_presence_has_hysteresis():
    """A share hovering at the threshold does not make a region die and be born again:
    present from the threshold on, absent only below half of it."""
    X, dates = _drifting(7)
    tg = _fit(X, dates)
    rc = tg.region_changes(X, dates, n_regions=4)
    share = rc.share
    r = int(np.argmin(np.abs(share[0] - share[0].mean())))
    for t in (share[0, r] * 0.99, share[0, r] * 1.01):
        ev = tg.region_changes(X, dates, n_regions=4, threshold=t)
        alive = ev.present[:, r]
        # once present, only a fall below t / 2 ends it
        for p in range(1, 3):
            if alive[p - 1]:
                assert alive[p] == (share[p, r] >= t / 2)


def test_grids_beyond_memory_are_refused_before_any_fit(monkeypatch):
    """A grid per period: pi_ and h_ hold n_periods grids, checked before the layout's
    fit (49,809 words on 32 yearly 40x40 grids took the 24 GiB of a machine)."""
    X, dates = _drifting()
    monkeypatch.setenv("COUNTGRID_MAX_MEMORY", "20K")
    tg = TimeSlicedCountingGrid(EXTENT, WINDOW, n_iter=3, random_state=0)
    with pytest.raises(MemoryError, match="3 periods .* 30 words.*period="):
        tg.fit(X, times=dates)
    assert not hasattr(tg, "pi_")
