"""Generative embeddings built on pLSA and on counting grids (spec generative_embeddings.md §3–4).

Every embedding maps a document (a bag of counts) to a **non-negative** vector so that the
information-theoretic kernels of :mod:`countgrid.kernels` apply.  Each is a scikit-learn
style transformer: ``fit(X, y)`` learns the generative model(s) on the training documents
only, ``transform(X)`` folds new documents in and returns their embedding.

Two constructions (spec §3.0):

* ``mode="per_class"`` (alias ``"1"`` / ``1``, the "-1" embeddings of Bicego et al.): one
  model per class, fitted on that class's training documents, the embedding is the
  concatenation ``[phi(d; theta_1), ..., phi(d; theta_C)]`` in the order of ``classes_``.
* ``mode="whole_data"`` (alias ``"2"`` / ``2``, the "-2" embeddings): one model fitted on all
  training documents, labels unused.

pLSA embeddings (``P(w|z)`` = ``PLSA.components_``; ``q(z|w) = P(z|d,w)`` the posterior at the
folding-in fixed point ``P(z|d)``, spec §2.4, applied identically to training and test
documents):

* :class:`MixtureOfTopics` (MT, §3.1): ``P(z|d)``, Z dims per model; a probability vector.
* :class:`FisherScore` (FS, §3.2): ``dl/dP(w|z) = n(d,w) q(z|w) / P(w|z)``; the raw
  gradient is >= 0.
* :class:`TOPEmbedding` (TOP, §3.3) and :class:`LLREmbedding` (LLR, §3.4):
  ``[v, grad+, -grad-]``, two class models (one-vs-rest for more classes); signed, made
  non-negative by ``positivize`` (§4.2).
* :class:`FreeEnergyScoreSpace` (FESS, §3.5): the free-energy terms ``[A, B, E]``, absolute
  values (§3.5).
* :class:`PosteriorDivergence` (PD, §3.6 reconstruction): ``[KL change, fit,
  uncertainty]`` per topic, each >= 0.

Counting-grid embeddings (spec countinggrid.md §3): :class:`CountingGridPosterior` (the MT
analogue: the posterior over window positions) and :class:`CountingGridFESS` (the terms of
the counting-grid free energy).

The functions :func:`fisher_score`, :func:`fess_terms`, :func:`posterior_divergence`,
:func:`cg_fess_terms` compute one model's block from an already fitted model.

Layout of word-topic blocks: entry ``(w, z)`` is column ``w * Z + z``.
"""

import numpy as np
import scipy.sparse as sp
from scipy.special import xlogy

from countgrid._base import BaseEstimator
from countgrid._validation import check_is_fitted, check_random_state, encode_labels
from countgrid.plsa import PLSA

__all__ = ["MixtureOfTopics", "FisherScore", "TOPEmbedding", "LLREmbedding",
           "FreeEnergyScoreSpace", "PosteriorDivergence", "CountingGridPosterior",
           "CountingGridFESS", "fisher_score", "fess_terms", "posterior_divergence",
           "cg_fess_terms"]

_MODES = {"per_class": "per_class", "1": "per_class", 1: "per_class", "-1": "per_class",
          "whole_data": "whole_data", "2": "whole_data", 2: "whole_data", "-2": "whole_data"}
_REDUCE = ("none", "words", "topics")


def _resolve_mode(mode):
    try:
        return _MODES[mode]
    except (KeyError, TypeError):
        raise ValueError(f"mode must be 'per_class' (alias '1') or 'whole_data' (alias '2'), "
                         f"got {mode!r}") from None


def _check_reduce(reduce, allowed=_REDUCE):
    if reduce not in allowed:
        raise ValueError(f"reduce must be one of {allowed}, got {reduce!r}")
    return reduce


def _reduced_width(reduce, model):
    """Columns of one word-topic block of a fitted PLSA after ``reduce``."""
    Z, W = model.components_.shape
    return {"none": W * Z, "words": W, "topics": Z}[reduce]


