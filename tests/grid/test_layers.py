"""LayeredCountingGrid against its NumPy reference (tests/_reference/layers.py) and its
contracts: EM's monotone likelihood, exact inference, thread-independent fits, model files."""
import warnings
from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.exceptions import ConvergenceWarning
from countgrid.grid import CountingGrid, LayeredCountingGrid
from countgrid.grid._em import block_counts, local_estep
from countgrid.streaming._blocks import Blocks
from tests._crafted import rewrite_model
from tests._reference.layers import layered_em_step_ref, layered_estep_ref

EXTENT, WINDOW = (5, 6), (2, 3)


def _corpus(seed=0, n=40, Z=15):
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.8, size=(n, Z)).astype(np.float64)
    X[:, 0] += 1                       # no empty document
    return X


def _start(seed, n_layers, Z, dtype):
    rng = np.random.default_rng(seed)
    P = int(np.prod(EXTENT))
    pi = rng.random((n_layers, Z, P)) + 0.2
    pi /= pi.sum(axis=1, keepdims=True)
    lam = rng.random((n_layers, P)) + 0.2
    lam /= lam.sum(axis=0, keepdims=True)
    return pi.astype(dtype), lam.astype(dtype)


def _one_update(X, pi, lam, dtype, num_threads, rho, layer_rho, floor=0.0):
    """One update of the estimator's layered EM from (pi, lam), in its layout."""
    n_layers, Z, P = pi.shape
    est = LayeredCountingGrid(EXTENT, WINDOW, n_layers=n_layers, layer_pseudocount=layer_rho,
                              n_iter=1, tol=0, min_iter=0)
    flat = np.ascontiguousarray(np.concatenate(list(pi), axis=1), dtype=dtype)
    weights = np.array(lam, dtype=dtype)
    data = Blocks(X, partial(block_counts, dtype=np.dtype(dtype)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        monitor, _ = est._layered_em(local_estep(data, num_threads), flat, weights, EXTENT,
                                     WINDOW, rho, floor, num_threads)
    return flat.reshape(Z, n_layers, P).transpose(1, 0, 2), weights, monitor.history


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("num_threads", [1, 2])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n_layers", [1, 3])
def test_one_update_matches_reference(dtype, num_threads, sparse, n_layers):
    X = _corpus(1)
    pi, lam = _start(2, n_layers, X.shape[1], dtype)
    rho, layer_rho = 0.05, 0.5
    pi_ref, lam_ref, _ = layered_em_step_ref(X, pi, lam, EXTENT, WINDOW, rho, layer_rho)
    Xin = sp.csr_matrix(X) if sparse else X
    pi_new, lam_new, history = _one_update(Xin, pi, lam, dtype, num_threads, rho, layer_rho)
    tol = 2e-5 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(pi_new, pi_ref, rtol=tol, atol=tol * 1e-2)
    np.testing.assert_allclose(lam_new, lam_ref, rtol=tol, atol=tol * 1e-2)
    # the recorded log-likelihood is that of the updated parameters
    _, loglik = layered_estep_ref(X, pi_ref, lam_ref, EXTENT, WINDOW)
    assert history[0] == pytest.approx(loglik.sum(), rel=tol)


def test_em_never_lowers_the_likelihood():
    # without pseudocounts or floor, every update is an EM step of the layered model
    X = _corpus(3, n=60, Z=20)
    pi, lam = _start(4, 2, X.shape[1], np.float64)
    est = LayeredCountingGrid(EXTENT, WINDOW, n_layers=2, layer_pseudocount=0.0,
                              n_iter=25, tol=0, min_iter=0)
    flat = np.ascontiguousarray(np.concatenate(list(pi), axis=1))
    data = Blocks(X, partial(block_counts, dtype=np.dtype(np.float64)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        monitor, _ = est._layered_em(local_estep(data, 1), flat, lam, EXTENT, WINDOW, 0.0,
                                     0.0, 1)
    steps = np.diff(monitor.history)
    assert len(steps) == 24
    assert (steps >= -1e-9 * np.abs(monitor.history[1:])).all(), steps
    assert monitor.history[-1] > monitor.history[0] + 1.0   # it does learn


@pytest.fixture(scope="module")
def fitted():
    X = _corpus(5, n=80, Z=25)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = LayeredCountingGrid(EXTENT, WINDOW, n_layers=2, n_iter=8, random_state=0,
                                  dtype=np.float64, num_threads=1).fit(X)
    return est, X


def test_inference_is_exact(fitted):
    est, X = fitted
    n_layers, Z = est.pi_.shape[0], est.pi_.shape[-1]
    pi = est.pi_.reshape(n_layers, -1, Z).transpose(0, 2, 1)
    lam = est.layer_prior_.reshape(n_layers, -1)
    q, loglik = layered_estep_ref(X, pi, lam, EXTENT, WINDOW)
    np.testing.assert_allclose(est.score_samples(X), loglik, rtol=1e-10)
    Q = est.transform(X)
    assert Q.shape == (X.shape[0], n_layers * int(np.prod(EXTENT)))
    np.testing.assert_allclose(Q, q.reshape(len(X), -1), atol=1e-6)   # floored posterior
    np.testing.assert_allclose(est.layer_posterior(X), Q.reshape(len(X), n_layers, -1).sum(2),
                               rtol=1e-12)
    pos = est.positions(X)
    assert pos.shape == (len(X), 3)
    flat = np.ravel_multi_index(pos.T, (n_layers,) + EXTENT)
    assert (flat == Q.argmax(axis=1)).all()
    np.testing.assert_allclose(est.prior_.sum(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(est.layer_prior_.sum(axis=0), 1.0, rtol=1e-12)
    assert est.log_likelihood_[-1] == pytest.approx(est.score(X), rel=1e-12)


def test_same_model_whatever_the_threads():
    X = sp.csr_matrix(_corpus(6, n=70, Z=30))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fits = [LayeredCountingGrid(EXTENT, WINDOW, n_layers=3, n_iter=6, random_state=7,
                                    num_threads=nt).fit(X) for nt in (1, 2)]
    for name in ("pi_", "layer_prior_", "prior_", "log_likelihood_"):
        assert np.array_equal(getattr(fits[0], name), getattr(fits[1], name)), name


def test_model_file_round_trips(fitted, tmp_path):
    est, X = fitted
    path = tmp_path / "layers.npz"
    countgrid.io.save(est, path)
    back = countgrid.io.load(path)
    assert type(back) is LayeredCountingGrid and back.get_params() == est.get_params()
    for name in ("pi_", "h_", "layer_prior_", "prior_", "log_likelihood_"):
        assert np.array_equal(getattr(back, name), getattr(est, name)), name
    assert np.array_equal(back.transform(X), est.transform(X))
    assert back.grid_n_iter_ == est.grid_n_iter_


def test_model_file_with_a_broken_layer_prior_is_refused(fitted, tmp_path):
    est, _ = fitted
    path = tmp_path / "layers.npz"
    countgrid.io.save(est, path)

    def halve(arrays):
        arrays["layer_prior_"] = arrays["layer_prior_"] * 0.5

    def drop_a_layer(arrays):
        arrays["layer_prior_"] = arrays["layer_prior_"][:1]

    for change, match in ((halve, "layer_prior_ must hold probability"),
                          (drop_a_layer, "layer_prior_")):
        bad = rewrite_model(path, tmp_path / f"{change.__name__}.npz", change_arrays=change)
        with pytest.raises(ValueError, match=match):
            countgrid.io.load(bad)


def test_first_stage_is_the_single_grid():
    # the layers start from the CountingGrid of the same parameters and seed
    X = _corpus(8, n=50, Z=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        layered = LayeredCountingGrid(EXTENT, WINDOW, n_layers=1, n_iter=4, random_state=3,
                                      num_threads=1).fit(X)
        single = CountingGrid(EXTENT, WINDOW, n_iter=4, random_state=3, num_threads=1).fit(X)
    assert layered.grid_n_iter_ == single.n_iter_
    # one layer: the prior is uniform and the model is a counting grid
    np.testing.assert_allclose(layered.layer_prior_, 1.0)
    np.testing.assert_allclose(layered.prior_, 1.0 / np.prod(EXTENT), rtol=1e-6)


@pytest.mark.parametrize("params, match", [
    ({"n_layers": 0}, "n_layers"), ({"n_layers": 2.5}, "n_layers"),
    ({"layer_pseudocount": -1.0}, "layer_pseudocount"), ({"window": 3}, "window"),
])
def test_bad_parameters_are_named(params, match):
    with pytest.raises((ValueError, TypeError), match=match):
        LayeredCountingGrid(EXTENT, **{"window": WINDOW, **params}).fit(_corpus())


def test_partial_fit_is_refused():
    assert not hasattr(LayeredCountingGrid(), "partial_fit")
    with pytest.raises(AttributeError, match="batch EM"):
        LayeredCountingGrid(EXTENT, WINDOW).partial_fit(_corpus())
