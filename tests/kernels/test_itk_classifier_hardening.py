"""ITKernelClassifier on hostile input (issue 13): X validated before anything touches it
(corrupt sparse, NaN on the linear k-NN path, every sparse format, mixed sparse/dense
between fit and predict), n_features_in_, decision_function availability, labels,
embeddings with negative output, overflow, thread counts and memory."""
import decimal

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid import ITKernelClassifier

from _synthetic import two_class_corpus

CONFIGS = [dict(kernel="linear", classifier="knn", n_neighbors=3),
           dict(kernel="js", classifier="knn", n_neighbors=3),
           dict(kernel="jt", q=0.7, classifier="knn"),
           dict(kernel="jt", q=1.5, weighted="B", classifier="knn"),
           dict(kernel="js", classifier="svm"),
           dict(kernel="linear", classifier="svm")]


def _corrupt(M):
    S = sp.csr_matrix(M)
    S.indices[1] = M.shape[1] + 3
    return S


@pytest.mark.parametrize("params", CONFIGS, ids=lambda p: f"{p['kernel']}-{p['classifier']}")
def test_corrupt_sparse_and_non_finite_x_are_named(params):
    if params["classifier"] == "svm":
        pytest.importorskip("sklearn")
    X, y = two_class_corpus(0)
    X = X.toarray()
    with pytest.raises(ValueError, match="X is a corrupt sparse matrix"):
        ITKernelClassifier(**params).fit(_corrupt(X), y)
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        ITKernelClassifier(**params).fit(bad, y)   # the linear k-NN path accepted NaN
    clf = ITKernelClassifier(**params).fit(X, y)
    methods = ["predict", "kernel_distances"] + (["decision_function"]
                                                  if params["classifier"] == "svm" else [])
    for method in methods:
        with pytest.raises(ValueError, match="X is a corrupt sparse matrix"):
            getattr(clf, method)(_corrupt(X[:5]))
        with pytest.raises(ValueError, match="X contains NaN or infinity"):
            getattr(clf, method)(np.where(X[:5] > 2, np.inf, X[:5]))


@pytest.mark.parametrize("params", CONFIGS, ids=lambda p: f"{p['kernel']}-{p['classifier']}")
def test_every_format_and_mixed_fit_predict_equal_dense(params):
    if params["classifier"] == "svm":
        pytest.importorskip("sklearn")
    X, y = two_class_corpus(1)
    X = X.toarray()
    ref = ITKernelClassifier(**params).fit(X[:30], y[:30])
    want_d = ref.kernel_distances(X[30:])
    want_p = ref.predict(X[30:])
    for fmt in ("csr", "coo", "dia", "bsr", "lil", "csr_array"):
        conv = (sp.csr_array if fmt == "csr_array"
                else lambda M, f=fmt: sp.csr_matrix(M).asformat(f))
        for train, test in ((conv(X[:30]), X[30:]), (X[:30], conv(X[30:])),
                            (conv(X[:30]), conv(X[30:]))):
            clf = ITKernelClassifier(**params).fit(train, y[:30])
            np.testing.assert_allclose(clf.kernel_distances(test), want_d, rtol=1e-9,
                                       atol=1e-10)
            np.testing.assert_array_equal(clf.predict(test), want_p)


class _TwoBlocks:
    """The identity as a block-structured embedding (two blocks of columns)."""

    def __init__(self, first=5):
        self.first = first

    def get_params(self, deep=True):
        return {"first": self.first}

    def set_params(self, **params):
        self.first = params.get("first", self.first)
        return self

    def fit(self, X, y=None):
        self.block_sizes_ = (self.first, X.shape[1] - self.first)
        return self

    def transform(self, X):
        return X


DISTANCE_CONFIGS = [dict(kernel="linear"), dict(kernel="js"), dict(kernel="jt", q=1.5),
                    dict(kernel="jt", q=0.5), dict(kernel="jt", q=0.0),
                    dict(kernel="jt", q=1 - 1e-7), dict(kernel="jt", q=1.5, weighted="B"),
                    dict(kernel="jt", q=0.7, weighted="A"),
                    dict(kernel="js", exponentiated=True, t=0.5),
                    dict(kernel="jt", q=0.5, exponentiated=True, t=2.0),
                    dict(kernel="js", embedding=_TwoBlocks(), block_weights=[1.0, 0.25])]


def _near_duplicates():
    """Training counts and test rows: duplicates, rows one count away, a scaled copy, a
    zero row, a row with a zero block and unrelated rows."""
    rng = np.random.default_rng(30)
    train = rng.poisson(1.5, (12, 14)).astype(np.float64)
    train[:, 0] += 1.0
    train[3, :5] = 0.0                       # a zero first block
    test = np.vstack([train[:4], train[4:8] + np.eye(4, 14, 6), 3.0 * train[8:9],
                      np.zeros((1, 14)), rng.poisson(1.5, (3, 14))])
    return train, np.repeat([0, 1], 6), test


