"""Tests of the counting-grid kernels ``countgrid.grid._wrappers`` against the slow NumPy
references in ``tests/reference.py``.

Every comparison computes the reference in float64 from exactly the same input
values the kernel sees (float32 inputs are upcast).  Tolerances: rtol 1e-10 for
float64 kernels, 1e-4 for float32 kernels.
"""
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st

from countgrid.grid import _wrappers as K

from _reference.grid import (
    accumulate_ref,
    accumulate_topk_ref,
    code_convention_loglik_ref,
    estep_ref,
    exact_loglik_ref,
    grid_size,
    histograms_ref,
    log_scores_ref,
    mstep_ref,
    posterior_ref,
    topk_posterior_ref,
    window_sum_loop_ref,
    window_sum_ref,
)

DTYPES = [np.float32, np.float64]
INDEX_DTYPES = [np.int32, np.int64]
THREADS = [1, 2]

dtype_p = pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
index_p = pytest.mark.parametrize("itype", INDEX_DTYPES, ids=["i32", "i64"])
threads_p = pytest.mark.parametrize("nt", THREADS, ids=["t1", "t2"])


# ----------------------------------------------------------------------------- helpers
def rtol_of(dtype):
    return 1e-10 if np.dtype(dtype) == np.float64 else 1e-4


def assert_close(got, ref, dtype, atol=0.0, rtol=None):
    rt = rtol_of(dtype) if rtol is None else rtol
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), ref, rtol=rt, atol=atol)


def ll_atol(dtype):
    """Absolute tolerance for log-likelihoods that can be ~0 (float32 exp/log
    rounding of O(1) terms)."""
    return 1e-14 if np.dtype(dtype) == np.float64 else 1e-6


def random_pi(rng, Z, L, dtype=np.float64):
    """1 + U(0,1) per entry, normalised over features (the code's init)."""
    p = 1.0 + rng.random((Z, L))
    return np.ascontiguousarray((p / p.sum(axis=0)).astype(dtype))


def random_counts(rng, N, Z, max_tokens=30, empty_rows=()):
    """Dense (N, Z) count matrix; each row has between 1 and max_tokens
    tokens spread over a random number of distinct features."""
    C = np.zeros((N, Z))
    for t in range(N):
        if t in empty_rows:
            continue
        n_tok = rng.integers(1, max_tokens + 1)
        n_feat = rng.integers(1, min(Z, n_tok) + 1)
        feats = rng.choice(Z, size=n_feat, replace=False)
        C[t, feats] = 1
        extra = rng.choice(feats, size=n_tok - n_feat)
        np.add.at(C[t], extra, 1)
    return C


def to_csr(C, dtype, itype):
    """CSR arrays (indptr, indices, data) of a dense matrix, canonical."""
    indptr = [0]
    indices, data = [], []
    for row in C:
        nz = np.flatnonzero(row)
        indices.extend(nz)
        data.extend(row[nz])
        indptr.append(len(indices))
    return (np.asarray(indptr, dtype=itype), np.asarray(indices, dtype=itype),
            np.asarray(data, dtype=dtype))


def to_csc(C, dtype, itype):
    """CSC arrays (indptr, indices, data) with sorted row indices."""
    return to_csr(np.ascontiguousarray(C.T), dtype, itype)


def fresh_loglik(n):
    return np.full(n, np.nan)


def run_estep(C, logh, dtype, itype, nt, log_prior=None, floor=0.0, row_start=0,
              row_end=None, csr=None):
    if row_end is None:
        row_end = C.shape[0]
    indptr, indices, data = to_csr(C, dtype, itype) if csr is None else csr
    L = logh.shape[1]
    q = np.full((row_end - row_start, L), np.nan, dtype=dtype)
    ll = fresh_loglik(row_end - row_start)
    K.estep_csr(indptr, indices, data, row_start, row_end, np.ascontiguousarray(logh, dtype),
                None if log_prior is None else np.ascontiguousarray(log_prior, dtype),
                floor, q, ll, nt)
    return q, ll


# Grid cases: (extent, window) for D = 1..4, odd and even extents, window = extent,
# window = 1, windows that do / do not divide the extent.
GRID_CASES = [
    ((7,), (3,)),
    ((8,), (8,)),
    ((5,), (1,)),
    ((1,), (1,)),
    ((12,), (5,)),
    ((5, 6), (2, 3)),
    ((4, 4), (4, 4)),
    ((3, 7), (1, 7)),
    ((6, 5), (4, 2)),
    ((3, 4, 5), (2, 2, 3)),
    ((2, 3, 2), (1, 3, 2)),
    ((3, 3, 3), (3, 3, 3)),
    ((3, 2, 4, 3), (2, 1, 3, 2)),
    ((2, 2, 2, 2), (1, 1, 1, 1)),
]
grid_p = pytest.mark.parametrize("extent,window", GRID_CASES,
                                 ids=[f"E{'x'.join(map(str, e))}-W{'x'.join(map(str, w))}"
                                      for e, w in GRID_CASES])


# ----------------------------------------------------------------------------- references
@pytest.mark.parametrize("backward", [False, True])
@pytest.mark.parametrize("extent,window", [((5,), (3,)), ((3, 4), (2, 3)), ((2, 3, 3), (2, 2, 3))])
def test_reference_roll_matches_explicit_loop(extent, window, backward):
    """The np.roll reference agrees with an explicit modular-index loop (and is
    not trivially zero), so the kernels are checked against something right."""
    rng = np.random.default_rng(0)
    a = rng.random((2, grid_size(extent)))
    r1 = window_sum_ref(a, extent, window, backward, 0.5)
    r2 = window_sum_loop_ref(a, extent, window, backward, 0.5)
    np.testing.assert_allclose(r1, r2, rtol=1e-13)
    assert np.all(r1 > 0)


# ----------------------------------------------------------------------------- 1. window_sum
@grid_p
@pytest.mark.parametrize("backward", [False, True], ids=["fwd", "bwd"])
@threads_p
@dtype_p
def test_window_sum_matches_reference(extent, window, backward, nt, dtype):
    rng = np.random.default_rng(1)
    L = grid_size(extent)
    a = (0.1 + rng.random((3, L))).astype(dtype)
    out = K.window_sum(a, extent, window, backward=backward, num_threads=nt)
    assert out.shape == (3, L) and out.dtype == dtype
    assert_close(out, window_sum_ref(a, extent, window, backward), dtype)


