"""The row kernels exist once per instruction set (baseline, AVX2, AVX-512),
chosen at run time and capped by COUNTGRID_SIMD.  Every variant this CPU can
run must agree with the NumPy references, and the vectorised exp/log must be
accurate over their whole range."""
import numpy as np
import pytest
import scipy.sparse as sp

from countgrid import _kernels
from countgrid.grid import _wrappers as K

from _reference.grid import estep_ref, histograms_ref

LEVELS = ["baseline", "avx2", "avx512"]


@pytest.fixture(params=LEVELS)
def simd(request, monkeypatch):
    monkeypatch.setenv("COUNTGRID_SIMD", request.param)
    if _kernels.simd_name() != request.param:
        pytest.skip(f"{request.param} is not available on this CPU/build")
    return request.param


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_estep_matches_reference_for_each_isa(simd, dtype):
    rng = np.random.default_rng(3)
    Z, L, T = 13, 37, 9  # L not a multiple of any vector width: exercises the tails
    logh = np.ascontiguousarray(np.log(rng.dirichlet(np.ones(Z), size=L).T), dtype=dtype)
    C = sp.random(T, Z, density=0.4, random_state=4, format="csr",
                  data_rvs=lambda n: rng.integers(1, 4, n)).astype(dtype)
    q = np.empty((T, L), dtype)
    ll = np.empty(T)
    K.estep_csr(C.indptr, C.indices, C.data, 0, T, logh, None, 1e-4, q, ll, 1)
    q_ref, ll_ref = estep_ref(C.toarray(), logh.astype(np.float64), None, 1e-4)
    rtol = 1e-10 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(q, q_ref, rtol=rtol, atol=0)
    np.testing.assert_allclose(ll, ll_ref, rtol=rtol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_histograms_match_reference_for_each_isa(simd, dtype):
    rng = np.random.default_rng(5)
    pi = np.ascontiguousarray(rng.dirichlet(np.ones(7), size=30).T, dtype=dtype)
    h = np.empty_like(pi)
    logh = np.empty_like(pi)
    K.histograms(pi, (5, 6), (2, 3), h, logh, 1)
    h_ref, logh_ref = histograms_ref(pi.astype(np.float64), (5, 6), (2, 3))
    rtol = 1e-10 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(h, h_ref, rtol=rtol)
    np.testing.assert_allclose(logh, logh_ref, rtol=rtol)


@pytest.mark.parametrize("dtype,lo,rtol", [(np.float64, -700.0, 5e-15), (np.float32, -80.0, 5e-7)])
def test_exp_accuracy_over_its_range(simd, dtype, lo, rtol):
    # a two-position row [0, x] has posterior e^x / (1 + e^x) at position 1
    x = np.linspace(lo, 0.0, 20001)
    rows = np.zeros((x.size, 2), dtype)
    rows[:, 1] = x
    ll = np.empty(x.size)
    K.posterior(rows, None, 0.0, ll, 1)
    xd = rows.dtype.type(x).astype(np.float64)
    expect = np.exp(xd) / (1.0 + np.exp(xd))
    np.testing.assert_allclose(rows[:, 1], expect, rtol=rtol)
    np.testing.assert_allclose(ll, np.logaddexp(0.0, xd) - np.log(2.0), rtol=rtol, atol=rtol)


def test_exp_flushes_only_below_the_normal_range(simd):
    rows = np.array([[0.0, -707.0], [0.0, -720.0], [0.0, -np.inf]])
    ll = np.empty(3)
    K.posterior(rows, None, 0.0, ll, 1)
    assert rows[0, 1] == pytest.approx(np.exp(-707.0), rel=1e-13)
    assert rows[1, 1] == 0.0 and rows[2, 1] == 0.0
    assert np.all(np.isfinite(ll))


@pytest.mark.parametrize("dtype,lo,rtol", [(np.float64, -740.0, 5e-16), (np.float32, -100.0, 3e-7)])
def test_log_accuracy_over_its_range(simd, dtype, lo, rtol):
    # window 1: h = pi, so logh = log(pi), including subnormal inputs
    v = np.exp(np.linspace(lo, 0.0, 4000)).astype(dtype)
    v = np.concatenate([v, [np.finfo(dtype).tiny, 1.0, np.nextafter(dtype(1), dtype(0))]]).astype(dtype)
    pi = v[None, :].copy()
    h = np.empty_like(pi)
    logh = np.empty_like(pi)
    K.histograms(pi, (pi.shape[1],), (1,), h, logh, 1)
    expect = np.log(pi.astype(np.float64))
    np.testing.assert_allclose(logh[0], expect[0], rtol=rtol, atol=np.finfo(dtype).eps)


def test_log_of_zero_is_minus_inf(simd):
    pi = np.array([[0.0, 1.0, 0.5]])
    h = np.empty_like(pi)
    logh = np.empty_like(pi)
    K.histograms(pi, (3,), (1,), h, logh, 1)
    assert logh[0, 0] == -np.inf and logh[0, 1] == 0.0


def test_unknown_cap_means_best_available(monkeypatch):
    monkeypatch.delenv("COUNTGRID_SIMD", raising=False)
    best = _kernels.simd_name()
    monkeypatch.setenv("COUNTGRID_SIMD", "no-such-isa")
    assert _kernels.simd_name() == best
    assert best in LEVELS
