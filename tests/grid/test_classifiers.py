"""Label embedding (eqs. 9-10) and the classifiers / regressor built on grids."""

import numpy as np
import pytest
import scipy.sparse as sp


from countgrid import (CountingGridClassifier, CountingGridRegressor,  # noqa: E402
                       GenerativeCountingGridClassifier, embed_labels)
from _expected_warnings import FEW_ITERATIONS  # noqa: E402
from _synthetic import (backward_window_sums, draw_corpus, true_grid,  # noqa: E402
                        window_means)

# the grids are fitted a fixed, small number of EM iterations, on purpose (fast)
pytestmark = FEW_ITERATIONS

EXTENT, WINDOW = (8, 8), (3, 3)


def _random_posteriors(n, L, rng, sharp=3.0):
    logits = sharp * rng.standard_normal((n, L))
    Q = np.exp(logits - logits.max(axis=1, keepdims=True))
    return Q / Q.sum(axis=1, keepdims=True)


def _brute_embedding(Q, Y, extent, window):
    """gamma(i) = sum_t sum_{k: i in W_k} q_t(k) Y_t / sum_t sum_{k: i in W_k} q_t(k)."""
    extent = tuple(extent)
    M = (Y.T @ Q).T.reshape(extent + (Y.shape[1],))            # sum_t q_t(k) Y_t
    mass = Q.sum(axis=0).reshape(extent + (1,))
    num = backward_window_sums(M, window)
    den = backward_window_sums(mass, window)
    return num / den


# ------------------------------------------------------------ embed_labels
@pytest.mark.parametrize("extent,window", [((8, 8), (3, 3)), ((10,), (4,)), ((4, 3, 5), (2, 2, 3)),
                                           ((5, 7), (2, 3))])
def test_embed_discrete_matches_eq9(extent, window):
    rng = np.random.default_rng(0)
    L = int(np.prod(extent))
    Q = _random_posteriors(40, L, rng)
    y = rng.integers(0, 3, size=40)
    g = embed_labels(Q, y, extent, window, kind="discrete", num_threads=1)
    assert g.shape == tuple(extent) + (3,)
    np.testing.assert_allclose(g.sum(axis=-1), 1.0, rtol=1e-12)
    assert (g >= 0).all()
    onehot = np.eye(3)[y]
    np.testing.assert_allclose(g, _brute_embedding(Q, onehot, extent, window), rtol=1e-10)


def test_embed_discrete_string_labels_and_classes_order():
    rng = np.random.default_rng(1)
    Q = _random_posteriors(30, 64, rng)
    yi = rng.integers(0, 3, size=30)
    names = np.array(["cat", "dog", "emu"])
    g_int = embed_labels(Q, yi, EXTENT, WINDOW)
    g_str = embed_labels(Q, names[yi], EXTENT, WINDOW)
    np.testing.assert_allclose(g_str, g_int, rtol=1e-12)
    # explicit class order permutes the last axis; unseen classes get 0
    g_perm = embed_labels(Q, names[yi], EXTENT, WINDOW, classes=["dog", "cat", "emu", "fox"])
    assert g_perm.shape == EXTENT + (4,)
    np.testing.assert_allclose(g_perm[..., :3], g_int[..., [1, 0, 2]], rtol=1e-12)
    np.testing.assert_allclose(g_perm[..., 3], 0.0)


@pytest.mark.parametrize("extent,window", [((8, 8), (3, 3)), ((9,), (2,)), ((3, 4, 5), (2, 2, 2))])
def test_embed_continuous_matches_eq10(extent, window):
    rng = np.random.default_rng(2)
    L = int(np.prod(extent))
    Q = _random_posteriors(25, L, rng)
    y = rng.normal(size=25) * 3 + 1
    g = embed_labels(Q, y, extent, window, kind="continuous", num_threads=1)
    assert g.shape == tuple(extent)
    np.testing.assert_allclose(g, _brute_embedding(Q, y[:, None], extent, window)[..., 0],
                               rtol=1e-10)
    # a weighted average: inside the range of y
    assert g.min() >= y.min() - 1e-12 and g.max() <= y.max() + 1e-12
    # several targets at once
    Y = np.stack([y, y ** 2, -y], axis=1)
    G = embed_labels(Q, Y, extent, window, kind="continuous")
    assert G.shape == tuple(extent) + (3,)
    np.testing.assert_allclose(G, _brute_embedding(Q, Y, extent, window), rtol=1e-10)