@grid_p
@pytest.mark.parametrize("backward", [False, True], ids=["fwd", "bwd"])
def test_window_sum_signed_values(extent, window, backward):
    """Signed inputs (cancellation allowed): float64 close to the reference
    relative to the sum of absolute values."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, grid_size(extent)))
    out = K.window_sum(a, extent, window, backward=backward, num_threads=1)
    ref = window_sum_ref(a, extent, window, backward)
    absref = window_sum_ref(np.abs(a), extent, window, backward)
    assert np.all(np.abs(out - ref) <= 1e-13 * absref + 1e-300)


@pytest.mark.parametrize("scale", [0.25, -3.0, 1.0 / 7.0, 0.0])
@pytest.mark.parametrize("backward", [False, True], ids=["fwd", "bwd"])
@dtype_p
def test_window_sum_scale(scale, backward, dtype):
    extent, window = (5, 6), (3, 2)
    rng = np.random.default_rng(3)
    a = (0.5 + rng.random((2, 30))).astype(dtype)
    out = K.window_sum(a, extent, window, backward=backward, scale=scale, num_threads=1)
    assert_close(out, window_sum_ref(a, extent, window, backward, scale), dtype)
    unscaled = K.window_sum(a, extent, window, backward=backward, num_threads=1)
    assert_close(out, scale * unscaled.astype(np.float64), dtype)


@grid_p
@dtype_p
def test_window_sum_backward_is_forward_shifted(extent, window, dtype):
    """backward_i = forward_{i - (W - 1)} on the torus."""
    rng = np.random.default_rng(4)
    L = grid_size(extent)
    a = (0.1 + rng.random((2, L))).astype(dtype)
    fwd = K.window_sum(a, extent, window, backward=False, num_threads=1)
    bwd = K.window_sum(a, extent, window, backward=True, num_threads=1)
    shape = (2,) + tuple(extent)
    shifted = np.roll(fwd.reshape(shape), tuple(w - 1 for w in window),
                      axis=tuple(range(1, len(extent) + 1))).reshape(2, L)
    assert_close(bwd, shifted, dtype)


@grid_p
@pytest.mark.parametrize("backward", [False, True], ids=["fwd", "bwd"])
def test_window_sum_linearity(extent, window, backward):
    rng = np.random.default_rng(5)
    L = grid_size(extent)
    x, y = rng.random((1, L)), rng.random((1, L))
    alpha, beta = 1.5, 0.75
    lhs = K.window_sum(np.ascontiguousarray(alpha * x + beta * y), extent, window, backward,
                       num_threads=1)
    rhs = (alpha * K.window_sum(x, extent, window, backward, num_threads=1)
           + beta * K.window_sum(y, extent, window, backward, num_threads=1))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-12)
    # rows of a batch are independent
    both = K.window_sum(np.vstack([x, y]), extent, window, backward, num_threads=1)
    np.testing.assert_array_equal(both[0], K.window_sum(x, extent, window, backward,
                                                        num_threads=1)[0])
    np.testing.assert_array_equal(both[1], K.window_sum(y, extent, window, backward,
                                                        num_threads=1)[0])


@grid_p
@pytest.mark.parametrize("backward", [False, True], ids=["fwd", "bwd"])
@dtype_p
def test_window_sum_total_mass(extent, window, backward, dtype):
    """sum over cells of the window sums = |W| * sum of the input."""
    rng = np.random.default_rng(6)
    L = grid_size(extent)
    a = rng.random((3, L)).astype(dtype)
    out = K.window_sum(a, extent, window, backward=backward, num_threads=1)
    wvol = int(np.prod(window))
    assert_close(out.astype(np.float64).sum(axis=1),
                 wvol * a.astype(np.float64).sum(axis=1), dtype)


@dtype_p
@pytest.mark.parametrize("extent", [(6, 6), (7, 5), (3, 4, 5)])
def test_window_sum_window_equal_extent_and_one(extent, dtype):
    rng = np.random.default_rng(7)
    L = grid_size(extent)
    a = rng.random((2, L)).astype(dtype)
    for backward in (False, True):
        full = K.window_sum(a, extent, extent, backward=backward, num_threads=1)
        assert_close(full, np.repeat(a.astype(np.float64).sum(axis=1, keepdims=True), L, 1),
                     dtype)
        ident = K.window_sum(a, extent, (1,) * len(extent), backward=backward,
                             num_threads=1)
        np.testing.assert_array_equal(ident, a)


@pytest.mark.parametrize("backward", [False, True], ids=["fwd", "bwd"])
@pytest.mark.parametrize("extent,window",
                         [((40,), (7,)), ((13, 11), (4, 5)), ((5, 6, 7), (2, 3, 4))])
@dtype_p
def test_window_sum_no_cancellation(extent, window, backward, dtype):
    """One huge value among many tiny ones: every cell, including those whose
    window does not contain the huge value, has a small relative error (a
    global cumulative-sum implementation would wipe the tiny values out)."""
    rng = np.random.default_rng(8)
    L = grid_size(extent)
    huge = 1e30 if dtype == np.float64 else 1e20
    a = (1.0 + rng.random((1, L))).astype(dtype)
    a[0, L // 3] = huge
    out = K.window_sum(a, extent, window, backward=backward, num_threads=1)
    ref = window_sum_ref(a, extent, window, backward)
    # sanity: some cells do not see the huge value
    assert np.sum(ref < 1e10) > 0 and np.sum(ref > 1e10) > 0
    tol = 10 * len(extent) * max(window) * np.finfo(dtype).eps
    assert np.all(np.abs(out - ref) <= tol * ref)


@dtype_p
def test_window_sum_empty_batch(dtype):
    out = K.window_sum(np.zeros((0, 12), dtype=dtype), (3, 4), (2, 2), num_threads=1)
    assert out.shape == (0, 12) and out.dtype == dtype


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_window_sum_hypothesis_shapes(data):
    D = data.draw(st.integers(1, 4), label="D")
    extent = tuple(data.draw(st.lists(st.integers(1, 6 if D <= 2 else 3), min_size=D,
                                      max_size=D), label="extent"))
    window = tuple(data.draw(st.integers(1, e), label="w") for e in extent)
    n_vec = data.draw(st.integers(0, 3), label="n_vec")
    backward = data.draw(st.booleans(), label="backward")
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    scale = data.draw(st.sampled_from([1.0, 0.5, 2.0, -1.0]), label="scale")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    L = grid_size(extent)
    a = np.random.default_rng(seed).random((n_vec, L)).astype(dtype) + dtype(0.1)
    out = K.window_sum(a, extent, window, backward=backward, scale=scale, num_threads=1)
    assert out.shape == (n_vec, L) and out.dtype == dtype
    if n_vec:
        assert_close(out, window_sum_ref(a, extent, window, backward, scale), dtype)


# ----------------------------------------------------------------------------- 2. histograms
def run_histograms(pi, extent, window, nt=1):
    Z, L = pi.shape
    h = np.full((Z, L), np.nan, dtype=pi.dtype)
    logh = np.full((Z, L), np.nan, dtype=pi.dtype)
    K.histograms(pi, extent, window, h, logh, nt)
    return h, logh


@grid_p
@threads_p
@dtype_p
def test_histograms_match_reference(extent, window, nt, dtype):
    rng = np.random.default_rng(10)
    pi = random_pi(rng, 5, grid_size(extent), dtype)
    h, logh = run_histograms(pi, extent, window, nt)
    href, loghref = histograms_ref(pi, extent, window)
    assert_close(h, href, dtype)
    assert_close(logh, loghref, dtype, atol=rtol_of(dtype))


@grid_p
@dtype_p
def test_histograms_sum_to_one_and_logh(extent, window, dtype):
    rng = np.random.default_rng(11)
    pi = random_pi(rng, 6, grid_size(extent), dtype)
    h, logh = run_histograms(pi, extent, window)
    assert_close(h.astype(np.float64).sum(axis=0), np.ones(h.shape[1]), dtype)
    # logh is log of the stored h (up to the libm rounding)
    assert_close(logh, np.log(h.astype(np.float64)), dtype, atol=10 * np.finfo(dtype).eps)


@dtype_p
@pytest.mark.parametrize("extent,window", [((5, 4), (2, 3)), ((9,), (4,)), ((3, 3, 3), (2, 2, 2))])
def test_histograms_constant_pi(extent, window, dtype):
    L = grid_size(extent)
    p = np.array([0.1, 0.2, 0.3, 0.4])
    pi = np.ascontiguousarray(np.repeat(p[:, None], L, axis=1).astype(dtype))
    h, logh = run_histograms(pi, extent, window)
    assert_close(h, np.repeat(p.astype(dtype).astype(np.float64)[:, None], L, 1), dtype)
    assert_close(logh, np.log(np.repeat(p[:, None], L, 1)), dtype, atol=1e-6)


# ----------------------------------------------------------------------------- 3. posterior
def run_posterior(l, dtype, nt=1, log_prior=None, floor=0.0):
    q = np.ascontiguousarray(np.array(l, dtype=dtype))
    ll = fresh_loglik(q.shape[0])
    K.posterior(q, None if log_prior is None else np.ascontiguousarray(log_prior, dtype),
                floor, ll, nt)
    return q, ll


def random_log_prior(rng, L):
    p = rng.random(L) + 0.1
    return np.log(p / p.sum())


@pytest.mark.parametrize("use_prior", [False, True], ids=["uniform", "prior"])
@pytest.mark.parametrize("floor_frac", [0.0, 1e-7, 0.1, 0.9])
@threads_p
@dtype_p
def test_posterior_matches_reference(use_prior, floor_frac, nt, dtype):
    rng = np.random.default_rng(20)
    n, L = 37, 30
    l = (3.0 * rng.standard_normal((n, L)) - 50.0).astype(dtype)
    l[3, 5] = -np.inf                      # one impossible position
    lp = random_log_prior(rng, L).astype(dtype) if use_prior else None
    floor = floor_frac / L
    q, ll = run_posterior(l, dtype, nt, lp, floor)
    qref, llref = posterior_ref(l, lp, floor)
    assert_close(q, qref, dtype, atol=1e-3 * rtol_of(dtype) / L)
    assert_close(ll, llref, dtype, atol=ll_atol(dtype))
    assert_close(q.astype(np.float64).sum(axis=1), np.ones(n), dtype)


@threads_p
@dtype_p
def test_posterior_floor_respected(nt, dtype):
    rng = np.random.default_rng(21)
    n, L = 10, 25
    l = (20.0 * rng.standard_normal((n, L))).astype(dtype)   # very peaked posteriors
    floor = 0.2 / L
    q, _ = run_posterior(l, dtype, nt, None, floor)
    # after max(q, floor) the row sums to at most 1 + L*floor before renormalising
    lower = floor / (1.0 + L * floor)
    assert np.all(q.astype(np.float64) >= lower * (1 - rtol_of(dtype)))
    assert np.all(q > 0)
    assert_close(q.astype(np.float64).sum(axis=1), np.ones(n), dtype)
    # without floor, the same scores give much smaller entries
    q0, _ = run_posterior(l, dtype, nt, None, 0.0)
    assert q0.min() < lower


@pytest.mark.parametrize("use_prior", [False, True], ids=["uniform", "prior"])
@dtype_p
def test_posterior_shift_invariance(use_prior, dtype):
    rng = np.random.default_rng(22)
    n, L = 8, 20
    l = (2.0 * rng.standard_normal((n, L))).astype(dtype)
    lp = random_log_prior(rng, L).astype(dtype) if use_prior else None
    c = dtype(-37.5)
    q1, ll1 = run_posterior(l, dtype, 1, lp)
    q2, ll2 = run_posterior(l + c, dtype, 1, lp)
    assert_close(q2, q1.astype(np.float64), dtype, atol=1e-12)
    assert_close(ll2, ll1 + float(c), dtype)


@dtype_p
def test_posterior_all_minus_inf_rows(dtype):
    rng = np.random.default_rng(23)
    L = 12
    l = rng.standard_normal((3, L)).astype(dtype)
    l[1] = -np.inf
    q, ll = run_posterior(l, dtype, 1, None, 0.01)
    np.testing.assert_allclose(q[1], np.full(L, 1.0 / L), rtol=1e-6)
    assert ll[1] == -np.inf and np.isfinite(ll[0]) and np.isfinite(ll[2])
    lp = random_log_prior(rng, L).astype(dtype)
    q, ll = run_posterior(l, dtype, 1, lp, 0.0)
    assert_close(q[1], np.exp(lp.astype(np.float64)), dtype)
    assert ll[1] == -np.inf


@dtype_p
def test_posterior_uniform_log_prior_equals_no_prior(dtype):
    """log_prior = -log L everywhere reproduces the default (no -log L is
    subtracted twice)."""
    rng = np.random.default_rng(24)
    L = 16
    l = (rng.standard_normal((5, L))).astype(dtype)
    q1, ll1 = run_posterior(l, dtype, 1, None)
    q2, ll2 = run_posterior(l, dtype, 1, np.full(L, -np.log(L)))
    assert_close(q2, q1.astype(np.float64), dtype)
    assert_close(ll2, ll1, dtype)


@pytest.mark.parametrize("floor", [-1e-3, 1.0 / 10, 0.5, np.nan])
def test_posterior_invalid_floor(floor):
    q = np.zeros((2, 10))
    with pytest.raises(ValueError):
        K.posterior(q, None, floor, np.zeros(2), 1)


# ----------------------------------------------------------------------------- 3. estep_csr
@pytest.mark.parametrize("use_prior", [False, True], ids=["uniform", "prior"])
@pytest.mark.parametrize("floor_frac", [0.0, 0.5])
@index_p
@threads_p
@dtype_p
def test_estep_csr_matches_reference(use_prior, floor_frac, itype, nt, dtype):
    rng = np.random.default_rng(30)
    extent, window, Z, N = (5, 6), (2, 3), 11, 40
    L = grid_size(extent)
    _, logh = histograms_ref(random_pi(rng, Z, L), extent, window)
    logh = logh.astype(dtype)
    C = random_counts(rng, N, Z, max_tokens=30, empty_rows=(4,))
    lp = random_log_prior(rng, L).astype(dtype) if use_prior else None
    floor = floor_frac / L
    q, ll = run_estep(C, logh, dtype, itype, nt, lp, floor)
    qref, llref = estep_ref(C, logh, lp, floor)
    assert_close(q, qref, dtype, atol=1e-3 * rtol_of(dtype) / L)
    assert_close(ll, llref, dtype, atol=ll_atol(dtype))
    assert_close(q.astype(np.float64).sum(axis=1), np.ones(N), dtype)
    if floor > 0:
        assert np.all(q.astype(np.float64) >= floor / (1 + L * floor) * (1 - rtol_of(dtype)))


@index_p
@dtype_p
def test_estep_csr_equals_posterior_of_dense_scores(itype, dtype):
    """estep_csr = posterior applied to the dense scores C @ logh."""
    rng = np.random.default_rng(31)
    Z, L, N = 9, 20, 15
    logh = np.log(random_pi(rng, Z, L)).astype(dtype)
    C = random_counts(rng, N, Z, max_tokens=25)
    q, ll = run_estep(C, logh, dtype, itype, 1)
    scores = log_scores_ref(C, logh)
    np.testing.assert_allclose(scores, C @ logh.astype(np.float64), rtol=1e-12)
    q2, ll2 = run_posterior(scores, dtype, 1)
    assert_close(q, q2.astype(np.float64), dtype, atol=1e-3 * rtol_of(dtype) / L)
    assert_close(ll, ll2, dtype)


@pytest.mark.parametrize("block", [(0, 1), (3, 10), (7, 23), (22, 23), (5, 5)])
@index_p
@threads_p
@dtype_p
def test_estep_csr_row_blocks(block, itype, nt, dtype):
    """A sub-range [row_start, row_end) of a bigger CSR matrix gives exactly the
    rows of the full computation."""
    rng = np.random.default_rng(32)
    Z, L, N = 8, 18, 23
    logh = np.log(random_pi(rng, Z, L)).astype(dtype)
    C = random_counts(rng, N, Z, max_tokens=20, empty_rows=(8,))
    csr = to_csr(C, dtype, itype)
    r0, r1 = block
    q_full, ll_full = run_estep(C, logh, dtype, itype, nt, csr=csr)
    q, ll = run_estep(C, logh, dtype, itype, nt, row_start=r0, row_end=r1, csr=csr)
    assert q.shape == (r1 - r0, L)
    np.testing.assert_array_equal(q, q_full[r0:r1])
    np.testing.assert_array_equal(ll, ll_full[r0:r1])
    qref, llref = estep_ref(C[r0:r1], logh)
    assert_close(q, qref, dtype, atol=1e-3 * rtol_of(dtype) / L)
    assert_close(ll, llref, dtype, atol=ll_atol(dtype))


@pytest.mark.parametrize("use_prior", [False, True], ids=["uniform", "prior"])
@index_p
@dtype_p
def test_estep_csr_empty_document(use_prior, itype, dtype):
    """An empty bag has l = 0 everywhere: the posterior is the prior (uniform
    by default) and the exact log-likelihood is ln sum_k p(k) = 0."""
    rng = np.random.default_rng(33)
    Z, L = 5, 14
    logh = np.log(random_pi(rng, Z, L)).astype(dtype)
    C = np.zeros((2, Z))
    C[1, 2] = 3
    lp = random_log_prior(rng, L).astype(dtype) if use_prior else None
    q, ll = run_estep(C, logh, dtype, itype, 1, lp)
    expect = np.exp(lp.astype(np.float64)) if use_prior else np.full(L, 1.0 / L)
    assert_close(q[0], expect, dtype)
    assert abs(ll[0]) <= 10 * np.finfo(dtype).eps * np.log(L)


@index_p
@dtype_p
def test_estep_csr_duplicates_and_explicit_zeros(itype, dtype):
    """Non-canonical CSR: duplicate column entries are summed, explicit zero
    entries contribute nothing (logh finite)."""
    rng = np.random.default_rng(34)
    Z, L = 6, 10
    logh = np.log(random_pi(rng, Z, L)).astype(dtype)
    indptr = np.array([0, 4, 6], dtype=itype)
    indices = np.array([2, 0, 2, 5, 1, 1], dtype=itype)
    data = np.array([1, 2, 3, 0, 1, 1], dtype=dtype)
    C = np.zeros((2, Z))
    C[0, 2], C[0, 0], C[1, 1] = 4, 2, 2
    q, ll = run_estep(C, logh, dtype, itype, 1, csr=(indptr, indices, data))
    qref, llref = estep_ref(C, logh)
    assert_close(q, qref, dtype, atol=1e-8)
    assert_close(ll, llref, dtype, atol=ll_atol(dtype))


@index_p
@dtype_p
def test_estep_csr_no_features(itype, dtype):
    """Z = 0 (logh of shape (0, L)) with empty bags: uniform posterior, loglik 0."""
    L = 5
    q = np.full((2, L), np.nan, dtype=dtype)
    ll = fresh_loglik(2)
    K.estep_csr(np.zeros(3, itype), np.zeros(0, itype), np.zeros(0, dtype), 0, 2,
                np.zeros((0, L), dtype), None, 0.0, q, ll, 1)
    np.testing.assert_allclose(q, 1.0 / L, rtol=1e-6)
    np.testing.assert_allclose(ll, 0.0, atol=1e-6)


@dtype_p
def test_estep_csr_impossible_document(dtype):
    """A feature with h = 0 (logh = -inf) everywhere makes a bag impossible:
    uniform posterior and loglik = -inf, other bags unaffected."""
    rng = np.random.default_rng(35)
    Z, L = 4, 9
    logh = np.log(random_pi(rng, Z, L)).astype(dtype)
    logh[3] = -np.inf
    C = np.array([[1, 0, 2, 1], [0, 3, 1, 0.0]])
    q, ll = run_estep(C, logh, dtype, np.int64, 1)
    assert ll[0] == -np.inf
    np.testing.assert_allclose(q[0], 1.0 / L, rtol=1e-6)
    qref, llref = estep_ref(C[1:], logh)
    assert_close(q[1:], qref, dtype)
    assert_close(ll[1:], llref, dtype)


# ----------------------------------------------------------------------------- 4. worked example
PI1 = np.array([[0.9, 0.8, 0.5], [0.7, 0.5, 0.2], [0.4, 0.2, 0.1]])
WS1 = np.array([[2.9, 2.0, 2.3], [1.8, 1.0, 1.4], [2.3, 1.6, 1.9]])
H1 = np.array([[0.725, 0.5, 0.575], [0.45, 0.25, 0.35], [0.575, 0.4, 0.475]])
L_EX = np.array([[-1.934151, -2.079442, -1.962437], [-2.194852, -3.060271, -2.530427],
                 [-1.962437, -2.343407, -2.133238]])
Q_EX = np.array([[0.144128, 0.124638, 0.140108], [0.111052, 0.046739, 0.079394],
                 [0.140108, 0.095722, 0.118110]])


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-6), (np.float32, 3e-6)], ids=["f64", "f32"])
def test_worked_example_section_10(dtype, tol):
    extent, window = (3, 3), (2, 2)
    pi = np.ascontiguousarray(np.stack([PI1.ravel(), 1 - PI1.ravel()]).astype(dtype))
    ws = K.window_sum(pi, extent, window, num_threads=1)
    np.testing.assert_allclose(ws[0], WS1.ravel(), atol=tol)
    np.testing.assert_allclose(ws[1], 4 - WS1.ravel(), atol=tol)
    h, logh = run_histograms(pi, extent, window)
    np.testing.assert_allclose(h[0], H1.ravel(), atol=tol)
    np.testing.assert_allclose(h[1], 1 - H1.ravel(), atol=tol)
    C = np.array([[2.0, 1.0]])
    # the scores l(k) themselves: posterior of nothing-but-l is checked via a
    # dense computation from the kernel's logh
    l = log_scores_ref(C, logh)
    np.testing.assert_allclose(l[0], L_EX.ravel(), atol=tol)
    q, ll = run_estep(C, logh, dtype, np.int32, 1)
    np.testing.assert_allclose(q[0], Q_EX.ravel(), atol=tol)
    np.testing.assert_allclose(ll[0], -2.194323, atol=tol)
    code_value = code_convention_loglik_ref(q, l)[0]
    np.testing.assert_allclose(code_value, 0.002902, atol=tol)
    np.testing.assert_allclose(code_value, ll[0] + np.log(9), atol=tol)
    # the whole pipeline in the references agrees too
    np.testing.assert_allclose(exact_loglik_ref(C, pi, extent, window), [-2.194323], atol=1e-6)


# ----------------------------------------------------------------------------- 5. accumulate_csc
def run_accumulate(C, Q, dtype, itype, nt, block, n0=None):
    N, Z = C.shape
    L = Q.shape[1]
    indptr, indices, data = to_csc(C, dtype, itype)
    cursor = indptr[:-1].copy()
    n = np.zeros((Z, L), dtype=dtype) if n0 is None else n0.astype(dtype).copy()
    for r0 in range(0, N, block):
        r1 = min(N, r0 + block)
        K.accumulate_csc(indptr, indices, data, cursor, r0, r1,
                         np.ascontiguousarray(Q[r0:r1], dtype=dtype), n, nt)
    return n, cursor, indptr


@pytest.mark.parametrize("block", [1, 3, 7, 16, 29, 100])
@index_p
@threads_p
@dtype_p
def test_accumulate_csc_matches_dense(block, itype, nt, dtype):
    rng = np.random.default_rng(40)
    N, Z, L = 29, 13, 17
    C = random_counts(rng, N, Z, max_tokens=30, empty_rows=(0, 11))
    C[:, 4] = 0                                   # an empty column
    Q = rng.random((N, L)).astype(dtype)
    n0 = rng.random((Z, L)).astype(dtype)
    n, cursor, indptr = run_accumulate(C, Q, dtype, itype, nt, block, n0)
    assert_close(n, n0.astype(np.float64) + accumulate_ref(C, Q), dtype)
    np.testing.assert_allclose(accumulate_ref(C, Q), C.T @ Q.astype(np.float64), rtol=1e-12)
    np.testing.assert_array_equal(cursor, indptr[1:])


@index_p
@dtype_p
def test_accumulate_csc_block_order_independent_of_blocking(itype, dtype):
    """Block sizes only change the summation grouping: results agree to rtol."""
    rng = np.random.default_rng(41)
    N, Z, L = 20, 7, 9
    C = random_counts(rng, N, Z)
    Q = rng.random((N, L)).astype(dtype)
    n1, _, _ = run_accumulate(C, Q, dtype, itype, 1, 1)
    n2, _, _ = run_accumulate(C, Q, dtype, itype, 1, N)
    assert_close(n1, n2.astype(np.float64), dtype)


@index_p
def test_accumulate_csc_skipped_block_is_an_error(itype):
    """Calling [0, B) then [2B, 3B) with the same cursor leaves entries of rows
    [B, 2B) before the cursor position: detected, not silently dropped."""
    rng = np.random.default_rng(42)
    N, Z, L = 9, 4, 5
    C = np.ones((N, Z))
    Q = rng.random((N, L))
    indptr, indices, data = to_csc(C, np.float64, itype)
    cursor = indptr[:-1].copy()
    n = np.zeros((Z, L))
    K.accumulate_csc(indptr, indices, data, cursor, 0, 3, Q[0:3].copy(), n, 1)
    with pytest.raises(ValueError):
        K.accumulate_csc(indptr, indices, data, cursor, 6, 9, Q[6:9].copy(), n, 1)


# ----------------------------------------------------------------------------- 6. mstep
def run_mstep(n, h, pi, extent, window, rho, alpha, nt=1):
    pi2 = pi.copy()
    n2 = n.copy()
    K.mstep(n2, h, pi2, extent, window, rho, alpha, nt)
    return pi2


MSTEP_CASES = [((9,), (3,)), ((5, 6), (2, 3)), ((4, 4), (4, 4)), ((3, 4, 5), (2, 2, 3)),
               ((6, 5), (1, 1))]


@pytest.mark.parametrize("extent,window", MSTEP_CASES)
@pytest.mark.parametrize("rho,alpha", [(0.01, 1e-10), (0.0, 1e-10), (0.5, 0.0), (0.0, 1e-3)])
@threads_p
@dtype_p
def test_mstep_matches_reference(extent, window, rho, alpha, nt, dtype):
    rng = np.random.default_rng(50)
    Z, L = 7, grid_size(extent)
    pi = random_pi(rng, Z, L, dtype)
    h, _ = run_histograms(pi, extent, window)
    n = (rng.random((Z, L)) * 3).astype(dtype)
    new = run_mstep(n, h, pi, extent, window, rho, alpha, nt)
    ref = mstep_ref(n, h, pi, extent, window, rho, alpha)
    assert_close(new, ref, dtype)


@pytest.mark.parametrize("scale", [2.0**-1060, 2.0**-1000, 2.0**-960])
@threads_p
def test_mstep_subnormal_statistics(scale, nt):
    """Counts near 1e-320 with rho = 0: the column sums are subnormal and their reciprocal
    would overflow; the kernel still returns the reference's normalised pi (issue 13)."""
    rng = np.random.default_rng(52)
    extent, window = (5, 6), (2, 3)
    Z, L = 7, grid_size(extent)
    pi = random_pi(rng, Z, L, np.float64)
    h, _ = run_histograms(pi, extent, window)
    n = rng.random((Z, L)) * 3 * scale
    new = run_mstep(n, h, pi, extent, window, 0.0, 0.0, nt)
    assert np.isfinite(new).all()
    np.testing.assert_allclose(new.sum(axis=0), 1.0, rtol=1e-12)
    # subnormal inputs carry few bits: the reference agrees to their precision
    np.testing.assert_allclose(new, mstep_ref(n, h, pi, extent, window, 0.0, 0.0),
                               rtol=1e-2 if scale < 2.0**-1022 else 1e-12, atol=1e-12)


