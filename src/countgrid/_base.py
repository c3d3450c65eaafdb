"""The estimator base class and mixins: the rules every countgrid estimator shares.

``get_params`` / ``set_params`` / ``repr`` in the scikit-learn style (without importing
scikit-learn), declarative parameter validation (``_parameter_constraints``, see
countgrid._utils.param_validation), pickle-free persistence (``save`` / ``load``, see
countgrid.io) with registration of every saveable class at its definition, and the
scikit-learn tags, built lazily in ``__sklearn_tags__`` (which only scikit-learn calls).
"""
import contextlib
import copy
import functools
import inspect
import threading

import numpy as np

from countgrid import io
from countgrid._utils.numeric import power_of_two_scale
from countgrid._utils.param_validation import validate_params
from countgrid._utils.validation import check_real_target, check_target

__all__ = ["BaseEstimator", "ClassifierMixin", "RegressorMixin", "TransformerMixin"]


def _fitted_state(est):
    """The fitted attributes of ``est``: public instance attributes ending in ``_``."""
    return {k: v for k, v in vars(est).items() if k.endswith("_") and not k.startswith("_")}


# id(estimator) -> (thread ident, depth) while a fit or partial_fit runs: a second thread
# fitting the same estimator is refused (docs/robustness.md, "Threads"); the fitting
# thread holds a reference, so the id cannot be reused meanwhile.
_FITTING = {}
_FITTING_LOCK = threading.Lock()


@contextlib.contextmanager
def _one_fitting_thread(est, name):
    """Refuse (RuntimeError) a fit of ``est`` while another thread fits it: the two would
    interleave their updates into a model neither asked for.  The same thread may nest
    (``fit`` calling ``partial_fit``)."""
    me = threading.get_ident()
    with _FITTING_LOCK:
        owner = _FITTING.get(id(est))
        if owner is not None and owner[0] != me:
            raise RuntimeError(
                f"{type(est).__name__}.{name} was called while another thread is fitting "
                "this same estimator; fit one estimator per thread (e.g. "
                "sklearn.base.clone(est) for each), or wait for the other fit to end")
        _FITTING[id(est)] = (me, 1 if owner is None else owner[1] + 1)
    try:
        yield
    finally:
        with _FITTING_LOCK:
            thread, depth = _FITTING[id(est)]
            if depth == 1:
                del _FITTING[id(est)]
            else:
                _FITTING[id(est)] = (thread, depth - 1)


def _transactional(method):
    """Wrap ``fit`` / ``partial_fit`` so that a call that fails half way leaves nothing
    half-trained behind.

    If the call raises after it changed fitted attributes, ``fit`` leaves the estimator
    unfitted and ``partial_fit`` restores the attributes it had before the call.  A
    ``KeyboardInterrupt`` during ``fit`` leaves the last checkpoint the fit registered with
    :meth:`BaseEstimator._checkpoint` (its last complete iteration) if any, and otherwise
    an unfitted estimator (never the model of an earlier fit, which the user asked to
    replace).  A ``KeyboardInterrupt`` is re-raised with a note saying which state was
    kept.  Only one thread at a time may fit a given estimator (``_one_fitting_thread``).
    """
    partial = method.__name__ == "partial_fit"

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with _one_fitting_thread(self, method.__name__):
            return run(self, *args, **kwargs)

    def run(self, *args, **kwargs):
        before = _fitted_state(self)
        outer_checkpoint = self.__dict__.pop("_fit_checkpoint", None)
        try:
            result = method(self, *args, **kwargs)
            self._remember_inference_params()
            return result
        except BaseException as exc:
            checkpoint = self.__dict__.pop("_fit_checkpoint", None)
            after = _fitted_state(self)
            unchanged = after.keys() == before.keys() and all(after[k] is before[k]
                                                               for k in after)
            if unchanged and (partial or not isinstance(exc, KeyboardInterrupt)):
                raise                                   # nothing changed (e.g. a bad argument)
            for name in after:
                delattr(self, name)
            if partial:
                self.__dict__.update(before)
                kept = "its state before this call was restored"
            elif checkpoint is not None and isinstance(exc, KeyboardInterrupt):
                kept = f"it holds {checkpoint()}"
            else:
                kept = "it is left unfitted"
            if isinstance(exc, KeyboardInterrupt):
                exc.add_note(f"{type(self).__name__}.{method.__name__} was interrupted; {kept}.")
            raise
        finally:
            self.__dict__.pop("_fit_checkpoint", None)
            if outer_checkpoint is not None:
                self.__dict__["_fit_checkpoint"] = outer_checkpoint

    wrapper._countgrid_transactional = True
    return wrapper


