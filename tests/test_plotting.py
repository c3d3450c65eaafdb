"""Tests of countgrid.plotting (word-grid pictures and the text rendering)."""
import io
import sys

import numpy as np
import pytest

import countgrid
from countgrid.datasets import load_news20_3class
from countgrid.plotting import plot_word_grid, text_word_grid, word_grid_cells

from _expected_warnings import FEW_ITERATIONS

# the module's classifier (fixture clf) is fitted 5 EM iterations, on purpose (fast)
pytestmark = FEW_ITERATIONS

try:
    import matplotlib

    matplotlib.use("Agg")
    HAVE_MPL = True
except ImportError:  # pragma: no cover - depends on the environment
    HAVE_MPL = False

needs_mpl = pytest.mark.skipif(not HAVE_MPL, reason="matplotlib is not installed")


@pytest.fixture(scope="module")
def corpus():
    X, y, words, labels = load_news20_3class()
    rows = np.concatenate([np.flatnonzero(y == c)[:100] for c in range(3)])
    return X[rows], labels[y[rows]], words


@pytest.fixture(scope="module")
def clf(corpus):
    X, y, _ = corpus
    return countgrid.CountingGridClassifier((8, 8), (3, 3), n_iter=5, random_state=0,
                                            num_threads=1).fit(X, y)


def _close(ax):
    import matplotlib.pyplot as plt

    plt.close(ax.figure)


@needs_mpl
def test_plot_word_grid_classifier(clf, corpus):
    words = corpus[2]
    ax = plot_word_grid(clf, words, n_words=2)
    try:
        texts = [t.get_text() for t in ax.texts]
        assert len(texts) == 8 * 8 * 2
        assert set(texts) <= set(words.tolist())
        sizes = [t.get_fontsize() for t in ax.texts]
        assert min(sizes) > 0 and max(sizes) > min(sizes)  # size follows probability
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert legend == ["alt.atheism", "rec.sport.baseball", "sci.space"]
        buf = io.BytesIO()
        ax.figure.savefig(buf, format="png", dpi=40)
        assert buf.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        _close(ax)


@needs_mpl
def test_plot_word_grid_top_words_match_pi(clf, corpus):
    words = corpus[2]
    pi = clf.grid_.pi_
    # weighting="probability": the most probable words (the default until 0.2.0.dev0)
    ax = plot_word_grid(clf.grid_, words, n_words=1, legend=False, title="",
                        weighting="probability")
    try:
        expected = words[np.argmax(pi, axis=2)].ravel().tolist()
        assert [t.get_text() for t in ax.texts] == expected
        assert ax.get_legend() is None
    finally:
        _close(ax)
    # the default: the most relevant words, lambda log pi + (1 - lambda) log(pi / p)
    ax = plot_word_grid(clf.grid_, words, n_words=1, legend=False, title="")
    try:
        r = countgrid.grid.word_relevance(pi)
        expected = words[np.argmax(r, axis=2)].ravel().tolist()
        assert [t.get_text() for t in ax.texts] == expected
    finally:
        _close(ax)


@needs_mpl
def test_plot_word_grid_on_given_axes_with_gamma(clf, corpus):
    import matplotlib.pyplot as plt

    X, y, words = corpus
    Q = clf.grid_.transform(X)
    gamma = countgrid.embed_labels(Q, y, (8, 8), (3, 3))
    fig, ax = plt.subplots(figsize=(6, 6))
    try:
        out = plot_word_grid(clf.grid_.pi_, words, ax=ax, gamma=gamma,
                             label_names=["a", "b", "c"], colors=["red", "green", "blue"])
        assert out is ax and len(ax.texts) == 8 * 8 * 3
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b", "c"]
    finally:
        plt.close(fig)


@needs_mpl
def test_plot_word_grid_big_grid_is_subsampled():
    rng = np.random.default_rng(0)
    pi = rng.random((40, 30, 12))
    pi /= pi.sum(axis=2, keepdims=True)
    names = [f"w{i}" for i in range(12)]
    ax = plot_word_grid(pi, names, n_words=1, max_cells=20, gamma=rng.random((40, 30)))
    try:
        assert len(ax.texts) == 20 * 15          # step 2
        assert "2x2" in ax.get_title()
    finally:
        _close(ax)


