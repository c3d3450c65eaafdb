"""RAP's C/OpenMP kernels through their wrappers (issue 13): against the NumPy references
of tests/_reference/rap.py, in interruptible blocks of any size and for any number of
threads (the same bits), and the wrappers' checks of what they hand to C."""
import numpy as np
import pytest
import scipy.sparse as sp

from countgrid.rap import MAX_TRIALS, RAP, _wrappers
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
