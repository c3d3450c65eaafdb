"""The Rate Adapting Poisson harmonium (Gehler, Holub & Welling, ICML 2006): closed forms,
exact gradients, samplers, reproducibility and input checks."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats


import countgrid  # noqa: E402
from countgrid.rap import RAP, _wrappers  # noqa: E402
from countgrid.exceptions import NotFittedError  # noqa: E402
from _reference.rap import (cd_stats_ref, exact_loglik_ref, hidden_mean_ref,  # noqa: E402
                           log_marginal_ref, sigmoid, truncated_states, visible_rate_ref)

DTYPES = [np.float32, np.float64]
THREADS = [1, 2]


def make_model(W, a, beta, M, dtype=np.float64):
    """A RAP holding the given parameters (paper orientation: W is (D, K))."""
    W = np.asarray(W, dtype=np.float64)
    D, K = W.shape
    m = RAP(n_components=K, n_trials=np.asarray(M), dtype=dtype)
    m.components_ = np.ascontiguousarray(W, dtype=dtype).T
    m.intercept_visible_ = np.asarray(a, dtype=dtype)
    m.intercept_hidden_ = -np.asarray(beta, dtype=dtype)
    m.n_trials_ = np.asarray(np.broadcast_to(M, (K,)), dtype=dtype)
    m.n_features_in_ = D
    return m


def random_params(D, K, rng, M=None):
    W = rng.normal(0, 0.3, size=(D, K))
    a = rng.normal(-0.5, 0.5, size=D)
    beta = rng.normal(0, 1, size=K)
    M = rng.integers(1, 4, size=K) if M is None else np.broadcast_to(M, (K,))
    return W, a, beta, M.astype(float)


@pytest.fixture(scope="module")
def planted():
    """Documents from 4 planted topics (a multinomial topic model), 50 words each."""
    rng = np.random.default_rng(0)
    D, K, N = 120, 4, 800
    topics = rng.dirichlet(np.full(D, 0.05), size=K)
    z = rng.integers(0, K, N)
    X = np.array([rng.multinomial(50, topics[k]) for k in z])
    return sp.csr_matrix(X), z


# ------------------------------------------------------------------ closed forms
def test_worked_example():
    """Eqs. (1), (2) and (6) on a small model (D = 3, K = 2) computed by hand, to 1e-6."""
    W = [[0.5, -0.2], [0.1, 0.3], [-0.4, 0.6]]
    m = make_model(W, [0.0, 0.2, -0.1], [0.5, -0.1], [1, 1])
    x = np.array([[3, 0, 1]])
    np.testing.assert_allclose(m.transform(x) + m.intercept_hidden_, [[0.6, 0.1]], atol=1e-12)
    np.testing.assert_allclose(m.expected_hidden(x), [[0.645656, 0.524979]], atol=1e-6)
    rates = _wrappers.visible(np.array([[1.0, 0.0]]), np.array(W), m.intercept_visible_)[2]
    np.testing.assert_allclose(rates, [1.648721, 1.349859, 0.606531], atol=1e-6)
    np.testing.assert_allclose(m.score_samples(x), [-0.109874], atol=1e-6)
    np.testing.assert_allclose(m.free_energy(x), [0.109874], atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("num_threads", THREADS)
def test_conditional_means_and_marginal(dtype, num_threads):
    rng = np.random.default_rng(1)
    W, a, beta, M = random_params(7, 5, rng)
    X = rng.poisson(1.0, size=(13, 7))
    m = make_model(W, a, beta, M, dtype)
    m.num_threads = num_threads
    tol = 1e-5 if dtype == np.float32 else 1e-12
    Wd = m.components_.T.astype(np.float64)
    ad, bd = m.intercept_visible_.astype(np.float64), -m.intercept_hidden_.astype(np.float64)
    np.testing.assert_allclose(m.transform(X), X @ Wd, rtol=tol, atol=tol)
    Xs = sp.csr_matrix(X)
    np.testing.assert_allclose(m.transform(Xs), X @ Wd, rtol=tol, atol=tol)   # int32 indices
    Xs.indices, Xs.indptr = Xs.indices.astype(np.int64), Xs.indptr.astype(np.int64)
    np.testing.assert_allclose(m.transform(Xs), X @ Wd, rtol=tol, atol=tol)   # int64 indices
    np.testing.assert_allclose(m.expected_hidden(X), hidden_mean_ref(X, Wd, bd, M),
                               rtol=tol, atol=tol)
    np.testing.assert_allclose(m.score_samples(X), log_marginal_ref(X, Wd, ad, bd, M),
                               rtol=tol, atol=tol)
    # the kernel's mean-field reconstruction is E[x|h] = exp(a + W h), clipped at 30
    H = rng.integers(0, 3, size=(4, 5)).astype(dtype)
    H[0, 0] = 1000.0
    Wc = np.ascontiguousarray(m.components_.T)
    indptr, indices, data = _wrappers.visible(H, Wc, m.intercept_visible_, None, 1, num_threads)
    rates = sp.csr_matrix((data, indices, indptr), shape=(4, 7)).toarray()
    np.testing.assert_allclose(rates, visible_rate_ref(H, Wd, ad), rtol=10 * tol, atol=1e-30)
    assert rates.max() <= np.exp(30.0) * (1 + 1e-6)


def test_invariance_and_canonical_gauge():
    """Eqs. (8)-(9): flipping any subset S of units leaves p(x) unchanged: the unnormalised
    eq. (6) moves by the constant sum_{j in S} M_j beta_j (absorbed in Z), to 1e-10."""
    rng = np.random.default_rng(2)
    W, a, beta, M = random_params(6, 4, rng)
    X = rng.poisson(2.0, size=(20, 6))
    base = make_model(W, a, beta, M).score_samples(X)
    S = np.array([True, False, True, True])
    W2, a2, b2 = W.copy(), a + W[:, S] @ M[S], beta.copy()
    W2[:, S] *= -1
    b2[S] *= -1
    shift = np.sum(M[S] * beta[S])
    np.testing.assert_allclose(make_model(W2, a2, b2, M).score_samples(X) - shift, base,
                               atol=1e-10)
    Wc, ac, bc = make_model(W2, a2, b2, M).canonical_parameters()
    assert (bc >= 0).all()
    diff = make_model(Wc, ac, bc, M).score_samples(X) - base
    np.testing.assert_allclose(diff, diff[0], atol=1e-10)


# ------------------------------------------------------------------ gradients
def _kernel_stats(X0, X1, W, beta, M):
    """(gW, ga, gbeta) of eq. (10) from the C update kernel (one SGD step, lr=1)."""
    X0, X1 = sp.csr_matrix(np.asarray(X0, float)), sp.csr_matrix(np.asarray(X1, float))
    mp0 = hidden_mean_ref(X0.toarray(), W, beta, M)
    mp1 = hidden_mean_ref(X1.toarray(), W, beta, M)
    i64 = lambda v: np.ascontiguousarray(v, dtype=np.int64)  # noqa: E731
    return _wrappers.cd_gradient(i64(X0.indptr), i64(X0.indices), X0.data, i64(X1.indptr),
                                    i64(X1.indices), X1.data, mp0, mp1, W.shape[0])


def test_cd_statistics_match_reference_and_vanish_at_the_data():
    rng = np.random.default_rng(3)
    W, a, beta, M = random_params(9, 4, rng)
    X0, X1 = rng.poisson(1.5, size=(11, 9)), rng.poisson(1.5, size=(11, 9))
    for got, want in zip(_kernel_stats(X0, X1, W, beta, M), cd_stats_ref(X0, X1, W, beta, M)):
        np.testing.assert_allclose(got, want, atol=1e-12)
    for got in _kernel_stats(X0, X0, W, beta, M):
        assert np.abs(got).max() < 1e-13


def test_exact_gradient_of_a_tiny_model():
    """D = K = 2, M = 1, counts truncated at 9: the data-minus-model statistics of eq. (10)
    equal finite differences of the exact (enumerated) log-likelihood."""
    rng = np.random.default_rng(4)
    W, a, beta, M = random_params(2, 2, rng, M=1)
    a = a - 0.5
    cmax = 9
    X = rng.integers(0, 4, size=(15, 2)).astype(float)
    S = truncated_states(2, cmax)
    logp = log_marginal_ref(S, W, a, beta, M)
    p = np.exp(logp - logp.max())
    p /= p.sum()
    # model expectation of each statistic: weight the per-state kernel statistics by p
    zero = np.zeros((1, 2))
    model = [np.zeros((2, 2)), np.zeros(2), np.zeros(2)]
    for s, ps in zip(S, p):
        for acc, g in zip(model, _kernel_stats(s[None, :], zero, W, beta, M)):
            acc += ps * g
    data = [g for g in _kernel_stats(X, np.zeros_like(X), W, beta, M)]
    grad = [d - mo for d, mo in zip(data, model)]

    def ll(W_, a_, b_):
        return exact_loglik_ref(X, W_, a_, b_, M, cmax)

    eps = 1e-6
    for i in range(2):
        for j in range(2):
            Wp, Wm = W.copy(), W.copy()
            Wp[i, j] += eps
            Wm[i, j] -= eps
            fd = (ll(Wp, a, beta) - ll(Wm, a, beta)) / (2 * eps)
            assert abs(fd - grad[0][i, j]) < 1e-6
        e = np.eye(2)[i] * eps
        assert abs((ll(W, a + e, beta) - ll(W, a - e, beta)) / (2 * eps) - grad[1][i]) < 1e-6
        assert abs((ll(W, a, beta + e) - ll(W, a, beta - e)) / (2 * eps) - grad[2][i]) < 1e-6


# ------------------------------------------------------------------ samplers
def test_poisson_sampler_moments_and_large_rates():
    bg = np.random.PCG64(5)
    for lam in [0.01, 0.7, 3.0, 9.99, 10.0, 47.0, 1e4, np.exp(30.0)]:
        x = _wrappers.poisson(bg, np.full(20000, lam))
        assert (x >= 0).all() and (x == np.floor(x)).all()
        se = np.sqrt(lam / x.size)
        assert abs(x.mean() - lam) < 5 * se, lam
        assert abs(x.var() / lam - 1) < 0.1, lam
    # a Gibbs sweep with enormous log-rates is clipped at exp(30) and finishes quickly
    W = np.full((3, 1), 100.0)
    out = _wrappers.visible(np.ones((2, 1)), W, np.zeros(3),
                               _wrappers.make_gens([np.random.PCG64(0)]), 8, 1)[2]
    assert np.all(np.abs(out / np.exp(30.0) - 1) < 1e-5)


def test_binomial_sampler_moments():
    bg = np.random.PCG64(6)
    for n, p in [(1, 0.3), (3, 0.5), (7, 0.9), (50, 0.02), (1000, 0.5), (4, 0.0), (4, 1.0)]:
        x = _wrappers.binomial(bg, np.full(20000, n, np.int64), np.full(20000, p))
        assert x.min() >= 0 and x.max() <= n
        se = np.sqrt(n * p * (1 - p) / x.size) + 1e-12
        assert abs(x.mean() - n * p) < 5 * se + 1e-12, (n, p)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gibbs_samples_match_conditional_means(dtype):
    """Hidden samples lie in [0, M_j] and average to M sigma(.); visible ones to exp(a + W h)."""
    rng = np.random.default_rng(7)
    W, a, beta, M = random_params(5, 3, rng)
    m = make_model(W, a, beta, M, dtype)
    x = rng.poisson(1.0, size=(1, 5))
    X = np.repeat(x, 4000, axis=0)
    Xs, H = m.sample(X, random_state=0)
    assert (H >= 0).all() and (H <= M).all()
    mean_h = hidden_mean_ref(x, W, beta, M)[0]
    sd = np.sqrt(M * (mean_h / M) * (1 - mean_h / M) / X.shape[0])
    assert np.all(np.abs(H.mean(0) - mean_h) < 5 * sd + 1e-3)
    # visible: condition on the sampled h, compare the mean of x - E[x|h]
    Xs = Xs.toarray().astype(np.float64)
    rate = visible_rate_ref(H.astype(np.float64), W, a)
    z = (Xs - rate).sum(0) / np.sqrt(rate.sum(0))
    assert np.all(np.abs(z) < 5)


def test_sample_is_reproducible_for_any_thread_count():
    rng = np.random.default_rng(8)
    m = make_model(*random_params(6, 3, rng))
    X = rng.poisson(1.0, size=(40, 6))
    out = []
    for nt in THREADS:
        m.num_threads = nt
        Xs, H = m.sample(X, n_steps=3, random_state=11)
        out.append((Xs.toarray(), H))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])


def test_mode_is_a_fixed_point_of_eqs_4_5():
    rng = np.random.default_rng(9)
    W, a, beta, M = random_params(5, 3, rng)
    m = make_model(W, a, beta, M)
    x, h = m.mode(rng.poisson(1.0, size=(6, 5)), n_iter=100)
    np.testing.assert_array_equal(h, np.minimum(M, np.floor((M + 1) * sigmoid(x @ W - beta))))
    np.testing.assert_array_equal(x, np.floor(np.exp(a + h @ W.T)))


# ------------------------------------------------------------------ learning
@pytest.mark.parametrize("method", ["cd", "mean_field"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_same_seed_same_parameters_for_1_and_2_threads(method, dtype, planted):
    X, _ = planted
    fits = [RAP(n_components=6, n_epochs=2, method=method, dtype=dtype, num_threads=nt,
                random_state=3).fit(X) for nt in THREADS]
    for name in ("components_", "intercept_visible_", "intercept_hidden_"):
        np.testing.assert_array_equal(getattr(fits[0], name), getattr(fits[1], name))
        assert getattr(fits[0], name).dtype == dtype
    dense = RAP(n_components=6, n_epochs=2, method=method, dtype=dtype,
                random_state=3).fit(X.toarray())
    np.testing.assert_array_equal(dense.components_, fits[0].components_)


def test_cd_learning_recovers_planted_topics(planted):
    """1-NN (cosine) accuracy on the latent codes far above chance (0.25), and learning
    raises the reconstruction log-likelihood proxy above that of the initial model."""
    X, z = planted
    m = RAP(n_components=10, n_epochs=8, random_state=0).fit(X)
    H = m.transform(X)
    Hn = H / np.linalg.norm(H, axis=1, keepdims=True)
    S = Hn @ Hn.T
    np.fill_diagonal(S, -np.inf)
    assert np.mean(z[S.argmax(1)] == z) > 0.9

    def recon_loglik(model):
        rate = visible_rate_ref(model.expected_hidden(X), model.components_.T, model.intercept_visible_)
        return stats.poisson.logpmf(X.toarray(), rate).sum(1).mean()

    m0 = RAP(n_components=10, n_epochs=1, learning_rate=1e-12, momentum=0.0,
             random_state=0).fit(X)
    assert recon_loglik(m) > recon_loglik(m0) + 5.0


def test_partial_fit_streams_and_continues(planted, tmp_path):
    X, _ = planted
    a = RAP(n_components=5, random_state=1, batch_size=50)
    b = RAP(n_components=5, random_state=1, batch_size=50)
    a.partial_fit(X[:400])
    a.partial_fit(X[400:])
    b.partial_fit(X[:400])
    path = tmp_path / "rap.npz"
    b.save(path)
    c = countgrid.load(path)
    c.partial_fit(X[400:])
    for name in ("components_", "intercept_visible_", "intercept_hidden_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(c, name))
    assert a.n_updates_ == 16 and a.n_iter_ == 2
    np.testing.assert_array_equal(countgrid.load(path).transform(X), b.transform(X))


def test_n_trials_per_unit(planted):
    X, _ = planted
    m = RAP(n_components=3, n_trials=[1, 2, 5], n_epochs=1, random_state=0).fit(X)
    np.testing.assert_array_equal(m.n_trials_, [1, 2, 5])
    assert (m.expected_hidden(X[:5]) <= m.n_trials_).all()


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize("params, err, match", [
    ({"n_components": 0}, ValueError, "n_components"),
    ({"n_components": 2.5}, TypeError, "n_components"),
    ({"n_trials": [1, 2]}, ValueError, "n_trials"),
    ({"n_trials": 0}, ValueError, "n_trials"),
    ({"n_trials": 1.5}, ValueError, "n_trials"),
    ({"learning_rate": -1.0}, ValueError, "learning_rate"),
    ({"momentum": 1.0}, ValueError, "momentum"),
    ({"weight_decay": np.nan}, ValueError, "weight_decay"),
    ({"batch_size": 0}, ValueError, "batch_size"),
    ({"n_epochs": 0}, ValueError, "n_epochs"),
    ({"cd_steps": 0}, ValueError, "cd_steps"),
    # issue 30: 2**40 and 2**31 raised OverflowError (the kernels count steps in a C int)
    ({"cd_steps": 2 ** 40}, ValueError, r"'cd_steps' parameter of RAP must be an int in "
                                        r"\[1, 10000\]; got 1099511627776"),
    ({"cd_steps": 2 ** 31}, ValueError, "cd_steps"),
    ({"cd_steps": 10_001}, ValueError, "cd_steps"),
    ({"method": "pcd"}, ValueError, "method"),
    ({"dtype": np.int32}, ValueError, "dtype"),
    ({"num_threads": 0}, ValueError, "num_threads"),
])
def test_bad_parameters(params, err, match):
    with pytest.raises(err, match=match):
        RAP(**{"n_components": 3, **params}).fit(np.ones((4, 3)))


def test_int_parameters_up_to_their_bounds():
    """Issue 30: the int parameters of RAP either have a bound below what the kernels take
    (cd_steps: MAX_CD_STEPS; n_trials: MAX_TRIALS) or never reach C as a C int (sizes are
    int64 and checked against memory, the epoch count is a Python loop)."""
    from countgrid.rap import MAX_CD_STEPS, MAX_TRIALS

    assert MAX_CD_STEPS == 10_000 and MAX_CD_STEPS < 2 ** 31
    RAP(cd_steps=MAX_CD_STEPS, n_trials=MAX_TRIALS, batch_size=2 ** 62,
        verbose=2 ** 62)._validate_params()
    X = np.random.default_rng(0).poisson(1.0, (6, 4))
    # a batch larger than the data is the whole data; a huge n_components a MemoryError
    m = RAP(n_components=2, batch_size=2 ** 62, n_epochs=1, cd_steps=3, random_state=0).fit(X)
    assert np.isfinite(m.components_).all()
    with pytest.raises(MemoryError, match="n_components"):
        RAP(n_components=2 ** 62, n_epochs=1).fit(X)


def test_bad_input_and_divergence():
    with pytest.raises(ValueError, match="X must be non-negative"):
        RAP(n_components=2).fit(np.array([[1.0, -1.0]]))
    with pytest.raises(ValueError, match="NaN"):
        RAP(n_components=2).fit(np.array([[1.0, np.nan]]))
    with pytest.raises(NotFittedError):
        RAP().transform(np.ones((2, 3)))
    m = RAP(n_components=2, n_epochs=1, random_state=0).fit(np.ones((5, 3)))
    with pytest.raises(ValueError, match="X has 4 features, but RAP is expecting 3 features"):
        m.transform(np.ones((2, 4)))
    rng = np.random.default_rng(0)
    with pytest.raises(FloatingPointError,
                       match=r"(components_|intercept_\w+) contains NaN or infinity in epoch \d"):
        RAP(n_components=4, learning_rate=1e300, n_epochs=3,
            random_state=0).fit(rng.poisson(20.0, size=(50, 10)))


def test_scikit_learn_compatibility(planted):
    sklearn = pytest.importorskip("sklearn")  # noqa: F841
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer

    X, z = planted
    est = RAP(n_components=4, n_epochs=1, random_state=0, dtype=np.float32)
    assert est.get_params()["n_components"] == 4 and "n_components=4" in repr(est)
    est.fit(X)
    c = clone(est)
    assert not hasattr(c, "components_") and c.get_params() == est.get_params()
    np.testing.assert_array_equal(c.fit(X).components_, est.components_)
    codes = make_pipeline(RAP(n_components=4, n_epochs=1, random_state=0), Normalizer())
    assert codes.fit_transform(X).shape == (X.shape[0], 4)
    with pytest.raises(ValueError, match="Invalid parameter"):
        est.set_params(n_hidden=3)