# --------------------------------------------------------------- pLSA blocks
class _Posterior:
    """Folding-in of X into a fitted PLSA and ``q(z|w)`` on the non-zeros of X (float64)."""

    def __init__(self, model, X):
        theta, _, counts = model._fold_in(X)
        csr = counts.csr
        self.D, self.W = csr.shape
        self.theta = np.asarray(theta, dtype=np.float64)
        self.phi = np.asarray(model.components_, dtype=np.float64)  # (Z, W)
        self.Z = self.phi.shape[0]
        self.rows = np.repeat(np.arange(self.D), np.diff(csr.indptr))
        self.cols = csr.indices.astype(np.int64)
        self.n = csr.data.astype(np.float64)
        self.lengths = counts.lengths
        num = self.theta[self.rows] * self.phi[:, self.cols].T  # (nnz, Z)
        self.pwd = num.sum(axis=1)                               # P(w|d) on the non-zeros
        self.q = np.divide(num, self.pwd[:, None], out=np.zeros_like(num),
                           where=self.pwd[:, None] > 0)
        with np.errstate(divide="ignore"):
            self.loglik = np.bincount(self.rows, weights=self.n * np.log(self.pwd),
                                      minlength=self.D)

    def block(self, values, reduce):
        """(nnz, Z) values -> (D, W*Z) CSR, (D, W) CSR or (D, Z) dense."""
        D, W, Z = self.D, self.W, self.Z
        if reduce == "topics":
            out = np.zeros((D, Z))
            np.add.at(out, self.rows, values)
            return out
        if reduce == "words":
            return sp.csr_matrix((values.sum(axis=1), (self.rows, self.cols)), shape=(D, W))
        cols = (self.cols[:, None] * Z + np.arange(Z)[None, :]).ravel()
        rows = np.repeat(self.rows, Z)
        M = sp.csr_matrix((values.ravel(), (rows, cols)), shape=(D, W * Z))
        M.eliminate_zeros()
        return M


def fisher_score(model, X, reduce="none", normalize_length=False):
    """Fisher score ``dl(d)/dP(w|z) = n(d,w) P(z|d,w) / P(w|z)`` of a fitted PLSA (spec §3.2).

    Parameters
    ----------
    model : PLSA
        Fitted model.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    reduce : {"none", "words", "topics"}, default="none"
        "none": all ``W * Z`` entries (column ``w * Z + z``), a CSR matrix;
        "words": summed over z (``W`` columns, CSR); "topics": summed over w (``Z``
        columns, dense).
    normalize_length : bool, default=False
        Use ``n(d,w) / n(d)`` instead of ``n(d,w)`` (Hofmann, NIPS 2000).

    Returns
    -------
    sparse matrix or ndarray, non-negative
    """
    return _fisher_block(_Posterior(model, X), _check_reduce(reduce), normalize_length)


def _fisher_block(post, reduce, normalize_length):
    n = post.n
    if normalize_length:
        n = n / np.maximum(post.lengths[post.rows], 1e-300)
    values = n[:, None] * post.q / post.phi[:, post.cols].T
    return post.block(values, reduce)


def fess_terms(model, X, reduce="none"):
    """Free-energy terms ``[A, B, E]`` of a fitted PLSA (spec §3.5), all >= 0.

    ``A_wz = -n(d,w) q(z|w) ln P(w|z)`` (emission), ``B_wz = -n(d,w) q(z|w) ln P(z|d)``
    (topic mixing), ``E_wz = -n(d,w) q(z|w) ln q(z|w)`` (entropy), so that the free energy
    ``F(d) = sum A + sum B - sum E = -l(d)`` at the folding-in fixed point.

    Parameters
    ----------
    model : PLSA
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    reduce : {"none", "words", "topics"}, default="none"
        Granularity of each block: ``W*Z`` (CSR), ``W`` (CSR) or ``Z`` (dense) columns.

    Returns
    -------
    (A, B, E) : tuple of three matrices of the same shape
    """
    reduce = _check_reduce(reduce)
    post = _Posterior(model, X)
    nq = post.n[:, None] * post.q
    A = -nq * np.log(post.phi[:, post.cols].T)
    B = -post.n[:, None] * xlogy(post.q, post.theta[post.rows])
    E = -post.n[:, None] * xlogy(post.q, post.q)
    return post.block(A, reduce), post.block(B, reduce), post.block(E, reduce)


def _topic_mass(model, X):
    """Training topic mass ``s_z = sum_{d,w} n(d,w) P(z|d,w)``."""
    post = _Posterior(model, X)
    return (post.n[:, None] * post.q).sum(axis=0)


