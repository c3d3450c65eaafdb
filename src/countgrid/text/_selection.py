"""Term selection for count models (Luhn's resolving power)."""
import numbers

import numpy as np

from countgrid._utils.counts import check_counts
from countgrid._utils.validation import resolve_dtype


def _threshold(value, name, n_total):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be an int (a count) or a float in [0, 1] (a fraction), "
                        f"got {value!r}")
    if isinstance(value, numbers.Integral):
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value!r}")
        return float(value)
    if not (0.0 <= value <= 1.0):
        raise ValueError(f"{name} as a float is a fraction and must lie in [0, 1], got {value!r}")
    return float(value) * n_total


def select_by_resolving_power(X, low, high, by="document"):
    """Indices of the middle-frequency terms (Luhn's "resolving power" selection).

    Luhn (1958), as presented by Salton & McGill (1983, ch. 3): the words
    that discriminate documents best are those of medium frequency; very
    frequent words (function words) and very rare ones are cut off.  A term
    ``j`` is kept when ``low <= f_j <= high``, where ``f_j`` is its document
    frequency (``by="document"``: the number of documents containing it) or
    its collection frequency (``by="count"``: its total count).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Non-negative counts (documents x terms).
    low, high : int or float
        Inclusive frequency cut-offs.  An int is an absolute frequency; a float
        in ``[0, 1]`` is a fraction of the documents (``by="document"``) or of
        all tokens (``by="count"``).
    by : {"document", "count"}, default="document"
        Which frequency to threshold.

    Returns
    -------
    indices : ndarray of int64
        Sorted column indices of the selected terms; ``X[:, indices]`` is the
        reduced matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from countgrid.text import select_by_resolving_power
    >>> X = np.array([[1, 1, 0, 0], [1, 0, 2, 0], [1, 1, 0, 0], [1, 0, 0, 0]])
    >>> select_by_resolving_power(X, low=2, high=0.75)  # drop the ubiquitous and the rare
    array([1])
    """
    if not isinstance(by, str) or by not in ("document", "count"):
        raise ValueError(f"by must be 'document' or 'count', got {by!r}")
    Xc, is_sparse = check_counts(X, resolve_dtype(None, X))
    n = Xc.shape[0]
    if by == "document":
        freq = np.diff(Xc.tocsc().indptr) if is_sparse else (Xc > 0).sum(axis=0)
        total = n
    else:
        freq = np.asarray(Xc.sum(axis=0)).ravel()
        total = float(freq.sum())
    lo = _threshold(low, "low", total)
    hi = _threshold(high, "high", total)
    if lo > hi:
        raise ValueError(f"low ({low!r}) must not exceed high ({high!r})")
    freq = np.asarray(freq, dtype=np.float64).ravel()
    return np.flatnonzero((freq >= lo) & (freq <= hi)).astype(np.int64)


__all__ = ["select_by_resolving_power"]
