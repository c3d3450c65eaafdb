"""The one container of validated count matrices, and the check behind it.

Every estimator of counts validates its input with :func:`check_counts` (through
:class:`Counts`): finite, non-negative numbers, 2-D, at least one row and column, the
expected number of features; sparse input becomes canonical CSR (sorted indices, no
explicit zeros or duplicates, int32/int64 indices) after its structure was checked, so no
kernel ever sees a corrupt index.  :class:`Counts` then serves the views the kernels need
(CSC for word-parallel M-steps, int64 index arrays, row totals), each built once.
"""
import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln

__all__ = ["Counts", "check_counts", "sorted_csc"]


def _check_values(values, name):
    if values.size == 0:
        return
    if not np.isfinite(values).all():
        raise ValueError(f"{name} contains NaN or infinity")
    vmin = values.min()
    if vmin < 0:
        raise ValueError(f"{name} must be non-negative counts; found the value {vmin!r}")


def check_counts(X, dtype, n_features=None, name="X", allow_empty_rows=True):
    """Validate a count matrix and return it as canonical CSR or dense C array.

    Returns ``(X, is_sparse)``: CSR with sorted indices, no explicit zeros,
    int32/int64 indices and ``dtype`` data; or a C-contiguous dense ``dtype``
    array.  Raises TypeError for non-numeric input and ValueError for wrong
    shapes, negative or non-finite values.
    """
    if sp.issparse(X):
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-D, got {X.ndim}-D")
        if X.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold real numbers, got dtype {X.dtype}")
        if X.format in ("csr", "csc"):
            # scipy converts without checking indices: check in the given orientation
            _check_compressed_structure(X, name)
        try:
            X = sp.csr_matrix(X)
        except Exception as exc:  # scipy raises assorted errors on corrupt input
            raise ValueError(f"{name} is not a valid sparse matrix: {exc}") from exc
        _check_compressed_structure(X, name)
        Xc = sp.csr_matrix((X.data.astype(dtype, copy=True), X.indices.copy(), X.indptr.copy()),
                           shape=X.shape)
        _check_values(Xc.data, name)
        Xc.eliminate_zeros()
        if not Xc.has_sorted_indices:
            Xc.sort_indices()
        Xc.sum_duplicates()
        if Xc.indices.dtype not in (np.int32, np.int64):
            Xc.indices = Xc.indices.astype(np.int64)
            Xc.indptr = Xc.indptr.astype(np.int64)
        X, is_sparse = Xc, True
    else:
        if isinstance(X, (str, bytes)):
            raise TypeError(f"{name} must be an array of counts, got {type(X).__name__}")
        try:
            arr = np.asarray(X)
        except Exception as exc:
            raise TypeError(f"{name} could not be converted to an array: {exc}") from exc
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a 2-D array of shape (n_samples, n_features), "
                             f"got shape {arr.shape}")
        arr = np.ascontiguousarray(arr, dtype=dtype)
        _check_values(arr, name)
        X, is_sparse = arr, False
    n, m = X.shape
    if n == 0:
        raise ValueError(f"{name} has 0 samples; at least one is required")
    if m == 0:
        raise ValueError(f"{name} has 0 features; at least one is required")
    if n_features is not None and m != n_features:
        raise ValueError(f"{name} has {m} features, but the model was fitted with {n_features}")
    return X, is_sparse


def _check_compressed_structure(X, name):
    """Catch corrupt CSR/CSC arrays before scipy or any kernel sees them."""
    n_major, n_minor = X.shape if X.format == "csr" else X.shape[::-1]
    indptr, indices = np.asarray(X.indptr), np.asarray(X.indices)
    what = f"{name} is a corrupt sparse matrix"
    if indptr.ndim != 1 or indptr.shape[0] != n_major + 1:
        raise ValueError(f"{what}: indptr has length {indptr.shape[0]}, expected {n_major + 1}")
    if indptr[0] != 0 or (np.diff(indptr) < 0).any():
        raise ValueError(f"{what}: indptr is not non-decreasing from 0")
    nnz = int(indptr[-1])
    if indices.shape[0] < nnz or np.asarray(X.data).shape[0] < nnz:
        raise ValueError(f"{what}: indptr points past the end of indices/data")
    if nnz and (indices[:nnz].min() < 0 or indices[:nnz].max() >= n_minor):
        raise ValueError(f"{what}: indices outside [0, {n_minor})")
    if indices.shape[0] != nnz or X.data.shape[0] != nnz:
        X.indices = indices[:nnz]
        X.data = X.data[:nnz]


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
    """A validated count matrix (:func:`check_counts`) with the views the kernels need.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    dtype : numpy.float32 or numpy.float64
        Working precision of the values.
    n_features : int, optional
        Required number of columns (a fitted model's ``n_features_in_``).
    name : str, default="X"
        Name of the argument in error messages.
    dense_min_density : float, optional
        Sparse input stays CSR.  Dense input becomes CSR, unless ``dense_min_density`` is
        given and the matrix has at least that fraction of non-zeros: then it stays a
        C-contiguous array (for BLAS paths).  0 keeps every dense input dense.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix or ndarray
    is_sparse : bool
    dtype : numpy.dtype
    n_samples, n_features : int
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
        self._int64 = None
        self._log_factorials = None

    @property
    def csr(self):
        """The canonical CSR matrix (sparse counts only)."""
        if not self.is_sparse:
            raise AttributeError("dense counts have no CSR view")
        return self.X

    @property
    def csc(self):
        """CSC copy with sorted row indices and the CSR's index dtype (built once)."""
        if self._csc is None:
            self._csc = sorted_csc(self.X)
        return self._csc

    @property
    def int64_arrays(self):
        """``(indptr, indices, data)`` of the CSR matrix with int64 index arrays (built once;
        no copy when the indices already are int64)."""
        if self._int64 is None:
            X = self.csr
            self._int64 = (np.ascontiguousarray(X.indptr, dtype=np.int64),
                           np.ascontiguousarray(X.indices, dtype=np.int64),
                           np.ascontiguousarray(X.data))
        return self._int64

    @property
    def lengths(self):
        """Row totals ``n(d)`` (float64)."""
        if self._lengths is None:
            self._lengths = np.asarray(self.X.sum(axis=1), dtype=np.float64).ravel()
        return self._lengths

    @property
    def log_factorials(self):
        """Row sums of ``log c!`` (float64): the count-only term of Poisson likelihoods."""
        if self._log_factorials is None:
            X = self.X
            if self.is_sparse:
                terms = sp.csr_matrix((gammaln(X.data.astype(np.float64) + 1.0), X.indices,
                                       X.indptr), shape=X.shape)
                self._log_factorials = np.asarray(terms.sum(axis=1), dtype=np.float64).ravel()
            else:
                self._log_factorials = gammaln(X.astype(np.float64) + 1.0).sum(axis=1)
        return self._log_factorials
