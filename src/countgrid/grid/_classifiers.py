"""Classification and regression read out from counting grids (Jojic & Perina, UAI 2011,
section 2.3) and the one-grid-per-class generative classifier (docs/counting_grids.md)."""
from numbers import Integral

import numpy as np

from countgrid._base import BaseEstimator, ClassifierMixin, RegressorMixin
from countgrid._utils.memory import check_memory
from countgrid._utils.numeric import power_of_two_scale
from countgrid._utils.param_validation import Interval
from countgrid._utils.fitted import (array, fitted_array, fitted_distribution, fitted_int,
                               fitted_labels, scalar)
from countgrid._engine.per_class import check_documents, fit_per_class
from countgrid._utils.threads import effective_n_threads
from countgrid._utils.validation import (check_is_fitted, check_real_target, encode_labels,
                                   n_samples)
from countgrid.grid._counting_grid import GRID_PARAMETER_CONSTRAINTS, CountingGrid, grid_init
from countgrid.grid._label_embedding import embedding_from_stats, readout_matrix
from countgrid.grid._capacity import auto_extent
from countgrid.grid._torus import check_grid, grid_size

_GRID_PARAMS = ("extent", "window", "n_iter", "tol", "pseudocount", "posterior_floor",
                "window_schedule", "learn_prior", "min_iter", "dtype", "num_threads",
                "random_state", "verbose")

_PARAMS_DOC = """
    Parameters
    ----------
    extent, window, n_iter, tol, pseudocount, posterior_floor, window_schedule
        As for :class:`countgrid.CountingGrid`, which is fitted with them.
    learn_prior, min_iter, dtype, num_threads, random_state, verbose
        As for :class:`countgrid.CountingGrid`, which is fitted with them.
"""


class _GridEstimator(BaseEstimator):
    # the same constructor parameters as CountingGrid, which is fitted with them
    __init__ = grid_init
    _parameter_constraints = GRID_PARAMETER_CONSTRAINTS

    def _new_grid(self, random_state=None):
        params = {name: getattr(self, name) for name in _GRID_PARAMS}
        if random_state is not None:
            params["random_state"] = random_state
        return CountingGrid(**params)


