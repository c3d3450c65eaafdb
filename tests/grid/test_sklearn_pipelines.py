"""Counting grids in scikit-learn: clone, params, pipelines, model selection (the common
estimator checks of every family are in tests/test_common.py)."""

import numpy as np
import pytest
import scipy.sparse as sp

sklearn = pytest.importorskip("sklearn")

from sklearn.base import clone, is_classifier, is_regressor  # noqa: E402
from sklearn.feature_selection import SelectKBest, chi2  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score  # noqa: E402
from sklearn.pipeline import Pipeline, make_pipeline  # noqa: E402
from sklearn.preprocessing import FunctionTransformer  # noqa: E402


from countgrid import (CountingGrid, CountingGridClassifier, CountingGridRegressor,  # noqa: E402
                       GenerativeCountingGridClassifier)
from _expected_warnings import FEW_ITERATIONS  # noqa: E402
from _synthetic import draw_corpus, true_grid  # noqa: E402

# scikit-learn's model selection refits the grids a few EM iterations at a time, on purpose
# (fast)
pytestmark = FEW_ITERATIONS

EXTENT, WINDOW = (6, 6), (3, 3)
ALL = [CountingGrid, CountingGridClassifier, CountingGridRegressor,
       GenerativeCountingGridClassifier]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    pi = true_grid(EXTENT, 30, rng)
    band = np.zeros(EXTENT, dtype=bool)
    band[0:2] = True
    X0, _ = draw_corpus(pi, WINDOW, 45, 40, rng, allowed=band)
    X1, _ = draw_corpus(pi, WINDOW, 45, 40, rng, allowed=np.roll(band, 3, axis=0))
    X = sp.vstack([X0, X1]).tocsr()
    y = np.r_[np.zeros(45, int), np.ones(45, int)]
    perm = rng.permutation(90)
    return X[perm], y[perm]


def _est(cls, **kw):
    base = dict(n_iter=8, random_state=0, num_threads=1)
    base.update(kw)
    return cls(EXTENT, WINDOW, **base)


@pytest.mark.parametrize("cls", ALL)
def test_get_params_lists_constructor_arguments(cls):
    est = _est(cls)
    params = est.get_params()
    for name in ("extent", "window", "n_iter", "tol", "pseudocount", "posterior_floor",
                 "window_schedule", "learn_prior", "min_iter", "dtype", "num_threads",
                 "random_state", "verbose"):
        assert name in params
    assert params["extent"] == EXTENT and params["n_iter"] == 8
    assert params == est.get_params(deep=False)


@pytest.mark.parametrize("cls", ALL)
def test_set_params(cls):
    est = _est(cls)
    assert est.set_params(window=(2, 2), n_iter=3) is est
    assert est.window == (2, 2) and est.get_params()["n_iter"] == 3
    with pytest.raises(ValueError, match="nonexistent"):
        est.set_params(nonexistent=1)


@pytest.mark.parametrize("cls", ALL)
def test_clone(cls, data):
    X, y = data
    est = _est(cls, window_schedule=[(4, 4)], dtype=np.float32)
    est.fit(X) if cls is CountingGrid else est.fit(X, y)
    c = clone(est)
    assert type(c) is cls
    assert c.get_params() == est.get_params()
    # unfitted
    for attr in ("pi_", "grid_", "grids_", "gamma_", "classes_"):
        assert not hasattr(c, attr)
    # and fits to the same thing
    c.fit(X) if cls is CountingGrid else c.fit(X, y)
    if cls is CountingGrid:
        assert np.array_equal(c.pi_, est.pi_)
    else:
        assert np.array_equal(c.predict(X), est.predict(X))


def test_repr_shows_non_default_params():
    r = repr(_est(CountingGridClassifier, n_iter=17))
    assert r.startswith("CountingGridClassifier(") and "n_iter=17" in r
    assert "verbose" not in r


