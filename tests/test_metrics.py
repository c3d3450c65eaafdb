"""Retrieval curves, tf-idf and LSI (Gehler, Holub & Welling, ICML 2006, section 3.2,
eqs. 11-12 and footnote 6); at the edges (issue 13): every sparse format and mixed pairs,
rows of any magnitude, ties, overflowing dot products, memory estimates and LSI on
degenerate input (their answers to hostile arguments: tests/hostile)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.metrics import cosine_similarity, precision_recall_curve_retrieval
from countgrid.retrieval import LSI, idf_weights, tfidf


def curve_ref(Q, C, yq, yc):
    """Loop reference: cosine ranking (stable ties), cut-offs 1, 2, 4, ..., n."""
    Q, C = np.asarray(Q, float), np.asarray(C, float)
    n = C.shape[0]
    ks = [1]
    while ks[-1] * 2 < n:
        ks.append(ks[-1] * 2)
    if ks[-1] != n:
        ks.append(n)
    P, R = [], []
    for q, lab in zip(Q, yq):
        n_rel = np.sum(yc == lab)
        if n_rel == 0:
            continue
        sims = []
        for c in C:
            nq, nc = np.linalg.norm(q), np.linalg.norm(c)
            sims.append(0.0 if nq == 0 or nc == 0 else q @ c / (nq * nc))
        order = sorted(range(n), key=lambda i: -sims[i])
        P.append([np.sum(yc[order[:k]] == lab) / k for k in ks])
        R.append([np.sum(yc[order[:k]] == lab) / n_rel for k in ks])
    return np.mean(P, axis=0), np.mean(R, axis=0), np.array(ks)


@pytest.mark.parametrize("sparse", [False, True])
def test_curve_matches_loop_reference(sparse):
    rng = np.random.default_rng(0)
    Q, C = rng.normal(size=(13, 4)), rng.normal(size=(37, 4))
    yq, yc = rng.integers(0, 3, 13), rng.integers(0, 3, 37)
    yq[0] = 7  # a query without relevant documents is left out
    P, R, ks = curve_ref(Q, C, yq, yc)
    args = (sp.csr_matrix(Q), sp.csr_matrix(C)) if sparse else (Q, C)
    curve = precision_recall_curve_retrieval(*args, yq, yc, batch_size=5)
    np.testing.assert_array_equal(curve.n_retrieved, ks)
    np.testing.assert_allclose(curve.precision, P, atol=1e-12)
    np.testing.assert_allclose(curve.recall, R, atol=1e-12)
    r = np.concatenate([[0], R])
    p = np.concatenate([[P[0]], P])
    assert curve.auc == pytest.approx(np.trapezoid(p, r), abs=1e-12)


def test_perfect_and_random_representations():
    rng = np.random.default_rng(1)
    yc = np.repeat(np.arange(4), [16, 32, 8, 8])   # priors 1/4, 1/2, 1/8, 1/8
    yq = rng.integers(0, 4, 400)
    perfect = precision_recall_curve_retrieval(np.eye(4)[yq], np.eye(4)[yc], yq, yc)
    n_rel = np.bincount(yc)[yq]
    want = np.mean(np.minimum(1.0, n_rel[:, None] / perfect.n_retrieved), axis=0)
    np.testing.assert_allclose(perfect.precision, want)
    assert perfect.precision[:4].min() == 1.0       # k = 1..8 <= every class size
    assert perfect.recall[-1] == 1.0 and perfect.auc > 0.9
    prior = np.mean(np.bincount(yc)[yq] / yc.size)
    rand = precision_recall_curve_retrieval(rng.normal(size=(400, 5)), rng.normal(size=(64, 5)),
                                            yq, yc)
    assert rand.precision[-1] == pytest.approx(prior)
    assert abs(rand.precision[0] - prior) < 0.08
    assert abs(rand.auc - prior) < 0.08


def test_cosine_similarity_and_errors():
    A = np.array([[1.0, 0.0], [0.0, 0.0], [3.0, 4.0]])
    S = cosine_similarity(A, sp.csr_matrix(A))
    np.testing.assert_allclose(S, [[1, 0, 0.6], [0, 0, 0], [0.6, 0, 1]])
    with pytest.raises(ValueError, match="query_labels"):
        precision_recall_curve_retrieval(A, A, [0, 1], [0, 1, 2])
    with pytest.raises(ValueError, match="columns"):
        precision_recall_curve_retrieval(A, A[:, :1], [0, 1, 2], [0, 1, 2])
    with pytest.raises(ValueError, match="metric"):
        precision_recall_curve_retrieval(A, A, [0, 1, 2], [0, 1, 2], metric="l1")
    with pytest.raises(ValueError, match="NaN"):
        precision_recall_curve_retrieval(A * np.nan, A, [0, 1, 2], [0, 1, 2])
    with pytest.raises(ValueError, match="no query"):
        precision_recall_curve_retrieval(A, A, [5, 5, 5], [0, 1, 2])


def test_tfidf_footnote_6():
    rng = np.random.default_rng(2)
    X = rng.poisson(0.7, size=(9, 6))
    X[3] = 0
    X[:, 5] = 0
    want = np.zeros(X.shape)
    for d in range(9):
        for w in range(6):
            df = np.sum(X[:, w] > 0)
            if X[d].sum() and df:
                want[d, w] = X[d, w] / X[d].sum() * np.log2(9 / df)
    np.testing.assert_allclose(countgrid.tfidf(X), want, atol=1e-14)
    np.testing.assert_allclose(countgrid.tfidf(sp.csr_matrix(X)).toarray(), want, atol=1e-14)
    # queries use the idf of the training corpus
    idf = idf_weights(X)
    q = rng.poisson(1.0, size=(2, 6))
    np.testing.assert_allclose(countgrid.tfidf(q, idf), q / q.sum(1, keepdims=True) * idf)
    with pytest.raises(ValueError, match="idf"):
        countgrid.tfidf(q, idf[:3])
    with pytest.raises(ValueError, match="non-negative"):
        countgrid.tfidf(-q)


def test_lsi_is_the_truncated_svd_of_tfidf(tmp_path):
    rng = np.random.default_rng(3)
    X = sp.csr_matrix(rng.poisson(0.5, size=(40, 25)))
    lsi = LSI(n_components=4, random_state=0).fit(X)
    T = countgrid.tfidf(X).toarray()
    U, s, Vt = np.linalg.svd(T, full_matrices=False)
    np.testing.assert_allclose(lsi.singular_values_, s[:4], rtol=1e-8)
    np.testing.assert_allclose(np.abs(lsi.transform(X)), np.abs(U[:, :4] * s[:4]), atol=1e-8)
    assert np.allclose(lsi.components_ @ lsi.components_.T, np.eye(4))
    path = tmp_path / "lsi.npz"
    lsi.save(path)
    np.testing.assert_array_equal(countgrid.load(path).transform(X[:5]), lsi.transform(X[:5]))
    with pytest.raises(ValueError, match="n_components=26 must be <= min"):
        LSI(n_components=26).fit(X)


# ---------------------------------------------------------------- edges (issue 13)
FORMATS = ["csr", "csc", "coo", "dia", "bsr", "lil", "dok"]


def _convert(M, fmt):
    return sp.csr_array(M) if fmt == "csr_array" else sp.csr_matrix(M).asformat(fmt)


def _counts(seed=0, n=12, m=7):
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.0, size=(n, m)).astype(np.float64)
    X[:, 0] += 1
    return X


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


def test_memory_estimates(monkeypatch):
    X = _counts()
    monkeypatch.setenv("COUNTGRID_MAX_MEMORY", "1K")
    with pytest.raises(MemoryError, match="similarity matrix"):
        cosine_similarity(X, X)
    with pytest.raises(MemoryError, match="batch_size"):
        precision_recall_curve_retrieval(X, X, np.zeros(12), np.zeros(12))


# ---------------------------------------------------------------- LSI
def test_lsi_fit_returns_self_and_degenerate_input():
    assert isinstance(countgrid.LSI(1), LSI)          # the top-level name is the class
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
