"""Two corpora on one map (docs/map.md, "Two corpora") in a real headless Chromium: the
page opens on their difference, which is countgrid.grid.compare_groups of the column
"corpus" over both corpora's documents, and lists documents of both."""
import numpy as np
import pytest
import scipy.sparse as sp

from countgrid.grid import compare_groups
from countgrid.maps import map_data, write_html
from countgrid.text import Corpus


@pytest.fixture(scope="module")
def two(fitted):
    """The fixture's corpus (twice: per-cell differences need documents), and a second
    one written mostly with topic 2's words."""
    X = np.vstack([fitted["X"], fitted["X"]])
    rng = np.random.default_rng(9)
    Y = rng.poisson(0.4, size=(1000, X.shape[1]))
    Y[:, 24:36] += rng.poisson(2.5, size=(1000, 12))
    return X, Y


def test_the_page_opens_on_python_s_difference(open_map, fitted, two, tmp_path):
    X, Y = two
    path = write_html(fitted["grid"], tmp_path / "vs.html", X, versus=Y,
                      names=("before", "after"), titles=fitted["titles"] * 2)
    pg = open_map(path)
    assert pg("countgridMap.colouring()") == "corpus: before vs after"
    got = pg("countgridMap.compare('corpus', 'before', 'after')")
    groups = np.array(["before"] * X.shape[0] + ["after"] * Y.shape[0])
    res = compare_groups(fitted["grid"], np.vstack([X, Y]), groups, "before", "after")
    np.testing.assert_allclose(got["delta"], res.delta.ravel(), rtol=1e-3, atol=1e-4)
    near = np.minimum(np.abs(res.low), np.abs(res.high)).ravel() < 1e-3
    assert (np.array(got["marked"], bool) == res.marked.ravel())[~near].all()
    assert res.marked.any()
    # where "after" is over-represented, its documents are listed
    after = np.argmin(res.delta.ravel())
    r, c = divmod(int(after), fitted["grid"].pi_.shape[1])
    listed = pg(f"countgridMap.pin({r}, {c})")
    assert any(t >= X.shape[0] for t in listed)
    titles = pg("Array.from(document.querySelectorAll('#cg-docs .cg-doc-title'))"
                ".map((e) => e.textContent)")
    assert any(t.startswith("after: document") for t in titles)
    assert pg.errors == []


def test_corpora_keep_their_shared_columns_and_names(fitted, two):
    X, Y = two
    X = fitted["X"]
    a = Corpus(sp.csr_matrix(X), fitted["words"], titles=fitted["titles"],
               metadata={"topic": fitted["meta"]["topic"], "length": fitted["meta"]["length"]})
    b = Corpus(sp.csr_matrix(Y), fitted["words"], metadata={"topic": np.array(["x"] * 1000)})
    data = map_data(fitted["grid"], corpus=a, versus=b, names=("a", "b"))
    assert [c["name"] for c in data["colorings"]] == ["topic", "corpus"]  # length: only in a
    assert data["compare"] == ["corpus", "a", "b"] and data["color_by"] == "corpus"
    assert data["n_documents"] == X.shape[0] + 1000
    assert data["titles"][-1] == "999" and data["ids"][-1] == "999"   # the Corpus's own ids
    with pytest.raises(ValueError, match="names must be two different"):
        map_data(fitted["grid"], X, versus=Y, names=("a", "a"))
    with pytest.raises(ValueError, match="versus compares two corpora: pass X"):
        map_data(fitted["grid"], versus=Y)
    with pytest.raises(TypeError, match="versus must be a countgrid.text.Corpus"):
        map_data(fitted["grid"], X, versus="other.csv")
    with pytest.raises(ValueError, match="versus has 5 features"):
        map_data(fitted["grid"], X, versus=Y[:, :5])
    with pytest.raises(ValueError, match="'corpus' names the two corpora"):
        map_data(fitted["grid"], X, versus=Y, metadata={"corpus": np.zeros(X.shape[0])})