def test_is_classifier_is_regressor():
    assert is_classifier(_est(CountingGridClassifier))
    assert is_classifier(_est(GenerativeCountingGridClassifier))
    assert not is_regressor(_est(CountingGridClassifier))
    assert is_regressor(_est(CountingGridRegressor))
    assert not is_classifier(_est(CountingGridRegressor))
    assert not is_classifier(_est(CountingGrid)) and not is_regressor(_est(CountingGrid))


def test_pipeline_select_k_best(data):
    X, y = data
    pipe = make_pipeline(SelectKBest(chi2, k=20), _est(CountingGridClassifier, n_iter=20))
    pipe.fit(X, y)
    pred = pipe.predict(X)
    assert pred.shape == (90,)
    assert pipe.score(X, y) > 0.8
    assert pipe[-1].n_features_in_ == 20
    P = pipe.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)


def test_pipeline_function_transformer_sparse(data):
    X, y = data
    # keep it sparse: FunctionTransformer must not densify or validate
    ft = FunctionTransformer(lambda A: A.multiply(2).tocsr(), accept_sparse=True, validate=False)
    pipe = Pipeline([("double", ft), ("cg", _est(CountingGridRegressor))])
    pipe.fit(X, y.astype(float))
    assert pipe.predict(X).shape == (90,)


def test_pipeline_transformer_output(data):
    X, y = data
    pipe = make_pipeline(SelectKBest(chi2, k=15), _est(CountingGrid))
    Q = pipe.fit(X, y).transform(X)
    assert Q.shape == (90, 36) and Q.dtype == np.float32      # the grid's default dtype
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, rtol=1e-6)
    Q2 = pipe.fit_transform(X, y)
    np.testing.assert_allclose(Q2, Q, rtol=1e-12)


@pytest.mark.parametrize("cls", [CountingGridClassifier, GenerativeCountingGridClassifier])
def test_cross_val_score(cls, data):
    X, y = data
    scores = cross_val_score(_est(cls, n_iter=15), X, y, cv=3)
    assert scores.shape == (3,)
    assert np.all((scores >= 0) & (scores <= 1))
    assert scores.mean() > 0.8


def test_cross_val_score_regressor(data):
    X, y = data
    scores = cross_val_score(_est(CountingGridRegressor, n_iter=15), X, y.astype(float),
                             cv=KFold(3, shuffle=True, random_state=0))
    assert scores.shape == (3,)
    assert scores.mean() > 0.3


def test_cross_val_score_unsupervised_grid_uses_loglik(data):
    X, _ = data
    scores = cross_val_score(_est(CountingGrid), X, cv=3)
    assert scores.shape == (3,)
    assert np.all(scores < 0)   # total log-likelihoods


def test_grid_search_over_window(data):
    X, y = data
    gs = GridSearchCV(_est(CountingGridClassifier, n_iter=10),
                      {"window": [(2, 2), (3, 3)]}, cv=3)
    gs.fit(X, y)
    assert gs.best_params_["window"] in [(2, 2), (3, 3)]
    assert len(gs.cv_results_["mean_test_score"]) == 2
    assert gs.best_estimator_.window == gs.best_params_["window"]
    assert gs.score(X, y) > 0.8


def test_grid_search_in_pipeline(data):
    X, y = data
    pipe = Pipeline([("sel", SelectKBest(chi2)), ("cg", _est(CountingGridClassifier, n_iter=6))])
    gs = GridSearchCV(pipe, {"sel__k": [10, 20], "cg__window": [(2, 2), (3, 3)]}, cv=3)
    gs.fit(X, y)
    assert set(gs.best_params_) == {"sel__k", "cg__window"}


def test_sklearn_tags():
    from sklearn.utils import get_tags

    tags = get_tags(_est(CountingGridClassifier))
    assert tags.estimator_type == "classifier"
    assert tags.input_tags.sparse
    tags = get_tags(_est(CountingGridRegressor))
    assert tags.estimator_type == "regressor"
    assert get_tags(_est(CountingGrid)).transformer_tags is not None
