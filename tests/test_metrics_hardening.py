"""Retrieval metrics, tf-idf and LSI on hostile input (issue 13): corrupt and unusual
sparse matrices, mixed pairs, rows of any magnitude, overflowing dot products, labels,
parameters, memory, and LSI on degenerate input."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.metrics import cosine_similarity, precision_recall_curve_retrieval
from countgrid.retrieval import LSI, idf_weights, tfidf

FORMATS = ["csr", "csc", "coo", "dia", "bsr", "lil", "dok"]


def _convert(M, fmt):
    return sp.csr_array(M) if fmt == "csr_array" else sp.csr_matrix(M).asformat(fmt)


def _corrupt(M):
    S = sp.csr_matrix(M)
    S.indptr[1], S.indptr[2] = S.indptr[2], S.indptr[1] - 1     # decreasing indptr
    return S


def _counts(seed=0, n=12, m=7):
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.0, size=(n, m)).astype(np.float64)
    X[:, 0] += 1
    return X


def test_corrupt_sparse_input_is_named():
    X = _counts()
    y = np.arange(12) % 3
    for call, name in [(lambda B: cosine_similarity(B, X), "A"),
                       (lambda B: cosine_similarity(X, B), "B"),
                       (lambda B: precision_recall_curve_retrieval(B, X, y, y), "query_codes"),
                       (lambda B: precision_recall_curve_retrieval(X, B, y, y), "corpus_codes"),
                       (lambda B: tfidf(B), "X"), (lambda B: idf_weights(B), "X"),
                       (lambda B: LSI(2, random_state=0).fit(B), "X"),
                       (lambda B: LSI(2, random_state=0).fit(X).transform(B), "X")]:
        with pytest.raises(ValueError, match=f"{name} is a corrupt sparse matrix"):
            call(_corrupt(X))


@pytest.mark.parametrize("fmt", FORMATS + ["csr_array"])
def test_every_sparse_format_and_mixed_pairs(fmt):
    X = _counts(1)
    Q = _counts(2, n=5)
    y, yq = np.arange(12) % 3, np.arange(5) % 3
    S = cosine_similarity(Q, X)
    for pair in ((_convert(Q, fmt), X), (Q, _convert(X, fmt)), (_convert(Q, fmt),
                                                                 _convert(X, fmt))):
        np.testing.assert_allclose(cosine_similarity(*pair), S, rtol=1e-13)
        for metric in ("cosine", "dot"):
            want = precision_recall_curve_retrieval(Q, X, yq, y, metric=metric)
            got = precision_recall_curve_retrieval(*pair, yq, y, metric=metric)
            np.testing.assert_allclose(got.precision, want.precision, rtol=1e-13)
            assert got.auc == pytest.approx(want.auc, rel=1e-13)
    np.testing.assert_allclose(tfidf(_convert(X, fmt)).toarray(), tfidf(X), rtol=1e-13)
    np.testing.assert_array_equal(idf_weights(_convert(X, fmt)), idf_weights(X))
    lsi = LSI(3, random_state=0).fit(X)
    np.testing.assert_allclose(LSI(3, random_state=0).fit(_convert(X, fmt)).singular_values_,
                               lsi.singular_values_, rtol=1e-10)
    np.testing.assert_allclose(lsi.transform(_convert(X, fmt)), lsi.transform(X), rtol=1e-12,
                               atol=1e-14)


@pytest.mark.parametrize("scale", [1e300, 1e-300, 1e-320])
@pytest.mark.parametrize("sparse", [False, True])
def test_rows_of_any_magnitude(scale, sparse):
    """Norms and document lengths of 1e200/1e308 rows overflowed (cosine 0, tf-idf 0) and
    those of 1e-320 rows underflowed."""
    X = _counts(3)
    big = X * scale
    normal = np.ldexp(big, -np.frexp(big.max(axis=1))[1][:, None])      # exact rescaling
    conv = sp.csr_matrix if sparse else np.asarray
    np.testing.assert_allclose(cosine_similarity(conv(big), X),
                               cosine_similarity(normal, X), rtol=1e-13)
    T = tfidf(conv(big), idf_weights(X))
    T = T.toarray() if sp.issparse(T) else T
    np.testing.assert_allclose(T, tfidf(normal, idf_weights(X)), rtol=1e-13)
    if scale > 1:
        np.testing.assert_allclose(cosine_similarity(conv(big), X), cosine_similarity(X, X),
                                   rtol=1e-13)


@pytest.mark.parametrize("sparse", [False, True])
def test_cosine_curve_is_exactly_invariant_to_powers_of_two(sparse):
    """Issue 30: rescaling rows by powers of two (exact) changes no bit of the cosines or
    of the curve, across the float range: 2**1000, 2**-1000 on real codes, 2**-1060
    (subnormal, exact on small integers) on counts, and a different power per row."""
    rng = np.random.default_rng(30)
    real = rng.normal(size=(40, 5))
    real[10:15] = real[:5]                                   # duplicates: exact ties
    counts = rng.poisson(1.0, size=(40, 5)).astype(np.float64)
    y = rng.integers(0, 3, 40)
    conv = sp.csr_matrix if sparse else np.asarray
    per_row = np.ldexp(1.0, rng.integers(-1000, 1000, 40))[:, None]
    for codes, scale in ((real, 2.0 ** 1000), (real, 2.0 ** -1000), (counts, 2.0 ** -1060),
                         (real, per_row), (counts, per_row)):
        scaled = codes * scale
        assert np.array_equal(scaled / scale, codes)          # the scaling was exact
        want = precision_recall_curve_retrieval(codes, codes, y, y)
        got = precision_recall_curve_retrieval(conv(scaled), conv(scaled), y, y)
        np.testing.assert_array_equal(got.precision, want.precision)
        np.testing.assert_array_equal(got.recall, want.recall)
        assert got.auc == want.auc
        np.testing.assert_array_equal(cosine_similarity(conv(scaled), codes),
                                      cosine_similarity(conv(codes), codes))


@pytest.mark.parametrize("scale", [1e300, 1e-300, 3.0, 1e200])
def test_cosine_curve_of_scaled_codes_with_ties(scale):
    """Issue 30: codes * 1e300 gave an AUC 3.4e-5 away from that of the codes (5e-4 on
    other data): the scaled codes are rounded, which moves their cosines by an ulp, and
    cosines equal in exact arithmetic (frequent for counts) were then ranked in another
    order.  Cosines within the rounding error are ties, broken by corpus order."""
    rng = np.random.default_rng(0)
    codes = rng.poisson(1.0, (200, 6)).astype(np.float64)
    y = rng.integers(0, 3, 200)
    want = precision_recall_curve_retrieval(codes, codes, y, y)
    got = precision_recall_curve_retrieval(codes * scale, codes * scale, y, y)
    assert abs(got.auc - want.auc) <= 1e-12
    np.testing.assert_allclose(got.precision, want.precision, rtol=1e-12)
    np.testing.assert_allclose(got.recall, want.recall, rtol=1e-12)


def test_cosine_ties_keep_corpus_order_and_distinct_cosines_their_rank():
    # cosines 0.6, 1 - 4.4e-16 (1 - 4.5e-16 exactly: a tie with 1 within rounding) and 1:
    # the last two are ties, so the corpus order decides (it ranked the exact 1 first); the
    # clearly smaller cosine stays last
    q = np.array([[1.0, 0.0]])
    corpus = np.array([[0.6, 0.8], [1.0, 3e-8], [1.0, 0.0]])
    assert 0 < 1.0 - cosine_similarity(q, corpus)[0, 1] < 1e-15
    curve = precision_recall_curve_retrieval(q, corpus, [0], [1, 0, 1])
    # ranking [1, 2, 0]: the relevant document first
    np.testing.assert_array_equal(curve.precision, [1.0, 0.5, 1.0 / 3.0])


def test_dot_product_ranking_without_overflow():
    rng = np.random.default_rng(4)
    Q, C = rng.normal(size=(6, 4)), rng.normal(size=(20, 4))
    yq, yc = rng.integers(0, 2, 6), rng.integers(0, 2, 20)
    want = precision_recall_curve_retrieval(Q, C, yq, yc, metric="dot")
    got = precision_recall_curve_retrieval(Q * 1e200, C * 1e250, yq, yc, metric="dot")
    np.testing.assert_array_equal(got.precision, want.precision)
    # tiny products keep their ranking (no rescaling is needed there)
    tiny = precision_recall_curve_retrieval(Q, C * 1e-300, yq, yc, metric="dot")
    np.testing.assert_array_equal(tiny.precision, want.precision)


@pytest.mark.parametrize("kw,exc,match", [
    (dict(metric=3), ValueError, "metric"), (dict(metric="l2"), ValueError, "metric"),
    (dict(batch_size=0), ValueError, "batch_size"),
    (dict(batch_size=2.0), TypeError, "batch_size"),
    (dict(batch_size="8"), TypeError, "batch_size"),
    (dict(batch_size=True), TypeError, "batch_size"),
])
def test_retrieval_parameters(kw, exc, match):
    X = _counts()
    with pytest.raises(exc, match=match):
        precision_recall_curve_retrieval(X, X, np.zeros(12), np.zeros(12), **kw)


def test_retrieval_labels_and_shapes():
    X = _counts()
    y = np.arange(12) % 2
    with pytest.raises(TypeError, match="comparable labels"):
        precision_recall_curve_retrieval(X, X, np.array([None] * 12, dtype=object),
                                         np.array(["a"] * 12, dtype=object))
    with pytest.raises(ValueError, match="query_labels"):
        precision_recall_curve_retrieval(X, X, y[:, None], y)
    with pytest.raises(ValueError, match="at least one document"):
        precision_recall_curve_retrieval(X[:0], X, y[:0], y)
    with pytest.raises(ValueError, match="Expected a 2-D array for query_codes"):
        precision_recall_curve_retrieval(X[0], X, y[:1], y)
    with pytest.raises(ValueError, match="query_codes contains NaN"):
        precision_recall_curve_retrieval(np.where(X > 2, np.inf, X), X, y, y)
    huge = precision_recall_curve_retrieval(X, X, y, y, batch_size=2 ** 62)
    np.testing.assert_array_equal(huge.precision,
                                  precision_recall_curve_retrieval(X, X, y, y).precision)
    np.testing.assert_allclose(cosine_similarity(X[:1], X[:, :]).shape, (1, 12))
    with pytest.raises(ValueError, match="A has 7 columns and B has 6"):
        cosine_similarity(X, X[:, :6])
    with pytest.raises(TypeError, match="B could not be converted"):
        cosine_similarity(X, [[1.0, 2.0], [3.0]])
    with pytest.raises(TypeError, match="query_codes could not be converted"):
        precision_recall_curve_retrieval([[1.0], [2.0, 3.0]], X, y[:2], y)


def test_memory_estimates(monkeypatch):
    X = _counts()
    monkeypatch.setenv("COUNTGRID_MAX_MEMORY", "1K")
    with pytest.raises(MemoryError, match="similarity matrix"):
        cosine_similarity(X, X)
    with pytest.raises(MemoryError, match="batch_size"):
        precision_recall_curve_retrieval(X, X, np.zeros(12), np.zeros(12))


def test_tfidf_idf_argument():
    X = _counts()
    with pytest.raises(TypeError, match="idf"):
        tfidf(X, "abc")
    with pytest.raises(TypeError, match="idf"):
        tfidf(X, np.array(["a"] * 7))
    with pytest.raises(ValueError, match="idf contains NaN"):
        tfidf(X, np.full(7, np.nan))
    with pytest.raises(ValueError, match="idf has shape"):
        tfidf(X, np.ones((7, 1)))
    np.testing.assert_allclose(tfidf(X, np.ones(7, dtype=int)),
                               X / X.sum(axis=1, keepdims=True))


# ---------------------------------------------------------------- LSI
def test_lsi_fit_returns_self_and_degenerate_input():
    lsi = LSI(2, random_state=0)
    assert lsi.fit(_counts()) is lsi
    # all-zero counts, and counts where every word is in every document (idf = 0): the
    # tf-idf matrix is zero (was: ARPACK error -9)
    for X in (np.zeros((5, 6)), _counts() + 1):
        with pytest.warns(UserWarning, match="tf-idf matrix of X is all zero"):
            lsi = LSI(2, random_state=0).fit(X)
        np.testing.assert_array_equal(lsi.singular_values_, [0.0, 0.0])
        np.testing.assert_allclose(lsi.components_ @ lsi.components_.T, np.eye(2))
        np.testing.assert_array_equal(lsi.transform(X), 0.0)


@pytest.mark.parametrize("shape", [(1, 5), (5, 1), (4, 9), (9, 4)])
def test_lsi_n_components_up_to_min_shape(shape):
    rng = np.random.default_rng(5)
    X = rng.poisson(2.0, size=shape).astype(float)
    X[rng.random(shape) < 0.3] = 0
    X[0, 0] = 1
    k = min(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        lsi = LSI(k, random_state=0).fit(X)
    T = tfidf(X)
    s = np.linalg.svd(T, compute_uv=False)
    np.testing.assert_allclose(lsi.singular_values_, s[:k], atol=1e-12)
    assert lsi.components_.shape == (k, shape[1])
    assert np.isfinite(lsi.transform(X)).all()
    with pytest.raises(ValueError, match=f"n_components={k + 1} must be <= min"):
        LSI(k + 1).fit(X)


def test_lsi_bad_input():
    X = _counts()
    with pytest.raises(ValueError, match="X contains NaN"):
        LSI(2).fit(np.where(X > 2, np.nan, X))
    with pytest.raises(ValueError, match="non-negative"):
        LSI(2).fit(-X)
    with pytest.raises(ValueError, match=r"Found array with 0 sample\(s\)"):
        LSI(2).fit(X[:0])
    with pytest.raises(TypeError, match="n_components"):
        LSI(2.5).fit(X)
    lsi = LSI(2, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        lsi.transform(X[:, :3])
    assert np.isfinite(lsi.transform(X * 1e300)).all()
    np.testing.assert_allclose(lsi.transform(X * 1e300), lsi.transform(X), rtol=1e-12)
    assert isinstance(countgrid.LSI(1), LSI)


def test_lsi_fitted_state_is_checked():
    import copy

    model = LSI(2, random_state=0).fit(_counts())
    model._check_fitted_state()
    for attr, value, match in [("components_", model.components_[:, :3], "components_ has shape"),
                               ("idf_", -model.idf_, "idf_ holds negative"),
                               ("singular_values_", model.singular_values_[:1],
                                "singular_values_ has shape")]:
        bad = copy.deepcopy(model)
        setattr(bad, attr, value)
        with pytest.raises(ValueError, match=match):
            bad._check_fitted_state()
