"""Held-out perplexity by document completion (countgrid.metrics.completion_split and
completion_perplexity; docs/topics.md, "Held-out perplexity by document completion"):
the split and the perplexity against the slow references of tests/_reference/completion.py,
pLSA, counting grids and external topic-word models, properties and errors."""
import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.metrics import completion_perplexity, completion_split
from _expected_warnings import FEW_ITERATIONS
from _reference.completion import (fold_in_ref, grid_posterior_ref, heldout_loglik_ref,
                                   rap_predictive_ref,
                                   perplexity_ref, split_ref)


def corpus(seed=0, D=40, W=25, K=3, length=30):
    """Counts drawn from a pLSA: (X, theta, phi) with phi word-major (W x K)."""
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(np.full(W, 0.3), size=K).T
    theta = rng.dirichlet(np.full(K, 0.5), size=D)
    X = np.stack([rng.multinomial(int(rng.integers(1, 2 * length)), theta[d] @ phi.T)
                  for d in range(D)])
    return X, theta, np.ascontiguousarray(phi)


class TopicWord:
    """A duck-typed external topic-word model: fixed components_, transform by a given
    function of the counts."""

    def __init__(self, components, transform):
        self.components_ = components
        self._transform = transform

    def transform(self, X):
        return self._transform(X)


def _dense(M):
    return M.toarray() if sp.issparse(M) else np.asarray(M)


# --------------------------------------------------------------------------- the split
@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize("kind", ["dense-int", "csr-float32", "csc-float64", "list"])
def test_split_matches_reference(seed, kind):
    X, _, _ = corpus(seed=3, D=30, W=12)
    X[4] = 0
    X[5] = 0
    X[5, 3] = 1                       # one token: nothing held out
    X[6] = X[7]                       # duplicate documents
    make = {"dense-int": lambda A: A, "csr-float32": lambda A: sp.csr_matrix(A, dtype=np.float32),
            "csc-float64": lambda A: sp.csc_matrix(A, dtype=np.float64),
            "list": lambda A: A.tolist()}[kind]
    obs, held = completion_split(make(X), random_state=seed)
    obs_ref, held_ref = split_ref(X, seed)
    assert sp.isspmatrix_csr(obs) and sp.isspmatrix_csr(held)
    assert obs.dtype == held.dtype == np.float64
    np.testing.assert_array_equal(held.toarray(), held_ref)
    np.testing.assert_array_equal(obs.toarray(), obs_ref)


