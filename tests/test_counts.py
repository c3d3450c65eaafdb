"""The shared count-matrix holder (countgrid._utils.counts)."""
import numpy as np
import pytest
import scipy.sparse as sp

from countgrid._utils.counts import Counts, sorted_csc


@pytest.mark.parametrize("itype", [np.int32, np.int64])
def test_sorted_csc_keeps_index_dtype_and_values(itype):
    M = sp.random(30, 20, density=0.2, random_state=1, format="csr")
    M.indices, M.indptr = M.indices.astype(itype), M.indptr.astype(itype)
    C = sorted_csc(M)
    assert C.indices.dtype == itype and C.indptr.dtype == itype and C.has_sorted_indices
    np.testing.assert_array_equal(C.toarray(), M.toarray())


@pytest.mark.parametrize("density_cut,expect_sparse", [(None, True), (0.25, False), (0.99, True)])
def test_dense_input_kept_dense_only_above_the_cut(density_cut, expect_sparse):
    X = np.arange(12, dtype=np.float64).reshape(3, 4)  # 11 of 12 entries non-zero
    c = Counts(X, np.float32, dense_min_density=density_cut)
    assert c.is_sparse is expect_sparse and c.X.dtype == np.float32
    np.testing.assert_array_equal(c.lengths, X.sum(axis=1))
    if expect_sparse:
        np.testing.assert_array_equal(c.csc.toarray(), X)
        assert c.csr is c.X
    else:
        with pytest.raises(AttributeError, match="no CSR view"):
            c.csr


def test_validation_names_the_argument():
    with pytest.raises(ValueError, match="counts_in has 5 features"):
        Counts(np.ones((2, 5)), np.float64, n_features=4, name="counts_in")
    with pytest.raises(ValueError, match="non-negative|negative"):
        Counts(-np.ones((2, 2)), np.float64)
