"""Retrieval baselines of Gehler, Holub & Welling (ICML 2006): tf-idf and LSI."""
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import svds

from countgrid._base import BaseEstimator, TransformerMixin
from countgrid._counts import check_counts
from countgrid._param_validation import Interval
from countgrid._validation import check_is_fitted, check_random_state

__all__ = ["tfidf", "idf_weights", "LSI"]


def idf_weights(X):
    """``log2(#documents / #documents containing word w)`` per word (paper footnote 6).

    Words that occur in no document get weight 0.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_documents, n_words)
        Non-negative counts of the reference corpus.

    Returns
    -------
    idf : ndarray of shape (n_words,), float64
    """
    X, is_sparse = check_counts(X, np.float64, name="X")
    if is_sparse:
        df = np.bincount(X.indices, minlength=X.shape[1]).astype(np.float64)
    else:
        df = np.count_nonzero(X, axis=0).astype(np.float64)
    idf = np.zeros(X.shape[1])
    seen = df > 0
    idf[seen] = np.log2(X.shape[0] / df[seen])
    return idf


def tfidf(X, idf=None):
    """tf-idf of the paper's footnote 6: ``n(d, w) / sum_w' n(d, w') * idf(w)``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_documents, n_words)
        Non-negative counts.
    idf : array-like of shape (n_words,), optional
        Word weights, e.g. :func:`idf_weights` of a training corpus (for
        queries); by default ``idf_weights(X)``.

    Returns
    -------
    T : ndarray or scipy.sparse.csr_matrix of shape (n_documents, n_words), float64
        Sparse if ``X`` is sparse.  Empty documents give zero rows.

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> countgrid.tfidf(np.array([[2, 0], [1, 1]])).tolist()
    [[0.0, 0.0], [0.0, 0.5]]
    """
    X, is_sparse = check_counts(X, np.float64, name="X")
    if idf is None:
        idf = idf_weights(X)
    else:
        idf = np.asarray(idf, dtype=np.float64)
        if idf.shape != (X.shape[1],):
            raise ValueError(f"idf has shape {idf.shape}; X has {X.shape[1]} words")
        if not np.isfinite(idf).all():
            raise ValueError("idf contains NaN or infinity")
    length = np.asarray(X.sum(axis=1), dtype=np.float64).ravel()
    inv = np.zeros_like(length)
    inv[length > 0] = 1.0 / length[length > 0]
    if is_sparse:
        T = sp.diags(inv) @ X @ sp.diags(idf)
        return sp.csr_matrix(T)
    return X * inv[:, None] * idf[None, :]


class LSI(TransformerMixin, BaseEstimator):
    """Latent semantic indexing: truncated SVD of the tf-idf matrix (paper section 3.2).

    ``fit`` computes the idf weights and the top ``n_components`` right
    singular vectors ``V`` of ``tfidf(X)``; ``transform`` maps documents to
    ``tfidf(X; idf of the training corpus) V`` (for training documents this is
    ``U Sigma``).  Compare codes with the cosine.

    Parameters
    ----------
    n_components : int, default=100
    random_state : None, int or numpy.random.Generator
        Seeds the start vector of the Lanczos iteration (``scipy.sparse.linalg.svds``).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        ``V^T``, rows in decreasing order of singular value; the sign of each
        row makes its largest-magnitude entry positive.
    singular_values_ : ndarray of shape (n_components,)
    idf_ : ndarray of shape (n_features,)
    n_features_in_ : int
    """

    _parameter_constraints = {"n_components": [Interval(Integral, 1, None)],
                              "random_state": ["random_state"]}
    _fitted_arrays = ("components_", "singular_values_", "idf_", "n_features_in_")

    def __init__(self, n_components=100, random_state=None):
        self.n_components = n_components
        self.random_state = random_state

    def fit(self, X, y=None):
        """Fit the idf weights and the SVD basis on the counts ``X``."""
        self._validate_params()
        k = self.n_components
        X, _ = check_counts(X, np.float64, name="X")
        if k >= min(X.shape):
            raise ValueError(f"n_components must be < min(n_samples, n_features) = "
                             f"{min(X.shape)}, got {k}")
        self.idf_ = idf_weights(X)
        T = sp.csr_matrix(tfidf(X, self.idf_))
        rng = check_random_state(self.random_state)
        v0 = rng.uniform(-1.0, 1.0, size=min(T.shape))
        _, s, vt = svds(T, k=int(k), v0=v0)
        order = np.argsort(-s, kind="stable")
        s, vt = s[order], vt[order]
        flip = np.sign(vt[np.arange(vt.shape[0]), np.abs(vt).argmax(axis=1)])
        flip[flip == 0] = 1.0
        self.components_ = np.ascontiguousarray(vt * flip[:, None])
        self.singular_values_ = s
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X):
        """LSI codes ``tfidf(X) V`` of shape (n_samples, n_components)."""
        check_is_fitted(self, "components_")
        X, _ = check_counts(X, np.float64, n_features=self.n_features_in_, name="X")
        T = tfidf(X, self.idf_)
        return np.asarray(T @ self.components_.T)
