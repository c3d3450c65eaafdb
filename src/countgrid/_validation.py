"""Checks and conversions shared by the estimators (dtypes, shapes, labels, random states,
fitted state).  Parameter constraints: countgrid._param_validation; counts:
countgrid._counts; threads: countgrid._threads."""
import numbers

import numpy as np
import scipy.sparse as sp

from countgrid._sparse import to_checked_csr
from countgrid.exceptions import NotFittedError

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


def resolve_dtype(dtype, X=None):
    """The one dtype rule of countgrid: the working precision is ``dtype`` when it is given
    (numpy.float32 or numpy.float64), otherwise the dtype of ``X`` when that is float32 or
    float64, otherwise float64.  Estimators with a ``dtype`` parameter default it to
    float64; functions and estimators without one follow their input."""
    if dtype is not None:
        return check_dtype(dtype)
    xdtype = getattr(X, "dtype", None)
    return np.dtype(xdtype) if xdtype in _FLOAT_DTYPES else np.dtype(np.float64)


def check_matrix(M, name, dtype=None, nonnegative=False):
    """A 2-D matrix of finite real numbers (for vectors that are not counts: codes,
    embeddings, histograms).

    Sparse input of any scipy format becomes canonical CSR (a copy whose structure was
    checked by countgrid._sparse: summed duplicates, sorted indices, explicit zeros
    removed), dense input a C-contiguous array; the dtype follows
    :func:`resolve_dtype`.  Raises TypeError for non-numeric input and ValueError for a
    wrong shape, NaN or infinity, and (``nonnegative=True``) negative values.
    """
    if sp.issparse(M):
        if M.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold real numbers, got dtype {M.dtype}")
        target = resolve_dtype(dtype, M)
        M = to_checked_csr(M, name)
        M.data = M.data.astype(target, copy=False)
        values = M.data
    else:
        M = np.asarray(M)
        if M.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold real numbers, got dtype {M.dtype}")
        if M.ndim != 2:
            raise ValueError(f"{name} must be a 2-D array of shape (n_samples, n_features), "
                             f"got shape {M.shape}")
        M = np.ascontiguousarray(M, dtype=resolve_dtype(dtype, M))
        values = M
    if values.size and not np.isfinite(values).all():
        raise ValueError(f"{name} contains NaN or infinity")
    if nonnegative and values.size and values.min() < 0:
        raise ValueError(f"{name} must be non-negative; found the value {values.min()!r}")
    if sp.issparse(M):
        M.eliminate_zeros()
    return M


def n_samples(X):
    """Number of rows of a matrix or sequence (before validation)."""
    return X.shape[0] if hasattr(X, "shape") else len(X)


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


def _object_labels(y):
    """An object array of labels as the array of their one type (str, int, float or bool)."""
    kinds = {"str": str, "bool": (bool, np.bool_), "int": numbers.Integral,
             "float": numbers.Real}
    for kind, types in kinds.items():
        if all(isinstance(v, types) for v in y):
            if kind in ("int", "float") and any(isinstance(v, (bool, np.bool_)) for v in y):
                continue
            try:
                return y.astype({"str": str, "bool": bool, "int": np.int64,
                                 "float": np.float64}[kind])
            except OverflowError:           # ints beyond int64 keep their Python ints
                return y
    found = sorted({type(v).__name__ for v in y})
    raise TypeError(f"y holds labels of several types ({', '.join(found)}); use one type")


def encode_labels(y, n_samples=None):
    """Class labels -> ``(classes, indices)``; at least two classes, 1-D.

    With ``n_samples`` the length of ``y`` is checked too.  Labels keep their type: an
    object array of ints gives int ``classes`` (so ``predict`` returns labels equal to
    ``y``'s), of strings str ones; labels of mixed types are a TypeError, NaN labels a
    ValueError.
    """
    if y is None:
        raise ValueError("y is required: the class labels of the samples")
    y = np.asarray(y)
    if n_samples is None:
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D, got shape {y.shape}")
    elif y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(f"y must be 1-D with {n_samples} entries, got shape {y.shape}")
    if y.dtype.kind == "O":
        y = _object_labels(y)
    elif y.dtype.kind not in "biufUS":
        raise TypeError(f"y must hold class labels (numbers or strings), got dtype {y.dtype}")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError("y contains NaN or infinity")
    classes, idx = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(f"y has {len(classes)} class; at least 2 are needed")
    return classes, idx.reshape(-1)


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
    """Raise NotFittedError unless ``estimator`` has the fitted ``attribute``, and
    ValueError if a parameter that inference reads was changed since the fit
    (``BaseEstimator._check_inference_params``)."""
    if not hasattr(estimator, attribute):
        raise NotFittedError(f"This {type(estimator).__name__} instance is not fitted yet; "
                             "call 'fit' first.")
    check = getattr(estimator, "_check_inference_params", None)
    if check is not None:
        check()