def test_split_halves():
    X, _, _ = corpus(seed=2, D=60, W=20)
    X[0] = 0
    X[1] = 0
    X[1, 2] = 1
    X[2] = 0
    X[2, 5] = 2
    obs, held = completion_split(X, random_state=3)
    np.testing.assert_array_equal(obs.toarray() + held.toarray(), X)
    assert (obs.toarray() >= 0).all() and (held.toarray() >= 0).all()
    n = X.sum(axis=1)
    np.testing.assert_array_equal(held.toarray().sum(axis=1), n // 2)
    np.testing.assert_array_equal(obs.toarray().sum(axis=1), n - n // 2)
    assert held[0].nnz == held[1].nnz == 0 and held[2].sum() == 1
    # the explicit zeros of the halves are gone
    assert (obs.data > 0).all() and (held.data > 0).all()


def test_split_same_seed_same_split_and_generator():
    X, _, _ = corpus(seed=4)
    a = completion_split(X, random_state=5)[1].toarray()
    b = completion_split(sp.csr_matrix(X, dtype=np.float32), random_state=5)[1].toarray()
    c = completion_split(X, random_state=np.random.default_rng(5))[1].toarray()
    d = completion_split(X, random_state=6)[1].toarray()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)      # a Generator seeded alike draws alike
    assert not np.array_equal(a, d)


def test_split_permuting_rows_permutes_the_split():
    X, _, _ = corpus(seed=5, D=50)
    X[3] = X[9]
    perm = np.random.default_rng(0).permutation(X.shape[0])
    held = completion_split(X, random_state=2)[1].toarray()
    held_p = completion_split(X[perm], random_state=2)[1].toarray()
    np.testing.assert_array_equal(held_p, held[perm])


def test_split_short_documents_draw_nothing():
    """Empty and one-token documents take no randomness: adding them leaves the split of
    the other documents unchanged."""
    X, _, _ = corpus(seed=6, D=20)
    extra = np.zeros((3, X.shape[1]), dtype=X.dtype)
    extra[1, 4] = 1
    held = completion_split(X, random_state=1)[1].toarray()
    held2 = completion_split(np.vstack([extra[:2], X, extra[2:]]), random_state=1)[1].toarray()
    np.testing.assert_array_equal(held2[2:-1], held)
    assert held2[[0, 1, -1]].sum() == 0


def test_split_is_uniform_over_tokens():
    """Every token is held out with probability floor(n/2)/n: the mean held-out count of a
    word over many seeds is c floor(n/2)/n (within 5 standard errors)."""
    X = np.array([[5, 1, 0, 3, 2], [0, 7, 0, 0, 1], [1, 1, 1, 0, 0]])
    draws = np.stack([completion_split(X, random_state=s)[1].toarray() for s in range(2000)])
    n = X.sum(axis=1, keepdims=True)
    expect = X * (n // 2) / n
    se = draws.std(axis=0) / np.sqrt(draws.shape[0]) + 1e-12
    assert (np.abs(draws.mean(axis=0) - expect) <= 5 * se + 1e-9).all()


# ---------------------------------------------------------------- against the reference
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("nt", [1, 2])
def test_plsa_matches_reference(dtype, sparse, nt):
    X, _, _ = corpus(seed=8, D=35, W=18)
    # a fixed number of folding-in iterations: with a tolerance, rounding can move the
    # stopping iteration, and a vanishing P(z|d) still changes the held-out score
    model = countgrid.PLSA(n_components=3, tempered=False, n_iter=30, tol=0, dtype=dtype,
                           num_threads=nt, random_state=0, fold_in_iter=200,
                           fold_in_tol=0).fit(X)
    Xin = sp.csr_matrix(X) if sparse else X
    got = completion_perplexity(model, Xin, random_state=4)
    obs, held = split_ref(X, 4)
    phi = np.asarray(model.components_, dtype=np.float64).T
    theta = fold_in_ref(obs, phi, model.fold_in_iter, model.fold_in_tol)
    keep = held.sum(axis=1) > 0
    want = perplexity_ref(held[keep], theta[keep], phi)
    np.testing.assert_allclose(got, want, rtol=1e-9 if dtype == np.float64 else 2e-4)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("learn_prior", [False, True], ids=["uniform", "prior"])
@pytest.mark.parametrize("nt", [1, 2])
def test_grid_matches_reference(dtype, sparse, learn_prior, nt):
    X, _, _ = corpus(seed=9, D=40, W=15)
    cg = countgrid.CountingGrid((6, 5), (2, 2), n_iter=8, tol=0, window_schedule=None,
                                learn_prior=learn_prior, dtype=dtype, num_threads=nt,
                                random_state=0).fit(X)
    got = completion_perplexity(cg, sp.csr_matrix(X) if sparse else X, random_state=2)
    obs, held = split_ref(X, 2)
    L, W = 30, X.shape[1]
    h = np.asarray(cg.h_, dtype=np.float64).reshape(L, W).T
    log_prior = np.log(cg.prior_.ravel()) if learn_prior else None
    q = grid_posterior_ref(obs, h, log_prior, cg.posterior_floor_)
    keep = held.sum(axis=1) > 0
    want = perplexity_ref(held[keep], q[keep], h)
    np.testing.assert_allclose(got, want, rtol=1e-9 if dtype == np.float64 else 2e-4)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("nt", [1, 2])
def test_rap_matches_reference(dtype, sparse, nt):
    X, _, _ = corpus(seed=18, D=30, W=12)
    rap = countgrid.RAP(n_components=3, n_epochs=4, dtype=dtype, num_threads=nt,
                        random_state=0).fit(X)
    got = completion_perplexity(rap, sp.csr_matrix(X) if sparse else X, random_state=5)
    obs, held = split_ref(X, 5)
    keep = held.sum(axis=1) > 0
    P = rap_predictive_ref(obs[keep], np.asarray(rap.components_, dtype=np.float64).T,
                           rap.intercept_visible_.astype(np.float64),
                           rap.intercept_hidden_.astype(np.float64),
                           rap.n_trials_.astype(np.float64))
    H = held[keep]
    want = float(np.exp(-(H * np.log(P)).sum() / H.sum()))
    np.testing.assert_allclose(got, want, rtol=1e-9 if dtype == np.float64 else 2e-4)
    assert 1.0 < got < 12.0            # better than the uniform distribution over 12 words


@FEW_ITERATIONS
@pytest.mark.parametrize("nt", [1, 2])
def test_thread_count_does_not_change_bits(nt):
    X, _, _ = corpus(seed=10, D=80, W=30)
    plsa = countgrid.PLSA(n_components=4, tempered=False, n_iter=20, random_state=0,
                          num_threads=1).fit(X)
    cg = countgrid.CountingGrid((5, 5), (2, 2), n_iter=5, window_schedule=None,
                                random_state=0, num_threads=1).fit(X)
    rap = countgrid.RAP(n_components=3, n_epochs=2, random_state=0, num_threads=1).fit(X)
    for model in (plsa, cg, rap):
        one = completion_perplexity(model, X, random_state=0)
        model.set_params(num_threads=nt)
        assert completion_perplexity(model, X, random_state=0) == one
        model.set_params(num_threads=1)


def test_external_model_matches_reference():
    X, _, _ = corpus(seed=11, D=30, W=14)
    rng = np.random.default_rng(0)
    comp = rng.random((4, 14)) * 3            # unnormalised, normalised per row
    weights = rng.random((4,)) + 0.1

    def transform(M):                          # unnormalised document-topic weights
        counts = _dense(M)
        return counts @ comp.T * weights + 1e-3

    model = TopicWord(comp, transform)
    got = completion_perplexity(model, sp.csr_matrix(X), random_state=1)
    obs, held = split_ref(X, 1)
    theta = transform(obs)
    theta = theta / theta.sum(axis=1, keepdims=True)
    phi = (comp / comp.sum(axis=1, keepdims=True)).T
    keep = held.sum(axis=1) > 0
    np.testing.assert_allclose(got, perplexity_ref(held[keep], theta[keep], phi), rtol=1e-10)


def test_sklearn_lda_on_the_same_split():
    lda_mod = pytest.importorskip("sklearn.decomposition")
    X, _, _ = corpus(seed=12, D=50, W=20)
    lda = lda_mod.LatentDirichletAllocation(n_components=3, random_state=0,
                                            learning_method="batch", max_iter=20).fit(X)
    got = completion_perplexity(lda, X, random_state=3)
    obs, held = split_ref(X, 3)
    theta = lda.transform(obs)
    phi = (lda.components_ / lda.components_.sum(axis=1, keepdims=True)).T
    keep = held.sum(axis=1) > 0
    np.testing.assert_allclose(got, perplexity_ref(held[keep], theta[keep], phi), rtol=1e-10)


def test_heldout_loglik_reference_by_hand():
    """The reference itself on the worked example of docs/topics.md (W = 3, Z = 2)."""
    phi = np.array([[0.7, 0.1], [0.2, 0.3], [0.1, 0.6]])
    theta = fold_in_ref(np.array([[3.0, 1.0, 2.0]]), phi)
    np.testing.assert_allclose(theta[0], [0.6149874162, 0.3850125838], atol=1e-9)
    ll = heldout_loglik_ref(np.array([[0.0, 2.0, 1.0]]), theta, phi)
    p = theta[0] @ phi.T
    np.testing.assert_allclose(ll, [2 * np.log(p[1]) + np.log(p[2])])


# ------------------------------------------------------------------------- properties
def _fixed_plsa(phi):
    """A PLSA holding the given P(w|z) (W x K), as if fitted."""
    model = countgrid.PLSA(n_components=phi.shape[1])
    model.components_ = np.ascontiguousarray(phi.T)
    model.n_features_in_ = phi.shape[0]
    return model


@FEW_ITERATIONS
def test_true_model_beats_uniform_and_uniform_is_vocabulary_size():
    X, _, phi = corpus(seed=13, D=200, W=40, K=4, length=60)
    true = completion_perplexity(_fixed_plsa(phi), X)
    uniform = completion_perplexity(_fixed_plsa(np.full((40, 1), 1 / 40)), X)
    assert uniform == pytest.approx(40.0, rel=1e-12)
    assert true < 0.8 * uniform
    # the same for an external model and a grid whose histograms are all uniform
    flat = TopicWord(np.ones((2, 40)), lambda M: np.ones((M.shape[0], 2)))
    assert completion_perplexity(flat, X) == pytest.approx(40.0, rel=1e-12)
    cg = countgrid.CountingGrid((3, 3), (2, 2), n_iter=1, window_schedule=None,
                                dtype=np.float64, random_state=0).fit(X)   # 1/40 exactly
    cg.pi_ = np.full_like(cg.pi_, 1 / 40)
    cg.h_ = np.full_like(cg.h_, 1 / 40)
    assert completion_perplexity(cg, X) == pytest.approx(40.0, rel=1e-12)


def test_fitted_models_beat_uniform_and_score_is_optimistic():
    X, _, _ = corpus(seed=14, D=300, W=40, K=4, length=60)
    Xtr, Xte = X[:200], X[200:]
    plsa = countgrid.PLSA(n_components=4, random_state=0).fit(Xtr)
    cg = countgrid.CountingGrid((6, 6), (3, 3), random_state=0).fit(Xtr)
    for model in (plsa, cg):
        assert completion_perplexity(model, Xte) < 40
    # PLSA.score folds in the tokens it scores: its perplexity looks better
    in_sample = np.exp(-plsa.score(Xte) / Xte.sum())
    assert in_sample < completion_perplexity(plsa, Xte)


@FEW_ITERATIONS
def test_invariant_to_row_order_and_short_documents():
    X, _, _ = corpus(seed=15, D=60, W=20)
    plsa = countgrid.PLSA(n_components=3, random_state=0).fit(X)
    cg = countgrid.CountingGrid((5, 5), (2, 2), n_iter=5, window_schedule=None,
                                random_state=0).fit(X)
    perm = np.random.default_rng(1).permutation(X.shape[0])
    extra = np.zeros((2, X.shape[1]), dtype=X.dtype)
    extra[0, 3] = 1
    for model in (plsa, cg):
        base = completion_perplexity(model, X, random_state=9)
        assert completion_perplexity(model, X[perm], random_state=9) == base
        assert completion_perplexity(model, np.vstack([X, extra]), random_state=9) == base
        assert completion_perplexity(model, X, random_state=9) == base
        assert completion_perplexity(model, X, random_state=10) != base


def test_zero_probability_gives_inf():
    phi = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0]]).T       # word 2 impossible
    X = np.array([[2, 2, 4]] * 3)
    with np.errstate(divide="ignore"):
        assert completion_perplexity(_fixed_plsa(phi), X) == np.inf


