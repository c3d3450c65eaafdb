"""countgrid.maps.map_data / write_html in Python: the embedded arrays are the model's."""
import re
import warnings
from importlib import resources

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid._utils.palette import natural_key
from countgrid.exceptions import NotFittedError
from countgrid.maps import map_data, rank_documents, write_html
from countgrid.maps._data import MAX_POSITIONS, POSTERIOR_MASS
from countgrid.maps._html import encode_payload

from countgrid.grid._browse import window_depth

from _map_page import decode
from _reference.browse import (coverage_reference, depth_ranking_reference, depth_reference,
                               map_loglik_reference)


def test_assets_are_installed():
    root = resources.files("countgrid.maps").joinpath("assets")
    for name in ("map.js", "map.css", "template.html"):
        assert root.joinpath(name).read_text("utf-8").strip()


def test_top_words_and_search_rule(fitted):
    grid = fitted["grid"]
    d = map_data(grid, feature_names=fitted["words"], n_words=4, weighting="probability")
    pi = grid.pi_.reshape(-1, grid.pi_.shape[-1])
    assert d["weighting"] == "probability" and not d["idf"]
    for i in range(pi.shape[0]):
        expected = sorted(range(pi.shape[1]), key=lambda z: (-pi[i, z], z))[:4]
        assert d["top_words"][i].tolist() == expected
        np.testing.assert_allclose(d["top_weights"][i], pi[i, expected], rtol=1e-6)
        np.testing.assert_allclose(d["top_scores"][i], pi[i, expected], rtol=1e-6)
    for w in range(pi.shape[1]):       # the search rule: pi_i(w) >= max_j pi_j(w) / 2
        cells = d["search_cells"][d["search_offsets"][w]:d["search_offsets"][w + 1]]
        expected = [i for i in range(pi.shape[0]) if pi[i, w] >= 0.5 * pi[:, w].max()]
        assert cells.tolist() == expected
    assert d["vocabulary"] == fitted["words"] and d["n_documents"] == 0


def test_relevance_is_the_default(fitted):
    """The cells rank their words by LDAvis' relevance; the sizes stay pi."""
    grid = fitted["grid"]
    d = map_data(grid, feature_names=fitted["words"], n_words=4)
    pi = grid.pi_.reshape(-1, grid.pi_.shape[-1]).astype(np.float64)
    r = countgrid.grid.word_relevance(pi)
    assert d["weighting"] == "relevance"
    assert d["relevance_lambda"] == countgrid.grid.RELEVANCE_LAMBDA
    for i in range(pi.shape[0]):
        expected = sorted(range(pi.shape[1]), key=lambda z: (-r[i, z], z))[:4]
        assert d["top_words"][i].tolist() == expected
        np.testing.assert_allclose(d["top_weights"][i], pi[i, expected], rtol=1e-6)
        np.testing.assert_allclose(np.log(d["top_scores"][i]), r[i, expected], atol=1e-6)
    np.testing.assert_array_equal(d["top_words"].reshape(grid.pi_.shape[:-1] + (4,)),
                                  grid.top_words(4))
    with pytest.raises(ValueError, match="idf=True"):
        map_data(grid, fitted["X"], idf=True, weighting="lift")


def test_idf_weighting(fitted):
    grid, X = fitted["grid"], fitted["X"]
    d = map_data(grid, X, n_words=3, idf=True)
    df = (X > 0).sum(axis=0)
    idf = np.log((1 + len(X)) / (1 + df)) + 1
    wts = grid.pi_.reshape(-1, X.shape[1]) * idf
    assert d["top_words"][5].tolist() == sorted(range(X.shape[1]),
                                                 key=lambda z: (-wts[5, z], z))[:3]
    assert d["weighting"] == "idf" and d["idf"]
    e = map_data(grid, X, n_words=3, weighting="idf")
    np.testing.assert_array_equal(e["top_words"], d["top_words"])
    with pytest.raises(ValueError, match="idf"):
        map_data(grid, idf=True)


