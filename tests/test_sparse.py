"""countgrid._utils.sparse.to_checked_csr: every scipy format in, canonical CSR out; corrupt
index arrays are named before scipy or a kernel touches them."""
import numpy as np
import pytest
import scipy.sparse as sp

from countgrid._utils.sparse import to_checked_csr

FORMATS = ["csr", "csc", "coo", "bsr", "dia", "lil", "dok"]


def _dense():
    rng = np.random.default_rng(0)
    A = rng.poisson(0.7, (6, 8)).astype(np.float64)
    A[2] = 0
    return A


@pytest.mark.parametrize("kind", ["matrix", "array"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_becomes_the_same_canonical_csr(fmt, kind):
    A = _dense()
    ctor = sp.csr_matrix if kind == "matrix" else sp.csr_array
    S = ctor(A).asformat(fmt)
    out = to_checked_csr(S)
    assert isinstance(out, sp.csr_matrix)
    assert out.has_canonical_format
    assert out.indices.dtype in (np.int32, np.int64) and out.indptr.dtype == out.indices.dtype
    np.testing.assert_array_equal(out.toarray(), A)


def test_duplicates_are_summed_and_input_is_not_shared():
    S = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([3, 1, 3]), np.array([0, 3, 3])),
                      shape=(2, 5))
    out = to_checked_csr(S)
    np.testing.assert_array_equal(out.toarray()[0], [0, 2, 0, 4, 0])
    out.data[:] = -1
    assert S.data.tolist() == [1.0, 2.0, 3.0]


def test_data_and_indices_longer_than_nnz_are_trimmed():
    S = sp.csr_matrix((np.array([1.0, 9.0]), np.array([0, 1]), np.array([0, 1])), shape=(1, 2))
    out = to_checked_csr(S)
    assert out.nnz == 1 and out.toarray().tolist() == [[1.0, 0.0]]


def _csr(data, indices, indptr, shape):
    S = sp.csr_matrix((3, 3))
    S.data, S.indices, S.indptr = (np.asarray(data, float), np.asarray(indices, np.int32),
                                   np.asarray(indptr, np.int32))
    S._shape = shape
    return S


CORRUPT = {
    "csr index too large": lambda: _csr([1, 1], [0, 7], [0, 1, 2], (2, 3)),
    "csr negative index": lambda: _csr([1, 1], [0, -1], [0, 1, 2], (2, 3)),
    "csr indptr decreasing": lambda: _csr([1, 1], [0, 1], [0, 2, 1], (2, 3)),
    "csr indptr not from 0": lambda: _csr([1, 1], [0, 1], [1, 1, 2], (2, 3)),
    "csr indptr too short": lambda: _csr([1, 1], [0, 1], [0, 2], (2, 3)),
    "csr indptr past data": lambda: _csr([1], [0, 1], [0, 1, 2], (2, 3)),
    "csc index too large": lambda: _bad_csc(),
    "coo row too large": lambda: _bad_coo(row=[0, 5]),
    "coo negative col": lambda: _bad_coo(col=[0, -2]),
    "bsr index too large": lambda: _bad_bsr(),
    "dia offsets mismatch": lambda: _bad_dia(),
    "float indices": lambda: _float_indices(),
}


def _bad_csc():
    S = sp.csc_matrix(np.eye(3))
    S.indices = np.array([0, 1, 9], dtype=S.indices.dtype)
    return S


def _bad_coo(row=(0, 1), col=(0, 1)):
    S = sp.coo_matrix(np.eye(3)[:2])
    S.row = np.asarray(row, dtype=np.int32)
    S.col = np.asarray(col, dtype=np.int32)
    return S


def _bad_bsr():
    S = sp.bsr_matrix(np.eye(4), blocksize=(2, 2))
    S.indices = np.array([0, 5], dtype=S.indices.dtype)
    return S


def _bad_dia():
    S = sp.dia_matrix(np.eye(3))
    S.offsets = np.array([0, 1], dtype=S.offsets.dtype)
    return S


def _float_indices():
    S = sp.csr_matrix(np.eye(3))
    S.indices = S.indices.astype(np.float64)
    return S


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_corrupt_structure_is_a_value_error_naming_the_argument(case):
    with pytest.raises(ValueError, match="Xq"):
        to_checked_csr(CORRUPT[case](), name="Xq")


def test_not_2d():
    v = sp.coo_array(np.array([1.0, 0.0, 2.0]))
    with pytest.raises(ValueError, match="2-D"):
        to_checked_csr(v)
