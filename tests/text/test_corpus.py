"""countgrid.text.Corpus: construction checks, selection, the corpus file (save/load,
to_dict/from_dict) and vectorising raw text (from_texts)."""
import doctest
import json
import re
import sys
import warnings
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer

import countgrid
from countgrid.text import Corpus


def small(**kw):
    X = sp.csr_matrix(np.array([[2, 0, 1, 0], [0, 3, 0, 0], [1, 1, 1, 5]], dtype=float))
    args = dict(ids=["a", "b", "c"], titles=["A", "B", "C"], snippets=["sa", "sb", "sc"],
                links=["http://a", "", "http://c"],
                metadata={"year": [1999, 2004, 2010], "group": ["x", "y", "x"],
                          "score": [0.5, np.nan, 2.0], "flag": [True, False, True]},
                source="unit test")
    args.update(kw)
    return Corpus(X, ["cat", "dog", "fish", "émeu"], **args)


def assert_same(a, b):
    assert a.counts.shape == b.counts.shape
    assert a.counts.dtype == b.counts.dtype == np.float64
    for part in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(getattr(a.counts, part), getattr(b.counts, part))
    for name in ("vocabulary", "ids", "titles", "snippets"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype.kind == y.dtype.kind == "U"
        np.testing.assert_array_equal(x, y)
    assert (a.links is None) == (b.links is None)
    if a.links is not None:
        np.testing.assert_array_equal(a.links, b.links)
    assert list(a.metadata) == list(b.metadata)
    for k in a.metadata:
        assert a.metadata[k].dtype == b.metadata[k].dtype, k
        np.testing.assert_array_equal(a.metadata[k], b.metadata[k])
    assert a.source == b.source


# ---------------------------------------------------------------------------- construction
def test_attributes_are_plain_numpy():
    c = small()
    assert len(c) == c.n_documents == 3 and c.n_terms == 4
    assert isinstance(c.counts, sp.csr_matrix) and c.counts.dtype == np.float64
    assert c.counts.has_canonical_format
    for name in ("vocabulary", "ids", "titles", "snippets", "links"):
        assert getattr(c, name).dtype.kind == "U", name
    kinds = {k: v.dtype.kind for k, v in c.metadata.items()}
    assert kinds == {"year": "i", "group": "U", "score": "f", "flag": "b"}
    assert list(c.metadata) == ["year", "group", "score", "flag"]   # insertion order
    assert "3 documents x 4 terms" in repr(c)


def test_counts_become_canonical_csr():
    # duplicates, unsorted indices and an explicit zero
    X = sp.csr_matrix((np.array([1.0, 2.0, 0.0, 4.0]), np.array([2, 0, 1, 2]),
                       np.array([0, 4])), shape=(1, 3))
    c = Corpus(X, ["a", "b", "c"])
    assert c.counts.has_canonical_format
    np.testing.assert_array_equal(c.counts.toarray(), [[2.0, 0.0, 5.0]])
    assert c.counts.nnz == 2
    dense = Corpus(np.array([[0, 1], [2, 0]]), ["a", "b"])
    assert isinstance(dense.counts, sp.csr_matrix)
    assert Corpus(sp.coo_matrix(np.eye(2)), ["a", "b"]).counts.format == "csr"


def test_defaults():
    c = Corpus(np.eye(3), ["a", "b", "c"])
    assert c.ids.tolist() == ["0", "1", "2"] and c.titles.tolist() == ["0", "1", "2"]
    assert c.snippets.tolist() == ["", "", ""] and c.links is None
    assert c.metadata == {} and c.source == ""


def test_input_is_copied():
    ids = np.array(["a", "b"])
    year = np.array([1, 2])
    X = sp.csr_matrix(np.eye(2))
    c = Corpus(X, ["x", "y"], ids=ids, metadata={"year": year})
    ids[0], year[0], X.data[0] = "z", 9, 7.0
    assert c.ids[0] == "a" and c.metadata["year"][0] == 1 and c.counts[0, 0] == 1.0


@pytest.mark.parametrize("kw, exc, pattern", [
    (dict(counts=[[1, -1]]), ValueError, "counts"),
    (dict(counts=[[1, np.nan]]), ValueError, "counts contains NaN"),
    (dict(counts=[["a", "b"]]), TypeError, "counts"),
    (dict(vocabulary=["a"]), ValueError, "vocabulary has 1 entries, expected 2"),
    (dict(vocabulary=["a", 3]), TypeError, r"vocabulary\[1\] is int"),
    (dict(vocabulary="ab"), TypeError, "vocabulary must be a sequence of str"),
    (dict(vocabulary=["a", "a"]), ValueError, "vocabulary must be unique, but 'a'"),
    (dict(ids=["x", "x"]), ValueError, "ids must be unique, but 'x' appears 2 times"),
    (dict(ids=["x"]), ValueError, "ids has 1 entries, expected 2"),
    (dict(ids=[1, 2]), TypeError, r"ids\[0\] is int"),
    (dict(titles=["t"]), ValueError, "titles has 1 entries"),
    (dict(snippets=None, titles=[b"a", b"b"]), TypeError, "titles"),
    (dict(links=["u"]), ValueError, "links has 1 entries"),
    (dict(metadata=[1, 2]), TypeError, "metadata must be a dict"),
    (dict(metadata={"y": [1]}), ValueError, r"metadata\['y'\] has 1 entries, expected 2"),
    (dict(metadata={"y": [1, "a"]}), TypeError, r"metadata\['y'\] mixes str and numbers"),
    (dict(metadata={"y": [[1], [2]]}), TypeError, r"metadata\['y'\] must hold numbers"),
    (dict(metadata={"y": np.array([[1, 2]])}), ValueError, r"metadata\['y'\] must be 1-D"),
    (dict(metadata={"y": np.array([1j, 2j])}), TypeError, r"metadata\['y'\]"),
    (dict(metadata={"y": "ab"}), TypeError, r"metadata\['y'\]"),
    (dict(metadata={3: [1, 2]}), TypeError, "metadata names"),
    (dict(source=3), TypeError, "source must be a str"),
    (dict(ids=["a\x00", "b"]), ValueError, "NUL"),
])
def test_constructor_errors_name_the_argument(kw, exc, pattern):
    args = dict(counts=[[1, 0], [0, 1]], vocabulary=["a", "b"])
    args.update(kw)
    counts, vocabulary = args.pop("counts"), args.pop("vocabulary")
    with pytest.raises(exc, match=pattern):
        Corpus(counts, vocabulary, **args)


def test_metadata_with_missing_numbers_is_float():
    c = Corpus(np.eye(3), ["a", "b", "c"], metadata={"y": [1, None, 3.5]})
    assert c.metadata["y"].dtype == np.float64 and np.isnan(c.metadata["y"][1])


# ------------------------------------------------------------------------------- selection
def test_subset_keeps_rows_in_order_with_all_fields():
    c = small()
    s = c.subset([2, 0])
    np.testing.assert_array_equal(s.counts.toarray(), c.counts.toarray()[[2, 0]])
    assert s.ids.tolist() == ["c", "a"] and s.titles.tolist() == ["C", "A"]
    assert s.snippets.tolist() == ["sc", "sa"] and s.links.tolist() == ["http://c", "http://a"]
    assert s.metadata["group"].tolist() == ["x", "x"] and s.metadata["year"].tolist() == [
        2010, 1999]
    np.testing.assert_array_equal(s.vocabulary, c.vocabulary)
    assert s.source == c.source
    assert c.subset([-1]).ids.tolist() == ["c"]
    assert c.subset(np.array([True, False, True])).ids.tolist() == ["a", "c"]


@pytest.mark.parametrize("indices, exc, pattern", [
    ([], ValueError, "selects no document"),
    ([3], ValueError, "out of range"),
    ([-4], ValueError, "out of range"),
    ([0, 0], ValueError, "repeats"),
    ([0.5], TypeError, "integers or a boolean mask"),
    (np.array([True, False]), ValueError, "boolean mask must have shape"),
    ([[0, 1]], ValueError, "1-D"),
])
def test_subset_errors(indices, exc, pattern):
    with pytest.raises(exc, match=pattern):
        small().subset(indices)


def test_sample_is_seeded_sorted_and_at_most_n():
    c = Corpus(sp.identity(50, format="csr"), [f"t{i}" for i in range(50)])
    a, b = c.sample(10, random_state=3), c.sample(10, random_state=3)
    assert len(a) == 10 and a.ids.tolist() == b.ids.tolist()
    rows = [int(i) for i in a.ids]
    assert rows == sorted(rows) and len(set(rows)) == 10
    assert c.sample(10, random_state=4).ids.tolist() != a.ids.tolist()
    # each sampled row is the original row
    np.testing.assert_array_equal(a.counts.toarray(), c.counts.toarray()[rows])
    assert len(c.sample(1000, random_state=0)) == 50
    assert c.sample(50).ids.tolist() == c.ids.tolist()


@pytest.mark.parametrize("n, exc", [(0, ValueError), (-1, ValueError), (2.5, TypeError),
                                    (True, TypeError), ("3", TypeError)])
def test_sample_errors(n, exc):
    with pytest.raises(exc, match="n must"):
        small().sample(n)


# ------------------------------------------------------------------------------ the file
def test_save_load_round_trip_is_exact(tmp_path):
    c = small()
    path = tmp_path / "c.npz"
    c.save(path)
    assert_same(c, Corpus.load(path))
    assert_same(c, Corpus.load(str(path)))
    with open(path, "rb") as f:
        assert_same(c, Corpus.load(f))


def test_round_trip_non_integral_counts_and_no_links(tmp_path):
    X = sp.csr_matrix(np.array([[0.5, 0, 1e-300], [0, 3.25, 0]]))
    c = Corpus(X, ["α", "β", "γ"], ids=["x/1.txt", "x/2.txt"])
    c.save(tmp_path / "c.npz")
    d = Corpus.load(tmp_path / "c.npz")
    assert_same(c, d)
    with np.load(tmp_path / "c.npz", allow_pickle=False) as z:
        assert z["counts_data"].dtype == np.float64


def test_file_is_compressed_int32_no_pickle_and_versioned(tmp_path):
    rng = np.random.default_rng(0)
    X = sp.random(300, 2000, density=0.02, random_state=1, format="csr")
    X.data = np.ceil(X.data * 5)
    c = Corpus(X, [f"w{i}" for i in range(2000)], snippets=["hello world " * 20] * 300)
    c.save(tmp_path / "c.npz")
    with zipfile.ZipFile(tmp_path / "c.npz") as zf:
        assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in zf.infolist())
    with np.load(tmp_path / "c.npz", allow_pickle=False) as z:
        assert z["counts_data"].dtype == np.int32
        assert all(z[k].dtype.kind != "O" for k in z.files)
        header = json.loads(str(z["header"]))
    assert header["format"] == "countgrid-corpus" and header["format_version"] == 1
    assert re.fullmatch("[0-9a-f]{64}", header["sha256"])
    assert_same(c, Corpus.load(tmp_path / "c.npz"))
    del rng


