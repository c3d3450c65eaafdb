"""ZIPGTM(distribution="negative_binomial"): a GTM whose counts are negative binomial with a
dispersion learned per feature, zero-inflated or not (issue 28; docs/zip_gtm.md, "Negative
binomial"), against slow references built from scipy.stats.nbinom and scipy.optimize."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp
from scipy.stats import nbinom

import countgrid
from countgrid.gtm import _glm

pytestmark = pytest.mark.filterwarnings("ignore::countgrid.ConvergenceWarning")


def two_groups(n=120, D=20, r=1.5, seed=0):
    """Two groups of documents, each feature's mean drawn per group, NB(r) counts."""
    rng = np.random.default_rng(seed)
    which = rng.integers(0, 2, n)
    means = rng.gamma(1.0, 2.0, size=(2, D))
    mu = means[which]
    return rng.negative_binomial(r, r / (r + mu)), which


def reference(gtm, X):
    """theta and log-likelihoods term by term from scipy.stats.nbinom (n = r, p = r/(r+mu)),
    mixed with the structural zero where the model has one."""
    lam, r, p0 = gtm.rates(), gtm.dispersion_, gtm.zero_probabilities()
    lj = np.empty((len(X), len(lam)))
    for k in range(len(lam)):
        nb = nbinom.pmf(X, r[None, :], (r / (r + lam[k]))[None, :])
        lj[:, k] = np.log(np.where(X == 0, p0[k] + (1 - p0[k]) * nb, (1 - p0[k]) * nb)).sum(1)
    lj += np.log(gtm.mixing_)[None, :]
    lse = logsumexp(lj, axis=1)
    return np.exp(lj - lse[:, None]), lse


