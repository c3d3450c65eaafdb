"""Working with a fitted grid: word_map, word_cells, top_words, positions(anchor=)."""
import itertools

import numpy as np
import pytest

from countgrid import CountingGrid
from countgrid.exceptions import NotFittedError
from countgrid.grid import _words
from _synthetic import draw_corpus, true_grid

NAMES = [f"word{i:02d}" for i in range(20)]


@pytest.fixture(scope="module", params=[((6, 5), (3, 2)), ((9,), (4,)), ((4, 3, 3), (2, 2, 3))],
                ids=["2d", "1d", "3d"])
def fitted(request):
    extent, window = request.param
    rng = np.random.default_rng(1)
    X, _ = draw_corpus(true_grid(extent, 20, rng), window, 60, 40, rng)
    # float64: the rankings are compared with NumPy references at 1e-12
    cg = CountingGrid(extent, window, n_iter=4, tol=0, min_iter=0, num_threads=1,
                      dtype=np.float64, random_state=0).fit(X)
    return cg, X


def test_word_map_is_the_slice_of_pi(fitted):
    cg, _ = fitted
    for w in (0, 7, 19, -1):
        np.testing.assert_array_equal(cg.word_map(w), cg.pi_[..., w])
    np.testing.assert_array_equal(cg.word_map("word07", NAMES), cg.pi_[..., 7])
    m = cg.word_map(3)
    m[...] = -1                                      # a copy: the model is untouched
    assert (cg.pi_[..., 3] >= 0).all()


def test_word_cells_brute_force(fitted):
    cg, _ = fitted
    extent = cg.pi_.shape[:-1]
    for w, n in [(2, 5), (11, 1), (19, 10_000)]:
        cells, weights = cg.word_cells(NAMES[w], n_cells=n, feature_names=NAMES)
        every = sorted(itertools.product(*map(range, extent)),
                       key=lambda c: -cg.pi_[c + (w,)])   # sorted() is stable: C order ties
        n = min(n, len(every))
        assert cells.shape == (n, len(extent)) and cells.dtype == np.int64
        assert [tuple(c) for c in cells] == every[:n]
        np.testing.assert_array_equal(weights, [cg.pi_[c + (w,)] for c in every[:n]])
        assert (np.diff(weights) <= 0).all()


def test_top_words_brute_force_with_ties():
    rng = np.random.default_rng(2)
    pi = rng.integers(0, 4, size=(5, 4, 9)).astype(np.float64)   # many exact ties
    for k in (1, 3, 9, 12):
        got = _words.top_words(pi, k)
        kk = min(k, 9)
        assert got.shape == (5, 4, kk)
        for i, j in itertools.product(range(5), range(4)):
            want = sorted(range(9), key=lambda z: (-pi[i, j, z], z))[:kk]
            assert got[i, j].tolist() == want
    # small blocks: the same answer
    old = _words._TOP_WORDS_BLOCK
    try:
        _words._TOP_WORDS_BLOCK = 9 * 3
        np.testing.assert_array_equal(_words.top_words(pi, 4), _top_ref(pi, 4))
        np.testing.assert_array_equal(_words.top_words(pi, 9), _top_ref(pi, 9))
    finally:
        _words._TOP_WORDS_BLOCK = old


def _top_ref(pi, k):
    flat = pi.reshape(-1, pi.shape[-1])
    return np.array([sorted(range(flat.shape[1]), key=lambda z: (-row[z], z))[:k]
                     for row in flat]).reshape(pi.shape[:-1] + (k,))