class BaseEstimator:
    """Base class of the countgrid estimators.

    Subclasses list their constructor parameters' constraints in ``_parameter_constraints``
    and call ``self._validate_params()`` first in ``fit``; they name the fitted attributes
    that ``save`` stores in ``_fitted_arrays`` (arrays and scalars) and
    ``_fitted_estimators`` (estimators or lists of them).  A class is saveable unless it is
    declared with ``saveable=False`` (``class X(BaseEstimator, saveable=False)``) or its name
    starts with an underscore (an abstract base).

    Every ``fit`` and ``partial_fit`` a subclass defines is made transactional (see
    ``_transactional``): a failed or interrupted call never leaves a half-trained model
    that passes the fitted check.
    """

    _estimator_kind = None       # "classifier", "regressor", "transformer" or None
    _parameter_constraints = {}
    #: Parameters that inference (transform, predict, ...) reads besides the fitted
    #: attributes: changing one after fit is refused until the next fit (see
    #: ``_check_inference_params``); all others only matter to fit.
    _inference_params = ()
    #: Parameters documented as options of inference itself (e.g. pLSA's folding-in
    #: iterations): they take effect at the next transform, without a refit.
    _inference_options = ()
    #: What a model file may hold for this estimator: ``{name: countgrid._utils.fitted.array(...)
    #: or scalar(...)}`` (dtype class and shape, checked before anything is decompressed;
    #: docs/security.md).  ``_fitted_arrays`` is set to its names.
    _fitted_schema = {}
    _fitted_arrays = ()
    _fitted_estimators = ()
    #: Fitted arrays that are a function of the others: model files leave them out when
    #: ``_derive_array(name)`` recomputes them bit for bit (countgrid.io).
    _derived_arrays = ()
    #: scikit-learn checks (``sklearn.utils.estimator_checks``) this estimator is known to
    #: fail, each with the reason: pass ``_sklearn_expected_failed_checks`` as
    #: ``check_estimator(est, expected_failed_checks=...)`` (tests/test_common.py does).
    _sklearn_expected_failed_checks = {}
    _saveable = True

    def __init_subclass__(cls, saveable=None, **kwargs):
        super().__init_subclass__(**kwargs)
        if saveable is not None:
            cls._saveable = bool(saveable)
        if "_fitted_schema" in cls.__dict__:
            # the schema is the one declaration of what a model file may hold
            if "_fitted_arrays" in cls.__dict__:
                raise TypeError(f"{cls.__name__} declares both _fitted_schema and "
                                "_fitted_arrays: declare the schema only")
            cls._fitted_arrays = tuple(cls._fitted_schema)
        if cls._saveable and not cls.__name__.startswith("_"):
            io.register(cls)
        for name in ("fit", "partial_fit"):
            method = cls.__dict__.get(name)
            if callable(method) and not getattr(method, "_countgrid_transactional", False):
                setattr(cls, name, _transactional(method))

    def _remember_inference_params(self):
        """Record the ``_inference_params`` a fit (or a loaded file) used."""
        self.__dict__["_params_at_fit"] = {name: copy.deepcopy(getattr(self, name))
                                           for name in self._inference_params}

    def _check_inference_params(self):
        """Raise ValueError if an inference parameter changed since the model was fitted, so
        that ``set_params`` never silently changes what a fitted model computes."""
        recorded = self.__dict__.get("_params_at_fit")
        if not recorded:
            return
        for name, old in recorded.items():
            new = getattr(self, name)
            if not _same_value(old, new):
                raise ValueError(f"{name} was changed from {old!r} to {new!r} after fit; "
                                 f"fit again, or set {name}={old!r} back")

    def _derive_array(self, name):
        """Recompute the derived fitted array ``name`` from the other fitted attributes."""
        raise ValueError(f"{type(self).__name__} cannot recompute {name}")

    def _defer_derived(self, name):
        """Set the derived fitted array ``name`` when the file is loaded with
        ``defer_derived`` (countgrid.io): a class may leave it to be derived when first
        read (a counting grid's ``h_``); by default it is derived now."""
        setattr(self, name, self._derive_array(name))

    def _checkpoint(self, apply):
        """Register the state to keep if the running ``fit`` is interrupted (Ctrl-C) now.

        ``apply()`` sets the fitted attributes of the last complete iteration (from copies
        taken when this is called, as later iterations may update arrays in place) and
        returns a description such as ``"iteration 12 of 100"``."""
        self.__dict__["_fit_checkpoint"] = apply

    # parameters -------------------------------------------------------------
    @classmethod
    def _get_param_names(cls):
        sig = inspect.signature(cls.__init__)
        names = [p.name for p in sig.parameters.values()
                 if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        return sorted(names)

    def get_params(self, deep=True):
        """Parameters of this estimator, as a dict."""
        out = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                for key, sub in value.get_params().items():
                    out[f"{name}__{key}"] = sub
            out[name] = value
        return out

    def set_params(self, **params):
        """Set parameters; returns self."""
        valid = self._get_param_names()
        for key, value in params.items():
            name, _, sub = key.partition("__")
            if name not in valid:
                raise ValueError(f"Invalid parameter {name!r} for estimator {type(self).__name__}. "
                                 f"Valid parameters are: {valid}")
            if sub:
                getattr(self, name).set_params(**{sub: value})
            else:
                setattr(self, name, value)
        return self

    def _validate_params(self):
        """Check every parameter against ``_parameter_constraints`` (TypeError for a wrong
        type, ValueError for a wrong value, both naming the parameter)."""
        validate_params(self._parameter_constraints, self.get_params(deep=False),
                        type(self).__name__)

    def __repr__(self):
        sig = inspect.signature(type(self).__init__)
        parts = []
        for name in self._get_param_names():
            default = sig.parameters[name].default
            value = getattr(self, name)
            same = False
            try:
                same = value is default or bool(value == default)
            except Exception:  # arrays and other objects without a scalar ==
                same = False
            if not same:
                parts.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    # scikit-learn tags -------------------------------------------------------
    @property
    def _estimator_type(self):
        return self._estimator_kind

    def _preserved_dtypes(self):
        """The input dtypes ``transform`` returns unchanged: an estimator with a working
        precision (``dtype``) returns that one whatever the input; None follows float64."""
        dtype = self.get_params(deep=False).get("dtype")
        return [np.dtype(dtype).name] if dtype is not None else ["float64"]

    def __sklearn_tags__(self):
        from sklearn.utils import (ClassifierTags, InputTags, RegressorTags, Tags, TargetTags,
                                   TransformerTags)

        kind = self._estimator_kind
        # poor_score: scikit-learn's score test fits 2-feature Gaussian blobs; a model of
        # counts sees only each row's proportions, which do not separate those blobs
        return Tags(
            estimator_type=kind if kind in ("classifier", "regressor") else None,
            target_tags=TargetTags(required=kind in ("classifier", "regressor")),
            transformer_tags=TransformerTags(preserves_dtype=self._preserved_dtypes())
            if kind == "transformer" else None,
            classifier_tags=ClassifierTags(poor_score=True) if kind == "classifier" else None,
            regressor_tags=RegressorTags(poor_score=True) if kind == "regressor" else None,
            input_tags=InputTags(sparse=True, positive_only=True),
        )

    # persistence -----------------------------------------------------------
    def save(self, path, corpus=None):
        """Save the estimator to a versioned ``.npz`` file (no pickle).

        Parameters
        ----------
        path : str or path-like
            Destination file; ``countgrid.load(path)`` (or ``type(self).load(path)``)
            restores an equal estimator.
        corpus : countgrid.text.Corpus, optional
            The corpus the model was fitted with (vocabulary, document ids, titles,
            metadata), stored in the same file; ``countgrid.io.load_corpus(path)`` reads
            it back.

        Raises
        ------
        TypeError
            If the estimator is not saveable.
        """
        io.save(self, path, corpus=corpus)

    @classmethod
    def load(cls, path):
        """Load an estimator of this class saved with :meth:`save`.

        Raises
        ------
        ValueError
            If the file is not a readable countgrid model file.
        TypeError
            If the file holds another kind of estimator.
        """
        est = io.load(path)
        if not isinstance(est, cls):
            raise TypeError(f"{path!s} holds a {type(est).__name__}, not a {cls.__name__}")
        return est


def _same_value(a, b):
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):
        return False


