"""Exceptions raised by countgrid."""


class NotFittedError(ValueError, AttributeError):
    """Raised when a method needs a fitted estimator (as in scikit-learn)."""


class ConvergenceWarning(UserWarning):
    """EM stopped at n_iter before meeting the tolerance."""


class DataConversionWarning(UserWarning):
    """Input was converted to the form an estimator needs (e.g. a column-vector ``y`` to
    1-D), as scikit-learn's warning of the same name."""
