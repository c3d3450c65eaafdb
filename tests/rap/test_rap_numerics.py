"""RAP's numerical behaviour at the edges (issue 13): the count range (docs/rap.md, "Input
range"), degenerate data, the fitted state, memory estimates and interrupts (checkpoints,
atomic partial_fit, blocked kernel calls).  The kernels against their references and the
wrappers' checks: test_rap_kernels.py; the answers to hostile arguments: tests/hostile."""
import os
import signal
import threading

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.rap import MAX_COUNT, RAP, _wrappers
from _interrupt import sigint_latency, steady_time

DTYPES = [np.float32, np.float64]
PARAMS = ("components_", "intercept_visible_", "intercept_hidden_", "velocity_components_",
          "velocity_visible_", "velocity_hidden_")


def corpus(n=120, D=30, seed=0):
    rng = np.random.default_rng(seed)
    return sp.csr_matrix(rng.poisson(0.8, size=(n, D)).astype(np.float64))


def assert_same_params(a, b):
    for name in PARAMS + ("n_trials_", "n_iter_", "n_updates_", "stream_seed_",
                          "n_features_in_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


# ------------------------------------------------------------------ numerical range
@pytest.mark.parametrize("scale", [1e300, 1e20, float(np.nextafter(MAX_COUNT, np.inf))])
def test_counts_beyond_the_model_are_refused_everywhere(scale):
    X = corpus(20, 6).toarray()
    X[0, 0] = 0
    X[3, 2] = scale
    m = RAP(3, n_epochs=1, random_state=0).fit(corpus(20, 6))
    for call in (RAP(3, n_epochs=1).fit, RAP(3).partial_fit, m.partial_fit, m.transform,
                 m.score_samples, m.expected_hidden, m.free_energy, m.sample, m.mode):
        with pytest.raises(ValueError, match=r"X holds counts up to .*exp\(30\)"):
            call(X)


@pytest.mark.parametrize("dtype", DTYPES)
def test_float32_counts_near_their_maximum_are_refused(dtype):
    X = np.ones((4, 3), np.float32)
    X[1, 1] = np.finfo(np.float32).max
    with pytest.raises(ValueError, match="X holds counts"):
        RAP(2, n_epochs=1, dtype=dtype).fit(X)


def test_counts_up_to_the_limit_give_finite_output():
    m = RAP(3, n_epochs=1, random_state=0).fit(corpus(20, 6))
    X = np.zeros((2, 6))
    X[0, 1] = MAX_COUNT
    for out in (m.transform(X), m.score_samples(X), m.expected_hidden(X), m.mode(X)[0],
                m.sample(X, random_state=0)[0].toarray()):
        assert np.isfinite(out).all()


def test_overflowing_projection_raises_instead_of_inf():
    m = RAP(2, n_epochs=1, dtype=np.float32, random_state=0).fit(corpus(20, 6))
    m.components_ = np.full_like(m.components_, 1e30)
    X = np.full((1, 6), 1e12)
    with pytest.raises(ValueError, match="overflows float32"):
        m.transform(X)
    with pytest.raises(ValueError, match="overflows"):
        m.score_samples(X)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ["tiny", "zero_row", "zero_column", "all_zero", "one_doc",
                                  "one_word", "one_unit"])
def test_degenerate_data_gives_a_finite_valid_model(dtype, case):
    X = corpus(30, 8).toarray()
    K = 3
    if case == "tiny":
        X = X * 1e-320
    elif case == "zero_row":
        X[4] = 0
    elif case == "zero_column":
        X[:, 2] = 0
    elif case == "all_zero":
        X[:] = 0
    elif case == "one_doc":
        X = X[:1]
    elif case == "one_word":
        X = X[:, :1]
    else:
        K = 1
    for Xi in (X, sp.csr_matrix(X)):
        m = RAP(K, n_epochs=2, batch_size=7, dtype=dtype, random_state=0).fit(Xi)
        m._check_fitted_state()
        for out in (m.transform(Xi), m.score_samples(Xi), m.expected_hidden(Xi),
                    m.sample(Xi, random_state=1)[0].toarray(), m.mode(Xi)[1]):
            assert np.isfinite(out).all()
        m.partial_fit(Xi)
        m._check_fitted_state()


