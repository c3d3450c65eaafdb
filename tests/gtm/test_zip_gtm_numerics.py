"""ZIPGTM's numerical behaviour at the edges (issue 13): degenerate grids and bases, the
count range (docs/zip_gtm.md, "Input range"), degenerate data, fits that do not depend on
the blocking of the kernel calls or on the threads, the fitted state, memory estimates and
interrupts (checkpoints, blocked kernel calls).  The kernels' own checks of what they are
handed: test_gtm_kernels.py; the answers to hostile arguments: tests/hostile."""
import itertools
import os
import signal
import threading
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import gammaln

from countgrid import ZIPGTM
from countgrid.exceptions import ConvergenceWarning
from countgrid.gtm import MAX_COUNT, _wrappers
from countgrid.gtm._glm import zip_terms
from _interrupt import sigint_latency, steady_time

pytestmark = pytest.mark.filterwarnings("ignore::countgrid.exceptions.ConvergenceWarning")

FITTED = ("latent_", "basis_centers_", "phi_", "rate_coef_", "zero_coef_", "mixing_",
          "log_likelihood_", "objective_", "n_iter_", "converged_", "n_features_in_")


def counts(n=40, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.poisson(rng.gamma(1.0, 1.5, size=(n, d))) * (rng.random((n, d)) < 0.4)
    X[:, 0] += 1
    return X.astype(np.float64)


def assert_valid(g, X):
    g._check_fitted_state()
    T, P, S = g.transform(X), g.predict_proba(X), g.score_samples(X)
    assert np.isfinite(T).all() and np.isfinite(P).all() and np.isfinite(S).all()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    assert np.isfinite(g.rates()).all() and np.isfinite(g.zero_probabilities()).all()
    obj = g.objective_
    assert np.isfinite(obj).all()
    assert np.all(np.diff(obj) >= -1e-9 * np.abs(obj[1:])), np.diff(obj).min()


def assert_same_fit(a, b):
    for name in FITTED:
        assert hasattr(a, name) == hasattr(b, name), name
        if hasattr(a, name):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


# ------------------------------------------------------------------ degenerate grids
@pytest.mark.parametrize("zero_inflation", [True, False])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_one_point_grid_is_a_single_zip_model(zero_inflation, fmt):
    """grid_shape=(1, 1): one latent point at the origin; every document is assigned to it
    and its score is the ZIP log-likelihood of the fitted rates (was all NaN)."""
    X = counts()
    Xi = sp.csr_matrix(X) if fmt == "csr" else X
    g = ZIPGTM(grid_shape=(1, 1), n_basis=4, zero_inflation=zero_inflation, n_iter=10,
               random_state=0).fit(Xi)
    assert_valid(g, Xi)
    np.testing.assert_array_equal(g.latent_, [[0.0, 0.0]])
    np.testing.assert_array_equal(g.transform(Xi), np.zeros((X.shape[0], 2)))
    np.testing.assert_array_equal(g.mixing_, [1.0])
    lam, p = g.rates()[0], g.zero_probabilities()[0]
    log_p0, delta, _ = zip_terms(np.log(lam)[None], None if not zero_inflation
                                 else np.log(p / (1 - p))[None])
    ref = (log_p0.sum() + ((X > 0) * (delta[0] + X * np.log(lam))).sum(axis=1)
           - gammaln(X + 1).sum(axis=1))
    np.testing.assert_allclose(g.score_samples(Xi), ref, rtol=1e-9)


@pytest.mark.parametrize("grid, n_basis, basis, latent", list(itertools.product(
    [(1, 1), (1, 5), (5, 1), (2, 3)], [1, 4, 9], ["sinh", "rbf"], ["grid", "random"])))
def test_degenerate_grids_and_bases_fit(grid, n_basis, basis, latent):
    X = counts(30, 8)
    for init, zi, alpha in [("pca", True, 1e-2), ("random", False, 0.0)]:
        g = ZIPGTM(grid_shape=grid, n_basis=n_basis, basis=basis, latent=latent, init=init,
                   zero_inflation=zi, alpha=alpha, n_iter=4, tol=0, random_state=0).fit(X)
        assert_valid(g, X)
        assert g.phi_.shape == (grid[0] * grid[1], n_basis + 1)


def test_a_side_of_one_point_lies_on_the_axis():
    g = ZIPGTM(grid_shape=(1, 3), n_basis=4, n_iter=2, random_state=0).fit(counts())
    np.testing.assert_array_equal(g.latent_, [[0.0, -1.0], [0.0, 0.0], [0.0, 1.0]])


# ------------------------------------------------------------------ numerical range
@pytest.mark.parametrize("top", [1e20, 1e100, MAX_COUNT])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_huge_counts_up_to_the_limit_fit_without_nan(top, fmt):
    """Counts up to MAX_COUNT (1e200): finite maps and a non-decreasing objective (1e200
    and 1e300 gave NaN maps)."""
    X = counts()
    X = X / X.max() * top
    Xi = sp.csr_matrix(X) if fmt == "csr" else X
    with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
        g = ZIPGTM(grid_shape=(3, 3), n_basis=4, n_iter=8, random_state=0).fit(Xi)
    assert_valid(g, Xi)


def test_counts_beyond_the_limit_are_refused_everywhere():
    X = counts()
    X[2, 3] = 1e300
    g = ZIPGTM(grid_shape=(2, 2), n_basis=4, n_iter=2, random_state=0).fit(counts())
    for call in (ZIPGTM(grid_shape=(2, 2), n_basis=4).fit, g.transform, g.predict_proba,
                 g.score_samples, g.score):
        with pytest.raises(ValueError, match=r"X holds counts up to 1e\+300.*1e\+200"):
            call(X)
    X[2, 3] = np.nextafter(MAX_COUNT, np.inf)
    with pytest.raises(ValueError, match="X holds counts"):
        g.transform(X)


@pytest.mark.parametrize("case", ["float32_max", "tiny", "zero_row", "zero_column",
                                  "all_zero", "sparse_all_zero", "one_doc", "one_word",
                                  "two_by_two"])
def test_degenerate_data_gives_a_finite_map(case):
    X = counts(30, 8)
    if case == "float32_max":
        X = (X / X.max() * np.finfo(np.float32).max).astype(np.float32)
    elif case == "tiny":
        X = X * 1e-320
    elif case == "zero_row":
        X[5] = 0
    elif case == "zero_column":
        X[:, 3] = 0
    elif case in ("all_zero", "sparse_all_zero"):
        X[:] = 0
    elif case == "one_doc":
        X = X[:1]
    elif case == "one_word":
        X = X[:, :1]
    else:
        X = X[:2, :2]
    forms = [X, sp.csr_matrix(X)] if case != "sparse_all_zero" else [sp.csr_matrix(X)]
    for Xi in forms:
        for zi in (True, False):
            g = ZIPGTM(grid_shape=(3, 3), n_basis=4, zero_inflation=zi, n_iter=5,
                       random_state=0).fit(Xi)
            assert_valid(g, Xi)


def test_rank_deficient_newton_systems_of_huge_counts_are_solved():
    """All documents on few latent points with counts of 1e20: the Newton systems are
    singular to working precision (LinAlgError before); the damping scales with them."""
    X = counts(30, 8) * 1e20
    for seed in range(3):
        g = ZIPGTM(grid_shape=(3, 3), n_basis=4, n_iter=10, random_state=seed).fit(X)
        assert_valid(g, X)


# ------------------------------------------------------------------ blocks and threads
def test_blocked_fits_are_bit_identical():
    """Blocks of one document in the C kernels change no bit of a fit, for 1 and 2
    threads; the dense (BLAS) path in blocks of one row agrees to rounding (BLAS results
    depend on the shapes of the products, so its blocks never depend on the threads)."""
    X = counts(40, 12)
    kw = dict(grid_shape=(3, 4), n_basis=4, n_iter=4, tol=0, random_state=0)
    ref = ZIPGTM(num_threads=1, **kw).fit(sp.csr_matrix(X))
    ref_dense = ZIPGTM(num_threads=1, **kw).fit(X)
    old = _wrappers.block_work(1)
    try:
        for nt in (1, 2):
            g = ZIPGTM(num_threads=nt, **kw).fit(sp.csr_matrix(X))
            assert_same_fit(g, ref)
            np.testing.assert_array_equal(g.transform(X), ref.transform(X))
            d = ZIPGTM(num_threads=nt, **kw).fit(X)
            for name in ("rate_coef_", "zero_coef_", "mixing_", "log_likelihood_"):
                np.testing.assert_allclose(getattr(d, name), getattr(ref_dense, name),
                                           rtol=1e-9, atol=1e-12, err_msg=name)
    finally:
        _wrappers.block_work(old)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_fit_is_bit_identical_for_any_num_threads(dtype):
    """Issue 30: sparse input gives the same bits for 1, 2 and 3 threads (BLAS ran with
    num_threads threads in the PCA start, the E-step's products and the Newton M-step, and
    OpenBLAS's last bits depend on its thread count: 4.6e-12 in rate_coef_ and 1.2e-10 in
    log_likelihood_ between 1 and 2 threads on 2000 x 300 counts).  The counts have more
    than one block of Newton solves (_NEWTON_BLOCK words)."""
    from countgrid.gtm._zip_gtm import _NEWTON_BLOCK

    rng = np.random.default_rng(30)
    n, d = 600, _NEWTON_BLOCK + 60
    X = sp.random(n, d, density=0.1, random_state=rng, format="csr",
                  data_rvs=lambda k: rng.poisson(3.0, k) + 1.0).astype(dtype)
    kw = dict(grid_shape=(5, 5), n_basis=9, n_iter=4, tol=0, random_state=0)
    ref = ZIPGTM(num_threads=1, **kw).fit(X)
    out = (ref.transform(X), ref.predict_proba(X), ref.score_samples(X), ref.score(X))
    for nt in (2, 3):
        g = ZIPGTM(num_threads=nt, **kw).fit(X)
        assert_same_fit(g, ref)
        for got, want in zip((g.transform(X), g.predict_proba(X), g.score_samples(X),
                              g.score(X)), out):
            assert np.array_equal(got, want)
        # and the read-out does not depend on the threads of the model that reads it
        g.set_params(num_threads=1)
        assert np.array_equal(g.transform(X), out[0])


# ------------------------------------------------------------------ fitted state
def fitted(zero_inflation=True):
    return ZIPGTM(grid_shape=(3, 3), n_basis=4, zero_inflation=zero_inflation, n_iter=3,
                  random_state=0).fit(counts())


@pytest.mark.parametrize("name, value, match", [
    ("n_features_in_", 10**9, "n_features_in_"),
    ("rate_coef_", np.zeros((5, 11)), "n_features_in_"),
    ("rate_coef_", np.zeros((4, 12)), "rate_coef_"),
    ("rate_coef_", np.zeros((5, 12), np.float32), "rate_coef_"),
    ("zero_coef_", np.zeros((5, 3)), "zero_coef_"),
    ("phi_", np.zeros((8, 5)), "latent_|mixing_"),
    ("latent_", np.zeros((9, 3)), "latent_"),
    ("mixing_", np.full(8, 1 / 8), "mixing_"),
    ("mixing_", "uniform", "mixing_"),
])
def test_inconsistent_fitted_arrays_are_named_at_read_out(name, value, match):
    g = fitted()
    setattr(g, name, value)
    with pytest.raises(ValueError, match=match):
        g.transform(counts())
    with pytest.raises(ValueError, match=match):
        g._check_fitted_state()


@pytest.mark.parametrize("name, value, match", [
    ("mixing_", np.full(9, 0.2), "mixing_"),
    ("mixing_", np.r_[1.5, np.full(8, -0.5 / 8)], "mixing_"),
    ("rate_coef_", np.full((5, 12), np.nan), "rate_coef_"),
    ("rate_coef_", np.full((5, 12), 1e3), "rate_coef_"),
    ("zero_coef_", np.full((5, 12), np.inf), "zero_coef_"),
    ("basis_centers_", np.zeros((5, 2)), "basis_centers_"),
    ("log_likelihood_", np.zeros(1), "log_likelihood_"),
    ("objective_", np.full(4, np.nan), "objective_"),
    ("n_iter_", -1, "n_iter_"),
    ("converged_", "yes", "converged_"),
])
def test_check_fitted_state_names_the_attribute(name, value, match):
    g = fitted()
    setattr(g, name, value)
    with pytest.raises(ValueError, match=match):
        g._check_fitted_state()


def test_check_fitted_state_passes_valid_models():
    assert fitted(True)._check_fitted_state() is None
    assert fitted(False)._check_fitted_state() is None
    assert ZIPGTM()._check_fitted_state() is None
    g = fitted()
    del g.objective_
    with pytest.raises(ValueError, match="objective_"):
        g._check_fitted_state()


def test_set_params_after_fit_does_not_change_predictions():
    g = fitted()
    X = counts(10)
    before = (g.transform(X), g.score_samples(X), g.rates(), g.zero_probabilities())
    g.set_params(grid_shape=(7, 7), n_basis=9, zero_inflation=False, basis="rbf",
                 num_threads=2)
    after = (g.transform(X), g.score_samples(X), g.rates(), g.zero_probabilities())
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)


