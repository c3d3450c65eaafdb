"""Kernel classifiers on generative embeddings with information-theoretic kernels.

The hybrid generative/discriminative scheme of Bicego et al. (Neurocomputing 2013, sections
2 and 4; docs/topics.md): a generative embedding (:mod:`countgrid.embeddings`) maps
each document to a non-negative vector, an information-theoretic kernel
(:mod:`countgrid.kernels`) compares the vectors, and an SVM on the precomputed Gram matrix
or a k-nearest-neighbour rule on the kernel-induced distance classifies them.
"""
import functools
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from countgrid._base import BaseEstimator, ClassifierMixin
from countgrid._utils.memory import check_memory
from countgrid._utils.param_validation import Interval, Options
from countgrid._utils.validation import (asarray_or_sparse, check_is_fitted, check_matrix, check_sizes,
                                   encode_labels)
from countgrid.kernels._it_kernels import (_check_blocks, _columns, _dense, _log2_masses,
                                           _pair_sq_distances, _probabilities,
                                           jensen_tsallis_kernel, log_q)

__all__ = ["ITKernelClassifier"]

_KERNELS = ("linear", "js", "jt")
#: kernel_distances recomputes from the two rows every pair whose squared distance from the
#: Gram matrix, k(x, x) + k(y, y) - 2 k(x, y), is below this fraction of
#: |k(x, x)| + |k(y, y)| + 2 |k(x, y)|: the formula cancels there (its round-off, a few ulp
#: of that sum, stays below 2**6 ulp of the squared distance elsewhere)
_NEAR = 2.0 ** -6
#: pair-coordinates per chunk of that recomputation (bounds its temporary arrays)
_PAIR_CHUNK = 2 ** 18


class _AvailableIf:
    """A method that exists only when ``check(self)`` is true (as scikit-learn's
    ``available_if``): ``hasattr`` is False otherwise, so that model selection tools do
    not call it."""

    def __init__(self, check, method):
        self.check, self.method = check, method
        functools.update_wrapper(self, method)

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.method
        if not self.check(obj):
            raise AttributeError(f"{type(obj).__name__}.{self.method.__name__} is available "
                                 f"for classifier='svm' only, not {obj.classifier!r}")
        return self.method.__get__(obj, owner)


def _if_svm(method):
    return _AvailableIf(lambda est: est.classifier == "svm", method)


def _clone(est):
    try:
        from sklearn.base import clone
    except ImportError:  # scikit-learn is optional: a parameter copy is enough here
        return type(est)(**est.get_params(deep=False))
    return clone(est)


