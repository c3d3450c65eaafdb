"""ITKernelClassifier: IT-kernel SVM / k-NN on generative embeddings; every sparse format and
mixed sparse/dense input between fit and predict, kernel distances against a 100-digit
reference, decision_function availability, labels, embeddings with negative output,
overflow, capped thread counts and memory (issue 13; its answers to hostile input:
tests/hostile and tests/test_common.py)."""
import decimal

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid import ITKernelClassifier
from countgrid.kernels import jensen_tsallis_kernel

from _expected_warnings import FEW_ITERATIONS
from _synthetic import two_class_corpus

# the embeddings are of models fitted a few EM iterations, on purpose (fast)
pytestmark = FEW_ITERATIONS


def test_knn_kernel_distance_matches_bruteforce():
    X, y = two_class_corpus(0)
    clf = countgrid.ITKernelClassifier(kernel="jt", q=1.5, classifier="knn", n_neighbors=3)
    clf.fit(X[:30], y[:30])
    K = jensen_tsallis_kernel(X, q=1.5)
    d2 = np.diag(K)[30:, None] + np.diag(K)[None, :30] - 2 * K[30:, :30]
    np.testing.assert_allclose(clf.kernel_distances(X[30:]), np.sqrt(np.maximum(d2, 0)),
                               rtol=1e-10, atol=1e-10)
    nn = np.argsort(np.sqrt(np.maximum(d2, 0)), axis=1, kind="stable")[:, :3]
    votes = (y[:30][nn] == 1).sum(axis=1)
    np.testing.assert_array_equal(clf.predict(X[30:]), (votes >= 2).astype(int))
    assert clf.score(X, y) > 0.8


@pytest.mark.parametrize("params", [dict(kernel="linear"), dict(kernel="js"),
                                    dict(kernel="jt", q=0.0), dict(kernel="jt", q=0.5),
                                    dict(kernel="jt", q=2.0), dict(kernel="jt", weighted="A"),
                                    dict(kernel="jt", weighted="B", q=0.7),
                                    dict(kernel="jt", exponentiated=True, t=0.5)])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("blocks", [None, ((2, 3), None), ((1, 3, 1), (0.5, 2.0, 1.0))])
def test_self_kernel_is_gram_diagonal(params, sparse, blocks):
    rng = np.random.default_rng(7)
    A = rng.random((6, 5)) * (rng.random((6, 5)) > 0.4)
    A[3] = 0
    A[4, :2] = 0  # a zero-mass first block
    A = sp.csr_matrix(A) if sparse else A
    clf = countgrid.ITKernelClassifier(**params)
    clf.blocks_, clf.block_weights_ = blocks if blocks is not None else (None, None)
    np.testing.assert_allclose(clf._self_kernel(A), np.diag(clf._gram(A)), rtol=1e-12,
                               atol=1e-14)


@pytest.mark.parametrize("kernel", ["linear", "js", "jt"])
def test_knn_with_embedding(kernel):
    X, y = two_class_corpus(1)
    emb = countgrid.MixtureOfTopics(n_components=2, n_iter=20, random_state=0)
    clf = countgrid.ITKernelClassifier(embedding=emb, kernel=kernel, classifier="knn")
    clf.fit(X, y)
    assert clf.embedding_ is not emb and not hasattr(emb, "models_")  # cloned
    assert clf.predict(X).shape == (40,)
    np.testing.assert_array_equal(clf.classes_, [0, 1])


def test_validation_errors():
    X, y = two_class_corpus(2)
    with pytest.raises(ValueError, match="kernel"):
        countgrid.ITKernelClassifier(kernel="rbf").fit(X, y)
    with pytest.raises(ValueError, match="classifier"):
        countgrid.ITKernelClassifier(classifier="tree").fit(X, y)
    with pytest.raises(ValueError, match="n_neighbors"):
        countgrid.ITKernelClassifier(classifier="knn", n_neighbors=0).fit(X, y)
    with pytest.raises(ValueError, match="weighted"):
        countgrid.ITKernelClassifier(kernel="linear", weighted="A", classifier="knn").fit(X, y)


def test_not_saveable(tmp_path):
    X, y = two_class_corpus(3)
    clf = countgrid.ITKernelClassifier(classifier="knn").fit(X, y)
    with pytest.raises(TypeError, match="ITKernelClassifier"):
        countgrid.io.save(clf, tmp_path / "clf.npz")


