"""The pictures of countgrid.plotting, drawn from models fitted on the bundled 20
Newsgroups subset and written to PNG: what is drawn equals what the model holds."""
import os

import numpy as np
import pytest

import countgrid
from countgrid.datasets import load_news20_3class
from countgrid.exceptions import NotFittedError

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from countgrid.plotting import (plot_label_embedding, plot_log_likelihood,  # noqa: E402
                                plot_positions, plot_top_words, plot_word_map,
                                plot_zip_gtm_map)

from _expected_warnings import FEW_ITERATIONS  # noqa: E402

pytestmark = FEW_ITERATIONS


@pytest.fixture(scope="module")
def corpus():
    X, y, words, names = load_news20_3class()
    rows = np.concatenate([np.flatnonzero(y == c)[:80] for c in range(3)])
    cols = np.sort(np.argsort(-np.asarray(X[rows].sum(axis=0)).ravel(), kind="stable")[:400])
    return X[rows][:, cols].tocsr(), names[y[rows]], words[cols]


@pytest.fixture(scope="module")
def clf(corpus):
    X, labels, _ = corpus
    return countgrid.CountingGridClassifier((10, 12), (3, 3), n_iter=8, random_state=0,
                                            num_threads=1).fit(X, labels)


@pytest.fixture(autouse=True)
def close_all():
    yield
    plt.close("all")


def _png(fig, tmp_path, name):
    path = tmp_path / name
    fig.savefig(path, dpi=60, bbox_inches="tight")
    img = plt.imread(path)
    assert img.shape[0] > 100 and img.shape[1] > 100
    assert img[..., :3].std() > 0.05                  # not blank
    return img


