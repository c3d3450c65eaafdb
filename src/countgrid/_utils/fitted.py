"""Checks of fitted attributes against each other, for ``_check_fitted_state`` methods.

``countgrid.io.load`` calls an estimator's ``_check_fitted_state()`` after restoring its
attributes from a file, so that a damaged or crafted file cannot hand a kernel arrays whose
sizes disagree (docs/architecture.md, "Model files"), or values that no fit produces (a
probability table that is not a distribution: all zeros gave scores of -inf).  The helpers
raise ValueError naming the attribute.
"""
import numbers

import numpy as np

__all__ = ["fitted_array", "fitted_int", "fitted_real", "fitted_bool", "fitted_labels",
           "fitted_distribution", "check_distribution", "distribution_tolerance",
           "array", "scalar", "check_declared"]


def fitted_array(est, name, shape=None, ndim=None, float_only=True, finite=True,
                 nonnegative=False, optional=False):
    """The array attribute ``name``, checked; ``shape`` entries may be None (any size).

    Returns None for a missing ``optional`` attribute."""
    if not hasattr(est, name):
        if optional:
            return None
        raise ValueError(f"{name} is missing")
    arr = getattr(est, name)
    if not isinstance(arr, np.ndarray):
        raise ValueError(f"{name} must be an array, got {type(arr).__name__}")
    kinds = "f" if float_only else "biuf"
    if arr.dtype.kind not in kinds or (float_only and arr.dtype not in (np.float32,
                                                                         np.float64)):
        raise ValueError(f"{name} has the dtype {arr.dtype}")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and a != s
                                         for a, s in zip(arr.shape, shape)):
            want = tuple("any" if s is None else s for s in shape)
            raise ValueError(f"{name} has shape {arr.shape}, expected {want}")
    if finite and arr.size and not np.isfinite(arr).all():
        raise ValueError(f"{name} holds NaN or infinity")
    if nonnegative and arr.size and np.nanmin(arr) < 0:
        raise ValueError(f"{name} holds negative values")
    return arr


def fitted_int(est, name, low=0, high=None):
    """The integer attribute ``name`` in ``[low, high]``."""
    value = getattr(est, name, None)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} = {value} is outside [{low}, {high}]")
    return int(value)


def fitted_real(est, name, low=None, high=None):
    """The finite real attribute ``name`` in ``[low, high]``."""
    value = getattr(est, name, None)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) \
            or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} = {value} is outside [{low}, {high}]")
    return float(value)


def fitted_bool(est, name):
    value = getattr(est, name, None)
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a bool, got {value!r}")
    return bool(value)


def fitted_labels(est, name="classes_", min_classes=2):
    """Sorted, distinct class labels (numbers or strings)."""
    if not hasattr(est, name):
        raise ValueError(f"{name} is missing")
    classes = getattr(est, name)
    if not isinstance(classes, np.ndarray) or classes.ndim != 1 \
            or classes.dtype.kind not in "biufU":
        raise ValueError(f"{name} must be a 1-D array of labels")
    if classes.shape[0] < min_classes:
        raise ValueError(f"{name} holds {classes.shape[0]} labels, at least {min_classes} "
                         "are needed")
    if classes.shape[0] > 1 and not (classes[1:] > classes[:-1]).all():
        raise ValueError(f"{name} is not sorted and distinct")
    return classes


def distribution_tolerance(n_terms, dtype):
    """How far from 1 the sum of a normalised slice of ``n_terms`` entries may be:
    ``8 (n_terms + 16) eps`` of ``dtype``, the precision it was normalised in (a float32
    model's rows are normalised with float32 sums, whose rounding grows with their length;
    the deviations of fitted models are below a tenth of this), and at least ``sqrt(eps)``
    (1.5e-8 in float64, 3.5e-4 in float32), so that a table rescaled by ``1 + 1e-12``
    still loads: the check is there to refuse tables that are no distributions (zeros,
    negative entries, rows summing to 0.5), not rounding."""
    eps = float(np.finfo(dtype).eps)
    return max(8.0 * (int(n_terms) + 16) * eps, eps ** 0.5)


