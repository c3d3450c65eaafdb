"""Checks and conversions shared by the estimators (dtypes, shapes, labels, random states,
fitted state).  Parameter constraints: countgrid._utils.param_validation; counts:
countgrid._utils.counts; threads: countgrid._utils.threads."""
import numbers
import warnings

import numpy as np
import scipy.sparse as sp

from countgrid._utils.sparse import to_checked_csr
from countgrid.exceptions import DataConversionWarning, not_fitted_error

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


def asarray_or_sparse(M, name):
    """``M`` unchanged if sparse or an ndarray, else ``numpy.asarray(M)``; a TypeError naming
    the argument when it cannot be converted (ragged lists)."""
    if sp.issparse(M) or isinstance(M, np.ndarray):
        return M
    try:
        return np.asarray(M)
    except (ValueError, TypeError) as exc:
        raise TypeError(f"{name} could not be converted to an array: {exc}") from None


def check_real_dtype(dtype, name):
    """Real numbers only, with scikit-learn's error conventions: complex numbers are a
    ValueError ("Complex data not supported"), any other non-numeric dtype a TypeError."""
    if dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {name} has dtype {dtype}")
    if dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {dtype}")


def as_real_array(X, name):
    """``numpy.asarray(X)`` holding real numbers, of any shape (the dtype side of the input
    rules, with scikit-learn's error conventions).

    Object arrays of numbers become float64; sparse input and anything else non-numeric is
    a TypeError, complex numbers a ValueError ("Complex data not supported").
    """
    if sp.issparse(X):
        raise TypeError(f"{name} must be a dense array; sparse input is not supported here")
    if isinstance(X, (str, bytes)):
        raise TypeError(f"{name} must be an array of numbers, got {type(X).__name__}")
    try:
        arr = np.asarray(X)
    except Exception as exc:  # noqa: BLE001 - ragged lists and exotic objects
        raise TypeError(f"{name} could not be converted to an array: {exc}") from exc
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must hold real numbers: {exc}") from None
    check_real_dtype(arr.dtype, name)
    return arr


def as_numeric_array(X, name):
    """:func:`as_real_array`, 2-D (the dense side of the input rules, with scikit-learn's
    error conventions so that its estimator checks recognise them): a 1-D or 3-D array is a
    ValueError that says how to reshape.
    """
    arr = as_real_array(X, name)
    if arr.ndim != 2:
        raise ValueError(
            f"Expected a 2-D array for {name} of shape (n_samples, n_features), got shape "
            f"{arr.shape}. Reshape your data with array.reshape(-1, 1) if it has a single "
            "feature or array.reshape(1, -1) if it is a single sample.")
    return arr


def check_sizes(shape, name, n_features=None, owner=None):
    """At least one sample and one feature, and ``n_features`` columns when given."""
    n, m = shape
    if n == 0:
        raise ValueError(f"Found array with 0 sample(s) (shape={shape}) while a minimum of 1 "
                         f"is required: {name} is empty")
    if m == 0:
        raise ValueError(f"{name} has 0 feature(s) (shape={shape}) while a minimum of 1 is "
                         "required.")
    if n_features is not None and m != n_features:
        raise ValueError(f"{name} has {m} features, but {owner or 'the model'} is expecting "
                         f"{n_features} features as input")


def check_matrix(M, name, dtype=None, nonnegative=False):
    """A 2-D matrix of finite real numbers (for vectors that are not counts: codes,
    embeddings, histograms).

    Sparse input of any scipy format becomes canonical CSR (a copy whose structure was
    checked by countgrid._utils.sparse: summed duplicates, sorted indices, explicit zeros
    removed), dense input a C-contiguous array; the dtype follows
    :func:`resolve_dtype`.  Raises TypeError for non-numeric input and ValueError for a
    wrong shape, NaN or infinity, and (``nonnegative=True``) negative values.
    """
    if sp.issparse(M):
        check_real_dtype(M.dtype, name)
        target = resolve_dtype(dtype, M)
        M = to_checked_csr(M, name)
        M.data = M.data.astype(target, copy=False)
        values = M.data
    else:
        M = as_numeric_array(M, name)
        M = np.ascontiguousarray(M, dtype=resolve_dtype(dtype, M))
        values = M
    if values.size and not np.isfinite(values).all():
        raise ValueError(f"{name} contains NaN or infinity")
    if nonnegative and values.size and values.min() < 0:
        raise ValueError(f"Negative values in data passed to {name}: {name} must be "
                         f"non-negative, found {values.min()!r}")
    if sp.issparse(M):
        M.eliminate_zeros()
    return M


