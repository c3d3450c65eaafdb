"""ZIPGTM(size_factors=True): a Poisson GTM whose document n draws Poisson(s_n lambda_kj),
s_n its total count (issue 28; docs/zip_gtm.md, "Size factors"), against a slow reference
built from scipy.stats.poisson."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp
from scipy.stats import poisson

import countgrid

pytestmark = pytest.mark.filterwarnings("ignore::countgrid.ConvergenceWarning")


def depth_varied(n=60, D=15, seed=0):
    """Two profiles of words, each document at its own depth (5 to 200 counts)."""
    rng = np.random.default_rng(seed)
    profiles = rng.dirichlet(np.full(D, 0.5), size=2)
    depth = rng.integers(5, 200, n)
    which = np.arange(n) % 2
    return np.stack([rng.multinomial(depth[t], profiles[which[t]]) for t in range(n)]), which


def reference(gtm, X):
    """theta and log-likelihoods term by term: log p(t_n | k) = sum_j log Poisson(t_nj;
    s_n lambda_kj), s_n = sum_j t_nj."""
    lam, s = gtm.rates(), X.sum(axis=1).astype(float)
    lj = np.array([[poisson.logpmf(X[t], s[t] * lam[k]).sum() for k in range(len(lam))]
                   for t in range(len(X))]) + np.log(gtm.mixing_)[None, :]
    lse = logsumexp(lj, axis=1)
    return np.exp(lj - lse[:, None]), lse


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("threads", [1, 2])
def test_the_posteriors_are_the_reference(dtype, sparse, threads):
    X, _ = depth_varied()
    Xin = sp.csr_matrix(X.astype(dtype)) if sparse else X.astype(dtype)
    gtm = countgrid.ZIPGTM(grid_shape=(3, 3), n_basis=4, zero_inflation=False,
                           size_factors=True, n_iter=8, random_state=0,
                           num_threads=threads).fit(Xin)
    theta, lse = reference(gtm, X)
    np.testing.assert_allclose(gtm.predict_proba(Xin), theta, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(gtm.score_samples(Xin), lse, rtol=1e-9)
    np.testing.assert_allclose(gtm.log_likelihood_[-1], lse.sum(), rtol=1e-9)
    # generalised EM: the penalised log-likelihood never decreases
    assert np.all(np.diff(gtm.objective_) >= -1e-9 * np.abs(gtm.objective_[1:]))


def test_the_same_bits_on_any_number_of_threads():
    X, _ = depth_varied()
    fits = [countgrid.ZIPGTM(grid_shape=(3, 3), n_basis=4, zero_inflation=False,
                             size_factors=True, n_iter=5, random_state=0,
                             num_threads=t).fit(sp.csr_matrix(X.astype(float)))
            for t in (1, 2)]
    np.testing.assert_array_equal(fits[0].rate_coef_, fits[1].rate_coef_)


def test_depth_does_not_place_a_document():
    """With size factors the map separates the two profiles whatever the depth; the rates
    are per count (each latent point's rates sum to about 1)."""
    X, which = depth_varied(n=120)
    depth = X.sum(axis=1)

    def fit(size_factors):
        gtm = countgrid.ZIPGTM(grid_shape=(4, 4), n_basis=4, zero_inflation=False,
                               size_factors=size_factors, n_iter=40, random_state=0).fit(X)
        pos = gtm.transform(X)
        corr = max(abs(np.corrcoef(depth, pos[:, i])[0, 1]) for i in range(2))
        return gtm, pos, corr

    gtm, pos, corr = fit(True)
    centre = np.array([pos[which == c].mean(axis=0) for c in (0, 1)])
    spread = max(pos[which == c].std(axis=0).max() for c in (0, 1))
    assert np.linalg.norm(centre[0] - centre[1]) > 4 * spread
    assert corr < 0.4                                   # measured 0.14
    assert fit(False)[2] > 0.8                          # the plain Poisson: 0.95, depth
    np.testing.assert_allclose(gtm.rates().sum(axis=1)[gtm.mixing_ > 0.05], 1.0, rtol=0.1)


def test_refused_with_zero_inflation():
    with pytest.raises(ValueError, match="size_factors=True needs zero_inflation=False"):
        countgrid.ZIPGTM(size_factors=True, n_iter=2).fit(np.ones((5, 4)))