class _EmbeddingReadout(_GridEstimator):
    """One grid on all training documents; targets embedded with the
    training posteriors and read out under the test posterior."""

    _fitted_schema = {"gamma_": array("float", "extent..."),
                      "n_features_in_": scalar("int")}
    _fitted_estimators = ("grid_",)

    def _targets(self, y):
        raise NotImplementedError

    def fit(self, X, y):
        """Learn the grid on X (targets unused), then embed y on it.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        self._validate_params()
        X = check_documents(X, owner=type(self).__name__)   # X first, as check_X_y
        Y, fill = self._targets(y)
        if Y.shape[0] != n_samples(X):
            raise ValueError(f"y has {Y.shape[0]} entries but X has {n_samples(X)} samples")
        grid = self._new_grid().fit(X)
        L = grid_size(grid.pi_.shape[:-1])
        M = np.zeros((Y.shape[1], L))
        mass = np.zeros(L)

        def visit(t0, t1, qb, llb):
            M[:] += Y[t0:t1].T @ qb
            mass[:] += qb.sum(axis=0, dtype=np.float64)

        grid._visit_posteriors(X, visit)
        extent, window = check_grid(grid.pi_.shape[:-1], grid.window)
        gamma = embedding_from_stats(M, mass, extent, window, fill,
                                     effective_n_threads(self.num_threads))
        self.grid_ = grid
        self.n_features_in_ = grid.n_features_in_
        self._set_gamma(gamma.reshape(tuple(extent) + (Y.shape[1],)))
        return self

    def _readout(self, X):
        """Expected embedded target under each document's posterior:
        ``sum_k q_t(k) mean_{i in W_k} gamma(i)``."""
        check_is_fitted(self, "grid_")
        extent = self.grid_.pi_.shape[:-1]
        _, window = check_grid(extent, self.grid_.window)
        L = grid_size(extent)
        gamma = np.asarray(self.gamma_, dtype=np.float64).reshape(L, -1)
        # Targets as large as 1e308 would overflow the window sums, and those beyond 3.4e38
        # (or below 1e-38) leave the range of a float32 grid's posteriors, which the
        # readout matrix is rounded to: read out gamma scaled by a power of two (exact, so
        # ordinary targets give bit-identical predictions)
        scale = power_of_two_scale(gamma, 64 if self.grid_.pi_.dtype == np.float32 else 500)
        G = readout_matrix(gamma * scale, extent, window, effective_n_threads(self.num_threads))
        parts = []
        self.grid_._visit_posteriors(X, lambda t0, t1, qb, llb: parts.append(qb @ G.astype(qb.dtype)),
                                     owner=type(self).__name__)
        return np.concatenate(parts).astype(np.float64) / scale

    def _check_fitted_state(self):
        """Fitted attributes consistent with each other (called by countgrid.io.load)."""
        if not isinstance(getattr(self, "grid_", None), CountingGrid):
            raise ValueError("grid_ must be a fitted CountingGrid")
        extent = self.grid_.pi_.shape[:-1]
        check_grid(extent, self.grid_.window)
        if fitted_int(self, "n_features_in_", 1) != self.grid_.n_features_in_:
            raise ValueError("n_features_in_ differs from grid_.n_features_in_")
        self._check_gamma(extent)


class CountingGridClassifier(ClassifierMixin, _EmbeddingReadout):
    __doc__ = """Counting-grid classifier by label embedding (paper section 2.3, eq. 9).

    A :class:`~countgrid.CountingGrid` is learned on the training documents
    without their labels; the labels are then embedded on the grid,
    ``gamma(i, l)`` (eq. 9), and a new document's class probabilities are
    read out under its posterior:
    ``p(l | c) = sum_k q(k) mean_{i in W_k} gamma(i, l)``.

    Which classifier when: this one learns a single map of all documents without their
    labels, so it gives the class map (``gamma_``, ``countgrid.plotting``) and suits
    classes with few documents each (microarrays: 9-40 samples per class), but its
    accuracy is that of an unsupervised layout.  With enough documents per class (tens
    or more) and accuracy as the goal, prefer
    :class:`GenerativeCountingGridClassifier`: 88.4 % against 80-83 % on news20_same,
    and 0.906 against 0.691 on 377 licence texts in a user's run (docs/choosing.md).
    Multinomial naive Bayes on the same counts is a strong baseline for both.
    """ + _PARAMS_DOC + """
    Attributes
    ----------
    grid_ : CountingGrid
    gamma_ : ndarray of shape ``extent + (n_classes,)``
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    """

    _fitted_schema = {"gamma_": array("float", "extent...", "n_classes"),
                      "classes_": array("label", "n_classes"),
                      "n_features_in_": scalar("int")}

    def _targets(self, y):
        classes, idx = encode_labels(y)
        self._pending_classes = classes
        Y = np.zeros((idx.shape[0], len(classes)))
        Y[np.arange(idx.shape[0]), idx] = 1.0
        return Y, np.full(len(classes), 1.0 / len(classes))

    def _set_gamma(self, gamma):
        self.gamma_ = gamma
        self.classes_ = self._pending_classes
        del self._pending_classes

    def _check_gamma(self, extent):
        classes = fitted_labels(self, "classes_")
        # every cell's class distribution (the embedded one-hot labels, eq. 9), from the
        # grid's posteriors
        fitted_distribution(self, "gamma_", axis=-1, shape=tuple(extent) + (len(classes),),
                            precision=self.grid_.pi_.dtype)

    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, n_classes)."""
        P = self._readout(X)
        return P / P.sum(axis=1, keepdims=True)

    def predict(self, X):
        """Most probable class of each document."""
        check_is_fitted(self, "grid_")
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


class CountingGridRegressor(RegressorMixin, _EmbeddingReadout):
    __doc__ = """Counting-grid regression by target embedding (paper section 2.3, eq. 10).

    ``gamma(i) = sum_t sum_{k: i in W_k} q_t(k) y_t / sum_t sum_{k: i in W_k} q_t(k)``
    and ``y_hat = sum_k q(k) mean_{i in W_k} gamma(i)``.
    """ + _PARAMS_DOC + """
    Attributes
    ----------
    grid_ : CountingGrid
    gamma_ : ndarray of shape ``extent``
    n_features_in_ : int
    """

    def _targets(self, y):
        y = check_real_target(y)
        # embedded in units of a power of two (exact): targets near 1e308 would overflow
        # the sums of eq. 10; gamma_ is stored in the units of y
        self._target_scale = power_of_two_scale(y)
        ys = y * self._target_scale
        return ys[:, None], np.array([ys.mean()])

    def _set_gamma(self, gamma):
        self.gamma_ = gamma[..., 0] / self._target_scale
        del self._target_scale

    def _check_gamma(self, extent):
        fitted_array(self, "gamma_", shape=tuple(extent))

    def predict(self, X):
        """Predicted targets, shape (n_samples,)."""
        return self._readout(X)[:, 0]


