"""The one check of sparse-matrix structure, for every scipy.sparse format.

scipy trusts the index arrays of a sparse matrix: converting a CSR/CSC/BSR whose indices
are out of range or whose ``indptr`` decreases, or a COO whose coordinates are out of
range, writes outside its buffers (a segfault or a corrupted heap), and the kernels would
read outside theirs.  :func:`to_checked_csr` validates the index arrays of the given
format *before* scipy converts anything, converts to CSR, validates the result again
(formats without a native check are caught there), and returns a canonical CSR matrix:
sorted indices, duplicates summed, int32 or int64 index arrays, data trimmed to ``nnz``.
Every entry point that takes a sparse matrix goes through it (via
:func:`countgrid._utils.counts.check_counts` or :func:`countgrid._utils.validation.check_matrix`).
"""
import numpy as np
import scipy.sparse as sp

from countgrid._utils.memory import check_memory

__all__ = ["to_checked_csr"]


def _corrupt(name, what):
    return ValueError(f"{name} is a corrupt sparse matrix: {what}")


def _index_array(a, name, label):
    a = np.asarray(a)
    if a.dtype.kind not in "iu" or a.ndim != 1:
        raise _corrupt(name, f"{label} must be a 1-D integer array, got dtype {a.dtype} "
                             f"and shape {a.shape}")
    return a


def _check_in_range(idx, bound, name, label):
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= bound):
        raise _corrupt(name, f"{label} outside [0, {bound})")


def _check_compressed(indptr, indices, data_len, n_major, n_minor, name):
    """indptr/indices of a CSR, CSC or BSR (in blocks) matrix; returns nnz."""
    indptr = _index_array(indptr, name, "indptr")
    indices = _index_array(indices, name, "indices")
    if indptr.shape[0] != n_major + 1:
        raise _corrupt(name, f"indptr has length {indptr.shape[0]}, expected {n_major + 1}")
    if indptr[0] != 0 or (n_major and (np.diff(indptr) < 0).any()):
        raise _corrupt(name, "indptr is not non-decreasing from 0")
    nnz = int(indptr[-1])
    if indices.shape[0] < nnz or data_len < nnz:
        raise _corrupt(name, f"indptr points past the end of indices ({indices.shape[0]}) "
                             f"or data ({data_len})")
    _check_in_range(indices[:nnz], n_minor, name, "indices")
    return nnz


def _check_shape(X, name):
    shape = X.shape
    if len(shape) != 2:
        raise ValueError(f"{name} must be 2-D, got {len(shape)}-D sparse input")
    if any(int(s) < 0 for s in shape):
        raise _corrupt(name, f"negative shape {shape}")
    return int(shape[0]), int(shape[1])


def _check_native(X, name, n, m):
    """Validate the format's own index arrays before scipy converts them."""
    fmt = X.format
    if fmt in ("csr", "csc"):
        n_major, n_minor = (n, m) if fmt == "csr" else (m, n)
        nnz = _check_compressed(X.indptr, X.indices, np.asarray(X.data).shape[0],
                                n_major, n_minor, name)
        return _trimmed(X, nnz)
    if fmt == "bsr":
        data = np.asarray(X.data)
        if data.ndim != 3:
            raise _corrupt(name, f"BSR data must be 3-D, got shape {data.shape}")
        r, c = data.shape[1:]
        if r < 1 or c < 1 or n % r or m % c:
            raise _corrupt(name, f"block size {(r, c)} does not divide the shape {(n, m)}")
        nnz = _check_compressed(X.indptr, X.indices, data.shape[0], n // r, m // c, name)
        return _trimmed(X, nnz)
    if fmt == "coo":
        coords = getattr(X, "coords", None) or (X.row, X.col)
        if len(coords) != 2:
            raise _corrupt(name, f"COO must have 2 coordinate arrays, got {len(coords)}")
        row = _index_array(coords[0], name, "row")
        col = _index_array(coords[1], name, "col")
        if not row.shape[0] == col.shape[0] == np.asarray(X.data).shape[0]:
            raise _corrupt(name, "row, col and data have different lengths")
        _check_in_range(row, n, name, "row indices")
        _check_in_range(col, m, name, "column indices")
        return X
    if fmt == "dia":
        data, offsets = np.asarray(X.data), _index_array(X.offsets, name, "offsets")
        if data.ndim != 2 or data.shape[0] != offsets.shape[0]:
            raise _corrupt(name, f"DIA data of shape {data.shape} does not match "
                                 f"{offsets.shape[0]} offsets")
        return X
    # lil, dok and future formats convert through pure Python/NumPy code that indexes
    # nothing by the stored values; their result is checked as CSR below.
    return X


def _trimmed(X, nnz):
    """The same matrix with index and data arrays cut to nnz (a view when possible)."""
    if X.indices.shape[0] == nnz and X.data.shape[0] == nnz:
        return X
    cls = type(X)
    return cls((X.data[:nnz], X.indices[:nnz], X.indptr), shape=X.shape, copy=False)


def to_checked_csr(X, name="X"):
    """A validated, canonical ``scipy.sparse.csr_matrix`` copy of any sparse matrix or array.

    Parameters
    ----------
    X : scipy sparse matrix or array, any format
    name : str
        Argument name used in error messages.

    Returns
    -------
    csr_matrix
        Sorted indices, summed duplicates, int32/int64 indices; never shares its arrays
        with ``X``.  Explicit zeros are kept (callers drop them after their value checks).

    Raises
    ------
    ValueError
        For a sparse matrix that is not 2-D or whose index arrays are inconsistent.
    """
    n, m = _check_shape(X, name)
    X = _check_native(X, name, n, m)
    # A huge row count with few stored values is legal for scipy (COO, CSC) but needs n + 1
    # row pointers here; other sizes are left to the estimators' own estimates and advice
    nnz_bound = int(getattr(X, "nnz", 0))
    if n > 4 * nnz_bound + 4096:
        check_memory((n + 1) * 8 + nnz_bound * 16,
                     f"{name} as CSR ({n} rows, {m} columns, {nnz_bound} stored values)",
                     f"pass {name} in blocks of rows")
    try:
        if X.format == "csr":
            csr = sp.csr_matrix((np.array(X.data), np.array(X.indices), np.array(X.indptr)),
                                shape=(n, m), copy=False)
        else:
            csr = sp.csr_matrix(X, copy=True)
    except (ValueError, TypeError, IndexError, OverflowError, MemoryError) as exc:
        if isinstance(exc, MemoryError):
            raise
        raise ValueError(f"{name} is not a valid sparse matrix: {exc}") from exc
    nnz = _check_compressed(csr.indptr, csr.indices, csr.data.shape[0], n, m, name)
    csr = _trimmed(csr, nnz)
    if csr.indices.dtype not in (np.int32, np.int64) or csr.indptr.dtype != csr.indices.dtype:
        itype = np.int64 if max(n, m, nnz) > np.iinfo(np.int32).max else np.int32
        csr = sp.csr_matrix((csr.data, csr.indices.astype(itype), csr.indptr.astype(itype)),
                            shape=(n, m), copy=False)
    csr.sum_duplicates()            # sorts the indices too
    return csr