def posterior_divergence(model, X, topic_mass):
    """Posterior-divergence features of a fitted PLSA (spec §3.6 reconstruction), ``3 Z`` dims.

    With training statistics ``s_wz = P(w|z) s_z`` (``topic_mass`` = ``s_z``) and the new
    document's ``r_wz = n(d,w) q(z|w)``, the incremental update is
    ``P'(w|z) = (s_wz + r_wz) / (s_z + r_z)``.  Features per topic:
    ``[KL(P'(.|z) || P(.|z)), sum_w (A_wz + B_wz), sum_w E_wz]`` (blocks of Z columns).

    Returns
    -------
    ndarray of shape (n_samples, 3 Z), non-negative
    """
    post = _Posterior(model, X)
    s = np.asarray(topic_mass, dtype=np.float64)
    r = post.n[:, None] * post.q                      # (nnz, Z)
    rz = np.zeros((post.D, post.Z))
    np.add.at(rz, post.rows, r)
    denom = s[None, :] + rz                           # (D, Z)
    a = np.divide(s[None, :], denom, out=np.ones_like(denom), where=denom > 0)
    phi_nz = post.phi[:, post.cols].T                 # (nnz, Z)
    new = (phi_nz * s[None, :] + r) / denom[post.rows]
    kl_in = xlogy(new, new) - new * np.log(phi_nz)
    kl = np.zeros((post.D, post.Z))
    np.add.at(kl, post.rows, kl_in)
    covered = np.zeros((post.D, post.Z))
    np.add.at(covered, post.rows, phi_nz)
    kl += np.clip(1.0 - covered, 0.0, None) * xlogy(a, a)
    kl = np.clip(kl, 0.0, None)
    A = -r * np.log(phi_nz) - post.n[:, None] * xlogy(post.q, post.theta[post.rows])
    E = -post.n[:, None] * xlogy(post.q, post.q)
    fit = np.zeros((post.D, post.Z))
    unc = np.zeros((post.D, post.Z))
    np.add.at(fit, post.rows, A)
    np.add.at(unc, post.rows, E)
    return np.hstack([kl, fit, unc])


# --------------------------------------------------------------- helpers
def _hstack(blocks):
    if any(sp.issparse(b) for b in blocks):
        return sp.hstack([sp.csr_matrix(b) for b in blocks], format="csr")
    return np.hstack(blocks)


def _targets(y, n_samples):
    if y is None:
        raise ValueError("mode='per_class' needs the class labels y")
    return encode_labels(y, n_samples)


def _rows(X, mask):
    return X[np.flatnonzero(mask)] if sp.issparse(X) else np.asarray(X)[mask]


def _n_samples(X):
    return X.shape[0] if hasattr(X, "shape") else len(X)


_PLSA_PARAMS_DOC = """
    n_components : int, default=10
        Topics ``Z`` of every pLSA model.
    n_iter : int, default=100
        Maximum EM iterations of each pLSA fit.
    tol : float, default=1e-6
        EM tolerance of each pLSA fit.
    random_state : None, int or numpy.random.Generator
        Seeds the models (model ``i`` gets the i-th draw of one generator).
    num_threads : int, optional
        OpenMP threads of the pLSA kernels.
"""


class _PLSAEmbedding(BaseEstimator):
    """Shared fitting logic: per-class or whole-data pLSA models."""

    _estimator_kind = "transformer"
    _fitted_arrays = ("classes_", "n_features_in_")
    _fitted_estimators = ("models_",)
    _allowed_modes = ("per_class", "whole_data")

    def _new_model(self, rng):
        return PLSA(n_components=self.n_components, n_iter=self.n_iter, tol=self.tol,
                    num_threads=self.num_threads, random_state=int(rng.integers(2 ** 31 - 1)))

    def _fit_models(self, X, y):
        mode = _resolve_mode(self.mode)
        if mode not in self._allowed_modes:
            raise ValueError(f"{type(self).__name__} supports mode in {self._allowed_modes} only "
                             f"(spec §3.0), got {self.mode!r}")
        rng = check_random_state(self.random_state)
        if mode == "whole_data":
            self.models_ = [self._new_model(rng).fit(X)]
            self.classes_ = np.array([], dtype=np.int64) if y is None else _targets(
                y, _n_samples(X))[0]
        else:
            classes, idx = _targets(y, _n_samples(X))
            self.models_ = [self._new_model(rng).fit(_rows(X, idx == c))
                            for c in range(len(classes))]
            self.classes_ = classes
        self.n_features_in_ = int(self.models_[0].n_features_in_)
        return mode

    def fit(self, X, y=None):
        """Fit the pLSA model(s) on the training documents.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative counts.
        y : array-like of shape (n_samples,)
            Class labels; required for ``mode="per_class"``, unused for
            ``"whole_data"``.

        Returns
        -------
        self
        """
        self._fit_models(X, y)
        return self

    def transform(self, X):
        """Embedding of X: the per-model blocks concatenated in the order of ``models_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray or CSR matrix of shape (n_samples, n_dims), non-negative
        """
        check_is_fitted(self, "models_")
        return _hstack([self._embed(m, i, X) for i, m in enumerate(self.models_)])

    def fit_transform(self, X, y=None):
        """Fit, then transform the same documents (folded in like new ones)."""
        return self.fit(X, y).transform(X)

    @property
    def block_sizes_(self):
        """Widths of the per-model blocks of ``transform`` (one per class for "-1").

        Pass to :func:`countgrid.kernels.jensen_tsallis_kernel` (``blocks=``) for the
        per-block kernel sum of spec §4.3; :class:`countgrid.ITKernelClassifier` does so
        by default.
        """
        check_is_fitted(self, "models_")
        return tuple(int(self._block_width(m, i)) for i, m in enumerate(self.models_))