def _config_id(params):
    words = [f"{k}={v}" for k, v in params.items() if k != "embedding"]
    return "-".join(words + (["blocks"] if "embedding" in params else []))


@pytest.mark.parametrize("params", DISTANCE_CONFIGS, ids=_config_id)
def test_kernel_distances_of_dense_and_csr_agree_with_the_reference(params):
    """Issue 30: k(x, x) + k(y, y) - 2 k(x, y) cancels for near pairs, and its round-off
    differs between the dense and CSR kernels: a document and its duplicate were 1.5e-8
    apart (JS, 0 in the other format).  Near pairs now come from the two rows without
    cancellation, the same bits in any format: dense and CSR agree to 1e-13 relative, and
    both agree with the 100-digit reference (exactly 0 for duplicates)."""
    from _reference.itk import sq_distances_dec

    train, y, test = _near_duplicates()
    params = dict(params, classifier="knn")
    got = {}
    for fmt in ("dense", "csr"):
        conv = np.asarray if fmt == "dense" else sp.csr_matrix
        clf = ITKernelClassifier(**params).fit(conv(train), y)
        got[fmt] = clf.kernel_distances(conv(test))
    np.testing.assert_allclose(got["csr"], got["dense"], rtol=1e-13, atol=0)
    kw = {k: v for k, v in params.items() if k in ("q", "weighted", "exponentiated", "t")}
    if "embedding" in params:
        w = params["block_weights"]
        ref = sum(decimal.Decimal(wi)
                  * sq_distances_dec(test[:, a:b], train[:, a:b], params["kernel"], **kw)
                  for wi, (a, b) in zip(w, ((0, 5), (5, 14))))
    else:
        ref = sq_distances_dec(test, train, params["kernel"], **kw)
    want = np.sqrt(np.maximum(np.array(ref.tolist(), dtype=np.float64), 0.0))
    # weighted="A": the terms of its distance cancel when the masses differ
    rtol = 1e-12 if params.get("weighted") == "A" else 1e-13
    for d in got.values():
        np.testing.assert_allclose(d, want, rtol=rtol, atol=0)
        assert (d[np.arange(4), np.arange(4)] == 0).all()


def test_score_with_y_of_the_wrong_length_names_y():
    """Issue 30: ClassifierMixin.score checks y as fit does (it said "operands could not be
    broadcast")."""
    X, y = two_class_corpus(2)
    clf = ITKernelClassifier(kernel="js", classifier="knn").fit(X, y)
    with pytest.raises(ValueError, match=f"y has {len(y) - 1} entries but X has {len(y)} "
                                         "samples"):
        clf.score(X, y[:-1])
    with pytest.raises(ValueError, match="y should be a 1d array"):
        clf.score(X, np.c_[y, y])


def test_n_features_in_and_the_feature_count_message():
    X, y = two_class_corpus(2)
    clf = ITKernelClassifier(kernel="js", classifier="knn").fit(X, y)
    assert clf.n_features_in_ == X.shape[1]
    with pytest.raises(ValueError, match=f"X has 3 features, but ITKernelClassifier is "
                                         f"expecting {X.shape[1]} features as input"):
        clf.predict(X[:, :3])
    with pytest.raises(ValueError, match="Expected a 2-D array for X"):
        clf.predict(X[0].toarray().ravel() if sp.issparse(X) else X[0])
    with pytest.raises(ValueError, match=r"Found array with 0 sample\(s\)"):
        clf.predict(np.zeros((0, X.shape[1])))
    with pytest.raises(ValueError, match=r"X has 0 feature\(s\)"):
        ITKernelClassifier(kernel="js", classifier="knn").fit(np.zeros((4, 0)), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="Expected a 2-D array for X"):
        ITKernelClassifier(kernel="js", classifier="knn").fit(np.ones(4), [0, 1, 0, 1])


def test_decision_function_only_for_the_svm():
    pytest.importorskip("sklearn")
    X, y = two_class_corpus(3)
    knn = ITKernelClassifier(kernel="js", classifier="knn")
    assert not hasattr(knn, "decision_function")
    assert not hasattr(knn.fit(X, y), "decision_function")
    with pytest.raises(AttributeError, match="classifier='svm' only"):
        knn.decision_function(X)
    svm = ITKernelClassifier(kernel="js")
    assert hasattr(svm, "decision_function")
    with pytest.raises(countgrid.NotFittedError):
        svm.decision_function(X)
    d = svm.fit(X, y).decision_function(X)
    assert d.shape == (X.shape[0],) and np.isfinite(d).all()
    np.testing.assert_array_equal(svm.classes_[(d > 0).astype(int)], svm.predict(X))
    assert not hasattr(svm, "predict_proba")
    # three classes: one column per class
    y3 = np.arange(X.shape[0]) % 3
    assert svm.fit(X, y3).decision_function(X[:5]).shape == (5, 3)


@pytest.mark.parametrize("labels", [np.array(["b", "a"]), np.array([2.0, -1.0]),
                                    np.array([True, False]), np.array([10, 3], dtype=np.int8)])
