"""The IT kernels at the edges (issue 13): every sparse format and mixed sparse/dense pairs
against the dense result, the numerical range (rows of any finite magnitude, q near 1,
results beyond the float range), tiles and interrupts during large Gram matrices, memory
estimates, capped thread counts, dtypes and the smallest shapes.  Their answers to hostile
arguments (corrupt sparse structure, NaN, bad parameters, shapes and types): tests/hostile."""
import os
import signal
import threading
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid.kernels._it_kernels as itk
from countgrid.kernels import jensen_shannon_kernel, jensen_tsallis_kernel, log_q
from _reference.itk import kernel_dec, kernel_hp, relative_error_dec

QS = [0.0, 0.5, 1.0, 1.5, 2.0]
FORMATS = ["csr", "csc", "coo", "dia", "bsr", "lil", "dok"]


def random_rows(rng, n, d, zeros=0.3, dtype=np.float64):
    X = rng.gamma(0.7, 1.0, size=(n, d))
    X[rng.random((n, d)) < zeros] = 0.0
    return X.astype(dtype)


# ---------------------------------------------------------------- sparse formats
@pytest.mark.parametrize("fmt", FORMATS + ["csr_array", "coo_array"])
@pytest.mark.parametrize("q", [0.0, 0.6, 1.0, 2.0])
def test_every_sparse_format_equals_dense(fmt, q):
    rng = np.random.default_rng(1)
    A = random_rows(rng, 8, 6, zeros=0.5)
    B = random_rows(rng, 5, 6, zeros=0.5)
    if fmt.endswith("_array"):
        conv = getattr(sp, fmt)
    else:
        conv = lambda M: sp.csr_matrix(M).asformat(fmt)  # noqa: E731
    for weighted in (None, "A", "B"):
        dense = jensen_tsallis_kernel(A, B, q=q, weighted=weighted)
        np.testing.assert_allclose(jensen_tsallis_kernel(conv(A), conv(B), q=q, weighted=weighted),
                                   dense, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(jensen_tsallis_kernel(conv(A), q=q, weighted=weighted),
                                   jensen_tsallis_kernel(A, q=q, weighted=weighted),
                                   rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("q", [0.0, 0.3, 1.0, 1.7, 2.0])
@pytest.mark.parametrize("weighted", [None, "A", "B"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_mixed_sparse_dense_pairs_equal_the_dense_result(q, weighted, dtype, monkeypatch):
    rng = np.random.default_rng(2)
    A = random_rows(rng, 9, 7, zeros=0.5, dtype=dtype)
    B = random_rows(rng, 4, 7, zeros=0.5, dtype=dtype)
    dense = jensen_tsallis_kernel(A, B, q=q, weighted=weighted)
    # small sparse partners are densified: the all-dense result bit for bit
    np.testing.assert_array_equal(jensen_tsallis_kernel(sp.coo_matrix(A), B, q=q,
                                                        weighted=weighted), dense)
    np.testing.assert_array_equal(jensen_tsallis_kernel(A, sp.csc_matrix(B), q=q,
                                                        weighted=weighted), dense)
    # large ones make the dense partner sparse instead: equal up to rounding
    monkeypatch.setattr(itk, "_DENSIFY_BYTES", 0)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for K in (jensen_tsallis_kernel(sp.csr_matrix(np.vstack([A, A])), B, q=q,
                                    weighted=weighted)[:9],
              jensen_tsallis_kernel(A, sp.csr_matrix(np.vstack([B, B, B])), q=q,
                                    weighted=weighted)[:, :4]):
        assert K.dtype == dtype
        np.testing.assert_allclose(K, dense, rtol=tol, atol=tol * np.abs(dense).max())


# ---------------------------------------------------------------- values
@pytest.mark.parametrize("scale", [1e300, 1e308 / 3, 1e-300, 1e-320, 2.0 ** -1074 * 5])
@pytest.mark.parametrize("q", [0.0, 0.3, 1.0, 1.5, 2.0])
@pytest.mark.parametrize("sparse", [False, True])
def test_rows_of_any_magnitude_give_the_kernel_of_their_distribution(scale, q, sparse):
    """docs/kernels.md, "Numerical range": any finite row with a positive entry is its
    probability vector (sums of 1e308 rows overflowed to zero kernels, subnormal rows were
    rejected)."""
    rng = np.random.default_rng(3)
    X = random_rows(rng, 6, 5, zeros=0.3)
    X[:, 0] += 1.0
    X /= X.max()
    big = X * scale                          # rounded: subnormal rows lose digits
    # the same rows, multiplied by a power of two into the normal range (exact)
    exp = -np.frexp(big.max(axis=1))[1]
    normal = np.ldexp(big, exp[:, None])
    conv = sp.csr_matrix if sparse else np.asarray
    mixed = np.vstack([big[:3], X[3:]])
    for K, ref in [(jensen_tsallis_kernel(conv(big), q=q), jensen_tsallis_kernel(normal, q=q)),
                   (jensen_tsallis_kernel(conv(mixed), q=q),
                    jensen_tsallis_kernel(np.vstack([normal[:3], X[3:]]), q=q))]:
        assert np.isfinite(K).all()
        np.testing.assert_allclose(K, ref, rtol=1e-13, atol=1e-15)
        assert (np.diag(K) > 0).all()


def test_rows_of_any_magnitude_float32():
    rng = np.random.default_rng(4)
    X = random_rows(rng, 5, 6).astype(np.float32) + np.float32(0.5)
    for scale in (2.0 ** 120, 2.0 ** -100):
        S = (X * np.float32(scale)).astype(np.float32)   # exact: powers of two
        for q in (0.5, 1.0, 1.5):
            np.testing.assert_allclose(jensen_tsallis_kernel(S, q=q),
                                       jensen_tsallis_kernel(X, q=q), rtol=2e-6)


@pytest.mark.parametrize("q", [0.3, 1.0, 1.5, 2.0])
def test_weighted_kernels_across_magnitudes(q):
    rng = np.random.default_rng(5)
    X = random_rows(rng, 6, 5)
    X[:, 0] += 0.5
    # k^A_q is invariant to a common scale, k^B_q is homogeneous of degree q
    for e in (-1000, -600, 500, 1000):         # entries stay normal numbers
        S = np.ldexp(X, e)
        np.testing.assert_allclose(jensen_tsallis_kernel(S, q=q, weighted="A"),
                                   jensen_tsallis_kernel(X, q=q, weighted="A"), rtol=1e-12)
    np.testing.assert_allclose(jensen_tsallis_kernel(np.ldexp(X, 400), q=q, weighted="B"),
                               2.0 ** (400 * q) * jensen_tsallis_kernel(X, q=q, weighted="B"),
                               rtol=1e-12)
    # rows 2^600 apart: each pair is computed on its own scale; the diagonal is that of
    # the rows alone and nothing is NaN (was: 0/0)
    M = np.vstack([np.ldexp(X[:3], 300), np.ldexp(X[3:], -300)])
    KA = jensen_tsallis_kernel(M, q=q, weighted="A")
    assert np.isfinite(KA).all()
    np.testing.assert_allclose(np.diag(KA), np.diag(jensen_tsallis_kernel(X, q=q, weighted="A")),
                               rtol=1e-12)
    # true values ~ 2^(-600 min(q, 1)), computed in the log domain (were set to 0)
    ref = kernel_dec(M[:3], M[3:], q, "A")
    assert relative_error_dec(KA[:3, 3:], ref, np.finfo(np.float64).tiny) < 1e-12
    np.testing.assert_allclose(KA[:3, :3], jensen_tsallis_kernel(X[:3], q=q, weighted="A"),
                               rtol=1e-12)


def test_results_beyond_the_float_range_are_named():
    X = np.array([[1e308, 1e308, 0.0], [1.0, 1.0, 1.0]])
    with pytest.raises(ValueError, match="k\\^B_q .* exceeds the range of float64"):
        jensen_tsallis_kernel(X, q=1.5, weighted="B")
    with warnings.catch_warnings():      # a ValueError, not also an overflow warning
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match="exceeds the range of float32"):
            jensen_tsallis_kernel((X[1:] * 1e36).astype(np.float32), q=1.5, weighted="B")
    with pytest.raises(ValueError, match="exp\\(-t T_q\\) .* exceeds the range"):
        jensen_tsallis_kernel(X, q=0.5, exponentiated=True, t=1e300)
    # the normalised kernels of the same rows are fine
    assert np.isfinite(jensen_tsallis_kernel(X, q=1.5, weighted="A")).all()
    K = jensen_tsallis_kernel(X, q=1.5, exponentiated=True, t=1e300)   # T_q >= 0 at q >= 1
    assert np.isfinite(K).all() and K.max() <= 1.0


# ---------------------------------------------------------------- q near 1
Q_NEAR_ONE = [1 - 1e-8, 1 + 1e-8, 1 - 1e-6, 1 + 1e-6, 1 - 1e-4, 1 + 1e-4, 1 + 1e-12,
              0.5, 1.5, 2.0]


@pytest.mark.parametrize("q", Q_NEAR_ONE)
@pytest.mark.parametrize("weighted", [None, "A", "B"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_accuracy_near_q_one_against_long_double(q, weighted, sparse, dtype):
    """The q-power differences (s^q - x^q - y^q)/(q-1) cancel as q -> 1 (float32 was off by
    up to 1400 % at q = 1 - 1e-8, 38 % at 1 + 1e-6); the expm1 form is accurate to a few
    ulp of the working precision for every q."""
    rng = np.random.default_rng(int(abs(q - 1) * 1e9) % 1000 + 7)
    A = random_rows(rng, 7, 30, dtype=dtype)
    B = random_rows(rng, 5, 30, dtype=dtype)
    conv = sp.csr_matrix if sparse else np.asarray
    for other, nt in ((None, 1), (B, 2)):
        K = jensen_tsallis_kernel(conv(A), None if other is None else conv(other), q=q,
                                  weighted=weighted, num_threads=nt)
        ref = kernel_hp(A, other, q, weighted)
        err = np.abs(K.astype(np.longdouble) - ref) / np.abs(ref)
        limit = 5e-6 if dtype == np.float32 else 1e-13
        assert float(err.max()) < limit, float(err.max())


def test_log_q_near_one_and_edges():
    for q in (1 - 1e-9, 1 + 1e-12, 1 + 1e-6, 0.3, 1.7):
        exact = np.expm1((1 - np.longdouble(q)) * np.log(np.longdouble(2))) / (1 - np.longdouble(q))
        assert log_q(2.0, q) == pytest.approx(float(exact), rel=1e-15)
    assert log_q(2.0, 1.0) == np.log(2.0)
    assert log_q(0.0, 0.5) == -2.0 and log_q(0.0, 1.5) == -np.inf


# ---------------------------------------------------------------- tiles and interrupts
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("q", [0.5, 1.0, 1.3])
def test_tiles_are_bit_identical_to_one_call_whatever_the_threads(sparse, q, monkeypatch):
    rng = np.random.default_rng(8)
    A = random_rows(rng, 70, 23, zeros=0.4)
    B = random_rows(rng, 41, 23, zeros=0.4)
    conv = sp.csr_matrix if sparse else np.asarray
    monkeypatch.setattr(itk, "_TILE_WORK", 2 ** 40)
    whole = [jensen_tsallis_kernel(conv(A), q=q, num_threads=1),
             jensen_tsallis_kernel(conv(A), conv(B), q=q, num_threads=1)]
    monkeypatch.setattr(itk, "_TILE_WORK", 50)
    monkeypatch.setattr(itk, "_MIN_TILE", 6)
    assert itk._tile_shape(70, 70, 23.0, 1, True)[0] <= 8         # many tiles
    for nt in (1, 2, 3):
        tiled = [jensen_tsallis_kernel(conv(A), q=q, num_threads=nt),
                 jensen_tsallis_kernel(conv(A), conv(B), q=q, num_threads=nt)]
        np.testing.assert_array_equal(tiled[0], whole[0])
        np.testing.assert_array_equal(tiled[1], whole[1])
        np.testing.assert_array_equal(tiled[0], tiled[0].T)


def test_tile_shape_keeps_tiles_large():
    assert itk._tile_shape(10, 12, 5.0, 2, False) == (12, 12)          # one call
    r, c = itk._tile_shape(100000, 100000, 500.0, 1, True)
    assert r == c >= 64 and r * c * 500 <= 2 * itk._TILE_WORK
    r, c = itk._tile_shape(5000, 80000, 1e6, 4, False)
    assert r >= 64 and c >= 64


def _interrupted_after(seconds, fn):
    """Run fn with SIGINT sent after `seconds`; the elapsed time until KeyboardInterrupt."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    try:
        timer.start()
        fn()
    except KeyboardInterrupt:
        return time.perf_counter() - start
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    return None


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_ctrl_c_during_a_large_gram_matrix(sparse):
    """Ctrl-C was honoured only when the C call returned; the tiles check for it.  The
    Gram matrix is grown until it takes about a second on this machine."""
    rng = np.random.default_rng(9)
    n, full = 300, 0.0
    for _ in range(4):
        A = rng.random((n, 400)) * (rng.random((n, 400)) < (0.3 if sparse else 1.0))
        A = sp.csr_matrix(A) if sparse else A
        start = time.perf_counter()
        jensen_tsallis_kernel(A, q=1.3, num_threads=1)
        full = time.perf_counter() - start
        if full >= 1.0 or n >= 6000:
            break
        n = min(6000, int(n * np.sqrt(1.5 / max(full, 0.01))) + 1)
    if full < 0.5:
        pytest.skip(f"the largest Gram matrix took only {full:.2f} s on this machine")
    elapsed = _interrupted_after(0.1 * full,
                                 lambda: jensen_tsallis_kernel(A, q=1.3, num_threads=1))
    assert elapsed is not None, "the Gram matrix finished without KeyboardInterrupt"
    assert elapsed < 0.5 * full, (elapsed, full)


# ---------------------------------------------------------------- sizes
def test_gram_beyond_the_available_memory_is_a_memory_error(monkeypatch):
    monkeypatch.setenv("COUNTGRID_MAX_MEMORY", "1M")
    A = sp.random(3000, 10, density=0.3, format="csr", random_state=0)
    with pytest.raises(MemoryError, match="3000 x 3000 kernel Gram matrix.*fewer rows"):
        jensen_tsallis_kernel(A)
    with pytest.raises(MemoryError, match="3000 x 2000"):
        jensen_shannon_kernel(A, A[:2000])
    monkeypatch.setenv("COUNTGRID_MAX_MEMORY", "1T")
    assert jensen_shannon_kernel(A[:5]).shape == (5, 5)


def test_densifying_a_sparse_partner_checks_memory(monkeypatch):
    monkeypatch.setattr(itk, "_DENSIFY_BYTES", 2 ** 40)
    monkeypatch.setenv("COUNTGRID_MAX_MEMORY", "64K")
    A = sp.random(2, 5000, density=0.01, format="csr", random_state=0)
    with pytest.raises(MemoryError, match="densifying the sparse A"):
        jensen_shannon_kernel(A, np.ones((1, 5000)))


# ---------------------------------------------------------------- threads, dtypes, shapes
# (refused thread counts, shapes and types: tests/hostile)
@pytest.mark.parametrize("nt", [10 ** 6, 2 ** 40])
def test_absurd_thread_counts_are_capped(nt):
    rng = np.random.default_rng(10)
    X = random_rows(rng, 9, 5)
    with pytest.warns(RuntimeWarning, match="capped"):
        K = jensen_tsallis_kernel(X, q=0.7, num_threads=nt)
    np.testing.assert_array_equal(K, jensen_tsallis_kernel(X, q=0.7, num_threads=1))


@pytest.mark.parametrize("dtype,out", [(np.float32, np.float32), (np.float64, np.float64),
                                       (np.int64, np.float64), (np.int8, np.float64),
                                       (bool, np.float64), (np.float16, np.float64)])
def test_dtypes(dtype, out):
    X = np.array([[1, 2, 0], [0, 1, 1]]).astype(dtype)
    for q in (0.0, 1.0, 1.5):
        K = jensen_tsallis_kernel(X, q=q)
        assert K.dtype == out
        np.testing.assert_allclose(K, jensen_tsallis_kernel(X.astype(np.float64), q=q),
                                   rtol=1e-6)
    assert jensen_tsallis_kernel(X.astype(np.float32), X.astype(np.float64)).dtype == np.float64


def test_small_shapes():
    assert jensen_shannon_kernel(np.zeros((0, 3))).shape == (0, 0)
    assert jensen_shannon_kernel(sp.csr_matrix((0, 3))).shape == (0, 0)
    assert jensen_shannon_kernel(np.ones((2, 3)), sp.csr_matrix((0, 3))).shape == (2, 0)
    np.testing.assert_array_equal(jensen_shannon_kernel(np.ones((2, 0))), np.zeros((2, 2)))
    np.testing.assert_allclose(jensen_shannon_kernel(np.ones((1, 1))), [[np.log(2)]])
    np.testing.assert_allclose(jensen_tsallis_kernel([[3.0]], [[5.0]], q=1.5, weighted="B"),
                               [[(8 ** 1.5 - 3 ** 1.5 - 5 ** 1.5) / 0.5]], rtol=1e-14)
    with pytest.raises(ValueError, match="A has 3 features but B has 2"):
        jensen_shannon_kernel(np.ones((1, 3)), np.ones((1, 2)))
