"""Declarative constraints on estimator parameters, with one error policy.

Every estimator lists its parameters in ``_parameter_constraints`` (as scikit-learn's
``sklearn/utils/_param_validation.py``): a dict from parameter name to a list of
constraints, any one of which the value must satisfy.  :meth:`BaseEstimator._validate_params`
checks them at the start of ``fit``.  The policy: a value whose *type* no constraint
accepts raises ``TypeError``; a value of an accepted type that is out of range (or not
among the options) raises ``ValueError``.  Both messages name the parameter, the
estimator and what would be accepted.

A constraint is a :class:`Constraint` or one of the shorthands ``None`` (the value None),
``"boolean"``, ``"random_state"``, ``"dtype"``, ``"num_threads"``, ``"array-like"``,
``"estimator"`` or a type (``isinstance``).
"""
import functools
import inspect
import math
import numbers

import numpy as np

__all__ = ["Constraint", "Interval", "Options", "GridShape", "validate_params",
           "validate_call_params", "make_constraint"]


class Constraint:
    """A set of accepted values; ``type_matches`` says whether the value is of a type the
    constraint is about (then a failure is a ValueError, else a TypeError)."""

    description = "a valid value"

    def is_satisfied_by(self, value):
        raise NotImplementedError

    def type_matches(self, value):
        return self.is_satisfied_by(value)

    def __str__(self):
        return self.description