@pytest.mark.parametrize("extent,window", MSTEP_CASES)
@dtype_p
def test_mstep_normalised_and_positive(extent, window, dtype):
    rng = np.random.default_rng(51)
    Z, L = 5, grid_size(extent)
    pi = random_pi(rng, Z, L, dtype)
    h, _ = run_histograms(pi, extent, window)
    C = random_counts(rng, 12, Z)
    Q = rng.dirichlet(np.ones(L), size=12)
    n = accumulate_ref(C, Q).astype(dtype)
    n[2] = 0                                      # a feature that never occurs
    rho = C.sum(axis=1).mean() / (2.5 * L)
    new = run_mstep(n, h, pi, extent, window, rho, 1e-10)
    assert np.all(new > 0)
    assert_close(new.astype(np.float64).sum(axis=0), np.ones(L), dtype)
    assert_close(new, mstep_ref(n, h, pi, extent, window, rho, 1e-10), dtype)


@dtype_p
def test_mstep_zero_mass_gives_uniform_and_clips_negative(dtype):
    """rho = 0: cells covered by no window with positive statistics get 1/Z;
    negative backward sums are clipped to 0 (not propagated)."""
    extent, window = (8, 7), (2, 2)
    Z, L = 4, 56
    rng = np.random.default_rng(52)
    pi = random_pi(rng, Z, L, dtype)
    h, _ = run_histograms(pi, extent, window)
    n = np.zeros((Z, L), dtype=dtype)
    n[:, 0] = 1.0 + rng.random(Z)                 # mass only in window 0
    n[1, 20] = -5.0                               # negative statistics: QH < 0 -> 0
    new = run_mstep(n, h, pi, extent, window, 0.0, 1e-10)
    ref = mstep_ref(n, h, pi, extent, window, 0.0, 1e-10)
    assert_close(new, ref, dtype)
    covered = np.zeros(extent, bool)
    covered[:2, :2] = True
    covered = covered.ravel()
    # cells 14, 20, 21, 27 (covered by window 20) would get pi = (0, 1, 0, 0)
    # without the clip; with it, every uncovered cell is uniform
    np.testing.assert_allclose(new[:, ~covered], 1.0 / Z, rtol=1e-6)
    assert np.all(new[:, covered] != dtype(1.0 / Z))
    assert_close(new.astype(np.float64).sum(axis=0), np.ones(L), dtype)