class MixtureOfTopics(_PLSAEmbedding):
    __doc__ = """MT embedding: the topic proportions ``P(z|d)`` by folding-in (spec §3.1).

    Parameters
    ----------
    mode : {"per_class", "whole_data"} or the aliases "1"/"2", default="per_class"
        "-1" (one pLSA per class, ``C * Z`` dims, each block sums to 1) or "-2" (one pLSA
        on all training documents, ``Z`` dims).
    """ + _PLSA_PARAMS_DOC + """
    Attributes
    ----------
    models_ : list of PLSA
    classes_ : ndarray (empty for "whole_data" fitted without y)
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> X = np.random.default_rng(0).poisson(1.0, size=(20, 8)); y = np.arange(20) % 2
    >>> countgrid.MixtureOfTopics(n_components=3, random_state=0).fit_transform(X, y).shape
    (20, 6)
    """

    def __init__(self, mode="per_class", n_components=10, n_iter=100, tol=1e-6,
                 random_state=None, num_threads=None):
        self.mode = mode
        self.n_components = n_components
        self.n_iter = n_iter
        self.tol = tol
        self.random_state = random_state
        self.num_threads = num_threads

    def _embed(self, model, i, X):
        return np.asarray(model.transform(X), dtype=np.float64)

    def _block_width(self, model, i):
        return model.n_components


class FisherScore(_PLSAEmbedding):
    __doc__ = """FS embedding: gradient of ``l(d)`` w.r.t. ``P(w|z)`` (spec §3.2), non-negative.

    ``dl(d)/dP(w|z) = n(d,w) P(z|d,w) / P(w|z)`` after folding ``d`` in; Fisher information
    replaced by the identity.  The ``P(z|d)`` block (constant ``n(d)`` at the folding-in
    fixed point) is omitted; the ``P(z)`` block of the symmetric parameterisation,
    ``dl/dP(z) = n(d) P(z|d) / P(z)``, is prepended with ``include_topic_prior=True``.

    Parameters
    ----------
    mode : {"per_class", "whole_data"} or "1"/"2", default="per_class"
    reduce : {"none", "words", "topics"}, default="none"
        "none": ``W * Z`` columns per model (column ``w * Z + z``, CSR output); "words":
        summed over topics (``W``); "topics": summed over words (``Z``, dense).
    normalize_length : bool, default=False
        Use ``n(d,w)/n(d)`` (Hofmann 2000).
    include_topic_prior : bool, default=False
        Prepend the ``Z`` entries ``dl/dP(z) = n(d) P(z|d) / P(z)`` (``P(z|d)/P(z)`` with
        ``normalize_length``) to each model's block, with ``P(z)`` the model's training
        topic mass ``sum_d n(d) P(z|d) / N`` (``topic_prior_``).
    """ + _PLSA_PARAMS_DOC + """
    Attributes
    ----------
    topic_prior_ : ndarray of shape (n_models, n_components)
        ``P(z)`` of every model, from its training documents.
    """

    _fitted_arrays = ("classes_", "n_features_in_", "topic_prior_")

    def __init__(self, mode="per_class", reduce="none", normalize_length=False,
                 include_topic_prior=False, n_components=10, n_iter=100, tol=1e-6,
                 random_state=None, num_threads=None):
        self.mode = mode
        self.reduce = reduce
        self.normalize_length = normalize_length
        self.include_topic_prior = include_topic_prior
        self.n_components = n_components
        self.n_iter = n_iter
        self.tol = tol
        self.random_state = random_state
        self.num_threads = num_threads

    def fit(self, X, y=None):
        _check_reduce(self.reduce)
        mode = self._fit_models(X, y)
        if mode == "whole_data":
            groups = [X]
        else:
            _, idx = _targets(y, _n_samples(X))
            groups = [_rows(X, idx == c) for c in range(len(self.models_))]
        # P(z) of the symmetric parameterisation: the normalised training topic mass
        mass = [_topic_mass(m, Xc) for m, Xc in zip(self.models_, groups)]
        self.topic_prior_ = np.array([s / s.sum() for s in mass])
        return self

    def _embed(self, model, i, X):
        post = _Posterior(model, X)
        grad = _fisher_block(post, self.reduce, self.normalize_length)
        if not self.include_topic_prior:
            return grad
        weight = np.ones(post.D) if self.normalize_length else post.lengths.astype(np.float64)
        prior = np.maximum(self.topic_prior_[i], np.finfo(np.float64).tiny)
        return _hstack([weight[:, None] * post.theta / prior[None, :], grad])

    def _block_width(self, model, i):
        width = _reduced_width(self.reduce, model)
        return width + model.n_components if self.include_topic_prior else width


