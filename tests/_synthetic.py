"""Draw small corpora from a known ("true") counting grid.

The generative story is the one of the model (Jojic & Perina, UAI 2011,
eq. 1): pick a window position ``k`` uniformly on the torus, then draw every
token of the bag from the window histogram ``h_k(z) = mean_{i in W_k} pi_i(z)``.

Everything here is plain NumPy so that the tests do not depend on the
package to build their data.
"""
import itertools

import numpy as np
import scipy.sparse as sp


def window_means(pi, window):
    """Forward toroidal window means ``h_k = mean_{delta in [0, W)} pi_{k + delta}``.

    ``pi`` has shape ``extent + (n_features,)``; so does the result.  Brute
    force with ``np.roll`` (independent of the package's cumulative sums).
    """
    pi = np.asarray(pi, dtype=np.float64)
    D = pi.ndim - 1
    acc = np.zeros_like(pi)
    for delta in itertools.product(*(range(w) for w in window)):
        # h_k gets pi_{k + delta}: rolling by -delta brings cell k + delta to k.
        acc += np.roll(pi, shift=tuple(-d for d in delta), axis=tuple(range(D)))
    return acc / float(np.prod(window))


def true_grid(extent, n_features, rng, peaks_per_feature=1, width=1.0, background=0.02):
    """A smooth grid: every feature is concentrated around random cells.

    ``pi_i(z) ∝ background + sum_peaks exp(-d_torus(i, peak_z)^2 / (2 width^2))``,
    normalised over ``z``.  Returns an array of shape ``extent + (n_features,)``.
    """
    extent = tuple(extent)
    D = len(extent)
    coords = np.stack(np.meshgrid(*(np.arange(e) for e in extent), indexing="ij"), axis=-1)
    pi = np.full(extent + (n_features,), background, dtype=np.float64)
    for z in range(n_features):
        for _ in range(peaks_per_feature):
            peak = np.array([rng.integers(e) for e in extent])
            d2 = np.zeros(extent)
            for d in range(D):
                diff = np.abs(coords[..., d] - peak[d])
                diff = np.minimum(diff, extent[d] - diff)
                d2 = d2 + diff.astype(np.float64) ** 2
            pi[..., z] += np.exp(-d2 / (2.0 * width ** 2))
    pi /= pi.sum(axis=-1, keepdims=True)
    return pi


def draw_corpus(pi, window, n_docs, doc_length, rng, sparse=True, allowed=None):
    """Draw ``n_docs`` bags of ``doc_length`` tokens from the grid ``pi``.

    ``allowed`` (optional boolean array of shape ``extent``) restricts the
    window positions the documents are drawn from.

    Returns ``(X, positions)``: ``X`` of shape (n_docs, n_features) (CSR int64
    counts if ``sparse`` else a dense int64 array) and the true window
    positions, shape (n_docs, D).
    """
    pi = np.asarray(pi, dtype=np.float64)
    extent = pi.shape[:-1]
    h = window_means(pi, window).reshape(-1, pi.shape[-1])
    h /= h.sum(axis=1, keepdims=True)
    if allowed is None:
        ks = rng.integers(0, h.shape[0], size=n_docs)
    else:
        choices = np.flatnonzero(np.asarray(allowed, dtype=bool).ravel())
        ks = rng.choice(choices, size=n_docs)
    X = np.stack([rng.multinomial(doc_length, h[k]) for k in ks]).astype(np.int64)
    positions = np.stack(np.unravel_index(ks, extent), axis=1)
    return (sp.csr_matrix(X) if sparse else X), positions


def brute_log_likelihood(pi, window, X, log_prior=None):
    """Exact per-document log-likelihood ``log sum_k p(k) prod_z h_k(z)^{c_z}``.

    Uniform prior ``1/L`` unless ``log_prior`` (flattened, length L) is given.
    Returns (loglik (n_docs,), posterior (n_docs, L)) in float64.
    """
    from scipy.special import logsumexp

    pi = np.asarray(pi, dtype=np.float64)
    Z = pi.shape[-1]
    L = int(np.prod(pi.shape[:-1]))
    h = window_means(pi, window).reshape(L, Z)
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    X = X.astype(np.float64)
    with np.errstate(divide="ignore"):
        logh = np.log(h)
    # 0 * log(0) = 0
    ell = np.where(X[:, None, :] > 0, X[:, None, :] * logh[None, :, :], 0.0).sum(axis=2)
    if log_prior is None:
        ell = ell - np.log(L)
    else:
        ell = ell + np.asarray(log_prior, dtype=np.float64).reshape(1, L)
    ll = logsumexp(ell, axis=1)
    q = np.exp(ell - ll[:, None])
    return ll, q