def test_plot_checks_labels():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    g = fitted()
    X = counts()
    with pytest.raises(ValueError, match="label_names"):
        g.plot(X, y=np.arange(40) % 3, label_names=["a", "b"])
    with pytest.raises(ValueError, match="one label per document"):
        g.plot(X, y=np.zeros((40, 2)))


# ------------------------------------------------------------------ memory
def test_absurd_sizes_raise_memory_error_with_advice(monkeypatch):
    X = counts()
    for kw in (dict(grid_shape=(10**5, 10**5)), dict(grid_shape=(2**40, 2**40)),
               dict(n_basis=10**8), dict(n_basis=2**62)):
        with pytest.raises(MemoryError, match="smaller grid_shape or n_basis"):
            ZIPGTM(**kw).fit(X)
    with pytest.raises(ValueError, match="n_basis.*beyond 2\\*\\*63 - 1"):
        ZIPGTM(n_basis=2**80).fit(X)
    g = fitted()
    monkeypatch.setenv("COUNTGRID_MAX_MEMORY", "256K")
    big = sp.random(20000, 12, density=0.1, format="csr", random_state=0)
    for method in (g.transform, g.predict_proba, g.score_samples):
        with pytest.raises(MemoryError, match="fewer documents per call"):
            method(big)


# ------------------------------------------------------------------ interrupts
@pytest.mark.parametrize("at_mstep, kept", [(1, 0), (2, 1), (5, 4)])
def test_interrupted_fit_keeps_the_last_complete_iteration(monkeypatch, at_mstep, kept):
    """Ctrl-C in the M-step of iteration `at_mstep` keeps `kept` complete iterations with
    the exact state of a fit of that many iterations (0: unfitted)."""
    X = sp.csr_matrix(counts())
    kw = dict(grid_shape=(3, 3), n_basis=4, n_iter=8, tol=0, random_state=0)
    real = ZIPGTM._mstep
    calls = [0]

    def mstep(self, *args):
        calls[0] += 1
        if calls[0] == at_mstep:
            signal.raise_signal(signal.SIGINT)
        return real(self, *args)

    monkeypatch.setattr(ZIPGTM, "_mstep", mstep)
    g = ZIPGTM(**kw)
    with pytest.raises(KeyboardInterrupt) as info:
        g.fit(X)
    monkeypatch.undo()
    note = " ".join(getattr(info.value, "__notes__", []))
    if kept == 0:
        assert not any(hasattr(g, name) for name in FITTED)
        return
    assert f"EM iteration {kept} of 8" in note
    assert_same_fit(g, ZIPGTM(**dict(kw, n_iter=kept)).fit(X))
    g._check_fitted_state()


