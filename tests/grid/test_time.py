"""Where each period's documents sit (countgrid.grid.shares_by_period) against a slow
NumPy reference: masses cell by cell from the posteriors, densities, region shares, the
table, documents without a date, and the errors."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.grid import regions, shares_by_period
from _expected_warnings import FEW_ITERATIONS

pytestmark = FEW_ITERATIONS


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(3)
    X = rng.poisson(0.6, size=(150, 18))
    X[:50, :6] += 3
    X[100:, 12:] += 3
    grid = countgrid.CountingGrid((6, 7), (2, 3), n_iter=15, random_state=0).fit(X)
    # documents drift from topic 0 to topic 2 over three months; a few have no date
    days = np.array([f"2023-{1 + t // 50:02d}-{1 + t % 28:02d}" for t in range(150)], object)
    days[[7, 77]] = ""
    return grid, X, days


def reference_mass(grid, X, members):
    extent, window = grid.pi_.shape[:-1], grid.window
    Q = np.asarray(grid.transform(X[members]), dtype=np.float64)
    out = np.zeros(extent)
    for k in itertools.product(*[range(e) for e in extent]):
        q = Q[:, np.ravel_multi_index(k, extent)].sum()
        for d in itertools.product(*[range(w) for w in window]):
            out[tuple((a + b) % e for a, b, e in zip(k, d, extent))] += q / np.prod(window)
    return out


@pytest.mark.parametrize("dense", [True, False])
def test_masses_densities_and_region_shares_match_the_reference(fitted, dense):
    grid, X, days = fitted
    labels = regions(grid, 4)
    res = shares_by_period(grid, X if dense else sp.csr_matrix(X), days, period="month",
                           labels=labels)
    assert res.period == "month" and res.labels == ["2023-01", "2023-02", "2023-03"]
    assert res.n_documents.tolist() == [49, 49, 50] and res.n_undated == 2
    month = np.array([d[:7] if d else "" for d in days])
    for p, name in enumerate(res.labels):
        want = reference_mass(grid, X, month == name)
        # float32 posteriors, summed in another order
        np.testing.assert_allclose(res.mass[p], want, rtol=1e-5, atol=1e-9)
        np.testing.assert_allclose(res.density[p], want / (month == name).sum(), rtol=1e-5,
                                   atol=1e-9 / (month == name).sum())
        share = [want[labels == r].sum() / (month == name).sum() for r in range(4)]
        np.testing.assert_allclose(res.region_share[p], share, rtol=1e-5)
    np.testing.assert_allclose(res.region_share.sum(axis=1), 1.0)
    # the drift planted: the region holding topic 0's cells loses its share
    top0 = labels.ravel()[np.argmax(reference_mass(grid, X, np.arange(50)).ravel())]
    assert res.region_share[0, top0] > res.region_share[2, top0] + 0.2


def test_empty_periods_the_table_and_the_frame(fitted):
    grid, X, days = fitted
    res = shares_by_period(grid, X, days, period="week", labels=regions(grid, 3))
    empty = res.n_documents == 0
    assert (res.density[empty] == 0).all() and (res.region_share[empty] == 0).all()
    assert res.labels[0] == "2022-12-26"            # the Monday of 2023-01-01's week
    table = res.table(["a", "b", "c"])
    assert list(table) == ["period", "start", "n_documents", "a", "b", "c"]
    assert table["period"] == res.labels and (table["b"] == res.region_share[:, 1]).all()
    with pytest.raises(ValueError, match="names must be 3 distinct names"):
        res.table(["a", "a", "c"])
    with pytest.raises(ValueError, match="names must not be"):
        res.table(["a", "period", "c"])
    no_regions = shares_by_period(grid, X, days)
    assert "region_share" not in no_regions
    with pytest.raises(ValueError, match="no regions: pass labels="):
        no_regions.table()
    try:
        import pandas as pd
    except ImportError:           # the test extra has no pandas: the message says what to do
        with pytest.raises(ImportError, match=r"needs pandas \(pip install pandas\)"):
            res.to_frame()
    else:
        frame = res.to_frame()
        assert isinstance(frame, pd.DataFrame) and list(frame.index) == res.labels


def test_errors_name_the_argument(fitted):
    grid, X, days = fitted
    with pytest.raises(ValueError, match="dates must hold one date per document"):
        shares_by_period(grid, X, days[:-1])
    bad = days.copy()
    bad[3] = "soon"
    with pytest.raises(ValueError, match=r"dates\[3\] = 'soon' is not a date"):
        shares_by_period(grid, X, bad)
    with pytest.raises(ValueError, match="period must be one of"):
        shares_by_period(grid, X, days, period="decade")
    with pytest.raises(ValueError, match="labels must be non-negative ints"):
        shares_by_period(grid, X, days, labels=np.zeros((2, 2), int))
    with pytest.raises(countgrid.exceptions.NotFittedError):
        shares_by_period(countgrid.CountingGrid(), X, days)
    # Unix timestamps: NaN is a missing date, +-inf no date (it was taken for a missing one)
    stamps = np.arange(len(days)) * 86400.0
    stamps[5] = np.nan
    assert shares_by_period(grid, X, stamps).n_undated == 1
    stamps[9] = -np.inf
    with pytest.raises(ValueError, match=r"dates\[9\] = -inf is not a Unix timestamp"):
        shares_by_period(grid, X, stamps)
    none = shares_by_period(grid, X, np.array([""] * len(days), object))
    assert none.labels == [] and none.mass.shape == (0, 6, 7) and none.n_undated == 150
