"""Progressive fitting (CountingGrid(subsample=...); docs/scale.md, "Progressive
fitting"): every stage on a random subsample, then EM on all documents from its grid."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.grid._progressive import (AUTO_MIN_DOCUMENTS, AUTO_PER_CELL,
                                         resolve_subsample)
from countgrid.streaming import CSRChunks

from _scale_data import grid_corpus

GRID = dict(extent=(6, 6), window=(2, 2), n_iter=40, window_schedule=[((3, 3), 4)],
            min_iter=5, random_state=3, dtype=np.float64)


@pytest.fixture(scope="module")
def X():
    return grid_corpus(n_docs=400, empty_rows=(5,))


def _fit(X, init_pi=None, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", countgrid.ConvergenceWarning)
        return countgrid.CountingGrid(**{**GRID, **params}).fit(X, init_pi=init_pi)


def test_resolve_subsample():
    assert resolve_subsample(None, 10**6, 4096) is None
    m = max(AUTO_MIN_DOCUMENTS, AUTO_PER_CELL * 4096)
    assert resolve_subsample("auto", 10**6, 4096) == m == 102_400
    assert resolve_subsample("auto", 2 * m, 4096) == m
    assert resolve_subsample("auto", 2 * m - 1, 4096) is None     # not worth it
    assert resolve_subsample("auto", 10**6, 100) == AUTO_MIN_DOCUMENTS
    assert resolve_subsample(30, 100, 16) == 30
    assert resolve_subsample(np.int64(30), 100, 16) == 30
    assert resolve_subsample(100, 100, 16) is None                # every document
    assert resolve_subsample(0.25, 101, 16) == 26                 # rounded up
    assert resolve_subsample(np.float32(0.5), 10, 16) == 5
    assert resolve_subsample(1e-9, 10, 16) == 1
    for bad in (0, -1, 1.0, 0.0, 1.5, float("nan")):
        with pytest.raises(ValueError, match="subsample"):
            resolve_subsample(bad, 100, 16)
    with pytest.raises(TypeError, match="subsample"):
        resolve_subsample([3], 100, 16)


def test_progressive_is_a_subsample_fit_then_a_fit_from_its_grid(X):
    """The definition, step by step: the subsample is drawn by random_state right after
    the initial grid; the stages run on it as a plain fit would; the fit on all
    documents starts from its grid with the target window, tol and no min_iter."""
    model = _fit(X, subsample=150)
    rng = np.random.default_rng(GRID["random_state"])
    rng.random((36, X.shape[1]))                      # the initial grid's draw
    rows = np.sort(rng.choice(X.shape[0], size=150, replace=False))
    first = _fit(X[rows], pseudocount=model.pseudocount_)   # the corpus's, not the rows'

    np.testing.assert_array_equal(first.pi_.shape, model.pi_.shape)
    then = _fit(X, init_pi=first.pi_, window_schedule=None, min_iter=0,
                pseudocount=model.pseudocount_)
    np.testing.assert_allclose(model.pi_, then.pi_, rtol=1e-9, atol=1e-15)
    assert model.n_iter_ == then.n_iter_
    np.testing.assert_allclose(model.log_likelihood_, then.log_likelihood_, rtol=1e-12)
    # and it is not the plain fit
    plain = _fit(X)
    assert np.max(np.abs(plain.pi_ - model.pi_)) > 1e-3


@pytest.mark.parametrize("extra", [{}, {"estep": "coarse-to-fine",
                                        "estep_params": {"stride": 2, "exact_iter": 3}},
                                   {"learn_prior": True, "dtype": np.float32}])
def test_progressive_same_model_any_threads_and_source(X, extra):
    one = _fit(X, subsample=0.4, num_threads=1, **extra)
    two = _fit(X, subsample=0.4, num_threads=2, **extra)
    np.testing.assert_array_equal(one.pi_, two.pi_)
    np.testing.assert_array_equal(one.log_likelihood_, two.log_likelihood_)
    chunks = CSRChunks([X[r:r + 70] for r in range(0, X.shape[0], 70)])
    chunked = _fit(chunks, subsample=0.4, num_threads=2, **extra)
    np.testing.assert_allclose(chunked.pi_, one.pi_, rtol=1e-4 if extra.get("dtype") else
                               1e-9, atol=1e-12)
    dense = _fit(X.toarray(), subsample=0.4, **extra)
    np.testing.assert_allclose(dense.pi_, one.pi_, rtol=1e-4, atol=1e-9)


def test_progressive_fits_the_corpus_as_well(X):
    """On the generating model's corpus, the progressive fit's held-out log-likelihood
    is no more than 0.5 % below the plain fit's."""
    held_out = grid_corpus(n_docs=200, seed=9)
    plain = _fit(X, n_iter=100, min_iter=20)
    prog = _fit(X, n_iter=100, min_iter=20, subsample=120)
    a, b = plain.score(held_out), prog.score(held_out)
    assert b >= a - 0.005 * abs(a)


def test_subsample_auto_and_none_are_the_plain_fit(X):
    plain = _fit(X)
    for value in ("auto", None, X.shape[0], 10**9):
        np.testing.assert_array_equal(_fit(X, subsample=value).pi_, plain.pi_)


def test_subsample_refusals(X):
    with pytest.raises(ValueError, match="subsample.*batch"):
        _fit(X, subsample=0.5, learning_method="online")
    for bad in (0, 1.0, -0.5, "nope", True, np.nan):
        with pytest.raises((ValueError, TypeError), match="subsample"):
            _fit(X, subsample=bad)


def test_subsample_round_trips(tmp_path, X):
    for value in (0.25, 90, "auto"):
        model = _fit(X, subsample=value, n_iter=5)
        path = tmp_path / "m.cgm"
        countgrid.io.save(model, path)
        back = countgrid.load(path)
        assert back.get_params()["subsample"] == value
        assert type(back.subsample) is type(value)
        np.testing.assert_array_equal(back.pi_, model.pi_)


def test_subsample_of_an_empty_heavy_corpus():
    """A subsample may draw only empty documents: the fit still runs and the fit on all
    documents repairs the grid."""
    X = sp.csr_matrix(([4.0, 2.0], ([0, 1], [3, 5])), shape=(50, 12))
    model = _fit(X, extent=(3, 3), window=(1, 1), window_schedule=None, subsample=3)
    assert np.isfinite(model.pi_).all()
