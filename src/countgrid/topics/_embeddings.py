"""Generative embeddings built on pLSA (Bicego et al., Neurocomputing 2013; the score
spaces of Hofmann 2000, Tsuda et al. 2002, Smith & Gales 2002, Perina et al. 2009).

Every embedding maps a document (a bag of counts) to a **non-negative** vector, so that the
information-theoretic kernels of :mod:`countgrid.kernels` apply.  Each is a scikit-learn
style transformer: ``fit(X, y)`` learns the pLSA model(s) on the training documents only
("-1": one per class, "-2": one on all documents; countgrid._engine.embedding), ``transform(X)``
folds new documents in and returns their embedding.

With ``P(w|z)`` = ``PLSA.components_`` and ``q(z|w) = P(z|d,w)`` the posterior at the
folding-in fixed point ``P(z|d)`` (applied identically to training and test documents):

* :class:`MixtureOfTopics` (MT): ``P(z|d)``, Z dims per model; a probability vector.
* :class:`FisherScore` (FS): ``dl/dP(w|z) = n(d,w) q(z|w) / P(w|z)``; the raw gradient is
  >= 0.
* :class:`TOPEmbedding` (TOP) and :class:`LLREmbedding` (LLR): ``[v, grad+, -grad-]``, two
  class models (one-vs-rest for more classes); signed, made non-negative by
  ``positivize``.
* :class:`FreeEnergyScoreSpace` (FESS): the free-energy terms ``[A, B, E]``, absolute
  values.
* :class:`PosteriorDivergence` (PD): ``[KL change, fit, uncertainty]`` per topic, each >= 0.

The functions :func:`fisher_score`, :func:`fess_terms` and :func:`posterior_divergence`
compute one model's block from an already fitted model.  Definitions: docs/topics.md;
docs/results.md reports these embeddings with the IT kernels.

Layout of word-topic blocks: entry ``(w, z)`` is column ``w * Z + z``.
"""
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.special import xlogy

from countgrid._engine.embedding import _GenerativeEmbedding, class_labels, hstack, resolve_mode
from countgrid._utils.fitted import array, check_distribution, fitted_array, fitted_distribution
from countgrid._utils.param_validation import InstanceOf, Interval, Options, validate_call_params
from countgrid._engine.per_class import check_documents, fit_groups
from countgrid._utils.validation import check_is_fitted
from countgrid.topics._plsa import PLSA

__all__ = ["MixtureOfTopics", "FisherScore", "TOPEmbedding", "LLREmbedding",
           "FreeEnergyScoreSpace", "PosteriorDivergence", "fisher_score", "fess_terms",
           "posterior_divergence"]

_REDUCE = ("none", "words", "topics")



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


_PLSA_MODEL = [InstanceOf(PLSA, "a fitted PLSA")]


@validate_call_params({"model": _PLSA_MODEL, "reduce": [Options(*_REDUCE)],
                       "normalize_length": ["boolean"]})
