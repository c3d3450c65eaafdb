"""Tests of countgrid.datasets (bundled demo corpus, the .npz reader and the loader of
the repository's dated corpus, Python's changelog)."""
import importlib.util
import os
import shutil
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from countgrid._utils.dates import parse_dates
from countgrid.datasets import Dataset, load_news20_3class, load_npz_corpus
from countgrid.text import Corpus, load_python_changelog
from repo_data import checksums, data_path, sha256

# the real dataset in data/ of the repository (data/README.md; not in the sdist)
NEWS20_DIFFERENT = data_path("news20_different.npz", must_exist=False)
PYTHON_CHANGELOG = data_path("python_changelog.npz", must_exist=False)
changelog = pytest.mark.skipif(not os.path.exists(PYTHON_CHANGELOG),
                               reason="data/ holds no datasets in this copy (sdist)")
SECTIONS = ["Build", "C API", "Core and Builtins", "Documentation", "IDLE", "Library",
            "Security", "Tests", "Tools/Demos", "Windows", "macOS"]


def _bundled_path():
    return resources.files("countgrid").joinpath("data", "news20_3class.npz")


def test_news20_3class_shapes_and_dtypes():
    d = load_news20_3class()
    X, y, words, labels = d  # unpacks as a 4-tuple
    assert isinstance(d, Dataset)
    assert sp.issparse(X) and X.format == "csr" and X.has_sorted_indices
    assert X.shape == (2780, 2500)
    assert X.dtype == np.float64
    assert X.indices.dtype == np.int32
    assert (X.data > 0).all() and np.array_equal(X.data, np.round(X.data))
    assert (np.asarray(X.sum(axis=1)).ravel() > 0).all()  # no empty documents
    assert y.shape == (2780,) and y.dtype == np.int64
    assert np.bincount(y).tolist() == [799, 994, 987]
    assert list(labels) == ["alt.atheism", "rec.sport.baseball", "sci.space"]
    assert words.shape == (2500,) and words.dtype.kind == "U"
    assert len(set(words.tolist())) == 2500
    assert isinstance(d.description, str) and "20 Newsgroups" in d.description
    assert set(d.extras) == {"split", "split_names"}
    assert d.extras["split"].shape == (2780,)
    assert "2780 x 2500" in repr(d).replace(" sparse", "")


def test_news20_3class_integer_counts():
    X = load_news20_3class(dtype=None).X
    assert X.dtype == np.uint16
    assert np.array_equal(X.toarray(), load_news20_3class().X.toarray())


def test_vocabulary_is_pruned():
    words = set(load_news20_3class().feature_names.tolist())
    for junk in ("the", "and", "writes", "edu", "article", "com", "don"):
        assert junk not in words
    for topical in ("god", "baseball", "space", "orbit", "pitcher", "atheism"):
        assert topical in words


def test_bundled_file_is_small_and_pickle_free():
    res = _bundled_path()
    data = res.read_bytes()
    assert len(data) < 1.5e6
    import io

    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        for key in z.files:
            assert z[key].dtype.kind != "O", key
        assert {"data", "indices", "indptr", "shape", "y", "label_names", "feature_names",
                "description"} <= set(z.files)
    # Also readable by scipy's own reader, like the datasets in data/.
    with resources.as_file(res) as path:
        assert sp.load_npz(path).shape == (2780, 2500)


def test_load_npz_corpus_roundtrip(tmp_path):
    rng = np.random.default_rng(0)
    X = sp.random(20, 7, density=0.3, format="csr", random_state=0,
                  data_rvs=lambda n: rng.integers(1, 5, n))
    path = tmp_path / "c.npz"
    sp.save_npz(path, X)
    d = load_npz_corpus(path)
    assert d.y is None and d.feature_names is None and d.description == ""
    np.testing.assert_array_equal(d.X.toarray(), X.toarray())
    # With labels, names and an extra array, stored as plain arrays.
    z = dict(np.load(path, allow_pickle=False))
    z.update(y=np.arange(20) % 2, label_names=np.array(["a", "b"]),
             feature_names=np.array([f"w{i}" for i in range(7)]),
             description=np.array("toy"), sample_ids=np.arange(20))
    np.savez_compressed(path, **z)
    with open(path, "rb") as f:  # file objects work too
        d = load_npz_corpus(f, dtype=np.float32)
    assert d.X.dtype == np.float32
    assert d.y.tolist() == (np.arange(20) % 2).tolist()
    assert list(d.label_names) == ["a", "b"] and d.description == "toy"
    assert list(d.extras) == ["sample_ids"]


