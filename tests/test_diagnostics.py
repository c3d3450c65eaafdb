"""countgrid.metrics.topic_diagnostics against the literal references of
tests/_reference/diagnostics.py, per model, and its errors (docs/diagnostics.md, "The
diagnostics table")."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.metrics import (DIAGNOSTIC_COLUMNS, TopicDiagnostics, topic_coherence,
                               topic_diagnostics, topic_top_words)
from _expected_warnings import FEW_ITERATIONS
from _reference.diagnostics import (cell_shares_ref, document_columns_ref, exclusivity_ref,
                                    frex_ref, word_columns_ref)


def _corpus(seed=0, n_docs=120, n_features=30, n_topics=4, empty=2):
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(np.full(n_features, 0.3), size=n_topics)
    theta = rng.dirichlet(np.full(n_topics, 0.4), size=n_docs)
    X = np.stack([rng.multinomial(rng.integers(5, 40), t @ phi) for t in theta])
    X[:empty] = 0                                     # empty documents count nowhere
    return X


def _reference(phi, theta, X, top, weight):
    X = np.asarray(X, dtype=np.float64)
    corpus = (X.sum(axis=0) / X.sum()).tolist()
    phi_l = (phi / phi.sum(axis=1, keepdims=True)).tolist()
    out = document_columns_ref(np.asarray(theta).tolist(), X.sum(axis=1).tolist())
    out.update(word_columns_ref(phi_l, corpus))
    out["exclusivity"] = exclusivity_ref(phi_l, top.tolist())
    out["frex"] = frex_ref(phi_l, top.tolist(), weight)
    return out


def _assert_columns(result, expected, columns=None, rtol=1e-10):
    for c in columns or expected:
        np.testing.assert_allclose(np.asarray(result[c], dtype=np.float64),
                                   np.asarray(expected[c], dtype=np.float64),
                                   rtol=rtol, atol=1e-12, err_msg=c)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("weight", [0.5, 0.7])
def test_matrix_matches_reference(dtype, sparse, weight):
    rng = np.random.default_rng(1)
    X = _corpus(seed=1).astype(dtype)
    phi = rng.dirichlet(np.full(30, 0.5), size=5) * rng.uniform(0.5, 3.0, size=(5, 1))
    theta = rng.dirichlet(np.full(5, 0.5), size=X.shape[0]) * 7.0   # unnormalised rows
    result = topic_diagnostics(phi, sp.csr_matrix(X) if sparse else X, doc_topic=theta,
                               n_words=6, frex_weight=weight)
    top = np.argsort(-phi, axis=1, kind="stable")[:, :6]
    np.testing.assert_array_equal(result.top_words, top)
    _assert_columns(result, _reference(phi, theta, X, top, weight))
    coherence = topic_coherence(top, X, measure="u_mass").per_topic
    np.testing.assert_array_equal(result.coherence, coherence)
    assert result.n_documents == X.shape[0] and result.n_tokens == float(X.sum())
    assert result.topics == "topic" and result.frex_weight == weight
    assert set(DIAGNOSTIC_COLUMNS) <= set(result)


def test_corpus_distance_is_infinite_for_a_word_the_corpus_never_uses():
    X = _corpus(seed=2)
    X[:, 3] = 0
    phi = np.full((2, 30), 1.0)
    phi[1, 3] = 0.0
    result = topic_diagnostics(phi, X, doc_topic=np.ones((X.shape[0], 2)), n_words=3)
    assert np.isinf(result.corpus_distance[0]) and np.isfinite(result.corpus_distance[1])


@pytest.mark.parametrize("num_threads", [1, 2])
@FEW_ITERATIONS
def test_plsa_and_external_lda(num_threads):
    X = _corpus(seed=3)
    model = countgrid.PLSA(n_components=4, n_iter=15, random_state=0,
                           num_threads=num_threads).fit(X)
    result = topic_diagnostics(model, X, n_words=5, num_threads=num_threads)
    theta = model.transform(X)
    top = topic_top_words(model, 5)
    _assert_columns(result, _reference(np.asarray(model.components_), theta, X, top, 0.7))
    assert np.isclose(result.tokens.sum(), X.sum())
    assert result.rank1_documents.sum() == int((X.sum(axis=1) > 0).sum())
    sklearn = pytest.importorskip("sklearn.decomposition")
    lda = sklearn.LatentDirichletAllocation(4, random_state=0, max_iter=5).fit(X)
    got = topic_diagnostics(lda, X, n_words=5)
    _assert_columns(got, _reference(lda.components_, lda.transform(X), X,
                                    topic_top_words(lda, 5), 0.7))


@pytest.mark.parametrize("num_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@FEW_ITERATIONS
def test_counting_grid_cells_and_regions(num_threads, dtype):
    X = _corpus(seed=4)
    grid = countgrid.CountingGrid((5, 6), (2, 3), n_iter=6, random_state=0, dtype=dtype,
                                  num_threads=num_threads).fit(X)
    q = grid.transform(X).astype(np.float64)
    rtol = 1e-10 if dtype == np.float64 else 2e-6     # the posteriors' own precision
    shares = np.array([cell_shares_ref(row.tolist(), (5, 6), (2, 3)) for row in q])
    pi = np.asarray(grid.pi_, dtype=np.float64).reshape(30, -1)
    cells = topic_diagnostics(grid, X, n_words=4)
    assert cells.topics == "cell" and cells.tokens.shape == (30,)
    np.testing.assert_array_equal(cells.top_words, topic_top_words(grid, 4))
    _assert_columns(cells, _reference(pi, shares, X, cells.top_words, 0.7),
                    ["tokens", "share", "document_entropy", "effective_words",
                     "uniform_distance", "corpus_distance", "exclusivity", "frex"], rtol)
    labels = countgrid.grid.regions(grid, 4)
    regions = topic_diagnostics(grid, X, n_words=4, regions=labels)
    onehot = np.eye(4)[labels.ravel()]
    mean_pi = (onehot.T @ pi) / onehot.sum(axis=0)[:, None]
    _assert_columns(regions, _reference(mean_pi, shares @ onehot, X, regions.top_words, 0.7),
                    rtol=rtol)
    np.testing.assert_allclose(regions.tokens, onehot.T @ cells.tokens, rtol=1e-10)
    by_number = topic_diagnostics(grid, X, n_words=4, regions=4)
    _assert_columns(by_number, regions, DIAGNOSTIC_COLUMNS)


@FEW_ITERATIONS
def test_rap_units_and_zip_gtm_nodes():
    X = _corpus(seed=5, n_features=12)
    rap = countgrid.RAP(n_components=3, n_epochs=3, random_state=0).fit(X)
    W, a, _ = rap.canonical_parameters()
    eta = a[None, :] + W.T
    phi = np.exp(eta - eta.max(axis=1, keepdims=True))
    result = topic_diagnostics(rap, X, n_words=4)
    assert result.topics == "unit"
    _assert_columns(result, _reference(phi, rap.expected_hidden(X), X, result.top_words, 0.7))
    gtm = countgrid.ZIPGTM(n_iter=3, random_state=0).fit(X)
    nodes = topic_diagnostics(gtm, X, n_words=4)
    expected = gtm.rates() * (1 - gtm.zero_probabilities())
    _assert_columns(nodes, _reference(expected, gtm.predict_proba(X), X, nodes.top_words,
                                      0.7))
    assert nodes.topics == "node" and np.isclose(nodes.tokens.sum(), X.sum())


def test_a_word_no_topic_uses_is_exclusive_to_none():
    X = _corpus(seed=10, n_features=8) + 1
    phi = np.random.default_rng(10).dirichlet(np.ones(8), size=3)
    phi[:, 7] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # no 0/0 on the way
        got = topic_diagnostics(phi, X, doc_topic=np.ones((X.shape[0], 3)), n_words=3)
    top = np.argsort(-phi, axis=1, kind="stable")[:, :3]
    ref = _reference(phi, np.ones((X.shape[0], 3)), X, top, 0.7)
    _assert_columns(got, ref, ["exclusivity", "frex"])


def test_table_and_frame():
    X = _corpus(seed=6)
    phi = np.random.default_rng(6).dirichlet(np.ones(30), size=3)
    result = topic_diagnostics(phi, X, doc_topic=np.ones((X.shape[0], 3)), n_words=3)
    words = [f"w{i}" for i in range(30)]
    table = result.table(words)
    assert list(table) == ["topic", *DIAGNOSTIC_COLUMNS, "top_words"]
    assert table["top_words"][0] == " ".join(words[i] for i in result.top_words[0])
    assert result.table()["top_words"][1] == " ".join(map(str, result.top_words[1]))
    assert "TopicDiagnostics(n_topics=3" in repr(result)
    with pytest.raises(ValueError, match="vocabulary has 2 words"):
        result.table(["a", "b"])


@pytest.mark.filterwarnings("ignore::countgrid.exceptions.ConvergenceWarning")
def test_errors_name_their_argument():
    X = _corpus(seed=7)
    phi = np.random.default_rng(7).dirichlet(np.ones(30), size=3)
    theta = np.ones((X.shape[0], 3))
    with pytest.raises(ValueError, match="doc_topic is needed"):
        topic_diagnostics(phi, X)
    with pytest.raises(ValueError, match=r"model.transform returned shape \(5, 3\)"):
        topic_diagnostics(phi, X, doc_topic=theta[:5])
    with pytest.raises(ValueError, match="regions apply to counting grids only"):
        topic_diagnostics(phi, X, doc_topic=theta, regions=2)
    with pytest.raises(ValueError, match="X .*30 features|has 30 words; X has 29"):
        topic_diagnostics(phi, X[:, :29], doc_topic=theta)
    with pytest.raises(ValueError, match="n_words"):
        topic_diagnostics(phi, X, doc_topic=theta, n_words=1)
    with pytest.raises(ValueError, match="n_words=31 exceeds"):
        topic_diagnostics(phi, X, doc_topic=theta, n_words=31)
    for w in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="frex_weight"):
            topic_diagnostics(phi, X, doc_topic=theta, frex_weight=w)
    with pytest.raises(ValueError, match="coherence"):
        topic_diagnostics(phi, X, doc_topic=theta, coherence="c_w2v")
    with pytest.raises(ValueError, match="non-negative with a positive sum"):
        topic_diagnostics(-phi, X, doc_topic=theta)
    with pytest.raises(ValueError, match="NaN or infinity"):
        topic_diagnostics(np.full((3, 30), np.nan), X, doc_topic=theta)
    with pytest.raises(ValueError, match="X is empty"):
        topic_diagnostics(phi, X[:0], doc_topic=theta[:0])
    with pytest.raises(ValueError, match="X has no tokens"):
        topic_diagnostics(phi, np.zeros_like(X), doc_topic=theta)
    plsa = countgrid.PLSA(3, n_iter=3, random_state=0).fit(X)
    with pytest.raises(ValueError, match="regions apply to counting grids only"):
        topic_diagnostics(plsa, X, regions=2)
    with pytest.raises(ValueError, match="doc_topic is for a topic-word matrix"):
        topic_diagnostics(plsa, X, doc_topic=theta)
    with pytest.raises(ValueError, match="X"):
        topic_diagnostics(plsa, X[:, :20])
    with pytest.raises(countgrid.exceptions.NotFittedError):
        topic_diagnostics(countgrid.PLSA(3), X)
    y = np.arange(X.shape[0]) % 2
    clf = countgrid.CountingGridClassifier((4, 4), (2, 2), n_iter=2, window_schedule=None,
                                           random_state=0).fit(X, y)
    with pytest.raises(TypeError, match="pass its grid_"):
        topic_diagnostics(clf, X)
    assert topic_diagnostics(clf.grid_, X, n_words=3).topics == "cell"


def test_plot_topic_quality():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    from countgrid.plotting import plot_topic_quality

    X = _corpus(seed=8)
    phi = np.random.default_rng(8).dirichlet(np.ones(30), size=4)
    result = topic_diagnostics(phi, X, doc_topic=np.ones((X.shape[0], 4)), n_words=3)
    ax = plot_topic_quality(result, [f"w{i}" for i in range(30)], n_labels=2)
    offsets = ax.collections[0].get_offsets()
    np.testing.assert_allclose(offsets, np.column_stack([result.exclusivity,
                                                         result.coherence]))
    assert len(ax.texts) == 2
    ax = plot_topic_quality(result, x="frex", y="effective_words", n_labels=0)
    np.testing.assert_allclose(ax.collections[0].get_offsets()[:, 1], result.effective_words)
    assert ax.get_xlabel() == "FREX (weight 0.7)" and not ax.texts
    with pytest.raises(TypeError, match="TopicDiagnostics"):
        plot_topic_quality(dict(result))
    with pytest.raises(ValueError, match="x"):
        plot_topic_quality(result, x="tokens_per_word")
    import matplotlib.pyplot as plt
    plt.close("all")


def test_result_is_a_table_result():
    assert issubclass(TopicDiagnostics, countgrid._utils.results.TableResult)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X = _corpus(seed=9) + 1                 # every word occurs: no warning
        phi = np.random.default_rng(9).dirichlet(np.ones(30), size=2)
        topic_diagnostics(phi, X, doc_topic=np.ones((X.shape[0], 2)))
