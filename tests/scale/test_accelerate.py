"""Over-relaxed EM (CountingGrid(accelerate=True); docs/scale.md, "Over-relaxed EM"):
the stretched M-step against its formula, and the estimator's option."""
import warnings

import numpy as np
import pytest

import countgrid
from countgrid.grid import _wrappers
from countgrid.grid._em import OVERRELAX, overrelaxed

from _scale_data import grid_corpus

GRID = dict(extent=(6, 6), window=(2, 2), n_iter=200, window_schedule=[((3, 3), 4)],
            min_iter=5, random_state=3, dtype=np.float64)


@pytest.fixture(scope="module")
def X():
    return grid_corpus(n_docs=400, empty_rows=(5,))


def _fit(X, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", countgrid.ConvergenceWarning)
        return countgrid.CountingGrid(**{**GRID, **params}).fit(X)


def overrelaxed_ref(prev, update, eta, max_ratio=1e3):
    """The stretched step by hand, cell (column) by cell, in float64 logs."""
    out = np.empty(update.shape)
    with np.errstate(divide="ignore"):          # log 0 = -inf: a word the update drops
        return _columns(prev, update, eta, max_ratio, out)


def _columns(prev, update, eta, max_ratio, out):
    for c in range(update.shape[1]):
        ratio = np.clip(update[:, c].astype(np.float64) / prev[:, c], 1 / max_ratio,
                        max_ratio)
        logs = np.log(update[:, c].astype(np.float64)) + (eta - 1) * np.log(ratio)
        w = np.exp(logs - logs.max())
        out[:, c] = w / w.sum()
    return out


@pytest.mark.parametrize("num_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("eta", [1.0, 1.5, 4.0, 10.0])
def test_overrelaxed_matches_reference(dtype, eta, num_threads):
    rng = np.random.default_rng(int(eta * 10))
    prev = np.ascontiguousarray(rng.dirichlet(np.full(50, 0.2), size=300).T, dtype=dtype)
    update = np.ascontiguousarray(rng.dirichlet(np.full(50, 0.2), size=300).T, dtype=dtype)
    prev = np.maximum(prev, 1e-30).astype(dtype)
    update[7, 5] = 0.0            # a word the update drops
    prev[3, 2] = 1e-12            # a ratio beyond the clip
    out = np.empty_like(prev)
    overrelaxed(prev, update, eta, out, num_threads)
    tol = 2e-5 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(out, overrelaxed_ref(prev, update, eta), rtol=tol, atol=1e-30)
    np.testing.assert_allclose(out.sum(axis=0), 1.0, rtol=tol)
    if eta == 1.0:
        np.testing.assert_allclose(out, update / update.sum(axis=0), rtol=tol)


def test_overrelaxed_cannot_overflow_at_its_bound():
    prev = np.full((3, 2), 1e-30, dtype=np.float32)
    prev[0] = 1.0
    update = np.full((3, 2), 1.0 / 3, dtype=np.float32)
    out = np.empty_like(prev)
    overrelaxed(prev, update, OVERRELAX[1], out)
    assert np.isfinite(out).all() and np.allclose(out.sum(axis=0), 1.0)


def test_overrelax_same_bits_any_threads():
    rng = np.random.default_rng(5)
    prev = np.ascontiguousarray(rng.dirichlet(np.ones(700), size=600).T, dtype=np.float32)
    update = np.ascontiguousarray(rng.dirichlet(np.ones(700), size=600).T, dtype=np.float32)
    one, two = np.empty_like(prev), np.empty_like(prev)
    _wrappers.overrelax(prev, update, 3.4, one, num_threads=1)
    _wrappers.overrelax(prev, update, 3.4, two, num_threads=2)
    np.testing.assert_array_equal(one, two)


def test_overrelax_refuses_bad_input():
    prev = np.full((4, 3), 0.25)
    update = np.full((4, 3), 0.25)
    out = np.empty_like(prev)
    for bad, name in ((0.0, "prev"), (-1.0, "prev"), (np.nan, "prev")):
        p = prev.copy()
        p[1, 2] = bad
        with pytest.raises(ValueError, match=name):
            _wrappers.overrelax(p, update, 2.0, out)
    for bad in (-0.1, np.inf, np.nan):
        u = update.copy()
        u[0, 0] = bad
        with pytest.raises(ValueError, match="update"):
            _wrappers.overrelax(prev, u, 2.0, out)
    with pytest.raises(ValueError, match="eta"):
        _wrappers.overrelax(prev, update, 0.5, out)
    with pytest.raises(ValueError, match="80"):
        _wrappers.overrelax(prev, update, 50.0, out, max_ratio=1e3)
    with pytest.raises(ValueError, match="shape"):
        _wrappers.overrelax(prev, update[:3], 2.0, out)
    with pytest.raises(ValueError, match="share memory"):
        _wrappers.overrelax(prev, update, 2.0, update)


def test_accelerated_fit_is_monotone_faster_and_as_good(X):
    plain = _fit(X)
    fast = _fit(X, accelerate=True)
    assert plain.converged_ and fast.converged_
    # the recorded log-likelihoods never decrease (a step that lost is taken back)
    assert np.all(np.diff(fast.log_likelihood_) >= -1e-9 * abs(fast.log_likelihood_[-1]))
    # fewer passes over the documents for a log-likelihood at least as high
    assert fast.n_iter_ < plain.n_iter_
    assert fast.log_likelihood_[-1] >= plain.log_likelihood_[-1] - 1e-4 * abs(
        plain.log_likelihood_[-1])
    held_out = grid_corpus(n_docs=200, seed=9)
    assert fast.score(held_out) >= plain.score(held_out) * (1 + 0.005)   # both negative


def test_accelerate_takes_steps_back(X):
    """Some stretched steps lose likelihood on this corpus: those passes are not recorded,
    so the history is shorter than the passes run."""
    fast = _fit(X, accelerate=True)
    assert len(fast.log_likelihood_) < fast.n_iter_


@pytest.mark.parametrize("extra", [{}, {"estep": "coarse-to-fine",
                                        "estep_params": {"stride": 2, "exact_iter": 3}},
                                   {"subsample": 0.5, "dtype": np.float32}])
def test_accelerated_fit_same_bits_any_threads(X, extra):
    one = _fit(X, accelerate=True, num_threads=1, **extra)
    two = _fit(X, accelerate=True, num_threads=2, **extra)
    np.testing.assert_array_equal(one.pi_, two.pi_)
    np.testing.assert_array_equal(one.log_likelihood_, two.log_likelihood_)


def test_accelerate_only_in_the_target_window(X):
    """The window schedule's stages run plain EM: a fit whose target stage has one
    iteration is the plain fit's first steps."""
    plain = _fit(X, n_iter=1)
    fast = _fit(X, n_iter=1, accelerate=True)
    np.testing.assert_array_equal(plain.pi_, fast.pi_)


def test_accelerate_refusals(X):
    with pytest.raises(ValueError, match="accelerate.*batch"):
        _fit(X, accelerate=True, learning_method="online")
    with pytest.raises(TypeError, match="accelerate"):
        _fit(X, accelerate="yes")


def test_accelerate_ends_on_a_kept_step(X):
    """Whatever n_iter stops the fit, the final grid is one whose log-likelihood was
    recorded and is the highest: a stretched last step that lost is taken back."""
    for n_iter in range(8, 30):
        model = _fit(X, accelerate=True, n_iter=n_iter, tol=0.0)
        ll = model.log_likelihood_
        assert np.all(np.diff(ll) >= -1e-9 * abs(ll[-1])), n_iter
        np.testing.assert_allclose(model.score(X), ll[-1], rtol=1e-9)