@pytest.mark.parametrize("zero_inflation", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("threads", [1, 2])
def test_the_posteriors_are_the_reference(zero_inflation, dtype, sparse, threads):
    X, _ = two_groups()
    Xin = sp.csr_matrix(X.astype(dtype)) if sparse else X.astype(dtype)
    gtm = countgrid.ZIPGTM(grid_shape=(3, 3), n_basis=4, zero_inflation=zero_inflation,
                           distribution="negative_binomial", n_iter=10, random_state=0,
                           num_threads=threads).fit(Xin)
    theta, lse = reference(gtm, X)
    np.testing.assert_allclose(gtm.predict_proba(Xin), theta, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(gtm.score_samples(Xin), lse, rtol=1e-9)
    np.testing.assert_allclose(gtm.log_likelihood_[-1], lse.sum(), rtol=1e-9)
    # generalised EM: the penalised log-likelihood never decreases
    assert np.all(np.diff(gtm.objective_) >= -1e-9 * np.abs(gtm.objective_[1:]))
    assert gtm.dispersion_.shape == (X.shape[1],)
    assert hasattr(gtm, "zero_coef_") == zero_inflation


@pytest.mark.parametrize("zero_inflation", [False, True])
def test_the_same_bits_on_any_number_of_threads(zero_inflation):
    X, _ = two_groups()
    fits = [countgrid.ZIPGTM(grid_shape=(3, 3), n_basis=4, zero_inflation=zero_inflation,
                             distribution="negative_binomial", n_iter=5, random_state=0,
                             num_threads=t).fit(sp.csr_matrix(X.astype(float)))
            for t in (1, 2)]
    np.testing.assert_array_equal(fits[0].rate_coef_, fits[1].rate_coef_)
    np.testing.assert_array_equal(fits[0].dispersion_, fits[1].dispersion_)


def test_one_latent_point_is_the_maximum_likelihood_negative_binomial():
    """With a single latent point and no penalty the model is one NB per feature: its mean
    and dispersion are each feature's maximum-likelihood estimates (found here by
    scipy.optimize on the profile likelihood, the mean being the sample mean)."""
    rng = np.random.default_rng(1)
    n, r_true = 3000, np.array([0.3, 1.0, 3.0, 20.0])
    mu = np.array([2.0, 5.0, 1.0, 8.0])
    X = rng.negative_binomial(r_true, r_true / (r_true + mu), size=(n, 4))
    gtm = countgrid.ZIPGTM(grid_shape=(1, 1), n_basis=1, zero_inflation=False,
                           distribution="negative_binomial", alpha=0.0, n_iter=200, tol=0,
                           random_state=0).fit(X)
    np.testing.assert_allclose(gtm.rates()[0], X.mean(axis=0), rtol=1e-6)
    for j in range(4):
        m = X[:, j].mean()
        best = minimize_scalar(lambda lr: -nbinom.logpmf(X[:, j], np.exp(lr),
                                                         np.exp(lr) / (np.exp(lr) + m)).sum(),
                               bounds=(-6, 10), method="bounded",
                               options={"xatol": 1e-10})
        np.testing.assert_allclose(np.log(gtm.dispersion_[j]), best.x, atol=1e-4)
    # and near the truth (3,000 draws: measured 0.30, 1.01, 2.40, 18.6)
    np.testing.assert_allclose(gtm.dispersion_, r_true, rtol=0.3)


def test_poisson_counts_reach_the_upper_bound():
    """Poisson counts: a feature whose sample is no more variable than a Poisson gets the
    upper bound (an NB that is a Poisson), the others a large dispersion (their samples'
    chance overdispersion), and the log-likelihood is at least the Poisson model's (the NB
    nests it; 1e-4 per count for the bound's lambda^2/2r)."""
    rng = np.random.default_rng(2)
    X = rng.poisson(3.0, size=(2000, 3))
    kw = dict(grid_shape=(1, 1), n_basis=1, zero_inflation=False, alpha=0.0, n_iter=100,
              random_state=0)
    nb = countgrid.ZIPGTM(distribution="negative_binomial", **kw).fit(X)
    po = countgrid.ZIPGTM(**kw).fit(X)
    under = X.var(axis=0) <= X.mean(axis=0)
    assert under.any() and (~under).any()                 # seed 2: both cases
    np.testing.assert_allclose(nb.dispersion_[under], _glm.MAX_DISPERSION, rtol=1e-12)
    assert nb.dispersion_.min() > 10                      # measured 35
    assert nb.log_likelihood_[-1] >= po.log_likelihood_[-1] - 1e-4 * X.sum()


@pytest.mark.parametrize("zero_inflation", [False, True])
def test_overdispersed_counts_fit_better_than_the_poisson(zero_inflation):
    X, which = two_groups(n=300, r=0.8)
    kw = dict(grid_shape=(4, 4), n_basis=4, zero_inflation=zero_inflation, n_iter=60,
              random_state=0)
    nb = countgrid.ZIPGTM(distribution="negative_binomial", **kw).fit(X[:200])
    po = countgrid.ZIPGTM(**kw).fit(X[:200])
    # held out, per count
    assert nb.score(X[200:]) > po.score(X[200:]) + 0.1 * X[200:].sum(axis=1).mean()
    # the two groups apart on the map
    pos = nb.transform(X)
    centre = np.array([pos[which == c].mean(axis=0) for c in (0, 1)])
    assert np.linalg.norm(centre[0] - centre[1]) > 0.5


def test_the_glm_derivatives_are_the_objectives():
    """nb_glm_fun's and update_dispersion's derivatives against central differences."""
    rng = np.random.default_rng(3)
    K, D = 6, 5
    R, S = rng.gamma(2.0, 2.0, (K, D)), rng.gamma(2.0, 3.0, (K, D))
    eta, log_r = rng.normal(0, 1, (K, D)), rng.normal(0, 1, D)
    fun = _glm.nb_glm_fun(R, S, log_r)
    f, d1, curv = fun(eta)
    h = 1e-5
    e = np.zeros_like(eta)
    e[2, 3] = h
    fd1 = (fun(eta + e)[0] - fun(eta - e)[0]) / (2 * h)
    np.testing.assert_allclose(fd1[3], d1[2, 3], rtol=1e-6)
    fd2 = (fun(eta + e)[1] - fun(eta - e)[1]) / (2 * h)
    np.testing.assert_allclose(-fd2[2, 3], curv[2, 3], rtol=1e-6)
    # nb_glm_fun's objective is the expected complete-data log-likelihood up to a constant
    # in eta: its differences are those of sum_k R log(lam/(r+lam)) + S r log(r/(r+lam))
    def full(eta):
        r, lam = np.exp(log_r)[None, :], np.exp(eta)
        return (R * np.log(lam / (r + lam)) + S * r * np.log(r / (r + lam))).sum(axis=0)
    eta2 = eta + rng.normal(0, 0.3, eta.shape)
    np.testing.assert_allclose(fun(eta2)[0] - fun(eta)[0], full(eta2) - full(eta), rtol=1e-9)


def test_a_dispersion_step_never_lowers_its_objective():
    rng = np.random.default_rng(4)
    n, D, K = 400, 6, 3
    X = rng.negative_binomial(0.7, 0.2, size=(n, D)).astype(float)
    rows, cols = np.nonzero(X)
    theta = rng.dirichlet(np.ones(K), size=n)
    R, S = theta.T @ X, np.broadcast_to(theta.sum(axis=0)[:, None], (K, D))
    eta = np.log(R / S + 1e-3)
    lr = np.full(D, 3.0)

    def objective(lr):
        r, lam = np.exp(lr), np.exp(eta)
        # the complete-data log-likelihood's terms in r, from scipy's pmf
        return np.array([(theta * np.stack([nbinom.logpmf(X[:, j], r[j],
                                                          r[j] / (r[j] + lam[k, j]))
                                            for k in range(K)], axis=1)).sum()
                         for j in range(D)])

    values = [objective(lr)]
    for _ in range(4):
        lr = _glm.update_dispersion(lr, R, S, eta, (cols, X[rows, cols]), 1)
        values.append(objective(lr))
    values = np.array(values)
    assert np.all(np.diff(values, axis=0) >= -1e-9 * np.abs(values[1:]))
    assert np.all(values[-1] > values[0])
    assert np.all((lr >= np.log(_glm.MIN_DISPERSION)) & (lr <= np.log(_glm.MAX_DISPERSION)))


def test_round_trip_and_an_older_model_without_dispersion(tmp_path):
    X, _ = two_groups()
    gtm = countgrid.ZIPGTM(grid_shape=(3, 3), n_basis=4, zero_inflation=False,
                           distribution="negative_binomial", n_iter=5, random_state=0).fit(X)
    gtm.save(tmp_path / "nb.npz")
    back = countgrid.load(tmp_path / "nb.npz")
    np.testing.assert_array_equal(back.dispersion_, gtm.dispersion_)
    np.testing.assert_array_equal(back.score_samples(X), gtm.score_samples(X))
    assert back.get_params()["distribution"] == "negative_binomial"
    # a corrupt dispersion is refused on load, naming it
    bad = countgrid.load(tmp_path / "nb.npz")
    bad.dispersion_ = -bad.dispersion_
    bad.save(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="dispersion_"):
        countgrid.load(tmp_path / "bad.npz")


@pytest.mark.parametrize("params, match", [
    (dict(distribution="nb"), "distribution"),
    (dict(distribution="negative_binomial", zero_inflation=False, size_factors=True),
     "size_factors=True needs distribution='poisson'"),
])
def test_refusals(params, match):
    X, _ = two_groups(n=20)
    with pytest.raises(ValueError, match=match):
        countgrid.ZIPGTM(grid_shape=(2, 2), n_basis=4, n_iter=2, **params).fit(X)
