"""One model per group of documents (per class, one-vs-rest, or all documents), with one
seeding scheme.

The generative classifier fits one counting grid per class; the "-1" generative embeddings
fit one model per class (or per one-vs-rest pair) and the "-2" ones a single model.  All of
them draw their models' seeds here: model ``i`` gets the ``i``-th of
``rng.integers(0, 2**63 - 1, size=n_models)`` from ``check_random_state(random_state)``, so
a seed fixes every model, whatever the thread count.
"""
import warnings

import numpy as np

from countgrid._utils import progress as _progress
from countgrid._utils.counts import check_counts
from countgrid._utils.validation import check_random_state, encode_labels, n_samples, resolve_dtype
from countgrid.exceptions import ConvergenceWarning

__all__ = ["model_seeds", "check_documents", "take_rows", "fit_groups", "fit_per_class"]


def model_seeds(random_state, n_models):
    """The seeds of ``n_models`` models (Python ints)."""
    rng = check_random_state(random_state)
    return [int(s) for s in rng.integers(0, 2**63 - 1, size=n_models)]


def check_documents(X, n_features=None, owner=None):
    """Validated counts (countgrid._utils.counts.check_counts) in the input's float precision
    (float32 stays float32, anything else becomes float64): canonical CSR or a C array."""
    return check_counts(X, resolve_dtype(None, X), n_features=n_features, owner=owner)[0]


def take_rows(X, mask):
    """The rows of validated counts X (:func:`check_documents`) where ``mask`` is True."""
    return X[np.flatnonzero(mask)]


def fit_groups(make_model, X, masks, random_state, owner=None):
    """Fit ``make_model(seed)`` on the rows of every mask, in order; returns the models.

    ``masks`` may be None for one model on all of X.  With ``owner`` (e.g.
    "GenerativeCountingGridClassifier"), progress is reported once per fitted model
    (unit "model", countgrid._utils.progress) instead of every model's iterations (55 class
    grids logged about 800 lines per fold), and the models' ConvergenceWarnings become one
    warning naming how many did not converge."""
    X = check_documents(X)
    if masks is None:
        return [make_model(model_seeds(random_state, 1)[0]).fit(X)]
    seeds = model_seeds(random_state, len(masks))
    if owner is None:
        return [make_model(seed).fit(take_rows(X, mask)) for seed, mask in zip(seeds, masks)]
    models, unconverged = [], []
    for k, (seed, mask) in enumerate(zip(seeds, masks), 1):
        with _progress.listen(None), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            models.append(make_model(seed).fit(take_rows(X, mask)))
        for w in caught:
            if issubclass(w.category, ConvergenceWarning):
                unconverged.append(str(w.message))
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        _progress.report(owner, k, len(masks), value=None, unit="model")
    if unconverged:
        warnings.warn(f"{owner}: {len(unconverged)} of {len(masks)} models did not converge; "
                      f"the first: {unconverged[0]}", ConvergenceWarning, stacklevel=3)
    return models


def fit_per_class(make_model, X, y, random_state, owner=None):
    """One model per class of ``y``, fitted on that class's rows (``owner``: see
    :func:`fit_groups`).

    Returns
    -------
    classes : ndarray
        The sorted class labels (countgrid._utils.validation.encode_labels).
    labels : ndarray of int
        ``y`` as indices into ``classes``.
    models : list
        The fitted models, in the order of ``classes``.
    """
    classes, labels = encode_labels(y, n_samples(X))
    masks = [labels == c for c in range(len(classes))]
    return classes, labels, fit_groups(make_model, X, masks, random_state, owner)
