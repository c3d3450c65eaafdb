"""Retrieval baselines of Gehler, Holub & Welling (ICML 2006): tf-idf and LSI."""
import warnings
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, svds

from countgrid._base import BaseEstimator, TransformerMixin
from countgrid._utils.counts import check_counts
from countgrid._utils.fitted import array, fitted_array, fitted_int, scalar
from countgrid._utils.memory import check_memory
from countgrid._utils.param_validation import Interval
from countgrid._utils.validation import as_real_array, check_is_fitted, check_random_state

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
        idf = as_real_array(idf, "idf").astype(np.float64)
        if idf.shape != (X.shape[1],):
            raise ValueError(f"idf has shape {idf.shape}; X has {X.shape[1]} words")
        if not np.isfinite(idf).all():
            raise ValueError("idf contains NaN or infinity")
    # term frequencies n(d, w) / n(d): each row is first scaled by the power of two that
    # brings its largest count into [0.5, 1), so no document length overflows (counts up
    # to the largest float) or underflows
    if X.shape[1] == 0:
        top = np.zeros(X.shape[0])
    elif is_sparse:
        top = np.asarray(X.max(axis=1).toarray(), dtype=np.float64).ravel()
    else:
        top = X.max(axis=1)
    e = -np.frexp(top)[1]
    if is_sparse:
        X = X.copy()
        X.data = np.ldexp(X.data, np.repeat(e, np.diff(X.indptr)))
    else:
        X = np.ldexp(X, e[:, None])
    length = np.asarray(X.sum(axis=1), dtype=np.float64).ravel()
    inv = np.zeros_like(length)
    inv[length > 0] = 1.0 / length[length > 0]
    if is_sparse:
        T = sp.diags(inv) @ X @ sp.diags(idf)
        return sp.csr_matrix(T)
    return X * inv[:, None] * idf[None, :]


#: tf-idf matrices up to this many entries (8 MiB dense) get the dense SVD (see LSI).
_DENSE_SVD_ENTRIES = 2**20


class LSI(TransformerMixin, BaseEstimator):
    """Latent semantic indexing: truncated SVD of the tf-idf matrix (paper section 3.2).

    ``fit`` computes the idf weights and the top ``n_components`` right
    singular vectors ``V`` of ``tfidf(X)``; ``transform`` maps documents to
    ``tfidf(X; idf of the training corpus) V`` (for training documents this is
    ``U Sigma``).  Compare codes with the cosine.

    Parameters
    ----------
    n_components : int, default=100
        At most ``min(n_samples, n_features)`` of the training counts.  The basis comes
        from a dense SVD (LAPACK) when the tf-idf matrix has at most ``2**20`` entries,
        when ``n_components = min(...)`` or when the Lanczos iteration fails, otherwise
        from ``scipy.sparse.linalg.svds`` (Lanczos).  When the tf-idf matrix is
        all zero (X all zero, or every word in every document: idf = 0) the singular
        values are 0, the basis is the first unit vectors and a warning says so.
    random_state : None, int or numpy.random.Generator
        Seeds the start vector of the Lanczos iteration (``scipy.sparse.linalg.svds``).
        Small matrices use the dense SVD, which is deterministic even when singular
        values tie (Lanczos then returns an arbitrary basis of the tied subspace, which
        can differ between runs with the same start vector).

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
    _fitted_schema = {"components_": array("float", "n_components", "n_features"),
                      "singular_values_": array("float", "n_components"),
                      "idf_": array("float", "n_features"),
                      "n_features_in_": scalar("int", bind="n_features")}

    def __init__(self, n_components=100, random_state=None):
        self.n_components = n_components
        self.random_state = random_state

    def _check_fitted_state(self):
        """Fitted attributes consistent with each other (called by countgrid.io.load)."""
        m = fitted_int(self, "n_features_in_", 1)
        V = fitted_array(self, "components_", shape=(None, m))
        k = V.shape[0]
        if not 1 <= k <= m:
            raise ValueError(f"components_ has {k} rows for {m} features")
        s = fitted_array(self, "singular_values_", shape=(k,), nonnegative=True)
        if k > 1 and not (np.diff(s) <= 0).all():
            raise ValueError("singular_values_ must be in decreasing order")
        # the rows are right singular vectors: orthonormal to rounding
        if not np.abs(V @ V.T - np.eye(k)).max() <= 1e-6:
            raise ValueError("components_ must have orthonormal rows (the right singular "
                             "vectors of the tf-idf matrix)")
        fitted_array(self, "idf_", shape=(m,), nonnegative=True)

    def fit(self, X, y=None):
        """Fit the idf weights and the SVD basis on the counts ``X``.

        Returns
        -------
        self : LSI
        """
        self._validate_params()
        k = int(self.n_components)
        X, _ = check_counts(X, np.float64, name="X")
        if k > min(X.shape):
            raise ValueError(f"n_components={k} must be <= min(n_samples, n_features) = "
                             f"{min(X.shape)} of X (shape {X.shape})")
        # idf, document frequencies and the (n_components, n_features) basis, dense
        check_memory(X.shape[1] * 8 * (k + 4), f"LSI of X with {X.shape[1]} features and "
                     f"n_components={k}", "prune the vocabulary of X")
        idf = idf_weights(X)
        T = sp.csr_matrix(tfidf(X, idf))
        T.eliminate_zeros()
        if T.nnz == 0:
            warnings.warn("the tf-idf matrix of X is all zero (X is all zero, or every word "
                          "occurs in every document, so idf = 0): LSI codes will be 0",
                          UserWarning, stacklevel=2)
            s = np.zeros(k)
            vt = np.eye(k, T.shape[1])
        else:
            s, vt = self._svd(T, k)
        order = np.argsort(-s, kind="stable")
        s, vt = s[order], vt[order]
        flip = np.sign(vt[np.arange(vt.shape[0]), np.abs(vt).argmax(axis=1)])
        flip[flip == 0] = 1.0
        self.components_ = np.ascontiguousarray(vt * flip[:, None])
        self.singular_values_ = np.maximum(s, 0.0)
        self.idf_ = idf
        self.n_features_in_ = X.shape[1]
        return self

    def _svd(self, T, k):
        """Top-k singular values and right singular vectors of the tf-idf matrix."""
        if k < min(T.shape) and T.shape[0] * T.shape[1] > _DENSE_SVD_ENTRIES:
            rng = check_random_state(self.random_state)
            v0 = rng.uniform(-1.0, 1.0, size=min(T.shape))
            try:
                _, s, vt = svds(T, k=k, v0=v0)
                if np.isfinite(s).all() and np.isfinite(vt).all():
                    return s, vt
            except (ArpackError, ArpackNoConvergence):
                pass
        check_memory(T.shape[0] * T.shape[1] * 8 * 3 + min(T.shape) ** 2 * 8,
                     f"a dense SVD of the {T.shape[0]} x {T.shape[1]} tf-idf matrix",
                     "use n_components < min(n_samples, n_features)")
        _, s, vt = np.linalg.svd(T.toarray(), full_matrices=False)
        return s[:k], vt[:k]

    def transform(self, X):
        """LSI codes ``tfidf(X) V`` of shape (n_samples, n_components)."""
        check_is_fitted(self, "components_")
        X, _ = check_counts(X, np.float64, n_features=self.n_features_in_, name="X",
                            owner=type(self).__name__)
        T = tfidf(X, self.idf_)
        return np.asarray(T @ self.components_.T)