# ------------------------------------------------------------------ fitted state
def fitted(dtype=np.float64):
    return RAP(3, n_trials=[1, 2, 3], n_epochs=1, dtype=dtype, random_state=0).fit(corpus())


@pytest.mark.parametrize("name, value, match", [
    ("n_features_in_", 10**9, "n_features_in_"),
    ("n_features_in_", 30.0, "n_features_in_"),
    ("components_", np.zeros((3, 29)), "n_features_in_"),
    ("components_", np.zeros((3, 30), np.int64), "components_"),
    ("components_", np.zeros(90), "components_"),
    ("components_", "weights", "components_"),
    ("intercept_visible_", np.zeros(29), "intercept_visible_"),
    ("intercept_hidden_", np.zeros(4), "intercept_hidden_"),
    ("intercept_hidden_", np.zeros(3, np.float32), "intercept_hidden_"),
    ("n_trials_", np.zeros(2), "n_trials_"),
])
def test_inconsistent_fitted_arrays_are_named_at_transform(name, value, match):
    m = fitted()
    setattr(m, name, value)
    with pytest.raises(ValueError, match=match):
        m.transform(corpus())
    with pytest.raises(ValueError, match=match):
        m._check_fitted_state()


@pytest.mark.parametrize("name, value, match", [
    ("n_trials_", np.array([1.0, 0.0, 3.0]), "n_trials_"),
    ("n_trials_", np.array([1.0, 2.5, 3.0]), "n_trials_"),
    ("n_trials_", np.array([1.0, 1e9, 3.0]), "n_trials_"),
    ("velocity_components_", np.zeros((3, 31)), "velocity_components_"),
    ("velocity_visible_", np.full(30, np.nan), "velocity_visible_"),
    ("velocity_hidden_", np.zeros(3, np.float32), "velocity_hidden_"),
    ("intercept_visible_", np.full(30, np.inf), "intercept_visible_"),
    ("n_updates_", -1, "n_updates_"),
    ("n_iter_", 1.5, "n_iter_"),
    ("stream_seed_", 2**64, "stream_seed_"),
])
def test_check_fitted_state_names_the_attribute(name, value, match):
    m = fitted()
    setattr(m, name, value)
    with pytest.raises(ValueError, match=match):
        m._check_fitted_state()


def test_check_fitted_state_passes_valid_models():
    for dtype in DTYPES:
        assert fitted(dtype)._check_fitted_state() is None
    assert RAP()._check_fitted_state() is None                  # unfitted
    m = fitted()
    del m.velocity_hidden_
    with pytest.raises(ValueError, match="velocity_hidden_"):
        m._check_fitted_state()


def test_set_params_after_fit_does_not_change_predictions():
    m = fitted()
    X = corpus(10)
    before = (m.transform(X), m.expected_hidden(X), m.score_samples(X))
    m.set_params(n_components=7, n_trials=5, dtype=np.float32, method="mean_field",
                 num_threads=2)
    after = (m.transform(X), m.expected_hidden(X), m.score_samples(X))
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    m.set_params(num_threads=10**6)
    with pytest.warns(RuntimeWarning, match="capped"):
        np.testing.assert_array_equal(m.transform(X), before[0])


# ------------------------------------------------------------------ memory
def test_absurd_sizes_raise_memory_error_with_advice(monkeypatch):
    X = corpus(20, 6)
    for K in (10**9, 2**62):
        with pytest.raises(MemoryError, match="hidden units"):
            RAP(K).fit(X)
    with pytest.raises(ValueError, match="n_components.*beyond 2\\*\\*63 - 1"):
        RAP(2**70).fit(X)
    monkeypatch.setenv("COUNTGRID_MAX_MEMORY", "64K")
    with pytest.raises(MemoryError, match="fewer hidden units"):
        RAP(400, n_epochs=1).fit(X)
    m = RAP(3, n_epochs=1, random_state=0)
    monkeypatch.delenv("COUNTGRID_MAX_MEMORY")
    m.fit(X)
    monkeypatch.setenv("COUNTGRID_MAX_MEMORY", "64K")
    big = sp.random(20000, 6, density=0.1, format="csr", random_state=0)
    for method in (m.transform, m.score_samples, m.sample, m.mode):
        with pytest.raises(MemoryError, match="rows"):
            method(big)


