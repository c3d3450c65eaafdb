"""Exceptions raised by countgrid."""


class NotFittedError(ValueError, AttributeError):
    """Raised when a method needs a fitted estimator (as in scikit-learn)."""


class ConvergenceWarning(UserWarning):
    """EM stopped at n_iter before meeting the tolerance."""