_INT64_MAX = 2**63 - 1


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _is_finite(value):
    """math.isfinite that also takes ints beyond the float range (finite, but not as
    floats: they are refused too, since the estimators compute in floats)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


class Interval(Constraint):
    """Numbers of ``kind`` (``numbers.Integral`` or ``numbers.Real``) between ``left`` and
    ``right`` (None: unbounded); ``closed`` is "both", "left", "right" or "neither".
    Booleans are not numbers here, real values must be finite, and integers must fit in
    int64 (they reach C as such; no count of iterations or sizes needs more)."""

    def __init__(self, kind, left, right, closed="both"):
        if kind not in (numbers.Integral, numbers.Real):
            raise TypeError("kind must be numbers.Integral or numbers.Real")
        self.kind, self.left, self.right, self.closed = kind, left, right, closed

    def type_matches(self, value):
        return _is_int(value) if self.kind is numbers.Integral else _is_real(value)

    def is_satisfied_by(self, value):
        if not self.type_matches(value):
            return False
        if self.kind is numbers.Real and not _is_finite(value):
            return False
        if self.kind is numbers.Integral and not -_INT64_MAX <= value <= _INT64_MAX:
            return False
        if self.left is not None:
            if value < self.left or (value == self.left and self.closed in ("right", "neither")):
                return False
        if self.right is not None:
            if value > self.right or (value == self.right and self.closed in ("left", "neither")):
                return False
        return True

    @property
    def description(self):
        what = "an int" if self.kind is numbers.Integral else "a finite float"
        if self.left is None and self.right is None:
            return what
        if self.right is None:
            return f"{what} {'>=' if self.closed in ('both', 'left') else '>'} {self.left}"
        if self.left is None:
            return f"{what} {'<=' if self.closed in ('both', 'right') else '<'} {self.right}"
        lo = "[" if self.closed in ("both", "left") else "("
        hi = "]" if self.closed in ("both", "right") else ")"
        return f"{what} in {lo}{self.left}, {self.right}{hi}"


class Options(Constraint):
    """One of a fixed set of values (usually strings); the type of the options is the type
    the constraint is about."""

    def __init__(self, *values):
        self.values = values

    def type_matches(self, value):
        return any(type(value) is type(v) for v in self.values)

    def is_satisfied_by(self, value):
        return self.type_matches(value) and value in self.values

    @property
    def description(self):
        if len(self.values) == 1:
            return repr(self.values[0])
        return "one of " + ", ".join(repr(v) for v in self.values)


class InstanceOf(Constraint):
    def __init__(self, kind, description=None):
        self.kind = kind
        self.description = description or f"an instance of {getattr(kind, '__name__', kind)}"

    def is_satisfied_by(self, value):
        return isinstance(value, self.kind)


class _NoneConstraint(Constraint):
    description = "None"

    def is_satisfied_by(self, value):
        return value is None


class _Boolean(Constraint):
    description = "a bool"

    def is_satisfied_by(self, value):
        return isinstance(value, (bool, np.bool_))


class _RandomState(Constraint):
    description = "None, an int >= 0, a numpy SeedSequence, Generator or RandomState"

    def type_matches(self, value):
        return value is None or _is_int(value) or isinstance(
            value, (np.random.Generator, np.random.SeedSequence, np.random.RandomState))

    def is_satisfied_by(self, value):
        return self.type_matches(value) and not (_is_int(value) and value < 0)


class _Dtype(Constraint):
    description = "numpy.float32 or numpy.float64"

    def type_matches(self, value):
        if value is None or isinstance(value, (bool, int, float)):
            return False
        try:
            np.dtype(value)
        except TypeError:
            return False
        return True

    def is_satisfied_by(self, value):
        return self.type_matches(value) and np.dtype(value) in (np.float32, np.float64)


class _NumThreads(Constraint):
    description = "None or a non-zero int (negative: counted back from the number of CPUs)"

    def type_matches(self, value):
        return value is None or _is_int(value)

    def is_satisfied_by(self, value):
        return value is None or (_is_int(value) and value != 0)


class _ArrayLike(Constraint):
    description = "an array-like of numbers"

    def is_satisfied_by(self, value):
        if isinstance(value, (str, bytes, dict)) or value is None:
            return False
        try:
            return np.asarray(value).dtype.kind in "biuf"
        except (TypeError, ValueError):
            return False


class _Estimator(Constraint):
    description = "an estimator instance (an object with fit and transform)"

    def is_satisfied_by(self, value):
        return not isinstance(value, type) and callable(getattr(value, "fit", None)) and callable(getattr(value, "transform",
                                                                          None))


class GridShape(Constraint):
    """A tuple (or list) of positive ints; ``ndim`` fixes the length.

    A bare int is refused (ValueError) even where a 1-D grid is meant: ``CountingGrid(16, 4)``
    used to build a ring of 16 cells where a 16 x 16 grid was meant.  Model files of 0.1.0
    that stored an int load with its old meaning (``legacy_value``, called by ``countgrid.io``).
    """

    def __init__(self, ndim=None):
        self.ndim = ndim

    @property
    def description(self):
        if self.ndim is None:
            return "a tuple of positive ints"
        return f"a tuple of {self.ndim} positive ints"

    @staticmethod
    def _items(value):
        if isinstance(value, (tuple, list, np.ndarray)) and all(_is_int(v) for v in value):
            return tuple(value)
        return None

    def type_matches(self, value):
        return _is_int(value) or self._items(value) is not None

    def is_satisfied_by(self, value):
        items = self._items(value)
        return (items is not None and len(items) > 0 and all(v >= 1 for v in items)
                and (self.ndim is None or len(items) == self.ndim))

    def explain(self, value):
        """A hint appended to the error message for ``value`` (or "")."""
        if not _is_int(value):
            return ""
        n = int(value)
        if self.ndim is None:
            return (f" A bare int is ambiguous: pass ({n}, {n}) for a {n}x{n} grid or ({n},) "
                    f"for a ring of {n} cells.")
        return f" Pass a tuple such as {(n,) * self.ndim}."

    def legacy_value(self, value):
        """What a model file written before ints were refused meant (countgrid.io): an int
        ``n`` was the 1-D shape ``(n,)``."""
        if _is_int(value) and self.ndim is None:
            return (int(value),)
        return value


_SHORTHANDS = {"boolean": _Boolean(), "random_state": _RandomState(), "dtype": _Dtype(),
               "num_threads": _NumThreads(), "array-like": _ArrayLike(),
               "estimator": _Estimator()}


def make_constraint(spec):
    """The :class:`Constraint` of a shorthand (see the module docstring)."""
    if isinstance(spec, Constraint):
        return spec
    if spec is None:
        return _NoneConstraint()
    if isinstance(spec, str):
        try:
            return _SHORTHANDS[spec]
        except KeyError:
            raise ValueError(f"unknown constraint {spec!r}") from None
    if isinstance(spec, type):
        return InstanceOf(spec)
    raise TypeError(f"not a constraint: {spec!r}")


def validate_params(constraints, params, owner):
    """Check ``params`` (a dict) against ``constraints`` (name -> list of constraints).

    Parameters without constraints are not checked.  Raises TypeError or ValueError as the
    module docstring says, naming the parameter and ``owner``.
    """
    for name, value in params.items():
        if name not in constraints:
            continue
        specs = [make_constraint(c) for c in constraints[name]]
        if any(c.is_satisfied_by(value) for c in specs):
            continue
        accepted = " or ".join(str(c) for c in specs)
        message = f"The {name!r} parameter of {owner} must be {accepted}; got {value!r}."
        if _is_int(value) and abs(value) > _INT64_MAX:
            message += " Integers beyond 2**63 - 1 are not supported."
        message += "".join(c.explain(value) for c in specs if hasattr(c, "explain"))
        if any(c.type_matches(value) for c in specs):
            raise ValueError(message)
        raise TypeError(message)


def validate_call_params(constraints):
    """Decorator: check a public function's arguments against ``constraints`` on every
    call (the function-level counterpart of ``_parameter_constraints``; as scikit-learn's
    ``validate_params``).  Errors name the argument and the function."""
    def decorate(func):
        signature = inspect.signature(func)
        unknown = set(constraints) - set(signature.parameters)
        if unknown:
            raise ValueError(f"constraints for unknown parameters {sorted(unknown)}")
        owner = f"{func.__name__}()"

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            validate_params(constraints, bound.arguments, owner)
            return func(*args, **kwargs)

        wrapper._call_constraints = constraints
        return wrapper

    return decorate
