"""RAP's defaults of issue 12: ``learning_rate="auto"`` (AUTO_RATE / m**2, m the mean
non-zero count, docs/rap.md "Defaults") and what an explicit float keeps from 0.1.0."""
import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.exceptions import NotFittedError
from countgrid.rap import AUTO_RATE, AUTO_UNITS, RAP, auto_learning_rate


@pytest.fixture(scope="module")
def docs():
    """Documents of 4 planted topics; non-zero counts average about 2.6."""
    rng = np.random.default_rng(1)
    D, K, N = 60, 4, 300
    topics = rng.dirichlet(np.full(D, 0.1), size=K)
    z = rng.integers(0, K, N)
    X = sp.csr_matrix(np.array([rng.multinomial(20, topics[k]) for k in z]), dtype=float)
    return X


def mean_nonzero(X):
    return X.data.sum() / np.count_nonzero(X.data)


def test_rule_values():
    assert RAP().learning_rate == "auto" and RAP().n_epochs == 20
    assert auto_learning_rate(1.0) == AUTO_RATE == 0.09
    assert auto_learning_rate(2.0) == pytest.approx(0.0225, rel=1e-15)
    assert auto_learning_rate(1.5) == pytest.approx(0.04, rel=1e-15)
    # beyond AUTO_UNITS hidden units the rate falls as 1 / K; below it stays
    assert AUTO_UNITS == 50
    assert auto_learning_rate(1.5, 10) == auto_learning_rate(1.5, 50) == auto_learning_rate(1.5)
    assert auto_learning_rate(1.5, 200) == pytest.approx(0.01, rel=1e-15)
    assert auto_learning_rate(2.0, 100) == pytest.approx(0.09 / 8, rel=1e-15)
    for bad in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="mean_nonzero_count"):
            auto_learning_rate(bad)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="n_components"):
            auto_learning_rate(1.0, bad)


def test_fitted_rate_follows_the_counts(docs):
    X = docs
    m = mean_nonzero(X)
    assert 1.5 < m < 4.0
    one = RAP(n_components=3, n_epochs=1, random_state=0).fit(X)
    assert one.auto_learning_rate_ == pytest.approx(AUTO_RATE / m**2, rel=1e-12)
    assert one.learning_rate_ == one.auto_learning_rate_
    # doubling every count quarters the rate
    two = RAP(n_components=3, n_epochs=1, random_state=0).fit(2 * X)
    assert two.auto_learning_rate_ == pytest.approx(one.auto_learning_rate_ / 4, rel=1e-12)
    # longer documents with the same counts per word keep the rate (document length is
    # not part of the rule): every document repeated side by side
    wide = RAP(n_components=3, n_epochs=1, random_state=0).fit(sp.hstack([X, X]).tocsr())
    assert wide.auto_learning_rate_ == pytest.approx(one.auto_learning_rate_, rel=1e-12)
    # fractional data (mean below 1) and all-zero data are capped at AUTO_RATE
    tiny = RAP(n_components=3, n_epochs=1, random_state=0).fit(X * 1e-3)
    assert tiny.auto_learning_rate_ == AUTO_RATE
    zero = RAP(n_components=2, n_epochs=1, random_state=0).fit(np.zeros((5, 4)))
    assert zero.auto_learning_rate_ == AUTO_RATE and np.isfinite(zero.components_).all()
    # the fitted rate uses n_components: 100 units halve it
    wide_model = RAP(n_components=100, n_epochs=1, random_state=0).fit(X)
    assert wide_model.auto_learning_rate_ == pytest.approx(one.auto_learning_rate_ / 2,
                                                           rel=1e-12)


