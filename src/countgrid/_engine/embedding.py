"""What every generative embedding shares (pLSA ones in countgrid.topics, counting-grid
ones in countgrid.grid): the "-1"/"-2" modes, one model per class or one on all documents
(fitted by countgrid._engine.per_class), and the concatenation of the per-model blocks.

Bicego et al. (Neurocomputing 2013): ``mode="per_class"`` (alias ``"1"``) fits one model
per class on that class's training documents and concatenates the blocks
``[phi(d; theta_1), ..., phi(d; theta_C)]`` in the order of ``classes_``;
``mode="whole_data"`` (alias ``"2"``) fits one model on all training documents, labels
unused.
"""
import numpy as np
import scipy.sparse as sp

from countgrid._base import BaseEstimator, TransformerMixin
from countgrid._utils.fitted import array, fitted_int, scalar
from countgrid._engine.per_class import check_documents, fit_groups, fit_per_class, take_rows
from countgrid._utils.validation import check_is_fitted, encode_labels, n_samples

__all__ = ["MODES", "resolve_mode", "hstack", "class_labels"]

MODES = {"per_class": "per_class", "1": "per_class", 1: "per_class", "-1": "per_class",
         "whole_data": "whole_data", "2": "whole_data", 2: "whole_data", "-2": "whole_data"}


def resolve_mode(mode, allowed=("per_class", "whole_data"), owner="the embedding"):
    """The canonical mode ("per_class" or "whole_data") of a mode or its alias."""
    try:
        canonical = MODES[mode]
    except (KeyError, TypeError):
        raise ValueError(f"mode must be 'per_class' (alias '1') or 'whole_data' (alias '2'), "
                         f"got {mode!r}") from None
    if canonical not in allowed:
        raise ValueError(f"{owner} supports mode in {allowed} only, got {mode!r}")
    return canonical


def class_labels(y, X):
    """``encode_labels`` of the class labels that the "-1" embeddings need."""
    if y is None:
        raise ValueError("mode='per_class' needs the class labels y")
    return encode_labels(y, n_samples(X))


def hstack(blocks):
    """Concatenate blocks column-wise: CSR if any block is sparse, else an ndarray."""
    if any(sp.issparse(b) for b in blocks):
        return sp.hstack([sp.csr_matrix(b) for b in blocks], format="csr")
    return np.hstack(blocks)


class _GenerativeEmbedding(TransformerMixin, BaseEstimator):
    """Per-class or whole-data models; ``transform`` concatenates one block per model.

    Subclasses define ``_new_model(seed)``, ``_embed(model, i, X)`` (the block of model
    ``i``) and ``_block_width(model, i)``.
    """

    _fitted_schema = {"classes_": array("label", "n_classes"),
                      "n_features_in_": scalar("int")}
    _fitted_estimators = ("models_",)
    _allowed_modes = ("per_class", "whole_data")
    _model_class = None          # the class of the fitted models (PLSA, CountingGrid)

    def _model_counts(self, n_classes):
        """The numbers of models a fit may produce for ``n_classes`` classes."""
        return {1, n_classes}

    def _check_fitted_state(self):
        """Fitted attributes consistent with each other (called by countgrid.io.load)."""
        models = getattr(self, "models_", None)
        if not isinstance(models, list) or not models or not all(
                isinstance(m, self._model_class) for m in models):
            raise ValueError(f"models_ must be a non-empty list of fitted "
                             f"{self._model_class.__name__} models")
        classes = getattr(self, "classes_", None)
        if not isinstance(classes, np.ndarray) or classes.ndim != 1:
            raise ValueError("classes_ must be a 1-D array")
        if classes.size and len(models) not in self._model_counts(classes.size):
            raise ValueError(f"{len(models)} models_ do not match {classes.size} classes_")
        n_features = fitted_int(self, "n_features_in_", 1)
        if any(m.n_features_in_ != n_features for m in models):
            raise ValueError("the models_ and n_features_in_ disagree on the number of "
                             "features")

    def _documents(self, X):
        """X validated once (countgrid._engine.per_class.check_documents), against
        ``n_features_in_`` when fitted."""
        return check_documents(X, getattr(self, "n_features_in_", None)
                               if hasattr(self, "models_") else None,
                               owner=type(self).__name__)

    def _fit_models(self, X, y):
        """Fit ``models_`` (and ``classes_``) on validated X; returns the canonical mode."""
        self._validate_params()
        mode = resolve_mode(self.mode, self._allowed_modes, type(self).__name__)
        if mode == "whole_data":
            self.models_ = fit_groups(self._new_model, X, None, self.random_state)
            self.classes_ = (np.array([], dtype=np.int64) if y is None
                             else class_labels(y, X)[0])
        else:
            class_labels(y, X)  # the error message of a missing y
            self.classes_, _, self.models_ = fit_per_class(self._new_model, X, y,
                                                           self.random_state)
        self.n_features_in_ = int(self.models_[0].n_features_in_)
        return mode

    def _groups(self, X, y, mode):
        """The training documents of every model, in the order of ``models_``."""
        if mode == "whole_data":
            return [X]
        _, labels = class_labels(y, X)
        return [take_rows(X, labels == c) for c in range(len(self.models_))]

    def fit(self, X, y=None):
        """Fit the model(s) on the training documents.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative counts.
        y : array-like of shape (n_samples,)
            Class labels; required for ``mode="per_class"``, unused for ``"whole_data"``.

        Returns
        -------
        self
        """
        self._fit_models(check_documents(X), y)
        return self

    def transform(self, X):
        """Embedding of X: the per-model blocks concatenated in the order of ``models_``.

        Documents are folded into every fitted model (training documents like new ones), so
        X holds non-negative counts over the training vocabulary, shape
        (n_samples, n_features_in_), dense or sparse.  Returns an ndarray or CSR matrix of
        shape (n_samples, sum(block_sizes_)), non-negative.
        """
        check_is_fitted(self, "models_")
        X = self._documents(X)
        return hstack([self._embed(m, i, X) for i, m in enumerate(self.models_)])

    @property
    def block_sizes_(self):
        """Widths of the per-model blocks of ``transform`` (one per class for "-1").

        Pass to :func:`countgrid.kernels.jensen_tsallis_kernel` (``blocks=``) for the
        per-block kernel sum (Bicego et al. 2013); :class:`countgrid.ITKernelClassifier`
        does so by default.
        """
        check_is_fitted(self, "models_")
        return tuple(int(self._block_width(m, i)) for i, m in enumerate(self.models_))