# ------------------------------------------------------------ with scikit-learn
@pytest.mark.parametrize("combine", ["sum", "concat"])
def test_svm_matches_sklearn_precomputed(combine):
    pytest.importorskip("sklearn")
    from sklearn.svm import SVC

    X, y = two_class_corpus(4)
    emb = countgrid.FreeEnergyScoreSpace(reduce="topics", n_components=2, n_iter=20,
                                         random_state=0)
    clf = countgrid.ITKernelClassifier(embedding=emb, kernel="jt", q=0.5, C=10.0,
                                       combine=combine)
    clf.fit(X[:30], y[:30])
    blocks = clf.embedding_.block_sizes_ if combine == "sum" else None
    assert blocks is None or len(blocks) == len(np.unique(y[:30]))
    assert clf.blocks_ == blocks

    def gram(A, B=None):
        return jensen_tsallis_kernel(A, B, q=0.5, blocks=blocks)

    E_tr, E_te = clf.embedding_.transform(X[:30]), clf.embedding_.transform(X[30:])
    K, Kt = gram(E_tr), gram(E_te, E_tr)
    # the classifier centres both Gram matrices in feature space with the training mean
    mu = K.mean(axis=0)
    Kc = K - mu[:, None] - mu[None, :] + mu.mean()
    Ktc = Kt - Kt.mean(axis=1)[:, None] - mu[None, :] + mu.mean()
    svc = SVC(kernel="precomputed", C=10.0).fit(Kc, y[:30])
    np.testing.assert_allclose(clf.decision_function(X[30:]), svc.decision_function(Ktc),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(clf.predict(X[30:]), svc.predict(Ktc))
    # ... which is the SVM of the raw Gram matrix up to the solver tolerance
    raw = SVC(kernel="precomputed", C=10.0, tol=1e-8).fit(K, y[:30])
    cen = SVC(kernel="precomputed", C=10.0, tol=1e-8).fit(Kc, y[:30])
    np.testing.assert_allclose(cen.decision_function(Ktc), raw.decision_function(Kt),
                               rtol=1e-5, atol=1e-5)


def test_sklearn_clone_pipeline_cv_gridsearch():
    pytest.importorskip("sklearn")
    from sklearn.base import clone, is_classifier
    from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X, y = two_class_corpus(5, D=48)
    clf = countgrid.ITKernelClassifier(
        embedding=countgrid.TOPEmbedding(n_components=2, n_iter=15, random_state=0),
        kernel="jt", q=1.5, C=100.0)  # JT kernel values are small: a larger C
    assert is_classifier(clf)
    c2 = clone(clf)
    assert c2.get_params()["embedding__n_components"] == 2
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(clf, X, y, cv=cv)
    assert scores.shape == (3,) and scores.mean() > 0.6
    pipe = make_pipeline(FunctionTransformer(accept_sparse=True), clf)
    assert cross_val_score(pipe, X, y, cv=cv).shape == (3,)
    grid = GridSearchCV(clf, {"q": [0.5, 1.5], "embedding__n_components": [2, 3]}, cv=cv).fit(X, y)
    assert set(grid.best_params_) == {"q", "embedding__n_components"}
    assert grid.predict(X).shape == (48,)


def test_block_parameters():
    X, y = two_class_corpus(5)
    emb = countgrid.MixtureOfTopics(n_components=2, n_iter=10, random_state=0)
    with pytest.raises(ValueError, match="combine"):
        countgrid.ITKernelClassifier(emb, classifier="knn", combine="max").fit(X, y)
    with pytest.raises(ValueError, match="one weight per block"):
        countgrid.ITKernelClassifier(emb, classifier="knn", block_weights=[1.0]).fit(X, y)
    with pytest.raises(ValueError, match="block_weights needs"):
        countgrid.ITKernelClassifier(None, classifier="knn", block_weights=[1.0]).fit(X, y)
    with pytest.raises(ValueError, match="block_weights needs"):
        countgrid.ITKernelClassifier(emb, classifier="knn", combine="concat",
                                     block_weights=[1.0, 1.0]).fit(X, y)
    clf = countgrid.ITKernelClassifier(emb, kernel="js", classifier="knn", n_neighbors=3,
                                       block_weights=[1.0, 0.0]).fit(X, y)
    assert clf.blocks_ == (2, 2)
    # weight 0 on the second class's block: distances come from the first block only
    E_tr = clf.train_embedding_
    d = clf.kernel_distances(X[:5])
    ref = countgrid.ITKernelClassifier(kernel="js", classifier="knn").fit(E_tr[:, :2], y)
    np.testing.assert_allclose(d, ref.kernel_distances(clf.embedding_.transform(X[:5])[:, :2]),
                               rtol=1e-10, atol=1e-12)


def test_list_labels_and_length_mismatch():
    X, y = two_class_corpus(6)
    clf = countgrid.ITKernelClassifier(kernel="js", classifier="knn").fit(X, list(y))
    np.testing.assert_array_equal(clf.classes_, [0, 1])
    with pytest.raises(ValueError, match=f"y has 8 entries but X has {X.shape[0]} samples"):
        countgrid.ITKernelClassifier(kernel="js", classifier="knn").fit(X, [0, 1] * 4)


# ---------------------------------------------------------------- edges (issue 13)
CONFIGS = [dict(kernel="linear", classifier="knn", n_neighbors=3),
           dict(kernel="js", classifier="knn", n_neighbors=3),
           dict(kernel="jt", q=0.7, classifier="knn"),
           dict(kernel="jt", q=1.5, weighted="B", classifier="knn"),
           dict(kernel="js", classifier="svm"),
           dict(kernel="linear", classifier="svm")]


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
