"""pLSA: kernels against a dense NumPy reference, the worked example of docs/topics.md,
EM monotonicity, folding-in, BIC, tempering, determinism and errors."""
import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.topics import PLSA, select_n_components_bic
from countgrid.topics import _wrappers as PK
from _expected_warnings import FEW_ITERATIONS
from _reference.plsa import docs_ref, posterior_ref, words_ref


def random_model(rng, D, W, K, dtype=np.float64):
    theta = rng.dirichlet(np.ones(K), size=D).astype(dtype)
    phi = rng.dirichlet(np.ones(W) * 0.5, size=K).T.copy().astype(dtype)
    return np.ascontiguousarray(theta), np.ascontiguousarray(phi / phi.sum(axis=0))


def random_counts(rng, D, W, density=0.3, itype=np.int32, dtype=np.float64):
    C = sp.random(D, W, density=density, random_state=int(rng.integers(1 << 30)), format="csr",
                  data_rvs=lambda n: rng.integers(1, 5, n)).astype(dtype)
    C.indices = C.indices.astype(itype)
    C.indptr = C.indptr.astype(itype)
    return C


# ----------------------------------------------------------------- kernels
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("itype", [np.int32, np.int64], ids=["i32", "i64"])
@pytest.mark.parametrize("beta", [1.0, 0.6])
@pytest.mark.parametrize("nt", [1, 2])
def test_kernels_match_reference(dtype, itype, beta, nt):
    rng = np.random.default_rng(1)
    D, W, K = 23, 17, 11  # K not a multiple of the 8 summation lanes
    C = random_counts(rng, D, W, itype=itype, dtype=dtype)
    C = C.tolil()
    C[4] = 0  # an empty document keeps its theta
    C = C.tocsr()
    C.eliminate_zeros()
    C.indices, C.indptr = C.indices.astype(itype), C.indptr.astype(itype)
    theta, phi = random_model(rng, D, W, K, dtype)
    phib = np.ascontiguousarray(phi ** beta, dtype=dtype)
    rtol = 1e-10 if dtype == np.float64 else 1e-4
    csc = C.tocsc()
    csc.sort_indices()
    acc = np.empty_like(phi)
    PK.plsa_words(csc.indptr.astype(itype), csc.indices.astype(itype), csc.data, theta, phib,
                  acc, nt)
    np.testing.assert_allclose(acc, words_ref(C.toarray(), theta.astype(np.float64),
                                              phi.astype(np.float64), beta), rtol=rtol, atol=1e-12)
    th = theta.copy()
    ll = np.empty(D)
    PK.plsa_docs(C.indptr, C.indices, C.data, phi, phib, th, 1, 0.0, ll, nt)
    new_ref, ll_ref = docs_ref(C.toarray(), theta.astype(np.float64), phi.astype(np.float64), beta)
    np.testing.assert_allclose(th, new_ref, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(ll, ll_ref, rtol=rtol)
    assert np.array_equal(th[4], theta[4]) and ll[4] == 0.0


def test_kernels_thread_count_does_not_change_bits():
    rng = np.random.default_rng(2)
    C = random_counts(rng, 300, 80, density=0.2)
    theta, phi = random_model(rng, 300, 80, 13)
    outs = []
    for nt in (1, 2):
        th = theta.copy()
        ll = np.empty(300)
        PK.plsa_docs(C.indptr, C.indices, C.data, phi, phi, th, 5, 0.0, ll, nt)
        csc = C.tocsc()
        acc = np.empty_like(phi)
        PK.plsa_words(csc.indptr, csc.indices, csc.data, theta, phi, acc, nt)
        outs.append((th, ll, acc))
    for a, b in zip(*outs):
        assert np.array_equal(a, b)


def test_kernel_rejects_out_of_range_indices():
    C = sp.csr_matrix(np.array([[1.0, 2.0]]))
    theta, phi = np.full((1, 2), 0.5), np.full((2, 2), 0.5)
    bad = C.indices.copy()
    bad[1] = 7
    with pytest.raises(ValueError, match="out of range"):
        PK.plsa_docs(C.indptr, bad, C.data, phi, phi, theta, 1, 0.0, np.empty(1), 1)


# ------------------------------------------ docs/topics.md, "Worked example"
COMP = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]])