def class_word_scores(X, labels, n_classes):
    """Chi-squared statistic of each word's counts against the classes (as scikit-learn's
    ``sklearn.feature_selection.chi2``): ``sum_c (O_cz - E_cz)^2 / E_cz`` with ``O_cz`` the
    tokens of word ``z`` in class ``c`` and ``E_cz = N_c / N * sum_c O_cz``, ``N_c`` the
    documents of class ``c``; 0 for a word with no token.

    Parameters
    ----------
    X : ndarray or scipy.sparse CSR matrix of shape (n_samples, n_features)
        Validated counts (:func:`countgrid._engine.per_class.check_documents`).
    labels : ndarray of int of shape (n_samples,)
        Class indices in ``[0, n_classes)``.
    n_classes : int

    Returns
    -------
    ndarray of shape (n_features,), float64
    """
    Y = np.zeros((n_classes, labels.shape[0]))
    Y[labels, np.arange(labels.shape[0])] = 1.0
    observed = np.asarray(Y @ X, dtype=np.float64)                  # (C, Z) tokens
    prior = Y.sum(axis=1) / labels.shape[0]                          # (C,) documents
    expected = prior[:, None] * observed.sum(axis=0)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(expected > 0, (observed - expected) ** 2 / expected, 0.0)
    return terms.sum(axis=0)


def select_class_words(X, labels, n_classes, max_features):
    """The ``max_features`` words with the largest :func:`class_word_scores` (ties by the
    lower word index), as sorted indices; all words when ``max_features`` is None or at
    least the vocabulary."""
    n_features = X.shape[1]
    if max_features is None or max_features >= n_features:
        return np.arange(n_features, dtype=np.intp)
    scores = class_word_scores(X, labels, n_classes)
    order = np.argsort(-scores, kind="stable")
    return np.sort(order[:max_features]).astype(np.intp)


