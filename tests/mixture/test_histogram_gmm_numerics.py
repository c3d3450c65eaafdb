"""HistogramGMM at the edges of its range (issue 13): far points (exact responsibilities
and log densities up to the end of the float range), histograms of any weight magnitude,
degenerate histograms, interrupted fits, predict and sample, memory estimates and the
fitted state.  Its answers to hostile points and histograms: tests/hostile."""
import copy
import decimal
from fractions import Fraction

import numpy as np
import pytest

from countgrid import HistogramGMM

from _expected_warnings import FEW_ITERATIONS

TWO_PI = 2 * np.pi


def _model(domain="euclidean"):
    """A fitted-looking 2-D model: two components with the same covariance, one wider."""
    g = HistogramGMM(3, domain=domain)
    g.means_ = np.array([[-1.0, 0.0], [1.0, 0.0], [0.0, 3.0]])
    g.covariances_ = np.array([np.eye(2), np.eye(2), [[2.0, 0.3], [0.3, 1.0]]])
    g.weights_ = np.array([0.3, 0.5, 0.2])
    g.log_likelihood_, g.n_iter_, g.converged_, g.n_dims_ = np.zeros(1), 0, True, 2
    return g


def _exact_proba(g, x):
    """Responsibilities with the quadratic forms in exact rational arithmetic."""
    logs = []
    for m, S, w in zip(g.means_, g.covariances_, g.weights_):
        S = [[Fraction(v) for v in row] for row in S]
        det = S[0][0] * S[1][1] - S[0][1] * S[1][0]
        P = [[S[1][1] / det, -S[0][1] / det], [-S[1][0] / det, S[0][0] / det]]
        d = [Fraction(x[i]) - Fraction(m[i]) for i in range(2)]
        Q = sum(d[i] * P[i][j] * d[j] for i in range(2) for j in range(2))
        logs.append((-Q / 2, np.log(w) - 0.5 * np.log(float(det))))
    best = max(range(3), key=lambda k: logs[k][0] + Fraction(logs[k][1]))
    out = []
    for q, c in logs:
        dq = q - logs[best][0]
        out.append(0.0 if dq < -10 ** 4 else np.exp(float(dq) + c - logs[best][1]))
    out = np.array(out)
    return out / out.sum()


FAR = [(0.5, 1e10), (0.5, 1e100), (0.5, 1e200), (-0.3, -1e250), (1e300, 1e300),
       (-1e308, 5.0), (1e6, -3e6), (3.0, -2.0), (0.0, 0.0), (0.1, 1e-300)]


def test_far_points_get_the_exact_responsibilities():
    """predict_proba was NaN at 1e200 and decided by rounding noise from about 1e8 on
    (here (0.5, 1e10) gave the weight ratio 0.375 instead of 0.18)."""
    g = _model()
    P = g.predict_proba(np.array(FAR))
    assert np.isfinite(P).all()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-14)
    for x, p in zip(FAR, P):
        np.testing.assert_allclose(p, _exact_proba(g, x), rtol=1e-9, atol=1e-300,
                                   err_msg=str(x))
    np.testing.assert_allclose(P[0], np.array([0.3 / np.e, 0.5, 0.0]) / (0.3 / np.e + 0.5),
                               rtol=1e-12)
    np.testing.assert_array_equal(g.predict(np.array(FAR)), P.argmax(axis=1))


def test_far_points_log_density():
    g = _model()
    s = g.score_samples(np.array([[0.5, 1e10], [0.5, 1e200], [1e308, -1e308], [0.0, 0.0]]))
    assert not np.isnan(s).any()
    # log f = -Q/2 + const: finite at 1e10, underflowing (-inf) only beyond the float range
    np.testing.assert_allclose(s[0], -0.5 * 1e20, rtol=1e-12)
    assert s[1] == -np.inf and s[2] == -np.inf and np.isfinite(s[3])
    np.testing.assert_array_equal(g.pdf(np.array([[0.5, 1e200]])), [0.0])


def test_far_points_in_the_symmetric_and_circular_domains():
    sym = _model("symmetric")
    P = sym.predict_proba(np.array(FAR))
    assert np.isfinite(P).all()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-14)
    np.testing.assert_allclose(sym.predict_proba(np.array(FAR)[:, ::-1]), P, rtol=1e-9,
                               atol=1e-12)
    circ = _model("circular")
    circ.means_ = np.mod(circ.means_, TWO_PI)
    pts = np.array([[1e200, 3.0], [-1e300, 1e15], [7.5, -2.0]])
    wrapped = np.remainder(pts, TWO_PI)            # exact
    np.testing.assert_allclose(circ.predict_proba(pts), circ.predict_proba(wrapped),
                               rtol=1e-12)
    np.testing.assert_allclose(circ.score_samples(pts), circ.score_samples(wrapped),
                               rtol=1e-12)