def mixture_of_unigrams_loglik(X_train, X_test, n_components, rng, n_iter=50):
    """A baseline: EM for a mixture of unigrams, returns the test log-likelihood.

    Same conventions as the counting grid (multinomial coefficient omitted).
    """
    from scipy.special import logsumexp

    Xtr = X_train.toarray() if sp.issparse(X_train) else np.asarray(X_train)
    Xte = X_test.toarray() if sp.issparse(X_test) else np.asarray(X_test)
    Xtr = Xtr.astype(np.float64)
    Xte = Xte.astype(np.float64)
    K, Z = n_components, Xtr.shape[1]
    theta = rng.random((K, Z)) + 1.0
    theta /= theta.sum(axis=1, keepdims=True)
    w = np.full(K, 1.0 / K)
    for _ in range(n_iter):
        ell = Xtr @ np.log(theta).T + np.log(w)
        r = np.exp(ell - logsumexp(ell, axis=1, keepdims=True))
        w = r.mean(axis=0) + 1e-12
        w /= w.sum()
        theta = r.T @ Xtr + 1e-3
        theta /= theta.sum(axis=1, keepdims=True)
    ell = Xte @ np.log(theta).T + np.log(w)
    return float(logsumexp(ell, axis=1).sum())


def backward_window_sums(A, window):
    """``B_i = sum_{k : i in W_k} A_k = sum_{delta in [0, W)} A_{i - delta}`` on the torus.

    ``A`` has shape ``extent + (n_features,)`` (or just ``extent``)."""
    A = np.asarray(A, dtype=np.float64)
    D = len(window)
    acc = np.zeros_like(A)
    for delta in itertools.product(*(range(w) for w in window)):
        acc += np.roll(A, shift=tuple(delta), axis=tuple(range(D)))
    return acc


def reference_em_step(pi, window, X, rho, floor, alpha=1e-10):
    """One EM update of the authors' code (docs/counting_grids.md, "Learning"), in NumPy.

    Returns ``(new_pi, q)`` where ``q`` is the floored posterior used for the
    update (uniform prior)."""
    pi = np.asarray(pi, dtype=np.float64)
    extent, Z = pi.shape[:-1], pi.shape[-1]
    L = int(np.prod(extent))
    W = float(np.prod(window))
    h = window_means(pi, window)
    _, q = brute_log_likelihood(pi, window, X)
    if floor > 0:
        q = np.maximum(q, floor)
        q /= q.sum(axis=1, keepdims=True)
    Xd = X.toarray() if sp.issparse(X) else np.asarray(X)
    n = (q.T @ Xd.astype(np.float64)).reshape(extent + (Z,))      # n_k(z)
    qh = backward_window_sums(n / (h + W * alpha), window)         # QH_i(z)
    qh = np.maximum(qh, 0.0)
    U = rho + qh * (pi + alpha)
    S = U.sum(axis=-1, keepdims=True)
    new = np.where(S > 0, U / np.where(S > 0, S, 1.0), 1.0 / Z)
    return new, q


def two_class_corpus(seed=0, D=40, W=12):
    """Poisson counts of two classes with opposite word-rate ramps (no empty document):
    CSR ``X`` (D, W) and labels ``y`` alternating 0, 1."""
    rng = np.random.default_rng(seed)
    y = np.arange(D) % 2
    rates = np.where(y[:, None] == 0, np.linspace(2, 0.2, W), np.linspace(0.2, 2, W))
    X = rng.poisson(rates).astype(np.float64)
    X[X.sum(axis=1) == 0, 0] = 1
    return sp.csr_matrix(X), y


def fitted_state(est):
    """Every fitted attribute of an estimator, recursively into sub-estimators:
    {"name" or "name.i/sub" or "name/sub": value}."""
    out = {}
    for name, value in vars(est).items():
        if not name.endswith("_") or name.startswith("_"):
            continue
        if isinstance(value, list) and value and hasattr(value[0], "get_params"):
            for i, child in enumerate(value):
                out.update({f"{name}.{i}/{k}": v for k, v in fitted_state(child).items()})
        elif hasattr(value, "get_params"):
            out.update({f"{name}/{k}": v for k, v in fitted_state(value).items()})
        else:
            out[name] = value
    return out


def assert_same_fitted(a, b):
    """Two estimators hold the same fitted attributes, arrays bit for bit and with their
    dtypes, scalars with their types."""
    sa, sb = fitted_state(a), fitted_state(b)
    assert sorted(sa) == sorted(sb)
    assert sa, "nothing fitted?"
    for k in sa:
        va, vb = sa[k], sb[k]
        if isinstance(va, np.ndarray):
            assert isinstance(vb, np.ndarray), k
            assert va.dtype == vb.dtype, (k, va.dtype, vb.dtype)
            assert va.shape == vb.shape, k
            assert np.array_equal(va, vb), k
        else:
            assert type(va) is type(vb), (k, type(va), type(vb))
            assert va == vb, k
