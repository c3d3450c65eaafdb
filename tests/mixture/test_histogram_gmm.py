"""HistogramGMM: EM for Gaussian mixtures on weighted histograms (plain, symmetric, circular)."""
import numpy as np
import pytest

import countgrid
from countgrid import HistogramGMM

from _expected_warnings import FEW_ITERATIONS

TWO_PI = 2 * np.pi


def _sample_2d(rng, n=20000):
    means = np.array([[-1.5, -1.0], [1.8, 1.2]])
    covs = np.array([[[0.5, 0.2], [0.2, 0.4]], [[0.3, -0.1], [-0.1, 0.6]]])
    z = rng.random(n) < 0.4
    a = rng.multivariate_normal(means[0], covs[0], size=z.sum())
    b = rng.multivariate_normal(means[1], covs[1], size=n - z.sum())
    return np.r_[a, b]


def _histogram(sample, edges):
    W, _, _ = np.histogram2d(sample[:, 0], sample[:, 1], bins=[edges, edges])
    centres = (edges[:-1] + edges[1:]) / 2
    return W, centres


def _circ_dist(a, b, period=TWO_PI):
    d = np.mod(a - b + period / 2, period) - period / 2
    return np.abs(d)


def test_plain_matches_unweighted_gmm_on_the_sample():
    sklearn_mixture = pytest.importorskip("sklearn.mixture")
    rng = np.random.default_rng(0)
    sample = _sample_2d(rng)
    edges = np.linspace(-5, 5, 81)
    h = edges[1] - edges[0]
    W, c = _histogram(sample, edges)
    ours = HistogramGMM(2, random_state=0).fit(W, [c, c])
    ref = sklearn_mixture.GaussianMixture(2, covariance_type="full", tol=1e-8,
                                          random_state=0).fit(sample)
    o, r = np.argsort(ours.means_[:, 0]), np.argsort(ref.means_[:, 0])
    # binning moves every point by at most h/2 per coordinate ...
    np.testing.assert_allclose(ours.means_[o], ref.means_[r], atol=h / 2)
    np.testing.assert_allclose(ours.weights_[o], ref.weights_[r], atol=0.01)
    # ... and adds about h^2/12 to each variance (Sheppard's correction)
    np.testing.assert_allclose(ours.covariances_[o] - h ** 2 / 12 * np.eye(2),
                               ref.covariances_[r], atol=0.02)
    assert ours.converged_


def test_full_bin_center_array_equals_per_axis_lists():
    rng = np.random.default_rng(1)
    W, c = _histogram(_sample_2d(rng, 3000), np.linspace(-5, 5, 31))
    full = np.stack(np.meshgrid(c, c, indexing="ij"), axis=-1)
    a = HistogramGMM(2, n_iter=30, random_state=3).fit(W, [c, c])
    b = HistogramGMM(2, n_iter=30, random_state=3).fit(W, full)
    np.testing.assert_array_equal(a.means_, b.means_)
    np.testing.assert_array_equal(a.covariances_, b.covariances_)


def test_any_dimension_and_density_integrates_to_one():
    rng = np.random.default_rng(2)
    x = np.r_[rng.normal(-2, 0.4, 4000), rng.normal(1.0, 0.7, 6000)]
    edges = np.linspace(-5, 5, 201)
    W, _ = np.histogram(x, edges)
    c = (edges[:-1] + edges[1:]) / 2
    g = HistogramGMM(2, random_state=0).fit(W, [c])
    assert g.means_.shape == (2, 1) and g.covariances_.shape == (2, 1, 1)
    np.testing.assert_allclose(np.sort(g.means_[:, 0]), [-2.0, 1.0], atol=0.05)
    grid = np.linspace(-10, 10, 4001)[:, None]
    assert abs(np.trapezoid(g.pdf(grid), grid[:, 0]) - 1) < 1e-6
    # 3-D histogram
    s = rng.normal(size=(5000, 3))
    e = np.linspace(-4, 4, 17)
    W3, _ = np.histogramdd(s, bins=[e, e, e])
    c3 = (e[:-1] + e[1:]) / 2
    g3 = HistogramGMM(1, random_state=0).fit(W3, [c3, c3, c3])
    np.testing.assert_allclose(g3.covariances_[0], np.eye(3) + (e[1] - e[0]) ** 2 / 12 * np.eye(3),
                               atol=0.1)


