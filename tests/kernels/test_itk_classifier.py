"""ITKernelClassifier: IT-kernel SVM / k-NN on generative embeddings."""
import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
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
