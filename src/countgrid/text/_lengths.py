"""Capping the length of very long documents (docs/text.md, "Very long documents").

Under a bag-of-words model a document's weight in the M-step grows with its length: one
document holding half of a corpus's tokens shapes half of every word distribution, and a
counting grid spreads it over the whole picture.  Scaling such documents down to a cap
keeps their proportions of words and gives them the weight of a long, not a dominant,
document.
"""
import numpy as np
import scipy.sparse as sp

from countgrid._utils.counts import check_counts

__all__ = ["cap_document_lengths"]

#: ``max_length="auto"``: this many times the median document length.
AUTO_CAP_MEDIANS = 10


def cap_document_lengths(X, max_length="auto"):
    """Counts with every document longer than ``max_length`` tokens scaled down to it.

    A capped row keeps its proportions of words: counts ``c * max_length / |c|`` rounded
    to integers by largest remainders (the row then sums to exactly ``max_length``; a word
    may drop to 0 only if its share is below one token).  Shorter documents are unchanged.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Counts (non-negative).
    max_length : "auto" or int, default="auto"
        The cap in tokens.  "auto" is 10 times the median length of the non-empty
        documents of ``X`` (compute it on training documents and pass the number to cap
        test documents the same way).

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_samples, n_features), float64
        The capped counts (integer-valued).

    Examples
    --------
    >>> import numpy as np
    >>> from countgrid.text import cap_document_lengths
    >>> X = np.array([[1, 1, 0], [2, 2, 0], [300, 100, 20]])
    >>> cap_document_lengths(X, max_length=42).toarray()
    array([[ 1.,  1.,  0.],
           [ 2.,  2.,  0.],
           [30., 10.,  2.]])
    """
    X, _ = check_counts(X, np.float64, name="X")
    C = sp.csr_matrix(X, dtype=np.float64, copy=True)
    if C.shape[0] and not np.array_equal(C.data, np.rint(C.data)):
        raise ValueError("X must hold integer counts to be capped (it has fractional values)")
    lengths = np.asarray(C.sum(axis=1)).ravel()
    if isinstance(max_length, str):
        if max_length != "auto":
            raise ValueError(f"max_length must be 'auto' or a positive int, got {max_length!r}")
        nonempty = lengths[lengths > 0]
        if nonempty.size == 0:
            return C
        cap = max(1.0, np.ceil(AUTO_CAP_MEDIANS * np.median(nonempty)))
    else:
        if isinstance(max_length, (bool, np.bool_)) or not isinstance(
                max_length, (int, np.integer)):
            raise TypeError(f"max_length must be 'auto' or a positive int, got "
                            f"{type(max_length).__name__}")
        if max_length < 1:
            raise ValueError(f"max_length must be >= 1, got {max_length}")
        cap = float(max_length)
    for i in np.flatnonzero(lengths > cap):
        lo, hi = C.indptr[i], C.indptr[i + 1]
        share = C.data[lo:hi] * (cap / lengths[i])
        row = np.floor(share)
        missing = int(round(cap - row.sum()))
        if missing > 0:   # largest remainders first, ties by column order (stable)
            row[np.argsort(-(share - row), kind="stable")[:missing]] += 1.0
        C.data[lo:hi] = row
    C.eliminate_zeros()
    return C