class FreeEnergyScoreSpace(_PLSAEmbedding):
    __doc__ = """FESS embedding (Perina et al. 2009; spec §3.5): the free-energy terms ``[A, B, E]``.

    Per model, with ``q(z|w) = P(z|d,w)`` at the folding-in fixed point:
    ``A_wz = -n q ln P(w|z)``, ``B_wz = -n q ln P(z|d)``, ``E_wz = -n q ln q``, all >= 0
    (the entropy block enters the free energy with a minus sign; its absolute value is used
    so the vector is a measure), ``sum A + sum B - sum E = -l(d)``.

    Parameters
    ----------
    mode : {"per_class", "whole_data"} or "1"/"2", default="per_class"
    reduce : {"none", "words", "topics"}, default="none"
        Per block ``W * Z`` (CSR), ``W`` (CSR) or ``Z`` (dense) columns, so a model gives
        ``3 W Z``, ``3 W`` or ``3 Z`` dims, ordered ``[A, B, E]``.
    """ + _PLSA_PARAMS_DOC

    def __init__(self, mode="per_class", reduce="none", n_components=10, n_iter=100, tol=1e-6,
                 random_state=None, num_threads=None):
        self.mode = mode
        self.reduce = reduce
        self.n_components = n_components
        self.n_iter = n_iter
        self.tol = tol
        self.random_state = random_state
        self.num_threads = num_threads

    def fit(self, X, y=None):
        _check_reduce(self.reduce)
        return super().fit(X, y)

    def _embed(self, model, i, X):
        return _hstack(list(fess_terms(model, X, self.reduce)))

    def _block_width(self, model, i):
        return 3 * _reduced_width(self.reduce, model)


class PosteriorDivergence(_PLSAEmbedding):
    __doc__ = """PD embedding (Li et al. 2011 idea; spec §3.6 reconstruction), ``3 Z`` dims per model.

    ``[KL(P'(.|z) || P(.|z)), sum_w (A_wz + B_wz), sum_w E_wz]`` with the incremental update
    ``P'`` of :func:`posterior_divergence`; the training topic mass ``s_z`` of every model is
    stored in ``topic_mass_`` (training documents only).

    Parameters
    ----------
    mode : {"per_class", "whole_data"} or "1"/"2", default="per_class"
    """ + _PLSA_PARAMS_DOC + """
    Attributes
    ----------
    topic_mass_ : ndarray of shape (n_models, n_components)
    """

    _fitted_arrays = ("classes_", "n_features_in_", "topic_mass_")

    def __init__(self, mode="per_class", n_components=10, n_iter=100, tol=1e-6,
                 random_state=None, num_threads=None):
        self.mode = mode
        self.n_components = n_components
        self.n_iter = n_iter
        self.tol = tol
        self.random_state = random_state
        self.num_threads = num_threads

    def fit(self, X, y=None):
        mode = self._fit_models(X, y)
        if mode == "whole_data":
            self.topic_mass_ = np.array([_topic_mass(self.models_[0], X)])
        else:
            _, idx = _targets(y, _n_samples(X))
            self.topic_mass_ = np.array([_topic_mass(m, _rows(X, idx == c))
                                         for c, m in enumerate(self.models_)])
        return self

    def _embed(self, model, i, X):
        return posterior_divergence(model, X, self.topic_mass_[i])

    def _block_width(self, model, i):
        return 3 * model.n_components


# --------------------------------------------------------------- signed: TOP / LLR
def _positivize(M, method, minima=None):
    """Spec §4.2: "shift" (by training minima, clip at 0), "split" or None."""
    if method is None:
        return M
    if method == "split":
        if sp.issparse(M):
            pos, neg = M.maximum(0), (-M).maximum(0)
            return sp.hstack([pos, neg], format="csr")
        return np.hstack([np.maximum(M, 0), np.maximum(-M, 0)])
    M = M.toarray() if sp.issparse(M) else np.asarray(M)
    return np.maximum(M - minima[None, :], 0.0)