def fixed_model(**kw):
    m = PLSA(n_components=2, **kw)
    m.components_ = COMP.copy()
    m.n_features_in_ = 3
    return m


def test_worked_example_folding_in():
    X = np.array([[3, 1, 2], [1, 2, 2]])
    m = fixed_model()
    theta = m.transform(X)
    np.testing.assert_allclose(theta[0], [0.6149874162, 0.3850125838], atol=1e-9)
    np.testing.assert_allclose(theta[1], [0.2013431900, 0.7986568100], atol=1e-9)
    assert m.score_samples(X)[0] == pytest.approx(-6.1634247240, abs=1e-9)
    np.testing.assert_allclose(fixed_model(fold_in_iter=1).transform(X)[0],
                               [0.551786, 0.448214], atol=1e-6)
    # posteriors at the fixed point
    R = posterior_ref(X, theta, COMP.T)
    np.testing.assert_allclose(R[0], [[0.917906, 0.082094], [0.515710, 0.484290],
                                      [0.210248, 0.789752]], atol=1e-6)


def test_worked_example_tempered_posterior():
    # beta = 0.5, uniform P(z|d): acc[w, z] / n(d, w) = P_beta(z | d, w)
    X = sp.csc_matrix(np.array([[3.0, 1.0, 2.0]]))
    phi = np.ascontiguousarray(COMP.T)
    acc = np.empty_like(phi)
    PK.plsa_words(X.indptr, X.indices, X.data, np.full((1, 2), 0.5),
                  np.ascontiguousarray(phi ** 0.5), acc, 1)
    np.testing.assert_allclose(acc / np.array([3.0, 1.0, 2.0])[:, None],
                               [[0.725708, 0.274292], [0.449490, 0.550510],
                                [0.289898, 0.710102]], atol=1e-6)


