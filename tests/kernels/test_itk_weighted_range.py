"""Weighted Jensen-Tsallis kernels on measures of any masses (issue 13, found by property
tests): every pair computed on a scale that suits it (docs/kernels.md, "Numerical range"),
against a 100-digit decimal reference."""
import math

import numpy as np
import pytest
import scipy.sparse as sp

from countgrid.kernels import jensen_tsallis_kernel, log_q
from _reference.itk import kernel_dec, relative_error_dec

QS = [1e-6, 0.5, 0.99, 1 - 1e-6, 1.0, 1 + 1e-6, 1.01, 1.25, 1.49, 1.5, 1.75, 2.0]
#: masses spread over (about) the whole range of each dtype, entries staying finite
EXPONENTS = {np.float32: 36, np.float64: 300}
LIMIT = {np.float32: 2e-6, np.float64: 1e-10}


def wide_rows(rng, n, d, dtype):
    X = rng.gamma(0.6, 1.0, size=(n, d)) * (rng.random((n, d)) > 0.3)
    X[:, 0] += 0.1                                   # every row has mass
    e = EXPONENTS[dtype]
    return (X * 10.0 ** rng.uniform(-e, e, size=(n, 1))).astype(dtype)


@pytest.mark.parametrize("q", QS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_weighted_kernels_of_any_masses_against_decimal(q, dtype, sparse):
    """Was: a light measure's diagonal -3.8e8 instead of ln_q 2 (q = 1.49), pairs beyond the
    float range set to 0 (q = 1e-6: 0.9986), a light measure on its heavy partner's scale
    accurate only to rounding of the heavy one (float64: -5.1e32 for 1.1e14)."""
    rng = np.random.default_rng(int(q * 1e6) % 997 + (0 if dtype == np.float32 else 1))
    A = wide_rows(rng, 6, 5, dtype)
    B = wide_rows(rng, 4, 5, dtype)
    conv = sp.csr_matrix if sparse else np.asarray
    tiny = np.finfo(dtype).tiny
    for weighted in ("A", "B"):
        for other, nt in ((None, 1), (None, 2), (B, 1), (B, 2)):
            ref = kernel_dec(A, other, q, weighted)
            top = max(abs(float(v)) for v in ref.ravel())
            with np.errstate(over="ignore"):    # fits: top rounds to a finite dtype value
                fits = bool(np.isfinite(np.asarray(top, dtype=dtype)))
            args = (conv(A), None if other is None else conv(other))
            if not fits:
                with pytest.raises(ValueError, match="exceeds the range"):
                    jensen_tsallis_kernel(*args, q=q, weighted=weighted, num_threads=nt)
                continue
            K = jensen_tsallis_kernel(*args, q=q, weighted=weighted, num_threads=nt)
            assert K.dtype == dtype
            err = relative_error_dec(K, ref, tiny)
            assert err < LIMIT[dtype], (weighted, nt, other is None, err)


@pytest.mark.parametrize("q", QS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_weighted_a_diagonal_is_ln_q_2_for_every_mass(q, dtype):
    # k^A_q(x, x) = ln_q 2 for a one-coordinate x of any mass; the shrunk example was
    # [[1e-50], [1.0]] at q = 1.49 (the light diagonal entry was -3.8e8)
    fi = np.finfo(dtype)
    X = np.array([[1e-50], [1.0], [fi.tiny], [fi.smallest_subnormal], [fi.max / 4],
                  [3.0], [7e-3]], dtype=dtype)
    X = X[X[:, 0] > 0]
    for nt in (1, 2):
        K = jensen_tsallis_kernel(X, q=q, weighted="A", num_threads=nt)
        np.testing.assert_allclose(np.diag(K), float(log_q(2.0, q)), rtol=LIMIT[dtype])
        # and on several coordinates: the diagonal of the rows alone
        Y = np.hstack([X, X * dtype(0.25), X * dtype(0.5)])
        Y = Y[(Y[:, 1] * 4 == Y[:, 0]) & (Y[:, 2] * 2 == Y[:, 0])]    # exact (no underflow)
        KY = jensen_tsallis_kernel(Y, q=q, weighted="A", num_threads=nt)
        ref = kernel_dec(Y[:1], None, q, "A")[0, 0]
        assert relative_error_dec(np.diag(KY)[:, None], np.full((len(Y), 1), ref, dtype=object),
                                  fi.tiny) < LIMIT[dtype]


@pytest.mark.parametrize("q", [1e-6, 0.01, 0.5, 1.0, 1.5, 2.0])
def test_masses_beyond_the_float_range_keep_the_kernel_psd(q):
    # the shrunk example: k^A_q(1e-300, 1e300) = (w_l/w_h)^q/(1 - q) + ..., 0.9986 at
    # q = 1e-6, was set to 0 and gave an eigenvalue of -0.41
    K = jensen_tsallis_kernel(np.array([[1e-300], [1e300], [1.0]]), q=q, weighted="A")
    ref = kernel_dec(np.array([[1e-300], [1e300], [1.0]]), None, q, "A")
    assert relative_error_dec(K, ref, np.finfo(np.float64).tiny) < 1e-12
    rng = np.random.default_rng(2)
    X = wide_rows(rng, 30, 6, np.float64)
    K = jensen_tsallis_kernel(X, q=q, weighted="A")
    w = np.linalg.eigvalsh(K)
    assert w.min() >= -1e-12 * w.max(), w.min() / w.max()


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("q", [0.3, 1.0, 1.375, 1.9])
@pytest.mark.parametrize("weighted", ["A", "B"])
def test_swapping_the_arguments_transposes(dtype, q, weighted):
    # shrunk example: float32, q = 1.375, K(A, B) returned but K(B, A) refused
    A = np.array([[0.6369617]], dtype=np.float32).astype(dtype)
    B = np.array([[7.00649232e-45], [2.69786725e+36]], dtype=np.float32).astype(dtype)
    rng = np.random.default_rng(3)
    for X, Y in ((A, B), (wide_rows(rng, 7, 4, dtype), wide_rows(rng, 5, 4, dtype))):
        try:
            K = jensen_tsallis_kernel(X, Y, q=q, weighted=weighted)
        except ValueError:
            with pytest.raises(ValueError, match="exceeds the range"):
                jensen_tsallis_kernel(Y, X, q=q, weighted=weighted)
            continue
        KT = jensen_tsallis_kernel(Y, X, q=q, weighted=weighted)
        np.testing.assert_allclose(KT, K.T, rtol=4 * np.finfo(dtype).eps,
                                   atol=np.finfo(dtype).tiny)
        ref = kernel_dec(X, Y, q, weighted)
        assert relative_error_dec(K, ref, np.finfo(dtype).tiny) < LIMIT[dtype]
    if q == 1.375 and weighted == "B":
        K = jensen_tsallis_kernel(A, B, q=q, weighted="B")
        assert math.isclose(float(K[0, 1]), 1.0715624e14, rel_tol=1e-6)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_wide_masses_are_thread_count_deterministic(sparse):
    rng = np.random.default_rng(4)
    X = wide_rows(rng, 40, 8, np.float64)
    conv = sp.csr_matrix if sparse else np.asarray
    for q in (0.5, 1.25):
        for weighted in ("A", "B"):
            try:
                K1 = jensen_tsallis_kernel(conv(X), q=q, weighted=weighted, num_threads=1)
            except ValueError:
                continue
            K2 = jensen_tsallis_kernel(conv(X), q=q, weighted=weighted, num_threads=2)
            np.testing.assert_array_equal(K1, K2)
            np.testing.assert_array_equal(K1, K1.T)
