"""Exceptions raised by countgrid."""
import functools
import sys


class NotFittedError(ValueError, AttributeError):
    """Raised when a method needs a fitted estimator (as in scikit-learn).

    When scikit-learn has been imported, the error raised is also an instance of
    ``sklearn.exceptions.NotFittedError``, so code (and scikit-learn's own checks) that
    catches scikit-learn's class catches countgrid's; countgrid never imports scikit-learn
    for this.
    """


@functools.lru_cache(maxsize=None)
def _bridged(sklearn_not_fitted):
    return type("NotFittedError", (NotFittedError, sklearn_not_fitted),
                {"__module__": __name__, "__doc__": NotFittedError.__doc__})


def not_fitted_error(message):
    """A NotFittedError that is scikit-learn's too when scikit-learn is loaded (whoever
    can name ``sklearn.exceptions.NotFittedError`` has imported it).

    Parameters
    ----------
    message : str
        The message of the error.

    Returns
    -------
    NotFittedError
        The error, not raised: an instance of :class:`NotFittedError` and, when
        ``sklearn.exceptions`` is in ``sys.modules``, of
        ``sklearn.exceptions.NotFittedError`` too.
    """
    sklearn_exceptions = sys.modules.get("sklearn.exceptions")
    if sklearn_exceptions is None:
        return NotFittedError(message)
    return _bridged(sklearn_exceptions.NotFittedError)(message)


class ConvergenceWarning(UserWarning):
    """EM stopped at n_iter before meeting the tolerance."""


class CapacityWarning(UserWarning):
    """A counting grid far larger than its data fill: many cells hold almost no documents
    (docs/counting_grids.md, "Choosing the grid")."""


class DataConversionWarning(UserWarning):
    """Input was converted to the form an estimator needs (e.g. a column-vector ``y`` to
    1-D), as scikit-learn's warning of the same name."""