def n_samples(X):
    """Number of rows of a matrix, sequence or array-like (before validation)."""
    if hasattr(X, "shape") and len(X.shape):
        return X.shape[0]
    try:
        return len(X)
    except TypeError:
        return np.shape(np.asarray(X))[0] if np.ndim(np.asarray(X)) else 0


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


def check_target(y, n_samples=None, name="y"):
    """``y`` as a 1-D array (a column vector is raveled with a DataConversionWarning), with
    ``n_samples`` entries when given."""
    if y is None:
        raise ValueError("This estimator requires y to be passed, but the target y is None")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn("A column-vector y was passed when a 1d array was expected; it is "
                      "used as y.ravel()", DataConversionWarning, stacklevel=3)
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{name} should be a 1d array, got shape {y.shape}")
    if y.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {name} has dtype {y.dtype}")
    if n_samples is not None and y.shape[0] != n_samples:
        raise ValueError(f"{name} has {y.shape[0]} entries but X has {n_samples} samples")
    return y


def check_real_target(y, n_samples=None, name="y"):
    """Regression targets: :func:`check_target`, then finite real numbers as float64
    (object arrays of numbers included)."""
    y = check_target(y, n_samples, name)
    kind = y.dtype
    try:
        y = y.astype(np.float64) if y.dtype.kind in "biufO" else None
    except (TypeError, ValueError):
        y = None
    if y is None:
        raise ValueError(f"{name} must hold real numbers (the regression targets), got {kind}")
    if not np.isfinite(y).all():
        raise ValueError(f"{name} contains NaN, infinity or missing values (None)")
    return y


def encode_labels(y, n_samples=None):
    """Class labels -> ``(classes, indices)``; at least two classes, 1-D.

    With ``n_samples`` the length of ``y`` is checked too (:func:`check_target`).  Labels
    keep their type: an object array of ints gives int ``classes`` (so ``predict``
    returns labels equal to ``y``'s), of strings str ones; labels of mixed types are a
    TypeError, NaN labels and non-integer floats (a regression target, "continuous" in
    scikit-learn's terms) a ValueError.
    """
    y = check_target(y, n_samples)
    if y.dtype.kind == "O":
        y = _object_labels(y)
    elif y.dtype.kind not in "biufUS":
        raise TypeError(f"y must hold class labels (numbers or strings), got dtype {y.dtype}")
    if y.dtype.kind == "f":
        if not np.isfinite(y).all():
            raise ValueError("y contains NaN or infinity")
        if (y != np.round(y)).any():
            raise ValueError("Unknown label type: continuous. y holds non-integer floats; a "
                             "classifier needs class labels (use a regressor for real "
                             "targets)")
    classes, idx = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(f"y has {len(classes)} class; at least 2 are needed")
    return classes, idx.reshape(-1)


def check_random_state(random_state, name="random_state"):
    """A numpy Generator from None, an int >= 0, a SeedSequence, a RandomState or a
    Generator; ``name`` is how errors name the argument (e.g. "sample(random_state)")."""
    what = "None, an int >= 0, a numpy SeedSequence, Generator or RandomState"
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state,
                                                                     (bool, np.bool_)):
        if random_state < 0:
            raise ValueError(f"{name} must be {what}, got {random_state!r}")
        return np.random.default_rng(int(random_state))
    raise TypeError(f"{name} must be {what}, got {random_state!r}")


def check_is_fitted(estimator, attribute):
    """Raise NotFittedError unless ``estimator`` has the fitted ``attribute``, and
    ValueError if a parameter that inference reads was changed since the fit
    (``BaseEstimator._check_inference_params``)."""
    if not hasattr(estimator, attribute):
        raise not_fitted_error(f"This {type(estimator).__name__} instance is not fitted yet; "
                              "call 'fit' first.")
    check = getattr(estimator, "_check_inference_params", None)
    if check is not None:
        check()