def _set_model(domain, means, covs, weights):
    g = HistogramGMM(len(weights), domain=domain)
    g.means_, g.covariances_ = np.array(means, float), np.array(covs, float)
    g.weights_ = np.array(weights, float)
    g.log_likelihood_, g.n_iter_, g.converged_, g.n_dims_ = np.zeros(1), 0, True, 2
    g._check_fitted_state()
    return g


def _exact_log_density(g, x):
    """log f(x) with the quadratic forms in exact rational arithmetic and the rest in
    60-digit decimals (euclidean domain, 2-D)."""
    ctx = decimal.Context(prec=60, Emax=10 ** 9, Emin=-10 ** 9)
    logs = []
    for m, S, w in zip(g.means_, g.covariances_, g.weights_):
        if w == 0:
            continue
        S = [[Fraction(v) for v in row] for row in S]
        det = S[0][0] * S[1][1] - S[0][1] * S[1][0]
        P = [[S[1][1] / det, -S[0][1] / det], [-S[1][0] / det, S[0][0] / det]]
        d = [Fraction(x[i]) - Fraction(m[i]) for i in range(2)]
        Q = sum(d[i] * P[i][j] * d[j] for i in range(2) for j in range(2))
        Qd = ctx.divide(decimal.Decimal(Q.numerator), decimal.Decimal(Q.denominator))
        c = ctx.ln(decimal.Decimal(float(w))) - ctx.ln(decimal.Decimal(float(det))) / 2 \
            - ctx.ln(2 * decimal.Decimal(np.pi))
        logs.append(ctx.subtract(c, Qd / 2))
    top = max(logs)
    total = sum(ctx.exp(v - top) for v in logs)
    return ctx.add(top, ctx.ln(total))


def test_points_at_1e200_with_a_component_of_weight_zero():
    """Issue 30: predict_proba and score_samples were NaN at (0.5, 1e200): every log-joint
    is below the float range, the expansion started from component 0, of weight 0, and
    its constant log 0 gave inf - inf.  Now a valid distribution (one-hot on the nearest
    component of positive weight), and log densities -inf (below the float range)."""
    g = _set_model("euclidean", [[-1.0, 0.0], [1.0, 0.0], [0.0, 3.0]],
                   [np.eye(2), np.eye(2), [[2.0, 0.3], [0.3, 1.0]]], [0.0, 0.5, 0.5])
    pts = np.array([[0.5, 1e200], [1e200, 1e200], [-1e200, 0.5], [-1e200, -1e200],
                    [0.5, -1e200], [1e308, -1e308], [0.0, 0.0], [2.0, 1.0]])
    P, S = g.predict_proba(pts), g.score_samples(pts)
    assert not np.isnan(P).any() and not np.isnan(S).any()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-15)
    assert (P[:, 0] == 0).all()
    # y -> inf: component 1 (variance 1 in y) beats component 2 (1.047 in its precision)
    np.testing.assert_array_equal(P[0], [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(P[4], [0.0, 1.0, 0.0])
    # x -> inf: component 2's precision in x is 0.52 < 1
    np.testing.assert_array_equal(P[2], [0.0, 0.0, 1.0])
    assert (S[:6] == -np.inf).all()
    for x, got in zip(pts[6:], S[6:]):
        assert got == pytest.approx(float(_exact_log_density(g, x)), rel=1e-13)
    # along (1, 1): u^T P u is 2 for component 1 and 2.4/1.91 = 1.26 for component 2
    np.testing.assert_array_equal(g.predict(pts[:3]), [1, 2, 2])


@pytest.mark.parametrize("scale", [1e200, 1e300, 1e308, -1e200])
def test_points_on_the_mirror_plane_far_away(scale):
    """Issue 30: in the symmetric domain a component and its mirror image are equally far
    from a point on the mirror plane; beyond the float range the rounding of their
    quadratic forms (times 2^(2e)) made each beat the other: NaN at (1e308, 1e308).  Now
    the two share the point, and predict_proba sums the halves."""
    g = _set_model("symmetric", [[1.6, -1.8], [1.1, 2.6], [-1.4, -1.8]],
                   [[[0.763, -0.071], [-0.071, 0.969]], [[1.265, 0.330], [0.330, 0.459]],
                    [[0.527, 0.223], [0.223, 0.187]]], [0.485, 0.280, 0.235])
    pts = np.array([[scale, scale], [scale, -scale], [scale, scale / 3], [0.0, 0.0]])
    P, S = g.predict_proba(pts), g.score_samples(pts)
    assert not np.isnan(P).any() and not np.isnan(S).any()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-15)
    assert (P[:3] == 0.0).sum() == 6          # one-hot: far beyond the float range
    assert (S[:3] == -np.inf).all() and np.isfinite(S[3])
    np.testing.assert_array_equal(g.predict_proba(pts[:, ::-1]), P)


def test_log_density_just_inside_the_float_range():
    """score_samples is the log density (to rounding) wherever it is representable: at
    |x| = 1.6e154 the squared distance (2.6e308) overflows, -Q/2 (-1.3e308) does not."""
    g = _model()
    pts = np.array([[0.5, 1.6e154], [1.6e154, 0.5], [-1.1e154, 1.1e154], [0.5, 1e10]])
    S = g.score_samples(pts)
    assert np.isfinite(S).all()
    for x, got in zip(pts, S):
        assert got == pytest.approx(float(_exact_log_density(g, x)), rel=1e-13)


def test_far_and_near_points_in_one_call():
    """Each point is evaluated on its own: near points compute exactly as alone."""
    g = _model()
    near = np.array([[0.0, 0.0], [2.0, 1.0], [-1.5, 2.5]])
    far = np.array([[0.5, 1e200], [-1e200, 3.0], [1e308, 1e308], [0.5, 1e10]])
    mixed = np.vstack([near[:1], far[:2], near[1:], far[2:]])
    order = [0, 3, 4, 1, 2, 5, 6]
    both = np.vstack([near, far])
    np.testing.assert_array_equal(g.predict_proba(mixed), g.predict_proba(both)[order])
    np.testing.assert_array_equal(g.score_samples(mixed), g.score_samples(both)[order])
    np.testing.assert_array_equal(g.predict_proba(near), g.predict_proba(both)[:3])
    np.testing.assert_array_equal(g.score_samples(far[:1]), [-np.inf])


def test_float32_points_far_away():
    """float32 points (up to 3.4e38) compute as the same values in float64."""
    g = _model()
    pts = np.array([[0.5, 3e38], [-3e38, 3e38], [1.0, 2.0], [1e20, -1e19]], dtype=np.float32)
    P, S = g.predict_proba(pts), g.score_samples(pts)
    np.testing.assert_array_equal(P, g.predict_proba(pts.astype(np.float64)))
    np.testing.assert_array_equal(S, g.score_samples(pts.astype(np.float64)))
    assert np.isfinite(P).all() and np.isfinite(S).all()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-15)