def test_load_npz_corpus_rejects_non_corpus(tmp_path):
    path = tmp_path / "bad.npz"
    np.savez(path, y=np.arange(3))
    with pytest.raises(ValueError, match="missing"):
        load_npz_corpus(path)


def test_load_npz_corpus_refuses_pickles(tmp_path):
    path = tmp_path / "obj.npz"
    sp.save_npz(path, sp.csr_matrix(np.eye(3)))
    z = dict(np.load(path, allow_pickle=False))
    z["y"] = np.array([{"a": 1}, None, 3], dtype=object)
    np.savez(path, **z)
    with pytest.raises(ValueError):
        load_npz_corpus(path)


@pytest.mark.skipif(not os.path.exists(NEWS20_DIFFERENT),
                    reason="data/ holds no datasets in this copy (sdist)")
def test_load_repository_corpus_matches_bundled_source():
    d = load_npz_corpus(NEWS20_DIFFERENT, dtype=None)
    assert d.X.shape == (2780, 27992)
    assert list(d.label_names) == list(load_news20_3class().label_names)
    assert "texts_utf8" in d.extras


def _save_parts(path, **over):
    X = sp.csr_matrix(np.array([[1, 0, 2], [0, 3, 0], [4, 0, 0]], dtype=np.float64))
    parts = dict(data=X.data, indices=X.indices, indptr=X.indptr, shape=np.array(X.shape),
                 format=np.array("csr"), y=np.array([0, 1, 0]))
    parts.update(over)
    np.savez(path, **{k: v for k, v in parts.items() if v is not None})
    return path


@pytest.mark.parametrize("over, match", [
    (dict(indices=np.array([0, 2, 7, 0])), r"c\.npz.*indices outside \[0, 3\)"),
    (dict(indptr=np.array([0, 2, 1, 4])), r"c\.npz.*indptr is not non-decreasing"),
    (dict(indptr=None), r"c\.npz.*\['indptr'\] are missing"),
    (dict(shape=np.array([10**12, 3])), r"c\.npz.*indptr has length 4"),
    (dict(shape=np.array([3, 3, 1])), r"c\.npz: shape must hold two integers"),
    (dict(format=np.array("coo")), r"c\.npz: unsupported sparse format 'coo'"),
    (dict(data=np.array([1.0, np.nan, 3.0, 4.0])), r"c\.npz: data contains NaN"),
    (dict(data=np.array([1, 2, 3, 4]).astype(complex)), r"c\.npz: data must be .* real"),
    (dict(y=np.array([0, 1])), r"c\.npz: y has shape \(2,\), expected \(3,\)"),
])
def test_load_npz_corpus_checks_every_part(tmp_path, over, match):
    with pytest.raises(ValueError, match=match):
        load_npz_corpus(_save_parts(tmp_path / "c.npz", **over))


def test_load_npz_corpus_keeps_signed_values_and_checks_arguments(tmp_path):
    # the microarray files of data/ hold signed intensities
    d = load_npz_corpus(_save_parts(tmp_path / "c.npz", data=np.array([1.0, -2.0, 3.0, 4.0])))
    assert d.X[0, 2] == -2.0
    with pytest.raises(TypeError, match="path must be"):
        load_npz_corpus(None)
    with pytest.raises(IsADirectoryError, match="is a directory"):
        load_npz_corpus(tmp_path)
    with pytest.raises(TypeError, match="dtype"):
        load_npz_corpus(tmp_path / "c.npz", dtype="nope")
    with pytest.raises(ValueError, match="dtype"):
        load_npz_corpus(tmp_path / "c.npz", dtype=complex)
    (tmp_path / "empty.npz").write_bytes(b"")
    with pytest.raises(ValueError, match="empty.npz is not a readable .npz corpus"):
        load_npz_corpus(tmp_path / "empty.npz")