def test_embed_single_document():
    L = 64
    # uniform posterior: every cell reached
    Q = np.full((1, L), 1.0 / L)
    g = embed_labels(Q, [7], EXTENT, WINDOW)
    assert g.shape == EXTENT + (1,)
    np.testing.assert_allclose(g, 1.0)
    g = embed_labels(Q, [1], EXTENT, WINDOW, classes=[0, 1, 2])
    np.testing.assert_allclose(g[..., 1], 1.0)
    np.testing.assert_allclose(g[..., [0, 2]], 0.0)
    gc = embed_labels(Q, [2.5], EXTENT, WINDOW, kind="continuous")
    np.testing.assert_allclose(gc, 2.5)
    # a posterior concentrated on one position k0: the cells of W_k0 carry the
    # label, the cells no window reaches get the uniform distribution / mean
    k0 = (6, 7)
    Q = np.zeros((1, L))
    Q[0, np.ravel_multi_index(k0, EXTENT)] = 1.0
    g = embed_labels(Q, ["b"], EXTENT, WINDOW, classes=["a", "b"])
    reached = np.zeros(EXTENT, dtype=bool)
    for d0 in range(3):
        for d1 in range(3):
            reached[(k0[0] + d0) % 8, (k0[1] + d1) % 8] = True
    np.testing.assert_allclose(g[reached], [[0.0, 1.0]] * 9)
    np.testing.assert_allclose(g[~reached], 0.5)
    gc = embed_labels(Q, [4.0], EXTENT, WINDOW, kind="continuous")
    np.testing.assert_allclose(gc, 4.0)