def test_top_words_method_names_and_indices(fitted):
    cg, X = fitted
    # weighting="probability": the most probable words (the default until 0.2.0.dev0)
    idx = cg.top_words(4, weighting="probability")
    assert idx.dtype == np.int64 and idx.shape == cg.pi_.shape[:-1] + (4,)
    np.testing.assert_array_equal(idx, _top_ref(cg.pi_, 4))
    words = cg.top_words(4, feature_names=NAMES, weighting="probability")
    np.testing.assert_array_equal(words, np.array(NAMES)[idx])
    # the default: LDAvis' relevance lam log pi + (1 - lam) log(pi / p), p the grid's mean
    lam = _words.RELEVANCE_LAMBDA
    p = cg.pi_.reshape(-1, 20).mean(axis=0)
    r = lam * np.log(cg.pi_) + (1 - lam) * np.log(cg.pi_ / p)
    np.testing.assert_allclose(_words.word_relevance(cg.pi_), r, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(cg.top_words(4), _top_ref(r, 4))
    np.testing.assert_array_equal(cg.top_words(4, NAMES), np.array(NAMES)[_top_ref(r, 4)])
    np.testing.assert_array_equal(cg.top_words(3, weighting="lift"), _top_ref(cg.pi_ / p, 3))
    Xd = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    df = (Xd > 0).sum(axis=0)
    idf = np.log((1 + len(Xd)) / (1 + df)) + 1
    np.testing.assert_array_equal(cg.top_words(3, weighting="idf", X=X),
                                  _top_ref(cg.pi_ * idf, 3))
    f = np.linspace(1, 2, 20)
    np.testing.assert_array_equal(cg.top_words(3, weighting=f), _top_ref(cg.pi_ * f, 3))


def test_word_weights_and_relevance_checks(fitted):
    cg, X = fitted
    pi = cg.pi_
    p = _words.word_marginal(pi)
    np.testing.assert_allclose(p, pi.reshape(-1, 20).mean(axis=0))
    assert _words.word_weights(pi, "probability") is None
    np.testing.assert_allclose(_words.word_weights(pi, "relevance", relevance_lambda=0.25),
                               p ** -0.75)
    np.testing.assert_allclose(_words.word_relevance(pi, 1.0), np.log(pi))
    with pytest.raises(ValueError, match="weighting"):
        cg.top_words(3, weighting="tfidf")
    with pytest.raises(ValueError, match="pass X"):
        cg.top_words(3, weighting="idf")
    with pytest.raises(ValueError, match="shape"):
        cg.top_words(3, weighting=np.ones(3))
    with pytest.raises(ValueError, match="non-negative"):
        cg.top_words(3, weighting=-np.ones(20))
    for lam in (-0.1, 1.5, True, "0.5"):
        with pytest.raises(ValueError, match="relevance_lambda"):
            _words.word_relevance(pi, lam)


def test_word_marginal_with_a_learned_prior():
    """p(w) = sum_k prior_k h_k(w): the model's own word distribution."""
    rng = np.random.default_rng(2)
    extent, window = (5, 6), (2, 3)
    pi = rng.random(extent + (7,))
    pi /= pi.sum(axis=-1, keepdims=True)
    prior = rng.random(extent)
    prior /= prior.sum()
    h = np.zeros_like(pi)
    for k in itertools.product(*map(range, extent)):
        for d in itertools.product(*map(range, window)):
            h[k] += pi[tuple((a + b) % e for a, b, e in zip(k, d, extent))]
    h /= np.prod(window)
    np.testing.assert_allclose(_words.word_marginal(pi, prior, window),
                               np.tensordot(prior, h, axes=2), rtol=1e-12)


def test_positions_anchor_center(fitted):
    cg, X = fitted
    corner = cg.positions(X)
    assert np.array_equal(corner, cg.positions(X, anchor="corner"))
    centre = cg.positions(X, anchor="center")
    extent, window = np.array(cg.extent), np.array(cg.window)
    np.testing.assert_array_equal(centre, (corner + window // 2) % extent)
    # the centre cell is inside the window of the MAP position, on the torus
    offset = (centre - corner) % extent
    assert ((offset >= 0) & (offset < window)).all()
    # and corner is the argmax of the posterior (0.1.0 contract)
    q = cg.transform(X)
    np.testing.assert_array_equal(
        np.ravel_multi_index(corner.T, tuple(extent)), np.argmax(q, axis=1))
    with pytest.raises(ValueError, match="anchor"):
        cg.positions(X, anchor="centre")


def test_unknown_word_suggests_close_matches(fitted):
    cg, _ = fitted
    with pytest.raises(ValueError, match=r"'word7' is not in feature_names; close matches: .*"
                                         r"'word07'"):
        cg.word_map("word7", NAMES)
    with pytest.raises(ValueError, match=r"'zzz' is not in feature_names$"):
        cg.word_cells("zzz", feature_names=NAMES)
    with pytest.raises(ValueError, match="pass feature_names"):
        cg.word_map("word07")
    with pytest.raises(ValueError, match="word index 20 is out of range"):
        cg.word_map(20)
    with pytest.raises(TypeError, match="word must be"):
        cg.word_map(1.5)
    with pytest.raises(TypeError, match="word must be"):
        cg.word_map(True)
    with pytest.raises(ValueError, match="feature_names has 3 entries"):
        cg.word_map("a", ["a", "b", "c"])
    with pytest.raises(ValueError, match="n_cells must be >= 1"):
        cg.word_cells(0, n_cells=0)
    with pytest.raises(TypeError, match="n_cells must be an int"):
        cg.word_cells(0, n_cells=2.0)
    with pytest.raises(ValueError, match="n_words must be >= 1"):
        cg.top_words(0)


def test_unfitted():
    cg = CountingGrid((4, 4), (2, 2))
    for call in (lambda: cg.word_map(0), lambda: cg.word_cells(0), lambda: cg.top_words()):
        with pytest.raises(NotFittedError):
            call()