def test_em_with_rho_zero_is_monotone():
    """E-step + accumulation + M-step + histograms with rho = 0 never decrease the
    exact total log-likelihood (exact EM: Jojic & Perina, UAI 2011, eqs. 3 and 7)."""
    rng = np.random.default_rng(53)
    extent, window, Z, N = (6, 5), (2, 2), 8, 25
    L = grid_size(extent)
    C = random_counts(rng, N, Z, max_tokens=20)
    # two clusters of documents so EM has something to learn
    C[: N // 2, : Z // 2] *= 3
    pi = random_pi(rng, Z, L)
    csr = to_csr(C, np.float64, np.int64)
    csc = to_csc(C, np.float64, np.int64)
    totals = []
    for _ in range(12):
        h, logh = run_histograms(pi, extent, window)
        q, ll = run_estep(C, logh, np.float64, np.int64, 1, csr=csr)
        totals.append(ll.sum())
        np.testing.assert_allclose(ll, exact_loglik_ref(C, pi, extent, window), rtol=1e-10)
        n = np.zeros((Z, L))
        K.accumulate_csc(*csc, csc[0][:-1].copy(), 0, N, q, n, 1)
        K.mstep(n, h, pi, extent, window, 0.0, 1e-10, 1)
    diffs = np.diff(totals)
    assert np.all(diffs >= -1e-8 * np.abs(totals[1:])), diffs
    assert totals[-1] > totals[0] + 1e-3


def test_rolling_pi_rolls_posterior():
    """Rolling pi on the torus keeps every exact log-likelihood and rolls the
    posterior by the same offset (uniform prior; the torus of Jojic & Perina,
    UAI 2011, section 2.1)."""
    rng = np.random.default_rng(54)
    extent, window, Z = (5, 7), (2, 3), 6
    L = grid_size(extent)
    pi = random_pi(rng, Z, L)
    C = random_counts(rng, 6, Z)
    shift = (2, -3)
    pi_r = np.ascontiguousarray(np.roll(pi.reshape(Z, *extent), shift, axis=(1, 2)).reshape(Z, L))
    _, logh = run_histograms(pi, extent, window)
    _, logh_r = run_histograms(pi_r, extent, window)
    q, ll = run_estep(C, logh, np.float64, np.int32, 1)
    q_r, ll_r = run_estep(C, logh_r, np.float64, np.int32, 1)
    np.testing.assert_allclose(ll_r, ll, rtol=1e-10)
    rolled = np.roll(q.reshape(-1, *extent), shift, axis=(1, 2)).reshape(-1, L)
    np.testing.assert_allclose(q_r, rolled, rtol=1e-9)


# ----------------------------------------------------------------------------- 7. errors
def _valid_window_args(dtype=np.float64):
    return dict(a=np.zeros((2, 12), dtype=dtype), extent=(3, 4), window=(2, 2))


@pytest.mark.parametrize("change", [
    dict(a=np.zeros((2, 11))),                       # wrong number of cells
    dict(a=np.zeros(12)),                            # 1-D input
    dict(a=np.zeros((2, 24))[:, ::2]),               # not contiguous
    dict(window=(4, 2)),                             # window larger than the extent
    dict(window=(2, 0)),                             # empty window
    dict(extent=(3, 0), window=(1, 1)),              # empty extent
    dict(window=(2,)),                               # length mismatch
    dict(window=(2, 2, 1)),                          # length mismatch
    dict(extent=(1,) * 17, window=(1,) * 17, a=np.zeros((1, 1))),   # D > CG_MAX_DIM
    dict(extent=(), window=(), a=np.zeros((1, 1))),  # D = 0
    dict(a=np.zeros((2, 12), dtype=np.int64)),       # not a float array
], ids=lambda c: ",".join(c))
def test_window_sum_errors(change):
    args = _valid_window_args()
    args.update(change)
    with pytest.raises((ValueError, TypeError)):
        K.window_sum(args["a"], args["extent"], args["window"], num_threads=1)


def test_histograms_errors():
    pi = np.full((3, 12), 1 / 3)
    ok = dict(pi=pi, extent=(3, 4), window=(2, 2), h=np.zeros((3, 12)), logh=np.zeros((3, 12)))
    K.histograms(**ok, num_threads=1)
    bad = [
        dict(h=np.zeros((2, 12))),                   # fewer rows than features
        dict(logh=np.zeros((3, 11))),                # wrong number of cells
        dict(window=(4, 4)),
        dict(extent=(12,), window=(2, 2)),
        dict(h=np.zeros((3, 12), dtype=np.float32)),  # mixed dtypes
        dict(pi=pi.astype(np.float32), h=np.zeros((3, 12), np.float32)),
    ]
    for change in bad:
        args = dict(ok)
        args.update(change)
        with pytest.raises((ValueError, TypeError)):
            K.histograms(**args, num_threads=1)


def test_posterior_errors():
    q = np.zeros((3, 10))
    ll = np.zeros(3)
    K.posterior(q.copy(), None, 0.0, ll)
    with pytest.raises(ValueError):
        K.posterior(q.copy(), np.zeros(9), 0.0, ll)            # prior length
    with pytest.raises(ValueError):
        K.posterior(q.copy(), None, 0.0, np.zeros(2))          # loglik too short
    with pytest.raises((ValueError, TypeError)):
        K.posterior(q.copy(), None, 0.0, np.zeros(3, np.float32))  # loglik not float64
    with pytest.raises((ValueError, TypeError)):
        K.posterior(q.copy(), np.zeros(10, np.float32), 0.0, ll)  # mixed dtypes
    with pytest.raises(ValueError):
        K.posterior(np.zeros((3, 0)), None, 0.0, ll)           # no cells
    with pytest.raises(ValueError):
        K.posterior(q.copy(), None, 0.1, ll)                   # floor = 1/L


def _estep_args(itype=np.int64, dtype=np.float64):
    C = np.array([[1, 0, 2], [0, 0, 0], [3, 1, 0], [0, 2, 1.0]])
    indptr, indices, data = to_csr(C, dtype, itype)
    L = 6
    return dict(indptr=indptr, indices=indices, data=data, row_start=0, row_end=4,
                logh=np.full((3, L), -np.log(3), dtype=dtype), log_prior=None, floor=0.0,
                q=np.zeros((4, L), dtype=dtype), loglik=np.zeros(4), num_threads=1)


def _call_estep(a):
    K.estep_csr(a["indptr"], a["indices"], a["data"], a["row_start"], a["row_end"],
                a["logh"], a["log_prior"], a["floor"], a["q"], a["loglik"], a["num_threads"])


def _mod(arr, idx, val):
    arr = arr.copy()
    arr[idx] = val
    return arr


ESTEP_BAD = {
    "row_end>rows": lambda a: dict(row_end=5),
    "row_start<0": lambda a: dict(row_start=-1),
    "row_start>row_end": lambda a: dict(row_start=3, row_end=2),
    "indices_data_len": lambda a: dict(data=a["data"][:-1].copy()),
    "indptr>nnz": lambda a: dict(indptr=_mod(a["indptr"], -1, len(a["indices"]) + 1)),
    "indptr_huge": lambda a: dict(indptr=_mod(a["indptr"], 2, 10**9)),
    "indptr_negative": lambda a: dict(indptr=_mod(a["indptr"], 0, -10**9)),
    "indptr_decreasing": lambda a: dict(indptr=_mod(a["indptr"], 2, 0)),
    "index>=Z": lambda a: dict(indices=_mod(a["indices"], 1, 3)),
    "index_huge": lambda a: dict(indices=_mod(a["indices"], 0, 2**30)),
    "index_negative": lambda a: dict(indices=_mod(a["indices"], 4, -1)),
    "index_very_negative": lambda a: dict(indices=_mod(a["indices"], 0, -2**30)),
    "q_too_few_rows": lambda a: dict(q=np.zeros((3, 6))),
    "q_wrong_cols": lambda a: dict(q=np.zeros((4, 5))),
    "loglik_short": lambda a: dict(loglik=np.zeros(3)),
    "prior_len": lambda a: dict(log_prior=np.zeros(5)),
    "floor_too_big": lambda a: dict(floor=1.0 / 6),
    "floor_negative": lambda a: dict(floor=-0.01),
    "no_cells": lambda a: dict(logh=np.zeros((3, 0)), q=np.zeros((4, 0))),
}
ESTEP_TYPE_BAD = {
    "data_f32": lambda a: dict(data=a["data"].astype(np.float32)),
    "q_f32": lambda a: dict(q=a["q"].astype(np.float32)),
    "prior_f32": lambda a: dict(log_prior=np.zeros(6, np.float32)),
    "indices_i32": lambda a: dict(indices=a["indices"].astype(np.int32)),
    "loglik_f32": lambda a: dict(loglik=np.zeros(4, np.float32)),
    "data_int": lambda a: dict(data=a["data"].astype(np.int64)),
}


@pytest.mark.parametrize("name", list(ESTEP_BAD))
@index_p
def test_estep_csr_value_errors(name, itype):
    a = _estep_args(itype)
    _call_estep(dict(a))                              # the valid call works
    a.update(ESTEP_BAD[name](a))
    for key in ("indptr", "indices"):
        a[key] = np.ascontiguousarray(a[key], dtype=itype)
    with pytest.raises(ValueError):
        _call_estep(a)


@pytest.mark.parametrize("name", list(ESTEP_TYPE_BAD))
def test_estep_csr_type_errors(name):
    a = _estep_args(np.int64)
    a.update(ESTEP_TYPE_BAD[name](a))
    with pytest.raises((ValueError, TypeError)):
        _call_estep(a)


def _acc_args(itype=np.int64, dtype=np.float64):
    C = np.array([[1, 0, 2], [0, 0, 0], [3, 1, 0], [0, 2, 1.0]])
    indptr, indices, data = to_csc(C, dtype, itype)
    L = 5
    return dict(indptr=indptr, indices=indices, data=data, cursor=indptr[:-1].copy(),
                row_start=0, row_end=4, q=np.ones((4, L), dtype=dtype),
                n=np.zeros((3, L), dtype=dtype), num_threads=1)


def _call_acc(a):
    K.accumulate_csc(a["indptr"], a["indices"], a["data"], a["cursor"], a["row_start"],
                     a["row_end"], a["q"], a["n"], a["num_threads"])


ACC_BAD = {
    "cursor_len": lambda a: dict(cursor=a["cursor"][:-1].copy()),
    "cursor_past_column": lambda a: dict(cursor=_mod(a["cursor"], 0, a["indptr"][1] + 1)),
    "cursor_before_column": lambda a: dict(cursor=_mod(a["cursor"], 1, a["indptr"][1] - 1)),
    "cursor_huge": lambda a: dict(cursor=_mod(a["cursor"], 1, 2**30)),
    "cursor_negative": lambda a: dict(cursor=_mod(a["cursor"], 0, -2**30)),
    "indptr>nnz": lambda a: dict(indptr=_mod(a["indptr"], -1, len(a["indices"]) + 1)),
    "indptr_huge": lambda a: dict(indptr=_mod(a["indptr"], -1, 2**30)),
    "indptr_decreasing": lambda a: dict(indptr=_mod(a["indptr"], 2, 0)),
    "indices_data_len": lambda a: dict(data=a["data"][:-1].copy()),
    "row_before_start": lambda a: dict(row_start=1, q=np.ones((3, 5))),
    "row_range_reversed": lambda a: dict(row_start=3, row_end=2),
    "row_start_negative": lambda a: dict(row_start=-1, q=np.ones((5, 5))),
    "n_too_few_rows": lambda a: dict(n=np.zeros((2, 5))),
    "q_wrong_cols": lambda a: dict(q=np.ones((4, 6))),
    "q_too_few_rows": lambda a: dict(q=np.ones((3, 5))),
    "no_cells": lambda a: dict(q=np.ones((4, 0)), n=np.zeros((3, 0))),
}
ACC_TYPE_BAD = {
    "data_f32": lambda a: dict(data=a["data"].astype(np.float32)),
    "n_f32": lambda a: dict(n=a["n"].astype(np.float32)),
    "cursor_i32": lambda a: dict(cursor=a["cursor"].astype(np.int32)),
}


@pytest.mark.parametrize("name", list(ACC_BAD))
@index_p
def test_accumulate_csc_value_errors(name, itype):
    a = _acc_args(itype)
    b = dict(a, cursor=a["cursor"].copy(), n=a["n"].copy())
    _call_acc(b)                                      # the valid call works
    a.update(ACC_BAD[name](a))
    for key in ("indptr", "indices", "cursor"):
        a[key] = np.ascontiguousarray(a[key], dtype=itype)
    with pytest.raises(ValueError):
        _call_acc(a)


@pytest.mark.parametrize("name", list(ACC_TYPE_BAD))
def test_accumulate_csc_type_errors(name):
    a = _acc_args(np.int64)
    a.update(ACC_TYPE_BAD[name](a))
    with pytest.raises((ValueError, TypeError)):
        _call_acc(a)


# Inputs that made the process crash are run in a child interpreter so that
# a segfault fails one test instead of killing the session.
_CHILD_PRELUDE = """
import numpy as np
from countgrid.grid import _wrappers as K
q = np.ones((2, 4)); n = np.zeros((2, 4))
"""

ACC_CRASH_CASES = {
    # indptr[0] < 0 and cursor = indptr[:-1] (as the API prescribes):
    # the kernel only checks cursor >= indptr[z], never indptr[z] >= 0.
    "negative_indptr": """
indptr = np.array([-(1 << 40), 1, 2], np.int64)
indices = np.array([0, 1], np.int64); data = np.ones(2)
cursor = indptr[:-1].copy()
K.accumulate_csc(indptr, indices, data, cursor, 0, 2, q, n, 1)
""",
    "negative_indptr_middle_column": """
indptr = np.array([0, -(1 << 40), 2], np.int64)
indices = np.array([0, 1], np.int64); data = np.ones(2)
cursor = indptr[:-1].copy()
K.accumulate_csc(indptr, indices, data, cursor, 0, 2, q, n, 1)
""",
    "negative_indptr_int32": """
indptr = np.array([-(1 << 30), 1, 2], np.int32)
indices = np.array([0, 1], np.int32); data = np.ones(2)
cursor = indptr[:-1].copy()
K.accumulate_csc(indptr, indices, data, cursor, 0, 2, q, n, 1)
""",
    # a negative row index that is not the first entry of the block
    # (only indices[cursor] is compared with row_start)
    "negative_row_index_after_first": """
indptr = np.array([0, 2, 3], np.int64)
indices = np.array([0, -(1 << 40), 1], np.int64); data = np.ones(3)
cursor = indptr[:-1].copy()
K.accumulate_csc(indptr, indices, data, cursor, 0, 2, q, n, 1)
""",
}


@pytest.mark.parametrize("name", list(ACC_CRASH_CASES))
def test_accumulate_csc_corrupt_input_raises_not_crashes(name):
    code = _CHILD_PRELUDE + textwrap.dedent(ACC_CRASH_CASES[name]) + """
print("NO ERROR", n.tolist())
"""
    code = "try:\n" + textwrap.indent(code, "    ") + \
        "\nexcept ValueError as e:\n    print('VALUEERROR', e)\n"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, (f"child crashed with return code {res.returncode} "
                                 f"(signal {-res.returncode if res.returncode < 0 else None})")
    assert "VALUEERROR" in res.stdout, res.stdout


def test_mstep_errors():
    Z, L = 3, 12
    pi = np.full((Z, L), 1 / 3)
    ok = dict(n=np.ones((Z, L)), h=np.full((Z, L), 1 / 3), pi=pi.copy(), extent=(3, 4),
              window=(2, 2), rho=0.1, alpha=1e-10)
    K.mstep(**ok, num_threads=1)
    bad = [
        dict(n=np.ones((2, L))),
        dict(h=np.ones((Z, L + 1))),
        dict(pi=np.zeros((0, L))),
        dict(pi=np.full((Z, 11), 1 / 3)),
        dict(window=(3, 5)),
        dict(window=(2,)),
        dict(rho=-1.0),
        dict(alpha=-1e-10),
        dict(rho=np.nan),
        dict(n=np.ones((Z, L), np.float32)),
        dict(h=np.ones((Z, L), np.float32)),
    ]
    for change in bad:
        args = dict(ok, pi=pi.copy())
        args.update(change)
        with pytest.raises((ValueError, TypeError)):
            K.mstep(**args, num_threads=1)


# ----------------------------------------------------------------------------- 8. determinism
@dtype_p
def test_threads_bit_identical(dtype):
    """1 and 2 threads give bit-identical outputs for every kernel (inputs big
    enough that both threads get work: L = 600 > 2 * 256 column-sum chunks,
    N = 70 > 4 * 16 E-step rows)."""
    rng = np.random.default_rng(60)
    extent, window, Z, N = (24, 25), (5, 4), 9, 70
    L = grid_size(extent)
    pi = random_pi(rng, Z, L, dtype)
    C = random_counts(rng, N, Z, max_tokens=30)
    lp = random_log_prior(rng, L).astype(dtype)
    res = {}
    for nt in (1, 2):
        r = {}
        r["fwd"] = K.window_sum(pi, extent, window, False, 0.5, nt)
        r["bwd"] = K.window_sum(pi, extent, window, True, 1.0, nt)
        h, logh = run_histograms(pi, extent, window, nt)
        r["h"], r["logh"] = h, logh
        q, ll = run_estep(C, logh, dtype, np.int64, nt, lp, 1e-4 / L)
        r["q"], r["ll"] = q, ll
        q2, ll2 = run_posterior(log_scores_ref(C, logh), dtype, nt, None, 1e-4 / L)
        r["q2"], r["ll2"] = q2, ll2
        n, _, _ = run_accumulate(C, q, dtype, np.int32, nt, 32)
        r["n"] = n
        r["pi"] = run_mstep(n, h, pi, extent, window, 0.01, 1e-10, nt)
        res[nt] = r
    for key in res[1]:
        a, b = np.asarray(res[1][key]), np.asarray(res[2][key])
        assert a.tobytes() == b.tobytes(), key


# ----------------------------------------------------------------------------- 9. E-step tiles
# COUNTGRID_ESTEP_TILE (csrc/grid/grid_internal.h) tiles the positions of each block of 32
# documents; every mode must give the untiled bytes (each q[t, l] gets the same terms in
# the same order).  The kernel reads the variable on every call.
TILE_MODES = ["auto", "1", "7", "16", "100", "256", "1000"]


def _tile_case(rng, dtype, Z=300, N=75):
    """L = 1073 (29 x 37: no tile width divides it) and 75 documents (three blocks, the
    last one partial) with empty rows and rows of 1, 2 and 3 words; enough distinct words
    (Z = 300) that the automatic width (512 KiB budget) splits the rows."""
    L = 29 * 37
    logh = np.log(random_pi(rng, Z, L)).astype(dtype)
    C = random_counts(rng, N, Z, max_tokens=60, empty_rows=(0, 33, N - 1))
    for t, n_words in ((5, 1), (6, 2), (7, 3), (40, 1), (41, 2), (42, 3)):
        if t >= N:
            continue
        C[t] = 0
        C[t, rng.choice(Z, n_words, replace=False)] = rng.integers(1, 4, n_words)
    return C, logh


@pytest.mark.parametrize("tile", TILE_MODES)
@pytest.mark.parametrize("use_prior", [False, True], ids=["uniform", "prior"])
@index_p
@threads_p
@dtype_p
def test_estep_tiles_bit_identical(tile, use_prior, itype, nt, dtype, monkeypatch):
    rng = np.random.default_rng(90)
    C, logh = _tile_case(rng, dtype)
    L = logh.shape[1]
    lp = random_log_prior(rng, L).astype(dtype) if use_prior else None
    floor = 1e-3 / L if use_prior else 0.0
    csr = to_csr(C, dtype, itype)
    monkeypatch.setenv("COUNTGRID_ESTEP_TILE", "0")
    q0, ll0 = run_estep(C, logh, dtype, itype, 1, lp, floor, csr=csr)
    monkeypatch.setenv("COUNTGRID_ESTEP_TILE", tile)
    q1, ll1 = run_estep(C, logh, dtype, itype, nt, lp, floor, csr=csr)
    assert q1.tobytes() == q0.tobytes()
    assert ll1.tobytes() == ll0.tobytes()
    # and both are the E-step
    qref, llref = estep_ref(C, logh, lp, floor)
    assert_close(q1, qref, dtype, atol=1e-3 * rtol_of(dtype) / L)
    assert_close(ll1, llref, dtype, atol=ll_atol(dtype))


@pytest.mark.parametrize("tile", ["auto", "16"])
@pytest.mark.parametrize("block", [(0, 1), (3, 40), (31, 33), (74, 75), (10, 10)])
@threads_p
@dtype_p
def test_estep_tiles_row_blocks(tile, block, nt, dtype, monkeypatch):
    """A sub-range of rows (the 32-row blocks then start elsewhere) gives the untiled
    bytes of the full computation."""
    rng = np.random.default_rng(91)
    C, logh = _tile_case(rng, dtype)
    csr = to_csr(C, dtype, np.int64)
    monkeypatch.setenv("COUNTGRID_ESTEP_TILE", "0")
    q_full, ll_full = run_estep(C, logh, dtype, np.int64, 1, csr=csr)
    monkeypatch.setenv("COUNTGRID_ESTEP_TILE", tile)
    r0, r1 = block
    q, ll = run_estep(C, logh, dtype, np.int64, nt, row_start=r0, row_end=r1, csr=csr)
    assert q.tobytes() == q_full[r0:r1].tobytes()
    assert ll.tobytes() == ll_full[r0:r1].tobytes()


@pytest.mark.parametrize("value", ["", "abc", "-5", "12x", "AUTO"])
def test_estep_tile_bad_values_mean_untiled(value, monkeypatch):
    rng = np.random.default_rng(92)
    C, logh = _tile_case(rng, np.float64, Z=40, N=35)
    monkeypatch.setenv("COUNTGRID_ESTEP_TILE", "0")
    q0, ll0 = run_estep(C, logh, np.float64, np.int32, 1)
    monkeypatch.setenv("COUNTGRID_ESTEP_TILE", value)
    q1, ll1 = run_estep(C, logh, np.float64, np.int32, 2)
    assert q1.tobytes() == q0.tobytes() and ll1.tobytes() == ll0.tobytes()


@pytest.mark.parametrize("simd", ["baseline", "avx2", "avx512"])
@dtype_p
def test_estep_tiles_bit_identical_for_each_isa(simd, dtype, monkeypatch):
    """The tile boundaries move elements between the vector body and the scalar tail of
    the row kernels: each instruction set must still give the untiled bytes."""
    from countgrid import _kernels
    monkeypatch.setenv("COUNTGRID_SIMD", simd)
    if _kernels.simd_name() != simd:
        pytest.skip(f"{simd} is not available on this CPU/build")
    rng = np.random.default_rng(93)
    C, logh = _tile_case(rng, dtype)
    monkeypatch.setenv("COUNTGRID_ESTEP_TILE", "0")
    q0, ll0 = run_estep(C, logh, dtype, np.int32, 1)
    for tile in ("auto", "5", "24", "333"):
        monkeypatch.setenv("COUNTGRID_ESTEP_TILE", tile)
        q1, ll1 = run_estep(C, logh, dtype, np.int32, 2)
        assert q1.tobytes() == q0.tobytes(), tile
        assert ll1.tobytes() == ll0.tobytes(), tile


@pytest.mark.parametrize("tile", ["auto", "3"])
@pytest.mark.parametrize("name", list(ESTEP_BAD))
def test_estep_csr_value_errors_with_tiles(tile, name, monkeypatch):
    monkeypatch.setenv("COUNTGRID_ESTEP_TILE", tile)
    a = _estep_args(np.int32)
    _call_estep(dict(a))
    a.update(ESTEP_BAD[name](a))
    for key in ("indptr", "indices"):
        a[key] = np.ascontiguousarray(a[key], dtype=np.int32)
    with pytest.raises(ValueError):
        _call_estep(a)


@pytest.mark.parametrize("tile", ["0", "auto", "16"])
def test_estep_bad_index_in_a_late_row_of_a_block(tile, monkeypatch):
    """A word index out of range in the middle of a block (after rows whose words were
    marked for the automatic width): a ValueError, and the next call on valid input is
    still right (the marks were cleared)."""
    monkeypatch.setenv("COUNTGRID_ESTEP_TILE", tile)
    rng = np.random.default_rng(94)
    C, logh = _tile_case(rng, np.float64, Z=50, N=40)
    indptr, indices, data = to_csr(C, np.float64, np.int64)
    bad = indices.copy()
    bad[indptr[20] + 1] = 50
    q = np.empty((40, logh.shape[1]))
    with pytest.raises(ValueError):
        K.estep_csr(indptr, bad, data, 0, 40, logh, None, 0.0, q, np.empty(40), 1)
    q1, ll1 = run_estep(C, logh, np.float64, np.int64, 1, csr=(indptr, indices, data))
    qref, llref = estep_ref(C, logh)
    assert_close(q1, qref, np.float64, atol=1e-13 / logh.shape[1])


# ----------------------------------------------------------------------------- 10. top-k
def _posteriors(rng, N, L, dtype):
    """Posterior-like rows: peaked softmax rows, rows with exact ties (quantised values)
    and zeros, a uniform row (an empty document's posterior), a one-hot row, and bumps of
    10 and 40 distinct values above a floor every other entry equals (a fitted grid's
    posteriors; the kernel's path without selection when fewer than k are above it)."""
    Q = np.exp(3 * rng.standard_normal((N, L)))
    Q[1] = rng.integers(0, 4, L)                       # many ties, zeros
    Q[1, 0] = 1.0
    Q[2] = 1.0                                         # all equal
    Q[3] = 0.0
    Q[3, L // 2] = 1.0                                 # one-hot
    Q[4] = rng.integers(1, 3, L) * 0.25                # two values only
    for row, bump in ((5, min(L, 10)), (6, min(L, 40)))[:max(0, N - 5)]:
        Q[row] = 1e-3 / L
        Q[row, rng.choice(L, bump, replace=False)] = rng.random(bump) + 0.5
    Q /= Q.sum(axis=1, keepdims=True)
    return np.ascontiguousarray(Q.astype(dtype))


def _ks(L):
    return [1, 2, 3, L // 2, L - 1, L, L + 5]


@pytest.mark.parametrize("L", [1, 7, 64, 301])
@threads_p
@dtype_p
def test_topk_posterior_matches_reference(L, nt, dtype):
    rng = np.random.default_rng(100 + L)
    N = 40 if L > 1 else 3
    Q = _posteriors(rng, N, L, dtype) if L >= 5 else np.full((N, L), 1.0 / L, dtype)
    for k in sorted(set(max(1, k) for k in _ks(L))):
        idx, val = K.topk_posterior(Q, k, num_threads=nt)
        ridx, rval = topk_posterior_ref(Q, k)
        assert idx.dtype == np.int32 and val.dtype == dtype
        assert idx.shape == val.shape == (N, min(k, L))
        np.testing.assert_array_equal(idx, ridx, err_msg=f"k={k}")
        assert_close(val, rval, dtype, rtol=1e-12 if dtype == np.float64 else 2e-7)
        assert np.all(np.diff(idx, axis=1) > 0)              # ascending, distinct
        assert_close(val.astype(np.float64).sum(axis=1), np.ones(N), dtype,
                     rtol=1e-12 if dtype == np.float64 else 1e-5)


@dtype_p
def test_topk_posterior_ties_take_the_lower_position(dtype):
    q = np.array([[0.1, 0.2, 0.2, 0.1, 0.2, 0.2],
                  [0.25, 0.25, 0.25, 0.25, 0.0, 0.0],
                  [0.0, 0.0, 0.0, 0.0, 0.5, 0.5]], dtype=dtype)
    idx, val = K.topk_posterior(q, 3)
    np.testing.assert_array_equal(idx, [[1, 2, 4], [0, 1, 2], [0, 4, 5]])
    assert_close(val, [[1 / 3] * 3, [1 / 3] * 3, [0.0, 0.5, 0.5]], dtype)
    idx, val = K.topk_posterior(q, 1)
    np.testing.assert_array_equal(idx, [[1], [0], [4]])
    assert np.all(val == 1)


@pytest.mark.parametrize("k_extra", [0, 1, 1000])
@dtype_p
def test_topk_posterior_k_at_least_L_keeps_the_row(k_extra, dtype):
    rng = np.random.default_rng(101)
    Q = _posteriors(rng, 9, 50, dtype)
    idx, val = K.topk_posterior(Q, 50 + k_extra)
    assert idx.shape == (9, 50)
    np.testing.assert_array_equal(idx, np.broadcast_to(np.arange(50), (9, 50)))
    # the rows already sum to 1: renormalising changes them by rounding only
    assert_close(val, Q.astype(np.float64), dtype, rtol=1e-14 if dtype == np.float64 else 3e-7)


@dtype_p
def test_topk_posterior_renormalises_unnormalised_rows(dtype):
    """Any non-negative row with a positive entry: the kept values are rescaled to sum 1
    (and huge float64 rows do not overflow the sum)."""
    q = np.array([[3.0, 0.0, 1.0, 2.0], [1e300, 1e300, 1e300, 5.0], [0.0, 0.0, 0.0, 7.0]])
    if dtype == np.float32:
        q[1] = [3e38, 3e38, 3e38, 5.0]
    q = q.astype(dtype)
    idx, val = K.topk_posterior(q, 3)
    np.testing.assert_array_equal(idx, [[0, 2, 3], [0, 1, 2], [0, 1, 3]])
    assert_close(val, [[0.5, 1 / 6, 1 / 3], [1 / 3] * 3, [0, 0, 1]], dtype)


@dtype_p
def test_topk_posterior_threads_bit_identical(dtype):
    rng = np.random.default_rng(102)
    Q = _posteriors(rng, 301, 97, dtype)
    for k in (1, 10, 97):
        a = K.topk_posterior(Q, k, num_threads=1)
        b = K.topk_posterior(Q, k, num_threads=2)
        assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()


@dtype_p
def test_topk_posterior_in_place_outputs(dtype):
    rng = np.random.default_rng(103)
    Q = _posteriors(rng, 6, 20, dtype)
    idx = np.full((8, 4), -7, np.int32)
    val = np.full((8, 4), -7, dtype)
    ri, rv = K.topk_posterior(Q, 4, idx, val)
    assert ri is idx and rv is val
    np.testing.assert_array_equal(idx[:6], topk_posterior_ref(Q, 4)[0])
    assert np.all(idx[6:] == -7) and np.all(val[6:] == -7)     # rows beyond n untouched
    e_idx, e_val = K.topk_posterior(Q[:0], 4)
    assert e_idx.shape == (0, 4) and e_val.shape == (0, 4)


def _topk_bad_calls(dtype):
    q = np.full((3, 5), 0.2, dtype)
    other = np.float32 if dtype == np.float64 else np.float64

    def with_row(value, col=1):
        b = q.copy()
        b[1, col] = value
        return b
    return {
        "k=0": dict(k=0),
        "k<0": dict(k=-3),
        "nan": dict(q=with_row(np.nan)),
        "negative": dict(q=with_row(-1e-30)),
        "inf": dict(q=with_row(np.inf)),
        "nan_last": dict(q=with_row(np.nan, col=4)),
        "zero_row": dict(q=np.where(np.arange(3)[:, None] == 2, 0, q).astype(dtype)),
        "no_columns": dict(q=np.zeros((3, 0), dtype)),
        "idx_rows": dict(idx=np.zeros((2, 2), np.int32)),
        "idx_cols": dict(idx=np.zeros((3, 3), np.int32)),
        "idx_int64": dict(idx=np.zeros((3, 2), np.int64)),
        "idx_fortran": dict(idx=np.zeros((2, 3), np.int32).T),
        "val_cols": dict(val=np.zeros((3, 1), dtype)),
        "val_dtype": dict(val=np.zeros((3, 2), other)),
        "idx_readonly": dict(idx=np.zeros((3, 2), np.int32)),
    }


@pytest.mark.parametrize("name", list(_topk_bad_calls(np.float64)))
@dtype_p
def test_topk_posterior_errors(name, dtype):
    args = dict(q=np.full((3, 5), 0.2, dtype), k=2, idx=None, val=None)
    K.topk_posterior(**args)                                  # the valid call works
    args.update(_topk_bad_calls(dtype)[name])
    if name == "idx_readonly":
        args["idx"].setflags(write=False)
    with pytest.raises(ValueError):
        K.topk_posterior(args["q"], args["k"], args["idx"], args["val"], 1)


def run_accumulate_topk(C, idx, val, L, dtype, itype, nt, block, n0=None):
    N, Z = C.shape
    indptr, indices, data = to_csc(C, dtype, itype)
    cursor = indptr[:-1].copy()
    n = np.zeros((Z, L), dtype=dtype) if n0 is None else n0.astype(dtype).copy()
    for r0 in range(0, N, block):
        r1 = min(N, r0 + block)
        K.accumulate_csc_topk(indptr, indices, data, cursor, r0, r1,
                              np.ascontiguousarray(idx[r0:r1], np.int32),
                              np.ascontiguousarray(val[r0:r1], dtype), n, nt)
    return n, cursor, indptr


@pytest.mark.parametrize("block", [1, 7, 29, 100])
@pytest.mark.parametrize("k", [1, 3, 17, 30])
@index_p
@threads_p
@dtype_p
def test_accumulate_csc_topk_matches_reference(block, k, itype, nt, dtype):
    rng = np.random.default_rng(110)
    N, Z, L = 29, 13, 17
    C = random_counts(rng, N, Z, max_tokens=30, empty_rows=(0, 11))
    C[:, 4] = 0                                           # an empty column
    Q = _posteriors(rng, N, L, dtype)
    idx, val = K.topk_posterior(Q, k)
    n0 = rng.random((Z, L)).astype(dtype)
    n, cursor, indptr = run_accumulate_topk(C, idx, val, L, dtype, itype, nt, block, n0)
    ref = accumulate_topk_ref(C, idx, val, L)
    assert_close(n, n0.astype(np.float64) + ref, dtype)
    np.testing.assert_array_equal(cursor, indptr[1:])
    # the reference is C^T Q' for the sparse posteriors Q' made dense
    Qs = np.zeros((N, L))
    np.put_along_axis(Qs, idx.astype(np.int64), val.astype(np.float64), axis=1)
    np.testing.assert_allclose(ref, C.T @ Qs, rtol=1e-12, atol=1e-300)
    # the counts' mass is preserved: sum_k n[z, k] = sum_t c_tz
    np.testing.assert_allclose(ref.sum(axis=1), C.sum(axis=0), rtol=1e-5)


@index_p
@threads_p
@dtype_p
def test_accumulate_csc_topk_skips_zeros_bit_for_bit(itype, nt, dtype):
    """Zero values (most of a peaked posterior's k) are skipped: the same bits as adding
    them, whether a row holds none, some or only zeros, on any thread count."""
    rng = np.random.default_rng(113)
    N, Z, L, k = 60, 15, 40, 12
    C = random_counts(rng, N, Z, max_tokens=30, empty_rows=(5,))
    idx, val = K.topk_posterior(_posteriors(rng, N, L, dtype), k)
    val[rng.random(val.shape) < 0.6] = 0                 # zeros between the values
    val[7] = 0                                           # a row of zeros only
    val[9, -1] = 0                                       # ... and one at the end
    n, _, _ = run_accumulate_topk(C, idx, val, L, dtype, itype, nt, 13)
    ref = accumulate_topk_ref(C, idx, val, L)
    assert_close(n, ref, dtype)
    # the zeros' positions do not matter: moved to other valid positions, same bits
    idx2 = np.where(val == 0, (idx + 5) % L, idx).astype(np.int32)
    n2, _, _ = run_accumulate_topk(C, idx2, val, L, dtype, itype, 1, 13)
    np.testing.assert_array_equal(n, n2)


@index_p
@dtype_p
def test_accumulate_csc_topk_k_equal_L_is_the_dense_accumulation(itype, dtype):
    rng = np.random.default_rng(111)
    N, Z, L = 40, 9, 23
    C = random_counts(rng, N, Z, empty_rows=(3,))
    Q = _posteriors(rng, N, L, dtype)
    idx, val = K.topk_posterior(Q, L)
    n_topk, _, _ = run_accumulate_topk(C, idx, val, L, dtype, itype, 1, 16)
    n_dense, _, _ = run_accumulate(C, val, dtype, itype, 1, 16)
    assert_close(n_topk, n_dense.astype(np.float64), dtype)


@pytest.mark.parametrize("k", [1, 8, 600])
@dtype_p
def test_estep_topk_accumulate_pipeline(k, dtype):
    """E-step (with empty documents: uniform posteriors, all ties) -> top-k -> sparse
    accumulation, against the references of each step; 1 and 2 threads bit-identical."""
    rng = np.random.default_rng(112)
    extent, window, Z, N = (24, 25), (5, 4), 9, 70
    L = grid_size(extent)
    _, logh = histograms_ref(random_pi(rng, Z, L), extent, window)
    logh = logh.astype(dtype)
    C = random_counts(rng, N, Z, max_tokens=30, empty_rows=(2, 50))
    out = {}
    for nt in (1, 2):
        q, _ = run_estep(C, logh, dtype, np.int32, nt)
        idx, val = K.topk_posterior(q, k, num_threads=nt)
        n, _, _ = run_accumulate_topk(C, idx, val, L, dtype, np.int64, nt, 32)
        out[nt] = (idx, val, n)
    for a, b in zip(out[1], out[2]):
        assert a.tobytes() == b.tobytes()
    idx, val, n = out[1]
    ridx, rval = topk_posterior_ref(q, k)
    np.testing.assert_array_equal(idx, ridx)
    np.testing.assert_array_equal(idx[2], np.arange(min(k, L)))   # empty document: ties
    assert_close(n, accumulate_topk_ref(C, idx, val, L), dtype)


def _acc_topk_args(itype=np.int64, dtype=np.float64, k=2):
    a = _acc_args(itype, dtype)
    L = a["q"].shape[1]
    idx, val = K.topk_posterior(np.ascontiguousarray(
        np.random.default_rng(113).random((4, L)), dtype), k)
    del a["q"]
    return dict(a, idx=idx, val=val)


def _call_acc_topk(a):
    K.accumulate_csc_topk(a["indptr"], a["indices"], a["data"], a["cursor"], a["row_start"],
                          a["row_end"], a["idx"], a["val"], a["n"], a["num_threads"])


ACC_TOPK_BAD = {
    name: change for name, change in ACC_BAD.items()
    if not name.startswith("q_") and name not in ("row_before_start", "row_start_negative",
                                                  "no_cells")
}
ACC_TOPK_BAD.update({
    "row_before_start": lambda a: dict(row_start=1, idx=a["idx"][1:].copy(),
                                       val=a["val"][1:].copy()),
    "row_start_negative": lambda a: dict(row_start=-1),
    "no_cells": lambda a: dict(n=np.zeros((3, 0))),
    "idx_L": lambda a: dict(idx=_mod(a["idx"], (2, 1), 5)),
    "idx_negative": lambda a: dict(idx=_mod(a["idx"], (0, 0), -1)),
    "idx_int32_max": lambda a: dict(idx=_mod(a["idx"], (3, 1), 2**31 - 1)),
    "idx_int32_min": lambda a: dict(idx=_mod(a["idx"], (1, 0), -2**31)),
    "idx_unused_row": lambda a: dict(idx=_mod(a["idx"], (1, 1), 99)),   # row 1 is empty
    "idx_too_few_rows": lambda a: dict(idx=a["idx"][:3].copy()),
    "val_too_few_rows": lambda a: dict(val=a["val"][:3].copy()),
    "val_other_cols": lambda a: dict(val=np.ones((4, 3))),
    "idx_int64": lambda a: dict(idx=a["idx"].astype(np.int64)),
    "val_f32": lambda a: dict(val=a["val"].astype(np.float32)),
    "idx_fortran": lambda a: dict(idx=np.asfortranarray(np.zeros((4, 2), np.int32))),
})


@pytest.mark.parametrize("name", list(ACC_TOPK_BAD))
@index_p
def test_accumulate_csc_topk_errors(name, itype):
    a = _acc_topk_args(itype)
    _call_acc_topk(dict(a, cursor=a["cursor"].copy(), n=a["n"].copy()))   # valid call works
    a.update(ACC_TOPK_BAD[name](a))
    for key in ("indptr", "indices", "cursor"):
        a[key] = np.ascontiguousarray(a[key], dtype=itype)
    n_before = a["n"].copy()
    with pytest.raises((ValueError, TypeError)):
        _call_acc_topk(a)
    if name.startswith("idx_") and a["n"].shape == n_before.shape:
        # positions are checked before n is touched
        assert a["n"].tobytes() == n_before.tobytes()


@index_p
def test_accumulate_csc_topk_skipped_block_is_an_error(itype):
    rng = np.random.default_rng(114)
    N, Z, L = 9, 4, 5
    C = np.ones((N, Z))
    idx, val = K.topk_posterior(np.ascontiguousarray(rng.random((N, L))), 2)
    indptr, indices, data = to_csc(C, np.float64, itype)
    cursor = indptr[:-1].copy()
    n = np.zeros((Z, L))
    K.accumulate_csc_topk(indptr, indices, data, cursor, 0, 3, idx[0:3].copy(),
                          val[0:3].copy(), n, 1)
    with pytest.raises(ValueError):
        K.accumulate_csc_topk(indptr, indices, data, cursor, 6, 9, idx[6:9].copy(),
                              val[6:9].copy(), n, 1)


@pytest.mark.parametrize("name", list(ACC_CRASH_CASES))
def test_accumulate_csc_topk_corrupt_input_raises_not_crashes(name):
    case = ACC_CRASH_CASES[name].replace(
        "K.accumulate_csc(indptr, indices, data, cursor, 0, 2, q, n, 1)",
        "K.accumulate_csc_topk(indptr, indices, data, cursor, 0, 2, "
        "np.zeros((2, 3), np.int32), np.ones((2, 3)), n, 1)")
    assert "accumulate_csc_topk" in case
    code = _CHILD_PRELUDE + textwrap.dedent(case) + """
print("NO ERROR", n.tolist())
"""
    code = "try:\n" + textwrap.indent(code, "    ") + \
        "\nexcept ValueError as e:\n    print('VALUEERROR', e)\n"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, (f"child crashed with return code {res.returncode}")
    assert "VALUEERROR" in res.stdout, res.stdout
