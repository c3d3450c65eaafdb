"""Tests of countgrid.datasets (bundled demo corpus and the .npz reader)."""
import os
from importlib import resources

import numpy as np
import pytest
import scipy.sparse as sp

from countgrid.datasets import Dataset, load_news20_3class, load_npz_corpus
from repo_data import data_path

# the real dataset in data/ of the repository (data/README.md; not in the sdist)
NEWS20_DIFFERENT = data_path("news20_different.npz", must_exist=False)


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
