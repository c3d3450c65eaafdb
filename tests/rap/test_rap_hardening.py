"""RAP hardening (issue 13): the kernels against their references through every wrapper,
the wrappers' checks of what they hand to C, the count range, degenerate data, the fitted
state, memory estimates, interrupts (checkpoints, atomic partial_fit, blocked kernel
calls) and results independent of the blocking."""
import os
import signal
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.rap import MAX_COUNT, MAX_TRIALS, RAP, _wrappers
from _interrupt import sigint_latency
from _reference.rap import hidden_mean_ref, mean_field_cd_step_ref

DTYPES = [np.float32, np.float64]
THREADS = [1, 2]
PARAMS = ("components_", "intercept_visible_", "intercept_hidden_", "velocity_components_",
          "velocity_visible_", "velocity_hidden_")


def corpus(n=120, D=30, seed=0):
    rng = np.random.default_rng(seed)
    return sp.csr_matrix(rng.poisson(0.8, size=(n, D)).astype(np.float64))


def i64(X):
    return (np.ascontiguousarray(X.indptr, dtype=np.int64),
            np.ascontiguousarray(X.indices, dtype=np.int64), X.data)


def assert_same_params(a, b):
    for name in PARAMS + ("n_trials_", "n_iter_", "n_updates_", "stream_seed_",
                          "n_features_in_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.fixture
def small_blocks():
    """Blocks of one row block (8 rows) for every kernel call."""
    old = _wrappers.block_work(1, 1)
    yield
    _wrappers.block_work(*old)


# ------------------------------------------------------------------ kernels vs references
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("num_threads", THREADS)
@pytest.mark.parametrize("with_rows", [False, True])
def test_hidden_kernel_matches_reference(dtype, num_threads, with_rows, small_blocks):
    """Mean-field hidden step (eq. 2) of the kernel, in blocks, against the reference."""
    rng = np.random.default_rng(1)
    n, D, K = 37, 11, 5
    X = sp.csr_matrix(rng.poisson(1.0, size=(n, D)).astype(dtype))
    W = rng.normal(0, 0.3, size=(D, K)).astype(dtype)
    beta = rng.normal(0, 1, size=K).astype(dtype)
    M = rng.integers(1, 4, size=K).astype(dtype)
    rows = rng.permutation(n)[:23].astype(np.int64) if with_rows else None
    m = rows.shape[0] if with_rows else n
    mp, h = _wrappers.hidden(*i64(X), rows, W, beta, M, m, D, None, 8, num_threads)
    Xr = X.toarray()[rows] if with_rows else X.toarray()
    ref = hidden_mean_ref(Xr, W.astype(float), beta.astype(float), M.astype(float))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(mp, ref, rtol=tol, atol=tol)
    np.testing.assert_array_equal(mp, h)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("num_threads", THREADS)
@pytest.mark.parametrize("cd_steps", [1, 2])
def test_mean_field_cd_step_matches_reference(dtype, num_threads, cd_steps, small_blocks):
    """One momentum step of eq. (10) with mean-field reconstructions (kernels in blocks)
    against the dense NumPy reference."""
    rng = np.random.default_rng(2)
    n, D, K = 21, 9, 4
    X = sp.csr_matrix(rng.poisson(1.0, size=(n, D)).astype(dtype))
    rows = rng.permutation(n)[:13].astype(np.int64)
    W = rng.normal(0, 0.3, size=(D, K))
    a = rng.normal(-0.5, 0.3, size=D)
    beta = rng.normal(0, 1, size=K)
    M = rng.integers(1, 4, size=K).astype(float)
    vW, va, vb = (rng.normal(0, 0.01, size=s) for s in ((D, K), D, K))
    ref = mean_field_cd_step_ref(X.toarray()[rows], W, a, beta, M, vW, va, vb, 0.05, 0.5,
                                 1e-3, cd_steps)
    state = [np.ascontiguousarray(v, dtype=dtype) for v in (W, a, beta, vW, va, vb)]
    _wrappers.cd_step(*i64(X), rows, D, state[0], state[1], state[2], M.astype(dtype),
                         state[3], state[4], state[5], 0.05, 0.5, 1e-3, cd_steps, None, 8,
                         num_threads)
    tol = 2e-4 if dtype == np.float32 else 1e-11
    for got, want in zip(state, ref):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("method", ["cd", "mean_field"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_blocked_kernel_calls_give_identical_results(method, dtype):
    """The interruptible blocks (one 8-row block per call) change no bit of a fit, of a
    transform or of Gibbs samples, for 1 and 2 threads."""
    X = corpus()
    kw = dict(n_components=4, n_epochs=2, batch_size=50, method=method, dtype=dtype,
              random_state=5)
    ref = RAP(num_threads=1, **kw).fit(X)
    H0 = ref.transform(X)
    S0, G0 = ref.sample(X, n_steps=2, random_state=3)
    old = _wrappers.block_work(1, 1)
    try:
        for nt in THREADS:
            m = RAP(num_threads=nt, **kw).fit(X)
            assert_same_params(ref, m)
            np.testing.assert_array_equal(m.transform(X), H0)
            S1, G1 = m.sample(X, n_steps=2, random_state=3)
            np.testing.assert_array_equal(S1.toarray(), S0.toarray())
            np.testing.assert_array_equal(G1, G0)
    finally:
        _wrappers.block_work(*old)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("K", [50, 300])
def test_visible_step_is_independent_of_threads_and_blocks(dtype, K):
    """BLAS results depend on the shape of a product: the visible step multiplies in
    groups fixed from row 0, so its rates (and Poisson samples) are the same bits for 1, 2
    and 3 threads and any blocking (float32 with K = 50 differed between thread counts)."""
    rng = np.random.default_rng(4)
    n, D = 203, 150
    H = rng.integers(0, 3, size=(n, K)).astype(dtype)
    W = rng.normal(0, 0.05, size=(D, K)).astype(dtype)
    a = rng.normal(-1, 0.3, size=D).astype(dtype)

    def run(nt, gens):
        g = None if gens is None else _wrappers.make_gens(
            [np.random.PCG64(c) for c in np.random.SeedSequence(gens).spawn(26)])
        return _wrappers.visible(H, W, a, g, 8, nt)

    for gens in (None, 7):
        ref = run(1, gens)
        outs = [run(nt, gens) for nt in (2, 3)]
        old = _wrappers.block_work(1, 1)
        try:
            outs.append(run(2, gens))
        finally:
            _wrappers.block_work(*old)
        for out in outs:
            for u, v in zip(out, ref):
                np.testing.assert_array_equal(u, v)
    indptr, indices, data = run(1, None)
    rates = sp.csr_matrix((data, indices, indptr), shape=(n, D)).toarray()
    ref = np.exp(np.minimum(a.astype(float) + H.astype(float) @ W.astype(float).T, 30.0))
    np.testing.assert_allclose(rates, ref, rtol=1e-4 if dtype == np.float32 else 1e-12)


def test_fit_with_many_units_is_independent_of_threads():
    X = corpus(150, 40)
    kw = dict(n_components=50, n_epochs=1, batch_size=75, dtype=np.float32, random_state=1)
    a = RAP(num_threads=1, **kw).fit(X)
    b = RAP(num_threads=2, **kw).fit(X)
    assert_same_params(a, b)


# ------------------------------------------------------------------ the wrappers check
def test_wrappers_refuse_inconsistent_arrays():
    X = corpus(10, 6)
    ip, ii, dd = i64(X)
    W = np.zeros((6, 3))
    beta, M = np.zeros(3), np.ones(3)
    # W against the columns of the counts (the crafted-model crash)
    with pytest.raises(ValueError, match="6 rows"):
        _wrappers.project(ip, ii, dd, None, W, 10, 7, 1)
    with pytest.raises(ValueError, match="6 rows"):
        _wrappers.hidden(ip, ii, dd, None, W, beta, M, 10, 100, None, 8, 1)
    with pytest.raises(ValueError, match="column index"):
        _wrappers.project(ip, ii, dd, None, np.zeros((2, 3)), 10, 2, 1)   # index 5 >= 2
    bad = ii.copy()
    bad[2] = 6
    with pytest.raises(ValueError, match="column index"):
        _wrappers.project(ip, bad, dd, None, W, 10, 6, 1)
    bad[2] = -1
    with pytest.raises(ValueError, match="column index"):
        _wrappers.hidden(ip, bad, dd, None, W, beta, M, 10, 6)
    ptr = ip.copy()
    ptr[3] = ptr[5] + 1
    with pytest.raises(ValueError, match="indptr"):
        _wrappers.project(ptr, ii, dd, None, W, 10, 6, 1)
    ptr = ip.copy()
    ptr[-1] = ii.shape[0] + 5
    with pytest.raises(ValueError, match="indptr"):
        _wrappers.project(ptr, ii, dd, None, W, 10, 6, 1)
    with pytest.raises(ValueError, match="indices has"):
        _wrappers.project(ip, ii[:-1], dd, None, W, 10, 6, 1)
    with pytest.raises(ValueError, match="row number"):
        _wrappers.project(ip, ii, dd, np.array([0, 10], np.int64), W, 2, 6, 1)
    with pytest.raises(ValueError, match="rows requested"):
        _wrappers.project(ip, ii, dd, None, W, 11, 6, 1)
    # per-unit arrays, trials (a huge or NaN M_j would hang the binomial sampler)
    with pytest.raises(ValueError, match="beta"):
        _wrappers.hidden(ip, ii, dd, None, W, np.zeros(2), M, 10, 6)
    for m in (0.0, 1.5, MAX_TRIALS + 1.0, 1e18, np.nan, np.inf):
        with pytest.raises(ValueError, match="ntrials"):
            _wrappers.hidden(ip, ii, dd, None, W, beta, np.array([1.0, m, 1.0]), 10, 6)
    gens = _wrappers.make_gens([np.random.PCG64(0)])
    with pytest.raises(ValueError, match="bit generators"):
        _wrappers.hidden(ip, ii, dd, None, W, beta, M, 10, 6, gens, 8)
    with pytest.raises(ValueError, match="inconsistent"):
        _wrappers.visible(np.zeros((2, 3)), W, np.zeros(5))
    with pytest.raises(ValueError, match="inconsistent"):
        _wrappers.visible(np.zeros((2, 4)), W, np.zeros(6))
    rows = np.arange(10, dtype=np.int64)
    good = [W.copy(), np.zeros(6), np.zeros(3), M, np.zeros((6, 3)), np.zeros(6), np.zeros(3)]
    for i, wrong in [(1, np.zeros(5)), (2, np.zeros(4)), (4, np.zeros((6, 2))),
                     (5, np.zeros(7)), (6, np.zeros(2))]:
        args = list(good)
        args[i] = wrong
        with pytest.raises(ValueError):
            _wrappers.cd_step(ip, ii, dd, rows, 6, *args, 0.1, 0.5, 0.0, 1)
    with pytest.raises(ValueError, match="6 rows"):
        _wrappers.cd_step(ip, ii, dd, rows, 8, *good, 0.1, 0.5, 0.0, 1)
    with pytest.raises(ValueError, match="finite"):
        _wrappers.cd_step(ip, ii, dd, rows, 6, *good, np.nan, 0.5, 0.0, 1)
    with pytest.raises(ValueError, match="row number"):
        _wrappers.cd_step(ip, ii, dd, np.array([0, 99], np.int64), 6, *good, 0.1, 0.5, 0.0,
                             1)
    with pytest.raises(ValueError, match="binomial"):
        _wrappers.binomial(np.random.PCG64(0), np.array([10**12]), np.array([0.5]))


def test_wrong_scratch_is_replaced_not_trusted():
    """A workspace of the wrong size or dtype is rebuilt: the step equals one without it."""
    X = corpus(16, 6)
    rows = np.arange(16, dtype=np.int64)
    out = []
    for work in (None, (np.empty((1, 6)), np.zeros(2, np.int64), np.empty(1, np.int64),
                        np.empty(1)),
                 (np.empty((16, 6), np.float32), np.zeros(17, np.int64),
                  np.empty(96, np.int64), np.empty(96))):
        state = [np.full((6, 2), 0.1), np.zeros(6), np.zeros(2), np.zeros((6, 2)), np.zeros(6),
                 np.zeros(2)]
        _wrappers.cd_step(*i64(X), rows, 6, state[0], state[1], state[2], np.ones(2),
                             state[3], state[4], state[5], 0.1, 0.5, 0.0, 1, None, 8, 1, work)
        out.append(state)
    for other in out[1:]:
        for a, b in zip(out[0], other):
            np.testing.assert_array_equal(a, b)


def test_cd_gradient_of_empty_batches():
    """Rows without counts (no stored entries at all) are a valid batch."""
    z = np.zeros(3, np.int64)
    gW, ga, gb = _wrappers.cd_gradient(z, np.zeros(0, np.int64), np.zeros(0), z,
                                          np.zeros(0, np.int64), np.zeros(0),
                                          np.full((2, 2), 0.5), np.full((2, 2), 0.5), 4)
    assert not gW.any() and not ga.any() and not gb.any()


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


def test_crafted_model_file_cannot_crash_transform(tmp_path):
    """A file whose n_features_in_ (and components_) disagree with the counts: a clear
    ValueError at load or at transform, never a read out of bounds."""
    m = fitted()
    path = tmp_path / "rap.npz"
    m.save(path)
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    for name, value in [("n_features_in_", np.array(10**6)),
                        ("components_", np.zeros((3, 5))),
                        ("intercept_hidden_", np.zeros(1))]:
        crafted = dict(arrays, **{name: value})
        bad = tmp_path / f"bad_{name}.npz"
        np.savez(bad, **crafted)
        with pytest.raises(ValueError):
            countgrid.load(bad).transform(np.ones((2, 10**6 if name == "n_features_in_"
                                                   else 30)))


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
    t0 = time.perf_counter()
    m.transform(X[:5000])
    tenth = time.perf_counter() - t0
    old = _wrappers.block_work(1 << 14)
    try:
        latency = sigint_latency(lambda: m.transform(X), min(0.4, 2 * tenth))
    finally:
        _wrappers.block_work(*old)
    assert latency < tenth, (latency, tenth)


@pytest.mark.parametrize("name", ["RAP", "RAP_f32_mean_field"])
def test_v010_model_files_pass_the_fitted_state_check(name):
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    m = countgrid.load(os.path.join(here, "fixtures", "v0_1_0", f"{name}.npz"))
    assert m._check_fitted_state() is None