def test_to_dict_from_dict_and_keys_are_prefix_free():
    meta = {f"m{i}": np.arange(3) * i for i in range(12)}
    c = small(metadata=meta)
    d = c.to_dict()
    assert all(isinstance(v, np.ndarray) and v.dtype.kind != "O" for v in d.values())
    keys = sorted(d)
    assert not any(b.startswith(a) for a in keys for b in keys if a != b)
    assert_same(c, Corpus.from_dict(d))
    assert_same(c, Corpus.from_dict({"x/" + k: v for k, v in d.items()} and d))
    # embedded under a prefix, as a model file would, and read back
    embedded = {"corpus/" + k: v for k, v in d.items()}
    assert_same(c, Corpus.from_dict({k[len("corpus/"):]: v for k, v in embedded.items()}))


def _write_npz(path, arrays):
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **arrays)


def test_damaged_and_foreign_files_are_named(tmp_path):
    c = small()
    d = c.to_dict()
    # a changed count: checksum
    bad = dict(d)
    bad["counts_data"] = d["counts_data"].copy()
    bad["counts_data"][0] += 1
    _write_npz(tmp_path / "bad.npz", bad)
    with pytest.raises(ValueError, match=r"bad\.npz is damaged: its SHA-256"):
        Corpus.load(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="damaged"):
        Corpus.from_dict(bad)
    # a newer version
    header = json.loads(str(d["header"]))
    header["format_version"] = 2
    newer = dict(d, header=np.array(json.dumps(header)))
    _write_npz(tmp_path / "newer.npz", newer)
    with pytest.raises(ValueError, match="format version 2"):
        Corpus.load(tmp_path / "newer.npz")
    # an extra array
    with pytest.raises(ValueError, match="damaged|unexpected"):
        Corpus.from_dict(dict(d, extra=np.zeros(2)))
    # not a corpus
    _write_npz(tmp_path / "other.npz", {"a": np.zeros(3)})
    with pytest.raises(ValueError, match=r"other\.npz is not a countgrid corpus file"):
        Corpus.load(tmp_path / "other.npz")
    # truncated
    c.save(tmp_path / "full.npz")
    raw = (tmp_path / "full.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match=r"cut\.npz is not a readable \.npz file"):
        Corpus.load(tmp_path / "cut.npz")
    (tmp_path / "text.npz").write_text("hello")
    with pytest.raises(ValueError, match=r"text\.npz"):
        Corpus.load(tmp_path / "text.npz")
    with pytest.raises(FileNotFoundError):
        Corpus.load(tmp_path / "missing.npz")
    with pytest.raises(TypeError, match="path must be"):
        Corpus.load(3)
    with pytest.raises(TypeError, match="mapping"):
        Corpus.from_dict([1, 2])


def test_crafted_consistent_checksum_with_corrupt_indices_is_refused():
    """A file whose checksum matches but whose CSR indices point outside the matrix."""
    from countgrid.io import _digest

    d = small().to_dict()
    header = json.loads(str(d.pop("header")))
    d["counts_indices"] = d["counts_indices"].copy()
    d["counts_indices"][0] = 999
    header["sha256"] = _digest({k: v for k, v in header.items() if k != "sha256"}, d)
    d["header"] = np.array(json.dumps(header))
    with pytest.raises(ValueError, match="not a consistent corpus"):
        Corpus.from_dict(d)


# ---------------------------------------------------------------------------- from_texts
TEXTS = ["The quick brown fox jumps over the lazy dog.",
         "A quick brown dog outpaces a quick fox!",
         "Lazy dogs sleep; foxes hunt at night.",
         "Night falls over the quiet forest and the fox.",
         "Brown leaves fall in the forest at night.",
         "The dog and the fox are friends in 2024."]


def test_from_texts_matches_countvectorizer_pruning():
    pattern = r"(?u)\b[^\W\d_]\w+\b"
    for kw in (dict(min_df=2, max_df=0.5), dict(min_df=1, max_df=1.0),
               dict(min_df=0.3, max_df=4), dict(min_df=1, max_df=1.0, max_features=3)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")    # max_features=3 leaves a document empty
            c = Corpus.from_texts(TEXTS, **kw)
        vec = CountVectorizer(stop_words="english", token_pattern=pattern, **kw)
        ref = vec.fit_transform(TEXTS)
        np.testing.assert_array_equal(c.vocabulary, vec.get_feature_names_out())
        np.testing.assert_array_equal(c.counts.toarray(), ref.toarray())
    assert "2024" not in Corpus.from_texts(TEXTS, min_df=1, max_df=1.0).vocabulary
    assert "2024" in Corpus.from_texts(TEXTS, min_df=1, max_df=1.0,
                                       token_pattern=r"(?u)\b\w\w+\b").vocabulary


def test_from_texts_fields():
    c = Corpus.from_texts(["First line\nsecond   line  here", "\n\n  Title two  \nbody " * 50],
                          min_df=1, max_df=1.0, links=["u1", "u2"],
                          metadata={"n": [1, 2]})
    assert c.ids.tolist() == ["0", "1"]
    assert c.titles.tolist() == ["First line", "Title two"]
    assert c.snippets[0] == "First line second line here"
    assert len(c.snippets[1]) <= 300 and c.snippets[1].endswith("\u2026")
    assert "  " not in c.snippets[1]
    assert c.links.tolist() == ["u1", "u2"] and c.metadata["n"].tolist() == [1, 2]
    assert c.source == "texts"
    c2 = Corpus.from_texts((t for t in TEXTS), ids=list("abcdef"), titles=list("ABCDEF"))
    assert c2.ids.tolist() == list("abcdef") and c2.titles.tolist() == list("ABCDEF")


def test_fixed_vocabulary_maps_new_texts():
    model = Corpus.from_texts(TEXTS)
    vocab = model.vocabulary[::-1].copy()          # any order is kept
    new = ["The fox, the FOX and a dog!", "forest forest night unknownword"]
    c = Corpus.from_texts(new, vocabulary=vocab)
    np.testing.assert_array_equal(c.vocabulary, vocab)
    ref = CountVectorizer(vocabulary=list(vocab)).transform(new).toarray()
    np.testing.assert_array_equal(c.counts.toarray(), ref)
    j = {t: i for i, t in enumerate(vocab)}
    if "fox" in j:
        assert c.counts[0, j["fox"]] == 2
    # a vocabulary term that is a stop word is counted: the vocabulary decides
    c = Corpus.from_texts(["the cat and the hat"], vocabulary=["the", "cat"])
    np.testing.assert_array_equal(c.counts.toarray(), [[2.0, 1.0]])


def test_fixed_vocabulary_warnings_and_errors():
    with pytest.warns(UserWarning, match="capital letters"):
        Corpus.from_texts(["Cat cat"], vocabulary=["Cat", "cat"])
    with pytest.warns(UserWarning, match="never counted.*'x'"):
        Corpus.from_texts(["x marks the spot"], vocabulary=["x", "spot"])
    with pytest.raises(ValueError, match="none of the 2 documents contains a word of the "
                                         "vocabulary"):
        Corpus.from_texts(["nothing here", "nor here"], vocabulary=["cat", "dog"])
    with pytest.raises(ValueError, match="vocabulary must be unique"):
        Corpus.from_texts(["a cat"], vocabulary=["cat", "cat"])
    with pytest.raises(ValueError, match="vocabulary is empty"):
        Corpus.from_texts(["a cat"], vocabulary=[])


def test_empty_documents_are_kept_and_reported():
    texts = TEXTS + ["", "the and of", "   "]
    with pytest.warns(UserWarning, match=r"3 of 9 documents have no word.*ids '6', '7', "
                                         r"'8'") as rec:
        c = Corpus.from_texts(texts)
    assert rec[0].filename == __file__          # attributed to the caller
    assert len(c) == 9 and c.counts[6:].nnz == 0
    many = [""] * 8 + TEXTS
    with pytest.warns(UserWarning, match=r"8 of 14 .*'4', \.\.\."):
        Corpus.from_texts(many)


def test_empty_input_and_no_words():
    with pytest.raises(ValueError, match="texts holds no document"):
        Corpus.from_texts([])
    with pytest.raises(ValueError, match="no word at all in the 2 documents"):
        Corpus.from_texts(["the and", "of a"])
    with pytest.raises(ValueError, match="no word is left: min_df=2.*min_df"), \
            pytest.warns(UserWarning, match="using max_df=1.0"):
        Corpus.from_texts(["alpha beta", "gamma delta", "epsilon zeta"])
    with pytest.raises(ValueError, match="no word is left: min_df=2 keeps words found in at "
                                         "least 2 documents"):
        Corpus.from_texts(["alpha beta", "gamma delta", "epsilon zeta", "eta theta"])


def test_tiny_corpora_relax_the_thresholds():
    with pytest.warns(UserWarning, match=r"using min_df=1 and max_df=1\.0"):
        c = Corpus.from_texts(["Just one small document about cats."])
    assert sorted(c.vocabulary.tolist()) == ["cats", "document", "just", "small"]
    with pytest.warns(UserWarning, match=r"max_df=1\.0"):
        c = Corpus.from_texts(["cats and dogs", "cats and mice", "dogs and cats"])
    assert c.vocabulary.tolist() == ["cats", "dogs"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Corpus.from_texts(["cats and dogs", "cats and mice", "dogs and cats"], max_df=1.0)


@pytest.mark.parametrize("kw, exc, pattern", [
    (dict(min_df=-1), ValueError, "'min_df' parameter"),
    (dict(min_df=1.5), ValueError, "'min_df' parameter"),
    (dict(min_df="2"), TypeError, "'min_df' parameter"),
    (dict(max_df=1.5), ValueError, "'max_df' parameter"),
    (dict(max_features=0), ValueError, "'max_features' parameter"),
    (dict(max_features=2.0), TypeError, "'max_features' parameter"),
    (dict(lowercase="yes"), TypeError, "'lowercase' parameter"),
    (dict(stop_words="french"), ValueError, "'stop_words' parameter"),
    (dict(stop_words=3), TypeError, "'stop_words' parameter"),
    (dict(token_pattern="(unclosed"), ValueError, "token_pattern .* is not a valid regular"),
    (dict(token_pattern="(a)(b)"), ValueError, "capturing groups"),
    (dict(token_pattern=3), TypeError, "'token_pattern' parameter"),
    (dict(vocabulary="cat"), TypeError, "vocabulary must be a sequence of str"),
    (dict(source=3), TypeError, "'source' parameter"),
])
def test_from_texts_option_errors(kw, exc, pattern):
    with pytest.raises(exc, match=pattern):
        Corpus.from_texts(TEXTS, **kw)


def test_from_texts_bad_texts():
    with pytest.raises(TypeError, match=r"texts\[1\] is bytes, not str \(decode it first"):
        Corpus.from_texts(["fine text", b"bytes text"])
    with pytest.raises(TypeError, match=r"texts\[0\] is int"):
        Corpus.from_texts([3, "x"])
    with pytest.raises(TypeError, match="single str"):
        Corpus.from_texts("one string")
    with pytest.raises(TypeError, match="iterable of str"):
        Corpus.from_texts(3)
    with pytest.raises(ValueError, match="ids has 5 entries, expected 6"):
        Corpus.from_texts(TEXTS, ids=list("abcde"))
    with pytest.raises(ValueError, match="ids must be unique"):
        Corpus.from_texts(TEXTS, ids=list("aacdef"))


def test_from_texts_custom_stop_words_and_case():
    c = Corpus.from_texts(["Fox FOX fox", "Dog fox"], stop_words=["dog"], min_df=1, max_df=1.0,
                          lowercase=False)
    assert c.vocabulary.tolist() == ["Dog", "FOX", "Fox", "fox"]
    c = Corpus.from_texts(["Fox FOX fox", "Dog fox"], stop_words=("dog",), min_df=1,
                          max_df=1.0)
    assert c.vocabulary.tolist() == ["fox"] and c.counts.toarray().tolist() == [[3.0], [1.0]]


def test_missing_scikit_learn_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn.feature_extraction.text", None)
    with pytest.raises(ImportError, match=r"pip install countgrid\[text\]"):
        Corpus.from_texts(TEXTS)


def test_select_by_resolving_power_still_there():
    from countgrid.text import select_by_resolving_power

    assert countgrid.text.select_by_resolving_power is select_by_resolving_power
    X = np.array([[1, 1, 0, 0], [1, 0, 2, 0], [1, 1, 0, 0], [1, 0, 0, 0]])
    assert select_by_resolving_power(X, low=2, high=0.75).tolist() == [1]


@pytest.mark.parametrize("module", ["countgrid.text._corpus", "countgrid.text._readers",
                                    "countgrid.text._selection", "countgrid.text"])
def test_doctests(module):
    import importlib

    mod = importlib.import_module(module)
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0 or module == "countgrid.text"


# ------------------------------------------------- hostile inputs (tests/hostile, issue 11)
def test_metadata_beyond_the_float_range_names_the_column():
    with pytest.raises(ValueError, match=r"metadata\['x'\].*float range"):
        Corpus(np.eye(3), ["a", "b", "c"], metadata={"x": [10**400, 1, 2]})
    # ints beyond int64 that fit a float stay numbers
    c = Corpus(np.eye(3), ["a", "b", "c"], metadata={"x": [2**70, 1, 2]})
    assert c.metadata["x"].dtype == np.float64 and c.metadata["x"][0] == 2.0**70


def test_subset_accepts_an_object_array_of_ints():
    c = Corpus(np.eye(4), list("abcd"))
    assert c.subset(np.array([2, 0], dtype=object)).ids.tolist() == ["2", "0"]
    with pytest.raises(ValueError, match="indices"):
        c.subset(np.array([2**70], dtype=object))
    with pytest.raises(TypeError, match="indices"):
        c.subset(np.array(["1"], dtype=object))


def test_sample_names_a_bad_random_state():
    c = Corpus(np.eye(4), list("abcd"))
    with pytest.raises(ValueError, match="random_state"):
        c.sample(2, random_state=-1)


def test_save_and_load_refuse_paths_that_are_not_binary_files(tmp_path):
    import io

    c = Corpus(np.eye(2), ["a", "b"])
    with pytest.raises(ValueError, match="path is empty"):
        c.save("")
    with pytest.raises(TypeError, match="path must be .* binary file object"):
        c.save(io.StringIO())
    with pytest.raises(TypeError, match="path must be .* binary file object"):
        Corpus.load(io.StringIO("x"))
    buf = io.BytesIO()
    c.save(buf)
    buf.seek(0)
    assert (Corpus.load(buf).counts != c.counts).nnz == 0