class TransformerMixin:
    """``fit_transform`` as ``fit`` then ``transform``; scikit-learn's transformer tag."""

    _estimator_kind = "transformer"

    def fit_transform(self, X, y=None, **fit_params):
        """Fit on X (and y), then return ``transform(X)``."""
        return self.fit(X, y, **fit_params).transform(X)


class ClassifierMixin:
    """``score`` as the accuracy of ``predict``; scikit-learn's classifier tag."""

    _estimator_kind = "classifier"

    def score(self, X, y):
        """Accuracy of ``predict(X)`` against ``y``.

        ``X`` is validated first (by ``predict``), then ``y``: 1-D (a column vector is
        raveled with a DataConversionWarning) with one label per row of ``X``, else a
        ValueError naming ``y``.
        """
        y_pred = np.asarray(self.predict(X))
        y = check_target(y, n_samples=y_pred.shape[0])
        return float(np.mean(y == y_pred))


class RegressorMixin:
    """``score`` as the coefficient of determination R^2; scikit-learn's regressor tag."""

    _estimator_kind = "regressor"

    def score(self, X, y):
        """Coefficient of determination R^2 of ``predict(X)``.

        ``X`` is validated first (by ``predict``), then ``y``: finite real numbers, 1-D,
        one per row of ``X``, else a ValueError naming ``y``.
        """
        y_pred = np.asarray(self.predict(X), dtype=np.float64)
        y_true = check_real_target(y, n_samples=y_pred.shape[0])
        # squares of targets near 1e308 overflow and near 1e-320 vanish: an exact power of
        # two brings both into range (R^2 is scale-free)
        scale = power_of_two_scale(np.concatenate([y_true.ravel(), y_pred.ravel()]))
        y_true, y_pred = y_true * scale, y_pred * scale
        ss_res = np.sum((y_true - y_pred) ** 2)
        ss_tot = np.sum((y_true - y_true.mean()) ** 2)
        if ss_tot == 0:
            return 1.0 if ss_res == 0 else 0.0
        return float(1.0 - ss_res / ss_tot)
