"""Covariate effects on region usage (countgrid.grid.region_effects, stm's method of
composition) against a slow NumPy reference that draws the same positions and noise with
the same generator; window shares against a loop; planted and null effects; the errors."""
import itertools

import numpy as np
import pytest

import countgrid
from countgrid.grid import region_effects, regions
from countgrid.grid._effects import window_region_shares
from _expected_warnings import FEW_ITERATIONS

pytestmark = FEW_ITERATIONS


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(5)
    n = 300
    X = rng.poisson(0.5, size=(n, 24))
    group = rng.integers(0, 3, n)
    X[group == 1, :6] += 2                                  # group 1 writes its own words
    grid = countgrid.CountingGrid((7, 8), (3, 2), n_iter=25, random_state=0).fit(X)
    cov = {"group": np.array(["a", "b", "c"])[group], "noise": rng.normal(size=n)}
    return grid, X, cov, regions(grid, 4)


def test_window_shares_match_a_loop():
    labels = np.random.default_rng(0).integers(0, 5, size=(4, 6))
    labels[0, 0] = 4
    U = window_region_shares(labels, (2, 3))
    for k in itertools.product(range(4), range(6)):
        want = np.zeros(5)
        for d in itertools.product(range(2), range(3)):
            want[labels[(k[0] + d[0]) % 4, (k[1] + d[1]) % 6]] += 1 / 6
        np.testing.assert_allclose(U[k[0] * 6 + k[1]], want)


def reference(grid, X, cov, labels, n_draws, level, seed):
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    D = [np.ones(n)]
    for name, v in cov.items():
        if v.dtype.kind == "f":
            D.append(v)
        else:
            D += [(v == lev).astype(float) for lev in sorted(set(v))[1:]]
    D = np.column_stack(D)
    U = window_region_shares(labels, grid.window)
    Q = np.asarray(grid.transform(X), dtype=np.float64)
    u = rng.random((n, n_draws))
    draws = []
    for s in range(n_draws):
        pos = []
        for t in range(n):
            cdf = np.cumsum(Q[t]) / np.cumsum(Q[t])[-1]
            pos.append(min(int(np.searchsorted(cdf, u[t, s], side="right")), Q.shape[1] - 1))
        Y = U[pos]
        beta = np.linalg.lstsq(D, Y, rcond=None)[0]
        sigma = np.sqrt(((Y - D @ beta) ** 2).sum(axis=0) / (n - D.shape[1]))
        noise = np.linalg.cholesky(np.linalg.inv(D.T @ D)) @ rng.standard_normal(
            (D.shape[1], U.shape[1]))
        draws.append((beta + noise * sigma).T)
    draws = np.array(draws)
    a = (1 - level) / 2
    return draws.mean(0), np.quantile(draws, a, axis=0), np.quantile(draws, 1 - a, axis=0)


@pytest.mark.parametrize("n_draws, level, seed", [(1, 0.9, 0), (7, 0.95, 3)])
def test_matches_the_reference(fitted, n_draws, level, seed):
    grid, X, cov, labels = fitted
    fx = region_effects(grid, X, cov, labels, n_draws=n_draws, level=level, random_state=seed)
    est, low, high = reference(grid, X, cov, labels, n_draws, level, seed)
    assert fx.terms == ["(intercept)", "group=b", "group=c", "noise"]
    assert fx.reference == {"group": "a"}
    np.testing.assert_allclose(fx.estimate, est, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fx.low, low, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fx.high, high, rtol=1e-9, atol=1e-12)


def test_planted_and_null_effects_and_threads(fitted):
    grid, X, cov, labels = fitted
    fx = region_effects(grid, X, cov, labels, n_draws=40)
    b = fx.terms.index("group=b")
    # group b's own words sit in some region: there its effect is positive and sure
    assert (fx.low[:, b] > 0).any() and (fx.high[:, b] < 0).any()
    noise = fx.terms.index("noise")
    assert ((fx.low[:, noise] < 0) & (fx.high[:, noise] > 0)).sum() >= 3
    # usages sum to 1 over the regions: the intercepts to about 1, the effects to about 0
    assert abs(fx.estimate[:, 0].sum() - 1) < 0.05
    assert np.abs(fx.estimate[:, 1:].sum(axis=0)).max() < 0.05
    table = fx.table([f"r{r}" for r in range(4)])
    assert table["region"][:4] == ["r0"] * 4 and table["term"][:4] == fx.terms
    assert (table["estimate"] == fx.estimate.ravel()).all()
    again = grid.set_params(num_threads=2)
    same = region_effects(again, X, cov, labels, n_draws=40)
    np.testing.assert_array_equal(same.draws, fx.draws)
    grid.set_params(num_threads=None)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(covariates={}), TypeError, "covariates must be a non-empty dict"),
    (dict(covariates={"x": np.ones(5)}), ValueError, r"covariates\['x'\] must be 1-D with 300"),
    (dict(covariates={"x": np.array(["a"] * 300)}), ValueError, "single level"),
    (dict(covariates={"x": np.arange(300) % 150 * 1.0, "y": np.arange(300) % 150 * 2.0}),
     ValueError, "collinear"),
    (dict(covariates={"x": np.r_[np.nan, np.ones(299)]}), ValueError, "missing or infinite"),
    (dict(covariates={"x": np.arange(300).astype(str)}), ValueError, "300 levels"),
    (dict(labels=np.zeros((2, 2), int)), ValueError, "labels must be non-negative ints"),
    (dict(n_draws=0), ValueError, "n_draws must be an int"),
    (dict(level=1.0), ValueError, "level must be a number in"),
])
def test_errors_name_the_argument(fitted, kwargs, error, message):
    grid, X, cov, labels = fitted
    args = dict(covariates=cov, labels=labels)
    args.update(kwargs)
    with pytest.raises(error, match=message):
        region_effects(grid, X, args.pop("covariates"), args.pop("labels"), **args)


def test_frame_without_pandas_says_what_to_do(fitted):
    grid, X, cov, labels = fitted
    fx = region_effects(grid, X, cov, labels, n_draws=2)
    try:
        import pandas as pd
    except ImportError:
        with pytest.raises(ImportError, match=r"needs pandas \(pip install pandas\)"):
            fx.to_frame()
    else:
        assert isinstance(fx.to_frame(), pd.DataFrame)


def test_too_few_documents_for_the_terms_names_x_and_covariates(fitted):
    """As many documents as terms leave no residual degrees of freedom: the error names X
    and covariates (it said "N documents for P terms", naming no argument)."""
    grid, X, _, labels = fitted
    with pytest.raises(ValueError, match=r"X has 2 documents for the 2 terms of covariates "
                                         r"\(with the intercept\)"):
        region_effects(grid, X[:2], {"x": np.array([0.0, 1.0])}, labels)
    many = {f"c{i}": np.random.default_rng(i).normal(size=300) for i in range(299)}
    with pytest.raises(ValueError, match="X has 300 documents for the 300 terms of covariates"):
        region_effects(grid, X, many, labels)