def check_distribution(name, arr, axis=-1, precision=None):
    """Raise ValueError naming ``name`` unless every slice of ``arr`` along ``axis`` (an int,
    a tuple, or None: the whole array) is a probability distribution: non-negative entries
    (NaN and infinity are refused by :func:`fitted_array` first) summing to 1 within
    :func:`distribution_tolerance` of ``precision`` (default: ``arr``'s dtype).  So no
    slice is all zero."""
    arr = np.asarray(arr)
    if arr.size == 0:
        return
    if arr.size and np.nanmin(arr) < 0:
        raise ValueError(f"{name} holds negative values; it must hold probabilities")
    sums = np.asarray(arr.sum(axis=axis, dtype=np.float64))
    n_terms = arr.size // max(sums.size, 1)
    tol = distribution_tolerance(n_terms, precision if precision is not None else arr.dtype)
    bad = ~(np.abs(sums - 1.0) <= tol)
    if bad.any():
        where = np.unravel_index(int(np.argmax(bad)), sums.shape) if sums.ndim else ()
        what = "" if not sums.ndim else f" at index {tuple(int(i) for i in where)}"
        total = float(sums[where]) if sums.ndim else float(sums)
        raise ValueError(f"{name} must hold probability distributions summing to 1 (along "
                         f"axis {axis}): the one{what} sums to {total!r}")


def fitted_distribution(est, name, axis=-1, shape=None, ndim=None, optional=False,
                        precision=None):
    """The array attribute ``name`` checked by :func:`fitted_array` (finite, non-negative,
    ``shape``/``ndim``) whose slices along ``axis`` are probability distributions
    (:func:`check_distribution`); None for a missing ``optional`` attribute."""
    arr = fitted_array(est, name, shape=shape, ndim=ndim, nonnegative=True, optional=optional)
    if arr is not None:
        check_distribution(name, arr, axis=axis, precision=precision)
    return arr


# ----------------------------------------------------------------- declared schemas
# What a model file may hold for an estimator, checked from the file's headers before any
# array is decompressed (countgrid.io, docs/security.md): each saveable estimator declares
# ``_fitted_schema = {name: array(...) | scalar(...)}``, and its ``_fitted_arrays`` are the
# names of that schema.  The values and the relations between estimators are checked after
# reading, by ``_check_fitted_state``.

#: dtype classes of a schema entry: the numpy kinds (and item sizes) each accepts
_DTYPE_CLASSES = {
    "float": lambda dt: dt.kind == "f" and dt.itemsize in (4, 8),
    "real": lambda dt: dt.kind in "biuf",
    "int": lambda dt: dt.kind in "iu",
    "bool": lambda dt: dt.kind == "b",
    "label": lambda dt: dt.kind in "biufU",
    "str": lambda dt: dt.kind == "U",
}


class Field:
    """One fitted attribute of a schema: ``array`` or ``scalar``, its dtype class and, for
    an array, its dimensions (see :func:`array`)."""

    __slots__ = ("kind", "dtype", "dims", "bind")

    def __init__(self, kind, dtype, dims=(), bind=None):
        if dtype not in _DTYPE_CLASSES:
            raise ValueError(f"unknown dtype class {dtype!r}")
        self.kind, self.dtype, self.dims, self.bind = kind, dtype, tuple(dims), bind

    def __repr__(self):
        if self.kind == "scalar":
            return f"scalar({self.dtype!r}{', bind=' + repr(self.bind) if self.bind else ''})"
        return f"array({self.dtype!r}, {', '.join(map(repr, self.dims))})"