class ITKernelClassifier(ClassifierMixin, BaseEstimator, saveable=False):
    """SVM or k-NN with an information-theoretic kernel on a generative embedding.

    Parameters
    ----------
    embedding : transformer or None, default=None
        An unfitted transformer with ``fit(X, y)`` / ``transform(X)``, e.g.
        ``countgrid.FreeEnergyScoreSpace(n_components=5)``; it is cloned and fitted on the
        training documents only.  None uses X itself (e.g. word counts).
    kernel : {"linear", "js", "jt"}, default="jt"
        "linear": ``<x, y>`` on the raw embedding; "js": Jensen-Shannon kernel; "jt":
        Jensen-Tsallis q-kernel (:func:`countgrid.kernels.jensen_tsallis_kernel`).
        "js" and "jt" L1-normalise the vectors unless ``weighted`` is given.
    q : float in [0, 2], default=1.5
        Entropic index of "jt".
    weighted : {None, "A", "B"}, default=None
        Weighted kernels ``k^A_q`` / ``k^B_q`` on unnormalised measures ("jt" only).
    exponentiated : bool, default=False
        ``exp(-t T_q)`` ("js"/"jt" only).
    t : float > 0, default=1.0
    combine : {"sum", "concat"}, default="sum"
        How the blocks of a block-structured embedding (one block per class model for
        the "-1" embeddings: the embedding's ``block_sizes_``) enter the kernel
        (docs/topics.md, "Block structure and per-block kernel sums"): "sum" computes the
        kernel on each block (each normalised on its own) and sums them,
        ``k = sum_i w_i k_i``; "concat" computes one kernel on the whole concatenated
        vector.  Embeddings without
        ``block_sizes_`` (and ``embedding=None``) are one block either way; for the
        linear kernel the two agree up to the weights.
    block_weights : sequence of float >= 0, optional
        The weights ``w_i`` of "sum" (default 1 each), one per block; tune them with
        ``GridSearchCV`` (a weighted sum with cross-validated weights).
    classifier : {"svm", "knn"}, default="svm"
        "svm": scikit-learn ``SVC(kernel="precomputed", C=C)`` (needs
        ``pip install countgrid[sklearn]``); "knn": majority vote of the ``n_neighbors``
        training documents nearest in the kernel-induced distance
        ``d(x, y)^2 = k(x, x) + k(y, y) - 2 k(x, y)`` (ties: the smallest distance sum, then
        the first class).
    C : float > 0, default=1.0
        SVM regularisation.
    n_neighbors : int, default=1
    num_threads : int, optional
        OpenMP threads of the kernel computation.

    Attributes
    ----------
    embedding_ : transformer or None
        The fitted embedding.
    n_features_in_ : int
        Number of columns of the X seen in ``fit``; predictions check it.
    svc_ : sklearn.svm.SVC
        Only for ``classifier="svm"``; fitted on the training Gram matrix centred in
        feature space (``K - row means - column means + mean``), which leaves the SVM
        unchanged in exact arithmetic and keeps libsvm from cycling on nearly constant
        kernel matrices.
    train_kernel_means_ : ndarray of shape (n_train,)
        Column means of the training Gram matrix (``classifier="svm"``), for centring
        test Gram matrices.
    train_embedding_ : ndarray or sparse matrix
        Embedding of the training documents (needed for the test Gram matrices).
    train_self_ : ndarray
        ``k(x, x)`` of the training documents (k-NN).
    blocks_ : tuple of int or None
        Block widths used by the kernel (None: one kernel on the whole vector).
    classes_ : ndarray
    y_index_ : ndarray of int
        Training labels as indices into ``classes_``.

    Notes
    -----
    Not saveable with ``countgrid.save`` (the SVM is a scikit-learn object): ``save``
    raises TypeError.  ``decision_function`` exists for ``classifier="svm"`` only
    (``hasattr`` is False for "knn"); there is no ``predict_proba``.

    X is validated before anything else touches it (finite values; non-negative for the
    "js" and "jt" kernels or with an embedding; any scipy.sparse format, dense and sparse
    may be mixed between fit and predict), and so is the embedding's output.

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.poisson([3, 1, 1, 0.5], (20, 4)), rng.poisson([1, 1, 3, 2], (20, 4))])
    >>> y = np.repeat([0, 1], 20)
    >>> clf = countgrid.ITKernelClassifier(kernel="js", classifier="knn", n_neighbors=3)
    >>> float(clf.fit(X, y).score(X, y)) > 0.8
    True
    """

    _inference_params = ("kernel", "q", "t", "weighted", "exponentiated", "block_weights",
                         "combine", "classifier", "n_neighbors")
    _parameter_constraints = {
        "embedding": [None, "estimator"],
        "kernel": [Options(*_KERNELS)],
        "q": [Interval(Real, 0, 2)],
        "weighted": [None, Options("A", "B", "normalized", "unnormalized")],
        "exponentiated": ["boolean"],
        "t": [Interval(Real, 0, None, closed="neither")],
        "combine": [Options("sum", "concat")],
        "block_weights": [None, "array-like"],
        "classifier": [Options("svm", "knn")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "n_neighbors": [Interval(Integral, 1, None)],
        "num_threads": ["num_threads"],
    }

    def __init__(self, embedding=None, kernel="jt", q=1.5, weighted=None, exponentiated=False,
                 t=1.0, combine="sum", block_weights=None, classifier="svm", C=1.0,
                 n_neighbors=1, num_threads=None):
        self.embedding = embedding
        self.kernel = kernel
        self.q = q
        self.weighted = weighted
        self.exponentiated = exponentiated
        self.t = t
        self.combine = combine
        self.block_weights = block_weights
        self.classifier = classifier
        self.C = C
        self.n_neighbors = n_neighbors
        self.num_threads = num_threads

    def _validate(self):
        self._validate_params()
        if self.kernel == "linear" and (self.weighted is not None or self.exponentiated):
            raise ValueError("weighted / exponentiated apply to the 'js' and 'jt' kernels only")

    def _resolve_blocks(self, n_dims):
        """Block widths of the fitted embedding (None: one block) and their weights."""
        sizes = None
        if self.combine == "sum" and self.embedding_ is not None:
            sizes = getattr(self.embedding_, "block_sizes_", None)
        if sizes is not None and len(sizes) == 1 and self.block_weights is None:
            sizes = None
        if sizes is None and self.block_weights is not None:
            raise ValueError("block_weights needs combine='sum' and an embedding with "
                             "block_sizes_ (a block-structured embedding)")
        if sizes is None:
            return None, None
        _check_blocks(sizes, self.block_weights, n_dims)  # raises on a mismatch
        return tuple(int(b) for b in sizes), self.block_weights

    def _block_pairs(self, A, B):
        """``(weight, A_i, B_i)`` of every block (one unweighted block without blocks_)."""
        if self.blocks_ is None:
            return [(1.0, A, B)]
        bounds, weights = _check_blocks(self.blocks_, self.block_weights_, A.shape[1])
        return [(w, _columns(A, a, b), None if B is None else _columns(B, a, b))
                for (a, b), w in zip(bounds, weights)]

    def _gram(self, A, B=None):
        n_b = A.shape[0] if B is None else B.shape[0]
        check_memory(A.shape[0] * n_b * 24, f"a {A.shape[0]} x {n_b} kernel Gram matrix",
                     "predict fewer documents at a time")
        if self.kernel == "linear":
            K = np.zeros((A.shape[0], n_b))
            for w, Ai, Bi in self._block_pairs(A, B):
                Ki = Ai @ (Ai if Bi is None else Bi).T
                K += w * np.asarray(Ki.toarray() if sp.issparse(Ki) else Ki, dtype=np.float64)
            if not np.isfinite(K).all():
                raise ValueError("the linear kernel of these vectors exceeds the range of "
                                 "float64: rescale X (or the embedding)")
            return K
        q = 1.0 if self.kernel == "js" else self.q
        return np.asarray(jensen_tsallis_kernel(A, B, q=q, weighted=self.weighted,
                                                exponentiated=self.exponentiated, t=self.t,
                                                blocks=self.blocks_,
                                                block_weights=self.block_weights_,
                                                num_threads=self.num_threads), dtype=np.float64)

    def _self_kernel(self, A):
        total = 0.0
        for w, Ai, _ in self._block_pairs(A, None):
            total = total + w * self._self_kernel_block(Ai)
        if not np.all(np.isfinite(total)):
            raise ValueError(f"the {self.kernel} kernel of these vectors with themselves "
                             "exceeds the range of float64: rescale X (or the embedding)")
        return total

    def _self_kernel_block(self, A):
        """``k(x, x)`` of every row, from the closed forms of docs/kernels.md: on the
        probability vector p of x, ``k_JT,q(p, p) = ln_q(2) sum_d p_d^q`` (``0^q = 0``;
        ``ln 2`` at q = 1, ``|supp p|`` at q = 0), ``k^A_q(x, x) = k_JT,q(p, p)``,
        ``k^B_q(x, x) = (2 w)^q k_JT,q(p, p)`` and ``exp(-t T_q(p, p))`` with
        ``T_q(p, p) = ln_q 2 - k_JT,q(p, p)``; 0 for a row of zero mass."""
        if self.kernel == "linear":
            if sp.issparse(A):
                return np.asarray(A.multiply(A).sum(axis=1), dtype=np.float64).ravel()
            return np.einsum("ij,ij->i", A, A).astype(np.float64)
        q = 1.0 if self.kernel == "js" else float(self.q)
        P = _probabilities(A)
        if sp.issparse(P):
            powers = P.power(q) if q > 0 else (P > 0).astype(np.float64)
            sums = np.asarray(powers.sum(axis=1), dtype=np.float64).ravel()
        else:
            powers = np.power(P, q, out=np.zeros_like(P), where=P > 0)
            sums = powers.sum(axis=1)
        mass_ok = sums > 0
        k = float(log_q(2.0, q)) * sums
        weighted = {"normalized": "A", "unnormalized": "B"}.get(self.weighted, self.weighted)
        if self.exponentiated:
            k = np.exp(-float(self.t) * (float(log_q(2.0, q)) - k))
        elif weighted == "B":
            with np.errstate(over="ignore"):
                k = k * np.exp2(q * (1.0 + np.where(mass_ok, _log2_masses(A), 0.0)))
        return np.where(mass_ok, k, 0.0)

    def _check_X(self, X, fitting=False):
        """Validate X before anything touches it; returns CSR or a C array (float64)."""
        nonnegative = self.embedding is not None or self.kernel != "linear"
        X = check_matrix(asarray_or_sparse(X, "X"), "X", np.float64, nonnegative=nonnegative)
        check_sizes(X.shape, "X", None if fitting else self.n_features_in_,
                    owner=type(self).__name__)
        return X

    def _embed(self, X):
        """The vectors the kernel compares: X itself or its embedding (validated)."""
        if self.embedding_ is None:
            return X
        name = f"the output of the {type(self.embedding_).__name__} embedding"
        Z = check_matrix(self.embedding_.transform(X), name, np.float64)
        if Z.shape[0] != X.shape[0]:
            raise ValueError(f"{name} has {Z.shape[0]} rows for {X.shape[0]} documents")
        if self.kernel != "linear":
            low = Z.data.min(initial=0.0) if sp.issparse(Z) else Z.min(initial=0.0)
            if low < 0:
                raise ValueError(f"{name} has negative values (down to {low!r}); the "
                                 f"'{self.kernel}' kernel needs non-negative vectors: use "
                                 "kernel='linear' or a non-negative embedding")
        return Z

    def fit(self, X, y):
        """Fit the embedding on (X, y), build the training Gram matrix, train the classifier.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative counts.
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        self._validate()
        X = self._check_X(X, fitting=True)
        classes, idx = encode_labels(y, n_samples=X.shape[0])
        svc = None
        if self.classifier == "svm":
            try:
                from sklearn.svm import SVC
            except ImportError as exc:
                raise ImportError("classifier='svm' needs scikit-learn: "
                                  "pip install countgrid[sklearn]") from exc
            svc = SVC(kernel="precomputed", C=self.C)
        if self.embedding is None:
            self.embedding_ = None
        else:
            self.embedding_ = _clone(self.embedding).fit(X, y)
        Z = self._embed(X)
        self.n_features_in_ = X.shape[1]
        self.blocks_, self.block_weights_ = self._resolve_blocks(Z.shape[1])
        self.train_embedding_ = Z
        self.classes_ = classes
        self.y_index_ = idx
        if svc is not None:
            K = self._gram(Z)
            self.train_kernel_means_ = K.mean(axis=0)
            self.svc_ = svc.fit(self._centre(K, self.train_kernel_means_), idx)
        else:
            self.train_self_ = self._self_kernel(Z)
        return self

    @staticmethod
    def _centre(K, train_means, row_means=None):
        """Centre a Gram matrix in feature space with the training mean ``mu``:
        ``<phi(x) - mu, phi(y) - mu>``.  The SVM solution is unchanged in exact arithmetic
        (its bias absorbs the shift), but libsvm no longer cycles on the nearly constant
        raw Gram matrices that some embeddings give (observed: > 10 min at C = 10)."""
        if row_means is None:
            row_means = train_means
        return K - row_means[:, None] - train_means[None, :] + train_means.mean()

    def _test_gram(self, X):
        K = self._gram(self._embed(self._check_X(X)), self.train_embedding_)
        return self._centre(K, self.train_kernel_means_, K.mean(axis=1))

    @_if_svm
    def decision_function(self, X):
        """SVM decision values (``classifier="svm"`` only), as ``SVC.decision_function``:
        shape (n_samples,) for two classes, (n_samples, n_classes) otherwise."""
        check_is_fitted(self, "train_embedding_")
        return self.svc_.decision_function(self._test_gram(X))

    def kernel_distances(self, X):
        """Kernel-induced distances from each row of X to each training document.

        ``d(x, y) = sqrt(k(x, x) + k(y, y) - 2 k(x, y))`` on the embeddings, with the
        kernel of this classifier (the distance of the k-NN rule).  That formula cancels
        for near pairs (a document and its duplicate), so a pair whose squared distance
        is below ``2**-6`` of ``|k(x, x)| + |k(y, y)| + 2 |k(x, y)|`` is recomputed from
        the two rows as a sum of non-negative terms (``|x - y|^2`` for the linear kernel,
        per-coordinate Jensen gaps for the IT kernels; ``weighted="A"`` keeps a
        cancellation when the masses differ): duplicates are exactly 0 apart, and dense
        and sparse input agree to about 1e-14 relative.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Documents, embedded as the training documents were.

        Returns
        -------
        ndarray of shape (n_samples, n_train_samples)
            Column ``j`` is the distance to the ``j``-th training document.
        """
        check_is_fitted(self, "train_embedding_")
        Z = self._embed(self._check_X(X))
        K = self._gram(Z, self.train_embedding_)
        train_self = getattr(self, "train_self_", None)
        if train_self is None:
            train_self = self._self_kernel(self.train_embedding_)
        test_self = self._self_kernel(Z)
        d2 = test_self[:, None] + train_self[None, :] - 2.0 * K
        # near pairs (a document and its duplicate: 0, or 1e-8 from the round-off of the
        # three kernel values, differently in dense and sparse input) come from the rows;
        # a row of zero mass has kernel values exactly 0, so its pairs do not cancel
        np.abs(K, out=K)
        K *= 2.0 * _NEAR
        K += _NEAR * np.abs(test_self)[:, None]
        K += _NEAR * np.abs(train_self)[None, :]
        near = d2 <= K
        near &= (test_self != 0)[:, None]
        near &= (train_self != 0)[None, :]
        rows, cols = np.nonzero(near)
        if rows.size:
            d2[rows, cols] = self._pair_sq_distances(Z, self.train_embedding_, rows, cols)
        return np.sqrt(np.maximum(d2, 0.0))

    def _pair_sq_distances(self, A, B, rows, cols):
        """``k(x, x) + k(y, y) - 2 k(x, y)`` of the pairs ``(A[rows[i]], B[cols[i]])``,
        computed from the two rows without the cancellation of that formula (linear:
        ``|x - y|^2``; the IT kernels: ``_it_kernels._pair_sq_distances``), from their dense
        values, so that dense and sparse input give the same bits."""
        out = np.zeros(rows.shape[0])
        q = 1.0 if self.kernel == "js" else float(self.q)
        for w, Ai, Bi in self._block_pairs(A, B):
            step = max(1, _PAIR_CHUNK // max(Ai.shape[1], 1))
            for s in range(0, rows.shape[0], step):
                x = np.ascontiguousarray(_dense(Ai[rows[s:s + step]]), dtype=np.float64)
                y = np.ascontiguousarray(_dense(Bi[cols[s:s + step]]), dtype=np.float64)
                if self.kernel == "linear":
                    d2 = ((x - y) ** 2).sum(axis=1)
                else:
                    ok = (x.max(axis=1, initial=0.0) > 0) & (y.max(axis=1, initial=0.0) > 0)
                    d2 = np.zeros(x.shape[0])
                    if ok.any():
                        d2[ok] = _pair_sq_distances(x[ok], y[ok], q, self.weighted,
                                                    self.exponentiated, float(self.t))
                    # a block of zero mass in one row: the other's self-kernel
                    lone = ~ok
                    if lone.any():
                        d2[lone] = (self._self_kernel_block(x[lone])
                                    + self._self_kernel_block(y[lone]))
                out[s:s + step] += w * d2
        return out

    def predict(self, X):
        """Predicted class of each document."""
        check_is_fitted(self, "train_embedding_")
        if self.classifier == "svm":
            return self.classes_[self.svc_.predict(self._test_gram(X))]
        dist = self.kernel_distances(X)
        k = min(int(self.n_neighbors), dist.shape[1])
        nn = np.argsort(dist, axis=1, kind="stable")[:, :k]
        labels = self.y_index_[nn]
        n_classes = len(self.classes_)
        votes = np.zeros((dist.shape[0], n_classes))
        dsum = np.zeros((dist.shape[0], n_classes))
        rows = np.repeat(np.arange(dist.shape[0]), k)
        np.add.at(votes, (rows, labels.ravel()), 1.0)
        np.add.at(dsum, (rows, labels.ravel()), np.take_along_axis(dist, nn, axis=1).ravel())
        # most votes; among ties the smallest summed distance
        key = votes - dsum / (dsum.max() + 1.0) * 0.5
        return self.classes_[np.argmax(key, axis=1)]
