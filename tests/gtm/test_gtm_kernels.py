"""C/OpenMP kernels of ZIPGTM (csrc/gtm.c) against slow NumPy references, in blocks of
any size, and the wrappers' checks of what they hand to C."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp

from countgrid.gtm import _wrappers
from _reference.gtm import accumulate_reference, estep_reference


def counts(n=40, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.poisson(rng.gamma(1.0, 1.5, size=(n, d))) * (rng.random((n, d)) < 0.4)
    X[:, 0] += 1
    return X.astype(np.float64)


def _random_csr(rng, n, d, density, data_dtype, index_dtype):
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.integers(1, 6, size=k).astype(np.float64))
    X.sort_indices()
    X.data = X.data.astype(data_dtype)
    X.indices = X.indices.astype(index_dtype)
    X.indptr = X.indptr.astype(index_dtype)
    return X


@pytest.mark.parametrize("num_threads", [1, 2])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("data_dtype", [np.float32, np.float64])
def test_estep_csr_matches_reference(data_dtype, index_dtype, num_threads):
    rng = np.random.default_rng(0)
    n, d, K = 37, 23, 11
    X = _random_csr(rng, n, d, 0.2, data_dtype, index_dtype)
    base = rng.normal(size=K)
    log_mix = np.log(rng.dirichlet(np.ones(K)))
    log_fact = rng.uniform(0, 3, size=n)
    deltaT = rng.normal(size=(d, K))
    etaT = rng.normal(size=(d, K))
    resp, ll = _wrappers.estep_csr(X.indptr, X.indices, X.data, d, base, log_mix, log_fact,
                                      deltaT, etaT, num_threads)
    ref_resp, ref_ll = estep_reference(X, base, log_mix, log_fact, deltaT, etaT)
    np.testing.assert_allclose(resp, ref_resp, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ll, ref_ll, rtol=1e-12)
    np.testing.assert_allclose(resp.sum(axis=1), 1.0, rtol=1e-13)
    # bit-identical whatever the thread count
    resp1, ll1 = _wrappers.estep_csr(X.indptr, X.indices, X.data, d, base, log_mix, log_fact,
                                        deltaT, etaT, 1)
    np.testing.assert_array_equal(resp, resp1)
    np.testing.assert_array_equal(ll, ll1)


@pytest.mark.parametrize("num_threads", [1, 2])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("data_dtype", [np.float32, np.float64])
def test_accumulate_csc_matches_reference(data_dtype, index_dtype, num_threads):
    rng = np.random.default_rng(1)
    n, d, K = 41, 19, 9
    X = _random_csr(rng, n, d, 0.25, data_dtype, index_dtype)
    C = X.tocsc()
    C.sort_indices()
    C.indices = C.indices.astype(index_dtype)
    C.indptr = C.indptr.astype(index_dtype)
    theta = rng.dirichlet(np.ones(K), size=n)
    RT, CT = _wrappers.accumulate_csc(C.indptr, C.indices, C.data, theta, num_threads)
    ref_R, ref_C = accumulate_reference(X, theta)
    np.testing.assert_allclose(RT, ref_R, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(CT, ref_C, rtol=1e-12, atol=1e-14)
    RT1, CT1 = _wrappers.accumulate_csc(C.indptr, C.indices, C.data, theta, 1)
    np.testing.assert_array_equal(RT, RT1)
    np.testing.assert_array_equal(CT, CT1)


def test_empty_rows_columns_and_impossible_rows():
    X = sp.csr_matrix(np.array([[0, 2, 0], [0, 0, 0], [1, 0, 3]], dtype=np.float64))
    K = 4
    base = np.zeros(K)
    log_mix = np.array([0.0, -np.inf, -1.0, -2.0])
    resp, ll = _wrappers.estep_csr(X.indptr, X.indices, X.data, 3, base, log_mix,
                                      np.zeros(3), np.zeros((3, K)), np.ones((3, K)), 2)
    assert resp[1, 1] == 0 and np.isfinite(ll).all()
    np.testing.assert_allclose(ll[1], logsumexp(log_mix))
    resp, ll = _wrappers.estep_csr(X.indptr, X.indices, X.data, 3, base,
                                      np.full(K, -np.inf), np.zeros(3), np.zeros((3, K)),
                                      np.ones((3, K)), 1)
    assert np.all(ll == -np.inf)
    np.testing.assert_allclose(resp, 0.25)
    C = X.tocsc()
    RT, CT = _wrappers.accumulate_csc(C.indptr, C.indices, C.data,
                                         np.full((3, K), 0.25), 1)
    np.testing.assert_allclose(RT[:, 0], [0.25, 0.5, 0.75])
    np.testing.assert_allclose(CT[:, 0], [0.25, 0.25, 0.25])


def test_bad_arguments_raise():
    X = sp.csr_matrix(np.eye(3))
    K = 2
    args = (X.indptr, X.indices, X.data, 3, np.zeros(K), np.zeros(K), np.zeros(3))
    with pytest.raises(ValueError, match="deltaT"):
        _wrappers.estep_csr(*args, np.zeros((2, K)), np.zeros((3, K)), 1)
    # the one thread rule of the kernels: num_threads <= 0 is the OpenMP default
    default = _wrappers.estep_csr(*args, np.zeros((3, K)), np.zeros((3, K)), 0)
    one = _wrappers.estep_csr(*args, np.zeros((3, K)), np.zeros((3, K)), 1)
    assert all(np.array_equal(a, b) for a, b in zip(default, one))
    bad = X.indices.copy()
    bad[1] = 7
    with pytest.raises(ValueError, match="out of range"):
        _wrappers.estep_csr(X.indptr, bad, X.data, 3, np.zeros(K), np.zeros(K), np.zeros(3),
                               np.zeros((3, K)), np.zeros((3, K)), 1)
    with pytest.raises(ValueError, match="out of range"):
        _wrappers.accumulate_csc(X.indptr, bad, X.data, np.zeros((2, K)), 1)


def test_wrappers_refuse_inconsistent_arrays():
    X = sp.csr_matrix(counts(6, 4))
    K = 3
    model = (np.zeros(K), np.zeros(K), np.zeros(6), np.zeros((4, K)), np.zeros((4, K)))
    # decreasing, not from 0, past the entries, jumping out and back
    for ptr in ([0, 2, 1, 4, 5, 6, 6], [1, 2, 3, 4, 5, 6, 6], [0, 1, 2, 3, 4, 5, 10**6],
                [0, 10**6, 2, 3, 4, 5, 6]):
        ptr = np.asarray(ptr, dtype=X.indptr.dtype)
        with pytest.raises(ValueError, match="indptr"):
            _wrappers.estep_csr(ptr, X.indices, X.data, 4, *model, 1)
        csc_ptr = np.r_[ptr[:4], ptr[-1]].astype(ptr.dtype)
        with pytest.raises(ValueError, match="indptr"):
            _wrappers.accumulate_csc(csc_ptr, X.indices, X.data, np.zeros((6, K)), 1)
    with pytest.raises(ValueError, match="log_fact"):
        _wrappers.estep_csr(X.indptr, X.indices, X.data, 4, np.zeros(K), np.zeros(K),
                               np.zeros(5), np.zeros((4, K)), np.zeros((4, K)), 1)
    with pytest.raises(ValueError, match="log_mix"):
        _wrappers.estep_csr(X.indptr, X.indices, X.data, 4, np.zeros(K), np.zeros(K + 1),
                               np.zeros(6), np.zeros((4, K)), np.zeros((4, K)), 1)
    with pytest.raises(ValueError, match="etaT"):
        _wrappers.estep_csr(X.indptr, X.indices, X.data, 4, *model[:4], np.zeros((4, 2)), 1)
    with pytest.raises(ValueError, match="different lengths"):
        _wrappers.estep_csr(X.indptr, X.indices[:-1], X.data, 4, *model, 1)
    with pytest.raises(ValueError, match="out of range"):       # n_features below an index
        _wrappers.estep_csr(X.indptr, X.indices, X.data, 2, *model[:3], np.zeros((2, K)),
                               np.zeros((2, K)), 1)
    C = X.tocsc()
    with pytest.raises(ValueError, match="out of range"):       # resp with too few rows
        _wrappers.accumulate_csc(C.indptr, C.indices, C.data, np.zeros((3, K)), 1)


@pytest.mark.parametrize("num_threads", [1, 2])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("data_dtype", [np.float32, np.float64])
def test_blocked_kernels_match_reference_bit_for_bit(data_dtype, index_dtype, num_threads):
    """One row (column) per block: the same bits as one call, and the references."""
    rng = np.random.default_rng(3)
    n, d, K = 29, 17, 7
    X = sp.random(n, d, density=0.3, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.integers(1, 6, size=k).astype(np.float64))
    X.data = X.data.astype(data_dtype)
    X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
    args = (rng.normal(size=K), np.log(rng.dirichlet(np.ones(K))), rng.uniform(0, 3, size=n),
            rng.normal(size=(d, K)), rng.normal(size=(d, K)))
    C = X.tocsc()
    C.sort_indices()
    C.indices, C.indptr = C.indices.astype(index_dtype), C.indptr.astype(index_dtype)
    theta = rng.dirichlet(np.ones(K), size=n)
    whole = (_wrappers.estep_csr(X.indptr, X.indices, X.data, d, *args, num_threads),
             _wrappers.accumulate_csc(C.indptr, C.indices, C.data, theta, num_threads))
    old = _wrappers.block_work(1)
    try:
        blocked = (_wrappers.estep_csr(X.indptr, X.indices, X.data, d, *args, num_threads),
                   _wrappers.accumulate_csc(C.indptr, C.indices, C.data, theta,
                                               num_threads))
    finally:
        _wrappers.block_work(old)
    for a, b in zip(whole, blocked):
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)
    resp, ll = estep_reference(X, *args)
    np.testing.assert_allclose(blocked[0][0], resp, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(blocked[0][1], ll, rtol=1e-12)
    for got, want in zip(blocked[1], accumulate_reference(X, theta)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