def test_word_grid_cells_block_means():
    pi = np.zeros((4, 4, 3))
    pi[..., 0] = 1.0
    pi[1, 1] = [0.0, 0.0, 1.0]                 # one cell of the first 2x2 block
    pi[2:, 2:] = [0.1, 0.9, 0.0]               # the whole last block
    cells = word_grid_cells(pi, ["a", "b", "c"], n_words=2, step=2)
    assert cells["words"].shape == (2, 2, 2)
    np.testing.assert_allclose(cells["probs"][0, 0], [0.75, 0.25])
    assert cells["words"][0, 0].tolist() == ["a", "c"]
    assert cells["words"][1, 1].tolist() == ["b", "a"]
    lift = word_grid_cells(pi, ["a", "b", "c"], n_words=1, step=1, weighting="lift")
    assert lift["words"][1, 1, 0] == "c"


def test_word_grid_input_errors(clf, corpus):
    words = corpus[2]
    with pytest.raises(ValueError, match="2-D grid"):
        word_grid_cells(np.ones((5, 3)) / 3, ["a", "b", "c"])
    with pytest.raises(ValueError, match="feature_names"):
        word_grid_cells(clf, words[:10])
    with pytest.raises(ValueError, match="weighting"):
        word_grid_cells(clf, words, weighting="tfidf")
    with pytest.raises(countgrid.NotFittedError):
        word_grid_cells(countgrid.CountingGrid((4, 4), (2, 2)), words)
    est = countgrid.GenerativeCountingGridClassifier((4, 4), (2, 2))
    est.grids_ = []
    with pytest.raises(TypeError, match="one grid per class"):
        word_grid_cells(est, words)


def test_text_word_grid(clf, corpus):
    words = corpus[2]
    text = text_word_grid(clf, words, n_words=2, cell_width=10)
    lines = text.splitlines()
    assert lines[0].startswith("+") and "8 x 8 counting grid" in text
    assert "A = alt.atheism" in text and "C = sci.space" in text
    grid_lines = [ln for ln in lines if ln.startswith("|")]
    assert len(grid_lines) == 8 * 2
    assert all(len(ln) == 8 * 10 + 1 for ln in grid_lines)
    first = grid_lines[0].split("|")[1].strip()
    assert first[0] in "ABC" and first[1] == ":"


def test_text_word_grid_fits_width():
    pi = np.full((30, 60, 4), 0.25)
    text = text_word_grid(pi, ["alpha", "beta", "gamma", "delta"], max_width=80, cell_width=8)
    assert max(len(ln) for ln in text.splitlines() if ln.startswith(("|", "+"))) <= 81
    assert "block" in text


def test_plot_word_grid_without_matplotlib(monkeypatch, clf, corpus):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"pip install countgrid\[plot\]"):
        plot_word_grid(clf, corpus[2])
    # The text rendering still works.
    assert "counting grid" in text_word_grid(clf, corpus[2])


@pytest.mark.parametrize("weighting", ["relevance", "probability", "lift"])
@pytest.mark.parametrize("step", [1, 2, 3])
def test_word_grid_cells_of_float32_grids_without_float64_copies(weighting, step,
                                                                 monkeypatch):
    """A float32 grid is ranked as its float64 copy was (the word grid of 40x40 cells of
    38,559 words took two float64 copies of pi: 1.8 GB; issue 22), the block means taken
    a few words at a time: the same words and sizes, bit for bit."""
    from countgrid.plotting import _word_grid

    rng = np.random.default_rng(step)
    pi = rng.dirichlet(np.full(41, 0.3), size=(7, 8)).astype(np.float32)
    pi[..., 9] = pi[..., 4]                         # ties
    names = [f"w{i}" for i in range(41)]
    want = word_grid_cells(pi.astype(np.float64), names, n_words=4, step=step,
                           weighting=weighting)
    for elements in (1 << 20, 1, 3 * 56):           # columns at a time: 41, 2, 3
        monkeypatch.setattr(_word_grid, "_BLOCK_MEAN_ELEMENTS", elements)
        got = word_grid_cells(pi, names, n_words=4, step=step, weighting=weighting)
        np.testing.assert_array_equal(got["words"], want["words"])
        assert got["probs"].dtype == np.float64
        assert np.array_equal(got["probs"].view(np.uint64), want["probs"].view(np.uint64))
