"""Extrapolated EM (CountingGrid(accelerate=True); docs/scale.md, "Extrapolated EM"):
the SQUAREM step against its formula, and the estimator's option."""
import warnings

import numpy as np
import pytest

import countgrid
from countgrid.grid import _wrappers
from countgrid.grid._em import SQUAREM_STEP_MAX, squarem

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


def squarem_ref(p0, p1, p2, step_max):
    """The S3 extrapolation by hand in float64: the step from the norms, then cell (column)
    by cell, the floor and the normalisation."""
    a0, a1, a2 = (np.asarray(p, dtype=np.float64) for p in (p0, p1, p2))
    r, v = a1 - a0, a2 - 2 * a1 + a0
    nv = np.sqrt(np.sum(v * v))
    ratio = np.sqrt(np.sum(r * r)) / nv if nv > 0 else step_max
    step = -min(max(ratio, 1.0), step_max)
    out = np.empty(a0.shape)
    for c in range(a0.shape[1]):
        e = a0[:, c] - 2 * step * r[:, c] + step ** 2 * v[:, c]
        e = np.maximum(e, 0.1 * np.minimum(np.minimum(a0[:, c], a1[:, c]), a2[:, c]))
        out[:, c] = e / e.sum()
    return out, step


def _three_grids(rng, dtype, Z=50, L=300):
    """p0 and two contracting steps after it, columns summing to 1."""
    p0 = rng.dirichlet(np.full(Z, 0.3), size=L).T
    target = rng.dirichlet(np.full(Z, 0.3), size=L).T
    p1 = 0.6 * p0 + 0.4 * target + 0.01 * rng.dirichlet(np.ones(Z), size=L).T
    p2 = 0.3 * p0 + 0.7 * target
    return [np.ascontiguousarray(p / p.sum(axis=0), dtype=dtype) for p in (p0, p1, p2)]


@pytest.mark.parametrize("num_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("step_max", [1.0, 2.5, 16.0, 1e4])
def test_squarem_matches_reference(dtype, step_max, num_threads):
    rng = np.random.default_rng(int(step_max) + 7)
    p0, p1, p2 = _three_grids(rng, dtype)
    p2[7, 5] = 0.0                # a word the last step drops: the floor is then 0
    out = np.empty_like(p0)
    step = squarem(p0, p1, p2, step_max, out, num_threads)
    want, want_step = squarem_ref(p0, p1, p2, step_max)
    tol = 2e-5 if dtype == np.float32 else 1e-11
    assert step == pytest.approx(want_step, rel=1e-12)
    assert -step_max <= step <= -1.0
    np.testing.assert_allclose(out, want, rtol=tol, atol=1e-30)
    np.testing.assert_allclose(out.sum(axis=0), 1.0, rtol=tol)
    assert (out >= 0).all()
    if step_max == 1.0:           # the shortest step is the last grid itself
        np.testing.assert_allclose(out, p2 / p2.sum(axis=0), rtol=tol)


def test_squarem_floor_keeps_every_word():
    """A long step would drive entries negative: each stays at least a tenth of its least
    value among the three grids."""
    rng = np.random.default_rng(1)
    p0, p1, p2 = _three_grids(rng, np.float64)
    p2 = p2 + 0.5 * (p2 - p1)             # a path that bends: a long step overshoots
    p2 = np.ascontiguousarray(np.maximum(p2, 1e-9) / np.maximum(p2, 1e-9).sum(axis=0))
    out = np.empty_like(p0)
    squarem(p0, p1, p2, SQUAREM_STEP_MAX, out)
    assert (out > 0).all()
    raw, _ = squarem_ref(p0, p1, p2, SQUAREM_STEP_MAX)
    np.testing.assert_allclose(out, raw, rtol=1e-11)


def test_squarem_in_place_on_p0():
    rng = np.random.default_rng(2)
    p0, p1, p2 = _three_grids(rng, np.float64)
    want = np.empty_like(p0)
    step = squarem(p0, p1, p2, 8.0, want)
    assert squarem(p0, p1, p2, 8.0, p0) == step
    np.testing.assert_array_equal(p0, want)


def test_squarem_straight_path_takes_the_longest_step():
    """Equal steps (v = 0): the step is step_max, out = p0 + 2 s r."""
    p0 = np.full((4, 3), 0.25)
    r = np.array([[0.01], [-0.01], [0.0], [0.0]]) * np.ones((1, 3))
    p1, p2 = p0 + r, p0 + 2 * r
    out = np.empty_like(p0)
    assert squarem(p0, p1, p2, 3.0, out) == -3.0
    np.testing.assert_allclose(out, p0 + 6 * r, rtol=1e-12)


def test_squarem_same_bits_any_threads():
    rng = np.random.default_rng(5)
    p0, p1, p2 = _three_grids(rng, np.float32, Z=700, L=600)
    one, two = np.empty_like(p0), np.empty_like(p0)
    s1 = _wrappers.squarem(p0, p1, p2, 64.0, one, num_threads=1)
    s2 = _wrappers.squarem(p0, p1, p2, 64.0, two, num_threads=2)
    assert s1 == s2
    np.testing.assert_array_equal(one, two)


def test_squarem_refuses_bad_input():
    p = np.full((4, 3), 0.25)
    out = np.empty_like(p)
    for which in range(3):
        for bad in (-0.1, np.inf, np.nan):
            grids = [p.copy(), p.copy(), p.copy()]
            grids[which][1, 2] = bad
            before = out.copy()
            with pytest.raises(ValueError, match="finite"):
                _wrappers.squarem(*grids, 2.0, out)
            np.testing.assert_array_equal(out, before)      # untouched
    for step_max in (0.5, np.nan, 1e7):
        with pytest.raises(ValueError, match="step_max"):
            _wrappers.squarem(p, p.copy(), p.copy(), step_max, out)
    with pytest.raises(ValueError, match="shape"):
        _wrappers.squarem(p, p[:3], p.copy(), 2.0, out)
    q = p.copy()
    with pytest.raises(ValueError, match="share no memory"):
        _wrappers.squarem(p, q, p.copy(), 2.0, q)
    big = np.full((5, 3), 0.25)
    with pytest.raises(ValueError, match="share no memory"):     # p0 shifted by a row
        _wrappers.squarem(big[:4], p, p.copy(), 2.0, big[1:])


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
    """Some extrapolated grids lose likelihood on this corpus: those passes are not
    recorded, so the history is shorter than the passes run."""
    fast = _fit(X, accelerate=True, extent=(8, 8), window=(3, 3), random_state=0)
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
    # partial_fit is stepwise EM over the minibatches given: refused, not ignored
    for option in ({"accelerate": True}, {"subsample": 0.5}, {"subsample": "auto"}):
        with pytest.raises(ValueError, match=f"partial_fit.*{list(option)[0]}"):
            countgrid.CountingGrid((6, 6), (2, 2), **option).partial_fit(X)


def test_accelerate_ends_on_a_kept_step(X):
    """Whatever n_iter stops the fit, the final grid is one whose log-likelihood was
    recorded and is the highest: an extrapolated last grid that lost is taken back."""
    for n_iter in range(8, 30):
        model = _fit(X, accelerate=True, n_iter=n_iter, tol=0.0)
        ll = model.log_likelihood_
        assert np.all(np.diff(ll) >= -1e-9 * abs(ll[-1])), n_iter
        np.testing.assert_allclose(model.score(X), ll[-1], rtol=1e-9)