@pytest.mark.parametrize("domain", ["euclidean", "symmetric"])
def test_weighted_log_likelihood_never_decreases(domain):
    rng = np.random.default_rng(3)
    c = np.linspace(0, TWO_PI, 40, endpoint=False) + np.pi / 40
    W = rng.gamma(0.5, size=(40, 40)) + 5 * np.exp(-((c[:, None] - 2) ** 2 + (c - 4) ** 2))
    if domain == "symmetric":
        W = W + W.T
    g = HistogramGMM(4, domain=domain, n_iter=60, tol=0, random_state=0).fit(W, [c, c])
    ll = g.log_likelihood_
    assert len(ll) == 61
    assert np.all(np.diff(ll) >= -1e-12 * np.abs(ll[1:])), np.diff(ll).min()
    assert np.isclose(g.score(W, [c, c]), ll[-1])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_circular_log_likelihood_non_decreasing_for_localised_clusters(seed):
    # Algorithm 3 is EM only approximately (the circular mean is not the exact
    # maximiser for N_circ); for clusters narrow against the period it is monotone
    # up to round-off-sized steps.
    rng = np.random.default_rng(10 + seed)
    true = np.array([[0.1, 3.0], [4.0, 6.2], [2.0, 1.0]])
    s = np.r_[rng.normal(true[0], 0.3, (3000, 2)), rng.normal(true[1], 0.25, (2000, 2)),
              rng.normal(true[2], 0.4, (2000, 2))]
    edges = np.linspace(0, TWO_PI, 49)
    W, c = _histogram(np.mod(s, TWO_PI), edges)
    g = HistogramGMM(3, domain="circular", n_iter=40, tol=0, random_state=seed).fit(W, [c, c])
    assert np.diff(g.log_likelihood_).min() >= -1e-6


def test_symmetric_variant_returns_a_symmetric_density():
    rng = np.random.default_rng(4)
    a = rng.multivariate_normal([1.0, 3.0], [[0.3, 0.1], [0.1, 0.2]], size=5000)
    b = rng.multivariate_normal([2.5, 2.5], [[0.2, 0.15], [0.15, 0.3]], size=3000)
    s = np.r_[a, b]
    s = np.r_[s, s[:, ::-1]]                     # symmetric co-occurrence sample
    edges = np.linspace(-1, 5, 61)
    W, c = _histogram(s, edges)
    np.testing.assert_allclose(W, W.T)
    g = HistogramGMM(2, domain="symmetric", random_state=0).fit(W, [c, c])
    pts = rng.uniform(-1, 5, size=(500, 2))
    np.testing.assert_allclose(g.pdf(pts), g.pdf(pts[:, ::-1]), rtol=1e-10)
    f = g.pdf(np.stack(np.meshgrid(c, c, indexing="ij"), axis=-1))
    np.testing.assert_allclose(f, f.T, rtol=1e-10)
    # the components are the generating ones (or their mirrors)
    found = sorted(tuple(np.round(m if m[0] <= m[1] else m[::-1], 1)) for m in g.means_)
    np.testing.assert_allclose(found, [(1.0, 3.0), (2.5, 2.5)], atol=0.1)
    assert abs(g.weights_.sum() - 1) < 1e-12
    # a plain fit of the same histogram does not have the mirror symmetry built in
    p = HistogramGMM(2, random_state=0).fit(W, [c, c])
    assert not np.allclose(p.pdf(pts), p.pdf(pts[:, ::-1]), rtol=1e-3)


def test_circular_recovers_components_straddling_the_wrap_around():
    rng = np.random.default_rng(5)
    true = np.array([[0.1, 3.0], [4.0, 6.2]])       # both straddle 0 == 2 pi on one axis
    s = np.r_[rng.normal(true[0], 0.3, (6000, 2)), rng.normal(true[1], 0.25, (4000, 2))]
    s = np.mod(s, TWO_PI)
    edges = np.linspace(0, TWO_PI, 73)
    W, c = _histogram(s, edges)
    circ = HistogramGMM(2, domain="circular", random_state=0).fit(W, [c, c])
    order = np.argsort(circ.means_[:, 1])
    assert _circ_dist(circ.means_[order], true).max() < 0.05
    np.testing.assert_allclose(np.sort(circ.weights_), [0.4, 0.6], atol=0.02)
    sd = np.sqrt(np.diagonal(circ.covariances_[order], axis1=1, axis2=2))
    np.testing.assert_allclose(sd, [[0.3, 0.3], [0.25, 0.25]], atol=0.03)
    # the plain variant cannot: a component cut in two by the boundary
    plain = HistogramGMM(2, random_state=0).fit(W, [c, c])
    err = [min(_circ_dist(m, t).max() for m in plain.means_) for t in true]
    assert max(err) > 0.5
    assert circ.score(W, [c, c]) > plain.score(W, [c, c])


