"""The map of a LayeredCountingGrid (docs/map.md, "Layered grids"): its data computed from
the layered model, and the page in a real headless Chromium (words in their layer's
colour, documents coloured by their layer)."""
import warnings

import numpy as np
import pytest

import countgrid
from countgrid.grid._layers import spatial_view
from countgrid.maps import map_data, rank_documents, write_html
from tests.maps.test_browser import screenshot_array


@pytest.fixture(scope="module")
def layered(fitted):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", countgrid.ConvergenceWarning)
        return countgrid.LayeredCountingGrid((10, 13), (3, 4), n_layers=2, n_iter=15,
                                             random_state=0).fit(fitted["X"])


def test_map_data_reads_the_layered_model(layered, fitted):
    X = fitted["X"]
    data = map_data(layered, X, feature_names=fitted["words"])
    n_layers, P = 2, 130
    pi = layered.pi_.reshape(n_layers, P, -1)
    lam = layered.layer_prior_.reshape(n_layers, P)
    mixture = np.einsum("lk,lkz->kz", lam, pi)
    # every cell shows words of its layers' mixture, each in the layer giving most of it
    top = data["top_words"]
    np.testing.assert_allclose(data["top_weights"], np.take_along_axis(mixture, top, 1),
                               rtol=1e-5)
    share = lam[:, :, None] * np.take_along_axis(pi, np.broadcast_to(top, (2,) + top.shape),
                                                 axis=2)
    assert np.array_equal(data["layers"]["top_layers"], np.argmax(share, axis=0))
    assert set(np.unique(data["layers"]["top_layers"])) == {0, 1}
    # documents sit where their layers' posteriors put them
    q = layered.transform(X).reshape(len(X), n_layers, P).sum(axis=1)
    assert np.array_equal(data["doc_map"], np.argmax(q, axis=1))
    # colouring by each document's most probable layer, opened on it, in the words' colours
    assert data["color_by"] == "layer"
    col = next(c for c in data["colorings"] if c["name"] == "layer")
    best = np.argmax(layered.layer_posterior(X), axis=1)
    assert col["levels"] == [f"layer {k}" for k in np.unique(best)]
    for level, rgb in zip(col["levels"], col["colors"]):
        assert list(rgb) == list(data["layers"]["colors"][int(level.split()[-1])])
    # the document lists' tie-break: log p(c | k) = log sum_l rho_k(l) p(c | l, k), per token
    tokens = X.sum(axis=1)
    k = data["doc_map"].astype(np.int64)
    logh = np.log(layered.h_.reshape(n_layers, P, -1))
    rho = layered.prior_.reshape(n_layers, P) * P
    per = np.stack([X @ logh[l].T for l in range(n_layers)])[:, np.arange(len(X)), k]
    expected = np.logaddexp(per[0] + np.log(rho[0, k]), per[1] + np.log(rho[1, k])) / tokens
    np.testing.assert_allclose(data["doc_loglik"], expected, rtol=1e-5)
    # a user's own "layer" column keeps its name; the model's is set beside it
    mine = map_data(layered, X, metadata={"layer": np.array(["a"] * len(X))})
    assert [c["name"] for c in mine["colorings"]] == ["layer", "(layer)"]
    assert mine["color_by"] == "(layer)"


def test_spatial_view_is_not_saveable(layered, tmp_path):
    with pytest.raises(TypeError, match="not a saveable"):
        countgrid.io.save(spatial_view(layered), tmp_path / "view.npz")


def test_the_page_draws_each_layer_s_words_in_its_colour(open_map, layered, fitted,
                                                          tmp_path):
    path = write_html(layered, tmp_path / "layers.html", fitted["X"],
                      feature_names=fitted["words"], titles=fitted["titles"])
    pg = open_map(path, width=900, height=700)
    assert pg("countgridMap.colouring()") == "layer"
    assert "2 layers" in pg.page.inner_text("#cg-layers")
    data = map_data(layered, fitted["X"], feature_names=fitted["words"],
                    titles=fitted["titles"])
    # clicking a cell lists the documents Python ranks there
    pg("countgridMap.pin(4, 6)")
    idx, scores = rank_documents(data, (4, 6))
    assert pg("countgridMap.listedDocuments()") == idx.tolist()
    assert len(idx) > 0
    # words only (no colouring, no pin), zoomed in: the pixels of each layer's word colour
    pg("countgridMap.colorBy('')")
    pg("countgridMap.zoom(2.5)")
    pixels = screenshot_array(pg).reshape(-1, 3).astype(int)
    for rgb in data["layers"]["colors"]:
        text = np.round(0.6 * np.asarray(rgb, dtype=float))
        near = np.abs(pixels - text).sum(axis=1) <= 24
        assert near.sum() > 200, (rgb, near.sum())
    assert pg.errors == []


def test_the_word_picture_says_it_shows_the_layers_mixture(layered, fitted):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from countgrid.plotting import plot_word_grid
    ax = plot_word_grid(spatial_view(layered), fitted["words"])
    title = ax.get_title() or ax.figure._suptitle.get_text()
    assert title.startswith("10 x 13 counting grid of 2 layers, each cell their mixture")
    plain = plot_word_grid(layered.layer_grid(0), fitted["words"])
    assert "layers" not in (plain.get_title() or plain.figure._suptitle.get_text())
    plt.close("all")
