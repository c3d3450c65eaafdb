"""Validated count matrices with the CSR and CSC views the sparse kernels need."""
import numpy as np
import scipy.sparse as sp

from countgrid._validation import check_counts


def sorted_csc(csr):
    """CSC copy of a canonical CSR matrix: sorted indices, the CSR's index dtype throughout."""
    csc = csr.tocsc()
    csc.sort_indices()
    itype = csr.indices.dtype
    if csc.indices.dtype != itype or csc.indptr.dtype != itype:
        csc.indices = csc.indices.astype(itype)
        csc.indptr = csc.indptr.astype(itype)
    return csc


class Counts:
    """A validated count matrix (:func:`~countgrid._validation.check_counts`).

    Sparse input stays canonical CSR; dense input becomes CSR unless ``dense_min_density``
    is given and the matrix is at least that dense (then it stays a C-contiguous array,
    for BLAS).  ``csc`` (built once, on first use) and ``lengths`` serve the column-wise
    kernels and the per-row totals.
    """

    def __init__(self, X, dtype, n_features=None, name="X", dense_min_density=None):
        X, is_sparse = check_counts(X, dtype, n_features=n_features, name=name)
        if not is_sparse and (dense_min_density is None
                              or np.count_nonzero(X) / X.size < dense_min_density):
            X, is_sparse = sp.csr_matrix(X), True
            X.sort_indices()
            if X.indices.dtype not in (np.int32, np.int64):
                X.indices = X.indices.astype(np.int64)
                X.indptr = X.indptr.astype(np.int64)
        self.X = X
        self.is_sparse = is_sparse
        self.dtype = np.dtype(dtype)
        self.n_samples, self.n_features = X.shape
        self._csc = None
        self._lengths = None

    @property
    def csr(self):
        if not self.is_sparse:
            raise AttributeError("dense counts have no CSR view")
        return self.X

    @property
    def csc(self):
        if self._csc is None:
            self._csc = sorted_csc(self.X)
        return self._csc

    @property
    def lengths(self):
        """Row totals ``n(d)`` (float64)."""
        if self._lengths is None:
            self._lengths = np.asarray(self.X.sum(axis=1), dtype=np.float64).ravel()
        return self._lengths