def test_classes_keep_the_label_type(labels):
    X, y = two_class_corpus(4)
    yl = labels[y]
    clf = ITKernelClassifier(kernel="js", classifier="knn").fit(X, yl)
    assert clf.classes_.dtype == np.sort(labels).dtype
    np.testing.assert_array_equal(clf.classes_, np.sort(labels))
    assert clf.predict(X).dtype == clf.classes_.dtype
    assert clf.score(X, yl) > 0.8


def test_object_integer_labels_come_back_as_the_same_ints():
    X, y = two_class_corpus(5)
    yo = np.array([7, 9], dtype=object)[y]
    clf = ITKernelClassifier(kernel="js", classifier="knn").fit(X, yo)
    assert clf.classes_.dtype.kind == "i" and list(clf.classes_) == [7, 9]
    assert (clf.predict(X) == yo).mean() > 0.8
    assert clf.score(X, yo) > 0.8


def test_embedding_with_negative_output_needs_the_linear_kernel():
    pytest.importorskip("sklearn")
    from sklearn.preprocessing import FunctionTransformer

    X, y = two_class_corpus(6)
    shift = FunctionTransformer(lambda M: np.asarray(M.todense() if sp.issparse(M) else M) - 1.0,
                                accept_sparse=True)
    with pytest.raises(ValueError, match="FunctionTransformer embedding has negative values.*"
                                         "kernel='linear'"):
        ITKernelClassifier(shift, kernel="js", classifier="knn").fit(X, y)
    clf = ITKernelClassifier(shift, kernel="linear", classifier="knn").fit(X, y)
    assert clf.predict(X).shape == (X.shape[0],)
    broken = FunctionTransformer(lambda M: np.full(M.shape, np.nan), accept_sparse=True)
    with pytest.raises(ValueError, match="embedding contains NaN"):
        ITKernelClassifier(broken, kernel="linear", classifier="knn").fit(X, y)


def test_negative_x_only_for_the_linear_kernel_without_embedding():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(30, 4))
    y = (X[:, 0] > 0).astype(int)
    clf = ITKernelClassifier(kernel="linear", classifier="knn").fit(X, y)
    assert clf.score(X, y) == 1.0
    with pytest.raises(ValueError, match="X must be non-negative"):
        ITKernelClassifier(kernel="js", classifier="knn").fit(X, y)


def test_overflowing_linear_kernel_is_named():
    X = np.array([[1e200, 1.0], [1.0, 1e200], [1e200, 2.0], [2.0, 1e200]])
    with pytest.raises(ValueError, match="linear kernel .* exceeds the range of float64"):
        ITKernelClassifier(kernel="linear", classifier="knn").fit(X, [0, 1, 0, 1])
    # the normalised kernels of the same rows are fine
    clf = ITKernelClassifier(kernel="js", classifier="knn").fit(X, [0, 1, 0, 1])
    np.testing.assert_array_equal(clf.predict(X), [0, 1, 0, 1])
    assert np.isfinite(clf.kernel_distances(X)).all()


@pytest.mark.parametrize("params", [dict(kernel="jt", q=1.5, weighted="B"),
                                    dict(kernel="jt", q=0.5, exponentiated=True, t=2.0),
                                    dict(kernel="jt", q=1 + 1e-7), dict(kernel="jt", q=0.0)])
def test_self_kernel_at_extreme_magnitudes(params):
    rng = np.random.default_rng(8)
    A = rng.random((5, 4)) + 0.1
    A = np.vstack([A[:2] * 1e150, A[2:] * 1e-300])
    clf = ITKernelClassifier(**params)
    clf.blocks_, clf.block_weights_ = None, None
    np.testing.assert_allclose(clf._self_kernel(A), np.diag(clf._gram(A)), rtol=1e-12)


@pytest.mark.parametrize("nt,exc", [(0, ValueError), (1.5, TypeError), ("2", TypeError)])
def test_bad_thread_counts(nt, exc):
    X, y = two_class_corpus(9)
    with pytest.raises(exc, match="num_threads"):
        ITKernelClassifier(kernel="js", classifier="knn", num_threads=nt).fit(X, y)


def test_absurd_thread_counts_are_capped():
    X, y = two_class_corpus(9)
    ref = ITKernelClassifier(kernel="js", classifier="knn", num_threads=1).fit(X, y)
    for nt in (10 ** 6, 2 ** 40):
        clf = ITKernelClassifier(kernel="js", classifier="knn", num_threads=nt).fit(X, y)
        with pytest.warns(RuntimeWarning, match="capped"):
            np.testing.assert_array_equal(clf.kernel_distances(X), ref.kernel_distances(X))


def test_gram_beyond_the_available_memory(monkeypatch):
    X, y = two_class_corpus(10)
    clf = ITKernelClassifier(kernel="linear", classifier="knn").fit(X, y)
    monkeypatch.setenv("COUNTGRID_MAX_MEMORY", "1K")
    with pytest.raises(MemoryError, match="kernel Gram matrix.*fewer documents"):
        clf.predict(X)