# ------------------------------------------------------------------ interrupts
def _interrupt_at_call(monkeypatch, n_calls):
    """SIGINT (as Ctrl-C) right after the n-th minibatch update."""
    real = _wrappers.cd_step
    count = [0]

    def cd_step(*args, **kwargs):
        real(*args, **kwargs)
        count[0] += 1
        if count[0] == n_calls:
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(_wrappers, "cd_step", cd_step)


@pytest.mark.parametrize("method", ["cd", "mean_field"])
@pytest.mark.parametrize("at_call, kept", [(2, 0), (3, 0), (4, 1), (6, 1), (9, 2)])
def test_interrupted_fit_keeps_the_last_complete_epoch(monkeypatch, method, at_call, kept):
    """3 minibatches per epoch: Ctrl-C after update `at_call` keeps `kept` epochs, with the
    exact parameters of a fit of that many epochs (0: unfitted)."""
    X = corpus(120)
    kw = dict(n_components=4, batch_size=40, n_epochs=5, method=method, random_state=2)
    _interrupt_at_call(monkeypatch, at_call)
    m = RAP(**kw)
    with pytest.raises(KeyboardInterrupt) as info:
        m.fit(X)
    monkeypatch.undo()
    note = " ".join(getattr(info.value, "__notes__", []))
    if kept == 0:
        assert not hasattr(m, "components_") and "unfitted" in note
        with pytest.raises(countgrid.NotFittedError):
            m.transform(X)
        return
    assert f"epoch {kept} of 5" in note
    ref = RAP(**dict(kw, n_epochs=kept)).fit(X)
    assert_same_params(m, ref)
    m._check_fitted_state()


def test_interrupted_partial_fit_keeps_the_state_before_the_call(monkeypatch):
    X = corpus(120)
    kw = dict(n_components=4, batch_size=30, random_state=2)
    m = RAP(**kw).partial_fit(X[:60])
    before = m._snapshot()
    _interrupt_at_call(monkeypatch, 1)                 # the 2nd call has 2 minibatches
    with pytest.raises(KeyboardInterrupt):
        m.partial_fit(X[60:])
    monkeypatch.undo()
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(m, name), value, err_msg=name)
    # and learning continues as if the interrupted call had never happened
    m.partial_fit(X[60:])
    ref = RAP(**kw).partial_fit(X[:60]).partial_fit(X[60:])
    assert_same_params(m, ref)


def test_interrupted_first_partial_fit_leaves_unfitted(monkeypatch):
    _interrupt_at_call(monkeypatch, 1)
    m = RAP(3, batch_size=10, random_state=0)
    with pytest.raises(KeyboardInterrupt):
        m.partial_fit(corpus(40))
    assert not any(k.endswith("_") and not k.startswith("_") for k in vars(m))


def _sigint_after(seconds):
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def test_ctrl_c_from_a_timer_during_fit():
    """A real asynchronous SIGINT: the estimator is unfitted or holds exactly k epochs."""
    X = corpus(3000, 200, seed=1)
    kw = dict(n_components=20, batch_size=50, n_epochs=1000, random_state=4, num_threads=1)
    m = RAP(**kw)
    timer = _sigint_after(0.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            m.fit(X)
    finally:
        timer.cancel()
    if hasattr(m, "components_"):
        k = m.n_iter_
        assert 1 <= k < 1000
        assert_same_params(m, RAP(**dict(kw, n_epochs=k)).fit(X))


def test_ctrl_c_is_honoured_inside_a_long_kernel_call():
    """transform of many rows runs in blocks: SIGINT during the projection is honoured
    within about one block, not when the whole projection returns (about 10x the time of
    a tenth of the rows)."""
    rng = np.random.default_rng(0)
    D, K = 400, 400
    m = RAP(K, n_epochs=1, random_state=0, num_threads=1).fit(corpus(50, D))
    X = sp.random(50000, D, density=0.2, format="csr", random_state=rng,
                  data_rvs=lambda k: np.ones(k))
    tenth = steady_time(lambda: m.transform(X[:5000]))
    old = _wrappers.block_work(1 << 14)
    try:
        latency = sigint_latency(lambda: m.transform(X), min(0.4, tenth))
    finally:
        _wrappers.block_work(*old)
    assert latency < tenth, (latency, tenth)
