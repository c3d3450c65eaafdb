"""Retrieval curves, tf-idf and LSI (Gehler, Holub & Welling, ICML 2006, section 3.2,
eqs. 11-12 and footnote 6)."""
import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.metrics import cosine_similarity, precision_recall_curve_retrieval
from countgrid.retrieval import LSI, idf_weights


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