def test_truncated_posteriors(fitted):
    grid, X = fitted["grid"], fitted["X"]
    d = map_data(grid, X)
    Q = grid.transform(X).astype(np.float64)
    off, pos, q = d["doc_offsets"], d["doc_positions"], d["doc_posteriors"]
    assert len(off) == len(X) + 1 and off[0] == 0
    for t in range(len(X)):
        p, v = pos[off[t]:off[t + 1]], q[off[t]:off[t + 1]].astype(np.float64)
        np.testing.assert_allclose(v, Q[t, p], rtol=1e-6)
        assert np.all(np.diff(v) <= 0)
        # the kept entries are the largest, and the fewest holding POSTERIOR_MASS (or the cap)
        assert v[-1] >= np.delete(Q[t], p).max() * (1 - 1e-6)
        assert v.sum() >= POSTERIOR_MASS * (1 - 1e-6) or len(v) == MAX_POSITIONS
        assert len(v) == 1 or v[:-1].sum() < POSTERIOR_MASS * (1 + 1e-6)
    np.testing.assert_array_equal(
        np.stack(np.unravel_index(d["doc_map"], (10, 13)), axis=1), grid.positions(X))


def test_page_ranking_agrees_with_documents_near(fitted):
    grid, X = fitted["grid"], fitted["X"]
    d = map_data(grid, X)
    Q = grid.transform(X).astype(np.float64)
    C = depth_reference(Q, (10, 13), (3, 4))
    ll = map_loglik_reference(X, grid.h_.reshape(130, -1), Q)
    np.testing.assert_allclose(d["doc_loglik"], ll, rtol=1e-6)      # float32
    np.testing.assert_array_equal(d["rank_depth"], window_depth((3, 4)).ravel())
    for cell in [(0, 0), (4, 7), (9, 12)]:
        idx, scores = rank_documents(d, cell, n_documents=15)
        ref_idx, ref_scores = grid.documents_near(X, cell, n_documents=15)
        # truncation drops at most 1 - POSTERIOR_MASS of each posterior (or the tail
        # beyond MAX_POSITIONS): the k-th scores agree to that, and so do the documents'
        # exact scores
        tol = 1 - POSTERIOR_MASS + 1e-6
        np.testing.assert_allclose(scores, ref_scores, atol=tol)
        flat = np.ravel_multi_index(cell, (10, 13))
        np.testing.assert_allclose(C[idx, flat], scores, atol=tol)
        assert len(set(idx) ^ set(ref_idx)) <= 4
        # the page's own rule on its truncated posteriors, by brute force
        trunc = np.zeros_like(Q)
        for t in range(len(X)):
            sl = slice(d["doc_offsets"][t], d["doc_offsets"][t + 1])
            trunc[t, d["doc_positions"][sl]] = d["doc_posteriors"][sl]
        Ct = depth_reference(trunc, (10, 13), (3, 4))[:, flat]
        expected = [t for t in depth_ranking_reference(Ct, d["doc_loglik"], len(X))
                    if Ct[t] > 0][:15]
        assert idx.tolist() == expected


def test_metadata_colourings_are_coverage_weighted(fitted):
    grid, X, meta = fitted["grid"], fitted["X"], fitted["meta"]
    d = map_data(grid, X, metadata=meta, color_by="topic")
    cols = {c["name"]: c for c in d["colorings"]}
    S = coverage_reference(grid.transform(X).astype(np.float64), (10, 13), (3, 4))
    cat = cols["topic"]
    assert cat["kind"] == "categorical" and cat["levels"] == ["alpha", "beta", "gamma"]
    Y = np.stack([meta["topic"] == lev for lev in cat["levels"]], axis=1).astype(float)
    P = (S.T @ Y) / S.sum(axis=0)[:, None]
    np.testing.assert_allclose(cat["values"], P, rtol=1e-5, atol=1e-6)
    assert cat["counts"].tolist() == [80, 80, 80]
    con = cols["length"]
    mean = (S.T @ meta["length"]) / S.sum(axis=0)
    np.testing.assert_allclose(con["values"], mean, rtol=1e-5)
    assert con["vmin"] == pytest.approx(mean.min(), rel=1e-6)
    # a grid fitted on three topics separates them: some cells are mostly one topic
    assert P.max() > 0.8


def test_many_levels_are_lumped(fitted):
    grid, X = fitted["grid"], fitted["X"]
    labels = np.array([f"L{i % 60:02d}" for i in range(len(X))])
    labels[:30] = "L07"                                    # the most frequent level
    d = map_data(grid, X, metadata={"many": labels, "flag": np.arange(len(X)) % 2 == 0})
    many = d["colorings"][0]
    assert len(many["levels"]) == 50 and many["levels"][-1] == "other" and many["lumped"]
    assert "L07" in many["levels"] and many["levels"][:-1] == sorted(many["levels"][:-1])
    assert many["counts"].sum() == len(X)
    assert many["colors"].shape == (50, 3) and many["colors"][-1].tolist() == [150] * 3
    assert len({tuple(c) for c in many["colors"].tolist()}) == 50
    assert d["colorings"][1]["kind"] == "categorical"
    assert d["colorings"][1]["levels"] == ["False", "True"]
    assert not d["colorings"][1]["lumped"]
    assert d["colorings"][1]["colors"].tolist() == [[0, 114, 178], [213, 94, 0]]


