"""Colourings made of the counts themselves (docs/map.md, "Colour by a feature"): the
share of a term — a gene, a genus, a word — in each document, so that the map shows where
a feature is expressed (issue 28: a per-cell overlay of one gene's share)."""
import numpy as np
import scipy.sparse as sp

__all__ = ["feature_shares", "SHARE_SUFFIX"]

#: The colouring of feature ``f`` is named ``f + SHARE_SUFFIX``.
SHARE_SUFFIX = " share"


def feature_shares(X, feature_names, features):
    """Metadata columns of the share of each of ``features`` in each document:
    ``X[t, j] / sum_w X[t, w]`` (NaN for an empty document), named ``"<feature> share"``,
    to colour a map by (``metadata=`` of :func:`countgrid.maps.write_html`, ``--feature``
    of ``countgrid html``).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_documents, n_features)
        Counts.
    feature_names : sequence of str of length n_features
    features : sequence of str
        Terms of ``feature_names``.

    Returns
    -------
    dict of str -> ndarray of shape (n_documents,), float64

    Raises
    ------
    TypeError, ValueError
        For a feature not in ``feature_names`` (naming it), or names that do not match X.
    """
    if isinstance(features, (str, bytes)) or not hasattr(features, "__iter__"):
        raise TypeError(f"features must be a list of feature names, got "
                        f"{type(features).__name__}")
    names = [str(v) for v in feature_names]
    X = sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X)
    if X.ndim != 2 or X.shape[1] != len(names):
        raise ValueError(f"X has {X.shape[-1] if X.ndim else 0} columns but feature_names "
                         f"{len(names)} names")
    index = {}
    for j, name in enumerate(names):
        index.setdefault(name, j)
    totals = np.asarray(X.sum(axis=1), dtype=np.float64).ravel()
    out = {}
    for f in features:
        if not isinstance(f, str):
            raise TypeError(f"features: {f!r} is not a feature name (str)")
        if f not in index:
            raise ValueError(f"features: {f!r} is not a feature of the corpus")
        column = X[:, index[f]]
        column = np.asarray(column.toarray() if sp.issparse(column) else column,
                            dtype=np.float64).ravel()
        with np.errstate(invalid="ignore", divide="ignore"):
            out[f + SHARE_SUFFIX] = np.where(totals > 0, column / totals, np.nan)
    return out