class GenerativeCountingGridClassifier(ClassifierMixin, _GridEstimator):
    __doc__ = """One counting grid per class; predict by the largest likelihood.

    Each class's grid is learned on that class's training documents (same
    extent and window for all).  A document is assigned to the class whose
    grid gives it the largest exact log-likelihood (uniform class prior,
    docs/counting_grids.md).  Class ``j``'s grid is seeded from ``random_state``
    with a per-class seed, so results do not depend on thread counts.

    Which classifier when: the more accurate counting-grid classifier when every class
    has tens of documents or more (the draft journal version's recommendation; 88.4 %
    against 80-83 % for label embedding on news20_same, docs/results.md), with
    ``extent="auto"`` sizing each class's grid for that class's documents.  It gives no
    single map of all classes: use :class:`CountingGridClassifier` for that, and for
    classes of a handful of documents (docs/choosing.md).

    Many classes over a large vocabulary: the grids hold ``2 x cells x words`` numbers per
    class (55 classes x 38,559 words would need about 20 GB), so keep the words that tell
    the classes apart, ``max_features`` (e.g. 5000; docs/choosing.md, "Many classes").
    """ + _PARAMS_DOC + """    max_features : int, optional
        Learn and score the grids on only this many words: those with the largest
        chi-squared statistic of their training counts against the classes
        (the statistic of scikit-learn's ``chi2``), chosen in
        ``fit`` from the training documents.  None (default) keeps every word.

    Attributes
    ----------
    grids_ : list of CountingGrid
        Over the selected words (``features_``).
    classes_ : ndarray of shape (n_classes,)
    features_ : ndarray of int of shape (n_selected,)
        Sorted indices of the words the grids are learned on (every word when
        ``max_features`` is None; absent from models saved by 0.1.0, which use every
        word).
    n_features_in_ : int
        Words of the documents given to ``fit`` (and expected by ``predict``).
    """

    _fitted_schema = {"classes_": array("label", "n_classes"),
                      "features_": array("int", "n_selected"),
                      "n_features_in_": scalar("int")}
    _fitted_estimators = ("grids_",)
    _parameter_constraints = {**GRID_PARAMETER_CONSTRAINTS,
                              "max_features": [None, Interval(Integral, 1, None)]}

    def __init__(self, extent="auto", window=(4, 4), n_iter=100, tol=1e-5,
                 pseudocount="auto", posterior_floor="auto", window_schedule="auto",
                 learn_prior=False, min_iter=30, dtype=np.float32, num_threads=None,
                 random_state=None, verbose=0, max_features=None):
        grid_init(self, extent, window, n_iter, tol, pseudocount, posterior_floor,
                  window_schedule, learn_prior, min_iter, dtype, num_threads, random_state,
                  verbose)
        self.max_features = max_features

    def fit(self, X, y):
        """Learn one grid per class (on the ``max_features`` most class-related words).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        """
        self._validate_params()
        X = check_documents(X)
        self._check_memory(X, y)
        classes, labels = encode_labels(y, X.shape[0])
        features = select_class_words(X, labels, len(classes), self.max_features)
        selected = X if features.shape[0] == X.shape[1] else X[:, features]
        _, _, grids = fit_per_class(lambda seed: self._new_grid(random_state=seed),
                                    selected, y, self.random_state,
                                    owner=type(self).__name__)
        self.grids_ = grids
        self.classes_ = classes
        self.features_ = features
        self.n_features_in_ = X.shape[1]
        return self

    def _check_memory(self, X, y):
        """Refuse (MemoryError) before fitting when the grids of every class cannot be held:
        each keeps ``pi_`` and ``h_`` (2 x cells x words), and the one being fitted needs
        about 6 such tables (CountingGrid.fit); words: ``max_features`` or all of X's."""
        classes, labels = encode_labels(y, X.shape[0])
        sizes = np.bincount(labels, minlength=len(classes))
        window = tuple(self.window)
        itemsize = np.dtype(self.dtype if self.dtype is not None else X.dtype).itemsize
        cells = [grid_size(auto_extent(int(n), window) if isinstance(self.extent, str)
                           else self.extent) for n in sizes]
        Z = X.shape[1] if self.max_features is None else min(self.max_features, X.shape[1])
        check_memory(itemsize * Z * (2 * sum(cells) + 4 * max(cells)),
                     f"{len(classes)} counting grids (one per class, {min(cells)} to "
                     f"{max(cells)} cells) over {Z} words",
                     "keep the words that tell the classes apart (max_features, e.g. "
                     "5000), dtype=numpy.float32, a smaller extent, or "
                     "CountingGridClassifier (one grid for all classes)")

    def _check_fitted_state(self):
        """Fitted attributes consistent with each other (called by countgrid.io.load)."""
        classes = fitted_labels(self, "classes_")
        grids = getattr(self, "grids_", None)
        if not isinstance(grids, list) or len(grids) != len(classes) or not all(
                isinstance(g, CountingGrid) for g in grids):
            raise ValueError(f"grids_ must be a list of {len(classes)} fitted CountingGrids")
        n_features = fitted_int(self, "n_features_in_", 1)
        features = getattr(self, "features_", None)
        if features is None:                     # model files of 0.1.0: every word
            n_words = n_features
        else:
            features = np.asarray(features)
            if features.ndim != 1 or features.shape[0] < 1 or features.dtype.kind not in "iu" \
                    or features[0] < 0 or features[-1] >= n_features \
                    or np.any(np.diff(features) <= 0):
                raise ValueError("features_ must be increasing word indices in "
                                 f"[0, {n_features})")
            self.features_ = features.astype(np.intp)
            n_words = features.shape[0]
        if any(g.n_features_in_ != n_words for g in grids):
            raise ValueError(f"the grids_ must be learned on {n_words} words (features_)")

    def class_log_likelihoods(self, X):
        """Exact log-likelihood of each document under each class grid.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Counts.

        Returns
        -------
        ndarray of shape (n_samples, n_classes), float64
            Column ``j`` is ``grids_[j].score_samples(X)`` (the class of ``classes_[j]``).
        """
        check_is_fitted(self, "grids_")
        X = check_documents(X, self.n_features_in_, owner=type(self).__name__)
        features = getattr(self, "features_", None)      # None: a model file of 0.1.0
        if features is not None and features.shape[0] != X.shape[1]:
            X = X[:, features]
        return np.stack([g.score_samples(X) for g in self.grids_], axis=1)

    def predict_log_proba(self, X):
        """Log posterior class probabilities under a uniform class prior."""
        ll = self.class_log_likelihoods(X)
        m = ll.max(axis=1, keepdims=True)
        m[~np.isfinite(m)] = 0.0
        return ll - m - np.log(np.exp(ll - m).sum(axis=1, keepdims=True))

    def predict_proba(self, X):
        """Posterior class probabilities, shape (n_samples, n_classes)."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """Class with the largest likelihood."""
        check_is_fitted(self, "grids_")
        return self.classes_[np.argmax(self.class_log_likelihoods(X), axis=1)]
