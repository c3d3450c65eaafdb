"""The one container of validated count matrices, and the check behind it.

Every estimator of counts validates its input with :func:`check_counts` (through
:class:`Counts`): finite, non-negative numbers, 2-D, at least one row and column, the
expected number of features; sparse input of any scipy format becomes canonical CSR (sorted indices, no
explicit zeros or duplicates, int32/int64 indices) after its structure was checked
(countgrid._utils.sparse), so no kernel ever sees a corrupt index.  :class:`Counts` then serves the views the kernels need
(CSC for word-parallel M-steps, int64 index arrays, row totals), each built once.
"""
import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln

from countgrid._utils.sparse import to_checked_csr
from countgrid._utils.validation import as_numeric_array, check_real_dtype, check_sizes

__all__ = ["Counts", "check_counts", "sorted_csc"]


def _check_values(values, name, original=None):
    """Finite and non-negative; ``original`` is the input before the cast to ``values``'
    dtype, to tell "too large for float32" from "NaN or infinity in the input"."""
    if values.size == 0:
        return
    if not np.isfinite(values).all():
        if original is not None and np.isfinite(original).all():
            raise ValueError(f"{name} holds values too large for {values.dtype} "
                             f"(up to {np.max(np.abs(original))!r}); use dtype=numpy.float64")
        raise ValueError(f"{name} contains NaN or infinity")
    vmin = values.min()
    if vmin < 0:
        raise ValueError(f"Negative values in data passed to {name}: {name} must be "
                         f"non-negative counts, found {vmin!r}")


# A document's log-likelihood sum_w c_w ln p_w has |ln p_w| up to ~745 in float64, so
# longer documents would overflow it (and every score built on it): pLSA and the counting
# grids refuse them (docs/robustness.md).
MAX_DOCUMENT_LENGTH = 1e300


def check_document_lengths(counts, name="X"):
    """``counts`` (a :class:`Counts`) unless a row total exceeds MAX_DOCUMENT_LENGTH."""
    longest = float(np.max(counts.lengths)) if counts.n_samples else 0.0
    if not longest <= MAX_DOCUMENT_LENGTH:
        raise ValueError(f"{name} has a document of total count {longest:.4g}, beyond "
                         f"MAX_DOCUMENT_LENGTH = {MAX_DOCUMENT_LENGTH:g} (its "
                         "log-likelihood would overflow float64): rescale the counts")
    return counts


def check_counts(X, dtype, n_features=None, name="X", owner=None):
    """Validate a count matrix and return it as canonical CSR or dense C array.

    Returns ``(X, is_sparse)``: CSR with sorted indices, no explicit zeros,
    int32/int64 indices and ``dtype`` data; or a C-contiguous dense ``dtype``
    array.  Raises TypeError for non-numeric input and ValueError for wrong
    shapes, negative or non-finite values (countgrid._utils.validation.as_numeric_array and
    check_sizes; ``owner`` names the estimator in the feature-count message).
    """
    if sp.issparse(X):
        check_real_dtype(X.dtype, name)
        Xc = to_checked_csr(X, name)
        with np.errstate(over="ignore"):    # values too large for float32: named below
            raw, Xc.data = Xc.data, Xc.data.astype(dtype, copy=False)
        _check_values(Xc.data, name, raw)
        Xc.eliminate_zeros()
        X, is_sparse = Xc, True
    else:
        arr = as_numeric_array(X, name)
        with np.errstate(over="ignore"):    # values too large for float32: named below
            raw, arr = arr, np.ascontiguousarray(arr, dtype=dtype)
        _check_values(arr, name, raw)
        X, is_sparse = arr, False
    check_sizes(X.shape, name, n_features, owner)
    return X, is_sparse


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
    owner : str, optional
        Name of the estimator, for the feature-count message.
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

    def __init__(self, X, dtype, n_features=None, name="X", dense_min_density=None,
                 owner=None):
        X, is_sparse = check_counts(X, dtype, n_features=n_features, name=name, owner=owner)
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
