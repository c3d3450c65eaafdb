"""A minimal scikit-learn compatible estimator base (no scikit-learn import)."""
import inspect

import numpy as np


class BaseEstimator:
    """get_params / set_params / repr in the scikit-learn style.

    scikit-learn is optional: its tags are built lazily in ``__sklearn_tags__``,
    which only scikit-learn itself calls.
    """

    _estimator_kind = None  # "classifier", "regressor", "transformer" or None

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

    @property
    def _estimator_type(self):
        return self._estimator_kind

    def __sklearn_tags__(self):
        from sklearn.utils import (ClassifierTags, InputTags, RegressorTags, Tags, TargetTags,
                                   TransformerTags)

        kind = self._estimator_kind
        return Tags(
            estimator_type=kind if kind in ("classifier", "regressor") else None,
            target_tags=TargetTags(required=kind in ("classifier", "regressor")),
            transformer_tags=TransformerTags() if kind == "transformer" else None,
            classifier_tags=ClassifierTags() if kind == "classifier" else None,
            regressor_tags=RegressorTags() if kind == "regressor" else None,
            input_tags=InputTags(sparse=True, positive_only=True),
        )

    # persistence -----------------------------------------------------------
    _fitted_arrays = ()       # names of array or scalar fitted attributes
    _fitted_estimators = ()   # names of attributes holding an estimator or a list of them

    def save(self, path):
        """Save the estimator to a versioned ``.npz`` file (no pickle).

        Parameters
        ----------
        path : str or path-like
            Destination file; ``countgrid.load(path)`` restores an equal estimator.
        """
        from countgrid.io import save

        save(self, path)


def accuracy(y_true, y_pred):
    return float(np.mean(np.asarray(y_true) == np.asarray(y_pred)))


def r2(y_true, y_pred):
    y_true = np.asarray(y_true, dtype=np.float64)
    y_pred = np.asarray(y_pred, dtype=np.float64)
    ss_res = np.sum((y_true - y_pred) ** 2)
    ss_tot = np.sum((y_true - y_true.mean()) ** 2)
    if ss_tot == 0:
        return 1.0 if ss_res == 0 else 0.0
    return float(1.0 - ss_res / ss_tot)
