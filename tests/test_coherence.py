"""Topic coherence (countgrid.metrics.topic_coherence and topic_top_words; docs/diagnostics.md)
against the literal references of tests/_reference/coherence.py on random corpora: every
measure on boolean documents (dense and sparse X, float32/float64/int counts) and on
sliding windows (both rules), 1 and several threads, empty documents, words that never
occur, str words, the adapters of every model family, and the errors."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.metrics import TopicCoherence, topic_coherence, topic_top_words
from _expected_warnings import FEW_ITERATIONS
from _reference.coherence import (coherence_ref, docs_counts_ref, u_mass_ref,
                                  windows_counts_ref)

MEASURES = ["u_mass", "c_uci", "c_npmi", "c_v"]


def _corpus(seed=0, n_docs=80, n_features=30, density=0.2):
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.0, size=(n_docs, n_features)) * (rng.random((n_docs, n_features))
                                                         < density)
    X[3] = 0                                        # an empty document
    X[:, 0] = 0                                     # ...
    X[5, 0] = 2                                     # word 0 in one document
    return X


def _topics(seed, n_topics=6, n_top=5, n_features=30, avoid=()):
    rng = np.random.default_rng(seed)
    pool = np.setdiff1d(np.arange(n_features), avoid)
    return np.stack([rng.choice(pool, size=n_top, replace=False) for _ in range(n_topics)])


def _expected(topics, D, n, measure, **kw):
    ref = coherence_ref(topics, D, n, measure, **kw)
    return np.array([np.nan if v is None else v for v in ref])


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.parametrize("kind", ["dense-int", "csr-float32", "csc-float64", "list"])
@pytest.mark.parametrize("num_threads", [1, 3])
def test_boolean_documents_match_reference(measure, kind, num_threads):
    X = _corpus(1)
    occurring = np.flatnonzero(X.sum(axis=0) == 0)
    topics = _topics(2, avoid=occurring)
    make = {"dense-int": lambda A: A, "csr-float32": lambda A: sp.csr_matrix(A, dtype=np.float32),
            "csc-float64": lambda A: sp.csc_matrix(A, dtype=np.float64),
            "list": lambda A: A.tolist()}[kind]
    result = topic_coherence(topics, make(X), measure=measure, num_threads=num_threads)
    D, n = docs_counts_ref(X, range(X.shape[1]))
    expected = _expected(topics, D, n, measure)
    assert isinstance(result, TopicCoherence)
    assert result.n_documents == X.shape[0] and result.window is None
    assert not result.undefined.any()
    _close(result.per_topic, expected)
    _close(result.mean, expected.mean())
    np.testing.assert_array_equal(result.top_words, topics)


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.parametrize("window", [1, 4, 10, 500])
@pytest.mark.parametrize("rule", ["boolean", "gensim"])
def test_sliding_windows_match_reference(measure, window, rule):
    rng = np.random.default_rng(3)
    texts = [rng.integers(-2, 12, size=int(rng.integers(0, 60))) for _ in range(70)]
    texts.append(np.arange(12))                     # every word occurs
    topics = _topics(4, n_topics=4, n_top=4, n_features=12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = topic_coherence(topics, texts=texts, measure=measure, window=window,
                                 window_rule=rule, num_threads=2)
    D, n = windows_counts_ref(texts, range(12), window, rule)
    assert result.n_documents == n
    assert result.window == window and result.window_rule == rule
    _close(result.per_topic, _expected(topics, D, n, measure))


def test_texts_without_a_window_are_boolean_documents():
    rng = np.random.default_rng(5)
    texts = [rng.integers(-1, 15, size=int(rng.integers(0, 30))) for _ in range(50)]
    texts.append(np.arange(15))
    X = np.zeros((len(texts), 15))
    for d, t in enumerate(texts):
        np.add.at(X[d], t[t >= 0], 1)
    topics = _topics(6, n_topics=5, n_top=4, n_features=15)
    for measure in MEASURES:
        a = topic_coherence(topics, X, measure=measure)
        b = topic_coherence(topics, texts=texts, measure=measure)
        assert a.n_documents == b.n_documents == len(texts)
        np.testing.assert_array_equal(a.per_topic, b.per_topic)


@pytest.mark.parametrize("measure", MEASURES)
def test_threads_change_no_bit(measure):
    X = sp.csr_matrix(_corpus(7, n_docs=400, n_features=50, density=0.3))
    topics = _topics(8, n_topics=20, n_top=8, n_features=50, avoid=[0])
    base = topic_coherence(topics, X, measure=measure, num_threads=1)
    for nt in (2, 4, -1):
        other = topic_coherence(topics, X, measure=measure, num_threads=nt)
        np.testing.assert_array_equal(other.per_topic, base.per_topic)
        assert other.mean == base.mean


def test_empty_documents_count():
    X = _corpus(9)
    topics = _topics(10, avoid=[0])
    padded = np.vstack([X, np.zeros((20, X.shape[1]))])
    a = topic_coherence(topics, X, measure="c_npmi")
    b = topic_coherence(topics, sp.csr_matrix(padded), measure="c_npmi")
    assert b.n_documents == a.n_documents + 20
    D, n = docs_counts_ref(padded, range(X.shape[1]))
    _close(b.per_topic, _expected(topics, D, n, "c_npmi"))


@pytest.mark.parametrize("measure", MEASURES)
def test_words_that_never_occur(measure):
    X = _corpus(11)
    X[:, 7] = 0
    topics = np.array([[1, 2, 7, 4], [1, 2, 3, 4], [7, 5, 6, 8]])
    with pytest.warns(RuntimeWarning, match=r"never occur in the reference corpus \(word "
                      r"indices \[7\], in 2 of 3 topic"):
        result = topic_coherence(topics, X, measure=measure)
    np.testing.assert_array_equal(result.missing_words, [7])
    D, n = docs_counts_ref(X, range(X.shape[1]))
    if measure == "u_mass":
        # gensim's rule: a pair conditioned on a word that never occurs adds 0
        assert not result.undefined.any()
        _close(result.per_topic, [u_mass_ref(list(t), D, n) for t in topics])
        _close(result.mean, result.per_topic.mean())
    else:
        np.testing.assert_array_equal(result.undefined, [True, False, True])
        assert np.isnan(result.per_topic[[0, 2]]).all()
        _close(result.per_topic[1], _expected(topics[1:2], D, n, measure)[0])
        assert result.mean == result.per_topic[1]   # the mean of the defined topics


def test_no_defined_topic_gives_a_nan_mean_and_says_so():
    X = _corpus(12)
    X[:, 9] = 0
    with pytest.warns(RuntimeWarning, match="never occur"):
        result = topic_coherence([[9, 1], [2, 9]], X, measure="c_v")
    assert result.undefined.all() and np.isnan(result.mean)


@pytest.mark.parametrize("gamma", [1, 2, 3])
def test_c_v_gamma_and_epsilon(gamma):
    X = _corpus(13)
    topics = _topics(14, avoid=[0])
    D, n = docs_counts_ref(X, range(X.shape[1]))
    result = topic_coherence(topics, X, measure="c_v", gamma=gamma, epsilon=1e-6)
    _close(result.per_topic, _expected(topics, D, n, "c_v", eps=1e-6, gamma=gamma))
    assert result.gamma == gamma and result.epsilon == 1e-6


def test_epsilon_of_one_document_is_mimno_smoothing():
    X = _corpus(15)
    topics = _topics(16, avoid=[0])
    D, n = docs_counts_ref(X, range(X.shape[1]))
    result = topic_coherence(topics, X, measure="u_mass", epsilon=1.0 / X.shape[0])
    # Mimno et al. (2011): log((D(w_i, w_j) + 1) / D(w_j))
    mimno = [np.mean([np.log((D[t[i], t[j]] + 1) / D[t[j], t[j]])
                      for i in range(1, len(t)) for j in range(i)]) for t in topics]
    _close(result.per_topic, mimno)


def test_str_words_and_texts():
    vocab = [f"w{i}" for i in range(12)]
    rng = np.random.default_rng(17)
    ids = [rng.integers(-1, 12, size=int(rng.integers(1, 40))) for _ in range(40)]
    ids.append(np.arange(12))
    words = [[vocab[i] if i >= 0 else "unknown" for i in t] for t in ids]
    topics = _topics(18, n_topics=3, n_top=4, n_features=12)
    named = [[vocab[i] for i in t] for t in topics]
    a = topic_coherence(topics, texts=ids, measure="c_npmi", window=5)
    b = topic_coherence(named, texts=words, measure="c_npmi", window=5, vocabulary=vocab)
    np.testing.assert_array_equal(a.per_topic, b.per_topic)
    np.testing.assert_array_equal(b.top_words, topics)


def test_n_words_cuts_given_top_words():
    X = _corpus(19)
    topics = _topics(20, n_top=6, avoid=[0])
    a = topic_coherence(topics, X, n_words=3)
    b = topic_coherence(topics[:, :3], X)
    np.testing.assert_array_equal(a.per_topic, b.per_topic)


# ------------------------------------------------------------------------- adapters
def _fit_corpus():
    rng = np.random.default_rng(0)
    phi = rng.dirichlet(np.full(40, 0.2), size=4)
    theta = rng.dirichlet(np.full(4, 0.3), size=150)
    return np.stack([rng.multinomial(30, t @ phi) for t in theta])


def _check_model(model, X, expected_top):
    top = topic_top_words(model, 6)
    np.testing.assert_array_equal(top, expected_top)
    a = topic_coherence(model, X, n_words=6, measure="c_npmi")
    b = topic_coherence(expected_top, X, measure="c_npmi")
    np.testing.assert_array_equal(a.per_topic, b.per_topic)
    np.testing.assert_array_equal(a.top_words, expected_top)


def _ranked(W, n):
    return np.argsort(-np.asarray(W, dtype=np.float64), axis=1, kind="stable")[:, :n]


@FEW_ITERATIONS
def test_plsa_topics():
    X = _fit_corpus()
    model = countgrid.PLSA(n_components=4, n_iter=10, random_state=0).fit(X)
    _check_model(model, X, _ranked(model.components_, 6))
    # the same matrix passed as floats
    np.testing.assert_array_equal(topic_coherence(model.components_, X, n_words=6).per_topic,
                                  topic_coherence(model, X, n_words=6).per_topic)


@FEW_ITERATIONS
def test_counting_grid_cells_and_regions():
    X = _fit_corpus()
    grid = countgrid.CountingGrid((5, 5), (2, 2), n_iter=5, random_state=0).fit(X)
    cells = grid.top_words(6).reshape(-1, 6)
    _check_model(grid, X, cells)
    probable = topic_top_words(grid, 6, weighting="probability")
    np.testing.assert_array_equal(probable, _ranked(grid.pi_.reshape(-1, X.shape[1]), 6))
    labels = countgrid.grid.regions(grid, 3)
    by_number = topic_top_words(grid, 6, regions=3)
    by_labels = topic_top_words(grid, 6, regions=labels)
    expected = countgrid.grid.region_words(grid, labels, 6)
    np.testing.assert_array_equal(by_number, expected)
    np.testing.assert_array_equal(by_labels, expected)
    result = topic_coherence(by_number, X, measure="c_v")
    assert result.per_topic.shape == (3,)


@FEW_ITERATIONS
def test_counting_grid_with_a_vocabulary_gives_indices():
    X = _fit_corpus()
    names = np.array([f"word{i}" for i in range(X.shape[1])], dtype=object)
    grid = countgrid.CountingGrid((4, 4), (2, 2), n_iter=3, random_state=0).fit(X)
    grid.feature_names_in_ = names                  # as the text pipeline records it
    assert grid.top_words(3).dtype.kind in "OU"
    top = topic_top_words(grid, 3)
    assert top.dtype == np.int64
    np.testing.assert_array_equal(names[top], grid.top_words(3).reshape(-1, 3))


def test_rap_hidden_units():
    X = _fit_corpus()
    model = countgrid.RAP(n_components=3, n_epochs=2, random_state=0).fit(X)
    _check_model(model, X, _ranked(model.components_, 6))


@FEW_ITERATIONS
def test_zip_gtm_nodes():
    X = _fit_corpus()
    model = countgrid.ZIPGTM(grid_shape=(3, 3), n_basis=4, n_iter=3, random_state=0).fit(X)
    expected = model.rates() * (1 - model.zero_probabilities())
    _check_model(model, X, _ranked(expected, 6))


def test_external_components():
    sklearn = pytest.importorskip("sklearn.decomposition")
    X = _fit_corpus()
    lda = sklearn.LatentDirichletAllocation(n_components=3, max_iter=5,
                                            random_state=0).fit(X)
    _check_model(lda, X, _ranked(lda.components_, 6))


def test_topic_top_words_errors():
    with pytest.raises(countgrid.NotFittedError):
        topic_top_words(countgrid.PLSA(n_components=2))
    with pytest.raises(TypeError, match="HistogramGMM"):
        topic_top_words(countgrid.HistogramGMM())
    with pytest.raises(ValueError, match="counting grids only"):
        topic_top_words(np.ones((2, 3)), 2, regions=2)
    with pytest.raises(ValueError, match="n_words=4 exceeds"):
        topic_top_words(np.ones((2, 3)), 4)
    with pytest.raises(ValueError, match="n_words"):
        topic_top_words(np.ones((2, 3)), 0)
    with pytest.raises(ValueError, match="NaN"):
        topic_top_words(np.array([[1.0, np.nan]]), 1)
    with pytest.raises(TypeError, match="topic-word matrix"):
        topic_top_words(np.array([["a", "b"]]), 1)


# --------------------------------------------------------------------------- errors
def test_errors_name_the_argument():
    X = _corpus(21)
    top = [[1, 2, 3]]
    with pytest.raises(ValueError, match="one of the two"):
        topic_coherence(top)
    with pytest.raises(ValueError, match="one of the two"):
        topic_coherence(top, X, texts=[[1, 2]])
    with pytest.raises(ValueError, match="window needs texts"):
        topic_coherence(top, X, window=10)
    with pytest.raises(ValueError, match="measure"):
        topic_coherence(top, X, measure="c_w2v")
    with pytest.raises(ValueError, match="window_rule"):
        topic_coherence(top, texts=[[1, 2]], window=2, window_rule="exact")
    with pytest.raises(ValueError, match="epsilon"):
        topic_coherence(top, X, epsilon=0.0)
    with pytest.raises(ValueError, match="gamma"):
        topic_coherence(top, X, measure="c_v", gamma=0)
    with pytest.raises(TypeError, match="gamma"):
        topic_coherence(top, X, measure="c_v", gamma=1.5)
    with pytest.raises(ValueError, match="window"):
        topic_coherence(top, texts=[[1, 2]], window=0)
    with pytest.raises(ValueError, match="lists a word twice"):
        topic_coherence([[1, 2, 1]], X)
    with pytest.raises(ValueError, match="outside"):
        topic_coherence([[1, 2, X.shape[1]]], X)
    with pytest.raises(ValueError, match="outside"):
        topic_coherence([[1, -2]], X)
    with pytest.raises(ValueError, match="at least 2 top words"):
        topic_coherence([[1], [2]], X)
    # float top words are a weight matrix: the message says so (it named "ndarray")
    with pytest.raises(ValueError, match=r"X has 30 features, but topics \(a float array, "
                       r"read as a topic-word weight matrix of 3 words\)"):
        topic_coherence(np.array([[0.0, np.nan, 2.0]]), X)
    with pytest.raises(ValueError, match="n_words=5 exceeds"):
        topic_coherence(top, X, n_words=5)
    with pytest.raises(TypeError, match="topics must hold"):
        topic_coherence([[True, False]], X)
    with pytest.raises(ValueError, match="vocabulary"):
        topic_coherence([["a", "b"]], X)
    vocabulary = ["a", "b"] + [f"v{i}" for i in range(X.shape[1] - 2)]
    with pytest.raises(ValueError, match="not in vocabulary"):
        topic_coherence([["a", "zz"]], X, vocabulary=vocabulary)
    with pytest.raises(ValueError, match="vocabulary has 3 words"):
        topic_coherence([["a", "b"]], X, vocabulary=["a", "b", "c"])
    with pytest.raises(ValueError, match="Negative"):
        topic_coherence(top, -np.ones((3, 5)))
    with pytest.raises(TypeError, match="texts must be a sequence"):
        topic_coherence(top, texts="one text")
    with pytest.raises(TypeError, match="text.split"):
        topic_coherence(top, texts=["one text"])
    with pytest.raises(TypeError, match="int word indices or str"):
        topic_coherence(top, texts=[[1.5, 2.0]])
    with pytest.raises(ValueError, match="beyond"):
        topic_coherence(top, texts=[[1, 2, 40]], vocabulary=[f"v{i}" for i in range(30)])
    with pytest.raises(ValueError, match="str words: give vocabulary"):
        topic_coherence(top, texts=[["a", "b"]])