# ----------------------------------------------------------------------------- errors
@FEW_ITERATIONS
def test_bad_inputs_name_the_argument():
    X, _, _ = corpus(seed=16, D=20, W=10)
    plsa = countgrid.PLSA(n_components=2, random_state=0, n_iter=5).fit(X)
    with pytest.raises(ValueError, match="X must hold integer counts"):
        completion_perplexity(plsa, X + 0.5)
    with pytest.raises(ValueError, match="X must hold integer counts"):
        completion_split(X * 0.5)
    with pytest.raises(ValueError, match="Negative values.*X"):
        completion_split(-X)
    with pytest.raises(ValueError, match="X contains NaN"):
        completion_split(np.where(X > 0, np.nan, 0.0))
    with pytest.raises(ValueError, match="X has 9 features"):
        completion_perplexity(plsa, X[:, :9])
    with pytest.raises(ValueError, match="10\\*\\*9 tokens"):
        completion_split(np.array([[1e9, 0.0]]))
    with pytest.raises(ValueError, match="no document of 2 tokens"):
        completion_perplexity(plsa, np.eye(10, dtype=int))
    with pytest.raises(ValueError, match="random_state"):
        completion_perplexity(plsa, X, random_state=-1)
    with pytest.raises(TypeError, match="random_state"):
        completion_split(X, random_state="zero")