def fisher_score(model, X, reduce="none", normalize_length=False):
    """Fisher score ``dl(d)/dP(w|z) = n(d,w) P(z|d,w) / P(w|z)`` of a fitted PLSA.

    The score of Jaakkola & Haussler (1998) for pLSA (Hofmann 2000), with the Fisher
    information replaced by the identity (docs/topics.md, "FS: Fisher score").

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
    phi = post.phi[:, post.cols].T
    with np.errstate(over="ignore"):
        values = n[:, None] * post.q / phi
    if not np.isfinite(values).all():
        raise ValueError(f"the Fisher score n(d,w) P(z|d,w) / P(w|z) of X exceeds the "
                         f"float64 range (counts up to {float(n.max()):.3g} over word "
                         f"probabilities down to {float(phi.min()):.3g}): rescale the counts "
                         "of X")
    return post.block(values, reduce)


@validate_call_params({"model": _PLSA_MODEL, "reduce": [Options(*_REDUCE)]})
def fess_terms(model, X, reduce="none"):
    """Free-energy terms ``[A, B, E]`` of a fitted PLSA, all >= 0.

    Our pLSA instantiation of Perina et al. (2009) (docs/topics.md, "FESS: free energy
    score space"):
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
        Non-negative: entries that rounding makes negative (down to about ``-n(d,w)``
        times the machine epsilon of the model's dtype) are set to 0.
    """
    reduce = _check_reduce(reduce)
    post = _Posterior(model, X)
    nq = post.n[:, None] * post.q
    A = -nq * np.log(post.phi[:, post.cols].T)
    B = -post.n[:, None] * xlogy(post.q, post.theta[post.rows])
    E = -post.n[:, None] * xlogy(post.q, post.q)
    # Each block is >= 0 in exact arithmetic, but folding-in updates P(z|d) multiplicatively
    # without renormalising, so a dominant topic can end at 1 + ulp (for example one topic
    # and a count n(d,w) = 3 of a word with fl(fl(3 / P(w|z)) P(w|z)) > 3), and then
    # B = -n q ln P(z|d) < 0; the IT kernels refuse negative vectors.  Clip at 0.
    for block in (A, B, E):
        np.maximum(block, 0.0, out=block)
    return post.block(A, reduce), post.block(B, reduce), post.block(E, reduce)


def _topic_mass(model, X):
    """Training topic mass ``s_z = sum_{d,w} n(d,w) P(z|d,w)``."""
    post = _Posterior(model, X)
    return (post.n[:, None] * post.q).sum(axis=0)


@validate_call_params({"model": _PLSA_MODEL, "topic_mass": ["array-like"]})
def posterior_divergence(model, X, topic_mass):
    """Posterior-divergence features of a fitted PLSA (our construction), ``3 Z`` dims.

    With training statistics ``s_wz = P(w|z) s_z`` (``topic_mass`` = ``s_z``) and the new
    document's ``r_wz = n(d,w) q(z|w)``, the incremental update is
    ``P'(w|z) = (s_wz + r_wz) / (s_z + r_z)``.  Features per topic:
    ``[KL(P'(.|z) || P(.|z)), sum_w (A_wz + B_wz), sum_w E_wz]`` (blocks of Z columns).
    The structure (model change, fit, uncertainty) is that of Li, Lee & Liu (CVPR 2011);
    the pLSA formulas are ours (docs/topics.md, "PD: posterior divergence").

    Parameters
    ----------
    model : PLSA
        A fitted pLSA with ``Z`` topics.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Counts, folded into the model.
    topic_mass : array-like of shape (Z,)
        The training topic mass ``s_z = sum_{d,w} n(d,w) P(z|d,w)`` over the model's
        training documents (finite, non-negative), as stored in
        ``PosteriorDivergence.topic_mass_``.

    Returns
    -------
    ndarray of shape (n_samples, 3 Z), non-negative
        Columns ``[0, Z)`` the KL model change, ``[Z, 2 Z)`` the fit term, ``[2 Z, 3 Z)``
        the uncertainty term, per topic.

    Raises
    ------
    TypeError, ValueError
        If ``model`` is not a fitted PLSA, ``topic_mass`` is not a finite non-negative
        array of shape (Z,), or X is not valid counts for the model.
    """
    check_is_fitted(model, "components_")
    try:
        s = np.asarray(topic_mass, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"topic_mass must be a 1-D array of real numbers, got "
                        f"{type(topic_mass).__name__}") from None
    Z = model.components_.shape[0]
    if s.shape != (Z,):
        raise ValueError(f"topic_mass must have shape ({Z},) (one mass per topic of the "
                         f"model), got {s.shape}")
    if not (np.isfinite(s).all() and (s >= 0).all()):
        raise ValueError("topic_mass must hold finite non-negative numbers")
    post = _Posterior(model, X)
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


#: Constraints of the parameters every pLSA embedding has.
_PLSA_CONSTRAINTS = {
    "mode": [Options("per_class", "whole_data", "1", "2", "-1", "-2"), Options(1, 2)],
    "n_components": [Interval(Integral, 1, None)],
    "n_iter": [Interval(Integral, 1, None)],
    "tol": [Interval(Real, 0, None)],
    "random_state": ["random_state"],
    "num_threads": ["num_threads"],
}
_REDUCE_CONSTRAINT = [Options(*_REDUCE)]


class _PLSAEmbedding(_GenerativeEmbedding):
    """Per-class or whole-data pLSA models."""

    _parameter_constraints = _PLSA_CONSTRAINTS
    _model_class = PLSA

    def __init__(self, mode="per_class", n_components=10, n_iter=100, tol=1e-6,
                 random_state=None, num_threads=None):
        self.mode = mode
        self.n_components = n_components
        self.n_iter = n_iter
        self.tol = tol
        self.random_state = random_state
        self.num_threads = num_threads

    def _new_model(self, seed):
        # plain EM with the 0.2 smoothing, as measured in docs/results.md ("Generative
        # embeddings x IT kernels"): PLSA's defaults of issue 22 (tempered EM, smoothing
        # 0.03) were chosen for held-out perplexity and not measured for the embeddings
        return PLSA(n_components=self.n_components, n_iter=self.n_iter, tol=self.tol,
                    tempered=False, smoothing=1e-10, num_threads=self.num_threads,
                    random_state=seed)


class MixtureOfTopics(_PLSAEmbedding):
    __doc__ = """MT embedding: the topic proportions ``P(z|d)`` by folding-in.

    docs/topics.md, "MT: mixture of topics"; Bicego et al. 2013, eq. 4.

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

    def _embed(self, model, i, X):
        return np.asarray(model.transform(X), dtype=np.float64)

    def _block_width(self, model, i):
        return model.n_components


class FisherScore(_PLSAEmbedding):
    __doc__ = """FS embedding: gradient of ``l(d)`` w.r.t. ``P(w|z)``, non-negative.

    ``dl(d)/dP(w|z) = n(d,w) P(z|d,w) / P(w|z)`` after folding ``d`` in; Fisher information
    replaced by the identity (docs/topics.md, "FS: Fisher score").  The ``P(z|d)`` block
    (constant ``n(d)`` at the folding-in fixed point) is omitted; the ``P(z)`` block of the
    symmetric parameterisation, ``dl/dP(z) = n(d) P(z|d) / P(z)``, is prepended with
    ``include_topic_prior=True``.

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

    _fitted_schema = {**_GenerativeEmbedding._fitted_schema,
                      "topic_prior_": array("float", "n_models", "n_topics")}
    _inference_params = ("reduce", "normalize_length", "include_topic_prior")

    def _check_fitted_state(self):
        super()._check_fitted_state()
        # P(z) of every model: its training topic mass, normalised
        fitted_distribution(self, "topic_prior_", axis=1,
                            shape=(len(self.models_), self.models_[0].components_.shape[0]),
                            precision=self.models_[0].components_.dtype)
    _parameter_constraints = {**_PLSA_CONSTRAINTS, "reduce": _REDUCE_CONSTRAINT,
                              "normalize_length": ["boolean"],
                              "include_topic_prior": ["boolean"]}

    def __init__(self, mode="per_class", reduce="none", normalize_length=False,
                 include_topic_prior=False, n_components=10, n_iter=100, tol=1e-6,
                 random_state=None, num_threads=None):
        super().__init__(mode, n_components, n_iter, tol, random_state, num_threads)
        self.reduce = reduce
        self.normalize_length = normalize_length
        self.include_topic_prior = include_topic_prior

    def fit(self, X, y=None):
        """Fit the pLSA model(s) and their training topic priors ``topic_prior_``."""
        X = check_documents(X)
        mode = self._fit_models(X, y)
        # P(z) of the symmetric parameterisation: the normalised training topic mass
        mass = [_topic_mass(m, Xc) for m, Xc in zip(self.models_, self._groups(X, y, mode))]
        self.topic_prior_ = np.array([s / s.sum() for s in mass])
        return self

    def _embed(self, model, i, X):
        post = _Posterior(model, X)
        grad = _fisher_block(post, self.reduce, self.normalize_length)
        if not self.include_topic_prior:
            return grad
        weight = np.ones(post.D) if self.normalize_length else post.lengths.astype(np.float64)
        prior = np.maximum(self.topic_prior_[i], np.finfo(np.float64).tiny)
        return hstack([weight[:, None] * post.theta / prior[None, :], grad])

    def _block_width(self, model, i):
        width = _reduced_width(self.reduce, model)
        return width + model.n_components if self.include_topic_prior else width


class FreeEnergyScoreSpace(_PLSAEmbedding):
    __doc__ = """FESS embedding (Perina et al. 2009): the free-energy terms ``[A, B, E]``.

    Our pLSA instantiation (docs/topics.md, "FESS: free energy score space").

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

    _parameter_constraints = {**_PLSA_CONSTRAINTS, "reduce": _REDUCE_CONSTRAINT}

    def __init__(self, mode="per_class", reduce="none", n_components=10, n_iter=100, tol=1e-6,
                 random_state=None, num_threads=None):
        super().__init__(mode, n_components, n_iter, tol, random_state, num_threads)
        self.reduce = reduce

    _inference_params = ("reduce",)

    def _embed(self, model, i, X):
        return hstack(list(fess_terms(model, X, self.reduce)))

    def _block_width(self, model, i):
        return 3 * _reduced_width(self.reduce, model)


class PosteriorDivergence(_PLSAEmbedding):
    __doc__ = """PD embedding (after Li et al. 2011), ``3 Z`` dims per model.

    Our pLSA construction (docs/topics.md, "PD: posterior divergence"):
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

    _fitted_schema = {**_GenerativeEmbedding._fitted_schema,
                      "topic_mass_": array("float", "n_models", "n_topics")}

    def _check_fitted_state(self):
        super()._check_fitted_state()
        fitted_array(self, "topic_mass_", nonnegative=True,
                     shape=(len(self.models_), self.models_[0].components_.shape[0]))

    def fit(self, X, y=None):
        """Fit the pLSA model(s) and their training topic mass ``topic_mass_``."""
        X = check_documents(X)
        mode = self._fit_models(X, y)
        self.topic_mass_ = np.array([_topic_mass(m, Xc) for m, Xc in
                                     zip(self.models_, self._groups(X, y, mode))])
        return self

    def _embed(self, model, i, X):
        return posterior_divergence(model, X, self.topic_mass_[i])

    def _block_width(self, model, i):
        return 3 * model.n_components


# --------------------------------------------------------------- signed: TOP / LLR
def _positivize(M, method, minima=None):
    """Make M non-negative: "shift" (by training minima, clip at 0), "split" or None.

    docs/topics.md, "Positivisation of signed embeddings".
    """
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
    __doc__ = """TOP / LLR: one-vs-rest pairs of class models, positivised (docs/topics.md)."""

    _allowed_modes = ("per_class",)
    _fitted_schema = {**_GenerativeEmbedding._fitted_schema,
                      "log_priors_": array("float", "n_pairs", 2),
                      "shift_": array("float", "n_shift")}
    _inference_params = ("reduce", "positivize")

    def _model_counts(self, n_classes):
        return {2 if n_classes == 2 else 2 * n_classes}

    def _check_fitted_state(self):
        super()._check_fitted_state()
        if not self.classes_.size:
            raise ValueError("classes_ is empty")
        # log P(class), log P(rest) of every pair: both groups hold documents
        log_priors = fitted_array(self, "log_priors_", shape=(len(self.models_) // 2, 2))
        check_distribution("exp(log_priors_)", np.exp(log_priors), axis=1)
        fitted_array(self, "shift_", ndim=1)
    _parameter_constraints = {**_PLSA_CONSTRAINTS, "reduce": _REDUCE_CONSTRAINT,
                              "positivize": [Options("shift", "split"), None]}
    _use_priors = True

    def __init__(self, mode="per_class", reduce="topics", positivize="shift", n_components=10,
                 n_iter=100, tol=1e-6, random_state=None, num_threads=None):
        super().__init__(mode, n_components, n_iter, tol, random_state, num_threads)
        self.reduce = reduce
        self.positivize = positivize

    def fit(self, X, y=None):
        """Fit the class models and, for ``positivize="shift"``, the training minima.

        Two classes: ``models_ = [model of classes_[1] ("+"), model of classes_[0] ("-")]``.
        ``C > 2`` classes: one-vs-rest, ``models_ = [class 0, rest of 0, class 1, rest of 1,
        ...]`` and one block per class.
        """
        self._validate_params()
        resolve_mode(self.mode, self._allowed_modes, type(self).__name__)
        X = check_documents(X)
        classes, idx = class_labels(y, X)
        pairs = [(1, 0)] if len(classes) == 2 else [(c, None) for c in range(len(classes))]
        masks, priors = [], []
        for pos, neg in pairs:
            mpos = idx == pos
            mneg = idx == neg if neg is not None else ~mpos
            masks += [mpos, mneg]
            priors.append([np.log(mpos.mean()), np.log(mneg.mean())])
        models = fit_groups(self._new_model, X, masks, self.random_state)
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
            blocks.append(hstack([v[:, None], gpos, -gneg]))
        return blocks

    def _raw(self, X):
        return hstack(self._raw_blocks(X))

    def transform(self, X):
        """Positivised embedding (raw signed values with ``positivize=None``).

        "split" splits each class pair's block on its own, so the blocks stay contiguous
        (``block_sizes_``).
        """
        check_is_fitted(self, "models_")
        X = self._documents(X)
        if self.positivize == "split":
            return hstack([_positivize(b, "split") for b in self._raw_blocks(X)])
        return _positivize(self._raw(X), self.positivize, self.shift_)

    @property
    def block_sizes_(self):
        """Widths of the per-class-pair blocks of ``transform`` (docs/topics.md, "Block structure
        and per-block kernel sums")."""
        check_is_fitted(self, "models_")
        width = 1 + 2 * _reduced_width(self.reduce, self.models_[0])
        factor = 2 if self.positivize == "split" else 1
        return (factor * width,) * (len(self.models_) // 2)


_SIGNED_PARAMS_DOC = """
    Parameters
    ----------
    mode : "per_class" (alias "1"), default="per_class"
        Only the class-conditional ("-1") form is defined (docs/topics.md, "TOP").
    reduce : {"none", "words", "topics"}, default="topics"
        Granularity of the two gradient blocks (see :class:`FisherScore`).  The default is
        "topics" (``1 + 2 Z`` dims per block) because the "shift" positivisation makes the
        output dense.
    positivize : {"shift", "split", None}, default="shift"
        docs/topics.md, "Positivisation of signed embeddings".  "shift": subtract the
        per-dimension minimum over the **training** documents (``shift_``) and clip new
        values at 0 (dense output); "split": ``[max(x, 0), max(-x, 0)]`` (twice the dims);
        None: the raw signed vector (not for IT kernels).
""" + _PLSA_PARAMS_DOC

#: The attributes of TOP and LLR, whose ``log_priors_`` differ in use only.
_SIGNED_ATTRIBUTES_DOC = """
    Attributes
    ----------
    models_ : list of PLSA
        ``[+, -]`` models of every class pair (``2 n_blocks`` models).
    classes_ : ndarray of shape (n_classes,)
    log_priors_ : ndarray of shape (n_blocks, 2)
        ``[ln P+, ln P-]`` of every class pair ({priors}).
    shift_ : ndarray
        Training minima per dimension (empty unless ``positivize="shift"``).
    n_features_in_ : int
    """


class TOPEmbedding(_SignedEmbedding):
    __doc__ = """TOP features (Tsuda et al. 2002): ``[v, grad l(d; theta+), -grad l(d; theta-)]``.

    ``v(d) = ln P+ + l(d; theta+) - ln P- - l(d; theta-)`` (class priors from the training
    labels); gradients w.r.t. ``P(w|z)`` as in :class:`FisherScore`.  Two classes: "+" is
    ``classes_[1]``.  More classes: one-vs-rest (class ``c`` against a pLSA of all other
    classes), one block per class, concatenated.
    """ + _SIGNED_PARAMS_DOC + _SIGNED_ATTRIBUTES_DOC.format(priors="training label frequencies")


class LLREmbedding(_SignedEmbedding):
    __doc__ = """Log-likelihood-ratio score space (Smith & Gales 2002; docs/topics.md, "LLR").

    ``[l(d; theta+) - l(d; theta-), grad l(d; theta+), -grad l(d; theta-)]``: TOP without
    the class-prior term; same one-vs-rest construction for more than two classes.
    """ + _SIGNED_PARAMS_DOC + _SIGNED_ATTRIBUTES_DOC.format(priors="fitted as for TOP; not used by LLR")

    _use_priors = False

