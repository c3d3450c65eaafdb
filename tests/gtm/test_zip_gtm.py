"""ZIPGTM: zero-inflated Poisson GTM (likelihood, IRLS M-step, monotone EM, planted maps)."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from scipy.special import gammaln, logsumexp

import countgrid
from countgrid import ZIPGTM
from countgrid.text import select_by_resolving_power
from countgrid.gtm import irls_poisson, log_px_given_latent, logistic_glm_fun, zip_terms
from countgrid.gtm._glm import newton_columns

from _expected_warnings import FEW_ITERATIONS


def _zip_logpmf_scipy(t, lam, p):
    """log( p [t = 0] + (1 - p) Poisson(t; lam) ) from scipy.stats."""
    pois = stats.poisson.logpmf(t, lam)
    if t == 0:
        return np.log(p + (1 - p) * np.exp(pois))
    return np.log1p(-p) + pois


def _small_counts(rng, n=40, d=25, density=0.3):
    lam = rng.gamma(1.0, 1.5, size=(n, d))
    X = rng.poisson(lam) * (rng.random((n, d)) < density)
    X[:, 0] += 1                                       # no empty documents
    return X.astype(np.float64)


def test_zip_cell_log_likelihood_matches_scipy_stats():
    rng = np.random.default_rng(0)
    eta = rng.normal(0, 1.5, size=(6, 7))
    zeta = rng.normal(0, 2.0, size=(6, 7))
    log_p0, delta, log_p = zip_terms(eta, zeta)
    lam, p = np.exp(eta), 1 / (1 + np.exp(-zeta))
    np.testing.assert_allclose(np.exp(log_p), p, rtol=1e-12)
    for k in range(6):
        for j in range(7):
            for t in (0, 1, 2, 5, 17):
                ours = log_p0[k, j] + (t > 0) * (delta[k, j] + t * eta[k, j] - gammaln(t + 1))
                ref = _zip_logpmf_scipy(t, lam[k, j], p[k, j])
                assert ours == pytest.approx(ref, rel=1e-10, abs=1e-10)
    # zeta=None is the plain Poisson model
    log_p0, delta, log_p = zip_terms(eta, None)
    assert log_p is None
    for t in (0, 3):
        ours = log_p0 + (t > 0) * (delta + t * eta - gammaln(t + 1))
        np.testing.assert_allclose(ours, stats.poisson.logpmf(t, lam), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_document_log_likelihood_against_dense_scipy_loop(dtype, fmt):
    rng = np.random.default_rng(1)
    X = _small_counts(rng, n=12, d=9).astype(dtype)
    eta = rng.normal(0, 1, size=(5, 9))
    zeta = rng.normal(-1, 1, size=(5, 9))
    lam, p = np.exp(eta), 1 / (1 + np.exp(-zeta))
    ref = np.array([[sum(_zip_logpmf_scipy(int(X[n, j]), lam[k, j], p[k, j]) for j in range(9))
                     for k in range(5)] for n in range(12)])
    Xi = sp.csr_matrix(X) if fmt == "csr" else X
    nz = (sp.csr_matrix(X) > 0).astype(dtype) if fmt == "csr" else (X > 0).astype(dtype)
    log_fact = gammaln(X.astype(np.float64) + 1).sum(axis=1)
    log_p0, delta, _ = zip_terms(eta, zeta)
    ours = log_px_given_latent(Xi, nz, log_fact, eta, log_p0, delta)
    np.testing.assert_allclose(ours, ref, rtol=1e-9)


@FEW_ITERATIONS
def test_score_samples_is_the_mixture_of_cell_likelihoods():
    rng = np.random.default_rng(2)
    X = _small_counts(rng)
    g = ZIPGTM(grid_shape=(4, 5), n_basis=4, n_iter=3, random_state=0).fit(X)
    lam, p = g.rates(), g.zero_probabilities()
    per_k = np.array([[sum(_zip_logpmf_scipy(int(X[n, j]), lam[k, j], p[k, j])
                           for j in range(X.shape[1])) for k in range(20)] for n in range(5)])
    ref = logsumexp(per_k + np.log(g.mixing_), axis=1)
    np.testing.assert_allclose(g.score_samples(X[:5]), ref, rtol=1e-9)
    theta = g.predict_proba(X[:5])
    np.testing.assert_allclose(theta, np.exp(per_k + np.log(g.mixing_) - ref[:, None]),
                               rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(g.transform(X[:5]), theta @ g.latent_)


def test_irls_matches_an_independent_weighted_poisson_glm():
    lm = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(3)
    K, M, D = 40, 5, 3
    Phi = np.c_[rng.normal(size=(K, M - 1)), np.ones(K)]
    S = rng.uniform(0.5, 5.0, size=(K, D))
    true = rng.normal(0, 0.4, size=(M, D))
    R = rng.poisson(S * np.exp(Phi @ true)).astype(np.float64)
    ours = irls_poisson(Phi, R, S, alpha=0.0, n_steps=50)
    for j in range(D):
        glm = lm.PoissonRegressor(alpha=0.0, fit_intercept=False, solver="newton-cholesky",
                                  tol=1e-12, max_iter=1000)
        glm.fit(Phi, R[:, j] / S[:, j], sample_weight=S[:, j])
        np.testing.assert_allclose(ours[:, j], glm.coef_, rtol=1e-6, atol=1e-8)


def test_irls_with_ridge_matches_scipy_optimize():
    from scipy.optimize import minimize

    rng = np.random.default_rng(4)
    K, M = 30, 4
    Phi = np.c_[rng.normal(size=(K, M - 1)), np.ones(K)]
    S = rng.uniform(0.1, 3.0, size=(K, 1))
    R = rng.poisson(2.0 * S).astype(np.float64)
    alpha = 0.7
    ours = irls_poisson(Phi, R, S, alpha=alpha, n_steps=50)[:, 0]

    def negq(w):
        eta = Phi @ w
        return -(R[:, 0] @ eta - S[:, 0] @ np.exp(eta)) + 0.5 * alpha * w @ w

    def grad(w):
        eta = Phi @ w
        return -Phi.T @ (R[:, 0] - S[:, 0] * np.exp(eta)) + alpha * w

    ref = minimize(negq, np.zeros(M), jac=grad, method="BFGS", options={"gtol": 1e-11}).x
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-8)


def test_zero_part_newton_matches_an_independent_weighted_logistic_regression():
    lm = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(5)
    K, M = 50, 4
    Phi = np.c_[rng.normal(size=(K, M - 1)), np.ones(K)]
    Ntot = rng.uniform(1, 10, size=(K, 1))
    A = Ntot * rng.uniform(0.05, 0.95, size=(K, 1))
    PhiPhi = (Phi[:, :, None] * Phi[:, None, :]).reshape(K, -1)
    ours = newton_columns(Phi, PhiPhi, np.zeros((M, 1)), logistic_glm_fun(A, Ntot), 0.0, 50)
    Xrep = np.r_[Phi, Phi]
    yrep = np.r_[np.ones(K), np.zeros(K)]
    w = np.r_[A[:, 0], Ntot[:, 0] - A[:, 0]]
    ref = lm.LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-12, max_iter=10000,
                                solver="newton-cg").fit(Xrep, yrep, sample_weight=w)
    np.testing.assert_allclose(ours[:, 0], ref.coef_[0], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("zero_inflation", [True, False])
@pytest.mark.parametrize("basis,latent,alpha", [("sinh", "grid", 1e-2), ("rbf", "grid", 0.0),
                                                ("sinh", "random", 0.0)])
def test_em_never_decreases_the_objective(zero_inflation, basis, latent, alpha):
    rng = np.random.default_rng(6)
    X = sp.csr_matrix(_small_counts(rng, n=50, d=30))
    g = ZIPGTM(grid_shape=(5, 6), n_basis=9, basis=basis, latent=latent, alpha=alpha,
               zero_inflation=zero_inflation, n_iter=15, tol=0, n_irls=1,
               random_state=0).fit(X)
    obj = g.objective_
    assert len(obj) == 16 and g.n_iter_ == 15
    assert np.all(np.diff(obj) >= -1e-9 * np.abs(obj[1:])), np.diff(obj).min()
    if alpha == 0:
        np.testing.assert_array_equal(obj, g.log_likelihood_)
    assert obj[-1] > obj[0]
    np.testing.assert_allclose(g.score_samples(X).sum(), g.log_likelihood_[-1], rtol=1e-10)


def _planted(rng, n=300, d=60, zero_p=0.3):
    u = rng.uniform(0, 1, size=(n, 2))
    centres = rng.uniform(0, 1, size=(d, 2))
    lam = 0.05 + 4.0 * np.exp(-((u[:, None, :] - centres[None]) ** 2).sum(-1) / (2 * 0.18 ** 2))
    X = rng.poisson(lam) * (rng.random((n, d)) >= zero_p)
    return sp.csr_matrix(X.astype(np.float64)), u


@FEW_ITERATIONS
@pytest.mark.parametrize("zero_inflation", [True, False])
def test_recovers_a_planted_two_dimensional_structure(zero_inflation):
    from scipy.spatial.distance import pdist

    rng = np.random.default_rng(7)
    X, u = _planted(rng)
    g = ZIPGTM(grid_shape=(10, 10), n_basis=9, basis="rbf", n_iter=30,
               zero_inflation=zero_inflation, random_state=0).fit(X)
    Z = g.transform(X)
    rho = stats.spearmanr(pdist(Z), pdist(u)).statistic
    assert rho > 0.8, rho
    # neighbourhoods: most of each document's 10 nearest planted neighbours stay close
    from scipy.spatial import cKDTree

    nn_true = cKDTree(u).query(u, 11)[1][:, 1:]
    nn_map = cKDTree(Z).query(Z, 11)[1][:, 1:]
    overlap = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(nn_true, nn_map)])
    assert overlap > 0.3, overlap
    if zero_inflation:
        # the planted structural zeros (30 % of all cells) are found where the rate is
        # high enough to tell them from Poisson zeros
        p, lam = g.zero_probabilities(), g.rates()
        assert 0.25 < np.median(p[lam > 1]) < 0.35


def test_sparse_dense_float32_and_threads_agree():
    rng = np.random.default_rng(8)
    X = _small_counts(rng, n=30, d=20)
    kw = dict(grid_shape=(4, 4), n_basis=4, n_iter=5, tol=0, random_state=0)
    a = ZIPGTM(num_threads=1, **kw).fit(sp.csr_matrix(X))
    b = ZIPGTM(num_threads=2, **kw).fit(X)
    c = ZIPGTM(num_threads=1, **kw).fit(sp.csc_matrix(X.astype(np.float32)))
    np.testing.assert_allclose(a.log_likelihood_, b.log_likelihood_, rtol=1e-10)
    np.testing.assert_allclose(a.transform(X), b.transform(X), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(a.log_likelihood_, c.log_likelihood_, rtol=1e-6)


@FEW_ITERATIONS
def test_save_load_round_trip(tmp_path):
    rng = np.random.default_rng(9)
    X = _small_counts(rng, n=30, d=20)
    for zi in (True, False):
        g = ZIPGTM(grid_shape=(4, 4), n_basis=4, n_iter=3, zero_inflation=zi,
                   random_state=0).fit(X)
        g.save(tmp_path / "g.npz")
        h = countgrid.load(tmp_path / "g.npz")
        assert type(h) is ZIPGTM and h.get_params() == g.get_params()
        np.testing.assert_array_equal(h.transform(X), g.transform(X))
        np.testing.assert_array_equal(h.score_samples(X), g.score_samples(X))


@FEW_ITERATIONS
def test_plot_colours_documents_by_label():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(10)
    X = _small_counts(rng, n=30, d=20)
    g = ZIPGTM(grid_shape=(4, 4), n_basis=4, n_iter=2, random_state=0).fit(X)
    ax = g.plot(X, y=np.repeat([0, 1, 2], 10), label_names=["a", "b", "c"])
    assert len(ax.collections) == 3
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b", "c"]
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="y"):
        g.plot(X, y=[0, 1])


@FEW_ITERATIONS
def test_bad_input_names_the_argument():
    X = np.ones((5, 4))
    with pytest.raises(ValueError, match="X"):
        ZIPGTM(grid_shape=(2, 2), n_basis=4).fit(-X)
    with pytest.raises(ValueError, match="grid_shape"):
        ZIPGTM(grid_shape=(2, 2, 2)).fit(X)
    with pytest.raises(ValueError, match="n_basis"):
        ZIPGTM(n_basis=10).fit(X)
    with pytest.raises(ValueError, match="basis"):
        ZIPGTM(basis="tanh").fit(X)
    with pytest.raises(ValueError, match="latent"):
        ZIPGTM(latent="hex").fit(X)
    with pytest.raises(TypeError, match="zero_inflation"):
        ZIPGTM(zero_inflation="yes").fit(X)
    with pytest.raises(ValueError, match="alpha"):
        ZIPGTM(alpha=-1.0).fit(X)
    with pytest.raises(countgrid.NotFittedError):
        ZIPGTM().transform(X)
    g = ZIPGTM(grid_shape=(2, 2), n_basis=4, n_iter=1, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        g.transform(np.ones((2, 3)))


# ------------------------------------------------------------------ text helper
@pytest.mark.parametrize("fmt", ["dense", "csr", "csc"])
def test_select_by_resolving_power_matches_brute_force(fmt):
    rng = np.random.default_rng(11)
    X = rng.poisson(0.3, size=(50, 40)) * (rng.random((50, 40)) < rng.random(40))
    Xi = {"dense": X, "csr": sp.csr_matrix(X), "csc": sp.csc_matrix(X)}[fmt]
    df = (X > 0).sum(axis=0)
    cf = X.sum(axis=0)
    np.testing.assert_array_equal(select_by_resolving_power(Xi, 3, 20),
                                  np.flatnonzero((df >= 3) & (df <= 20)))
    np.testing.assert_array_equal(select_by_resolving_power(Xi, 0.1, 0.5),
                                  np.flatnonzero((df >= 5) & (df <= 25)))
    np.testing.assert_array_equal(select_by_resolving_power(Xi, 2, 30, by="count"),
                                  np.flatnonzero((cf >= 2) & (cf <= 30)))
    with pytest.raises(ValueError, match="low"):
        select_by_resolving_power(Xi, 30, 3)
    with pytest.raises(ValueError, match="high"):
        select_by_resolving_power(Xi, 1, 1.5)
    with pytest.raises(ValueError, match="by"):
        select_by_resolving_power(Xi, 1, 3, by="idf")
    with pytest.raises(ValueError, match="X"):
        select_by_resolving_power(-X, 1, 3)


def test_convergence_warning_when_n_iter_is_too_small():
    import warnings

    from countgrid.exceptions import ConvergenceWarning

    X = _small_counts(np.random.default_rng(1))
    kw = dict(grid_shape=(3, 4), n_basis=4, random_state=0)
    with pytest.warns(ConvergenceWarning, match=r"ZIPGTM did not converge in 2 iterations "
                                                r"\(last relative change .*\), tol=1e-05"):
        g = ZIPGTM(n_iter=2, **kw).fit(X)
    assert not g.converged_ and g.n_iter_ == 2 and len(g.objective_) == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        g = ZIPGTM(n_iter=500, **kw).fit(X)               # the default tol is met
        assert g.converged_ and 2 < g.n_iter_ < 500
        g = ZIPGTM(n_iter=3, tol=0, **kw).fit(X)           # tol=0: every iteration, silent
        assert not g.converged_ and g.n_iter_ == 3