# ------------------------------------------------------------------ Python's changelog
@changelog
def test_python_changelog_file_is_listed_and_pickle_free():
    assert sha256(PYTHON_CHANGELOG) == checksums()["python_changelog.npz"]
    assert os.path.getsize(PYTHON_CHANGELOG) < 3e6
    with np.load(PYTHON_CHANGELOG, allow_pickle=False) as z:
        for key in z.files:
            assert z[key].dtype.kind != "O", key
        assert {"data", "indices", "indptr", "shape", "format", "y", "label_names",
                "feature_names", "description", "texts_utf8", "texts_offsets", "sample_ids",
                "dates", "releases", "links"} == set(z.files)
        assert "PSF License" in str(z["description"])
        assert "python3.11-doc 3.11.2-6+deb12u9" in str(z["description"])
    d = load_npz_corpus(PYTHON_CHANGELOG, dtype=None)          # the generic reader too
    assert d.X.dtype == np.int32 and list(d.label_names) == SECTIONS


@changelog
def test_python_changelog_corpus():
    corpus = load_python_changelog(PYTHON_CHANGELOG)
    assert isinstance(corpus, Corpus)
    n, m = corpus.counts.shape
    assert (n, m) == (8442, 3620)
    assert corpus.vocabulary.shape == (m,) and len(set(corpus.vocabulary.tolist())) == m
    assert sorted(corpus.metadata) == ["date", "release", "section"]
    for key, values in corpus.metadata.items():
        assert values.shape == (n,) and values.dtype.kind == "U", key
    for field in (corpus.ids, corpus.titles, corpus.snippets, corpus.links):
        assert field.shape == (n,)
    assert len(set(corpus.ids.tolist())) == n
    # every row has words; counts are whole numbers
    assert (np.diff(corpus.counts.indptr) > 0).all()
    assert np.array_equal(corpus.counts.data, np.round(corpus.counts.data))
    # dates: ISO days, all parsed, in order, from 3.5.0a1 to 3.11.2
    when = parse_dates(corpus.metadata["date"], "date")
    assert not np.isnat(when).any() and (np.diff(when.astype(np.int64)) >= 0).all()
    assert corpus.metadata["date"][0] == "2015-02-08"
    assert corpus.metadata["date"][-1] == "2023-02-07"
    releases = corpus.metadata["release"]
    assert len(set(releases.tolist())) == 89
    assert {"3.5.0a1", "3.6.0rc1", "3.10.0b1", "3.11.0rc2", "3.11.2"} <= set(releases.tolist())
    assert set(releases[corpus.metadata["date"] == "2023-02-07"].tolist()) == {"3.11.2"}
    # sections
    section = corpus.metadata["section"]
    assert sorted(set(section.tolist())) == SECTIONS
    assert (section == "Library").sum() > (section == "Core and Builtins").sum() > 1000
    assert (section == "Security").sum() == 105
    # ids are issues (or RELEASE/SECTION/k), links go to the issue trackers
    assert all(i.startswith(("gh-", "bpo-")) or i.count("/") >= 2 for i in corpus.ids)
    assert all(link == "" or link.startswith(("https://github.com/python/cpython/issues/",
                                              "https://bugs.python.org/"))
               for link in corpus.links)
    first = corpus.ids.tolist().index("bpo-23285")
    assert corpus.snippets[first] == "PEP 475 - EINTR handling."
    assert corpus.links[first].endswith("bpo=23285")
    # the texts are whole and plain: no markup, no issue prefix
    assert max(len(t) for t in corpus.snippets) > 300
    assert not any(t.startswith(("gh-", "bpo-")) or "<code" in t or "&amp;" in t
                   for t in corpus.snippets)
    vocab = set(corpus.vocabulary.tolist())
    assert {"asyncio", "typing", "unicode", "windows", "idle", "openssl"} <= vocab
    assert not {"the", "fix", "patch", "python", "gh", "bpo"} & vocab


