"""Input validation shared by the estimators."""
import contextlib
import numbers
import os

import numpy as np
import scipy.sparse as sp

_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def check_dtype(dtype, name="dtype"):
    """The working float dtype (float32 or float64)."""
    if dtype is None:
        raise TypeError(f"{name} must be numpy.float32 or numpy.float64, got None")
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"{name} must be numpy.float32 or numpy.float64, got {dtype!r}") from exc
    if dt not in _FLOAT_DTYPES:
        raise ValueError(f"{name} must be numpy.float32 or numpy.float64, got {dt}")
    return dt


def check_shape_tuple(value, name, ndim=None):
    """A tuple of positive ints (a grid extent or window)."""
    if isinstance(value, numbers.Integral):
        value = (value,)
    try:
        tup = tuple(value)
    except TypeError as exc:
        raise TypeError(f"{name} must be a tuple of positive ints, got {value!r}") from exc
    if len(tup) == 0:
        raise ValueError(f"{name} must have at least one dimension")
    out = []
    for v in tup:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{name} must be a tuple of positive ints, got {value!r}")
        if v < 1:
            raise ValueError(f"{name} must be a tuple of positive ints, got {value!r}")
        out.append(int(v))
    if ndim is not None and len(out) != ndim:
        raise ValueError(f"{name} {tuple(out)} must have {ndim} dimensions")
    return tuple(out)


def check_grid(extent, window, name_window="window"):
    """Validated (extent, window) tuples: same length, 1 <= window <= extent."""
    extent = check_shape_tuple(extent, "extent")
    window = check_shape_tuple(window, name_window, ndim=len(extent))
    if len(extent) > 16:
        raise ValueError(f"extent has {len(extent)} dimensions; at most 16 are supported")
    if any(w > e for w, e in zip(window, extent)):
        raise ValueError(f"{name_window} {window} is larger than the grid extent {extent}")
    return extent, window


def resolve_num_threads(num_threads):
    """Thread count for the kernels: None = all cores (honours OMP_NUM_THREADS),
    n > 0 = n, n < 0 = cores + 1 + n."""
    from countgrid import _kernels

    if num_threads is None:
        return _kernels.max_threads()
    if isinstance(num_threads, (bool, np.bool_)) or not isinstance(num_threads, numbers.Integral):
        raise TypeError(f"num_threads must be None or an int, got {num_threads!r}")
    num_threads = int(num_threads)
    if num_threads == 0:
        raise ValueError("num_threads must not be 0 (use None for all cores)")
    if num_threads < 0:
        cores = os.cpu_count() or 1
        num_threads = max(1, cores + 1 + num_threads)
    return num_threads


@contextlib.contextmanager
def limit_blas_threads(num_threads, active=True):
    """Limit BLAS to ``num_threads`` inside the block (threadpoolctl, when installed).

    ``active=False`` leaves BLAS alone (e.g. on a sparse path that calls no BLAS).
    """
    if not active:
        yield
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: without it BLAS keeps its own setting
        yield
        return
    with threadpool_limits(limits=num_threads, user_api="blas"):
        yield


def encode_labels(y, n_samples=None):
    """Class labels -> ``(classes, indices)``; at least two classes, 1-D.

    With ``n_samples`` the length of ``y`` is checked too.  Object labels are compared
    as strings.
    """
    y = np.asarray(y)
    if n_samples is None:
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D, got shape {y.shape}")
    elif y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(f"y must be 1-D with {n_samples} entries, got shape {y.shape}")
    if y.dtype.kind == "O":
        y = y.astype(str)
    classes, idx = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(f"y has {len(classes)} class; at least 2 are needed")
    return classes, idx


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


def check_random_state(random_state):
    """A numpy Generator from None, an int, a SeedSequence or a Generator."""
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    if isinstance(random_state, (numbers.Integral, np.random.SeedSequence)) and not isinstance(
            random_state, (bool, np.bool_)):
        return np.random.default_rng(random_state)
    raise TypeError(f"random_state must be None, an int, a SeedSequence or a numpy Generator, "
                    f"got {random_state!r}")


def check_is_fitted(estimator, attribute):
    if not hasattr(estimator, attribute):
        from countgrid.exceptions import NotFittedError

        raise NotFittedError(f"This {type(estimator).__name__} instance is not fitted yet; "
                             "call 'fit' first.")