def test_levels_are_shown_in_natural_order(fitted):
    """Numbers in level names order by value: releases 3.5 before 3.10, group 2 before 10
    (the legend listed 3.10.0a1 before 3.5.0b1)."""
    grid, X = fitted["grid"], fitted["X"]
    names = ["3.10.0a1", "3.5.0b1", "3.9.1", "group 10", "group 2", "Group 3"]
    labels = np.array([names[i % len(names)] for i in range(len(X))])
    col = map_data(grid, X, metadata={"r": labels}, color_by="r")["colorings"][0]
    assert col["levels"] == ["3.5.0b1", "3.9.1", "3.10.0a1", "Group 3", "group 2",
                             "group 10"]
    for level, count in zip(col["levels"], col["counts"].tolist()):
        assert count == (labels == level).sum()
    assert sorted(["a10", "a9", "a", "b1", "a09x"], key=natural_key) == \
        ["a", "a9", "a09x", "a10", "b1"]


def test_42_levels_each_get_a_colour_and_levels_choose(fitted):
    grid, X = fitted["grid"], fitted["X"]
    labels = np.array([f"cat{i % 42:02d}" for i in range(len(X))])
    d = map_data(grid, X, metadata={"c": labels}, color_by="c")
    col = d["colorings"][0]
    assert len(col["levels"]) == 42 and not col["lumped"] and "other" not in col["levels"]
    assert len({tuple(c) for c in col["colors"].tolist()}) == 42
    e = map_data(grid, X, metadata={"c": labels}, color_by="c", levels=["cat05", "cat01"])
    col = e["colorings"][0]
    assert col["levels"] == ["cat05", "cat01", "other"] and col["lumped"]
    assert col["counts"].tolist() == [(labels == "cat05").sum(), (labels == "cat01").sum(),
                                      len(X) - (labels == "cat05").sum()
                                      - (labels == "cat01").sum()]
    with pytest.raises(ValueError, match="'cat99' is not a level"):
        map_data(grid, X, metadata={"c": labels}, color_by="c", levels=["cat99"])
    with pytest.raises(ValueError, match="levels choose"):
        map_data(grid, X, metadata={"c": labels}, levels=["cat01"])
    with pytest.raises(ValueError, match="numeric"):
        map_data(grid, X, metadata={"n": np.arange(len(X))}, color_by="n", levels=["1"])


