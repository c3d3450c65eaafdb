"""embed_labels and the regressor on hostile targets (issue 13)."""
import warnings

import numpy as np
import pytest

import countgrid
from countgrid import embed_labels

from _expected_warnings import FEW_ITERATIONS

pytestmark = FEW_ITERATIONS


def test_embed_labels_needs_y():
    with pytest.raises(ValueError, match="y is required"):
        embed_labels(np.full((3, 16), 1 / 16), None, (4, 4), (2, 2))
    with pytest.raises(ValueError, match="kind"):
        embed_labels(np.full((3, 16), 1 / 16), [0, 1, 0], (4, 4), (2, 2), kind="nominal")


@pytest.mark.parametrize("top", [1.7e308, 1e-300])
def test_continuous_targets_near_the_float_limits(top):
    """Scaled by a power of two (exact): the embedding of y * 2**k is that of y times 2**k."""
    rng = np.random.default_rng(0)
    Q = rng.dirichlet(np.ones(16), size=30)
    y = rng.uniform(-1, 1, 30)
    big = embed_labels(Q, y * top, (4, 4), (2, 2), kind="continuous")
    unit = embed_labels(Q, y, (4, 4), (2, 2), kind="continuous")
    assert np.isfinite(big).all()
    np.testing.assert_allclose(big / top, unit, rtol=1e-12, atol=1e-300)


def test_regressor_with_targets_near_float_max():
    rng = np.random.default_rng(1)
    X = rng.poisson(1.0, (40, 12))
    y = rng.uniform(-1, 1, 40)
    params = dict(extent=(4, 4), window=(2, 2), n_iter=3, random_state=0, dtype=np.float64)
    big = countgrid.CountingGridRegressor(**params).fit(X, y * 1.7e308)
    unit = countgrid.CountingGridRegressor(**params).fit(X, y)
    assert np.isfinite(big.gamma_).all()
    np.testing.assert_allclose(big.predict(X) / 1.7e308, unit.predict(X), rtol=1e-12)


@pytest.mark.parametrize("top", [1e41, 1e100, 1.7e308, 1e-42, 1e-300])
def test_float32_regressor_reads_out_targets_beyond_the_float32_range(top):
    """Was: a float32 grid read targets out in float32, so those beyond 3.4e38 predicted
    inf or nan ('overflow encountered in cast'); now they are read out scaled by a power of
    two, as a float64 grid's are."""
    rng = np.random.default_rng(1)
    X = rng.poisson(1.0, (40, 12))
    y = rng.uniform(-1, 1, 40)
    params = dict(extent=(4, 4), window=(2, 2), n_iter=3, random_state=0, dtype=np.float32)
    unit = countgrid.CountingGridRegressor(**params).fit(X, y).predict(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        big = countgrid.CountingGridRegressor(**params).fit(X, y * top).predict(X)
    assert np.isfinite(big).all()
    np.testing.assert_allclose(big / top, unit, rtol=0, atol=1e-5 * np.abs(unit).max())


def test_readout_matrix_is_the_window_mean_and_checks_its_embedding():
    """G(k) = mean of gamma over the window with first cell k (on the torus), against a
    loop; a misshapen embedding (e.g. embed_labels' extent + (n_classes,) not reshaped)
    is a ValueError naming gamma_flat, not a Cython signature error."""
    from countgrid.grid import readout_matrix
    extent, window = (5, 4), (2, 3)
    gamma = np.random.default_rng(1).random((20, 3))
    G = readout_matrix(gamma, extent, window)
    g = gamma.reshape(extent + (3,))
    ref = np.array([[g[np.ix_((np.arange(window[0]) + a) % 5,
                              (np.arange(window[1]) + b) % 4)].mean(axis=(0, 1))
                     for b in range(4)] for a in range(5)]).reshape(20, 3)
    np.testing.assert_allclose(G, ref, rtol=1e-12)
    with pytest.raises(ValueError, match=r"gamma_flat must have shape \(L, n_outputs\)"):
        readout_matrix(g, extent, window)
    with pytest.raises(TypeError, match="gamma_flat"):
        readout_matrix(np.full((20, 3), "a"), extent, window)
    with pytest.raises(ValueError, match="gamma_flat contains NaN"):
        readout_matrix(np.full((20, 3), np.nan), extent, window)