def test_auto_is_the_explicit_rate_of_the_rule(docs):
    """"auto" only chooses the float: the same float given explicitly fits the same bits,
    and an explicit float is used as given (0.1.0's meaning), with no auto rate."""
    X = docs
    auto = RAP(n_components=4, n_epochs=2, random_state=5).fit(X)
    explicit = RAP(n_components=4, n_epochs=2, learning_rate=auto.auto_learning_rate_,
                   random_state=5).fit(X)
    np.testing.assert_array_equal(auto.components_, explicit.components_)
    np.testing.assert_array_equal(auto.intercept_visible_, explicit.intercept_visible_)
    assert not hasattr(explicit, "auto_learning_rate_")
    assert explicit.learning_rate_ == auto.auto_learning_rate_
    old = RAP(n_components=4, n_epochs=2, learning_rate=1e-3, random_state=5).fit(X)
    assert old.learning_rate_ == 1e-3
    assert not np.array_equal(old.components_, auto.components_)
    # a refit with an explicit rate drops the auto rate of an earlier fit
    auto.set_params(learning_rate=1e-3).fit(X)
    assert not hasattr(auto, "auto_learning_rate_") and auto.learning_rate_ == 1e-3
    np.testing.assert_array_equal(auto.components_, old.components_)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_auto_fit_same_bits_for_1_and_2_threads(docs, dtype):
    fits = [RAP(n_components=5, n_epochs=2, learning_rate="auto", dtype=dtype,
                num_threads=nt, random_state=2).fit(docs) for nt in (1, 2)]
    assert fits[0].auto_learning_rate_ == fits[1].auto_learning_rate_
    for name in ("components_", "intercept_visible_", "intercept_hidden_"):
        np.testing.assert_array_equal(getattr(fits[0], name), getattr(fits[1], name))


def test_partial_fit_keeps_the_rate_of_its_first_call(docs, tmp_path):
    X = docs
    a = RAP(n_components=3, random_state=1, batch_size=50)
    a.partial_fit(X[:150])
    rate = a.auto_learning_rate_
    assert rate == pytest.approx(AUTO_RATE / mean_nonzero(X[:150]) ** 2, rel=1e-12)
    a.partial_fit(3 * X[150:])          # other counts: the rate stays
    assert a.auto_learning_rate_ == rate
    # the rate round-trips through a model file and continues identically
    b = RAP(n_components=3, random_state=1, batch_size=50).partial_fit(X[:150])
    path = tmp_path / "rap.npz"
    b.save(path)
    c = countgrid.load(path)
    assert c.auto_learning_rate_ == rate and c.learning_rate_ == rate
    c.partial_fit(3 * X[150:])
    np.testing.assert_array_equal(c.components_, a.components_)
    # a model fitted with a float and then set to "auto" takes the rate of the next X
    d = RAP(n_components=3, learning_rate=1e-3, random_state=1).partial_fit(X[:150])
    with pytest.raises(AttributeError, match="auto_learning_rate_"):
        d.set_params(learning_rate="auto").learning_rate_
    d.partial_fit(2 * X[150:])
    assert d.auto_learning_rate_ == pytest.approx(
        AUTO_RATE / mean_nonzero(2 * X[150:]) ** 2, rel=1e-12)
    e = RAP(n_components=200, learning_rate=1e-3, random_state=1).partial_fit(X[:150])
    e.set_params(learning_rate="auto").partial_fit(X[150:])
    assert e.auto_learning_rate_ == pytest.approx(
        AUTO_RATE / 4 / mean_nonzero(X[150:]) ** 2, rel=1e-12)


def test_model_files_without_the_auto_rate(docs, tmp_path):
    """0.1.0 files (float learning_rate, no auto_learning_rate_) load and keep their
    rate; a damaged auto rate is refused naming it."""
    m = RAP(n_components=3, n_epochs=1, learning_rate=2e-3, random_state=0).fit(docs)
    path = tmp_path / "old.npz"
    m.save(path)
    with np.load(path, allow_pickle=False) as z:
        assert "auto_learning_rate_" not in z.files
    back = countgrid.load(path)
    assert back.learning_rate_ == 2e-3 and back.learning_rate == 2e-3
    auto = RAP(n_components=3, n_epochs=1, random_state=0).fit(docs)
    for bad in (-1.0, np.nan, np.inf, True, "0.1"):
        auto.auto_learning_rate_ = bad
        with pytest.raises(ValueError, match="auto_learning_rate_"):
            auto._check_fitted_state()
    with pytest.raises(NotFittedError):
        RAP().learning_rate_


@pytest.mark.parametrize("value, err", [("fast", ValueError), ("AUTO", ValueError),
                                        (-0.1, ValueError), (np.nan, ValueError),
                                        ([0.1], TypeError), (None, TypeError)])
def test_learning_rate_validation(value, err):
    with pytest.raises(err, match="learning_rate"):
        RAP(n_components=2, learning_rate=value).fit(np.ones((4, 3)))