def _histogram(seed=0):
    rng = np.random.default_rng(seed)
    s = np.r_[rng.normal(-1.5, 0.5, (800, 2)), rng.normal(1.5, 0.6, (1200, 2))]
    edges = np.linspace(-4, 4, 25)
    W, _, _ = np.histogram2d(s[:, 0], s[:, 1], bins=[edges, edges])
    return W, (edges[:-1] + edges[1:]) / 2


@pytest.mark.parametrize("scale", [2.0 ** 1000, 2.0 ** -1060, 1e300])
def test_weights_of_any_magnitude(scale):
    """Weights of 1e305 overflowed the total ("NaN or infinity"); the fit depends only on
    the normalised histogram."""
    W, c = _histogram()
    ref = HistogramGMM(2, n_iter=30, random_state=0).fit(W, [c, c])
    got = HistogramGMM(2, n_iter=30, random_state=0).fit(W * scale, [c, c])
    if scale in (2.0 ** 1000, 2.0 ** -1060):   # exact scalings: the same fit bit for bit
        np.testing.assert_array_equal(got.means_, ref.means_)
        np.testing.assert_array_equal(got.covariances_, ref.covariances_)
    else:
        np.testing.assert_allclose(got.means_, ref.means_, rtol=1e-9)
    assert got.score(W * scale, [c, c]) == pytest.approx(ref.score(W, [c, c]), rel=1e-12)


def test_degenerate_histograms():
    # one bin, more components than bins, one axis
    g = HistogramGMM(2, random_state=0).fit(np.ones(1), [np.zeros(1)])
    np.testing.assert_allclose(g.means_, 0.0)
    assert np.isfinite(g.log_likelihood_).all() and np.isfinite(g.covariances_).all()
    W = np.zeros((5, 5))
    W[1, 1] = W[3, 4] = 2.0
    g = HistogramGMM(4, random_state=0).fit(W, [np.arange(5.0), np.arange(5.0)])
    assert np.isfinite(g.means_).all() and abs(g.weights_.sum() - 1) < 1e-12
    assert np.isfinite(g.predict_proba(np.array([[0.0, 0.0], [1e50, 3.0]]))).all()
    # bins far from the rest carry tiny weight: the fit stays finite and monotone
    c = np.r_[np.linspace(-2, 2, 20), [1e6]]
    w = np.r_[np.exp(-np.linspace(-2, 2, 20) ** 2), [1e-6]]
    g = HistogramGMM(2, n_iter=50, tol=0, random_state=0).fit(w, [c])
    assert np.isfinite(g.log_likelihood_).all()
    assert np.diff(g.log_likelihood_).min() >= -1e-12 * np.abs(g.log_likelihood_).max()