def array(dtype, *dims):
    """A fitted array: ``dims`` are ints (a fixed size), names (a size shared by every entry
    that uses the name, or bound by a :func:`scalar`), ``"name+k"`` (that size plus an int)
    or one ``"name..."`` (one or more dimensions, e.g. a grid's extent)."""
    return Field("array", dtype, dims)


def scalar(dtype, bind=None):
    """A fitted scalar; an int scalar may ``bind`` a size name to its value."""
    return Field("scalar", dtype, (), bind)


def _dim_text(dim):
    return dim if isinstance(dim, str) else str(dim)


def check_declared(schema, declared, values, owner, sizes=None):
    """Check what a file declares for one estimator against its schema, before reading it.

    Parameters
    ----------
    schema : dict of str -> Field
    declared : dict of str -> (kind, numpy.dtype, shape)
        The file's attributes: kind ``"array"`` or ``"scalar"`` as its header says, dtype
        and shape as the ``.npy`` headers declare.
    values : dict of str -> scalar
        The values of the scalar attributes (read first: they are a few bytes each).
    owner : str
        The estimator's name, for errors.
    sizes : dict of str -> int, optional
        Size names already known (e.g. read from a small member).

    Raises
    ------
    ValueError
        Naming the first attribute whose kind, dtype or shape the schema does not allow.
    """
    sizes = dict(sizes or {})
    sources = {}
    for name, field in schema.items():
        if field.bind is not None and name in values:
            value = values[name]
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) \
                    or value < 0:
                raise ValueError(f"{name} of {owner} must be an int >= 0, got {value!r}")
            sizes[field.bind] = int(value)
            sources[field.bind] = name
    for name, (kind, dtype, shape) in declared.items():
        field = schema.get(name)
        if field is None:
            continue      # an attribute outside the schema is refused by the caller
        if kind != field.kind:
            raise ValueError(f"{name} of {owner} must be stored as a {field.kind}, the file "
                             f"says {kind!r}")
        if not _DTYPE_CLASSES[field.dtype](dtype):
            raise ValueError(f"{name} of {owner} has the dtype {dtype}; a {field.dtype} "
                             "is expected")
        if field.kind == "scalar":
            if shape != ():
                raise ValueError(f"{name} of {owner} should be a scalar, got shape {shape}")
            continue
        _unify(name, owner, field.dims, tuple(shape), sizes, sources)


def _unify(name, owner, dims, shape, sizes, sources):
    expected = "(" + ", ".join(_dim_text(d) for d in dims) + ")"
    variadic = [i for i, d in enumerate(dims) if isinstance(d, str) and d.endswith("...")]
    if variadic:
        i = variadic[0]
        n_rest = len(dims) - 1
        if len(shape) < n_rest + 1:
            raise ValueError(f"{name} of {owner} has shape {shape}, expected {expected}")
        k = len(shape) - n_rest
        parts = list(dims[:i]) + [dims[i]] + list(dims[i + 1:])
        groups = list(shape[:i]) + [shape[i:i + k]] + list(shape[i + k:])
    else:
        if len(shape) != len(dims):
            raise ValueError(f"{name} of {owner} has shape {shape}, expected {expected}")
        parts, groups = list(dims), list(shape)
    for dim, got in zip(parts, groups):
        if isinstance(dim, int):
            want = dim
        else:
            symbol, _, offset = dim.removesuffix("...").partition("+")
            offset = int(offset) if offset else 0
            if symbol not in sizes:
                sizes[symbol] = (got if isinstance(got, tuple) else got - offset)
                if not isinstance(got, tuple) and got - offset < 0:
                    raise ValueError(f"{name} of {owner} has shape {shape}, expected "
                                     f"{expected}")
                continue
            known = sizes[symbol]
            want = known if isinstance(known, tuple) else known + offset
        if got != want:
            bound = ", ".join(f"{k} = {v}" + (f" ({sources[k]})" if k in sources else "")
                              for k, v in sizes.items())
            raise ValueError(f"{name} of {owner} has shape {shape}, expected {expected} "
                             f"where {bound}")