def test_circular_period_and_mean_range():
    rng = np.random.default_rng(6)
    x = np.mod(rng.normal(179.0, 3.0, 5000), 180.0)   # orientations in degrees, period 180
    edges = np.linspace(0, 180, 91)
    W, _ = np.histogram(x, edges)
    c = (edges[:-1] + edges[1:]) / 2
    g = HistogramGMM(1, domain="circular", period=180.0, random_state=0).fit(W, [c])
    assert 0 <= g.means_[0, 0] < 180
    assert _circ_dist(g.means_[0, 0], 179.0, 180.0) < 0.3
    assert abs(np.sqrt(g.covariances_[0, 0, 0]) - 3.0) < 0.3


def test_covariance_floor_on_a_single_bin():
    W = np.zeros((5, 5))
    W[2, 3] = 1.0
    c = np.arange(5.0)
    g = HistogramGMM(1, reg_covar=1e-3, random_state=0).fit(W, [c, c])
    np.testing.assert_allclose(g.means_[0], [2.0, 3.0])
    np.testing.assert_allclose(np.linalg.eigvalsh(g.covariances_[0]), [1e-3, 1e-3])
    assert np.isfinite(g.log_likelihood_).all()


@FEW_ITERATIONS
def test_save_load_round_trip(tmp_path):
    rng = np.random.default_rng(7)
    W, c = _histogram(_sample_2d(rng, 2000), np.linspace(-5, 5, 21))
    g = HistogramGMM(2, domain="symmetric", n_iter=20, random_state=0).fit(W + W.T, [c, c])
    g.save(tmp_path / "g.npz")
    h = countgrid.load(tmp_path / "g.npz")
    assert type(h) is HistogramGMM and h.get_params() == g.get_params()
    pts = rng.normal(size=(10, 2))
    np.testing.assert_array_equal(h.pdf(pts), g.pdf(pts))


def test_bad_input_names_the_argument():
    c = np.arange(4.0)
    W = np.ones((4, 4))
    with pytest.raises(ValueError, match="weights"):
        HistogramGMM(1).fit(-W, [c, c])
    with pytest.raises(ValueError, match="weights"):
        HistogramGMM(1).fit(np.zeros((4, 4)), [c, c])
    with pytest.raises(TypeError, match="weights"):
        HistogramGMM(1).fit(np.array([["a"]]), [c, c])
    with pytest.raises(ValueError, match="bin_centers"):
        HistogramGMM(1).fit(W, [c, c[:3]])
    with pytest.raises(ValueError, match="bin_centers"):
        HistogramGMM(1).fit(W, np.zeros((4, 4)))
    with pytest.raises(ValueError, match="domain"):
        HistogramGMM(1, domain="torus").fit(W, [c, c])
    with pytest.raises(ValueError, match="n_dims"):
        HistogramGMM(1, domain="symmetric").fit(np.ones(4), [c])
    with pytest.raises(TypeError, match="n_components"):
        HistogramGMM(1.5).fit(W, [c, c])
    with pytest.raises(ValueError, match="period"):
        HistogramGMM(1, domain="circular", period=0.0).fit(W, [c, c])
    with pytest.raises(countgrid.NotFittedError):
        HistogramGMM(1).pdf(np.zeros((1, 2)))
    g = HistogramGMM(1, n_iter=5, random_state=0).fit(W, [c, c])
    with pytest.raises(ValueError, match="points"):
        g.pdf(np.zeros((3, 3)))


def test_convergence_warning_when_n_iter_is_too_small():
    import warnings

    from countgrid.exceptions import ConvergenceWarning

    W, c = _histogram(_sample_2d(np.random.default_rng(0), 5000), np.linspace(-5, 5, 41))
    for domain in ("euclidean", "circular"):
        kw = dict(domain=domain, period=10.0, random_state=0)
        with pytest.warns(ConvergenceWarning, match=r"HistogramGMM did not converge in 2 "
                                                    r"iterations \(last change .*\), tol=1e-07"):
            g = HistogramGMM(2, n_iter=2, **kw).fit(W, [c, c])
        assert not g.converged_ and g.n_iter_ == 2 and len(g.log_likelihood_) == 3
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            g = HistogramGMM(2, **kw).fit(W, [c, c])       # the defaults converge here
            assert g.converged_ and 2 < g.n_iter_ < 200
            g = HistogramGMM(2, n_iter=3, tol=0, **kw).fit(W, [c, c])
            assert not g.converged_ and g.n_iter_ == 3
    Ws = W + W.T                                           # the symmetric domain too
    with pytest.warns(ConvergenceWarning, match="HistogramGMM did not converge in 1 iter"):
        g = HistogramGMM(2, domain="symmetric", n_iter=1, random_state=0).fit(Ws, [c, c])
    assert not g.converged_
