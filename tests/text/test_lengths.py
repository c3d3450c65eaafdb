"""countgrid.text.cap_document_lengths: very long documents scaled down to a cap."""
import numpy as np
import pytest
import scipy.sparse as sp

from countgrid.text import cap_document_lengths


def test_long_rows_sum_to_the_cap_and_keep_their_proportions():
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(30, 50))
    X[3] *= 40
    X[7] = rng.poisson(20.0, size=50)
    lengths = X.sum(axis=1)
    C = cap_document_lengths(sp.csr_matrix(X), max_length=200).toarray()
    assert C.shape == X.shape and np.array_equal(C, np.rint(C))
    for i in range(30):
        if lengths[i] <= 200:
            np.testing.assert_array_equal(C[i], X[i])
        else:
            assert C[i].sum() == 200
            # largest remainders: every count within one token of its exact share
            share = X[i] * 200 / lengths[i]
            assert np.all(np.abs(C[i] - share) < 1.0)
            assert np.all(C[i][X[i] == 0] == 0)


def test_auto_cap_is_ten_medians():
    X = np.ones((9, 4), dtype=np.int64)          # length 4 each: median 4, cap 40
    X[0] = [100, 50, 25, 25]                     # length 200
    C = cap_document_lengths(X)
    np.testing.assert_array_equal(C[0].toarray(), [[20, 10, 5, 5]])
    np.testing.assert_array_equal(C[1:].toarray(), X[1:])


def test_dense_and_sparse_agree_and_ties_are_deterministic():
    X = np.array([[1, 1, 1, 0], [0, 0, 0, 0], [5, 5, 5, 5]])
    a = cap_document_lengths(X, max_length=2).toarray()
    b = cap_document_lengths(sp.csc_matrix(X), max_length=2).toarray()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, [[1, 1, 0, 0], [0, 0, 0, 0], [1, 1, 0, 0]])


@pytest.mark.parametrize("bad, err, match", [
    (0, ValueError, "max_length must be >= 1"),
    (-3, ValueError, "max_length must be >= 1"),
    (2.5, TypeError, "max_length"),
    (True, TypeError, "max_length"),
    ("median", ValueError, "max_length"),
])
def test_bad_max_length(bad, err, match):
    with pytest.raises(err, match=match):
        cap_document_lengths(np.ones((2, 2)), max_length=bad)


def test_bad_counts():
    with pytest.raises(ValueError, match="integer counts"):
        cap_document_lengths(np.array([[0.5, 1.0]]))
    with pytest.raises(ValueError, match="X"):
        cap_document_lengths(np.array([[-1, 1]]))
