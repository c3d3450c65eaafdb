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
           "fitted_distribution", "check_distribution", "distribution_tolerance"]


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