# ----------------------------------------------------------------- estimator
def planted_corpus(seed=0, D=400, W=60, K=3, length=120):
    rng = np.random.default_rng(seed)
    phi = np.full((K, W), 0.02 / W)
    for k in range(K):
        phi[k, k * (W // K):(k + 1) * (W // K)] = 1.0
    phi /= phi.sum(axis=1, keepdims=True)
    theta = rng.dirichlet(np.full(K, 0.3), size=D)
    X = np.stack([rng.multinomial(length, t @ phi) for t in theta])
    return sp.csr_matrix(X.astype(np.float64)), theta, phi


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_em_never_decreases_the_likelihood(dtype):
    X, _, _ = planted_corpus()
    m = PLSA(n_components=4, smoothing=0.0, tempered=False, n_iter=40, tol=0.0, dtype=dtype,
             random_state=0).fit(X)
    ll = m.log_likelihood_
    assert len(ll) == 40 and m.n_iter_ == 40
    slack = 1e-10 if dtype == np.float64 else 1e-5
    assert np.all(np.diff(ll) >= -slack * np.abs(ll[1:]))
    assert ll[-1] > ll[0]
    np.testing.assert_allclose(m.components_.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(m.doc_topic_.sum(axis=1), 1.0, rtol=1e-5)


@FEW_ITERATIONS
def test_recovers_planted_topics_and_folding_in_reproduces_training_mixtures():
    X, theta_true, phi_true = planted_corpus()
    # maximum-likelihood EM (the 0.2 defaults): folding-in reproduces its P(z|d)
    m = PLSA(n_components=3, n_iter=500, tol=1e-12, fold_in_iter=2000, fold_in_tol=1e-13,
             tempered=False, smoothing=1e-10, random_state=1).fit(X)
    # each learned topic matches one planted topic
    overlap = m.components_ @ phi_true.T
    assert sorted(np.argmax(overlap, axis=1).tolist()) == [0, 1, 2]
    np.testing.assert_allclose(m.transform(X), m.doc_topic_, atol=2e-3)
    assert m.score(X) >= m.log_likelihood_[-1] - 1e-6 * abs(m.log_likelihood_[-1])


@FEW_ITERATIONS
@pytest.mark.parametrize("tempered", [False, "auto"])
def test_same_seed_same_model_for_any_thread_count(tempered):
    X, _, _ = planted_corpus(D=150)
    a = PLSA(n_components=4, n_iter=10, tempered=tempered, random_state=3,
             num_threads=1).fit(X)
    b = PLSA(n_components=4, n_iter=10, tempered=tempered, random_state=3,
             num_threads=2).fit(X)
    assert np.array_equal(a.components_, b.components_)
    assert np.array_equal(a.doc_topic_, b.doc_topic_)


@FEW_ITERATIONS
def test_bic_counts_parameters_and_selects_the_planted_number_of_topics():
    X, _, _ = planted_corpus(D=300)
    # the BIC of maximum-likelihood fits (the 0.2 defaults)
    ml = dict(tempered=False, smoothing=1e-10)
    m = PLSA(n_components=3, random_state=0, n_iter=200, **ml).fit(X)
    D, W = X.shape
    assert m.n_parameters(D) == 3 * (W - 1) + D * (3 - 1)
    expected = -2 * m.score(X) + m.n_parameters(D) * np.log(X.sum())
    assert m.bic(X) == pytest.approx(expected, rel=1e-12)
    assert m.bic(X, n_obs="documents") == pytest.approx(
        -2 * m.score(X) + m.n_parameters(D) * np.log(D), rel=1e-12)
    best, table = select_n_components_bic(X, [1, 2, 3, 6], random_state=0, n_iter=200, **ml)
    assert best.n_components == 3 and min(table, key=table.get) == 3


@FEW_ITERATIONS
def test_tempered_em_selects_a_beta_and_generalises():
    X, _, _ = planted_corpus(D=250, length=40)
    t = PLSA(n_components=8, tempered=True, random_state=0, n_iter=100).fit(X)
    assert 0.5 * 0.9 <= t.beta_ <= 1.0
    assert np.isfinite(t.log_likelihood_).all()
    Xtest, _, _ = planted_corpus(seed=5, D=100, length=40)
    assert np.isfinite(t.score(Xtest))


@FEW_ITERATIONS
def test_defaults_of_issue_22():
    """Tempered EM where it is possible and smoothing 0.03 (docs/results.md, "Held-out
    document completion"); "auto" is tempered batch EM on an in-memory X, bit for bit."""
    params = PLSA().get_params()
    assert params["tempered"] == "auto" and params["smoothing"] == 0.03
    X, _, _ = planted_corpus(D=120, length=40)
    auto = PLSA(n_components=4, n_iter=30, random_state=0).fit(X)
    explicit = PLSA(n_components=4, n_iter=30, tempered=True, random_state=0).fit(X)
    assert np.array_equal(auto.components_, explicit.components_)
    assert auto.beta_ == explicit.beta_ <= 1.0
    # online EM and partial_fit cannot temper: "auto" is plain EM there, without an error
    online = PLSA(n_components=4, n_iter=3, learning_method="online", random_state=0).fit(X)
    plain = PLSA(n_components=4, n_iter=3, learning_method="online", tempered=False,
                 random_state=0).fit(X)
    assert np.array_equal(online.components_, plain.components_) and online.beta_ == 1.0
    assert PLSA(n_components=4, random_state=0).partial_fit(X).beta_ == 1.0
    with pytest.raises(ValueError, match="tempered"):
        PLSA(tempered="yes").fit(X)


def test_tempered_em_with_counts_beyond_the_binomial_sampler():
    """Counts of 2**62 tokens or more are thinned by their expected share, not sampled."""
    X = np.array([[2.0**63, 3.0, 0.0], [1.0, 2.0**62 + 2**12, 5.0], [4.0, 1.0, 2.0]])
    m = PLSA(n_components=2, n_iter=5, tempered=True, random_state=0).fit(X)
    assert np.isfinite(m.components_).all() and 0 < m.beta_ <= 1


@FEW_ITERATIONS
def test_empty_documents_and_save_load(tmp_path):
    X, _, _ = planted_corpus(D=60)
    X = sp.vstack([X, sp.csr_matrix((1, X.shape[1]))]).tocsr()
    m = PLSA(n_components=3, random_state=0, n_iter=20).fit(X)
    np.testing.assert_allclose(m.transform(X)[-1], 1 / 3)
    assert m.score_samples(X)[-1] == 0.0
    m.save(tmp_path / "p.npz")
    m2 = countgrid.load(tmp_path / "p.npz")
    # an array-valued parameter round-trips bit for bit
    init = np.random.default_rng(0).random((3, X.shape[1])).astype(np.float32)
    m3 = PLSA(n_components=3, init=init, n_iter=2).fit(X)
    m3.save(tmp_path / "p3.npz")
    got = countgrid.load(tmp_path / "p3.npz").init
    assert got.dtype == init.dtype and np.array_equal(got, init)
    for name in PLSA._fitted_arrays:
        assert np.array_equal(getattr(m, name), getattr(m2, name))
    assert m2.get_params() == m.get_params()
    assert np.array_equal(m2.transform(X), m.transform(X))


@FEW_ITERATIONS
def test_dense_and_sparse_input_agree():
    X, _, _ = planted_corpus(D=80)
    a = PLSA(n_components=3, random_state=0, n_iter=15).fit(X)
    b = PLSA(n_components=3, random_state=0, n_iter=15).fit(X.toarray())
    np.testing.assert_allclose(a.components_, b.components_, rtol=1e-12)


@pytest.mark.parametrize("params,match", [
    ({"n_components": 0}, "n_components"),
    ({"n_iter": 0}, "n_iter"),
    ({"tol": -1.0}, "tol"),
    ({"beta_min": 0.0}, "beta_min"),
    ({"beta_step": 1.0}, "beta_step"),
    ({"holdout": 1.5}, "holdout"),
    ({"smoothing": -1.0}, "smoothing"),
    ({"dtype": np.int32}, "dtype"),
    ({"init": "nndsvd"}, "init"),
    ({"init": np.ones((2, 3))}, "init"),
])
def test_bad_parameters(params, match):
    X = np.ones((5, 4))
    with pytest.raises(ValueError, match=match):
        PLSA(**{"n_components": 2, **params}).fit(X)


def test_bad_input():
    with pytest.raises(ValueError, match="non-negative"):
        PLSA(n_components=2).fit(np.array([[1.0, -1.0]]))
    with pytest.raises(ValueError, match="no counts"):
        PLSA(n_components=2).fit(np.zeros((3, 2)))
    m = PLSA(n_components=2, random_state=0, n_iter=3).fit(np.ones((4, 3)))
    with pytest.raises(ValueError, match="features"):
        m.transform(np.ones((2, 5)))
    with pytest.raises(countgrid.NotFittedError):
        PLSA(n_components=2).transform(np.ones((2, 3)))
    with pytest.raises(ValueError, match="n_obs"):
        m.bic(np.ones((4, 3)), n_obs="words")


def test_sklearn_compatibility():
    pytest.importorskip("sklearn")
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline
    from sklearn.linear_model import LogisticRegression

    X, theta, _ = planted_corpus(D=120)
    y = np.argmax(theta, axis=1)
    m = PLSA(n_components=3, random_state=0, n_iter=50)
    assert clone(m).get_params() == m.get_params()
    pipe = make_pipeline(PLSA(n_components=3, random_state=0, n_iter=50),
                         LogisticRegression(max_iter=500)).fit(X, y)
    assert pipe.score(X, y) > 0.8


@FEW_ITERATIONS
def test_bic_needs_observations_and_n_parameters_an_int():
    X = np.random.default_rng(0).poisson(1.0, size=(20, 8))
    model = countgrid.PLSA(2, n_iter=3, random_state=0).fit(X)
    assert model.n_parameters(20) == 2 * 7 + 20 * 1
    with pytest.raises(ValueError, match="no tokens"):
        model.bic(np.zeros((3, 8)))
    for bad, err in ((-1, ValueError), (2.0, TypeError), (True, TypeError)):
        with pytest.raises(err, match="n_samples"):
            model.n_parameters(bad)
    # issue 30: an AttributeError (components_) before fit
    with pytest.raises(countgrid.NotFittedError, match="PLSA instance is not fitted"):
        countgrid.PLSA(2).n_parameters(20)