@FEW_ITERATIONS
def test_wide_bins_with_a_larger_reg_covar():
    W, c = _histogram()
    g = HistogramGMM(2, reg_covar=1e100, n_iter=5, random_state=0).fit(W, [c * 1e120, c])
    assert np.isfinite(g.covariances_).all() and np.isfinite(g.log_likelihood_).all()


def test_interrupted_fit_keeps_the_last_complete_iteration(monkeypatch):
    W, c = _histogram()
    ref = HistogramGMM(2, n_iter=3, tol=0, random_state=0).fit(W, [c, c])
    calls = {"n": 0}
    mstep = HistogramGMM._mstep

    def interrupted(self, *args):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return mstep(self, *args)

    monkeypatch.setattr(HistogramGMM, "_mstep", interrupted)
    g = HistogramGMM(2, n_iter=10, tol=0, random_state=0)
    with pytest.raises(KeyboardInterrupt) as info:
        g.fit(W, [c, c])
    assert "iteration 3 of 10" in str(info.value.__notes__)
    assert g.n_iter_ == 3 and not g.converged_
    np.testing.assert_array_equal(g.means_, ref.means_)
    np.testing.assert_array_equal(g.covariances_, ref.covariances_)
    np.testing.assert_array_equal(g.log_likelihood_, ref.log_likelihood_)
    assert g.predict_proba(np.zeros((1, 2))).shape == (1, 2)
    # interrupted before the first iteration completed: unfitted
    calls["n"] = 3
    h = HistogramGMM(2, n_iter=10, random_state=0)
    with pytest.raises(KeyboardInterrupt):
        h.fit(W, [c, c])
    assert not hasattr(h, "means_")


@FEW_ITERATIONS
@pytest.mark.parametrize("domain", ["euclidean", "symmetric", "circular"])
def test_sample_and_predict(domain):
    W, c = _histogram(1)
    if domain == "circular":
        c = np.mod(c, TWO_PI)
    if domain == "symmetric":
        W = W + W.T
    g = HistogramGMM(2, domain=domain, n_iter=20, random_state=0).fit(W, [c, c])
    X, labels = g.sample(4000, random_state=1)
    assert X.shape == (4000, 2) and labels.shape == (4000,)
    assert np.isfinite(X).all() and set(np.unique(labels)) <= {0, 1}
    np.testing.assert_allclose(np.bincount(labels, minlength=2) / 4000, g.weights_, atol=0.03)
    if domain == "circular":
        assert X.min() >= 0 and X.max() < TWO_PI
    elif domain == "euclidean":
        for k in range(2):
            np.testing.assert_allclose(X[labels == k].mean(axis=0), g.means_[k], atol=0.1)
    else:   # a sample and its mirror image are equally likely
        np.testing.assert_allclose(X.mean(axis=0), X[:, ::-1].mean(axis=0), atol=0.1)
    np.testing.assert_array_equal(g.sample(5, random_state=3)[0], g.sample(5, random_state=3)[0])
    np.testing.assert_array_equal(g.predict(X[:50]), g.predict_proba(X[:50]).argmax(axis=1))
    with pytest.raises(ValueError, match="n_samples"):
        g.sample(0)
    with pytest.raises(TypeError, match="n_samples"):
        g.sample(2.5)


def test_memory_estimate_before_evaluating_many_points(monkeypatch):
    g = _model()
    monkeypatch.setenv("COUNTGRID_MAX_MEMORY", "64K")
    with pytest.raises(MemoryError, match="points.*fewer points"):
        g.predict_proba(np.zeros((10000, 2)))
    with pytest.raises(MemoryError, match="samples"):
        g.sample(100000)
    monkeypatch.delenv("COUNTGRID_MAX_MEMORY")
    W, c = _histogram()
    with pytest.raises(MemoryError, match="components"):
        HistogramGMM(10 ** 12, random_state=0).fit(W, [c, c])


def test_fitted_state_is_checked_on_load(tmp_path):
    from countgrid import io

    g = _model()
    path = tmp_path / "g.npz"
    io.save(g, path)
    assert np.array_equal(io.load(path).means_, g.means_)
    for attr, value, match in [("weights_", g.weights_ * 2, "weights_ must sum to 1"),
                               ("means_", g.means_[:1], "means_ has shape"),
                               ("covariances_", -g.covariances_, "positive definite"),
                               ("covariances_", g.covariances_ * np.nan, "NaN")]:
        bad = copy.deepcopy(g)
        setattr(bad, attr, value)
        with pytest.raises(ValueError, match=match):
            bad._check_fitted_state()