@changelog
def test_python_changelog_is_found_without_a_path(monkeypatch, tmp_path):
    monkeypatch.setenv("COUNTGRID_DATA_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"python_changelog\.npz does not exist.*"
                                                r"COUNTGRID_DATA_DIR"):
        load_python_changelog()
    shutil.copy(PYTHON_CHANGELOG, tmp_path / "python_changelog.npz")
    assert load_python_changelog().counts.shape == (8442, 3620)
    with open(PYTHON_CHANGELOG, "rb") as f:                        # a file object
        assert len(load_python_changelog(f)) == 8442


def test_python_changelog_rejects_another_corpus(tmp_path):
    path = _save_parts(tmp_path / "c.npz", label_names=np.array(["a", "b"]),
                       feature_names=np.array(["x", "y", "z"]))
    with pytest.raises(ValueError, match=r"c\.npz is not the Python changelog corpus: "
                                         r"arrays \['texts_utf8'"):
        load_python_changelog(path)


def _changelog_tool():
    path = Path(__file__).resolve().parent.parent / "tools" / "make_python_changelog.py"
    if not path.is_file():
        pytest.skip("tools/make_python_changelog.py not available (not a source checkout)")
    spec = importlib.util.spec_from_file_location("_cg_tool_make_python_changelog", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _release(title, date, sections):
    parts = [f'<section id="r"><h2>{title}<a class="headerlink" href="#r">\u00b6</a></h2>'
             f"<p><em>Release date: {date}</em></p>"]
    for name, items in sections:
        parts.append(f'<section id="s"><h3>{name}</h3><ul class="simple">'
                     + "".join(f"<li><p>{i}</p></li>" for i in items) + "</ul></section>")
    return "".join(parts) + "</section>"


def test_changelog_tool_parses_dedups_and_names():
    tool = _changelog_tool()
    link = '<a class="reference external" href="https://github.com/python/cpython/issues/{0}">' \
           'gh-{0}</a>'
    page = ('<section id="changelog"><h1>Changelog</h1>'
            + _release("Python 3.7.0 beta 1", "2018-01-30", [
                ("Library", [link.format(1) + ": Fix <code>os.stat()</code>\n  on &lt;Windows&gt;.",
                             link.format(2) + ": Second.", "No issue here."])])
            + _release("Python 3.6.5 final", "2018-03-28", [("Security", [
                link.format(1) + ": Fix <code>os.stat()</code> on &lt;Windows&gt;."])])
            + _release("Python 3.6.4 release candidate 1", "2017-12-05", [
                ("Library", [link.format(2) + ": First.",
                             "<ul><li><p>nested</p></li></ul>outer"])])
            + "</section><div><h3>Navigation</h3><ul><li>Not an entry</li></ul></div>")
    entries, n_releases, n_listed = tool.parse(page)
    assert (n_releases, n_listed) == (3, 6)
    texts, ids = tool.split_ids(entries)
    # oldest first; the backport listed twice is kept once, at its earliest listing
    assert texts == ["First.", "nestedouter", "Fix os.stat() on <Windows>.", "Second.",
                     "No issue here."]
    assert ids == ["gh-2", "3.6.4rc1/Library/1", "gh-1", "gh-2#2", "3.7.0b1/Library/1"]
    assert [e["release"] for e in entries] == ["3.6.4rc1", "3.6.4rc1", "3.7.0b1", "3.7.0b1",
                                               "3.7.0b1"]
    assert entries[2]["section"] == "Library" and entries[2]["date"] == "2018-01-30"
    assert entries[2]["link"] == "https://github.com/python/cpython/issues/1"
    assert tool.release_name("Python 3.11.2 final") == "3.11.2"
    assert tool.release_name("Python 3.5.0 alpha 1") == "3.5.0a1"