@FEW_ITERATIONS
def test_bad_models():
    X, _, _ = corpus(seed=17, D=20, W=10)
    with pytest.raises(countgrid.NotFittedError):
        completion_perplexity(countgrid.PLSA(2), X)
    with pytest.raises(countgrid.NotFittedError):
        completion_perplexity(countgrid.CountingGrid((4, 4), (2, 2)), X)
    with pytest.raises(TypeError, match="model must be a PLSA"):
        completion_perplexity(countgrid.ZIPGTM(n_iter=1, random_state=0).fit(X), X)
    with pytest.raises(countgrid.NotFittedError):
        completion_perplexity(countgrid.RAP(n_components=2), X)
    y = np.arange(20) % 2
    clf = countgrid.CountingGridClassifier((4, 4), (2, 2), n_iter=2, window_schedule=None,
                                           random_state=0).fit(X, y)
    with pytest.raises(TypeError, match="grid_"):
        completion_perplexity(clf, X)
    assert np.isfinite(completion_perplexity(clf.grid_, X))
    with pytest.raises(TypeError, match="transform"):
        completion_perplexity(object(), X)
    ok = lambda M: np.ones((M.shape[0], 2))   # noqa: E731
    with pytest.raises(countgrid.NotFittedError, match="components_"):
        completion_perplexity(TopicWord(None, ok), X)
    with pytest.raises(ValueError, match="components_ must have shape"):
        completion_perplexity(TopicWord(np.ones(10), ok), X)
    with pytest.raises(ValueError, match="components_ must have shape"):
        completion_perplexity(TopicWord(np.ones((0, 10)), ok), X)
    with pytest.raises(ValueError, match="X has 10 features"):
        completion_perplexity(TopicWord(np.ones((2, 12)), ok), X)
    with pytest.raises(ValueError, match="components_ must be finite and non-negative"):
        completion_perplexity(TopicWord(-np.ones((2, 10)), ok), X)
    with pytest.raises(ValueError, match="transform returned shape"):
        completion_perplexity(TopicWord(np.ones((2, 10)), lambda M: np.ones((M.shape[0], 3))), X)
    with pytest.raises(ValueError, match="transform must return finite"):
        completion_perplexity(TopicWord(np.ones((2, 10)), lambda M: -np.ones((M.shape[0], 2))), X)