class _SignedEmbedding(_PLSAEmbedding):
    __doc__ = """TOP / LLR: one-vs-rest pairs of class models, positivised (spec §3.3–3.4, §4.2)."""

    _allowed_modes = ("per_class",)
    _fitted_arrays = ("classes_", "n_features_in_", "log_priors_", "shift_")
    _use_priors = True

    def _check(self):
        _check_reduce(self.reduce)
        if self.positivize not in ("shift", "split", None):
            raise ValueError(f"positivize must be 'shift', 'split' or None, got "
                             f"{self.positivize!r}")

    def fit(self, X, y=None):
        """Fit the class models and, for ``positivize="shift"``, the training minima.

        Two classes: ``models_ = [model of classes_[1] ("+"), model of classes_[0] ("-")]``.
        ``C > 2`` classes: one-vs-rest, ``models_ = [class 0, rest of 0, class 1, rest of 1,
        ...]`` and one block per class.
        """
        self._check()
        mode = _resolve_mode(self.mode)
        if mode != "per_class":
            raise ValueError(f"{type(self).__name__} needs class models: only mode='per_class' "
                             f"(alias '1') is defined (spec §3.0), got {self.mode!r}")
        classes, idx = _targets(y, _n_samples(X))
        rng = check_random_state(self.random_state)
        pairs = [(1, 0)] if len(classes) == 2 else [(c, None) for c in range(len(classes))]
        models, priors = [], []
        for pos, neg in pairs:
            mpos = idx == pos
            mneg = idx == neg if neg is not None else ~mpos
            models.append(self._new_model(rng).fit(_rows(X, mpos)))
            models.append(self._new_model(rng).fit(_rows(X, mneg)))
            priors.append([np.log(mpos.mean()), np.log(mneg.mean())])
        self.models_ = models
        self.classes_ = classes
        self.log_priors_ = np.array(priors)
        self.n_features_in_ = int(models[0].n_features_in_)
        self.shift_ = np.zeros(0)
        if self.positivize == "shift":
            raw = self._raw(X)
            raw = raw.toarray() if sp.issparse(raw) else raw
            self.shift_ = raw.min(axis=0)
        return self

    def _raw_blocks(self, X):
        """The signed block ``[v, grad+, -grad-]`` of every class pair."""
        blocks = []
        for b in range(len(self.models_) // 2):
            mpos, mneg = self.models_[2 * b], self.models_[2 * b + 1]
            lpos, lneg = mpos.score_samples(X), mneg.score_samples(X)
            v = lpos - lneg
            if self._use_priors:
                v = v + self.log_priors_[b, 0] - self.log_priors_[b, 1]
            gpos = fisher_score(mpos, X, self.reduce)
            gneg = fisher_score(mneg, X, self.reduce)
            blocks.append(_hstack([v[:, None], gpos, -gneg]))
        return blocks

    def _raw(self, X):
        return _hstack(self._raw_blocks(X))

    def transform(self, X):
        """Positivised embedding (raw signed values with ``positivize=None``).

        "split" splits each class pair's block on its own, so the blocks stay contiguous
        (``block_sizes_``).
        """
        check_is_fitted(self, "models_")
        if self.positivize == "split":
            return _hstack([_positivize(b, "split") for b in self._raw_blocks(X)])
        return _positivize(self._raw(X), self.positivize, self.shift_)

    @property
    def block_sizes_(self):
        """Widths of the per-class-pair blocks of ``transform`` (spec §4.3)."""
        check_is_fitted(self, "models_")
        width = 1 + 2 * _reduced_width(self.reduce, self.models_[0])
        factor = 2 if self.positivize == "split" else 1
        return (factor * width,) * (len(self.models_) // 2)


_SIGNED_PARAMS_DOC = """
    mode : "per_class" (alias "1"), default="per_class"
        Only the class-conditional ("-1") form is defined (spec §3.0).
    reduce : {"none", "words", "topics"}, default="topics"
        Granularity of the two gradient blocks (see :class:`FisherScore`).  The default is
        "topics" (``1 + 2 Z`` dims per block) because the "shift" positivisation makes the
        output dense.
    positivize : {"shift", "split", None}, default="shift"
        Spec §4.2.  "shift": subtract the per-dimension minimum over the **training**
        documents (``shift_``) and clip new values at 0 (dense output); "split":
        ``[max(x, 0), max(-x, 0)]`` (twice the dims); None: the raw signed vector (not for
        IT kernels).
""" + _PLSA_PARAMS_DOC


class TOPEmbedding(_SignedEmbedding):
    __doc__ = """TOP features (Tsuda et al. 2002; spec §3.3): ``[v, grad l(d; theta+), -grad l(d; theta-)]``.

    ``v(d) = ln P+ + l(d; theta+) - ln P- - l(d; theta-)`` (class priors from the training
    labels); gradients w.r.t. ``P(w|z)`` as in :class:`FisherScore`.  Two classes: "+" is
    ``classes_[1]``.  More classes: one-vs-rest (class ``c`` against a pLSA of all other
    classes), one block per class, concatenated.
    """ + _SIGNED_PARAMS_DOC + """
    Attributes
    ----------
    models_ : list of PLSA
    log_priors_ : ndarray of shape (n_blocks, 2)
    shift_ : ndarray
        Training minima per dimension (empty unless ``positivize="shift"``).
    """

    def __init__(self, mode="per_class", reduce="topics", positivize="shift", n_components=10,
                 n_iter=100, tol=1e-6, random_state=None, num_threads=None):
        self.mode = mode
        self.reduce = reduce
        self.positivize = positivize
        self.n_components = n_components
        self.n_iter = n_iter
        self.tol = tol
        self.random_state = random_state
        self.num_threads = num_threads


class LLREmbedding(_SignedEmbedding):
    __doc__ = """Log-likelihood-ratio score space (Smith & Gales 2002; spec §3.4).

    ``[l(d; theta+) - l(d; theta-), grad l(d; theta+), -grad l(d; theta-)]``: TOP without
    the class-prior term; same one-vs-rest construction for more than two classes.
    """ + _SIGNED_PARAMS_DOC

    _use_priors = False

    def __init__(self, mode="per_class", reduce="topics", positivize="shift", n_components=10,
                 n_iter=100, tol=1e-6, random_state=None, num_threads=None):
        self.mode = mode
        self.reduce = reduce
        self.positivize = positivize
        self.n_components = n_components
        self.n_iter = n_iter
        self.tol = tol
        self.random_state = random_state
        self.num_threads = num_threads


# --------------------------------------------------------------- counting grids
def cg_fess_terms(grid, X, reduce="positions"):
    """Free-energy terms of a fitted :class:`~countgrid.CountingGrid` (countinggrid.md §3).

    With ``l_t(k) = sum_z c_z ln h_k(z)``, the location prior ``p(k)`` (uniform ``1/L``
    unless ``learn_prior``) and ``q_t(k)`` = ``grid.transform(X)`` (the E-step of §4,
    floored at ``posterior_floor_``), the free energy is

    ``F_t = sum_k q_t(k) ln q_t(k) - sum_k q_t(k) [l_t(k) + ln p(k)] = sum A + sum P - sum E``

    with ``A_k = -q_t(k) l_t(k)`` (emission), ``P_k = -q_t(k) ln p(k)`` (location prior) and
    ``E_k = -q_t(k) ln q_t(k)`` (entropy), all >= 0.  ``F_t = -B_t`` is minus the bound
    ``B_t`` of §3 with the prior term kept (the exact-likelihood convention, not the code's
    "loglikelihood", which drops ``ln p(k)``): ``F_t >= -ln p(c_t)`` (``score_samples``),
    with equality when ``q_t`` is the exact posterior, i.e. for ``posterior_floor=0``.

    Parameters
    ----------
    grid : CountingGrid
        Fitted grid.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    reduce : {"positions", "features"}, default="positions"
        "positions": ``[A_k, P_k, E_k]`` per window position (``3 L`` columns, C order of
        ``extent``); "features": the emission term split by feature,
        ``A_z = -c_z sum_k q_t(k) ln h_k(z)`` (``W`` columns), followed by ``sum_k P_k`` and
        ``sum_k E_k`` (``W + 2`` columns).

    Returns
    -------
    ndarray of shape (n_samples, 3 L) or (n_samples, n_features + 2), non-negative
    """
    if reduce not in ("positions", "features"):
        raise ValueError(f"reduce must be 'positions' or 'features', got {reduce!r}")
    _, _, _, logh, log_prior = grid._model()
    logh = np.asarray(logh, dtype=np.float64)                 # (W, L)
    L = logh.shape[1]
    log_p = (np.full(L, -np.log(L)) if log_prior is None
             else np.asarray(log_prior, dtype=np.float64))
    q = np.asarray(grid.transform(X), dtype=np.float64)       # (D, L)
    C = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    P = -q * log_p[None, :]
    E = -xlogy(q, q)
    if reduce == "positions":
        ell = np.asarray(C @ logh)                             # (D, L)
        return np.hstack([-q * ell, P, E])
    expected = q @ logh.T                                      # (D, W): sum_k q_k ln h_k(z)
    A = -(C.multiply(expected).toarray() if sp.issparse(C) else C * expected)
    return np.hstack([A, P.sum(axis=1, keepdims=True), E.sum(axis=1, keepdims=True)])


_CG_PARAMS_DOC = """
    mode : {"per_class", "whole_data"} or "1"/"2", default="per_class"
        One grid per class (blocks concatenated in the order of ``classes_``) or one grid on
        all training documents.
    extent, window : tuple of int
        Grid and window shapes of every :class:`~countgrid.CountingGrid`.
    n_iter : int, default=100
    posterior_floor : "auto" or float, default="auto"
        Passed to the grids (0 makes ``q`` the exact posterior).
    random_state : None, int or numpy.random.Generator
    num_threads : int, optional
"""


class _CGEmbedding(BaseEstimator):
    _estimator_kind = "transformer"
    _fitted_arrays = ("classes_", "n_features_in_")
    _fitted_estimators = ("models_",)

    def _new_model(self, rng):
        from countgrid.counting_grid import CountingGrid

        return CountingGrid(self.extent, self.window, n_iter=self.n_iter,
                            posterior_floor=self.posterior_floor, num_threads=self.num_threads,
                            random_state=int(rng.integers(2 ** 31 - 1)))

    def fit(self, X, y=None):
        """Fit the counting grid(s): one per class (``per_class``) or one on all of X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), required for ``mode="per_class"``

        Returns
        -------
        self
        """
        self._check()
        mode = _resolve_mode(self.mode)
        rng = check_random_state(self.random_state)
        if mode == "whole_data":
            self.models_ = [self._new_model(rng).fit(X)]
            self.classes_ = (np.array([], dtype=np.int64) if y is None
                             else _targets(y, _n_samples(X))[0])
        else:
            classes, idx = _targets(y, _n_samples(X))
            self.models_ = [self._new_model(rng).fit(_rows(X, idx == c))
                            for c in range(len(classes))]
            self.classes_ = classes
        self.n_features_in_ = int(self.models_[0].n_features_in_)
        return self

    def _check(self):
        pass

    def transform(self, X):
        """Embedding of X (per-grid blocks concatenated), non-negative dense array."""
        check_is_fitted(self, "models_")
        return np.hstack([self._embed(m, X) for m in self.models_])

    @property
    def block_sizes_(self):
        """Widths of the per-grid blocks of ``transform`` (one per class for "-1")."""
        check_is_fitted(self, "models_")
        return tuple(int(self._block_width(m)) for m in self.models_)

    def fit_transform(self, X, y=None):
        """Fit, then transform the same documents."""
        return self.fit(X, y).transform(X)


class CountingGridPosterior(_CGEmbedding):
    __doc__ = """MT analogue on counting grids: the posterior ``q_t(k)`` over window positions.

    ``CountingGrid.transform`` (countinggrid.md §4): ``L = prod(extent)`` dims per grid,
    each block sums to 1.
    """ + _CG_PARAMS_DOC

    def __init__(self, extent=(10, 10), window=(3, 3), mode="per_class", n_iter=100,
                 posterior_floor="auto", random_state=None, num_threads=None):
        self.extent = extent
        self.window = window
        self.mode = mode
        self.n_iter = n_iter
        self.posterior_floor = posterior_floor
        self.random_state = random_state
        self.num_threads = num_threads

    def _embed(self, model, X):
        return np.asarray(model.transform(X), dtype=np.float64)

    def _block_width(self, model):
        return int(np.prod(model.pi_.shape[:-1]))


class CountingGridFESS(_CGEmbedding):
    __doc__ = """FESS on counting grids: the free-energy terms of :func:`cg_fess_terms` per grid.

    ``reduce="positions"``: ``[A_k, P_k, E_k]`` (``3 L`` dims per grid);
    ``reduce="features"``: ``[A_z, sum P, sum E]`` (``W + 2`` dims).  Their signed sum
    ``sum A + sum P - sum E`` is the free energy ``F_t >= -ln p(c_t)`` (equal for
    ``posterior_floor=0``); all entries >= 0.
    """ + _CG_PARAMS_DOC + """
    reduce : {"positions", "features"}, default="positions"
    """

    def __init__(self, extent=(10, 10), window=(3, 3), mode="per_class", reduce="positions",
                 n_iter=100, posterior_floor="auto", random_state=None, num_threads=None):
        self.extent = extent
        self.window = window
        self.mode = mode
        self.reduce = reduce
        self.n_iter = n_iter
        self.posterior_floor = posterior_floor
        self.random_state = random_state
        self.num_threads = num_threads

    def _check(self):
        if self.reduce not in ("positions", "features"):
            raise ValueError(f"reduce must be 'positions' or 'features', got {self.reduce!r}")

    def _embed(self, model, X):
        return cg_fess_terms(model, X, self.reduce)

    def _block_width(self, model):
        if self.reduce == "positions":
            return 3 * int(np.prod(model.pi_.shape[:-1]))
        return model.n_features_in_ + 2