def _no_overlapping_text(fig):
    """Tick labels, axis labels, titles and legend texts do not overlap each other."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = []
    for ax in fig.axes:
        # the locator also labels ticks just outside the view, which are not drawn
        (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
        ticks = ([t for t in ax.get_xticklabels() if x0 <= t.get_position()[0] <= x1]
                 + [t for t in ax.get_yticklabels() if y0 <= t.get_position()[1] <= y1])
        texts = ([t for t in ticks if t.get_text()]
                 + [ax.xaxis.label, ax.yaxis.label, ax.title])
        if ax.get_legend() is not None:
            texts += ax.get_legend().get_texts()
        boxes += [t.get_window_extent(renderer) for t in texts if t.get_text()]
    for a in range(len(boxes)):
        for b in range(a + 1, len(boxes)):
            inter = boxes[a].intersection(boxes[a], boxes[b])
            assert inter is None or inter.width * inter.height < 1.0, (boxes[a], boxes[b])


# -------------------------------------------------------------------- word map
def test_word_map_image_is_pi_of_the_word(clf, corpus, tmp_path):
    _, _, words = corpus
    ax = plot_word_map(clf, "space", words)
    w = list(words).index("space")
    np.testing.assert_array_equal(ax.images[0].get_array(), clf.grid_.pi_[..., w])
    # the numbered markers sit on the top cells
    cells, _ = clf.grid_.word_cells(w, n_cells=5)
    marks = [line.get_xydata()[0] for line in ax.lines]
    np.testing.assert_array_equal(np.array(marks), cells[:, ::-1] + 0.5)
    assert ax.get_xlabel() == "grid column j" and ax.get_ylabel() == "grid row i"
    assert "space" in ax.figure.axes[1].get_ylabel()            # the colour bar
    _no_overlapping_text(ax.figure)
    _png(ax.figure, tmp_path, "word_map.png")


def test_word_map_errors(clf, corpus):
    _, _, words = corpus
    with pytest.raises(ValueError, match="'spaec' is not in feature_names; close matches: "
                                         "'space'"):
        plot_word_map(clf, "spaec", words)
    with pytest.raises(NotFittedError):
        plot_word_map(countgrid.CountingGrid((4, 4), (2, 2)), 0)
    ring = countgrid.CountingGrid((6,), (2,), n_iter=2, random_state=0).fit(corpus[0])
    with pytest.raises(ValueError, match="1-D grid of extent \\(6,\\); this picture needs "
                                         "a 2-D grid"):
        plot_word_map(ring, 0)
    with pytest.raises(TypeError, match="grid must be a CountingGrid"):
        plot_word_map(countgrid.PLSA(2), 0)
    with pytest.raises(TypeError, match="ax must be a matplotlib Axes"):
        plot_word_map(clf, 0, ax="left")


# ------------------------------------------------------------ label embedding
def test_label_embedding_rgb_is_the_class_proportions(clf, tmp_path):
    ax = plot_label_embedding(clf)
    rgb = ax.images[0].get_array()
    g = clf.gamma_
    assert rgb.shape == g.shape == (10, 12, 3)
    np.testing.assert_allclose(rgb, g / g.sum(axis=2, keepdims=True), rtol=1e-12)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == list(clf.classes_)
    np.testing.assert_array_equal(
        [h.get_facecolor()[:3] for h in ax.get_legend().legend_handles], np.eye(3))
    _no_overlapping_text(ax.figure)
    img = _png(ax.figure, tmp_path, "label_embedding.png")
    # a pure red, green and blue pixel each appear in the PNG (every class has a region)
    px = img[..., :3].reshape(-1, 3)
    for c in range(3):
        assert (px[:, c] - px.sum(axis=1) / 3 > 0.3).any()


def test_label_embedding_more_classes_and_explicit_gamma(clf, corpus, tmp_path):
    X, labels, words = corpus
    grid = clf.grid_
    y5 = np.arange(X.shape[0]) % 5
    g5 = countgrid.embed_labels(grid.transform(X), y5, grid.extent, grid.window)
    ax = plot_label_embedding(grid, gamma=g5, label_names=list("abcde"), words=1,
                              feature_names=words)
    from countgrid.plotting._pictures import _colors

    # more than three classes: the dominant class's colour, paler the less it dominates
    # (a mean of 5 colours is a muddy grey; the map's rule)
    P = g5 / g5.sum(axis=2, keepdims=True)
    s = np.clip((P.max(axis=2) - 0.2) / 0.8, 0, 1)[..., None]
    want = 1 - (0.25 + 0.75 * s) * (1 - _colors(5)[np.argmax(P, axis=2)])
    np.testing.assert_allclose(ax.images[0].get_array(), want, rtol=1e-12)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list("abcde")
    _no_overlapping_text(ax.figure)
    top = grid.top_words(1, words)
    drawn = {(round(t.get_position()[1] - 0.5), round(t.get_position()[0] - 0.5)): t.get_text()
             for t in ax.texts}
    assert drawn == {(i, j): top[i, j, 0] for i in range(10) for j in range(12)}
    _png(ax.figure, tmp_path, "label_embedding_5.png")


def test_label_embedding_continuous(corpus, tmp_path):
    X, labels, _ = corpus
    target = (labels == labels[0]).astype(float) * 3.0
    reg = countgrid.CountingGridRegressor((8, 8), (3, 3), n_iter=4, random_state=0,
                                          num_threads=1).fit(X, target)
    ax = plot_label_embedding(reg)
    np.testing.assert_array_equal(ax.images[0].get_array(), reg.gamma_)
    assert ax.figure.axes[1].get_ylabel() == "embedded target"
    _png(ax.figure, tmp_path, "label_embedding_continuous.png")


def test_label_embedding_errors(clf, corpus):
    with pytest.raises(ValueError, match="holds no labels: pass gamma="):
        plot_label_embedding(clf.grid_)
    with pytest.raises(ValueError, match="gamma must have shape \\(10, 12\\)"):
        plot_label_embedding(clf, gamma=np.ones((3, 3, 3)))
    with pytest.raises(ValueError, match="label_names has 2 entries for 3 classes"):
        plot_label_embedding(clf, label_names=["a", "b"])
    with pytest.raises(TypeError, match="no label embedding"):
        plot_label_embedding(countgrid.GenerativeCountingGridClassifier((4, 4), (2, 2)))
    with pytest.raises(TypeError, match="estimator must be"):
        plot_label_embedding(np.ones((4, 4, 3)))
    with pytest.raises(NotFittedError):
        plot_label_embedding(countgrid.CountingGridClassifier((4, 4), (2, 2)))
    with pytest.raises(ValueError, match="needs feature_names"):
        plot_label_embedding(clf, words=1)


# ------------------------------------------------------------------ positions
def test_positions_are_the_window_centres(clf, corpus, tmp_path):
    X, labels, _ = corpus
    ax = plot_positions(clf, X, labels)
    centres = clf.grid_.positions(X, anchor="center")
    classes = np.unique(labels)
    assert len(ax.collections) == 3
    for c, coll in zip(classes, ax.collections):
        xy = coll.get_offsets()
        want = centres[labels == c]
        # jitter 0.35 < 0.5: every document stays inside its centre cell
        np.testing.assert_array_equal(np.floor(xy[:, ::-1]).astype(int), want)
        assert coll.get_label() == c
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list(classes)
    # the pale background is the label embedding, in the scatter's colours
    assert ax.images[0].get_array().shape == (10, 12, 3)
    _no_overlapping_text(ax.figure)
    _png(ax.figure, tmp_path, "positions.png")


def test_positions_jitter_wraps_around_the_torus(clf, corpus):
    X, _, _ = corpus
    centres = clf.grid_.positions(X, anchor="center")
    exact = plot_positions(clf.grid_, X, jitter=0.0).collections[0].get_offsets()
    np.testing.assert_array_equal(exact, centres[:, ::-1] + 0.5)
    wide = plot_positions(clf.grid_, X, jitter=2.0).collections[0].get_offsets()
    E = np.array([12, 10])
    assert ((wide >= 0) & (wide < E)).all()
    d = np.abs(wide - (centres[:, ::-1] + 0.5))
    torus = np.minimum(d, E - d)                   # circular distance along each axis
    assert (torus <= 2.0 + 1e-9).all() and (d > 2.0 + 1e-9).any()   # some did wrap
    again = plot_positions(clf.grid_, X, jitter=2.0).collections[0].get_offsets()
    np.testing.assert_array_equal(wide, again)     # random_state=0: deterministic


def test_positions_over_the_word_grid(clf, corpus, tmp_path):
    X, labels, words = corpus
    ax = plot_positions(clf, X, labels, background="words", feature_names=words)
    assert len(ax.texts) == 2 * 10 * 12              # two words per cell
    assert len(ax.collections) == 3
    _no_overlapping_text(ax.figure)
    _png(ax.figure, tmp_path, "positions_words.png")
    y6 = np.arange(X.shape[0]) % 6                    # more classes: legend at the right
    ax = plot_positions(clf, X, y6, label_names=[f"group {i}" for i in range(6)])
    assert len(ax.collections) == 6 and not ax.images     # no misleading 3-class background
    _no_overlapping_text(ax.figure)
    _png(ax.figure, tmp_path, "positions_6.png")
    with pytest.raises(ValueError, match="needs feature_names"):
        plot_positions(clf, X, background="words")
    with pytest.raises(ValueError, match="one entry per document"):
        plot_positions(clf, X, labels[:-1])
    with pytest.raises(ValueError, match="'background'"):
        plot_positions(clf, X, background="pi")


# -------------------------------------------------------------- log-likelihood
def test_log_likelihood_curves(clf, corpus, tmp_path):
    X, labels, _ = corpus
    ax = plot_log_likelihood(clf)
    ll = clf.grid_.log_likelihood_
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), ll)
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), np.arange(1, len(ll) + 1))
    assert ax.get_xlabel() == "EM iteration" and "log-likelihood" in ax.get_ylabel()
    _no_overlapping_text(ax.figure)
    _png(ax.figure, tmp_path, "loglik.png")

    gtm = countgrid.ZIPGTM(grid_shape=(4, 4), n_basis=4, n_iter=5, random_state=0,
                           num_threads=1).fit(X[:, :100])
    ax = plot_log_likelihood(gtm)
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), gtm.log_likelihood_)
    assert ax.lines[0].get_xdata()[0] == 0            # ZIPGTM records the start

    plsa = countgrid.PLSA(3, n_iter=6, tol=0, random_state=0, num_threads=1).fit(X)
    np.testing.assert_array_equal(plot_log_likelihood(plsa).lines[0].get_ydata(),
                                  plsa.log_likelihood_)
    W = np.outer(np.hanning(8), np.hanning(8))
    c = np.arange(8.0)
    gmm = countgrid.HistogramGMM(2, n_iter=5, random_state=0).fit(W, [c, c])
    np.testing.assert_array_equal(plot_log_likelihood(gmm).lines[0].get_ydata(),
                                  gmm.log_likelihood_)
    gen = countgrid.GenerativeCountingGridClassifier((5, 5), (2, 2), n_iter=3, random_state=0,
                                                     num_threads=1).fit(X, labels)
    ax = plot_log_likelihood(gen)
    assert len(ax.lines) == 3
    for line, g in zip(ax.lines, gen.grids_):
        np.testing.assert_array_equal(line.get_ydata(), g.log_likelihood_)


def test_log_likelihood_errors():
    with pytest.raises(TypeError, match="RAP.*records no log-likelihood"):
        plot_log_likelihood(countgrid.RAP(2))
    with pytest.raises(TypeError, match="estimator must be a countgrid estimator fitted by "
                                        "EM"):
        plot_log_likelihood(countgrid.LSI(2))
    with pytest.raises(NotFittedError):
        plot_log_likelihood(countgrid.PLSA(2))


# ------------------------------------------------------------------ top words
def test_top_words_bars_are_the_topic_distributions(corpus, tmp_path):
    X, _, words = corpus
    plsa = countgrid.PLSA(4, n_iter=10, random_state=0, num_threads=1).fit(X)
    fig = plot_top_words(plsa, words, n_words=6)
    assert len(fig.axes) == 4
    for t, ax in enumerate(fig.axes):
        widths = [p.get_width() for p in ax.patches]
        top = np.argsort(-plsa.components_[t], kind="stable")[:6]
        np.testing.assert_allclose(widths, plsa.components_[t][top], rtol=1e-12)
        assert [lab.get_text() for lab in ax.get_yticklabels()] == list(words[top])
        assert ax.get_title() == f"topic {t}"
    _no_overlapping_text(fig)
    _png(fig, tmp_path, "top_words.png")
    fig = plot_top_words(plsa, words, n_words=3, topics=[2])
    assert len(fig.axes) == 1 and fig.axes[0].get_title() == "topic 2"
    with pytest.raises(ValueError, match="topics must be indices in \\[0, 4\\)"):
        plot_top_words(plsa, words, topics=[4])
    with pytest.raises(ValueError, match="feature_names has 3 entries"):
        plot_top_words(plsa, ["a", "b", "c"])
    with pytest.raises(TypeError, match="plsa must be a fitted PLSA"):
        plot_top_words(countgrid.CountingGrid((4, 4), (2, 2)), words)
    with pytest.raises(NotFittedError):
        plot_top_words(countgrid.PLSA(3), words)
    with pytest.raises(ValueError, match="one matplotlib Axes per shown topic"):
        plot_top_words(plsa, words, ax=[plt.figure().add_subplot()])


# --------------------------------------------------------------------- ZIP-GTM
def test_zip_gtm_map_points_are_transform(corpus, tmp_path):
    X, labels, _ = corpus
    Xs = X[:, :150]
    keep = np.asarray(Xs.sum(axis=1)).ravel() > 0
    Xs, labels = Xs[keep], labels[keep]
    gtm = countgrid.ZIPGTM(grid_shape=(5, 5), n_basis=9, n_iter=8, random_state=0,
                           num_threads=1).fit(Xs)
    ax = plot_zip_gtm_map(gtm, Xs, labels)
    Z = gtm.transform(Xs)
    np.testing.assert_allclose(ax.collections[0].get_offsets(), gtm.latent_)
    for c, coll in zip(np.unique(labels), ax.collections[1:]):
        np.testing.assert_allclose(coll.get_offsets(), Z[labels == c])
    sizes = ax.collections[0].get_sizes()
    assert np.argmax(sizes) == np.argmax(gtm.mixing_)
    assert [t.get_text() for t in ax.get_legend().get_texts()][1:] == list(np.unique(labels))
    _no_overlapping_text(ax.figure)
    _png(ax.figure, tmp_path, "zip_gtm.png")
    with pytest.raises(TypeError, match="zipgtm must be a fitted ZIPGTM"):
        plot_zip_gtm_map(countgrid.PLSA(2), Xs)
    with pytest.raises(NotFittedError):
        plot_zip_gtm_map(countgrid.ZIPGTM(), Xs)


def test_doc_images_exist_and_are_small():
    root = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "docs", "img")
    for name in ("label_embedding", "positions", "word_map", "log_likelihood_grid",
                 "top_words", "zip_gtm_map"):
        path = os.path.join(root, name + ".png")
        assert os.path.getsize(path) <= 200_000, path


# ------------------------------------------------- hostile inputs (tests/hostile, issue 11)
def test_colours_and_colormaps_that_matplotlib_refuses_are_named(clf, corpus):
    X, labels, words = corpus
    with pytest.raises(ValueError, match=r"colors\[0\] = 'nope' is not a matplotlib colour"):
        plot_positions(clf, X[:10], labels=labels[:10], colors=["nope"] * 3)
    with pytest.raises(TypeError, match="colors must be a sequence"):
        plot_label_embedding(clf, colors=5)
    with pytest.raises(ValueError, match="cmap='nope' is not a matplotlib colormap"):
        plot_word_map(clf, 0, words, cmap="nope")
    with pytest.raises(ValueError, match="cmap='nope'"):
        plot_label_embedding(clf, gamma=np.zeros(clf.grid_.pi_.shape[:2]), cmap="nope")
    with pytest.raises(TypeError, match="gamma must hold real numbers"):
        plot_label_embedding(clf, gamma=np.full(clf.grid_.pi_.shape[:2], "a"))


def test_labels_of_mixed_types_are_named(clf, corpus):
    X = corpus[0][:4]
    with pytest.raises(TypeError, match="labels mix values that cannot be ordered"):
        plot_positions(clf, X, labels=np.array([1, "a", None, "b"], dtype=object))


@pytest.mark.parametrize("topics, exc", [(["a"], TypeError), ([0.5], TypeError),
                                         ([True], TypeError), ([], ValueError),
                                         ([2**70], ValueError), ([-1], ValueError)])
def test_top_words_topics_must_be_topic_indices(topics, exc):
    X = np.random.default_rng(0).poisson(1.0, size=(30, 8))
    plsa = countgrid.PLSA(3, n_iter=3, random_state=0).fit(X)
    with pytest.raises(exc, match="topics"):
        plot_top_words(plsa, [f"w{i}" for i in range(8)], topics=topics)
    assert len(plot_top_words(plsa, [f"w{i}" for i in range(8)], topics=np.int64(1)).axes) == 1