# ------------------------------------------------------------- synthetic data
def _two_region_corpus(seed, n_train=200, n_test=100, doc_length=40):
    """Documents from two separated bands of the same true grid; label = band."""
    rng = np.random.default_rng(seed)
    pi = true_grid(EXTENT, 40, rng)
    band0 = np.zeros(EXTENT, dtype=bool)
    band0[0:2, :] = True
    band1 = np.zeros(EXTENT, dtype=bool)
    band1[4:6, :] = True
    out = []
    for n in (n_train, n_test):
        X0, _ = draw_corpus(pi, WINDOW, n // 2, doc_length, rng, allowed=band0)
        X1, _ = draw_corpus(pi, WINDOW, n - n // 2, doc_length, rng, allowed=band1)
        X = sp.vstack([X0, X1]).tocsr()
        y = np.r_[np.zeros(n // 2, int), np.ones(n - n // 2, int)]
        perm = rng.permutation(n)
        out.append((X[perm], y[perm]))
    return out


@pytest.mark.parametrize("label_kind", ["int", "str"])
def test_counting_grid_classifier_accuracy(label_kind):
    (Xtr, ytr), (Xte, yte) = _two_region_corpus(0)
    if label_kind == "str":
        names = np.array(["ham", "spam"])
        ytr, yte = names[ytr], names[yte]
    clf = CountingGridClassifier(EXTENT, WINDOW, n_iter=40, random_state=0,
                                 num_threads=1).fit(Xtr, ytr)
    assert list(clf.classes_) == sorted(set(ytr))
    assert clf.gamma_.shape == EXTENT + (2,)
    np.testing.assert_allclose(clf.gamma_.sum(axis=-1), 1.0, rtol=1e-12)
    P = clf.predict_proba(Xte)
    assert P.shape == (Xte.shape[0], 2)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    assert ((P >= 0) & (P <= 1)).all()
    pred = clf.predict(Xte)
    assert pred.dtype == clf.classes_.dtype
    np.testing.assert_array_equal(pred, clf.classes_[np.argmax(P, axis=1)])
    assert np.mean(pred == yte) > 0.9
    assert clf.score(Xte, yte) == pytest.approx(np.mean(pred == yte))


def test_classifier_is_embedding_plus_readout():
    """gamma_ = embed_labels(grid_.transform(X), y); p(l|c) ∝ sum_k q(k) mean_{W_k} gamma."""
    (Xtr, ytr), (Xte, _) = _two_region_corpus(1, n_train=80, n_test=30)
    clf = CountingGridClassifier(EXTENT, WINDOW, n_iter=10, random_state=0,
                                 num_threads=1, dtype=np.float64).fit(Xtr, ytr)
    Qtr = clf.grid_.transform(Xtr)
    np.testing.assert_allclose(clf.gamma_, embed_labels(Qtr, ytr, EXTENT, WINDOW), rtol=1e-10)
    G = window_means(clf.gamma_, WINDOW).reshape(64, 2)
    P = clf.grid_.transform(Xte) @ G
    P /= P.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(clf.predict_proba(Xte), P, rtol=1e-10)
    # the grid is an ordinary unsupervised grid with the same parameters
    from countgrid import CountingGrid

    cg = CountingGrid(EXTENT, WINDOW, n_iter=10, random_state=0, num_threads=1, dtype=np.float64).fit(Xtr)
    assert np.array_equal(cg.pi_, clf.grid_.pi_)


def test_counting_grid_regressor_smooth_target():
    rng = np.random.default_rng(3)
    pi = true_grid(EXTENT, 40, rng)
    X, pos = draw_corpus(pi, WINDOW, 250, 50, rng)
    # a smooth (torus-periodic) function of the true position
    y = np.cos(2 * np.pi * pos[:, 0] / 8) + np.sin(2 * np.pi * pos[:, 1] / 8)
    reg = CountingGridRegressor(EXTENT, WINDOW, n_iter=40, random_state=0,
                                num_threads=1).fit(X, y)
    assert reg.gamma_.shape == EXTENT
    pred = reg.predict(X)
    assert pred.shape == (250,) and pred.dtype == np.float64
    r2 = reg.score(X, y)
    assert r2 == pytest.approx(1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2))
    assert r2 > 0.5
    # held-out documents too
    Xte, pte = draw_corpus(pi, WINDOW, 100, 50, rng)
    yte = np.cos(2 * np.pi * pte[:, 0] / 8) + np.sin(2 * np.pi * pte[:, 1] / 8)
    assert reg.score(Xte, yte) > 0.4
    # gamma_ is eq. 10 with the training posteriors
    Q = reg.grid_.transform(X)
    np.testing.assert_allclose(reg.gamma_, embed_labels(Q, y, EXTENT, WINDOW, kind="continuous"),
                               rtol=1e-10)


def test_regressor_constant_target():
    (X, _), _ = _two_region_corpus(4, n_train=60, n_test=10)
    reg = CountingGridRegressor(EXTENT, WINDOW, n_iter=5, random_state=0,
                                num_threads=1, dtype=np.float64).fit(X, np.full(60, 3.25))
    np.testing.assert_allclose(reg.predict(X), 3.25, rtol=1e-12)


# ------------------------------------------------------- generative classifier
def _two_grid_corpus(seed, n_per_class=(60, 40), doc_length=80, labels=(0, 1)):
    rng = np.random.default_rng(seed)
    grids = [true_grid(EXTENT, 40, rng) for _ in labels]
    parts_tr, parts_te, ytr, yte = [], [], [], []
    for lab, g in zip(labels, grids):
        Xa, _ = draw_corpus(g, WINDOW, n_per_class[0], doc_length, rng)
        Xb, _ = draw_corpus(g, WINDOW, n_per_class[1], doc_length, rng)
        parts_tr.append(Xa)
        parts_te.append(Xb)
        ytr += [lab] * n_per_class[0]
        yte += [lab] * n_per_class[1]
    return (sp.vstack(parts_tr).tocsr(), np.array(ytr)), (sp.vstack(parts_te).tocsr(),
                                                          np.array(yte))


@pytest.mark.parametrize("labels", [(0, 1), ("alpha", "beta"), (7, 3, 5)])
def test_generative_classifier_separated_classes(labels):
    (Xtr, ytr), (Xte, yte) = _two_grid_corpus(5, labels=labels)
    gen = GenerativeCountingGridClassifier(EXTENT, WINDOW, n_iter=25, random_state=0,
                                           num_threads=1, dtype=np.float64).fit(Xtr, ytr)
    assert list(gen.classes_) == sorted(labels)
    assert len(gen.grids_) == len(labels)
    pred = gen.predict(Xte)
    assert np.mean(pred == yte) >= 0.97
    ll = gen.class_log_likelihoods(Xte)
    assert ll.shape == (Xte.shape[0], len(labels))
    # each column is that class grid's exact log-likelihood
    for j, g in enumerate(gen.grids_):
        np.testing.assert_allclose(ll[:, j], g.score_samples(Xte), rtol=1e-12)
    P = gen.predict_proba(Xte)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(gen.classes_[np.argmax(P, axis=1)], pred)
    # log-softmax of the class log-likelihoods (uniform class prior)
    from scipy.special import log_softmax

    np.testing.assert_allclose(gen.predict_log_proba(Xte), log_softmax(ll, axis=1),
                               rtol=1e-10, atol=1e-12)
    # each class grid is learned only on its own class's documents
    for c, g in zip(gen.classes_, gen.grids_):
        Xc = Xtr[np.flatnonzero(ytr == c)]
        assert np.isclose(g.log_likelihood_[-1], g.score(Xc), rtol=1e-9)


def test_generative_classifier_deterministic_and_thread_independent():
    (Xtr, ytr), (Xte, _) = _two_grid_corpus(6, n_per_class=(30, 10))
    a = GenerativeCountingGridClassifier(EXTENT, WINDOW, n_iter=5, random_state=11,
                                         num_threads=1).fit(Xtr, ytr)
    b = GenerativeCountingGridClassifier(EXTENT, WINDOW, n_iter=5, random_state=11,
                                         num_threads=2).fit(Xtr, ytr)
    for ga, gb in zip(a.grids_, b.grids_):
        assert np.array_equal(ga.pi_, gb.pi_)
    # the per-class grids get different seeds
    assert not np.array_equal(a.grids_[0].pi_[..., :3], a.grids_[1].pi_[..., :3])
    assert np.array_equal(a.predict(Xte), b.predict(Xte))


def test_generative_classifier_object_labels():
    (Xtr, ytr), (Xte, yte) = _two_grid_corpus(7, n_per_class=(40, 20), labels=("x", "y"))
    yo = np.array(list(ytr), dtype=object)
    gen = GenerativeCountingGridClassifier(EXTENT, WINDOW, n_iter=15, random_state=0,
                                           num_threads=1).fit(Xtr, yo)
    assert gen.classes_.dtype.kind == "U"
    assert gen.score(Xte, yte) >= 0.95


def test_generative_classifier_dense_input():
    (Xtr, ytr), (Xte, yte) = _two_grid_corpus(8, n_per_class=(30, 10), doc_length=200)
    Xd = Xtr.toarray()
    assert np.count_nonzero(Xd) / Xd.size >= 0.25  # BLAS path
    gen = GenerativeCountingGridClassifier(EXTENT, WINDOW, n_iter=10, random_state=0,
                                           num_threads=1, dtype=np.float64)
    gen.fit(Xd, ytr)
    ref = GenerativeCountingGridClassifier(EXTENT, WINDOW, n_iter=10, random_state=0,
                                           num_threads=1, dtype=np.float64).fit(Xtr, ytr)
    for a, b in zip(gen.grids_, ref.grids_):
        np.testing.assert_allclose(a.pi_, b.pi_, rtol=1e-8)
    assert np.array_equal(gen.predict(Xte.toarray()), ref.predict(Xte))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sparse", [False, True])
def test_class_word_scores_are_scikit_learns_chi2(dtype, sparse):
    from countgrid.grid._classifiers import class_word_scores
    from sklearn.feature_selection import chi2

    rng = np.random.default_rng(4)
    X = rng.poisson(rng.uniform(0, 2, 40), (90, 40)).astype(dtype)
    X[:, 5] = 0                                    # a word with no token scores 0
    labels = rng.integers(0, 4, 90)
    ref = np.nan_to_num(chi2(X, labels)[0])
    Xin = sp.csr_matrix(X) if sparse else X
    got = class_word_scores(Xin, labels, 4)
    np.testing.assert_allclose(got, ref, rtol=1e-5 if dtype == np.float32 else 1e-10)
    assert got[5] == 0


@pytest.mark.filterwarnings("ignore:CountingGrid did not converge")  # short fits on purpose
def test_generative_classifier_on_the_class_words():
    """max_features keeps the words with the largest chi-squared statistic; the classifier
    is then the one learned on those columns (issue 22: 55 classes x 38,559 words needed
    about 20 GB of grids)."""
    from countgrid.grid._classifiers import class_word_scores
    (Xtr, ytr), (Xte, _) = _two_grid_corpus(9, n_per_class=(30, 10))
    kw = dict(extent=EXTENT, window=WINDOW, n_iter=8, random_state=2, num_threads=1)
    gen = GenerativeCountingGridClassifier(max_features=12, **kw).fit(Xtr, ytr)
    scores = class_word_scores(Xtr, np.searchsorted(gen.classes_, ytr), 2)
    assert gen.features_.shape == (12,) and np.all(np.diff(gen.features_) > 0)
    assert scores[gen.features_].min() >= np.delete(scores, gen.features_).max()
    assert gen.n_features_in_ == Xtr.shape[1]
    assert all(g.n_features_in_ == 12 for g in gen.grids_)
    ref = GenerativeCountingGridClassifier(**kw).fit(Xtr[:, gen.features_], ytr)
    np.testing.assert_array_equal(gen.class_log_likelihoods(Xte),
                                  ref.class_log_likelihoods(Xte[:, gen.features_]))
    with pytest.raises(ValueError, match="features"):
        gen.predict(Xte[:, :12])                   # documents over the whole vocabulary
    # as many words as there are, or None: every word, the same grids
    full = GenerativeCountingGridClassifier(max_features=10**6, **kw).fit(Xtr, ytr)
    none = GenerativeCountingGridClassifier(**kw).fit(Xtr, ytr)
    np.testing.assert_array_equal(full.features_, np.arange(Xtr.shape[1]))
    for a, b in zip(full.grids_, none.grids_):
        np.testing.assert_array_equal(a.pi_, b.pi_)
    with pytest.raises(ValueError, match="max_features"):
        GenerativeCountingGridClassifier(max_features=0, **kw).fit(Xtr, ytr)


@pytest.mark.filterwarnings("ignore:CountingGrid did not converge")  # short fits on purpose
def test_generative_classifier_on_class_words_round_trips(tmp_path):
    from countgrid import io
    (Xtr, ytr), (Xte, _) = _two_grid_corpus(10, n_per_class=(20, 5))
    gen = GenerativeCountingGridClassifier(EXTENT, WINDOW, n_iter=4, random_state=0,
                                           num_threads=1, max_features=15).fit(Xtr, ytr)
    io.save(gen, tmp_path / "gen.npz")
    back = io.load(tmp_path / "gen.npz")
    assert back.max_features == 15
    np.testing.assert_array_equal(back.features_, gen.features_)
    np.testing.assert_array_equal(back.class_log_likelihoods(Xte),
                                  gen.class_log_likelihoods(Xte))


def test_generative_classifier_reports_one_event_and_one_warning_per_fit():
    """55 class grids logged about 800 progress lines and 55 ConvergenceWarnings per fold of
    `countgrid evaluate`: now one progress event per class grid, one warning per fit."""
    import warnings
    from countgrid._utils import progress as _progress
    from countgrid.exceptions import ConvergenceWarning
    (Xtr, ytr), _ = _two_grid_corpus(11, n_per_class=(20, 5), labels=(0, 1, 2))
    events = []
    with _progress.listen(events.append), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        GenerativeCountingGridClassifier(EXTENT, WINDOW, n_iter=3, random_state=0,
                                         num_threads=1).fit(Xtr, ytr)
    assert [(e["owner"], e["done"], e["total"], e["unit"]) for e in events] == [
        ("GenerativeCountingGridClassifier", k, 3, "model") for k in (1, 2, 3)]
    conv = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(conv) == 1 and "3 of 3 models did not converge" in str(conv[0].message)
    assert "did not converge in 3 iterations" in str(conv[0].message)


def test_classifier_docstrings_document_parameters():
    for cls in (CountingGridClassifier, CountingGridRegressor, GenerativeCountingGridClassifier):
        assert cls.__doc__ and "Parameters" in cls.__doc__ and "Attributes" in cls.__doc__


# ------------------------------------------------------------ score(X, y)
def _score_models():
    rng = np.random.default_rng(30)
    X = rng.poisson(1.0, (24, 10)).astype(np.float64)
    y = np.repeat([0, 1], 12)
    kw = dict(extent=(4, 4), window=(2, 2), n_iter=2, tol=0, num_threads=1, random_state=0)
    models = [CountingGridClassifier(**kw).fit(X, y),
              GenerativeCountingGridClassifier(**kw).fit(X, y),
              CountingGridRegressor(**kw).fit(X, y * 1.5)]
    return X, y, models


def test_score_validates_y():
    """Issue 30: score(X, y) with y of the wrong length said "operands could not be
    broadcast" (the classifiers) or named nothing; a column vector y compared every
    prediction with every label (an n x n accuracy).  y is checked as in fit, after X."""
    import warnings

    from countgrid.exceptions import DataConversionWarning

    X, y, models = _score_models()
    for m in models:
        target = y * 1.5 if isinstance(m, CountingGridRegressor) else y
        want = m.score(X, target)
        for bad in (target[:-1], np.r_[target, target[:1]], target[:0]):
            with pytest.raises(ValueError, match=f"y has {bad.shape[0]} entries but X has "
                                                 f"24 samples"):
                m.score(X, bad)
        with pytest.raises(ValueError, match="y should be a 1d array"):
            m.score(X, np.c_[target, target])
        with pytest.raises(ValueError, match="X has 3 features"):   # X first
            m.score(X[:, :3], target[:-1])
        with pytest.warns(DataConversionWarning):
            assert m.score(X, target[:, None]) == want
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert m.score(list(X), list(target)) == want
    reg = models[2]
    for bad, match in ((np.array(["a"] * 24), "y must hold real numbers"),
                       (np.r_[np.nan, y[1:]], "y contains NaN")):
        with pytest.raises(ValueError, match=match):
            reg.score(X, bad)