def test_ctrl_c_from_a_timer_during_fit():
    """A real asynchronous SIGINT: unfitted, or exactly the state of k iterations."""
    X = sp.csr_matrix(counts(300, 60, seed=1))
    kw = dict(grid_shape=(6, 6), n_basis=9, n_iter=10**4, tol=0, random_state=0,
              num_threads=1)
    g = ZIPGTM(**kw)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            g.fit(X)
    finally:
        timer.cancel()
    if hasattr(g, "rate_coef_"):
        k = g.n_iter_
        assert 1 <= k < 10**4
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            assert_same_fit(g, ZIPGTM(**dict(kw, n_iter=k)).fit(X))


def test_ctrl_c_is_honoured_inside_a_long_e_step():
    """The E-step kernel runs in blocks: SIGINT is honoured within about a block, not when
    the whole E-step returns (about 10x the time of a tenth of the documents)."""
    rng = np.random.default_rng(0)
    g = ZIPGTM(grid_shape=(20, 20), n_basis=4, n_iter=1, num_threads=1,
               random_state=0).fit(counts(50, 300))
    X = sp.random(40000, 300, density=0.2, format="csr", random_state=rng,
                  data_rvs=lambda k: np.ones(k))
    tenth = steady_time(lambda: g.predict_proba(X[:4000]))
    old = _wrappers.block_work(1 << 14)
    try:
        latency = sigint_latency(lambda: g.predict_proba(X), min(0.4, tenth))
    finally:
        _wrappers.block_work(old)
    assert latency < tenth, (latency, tenth)
