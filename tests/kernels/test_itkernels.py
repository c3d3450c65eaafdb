"""Jensen-Shannon / Jensen-Tsallis kernels against docs/kernels.md (definitions and
worked examples) and a slow NumPy reference, for dense and sparse input, float32 and
float64, 1 and 2 threads and every SIMD level."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import jensenshannon

from countgrid import _kernels
from countgrid.kernels import jensen_shannon_kernel, jensen_tsallis_kernel, log_q
from _reference.itk import kernel_ref

QS = [0.0, 0.25, 0.5, 1.0, 1.5, 1.75, 2.0]


def random_rows(rng, n, d, zeros=0.3, dtype=np.float64):
    X = rng.gamma(0.7, 1.0, size=(n, d))
    X[rng.random((n, d)) < zeros] = 0.0
    return X.astype(dtype)


# ------------------------------------------- docs/kernels.md, "Worked examples"
P = np.array([[0.5, 0.5, 0.0], [0.25, 0.25, 0.5]])
MU = np.array([[2.0, 1.0, 0.0], [0.0, 1.0, 3.0]])
TABLE_P = [  # q, k_JT = k^A, k^B, k^A(p1,p1), exp(-T_q)
    (0, 2, 2, 2, 2.7182818285),
    (0.5, 0.9647238196, 1.3643255096, 1.1715728753, 1.1460218619),
    (1, 0.4773856262, 0.9547712524, 0.6931471806, 0.8059274489),
    (1.5, 0.2417819582, 0.6838626490, 0.4142135624, 0.7089257525),
    (2, 0.125, 0.5, 0.25, 0.6872892788)]
TABLE_MU = [  # q, k^A(m1,m2), k^B(m1,m2), k^A(m1,m1), k^B(m1,m1)
    (0, 1, 1, 2, 2),
    (0.5, 0.4428129244, 1.1715728753, 1.1547005384, 2.8284271247),
    (1, 0.1980420516, 1.3862943611, 0.6931471806, 4.1588830834),
    (1.5, 0.0894617205, 1.6568542495, 0.4315964015, 6.3431457505),
    (2, 2 / 49, 2, 10 / 36, 10)]


@pytest.mark.parametrize("kind", ["dense", "csr", "f32"])
@pytest.mark.parametrize("row", TABLE_P, ids=lambda r: f"q{r[0]}")
def test_worked_example_probability_vectors(row, kind):
    q, kjt, kb, kpp, expt = row
    X = {"dense": P, "csr": sp.csr_matrix(P), "f32": P.astype(np.float32)}[kind]
    tol = 1e-9 if kind != "f32" else 2e-6
    K = jensen_tsallis_kernel(X, q=q)
    assert K[0, 1] == pytest.approx(kjt, abs=tol)
    assert K[0, 0] == pytest.approx(kpp, abs=tol)
    assert jensen_tsallis_kernel(X, q=q, weighted="B")[0, 1] == pytest.approx(kb, abs=tol)
    assert jensen_tsallis_kernel(X, q=q, exponentiated=True)[0, 1] == pytest.approx(expt, abs=5 * tol)


@pytest.mark.parametrize("kind", ["dense", "csr"])
@pytest.mark.parametrize("row", TABLE_MU, ids=lambda r: f"q{r[0]}")
def test_worked_example_unnormalised_measures(row, kind):
    q, ka, kb, ka11, kb11 = row
    X = MU if kind == "dense" else sp.csr_matrix(MU)
    A = jensen_tsallis_kernel(X, q=q, weighted="normalized")  # alias of "A"
    B = jensen_tsallis_kernel(X, q=q, weighted="unnormalized")  # alias of "B"
    assert A[0, 1] == pytest.approx(ka, abs=1e-9) and A[0, 0] == pytest.approx(ka11, abs=1e-9)
    assert B[0, 1] == pytest.approx(kb, abs=1e-9) and B[0, 0] == pytest.approx(kb11, abs=1e-9)


def test_js_worked_example_and_log_q_values():
    assert jensen_shannon_kernel(P)[0, 1] == pytest.approx(0.4773856262, abs=1e-10)
    for q, v in [(0, 1.0), (0.5, 0.8284271247), (1, 0.6931471806), (1.5, 0.5857864376), (2, 0.5)]:
        assert log_q(2.0, q) == pytest.approx(v, abs=1e-10)
    assert log_q(1.0, 1.7) == 0.0


# ----------------------------------------------------------------- reference checks
@pytest.mark.parametrize("num_threads", [1, 3])
@pytest.mark.parametrize("q", QS)
@pytest.mark.parametrize("weighted", [None, "A", "B"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_matches_reference(q, weighted, sparse, dtype, num_threads):
    rng = np.random.default_rng(int(q * 100) + 7)
    A = random_rows(rng, 9, 23, dtype=dtype)
    B = random_rows(rng, 6, 23, dtype=dtype)
    A[3] = 0.0  # a zero-mass row: zeros in K
    conv = sp.csr_matrix if sparse else (lambda M: M)
    rtol = 1e-10 if dtype == np.float64 else 2e-4
    for other in (None, B):
        K = jensen_tsallis_kernel(conv(A), None if other is None else conv(other), q=q,
                                  weighted=weighted, num_threads=num_threads)
        ref = kernel_ref(A, other, q, weighted)
        assert K.dtype == dtype
        np.testing.assert_allclose(K, ref, rtol=rtol, atol=rtol * np.abs(ref).max())
        assert not K[3].any()


@pytest.mark.parametrize("q", [0.5, 1.0, 1.5])
def test_exponentiated_matches_reference(q):
    rng = np.random.default_rng(3)
    A = random_rows(rng, 8, 15)
    for t in (0.5, 2.0):
        K = jensen_tsallis_kernel(A, q=q, exponentiated=True, t=t)
        np.testing.assert_allclose(K, kernel_ref(A, None, q, None, True, t), rtol=1e-10)


def test_js_equals_ln2_minus_scipy_js_divergence():
    rng = np.random.default_rng(4)
    A = random_rows(rng, 30, 40, zeros=0.0)
    B = random_rows(rng, 20, 40, zeros=0.0)
    K = jensen_shannon_kernel(A, B)
    D = np.array([[jensenshannon(a, b) ** 2 for b in B] for a in A])
    np.testing.assert_allclose(K, np.log(2) - D, rtol=0, atol=1e-12)


def test_identical_and_near_identical_rows_give_no_nan():
    rng = np.random.default_rng(5)
    p = rng.dirichlet(np.ones(50))
    X = np.stack([p, p, p * (1 + 1e-15), p + 1e-300])
    K = jensen_shannon_kernel(X)
    assert np.isfinite(K).all()
    np.testing.assert_allclose(K, np.log(2), rtol=1e-12)
    for q in QS:
        assert np.isfinite(jensen_tsallis_kernel(X, q=q)).all()


# ----------------------------------------------------------------- properties
@pytest.mark.parametrize("q", QS)
@pytest.mark.parametrize("weighted", [None, "A", "B"])
def test_symmetric_and_positive_semidefinite(q, weighted):
    rng = np.random.default_rng(6)
    A = random_rows(rng, 40, 12)
    K = jensen_tsallis_kernel(A, q=q, weighted=weighted)
    assert np.array_equal(K, K.T)
    eig = np.linalg.eigvalsh(K)
    assert eig.min() >= -1e-10 * np.trace(K)


def test_q_above_two_is_rejected_and_indeed_not_psd():
    # counterexample of docs/kernels.md, "Positive semi-definiteness": k^B_3 on {1}, {2}
    # has Gram [[3, 9], [9, 24]]
    assert np.linalg.eigvalsh(np.array([[3.0, 9.0], [9.0, 24.0]])).min() < 0
    with pytest.raises(ValueError, match="'q' parameter"):
        jensen_tsallis_kernel(np.ones((2, 2)), q=3.0)


def test_special_cases_boolean_and_linear():
    rng = np.random.default_rng(8)
    A = random_rows(rng, 10, 30)
    B = random_rows(rng, 7, 30)
    common = (A > 0).astype(float) @ (B > 0).astype(float).T
    np.testing.assert_array_equal(jensen_tsallis_kernel(A, B, q=0, weighted="B"), common)
    np.testing.assert_allclose(jensen_tsallis_kernel(A, B, q=2, weighted="B"), 2 * A @ B.T,
                               rtol=1e-13)
    # the general path agrees with the special ones at q -> 0 and q -> 2
    np.testing.assert_allclose(jensen_tsallis_kernel(A, B, q=1e-9, weighted="B"), common,
                               rtol=1e-6)
    np.testing.assert_allclose(jensen_tsallis_kernel(A, B, q=2 - 1e-9, weighted="B"),
                               2 * A @ B.T, rtol=1e-6)
    # the kernel is continuous at q = 1 (docs/kernels.md, "Numerical range")
    np.testing.assert_allclose(jensen_tsallis_kernel(A, B, q=1 + 1e-9), jensen_shannon_kernel(A, B),
                               rtol=1e-8)


def test_scale_invariance_of_a_and_homogeneity_of_b():
    rng = np.random.default_rng(9)
    A = random_rows(rng, 6, 10)
    for q in (0.5, 1.0, 1.5):
        np.testing.assert_allclose(jensen_tsallis_kernel(3 * A, q=q, weighted="A"),
                                   jensen_tsallis_kernel(A, q=q, weighted="A"), rtol=1e-10)
        np.testing.assert_allclose(jensen_tsallis_kernel(3 * A, q=q, weighted="B"),
                                   3 ** q * jensen_tsallis_kernel(A, q=q, weighted="B"),
                                   rtol=1e-10)
        assert (jensen_tsallis_kernel(A, q=q) >= -1e-15).all()  # k^A >= 0 on prob. vectors


@pytest.mark.parametrize("simd", ["baseline", "avx2", "avx512"])
def test_threads_and_simd_levels(simd, monkeypatch):
    monkeypatch.setenv("COUNTGRID_SIMD", simd)
    if _kernels.simd_name() != simd:
        pytest.skip(f"{simd} not available")
    rng = np.random.default_rng(10)
    A = random_rows(rng, 70, 300)  # several chunks of coordinates per pair
    for q in (0.5, 1.0, 1.5):
        K1 = jensen_tsallis_kernel(A, q=q, num_threads=1)
        K2 = jensen_tsallis_kernel(A, q=q, num_threads=2)
        assert np.array_equal(K1, K2)
        np.testing.assert_allclose(K1, kernel_ref(A, None, q), rtol=1e-10)


def test_dense_and_sparse_agree():
    rng = np.random.default_rng(11)
    A = random_rows(rng, 15, 50, zeros=0.8)
    for q in (0.25, 1.0, 1.75):
        np.testing.assert_allclose(jensen_tsallis_kernel(sp.csr_matrix(A), q=q),
                                   jensen_tsallis_kernel(A, q=q), rtol=1e-12)


# ----------------------------------------------------------------- errors
@pytest.mark.parametrize("bad,exc,match", [
    (np.array([[1.0, np.nan]]), ValueError, "NaN"),
    (np.array([[1.0, -1.0]]), ValueError, "non-negative"),
    (np.array([["a", "b"]]), TypeError, "real numbers"),
    (np.ones(3), ValueError, "2-D"),
])
def test_bad_input(bad, exc, match):
    with pytest.raises(exc, match=match):
        jensen_shannon_kernel(bad)


def test_bad_parameters():
    X = np.ones((2, 3))
    with pytest.raises(ValueError, match="features"):
        jensen_shannon_kernel(X, np.ones((2, 4)))
    with pytest.raises(ValueError, match="weighted"):
        jensen_tsallis_kernel(X, weighted="C")
    with pytest.raises(ValueError, match="probability vectors"):
        jensen_tsallis_kernel(X, weighted="A", exponentiated=True)
    with pytest.raises(ValueError, match="'t' parameter"):
        jensen_tsallis_kernel(X, exponentiated=True, t=0.0)
    with pytest.raises(ValueError, match="'q' parameter"):
        jensen_tsallis_kernel(X, q=-0.1)


def test_empty_inputs():
    assert jensen_shannon_kernel(np.zeros((0, 3))).shape == (0, 0)
    assert jensen_shannon_kernel(np.ones((2, 3)), np.zeros((0, 3))).shape == (2, 0)


# --------------- block sums (docs/topics.md, "Block structure and per-block kernel sums")
@pytest.mark.parametrize("q", [0.0, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("weighted", [None, "A", "B"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_block_sum_matches_sum_of_block_references(q, weighted, sparse, dtype):
    rng = np.random.default_rng(11)
    A = rng.random((7, 9)) * (rng.random((7, 9)) > 0.3)
    B = rng.random((5, 9)) * (rng.random((5, 9)) > 0.3)
    A[2, :4] = 0  # zero mass in the first block only
    blocks, weights = (4, 2, 3), (1.0, 0.5, 2.0)
    ref = sum(w * kernel_ref(A[:, a:a + b], B[:, a:a + b], q, weighted)
              for a, b, w in zip((0, 4, 6), blocks, weights))
    refsym = sum(w * kernel_ref(A[:, a:a + b], None, q, weighted)
                 for a, b, w in zip((0, 4, 6), blocks, weights))
    conv = (lambda M: sp.csr_matrix(M.astype(dtype))) if sparse else (lambda M: M.astype(dtype))
    tol = 2e-5 if dtype == np.float32 else 1e-12
    K = jensen_tsallis_kernel(conv(A), conv(B), q=q, weighted=weighted, blocks=blocks,
                              block_weights=weights, num_threads=2)
    assert K.dtype == dtype
    np.testing.assert_allclose(K, ref, rtol=tol, atol=tol)
    Ks = jensen_tsallis_kernel(conv(A), q=q, weighted=weighted, blocks=blocks,
                               block_weights=weights, num_threads=1)
    np.testing.assert_array_equal(Ks, Ks.T)
    np.testing.assert_allclose(Ks, refsym, rtol=tol, atol=tol)


def test_block_sum_is_psd_and_one_block_is_plain():
    rng = np.random.default_rng(12)
    A = rng.random((40, 12)) * (rng.random((40, 12)) > 0.5)
    for q in (0.0, 0.7, 1.0, 1.5, 2.0):
        K = jensen_tsallis_kernel(A, q=q, blocks=(3, 3, 6))
        assert np.linalg.eigvalsh(K).min() >= -1e-10 * np.trace(K)
        np.testing.assert_array_equal(jensen_tsallis_kernel(A, q=q, blocks=(12,)),
                                      jensen_tsallis_kernel(A, q=q))
    np.testing.assert_allclose(jensen_shannon_kernel(A, blocks=[6, 6]),
                               jensen_shannon_kernel(A[:, :6]) + jensen_shannon_kernel(A[:, 6:]),
                               rtol=1e-13, atol=1e-15)
    E = jensen_tsallis_kernel(A, q=1.5, exponentiated=True, blocks=(5, 7))
    assert np.linalg.eigvalsh(E).min() >= -1e-10 * np.trace(E)


@pytest.mark.parametrize("kw,exc,match", [
    (dict(blocks=(3, 3)), ValueError, "summing to n_features = 5"),
    (dict(blocks=(5, 0)), ValueError, "positive widths"),
    (dict(blocks=(2.5, 2.5)), TypeError, "blocks must be a sequence of ints"),
    (dict(blocks=(2, 3), block_weights=(1.0,)), ValueError, "one weight per block"),
    (dict(blocks=(2, 3), block_weights=(1.0, -1.0)), ValueError, "block_weights must be"),
    (dict(blocks=(2, 3), block_weights=(1.0, np.nan)), ValueError, "block_weights must be"),
    (dict(block_weights=(1.0,)), ValueError, "block_weights needs blocks"),
])
def test_bad_blocks(kw, exc, match):
    with pytest.raises(exc, match=match):
        jensen_tsallis_kernel(np.ones((2, 5)), **kw)