def test_classifier_label_embedding(fitted):
    X, topic = fitted["X"], fitted["topic"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = countgrid.CountingGridClassifier((8, 8), (3, 3), n_iter=5, random_state=0)
        clf.fit(X, np.array(["a", "b", "c"])[topic])
    d = map_data(clf, X, color_by="label embedding")
    col = d["colorings"][0]
    assert col["name"] == "label embedding" and col["levels"] == ["a", "b", "c"]
    g = clf.gamma_.reshape(64, 3)
    np.testing.assert_allclose(col["values"], g / g.sum(axis=1, keepdims=True), rtol=1e-5)
    assert d["extent"].tolist() == [8, 8]


def test_sampling_is_seeded(fitted):
    grid, X = fitted["grid"], fitted["X"]
    a = map_data(grid, X, titles=fitted["titles"], max_docs=50, random_state=3)
    b = map_data(grid, sp.csr_matrix(X), titles=fitted["titles"], max_docs=50, random_state=3)
    c = map_data(grid, X, max_docs=50, random_state=4)
    assert a["n_documents"] == 50 and a["n_documents_total"] == len(X)
    np.testing.assert_array_equal(a["doc_index"], b["doc_index"])
    assert not np.array_equal(a["doc_index"], c["doc_index"])
    assert a["titles"] == [fitted["titles"][i] for i in a["doc_index"]]
    # a float32 grid (the default): dense input may take the BLAS path, sparse the CSR
    # kernel; they agree to float32 rounding
    np.testing.assert_allclose(a["doc_posteriors"], b["doc_posteriors"], rtol=1e-4,
                               atol=1e-7)
    assert map_data(grid, X, max_docs=10**6)["n_documents"] == len(X)


class FakeCorpus:
    def __init__(self, f):
        self.counts = sp.csr_matrix(f["X"])
        self.vocabulary = f["words"]
        self.ids = [f"id-{i}" for i in range(len(f["X"]))]
        self.titles, self.snippets, self.links = f["titles"], f["snippets"], None
        self.metadata = f["meta"]


def test_corpus_fills_the_arguments(fitted):
    d = map_data(fitted["grid"], corpus=FakeCorpus(fitted), titles=["t"] * len(fitted["X"]))
    assert d["vocabulary"] == fitted["words"] and d["ids"][3] == "id-3"
    assert d["titles"][0] == "t" and d["links"] is None
    assert [c["name"] for c in d["colorings"]] == ["topic", "length"]


def test_bad_arguments(fitted):
    grid, X = fitted["grid"], fitted["X"]
    with pytest.raises(ValueError, match="titles"):
        map_data(grid, X, titles=["a"])
    with pytest.raises(ValueError, match="pass X"):
        map_data(grid, titles=["a"])
    with pytest.raises(ValueError, match="feature_names"):
        map_data(grid, feature_names=["a", "b"])
    with pytest.raises(ValueError, match="color_by"):
        map_data(grid, X, metadata=fitted["meta"], color_by="nope")
    with pytest.raises(ValueError, match="metadata"):
        map_data(grid, X, metadata={"x": np.zeros(3)})
    with pytest.raises(TypeError, match="metadata"):
        map_data(grid, X, metadata=[1, 2])
    with pytest.raises(ValueError, match="n_words"):
        map_data(grid, n_words=0)
    with pytest.raises(TypeError, match="max_docs"):
        map_data(grid, X, max_docs=2.5)
    with pytest.raises(ValueError):
        map_data(grid, X[:, :5])
    with pytest.raises(NotFittedError):
        map_data(countgrid.CountingGrid((4, 4), (2, 2)))
    with pytest.raises(TypeError, match="CountingGrid"):
        map_data(countgrid.PLSA(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g3 = countgrid.CountingGrid((3, 3, 3), (2, 2, 2), n_iter=2).fit(X)
        g1 = countgrid.CountingGrid((9,), (2,), n_iter=2).fit(X)
    for g in (g3, g1):
        with pytest.raises(ValueError, match="2-D"):
            map_data(g, X)
    with pytest.raises(ValueError, match="data_format"):
        write_html(grid, "never.html", data_format="xml")


@pytest.mark.parametrize("data_format", ["json", "gzip"])
def test_page_is_self_contained_and_carries_the_data(fitted, tmp_path, data_format):
    grid, X = fitted["grid"], fitted["X"]
    kw = dict(feature_names=fitted["words"], titles=fitted["titles"],
              snippets=["</script><!-- {{JS}} \u00e9"] * len(X), metadata=fitted["meta"],
              title="A <map> & {{DATA}}")
    path = write_html(grid, tmp_path / "m.html", X, data_format=data_format, **kw)
    page = path.read_text("utf-8")
    assert page.count("</script>") == 3 and "<title>A &lt;map&gt; &amp; {{DATA}}</title>" in page
    # the map part before the script, the documents part after it (read after the first
    # frame); the titles and snippets travel only in the latter
    head, script, docs = (page.index(s) for s in ('id="cg-data"', "<script>\n",
                                                    'id="cg-documents"'))
    assert head < script < docs
    if data_format == "json":
        assert fitted["titles"][0] not in page[:docs] and fitted["titles"][0] in page[docs:]
    # nothing is fetched: no external script, style sheet, image or font
    assert not re.search(r'<(script|link|img|iframe)[^>]+(src|href)=', page)
    assert "@import" not in page and "url(http" not in page
    got = decode(page)
    d = map_data(grid, X, **kw)
    assert got["snippets"][0] == "</script><!-- {{JS}} \u00e9"
    assert got["doc_positions"] == d["doc_positions"].tolist()
    assert got["doc_posteriors"] == d["doc_posteriors"].tolist()       # float32, bit-exact
    assert got["colorings"][0]["values"] == d["colorings"][0]["values"].ravel().tolist()
    assert got["extent"] == [10, 13]
    # deterministic bytes, and the method is the function
    again = grid.to_html(tmp_path / "n.html", X, data_format=data_format, **kw)
    assert again.read_bytes() == path.read_bytes()


def test_auto_format_by_size(fitted):
    small = map_data(fitted["grid"])
    assert encode_payload(small)[0] == "json"
    big = dict(small, snippets=["x" * 1000] * 400)
    assert encode_payload(big)[0] == "gzip"


# ------------------------------------------------- hostile inputs (tests/hostile, issue 11)
def test_write_html_refuses_paths_that_are_no_file_name(fitted, tmp_path):
    import io

    for bad, exc in ((None, TypeError), (5, TypeError), (io.StringIO(), TypeError),
                     ("", ValueError), (".", ValueError)):
        with pytest.raises(exc, match="path"):
            write_html(fitted["grid"], bad)
        if bad is None:     # to_html() without a path returns the page (test_notebook.py)
            continue
        with pytest.raises(exc, match="path"):
            fitted["grid"].to_html(bad)


def test_map_data_arguments_of_the_wrong_kind_are_named(fitted):
    grid, X = fitted["grid"], fitted["X"]
    with pytest.raises(TypeError, match="corpus must be a countgrid.text.Corpus"):
        map_data(grid, corpus=object())
    with pytest.raises(TypeError, match="corpus must be"):
        map_data(grid, corpus={"counts": X})
    with pytest.raises(TypeError, match="ids must be a sequence"):
        map_data(grid, X, ids=5)
    with pytest.raises(ValueError, match="random_state"):
        map_data(grid, X, max_docs=3, random_state=-1)


@pytest.mark.parametrize("data_format", ["json", "gzip"])
def test_strings_that_utf8_cannot_encode_become_replacement_characters(fitted, tmp_path,
                                                                       data_format):
    # a corpus read from files whose names are not UTF-8 has ids like "\udcff0.txt"
    grid, X = fitted["grid"], fitted["X"]
    n = X.shape[0]
    path = write_html(grid, tmp_path / "m.html", X, title="map \udcff",
                      titles=[f"t\ud800{i}" for i in range(n)],
                      ids=[f"\udcff{i}.txt" for i in range(n)], data_format=data_format)
    page = path.read_text(encoding="utf-8")
    assert "map \ufffd" in page
    if data_format == "json":
        assert "t\ufffd0" in page and "\ufffd0.txt" in page


def test_rank_documents_refuses_a_list_length_that_is_not_a_positive_int():
    X = np.random.default_rng(0).poisson(1.0, size=(30, 12))
    grid = countgrid.CountingGrid((5, 5), (2, 2), n_iter=2, tol=0, random_state=0).fit(X)
    data = map_data(grid, X)
    assert len(rank_documents(data, (0, 0), n_documents=3)[0]) <= 3
    for bad, err in ((0, ValueError), (-5, ValueError), (2.5, TypeError), (True, TypeError)):
        with pytest.raises(err, match="n_documents"):
            rank_documents(data, (0, 0), n_documents=bad)


@pytest.mark.parametrize("k", [1, 3, 7])
@pytest.mark.parametrize("weighted", [False, True])
def test_top_words_by_block_is_the_whole_table_ranking(k, weighted, monkeypatch):
    """The map's top words, taken a few cells at a time, are those of the whole table:
    descending pi * f, ties by lower word (ties planted)."""
    from countgrid.grid import _words
    from countgrid.maps._data import _top_words_by_block

    rng = np.random.default_rng(k)
    pi = rng.dirichlet(np.ones(7), size=23).astype(np.float32)
    pi[:, 5] = pi[:, 2]                       # ties
    f = rng.uniform(0.5, 2.0, 7) if weighted else None
    scores = pi.astype(np.float64) * (1.0 if f is None else f)
    want = np.array([sorted(range(7), key=lambda w: (-scores[i, w], w))[:k]
                     for i in range(23)])
    for block in (1, 7, 30, 1 << 22):
        monkeypatch.setattr(_words, "_TOP_WORDS_BLOCK", block)
        top, tops, topw = _top_words_by_block(pi, f, k)
        np.testing.assert_array_equal(top, want)
        np.testing.assert_array_equal(tops, np.take_along_axis(scores, want, axis=1))
        np.testing.assert_array_equal(topw, np.take_along_axis(pi.astype(np.float64), want,
                                                               axis=1))


def test_posteriors_truncated_a_few_rows_at_a_time_give_the_same_page(fitted, monkeypatch):
    """The map truncates each block of posteriors a few rows at a time (bounded scratch;
    issue 22, memory): the page is the same, bit for bit (the grid has 130 cells, rows
    keep up to MAX_POSITIONS of them)."""
    from countgrid.maps import _data
    from countgrid.maps._html import render_html

    grid, X = fitted["grid"], fitted["X"]
    kw = dict(feature_names=fitted["words"], metadata=fitted["meta"], titles=fitted["titles"])
    whole = render_html(map_data(grid, X, **kw))
    for rows in (1, 7):
        monkeypatch.setattr(_data, "_TRUNCATE_ELEMENTS", rows * MAX_POSITIONS)
        assert render_html(map_data(grid, X, **kw)) == whole
