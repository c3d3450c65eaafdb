"""countgrid.text.read_corpus / read_documents: every format on tiny fixtures, every
error path with its message, determinism of the folder order, and the real data."""
import gzip
import io
import json
import os
import sys
import warnings

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from countgrid.text import Corpus, read_corpus, read_documents
from repo_data import data_path

LOOSE = dict(min_df=1, max_df=1.0)     # no pruning: tiny fixtures
NEWS20_SAME = data_path("news20_same.npz", must_exist=False)    # data/README.md


def write(path, text, encoding="utf-8"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return path


def dense(c):
    return {(c.ids[i], c.vocabulary[j]): v for (i, j), v in c.counts.todok().items()}


# ---------------------------------------------------------------------------------- folder
def make_folder(root, order=None):
    files = {"b/two.txt": "Dogs bark loudly.\nSecond line.",
             "a/one.txt": "Cats purr softly. Cats sleep.",
             "a/sub/three.txt": "Cats and dogs play together.",
             "top.TXT": "Dogs and cats fight.",
             ".hidden.txt": "secret secret",
             ".git/x.txt": "git git",
             "notes.md": "not read"}
    for name in (order or sorted(files)):
        write(root / name, files[name])
    return files


def test_folder_recursive_sorted_with_folder_metadata(tmp_path):
    make_folder(tmp_path)
    c = read_corpus(tmp_path, **LOOSE)
    assert c.ids.tolist() == ["a/one.txt", "a/sub/three.txt", "b/two.txt", "top.TXT"]
    assert c.titles.tolist() == ["one", "three", "two", "top"]
    assert c.metadata["folder"].tolist() == ["a", "a/sub", "b", ""]
    assert c.snippets[2] == "Dogs bark loudly. Second line."
    assert "secret" not in c.vocabulary and "git" not in c.vocabulary
    assert dense(c)[("a/one.txt", "cats")] == 2
    assert c.source == str(tmp_path) and c.links is None


def test_folder_order_is_deterministic(tmp_path):
    files = make_folder(tmp_path / "x")
    make_folder(tmp_path / "y", order=sorted(files, reverse=True))
    a, b = read_corpus(tmp_path / "x", **LOOSE), read_corpus(tmp_path / "y", **LOOSE)
    assert a.ids.tolist() == b.ids.tolist()
    assert (a.counts != b.counts).nnz == 0


def test_folder_without_subfolders_has_no_folder_column_and_extensions(tmp_path):
    write(tmp_path / "1", "alpha beta")
    write(tmp_path / "2", "beta gamma")
    write(tmp_path / "3.txt", "gamma alpha")
    c = read_corpus(tmp_path, **LOOSE)
    assert c.ids.tolist() == ["3.txt"] and c.metadata == {}
    c = read_corpus(tmp_path, extensions=(".txt", ""), **LOOSE)
    assert c.ids.tolist() == ["1", "2", "3.txt"]


def test_folder_errors(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"empty holds no \.txt file \(it is empty\)"):
        read_corpus(tmp_path / "empty")
    write(tmp_path / "raw" / "37261", "From: someone")
    with pytest.raises(ValueError, match=r"1 other files: 37261.*extensions=\('\.txt', ''\)"):
        read_corpus(tmp_path / "raw")
    write(tmp_path / "enc" / "a.txt", "good text here")
    write(tmp_path / "enc" / "b.txt", "line one\ncaf\xe9 au lait".encode("latin-1"))
    with pytest.raises(ValueError, match=r"b\.txt, line 2: bytes b'\\xe9 au' at byte offset "
                                         r"12 are not valid utf-8.*encoding='latin-1'"):
        read_corpus(tmp_path / "enc", on_error="fail", **LOOSE)
    with pytest.warns(UserWarning, match=r"skipped 1 of the 2 files .*b\.txt \(not utf-8\)"):
        assert read_corpus(tmp_path / "enc", **LOOSE).ids.tolist() == ["a.txt"]
    c = read_corpus(tmp_path / "enc", encoding="latin-1", **LOOSE)
    assert "café" in c.vocabulary
    with pytest.raises(ValueError, match="text_col applies to CSV"):
        read_corpus(tmp_path / "enc", text_col="x")
    with pytest.raises(ValueError, match="is a folder"):
        read_corpus(tmp_path / "enc", format="csv")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="permissions are not enforced for root")
def test_unreadable_file_is_named(tmp_path):
    p = write(tmp_path / "d" / "a.txt", "text")
    p.chmod(0)
    try:
        with pytest.raises(PermissionError, match=r"a\.txt"):
            read_corpus(tmp_path / "d", **LOOSE)
    finally:
        p.chmod(0o644)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links")
def test_dangling_link_is_named(tmp_path):
    write(tmp_path / "d" / "a.txt", "text here")
    os.symlink(tmp_path / "nowhere.txt", tmp_path / "d" / "b.txt")
    with pytest.raises(FileNotFoundError, match=r"b\.txt"):
        read_corpus(tmp_path / "d", on_error="fail", **LOOSE)
    with pytest.warns(UserWarning, match=r"b\.txt \(no such file or directory\)"):
        assert read_corpus(tmp_path / "d", **LOOSE).ids.tolist() == ["a.txt"]


# ----------------------------------------------------------------------------------- lines
def test_lines_file(tmp_path):
    p = write(tmp_path / "docs.txt", "\ufefffirst cats doc\r\n\n   \nsecond dogs doc\nthird cats\n")
    c = read_corpus(p, **LOOSE)
    assert c.ids.tolist() == ["line 1", "line 4", "line 5"]
    assert c.titles.tolist() == ["first cats doc", "second dogs doc", "third cats"]
    assert "doc" not in c.ids and dense(c)[("line 5", "cats")] == 1
    d = read_documents(p)
    assert d["texts"] == ["first cats doc", "second dogs doc", "third cats"]
    assert d["links"] is None and d["metadata"] == {}


def test_lines_gzip_and_latin1(tmp_path):
    p = tmp_path / "docs.txt.gz"
    with gzip.open(p, "wb") as f:
        f.write("crème brûlée\nsecond crème\n".encode("latin-1"))
    with pytest.raises(ValueError,
                       match=r"docs\.txt\.gz, line 1: bytes b'\\xe8me ' at byte offset 2"):
        read_corpus(p, **LOOSE)
    c = read_corpus(p, encoding="latin-1", **LOOSE)
    assert "crème" in c.vocabulary


def test_utf16_file(tmp_path):
    p = write(tmp_path / "u.txt", "\ufeffalpha beta\ngamma alpha\n", encoding="utf-16-le")
    c = read_corpus(p, encoding="utf-16", **LOOSE)
    assert c.ids.tolist() == ["line 1", "line 2"] and "alpha" in c.vocabulary


def test_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"cats here\ndogs there\n"
                                                                  b"cats and dogs\n")))
    c = read_corpus("-", **LOOSE)
    assert c.source == "<stdin>" and c.ids.tolist() == ["line 1", "line 2", "line 3"]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(
        b'{"text": "cats here"}\n{"text": "dogs there"}\n')))
    assert len(read_corpus("-", format="jsonl", **LOOSE)) == 2
    with pytest.raises(ValueError, match="cannot be read from stdin"):
        read_corpus("-", format="npz")


def test_empty_inputs(tmp_path):
    for name in ("empty.txt", "blank.txt", "e.csv", "e.jsonl"):
        write(tmp_path / name, "" if name != "blank.txt" else "\n  \n\n")
    for name in ("empty.txt", "blank.txt", "e.jsonl"):
        with pytest.raises(ValueError, match=f"{name} holds no document"):
            read_corpus(tmp_path / name)
    with pytest.raises(ValueError, match=r"e\.csv is empty"):
        read_corpus(tmp_path / "e.csv", text_col="text")
    write(tmp_path / "h.csv", "id,text\n")
    with pytest.raises(ValueError, match=r"h\.csv holds no document"):
        read_corpus(tmp_path / "h.csv", text_col="text")


# ------------------------------------------------------------------------------------- csv
CSV = ('id,title,body,url,year,group,score\n'
       'p1,First,"Cats purr, cats sleep.\nA second line",http://a,2001,x,1.5\n'
       'p2,Second,"Dogs ""bark"" loudly",http://b,2002,y,NA\n'
       'p3,Third,Cats and dogs,,,x,3\n')


def test_csv_all_columns(tmp_path):
    p = write(tmp_path / "posts.csv", CSV)
    c = read_corpus(p, text_col="body", id_col="id", title_col="title", link_col="url",
                    meta_cols=["year", "group", "score"], **LOOSE)
    assert c.ids.tolist() == ["p1", "p2", "p3"]
    assert c.titles.tolist() == ["First", "Second", "Third"]
    assert c.links.tolist() == ["http://a", "http://b", ""]
    np.testing.assert_array_equal(c.metadata["year"], [2001.0, 2002.0, np.nan])
    assert c.metadata["group"].tolist() == ["x", "y", "x"]
    np.testing.assert_array_equal(c.metadata["score"], [1.5, np.nan, 3.0])
    assert c.snippets[0] == "Cats purr, cats sleep. A second line"
    assert dense(c)[("p1", "cats")] == 2 and dense(c)[("p2", "bark")] == 1
    d = read_documents(p, text_col="body", meta_cols="group, score")
    assert d["ids"] == ["row 1", "row 2", "row 3"] and d["titles"][0] == "Cats purr, cats sleep."
    assert list(d["metadata"]) == ["group", "score"]
    # read_documents + from_texts == read_corpus
    again = Corpus.from_texts(d["texts"], ids=d["ids"], titles=d["titles"], links=d["links"],
                              metadata=d["metadata"], **LOOSE)
    direct = read_corpus(p, text_col="body", meta_cols="group, score", **LOOSE)
    assert (again.counts != direct.counts).nnz == 0
    assert again.titles.tolist() == direct.titles.tolist()
    np.testing.assert_array_equal(again.metadata["score"], direct.metadata["score"])


def test_tsv_bom_and_case_insensitive_columns(tmp_path):
    p = write(tmp_path / "t.tsv", "\ufeffID\tText\nx\tcats and dogs\ny\tcats\n")
    c = read_corpus(p, text_col="text", id_col="id", **LOOSE)
    assert c.ids.tolist() == ["x", "y"]


def test_csv_huge_field(tmp_path):
    big = "word " * 60000       # 300,000 characters: beyond csv's default field limit
    p = write(tmp_path / "big.csv", f'text\n"{big}"\nsmall word\n')
    c = read_corpus(p, text_col="text", **LOOSE)
    assert c.counts[0, list(c.vocabulary).index("word")] == 60000


def test_csv_reads_the_column_named_text_by_default(tmp_path):
    """As JSON Lines reads the field "text": a single column of that name, any case."""
    p = write(tmp_path / "t.csv", "id,Text,stars\na,good words,5\nb,bad words,1\n")
    c = read_corpus(p, id_col="id", meta_cols=["stars"], **LOOSE)
    assert list(c.ids) == ["a", "b"] and sorted(c.vocabulary) == ["bad", "good", "words"]
    q = write(tmp_path / "two.csv", "text,TEXT\na,b\n")
    with pytest.raises(ValueError, match="without a single column named 'text'"):
        read_corpus(q)


def test_csv_errors(tmp_path):
    p = write(tmp_path / "posts.csv", CSV)
    with pytest.raises(ValueError, match=r"text_col is required .* columns of .*posts\.csv "
                                         r"are: 'id', 'title', 'body'"):
        read_corpus(p)
    with pytest.raises(ValueError, match=r"posts\.csv has no column 'text' \(text_col\); its "
                                         r"columns are: 'id', 'title'"):
        read_corpus(p, text_col="text")
    with pytest.raises(ValueError, match=r"no column 'nope' \(meta_cols\)"):
        read_corpus(p, text_col="body", meta_cols=["year", "nope"])
    with pytest.raises(ValueError, match="vocab= applies"):
        read_corpus(p, text_col="body", vocab="v.txt")
    bad = write(tmp_path / "bad.csv", "id,text\na,one two\nb,three,four\n")
    with pytest.raises(ValueError, match=r"bad\.csv, line 3: 3 fields, but the header has 2"):
        read_corpus(bad, text_col="text", **LOOSE)
    dup = write(tmp_path / "dup.csv", "id,text\na,one two\nb,three\na,four\n")
    with pytest.raises(ValueError, match=r"dup\.csv, line 4: the id 'a' repeats that of "
                                         "line 2"):
        read_corpus(dup, text_col="text", id_col="id", **LOOSE)
    nul = write(tmp_path / "q.csv", 'text\n"unterminated\n')
    with pytest.raises(ValueError, match=r"q\.csv, line 2: unexpected end of data; a "
                                         "field that starts with a quote"):
        read_corpus(nul, text_col="text", **LOOSE)
    twice = write(tmp_path / "twice.csv", "text,text\na,b\n")
    with pytest.raises(ValueError, match="appears 2 times in the header"):
        read_corpus(twice, text_col="text")
    enc = write(tmp_path / "enc.csv", b"text\nok words\nbad \xff byte\n")
    with pytest.raises(ValueError, match=r"enc\.csv, line 3: bytes b'\\xff by' at byte "
                                         r"offset 18"):
        read_corpus(enc, text_col="text")


def test_csv_empty_text_is_an_empty_document(tmp_path):
    p = write(tmp_path / "e.csv", "id,text\na,cats and dogs\nb,\nc,dogs\n")
    with pytest.warns(UserWarning, match=r"1 of 3 documents have no word .*ids 'b'"):
        c = read_corpus(p, text_col="text", id_col="id", **LOOSE)
    assert len(c) == 3 and c.counts[1].nnz == 0


# ----------------------------------------------------------------------------------- jsonl
JSONL = ('{"id": 7, "text": "Cats purr softly", "title": "T1", "url": "u1", "year": 2001, '
         '"tag": "x", "ok": true}\n'
         '\n'
         '{"id": "b", "text": "Dogs bark", "year": null, "tag": "y", "ok": false}\n'
         '{"id": "c", "text": null, "tag": 3}\n')


def test_jsonl(tmp_path):
    p = write(tmp_path / "d.jsonl", JSONL)
    with pytest.warns(UserWarning, match="ids 'c'"):
        c = read_corpus(p, id_col="id", title_col="title", link_col="url",
                        meta_cols=["year", "tag", "ok"], **LOOSE)
    assert c.ids.tolist() == ["7", "b", "c"]
    assert c.titles.tolist() == ["T1", "Dogs bark", ""]
    assert c.links.tolist() == ["u1", "", ""]
    np.testing.assert_array_equal(c.metadata["year"], [2001.0, np.nan, np.nan])
    assert c.metadata["tag"].tolist() == ["x", "y", "3"]
    assert c.metadata["ok"].tolist() == ["true", "false", ""]
    d = read_documents(p)
    assert d["ids"] == ["line 1", "line 3", "line 4"] and d["texts"][2] == ""
    p2 = write(tmp_path / "n.ndjson", '{"body": "cats dogs"}\n{"body": "cats"}\n')
    assert len(read_corpus(p2, text_field="body", **LOOSE)) == 2
    assert len(read_corpus(p2, text_col="body", **LOOSE)) == 2


@pytest.mark.parametrize("content, kw, pattern", [
    ('{"text": "ok"}\n{"text": "broken}\n', {},
     r"line 2: not valid JSON \(Invalid control character at, column 18\)"),
    ('{"text": "ok"}\n[1, 2]\n', {}, "line 2: a JSON Lines corpus holds one object per line"),
    ('{"text": "ok"}\n{"body": "x"}\n', {}, r"line 2: no field 'text' \(text_field\); the "
                                           r"fields of this line are: 'body'"),
    ('{"text": ["a"]}\n', {}, r"line 1: the field 'text' \(text_field\) holds a list"),
    ('{"text": 3}\n', {}, "line 1: the field 'text' .* holds int 3, not a string"),
    ('{"text": "a", "id": 1}\n{"text": "b"}\n', dict(id_col="id"),
     "line 2: no value for the id field 'id'"),
    ('{"text": "a", "id": 1}\n{"text": "b", "id": 1}\n', dict(id_col="id"),
     "line 2: the id '1' repeats that of line 1"),
    ('{"text": "a", "m": {"x": 1}}\n', dict(meta_cols=["m"]), "the field 'm' .* holds a"
                                                               " object|holds an? object"),
])
def test_jsonl_errors(tmp_path, content, kw, pattern):
    p = write(tmp_path / "d.jsonl", content)
    with pytest.raises(ValueError, match=r"d\.jsonl, " + pattern):
        read_corpus(p, **kw, **LOOSE)


# ------------------------------------------------------------------------- pre-vectorised
def test_npz_saved_corpus_is_read_exactly(tmp_path):
    c = read_corpus(write(tmp_path / "p.csv", CSV), text_col="body", id_col="id",
                    link_col="url", meta_cols=["year", "group"], **LOOSE)
    c.save(tmp_path / "c.npz")
    d = read_corpus(tmp_path / "c.npz", min_df=5)       # vectorising options do not apply
    assert (c.counts != d.counts).nnz == 0 and d.ids.tolist() == c.ids.tolist()
    assert d.links.tolist() == c.links.tolist() and list(d.metadata) == ["year", "group"]
    assert d.source == c.source


def test_npz_scipy_matrix_with_labels(tmp_path):
    X = sp.csr_matrix(np.array([[1, 0, 2], [0, 3, 0], [4, 0, 0]]))
    sp.save_npz(tmp_path / "plain.npz", X)
    c = read_corpus(tmp_path / "plain.npz")
    assert c.vocabulary.tolist() == ["w0", "w1", "w2"] and c.ids.tolist() == ["0", "1", "2"]
    assert c.snippets.tolist() == ["w2 w0", "w1", "w0"]
    np.testing.assert_array_equal(c.counts.toarray(), X.toarray())
    with open(tmp_path / "labelled.npz", "wb") as f:
        np.savez_compressed(f, data=X.data, indices=X.indices, indptr=X.indptr,
                            shape=np.array(X.shape), format=np.array(b"csr"),
                            y=np.array([1, 0, 1]), label_names=np.array(["neg", "pos"]),
                            feature_names=np.array(["a", "b", "c"]))
    c = read_corpus(tmp_path / "labelled.npz")
    assert c.vocabulary.tolist() == ["a", "b", "c"]
    assert c.metadata["label"].tolist() == ["pos", "neg", "pos"]
    with pytest.warns(UserWarning, match="no word of the vocabulary.*ids '1'"):
        m = read_corpus(tmp_path / "labelled.npz", vocabulary=["c", "z", "a"])
    np.testing.assert_array_equal(m.counts.toarray(), [[2, 0, 1], [0, 0, 0], [0, 0, 4]])
    assert m.vocabulary.tolist() == ["c", "z", "a"]


def test_npz_per_row_arrays_are_metadata_columns(tmp_path):
    """A dataset's other arrays of one value per row (dates, releases, scores) are columns
    (countgrid html data/python_changelog.npz --time-col dates); others are not."""
    X = sp.csr_matrix(np.array([[1, 0, 2], [0, 3, 0], [4, 0, 0]]))
    with open(tmp_path / "dated.npz", "wb") as f:
        np.savez_compressed(f, data=X.data, indices=X.indices, indptr=X.indptr,
                            shape=np.array(X.shape), format=np.array(b"csr"),
                            y=np.array([1, 0, 1]), label_names=np.array(["neg", "pos"]),
                            dates=np.array(["2020-01-02", "2021-03-04", "2022-05-06"]),
                            score=np.array([0.5, 1.5, 2.5]), flag=np.array([1, 0, 1], bool),
                            matrix=np.ones((3, 2)), short=np.array(["a", "b"]),
                            label=np.array(["x", "y", "z"]),
                            objects_as_bytes=np.array([b"a", b"b", b"c"]))
    c = read_corpus(tmp_path / "dated.npz")
    assert sorted(c.metadata) == ["dates", "flag", "label", "score"]
    assert c.metadata["label"].tolist() == ["pos", "neg", "pos"]     # y comes first
    assert c.metadata["dates"].tolist() == ["2020-01-02", "2021-03-04", "2022-05-06"]
    np.testing.assert_array_equal(c.metadata["score"], [0.5, 1.5, 2.5])
    d = read_corpus(data_path("python_changelog.npz"))
    assert sorted(d.metadata) == ["dates", "label", "links", "releases"]
    assert d.metadata["dates"][0] == "2015-02-08"


def test_npz_errors(tmp_path):
    write(tmp_path / "junk.npz", b"not a zip at all")
    with pytest.raises(ValueError, match=r"junk\.npz is not a readable \.npz file"):
        read_corpus(tmp_path / "junk.npz")
    with open(tmp_path / "neg.npz", "wb") as f:
        sp.save_npz(f, sp.csr_matrix(np.array([[1.0, -2.0]])))
    with pytest.raises(ValueError, match=r"neg\.npz: .*[Nn]egative"):
        read_corpus(tmp_path / "neg.npz")
    with open(tmp_path / "nokeys.npz", "wb") as f:
        np.savez(f, a=np.zeros(2))
    with pytest.raises(ValueError, match=r"nokeys\.npz is not a sparse count corpus"):
        read_corpus(tmp_path / "nokeys.npz")
    sp.save_npz(tmp_path / "zero.npz", sp.csr_matrix((2, 3)))
    with pytest.raises(ValueError, match=r"zero\.npz: every document is empty"):
        read_corpus(tmp_path / "zero.npz")
    with pytest.raises(ValueError, match=r"read it with countgrid\.text\.read_corpus"):
        read_documents(tmp_path / "zero.npz")
    with pytest.raises(ValueError, match="text_col applies"):
        read_corpus(tmp_path / "zero.npz", text_col="x")


def test_matrix_market(tmp_path):
    X = sp.csr_matrix(np.array([[1, 0, 2], [0, 3, 0]], dtype=float))
    scipy.io.mmwrite(tmp_path / "m.mtx", X)
    c = read_corpus(tmp_path / "m.mtx")
    assert c.vocabulary.tolist() == ["w0", "w1", "w2"]
    np.testing.assert_array_equal(c.counts.toarray(), X.toarray())
    write(tmp_path / "v.txt", "alpha\nbeta\ngamma\n")
    c = read_corpus(tmp_path / "m.mtx", vocab=tmp_path / "v.txt")
    assert c.vocabulary.tolist() == ["alpha", "beta", "gamma"]
    write(tmp_path / "v2.txt", "alpha\nbeta\n")
    with pytest.raises(ValueError, match=r"v2\.txt holds 2 terms, but .*m\.mtx has 3"):
        read_corpus(tmp_path / "m.mtx", vocab=tmp_path / "v2.txt")
    write(tmp_path / "v3.txt", "alpha\nbeta\nalpha\n")
    with pytest.raises(ValueError, match=r"v3\.txt: the term 'alpha' appears 2 times "
                                         r"\(lines 1, 3\)"):
        read_corpus(tmp_path / "m.mtx", vocab=tmp_path / "v3.txt")
    write(tmp_path / "bad.mtx", "%%MatrixMarket nonsense\n1 2\n")
    with pytest.raises(ValueError, match=r"bad\.mtx is not a readable MatrixMarket file"):
        read_corpus(tmp_path / "bad.mtx")


UCI_DOCWORD = "3\n4\n5\n1 1 2\n1 3 1\n2 2 4\n3 4 1\n3 1 1\n"
UCI_VOCAB = "apple\nbanana\ncherry\ndate\n"


@pytest.mark.parametrize("gz", [False, True])
def test_uci_bag_of_words(tmp_path, gz):
    name = "docword.fruit.txt" + (".gz" if gz else "")
    if gz:
        with gzip.open(tmp_path / name, "wb") as f:
            f.write(UCI_DOCWORD.encode())
    else:
        write(tmp_path / name, UCI_DOCWORD)
    write(tmp_path / "vocab.fruit.txt", UCI_VOCAB)
    c = read_corpus(tmp_path / name)
    assert c.ids.tolist() == ["1", "2", "3"]
    assert c.vocabulary.tolist() == ["apple", "banana", "cherry", "date"]
    np.testing.assert_array_equal(c.counts.toarray(), [[2, 0, 1, 0], [0, 4, 0, 0],
                                                       [1, 0, 0, 1]])
    assert c.snippets.tolist() == ["apple cherry", "banana", "apple date"]


@pytest.mark.parametrize("docword, pattern", [
    ("3\n4\n6\n1 1 2\n1 3 1\n2 2 4\n3 4 1\n3 1 1\n", "the header announces NNZ=6 counts, but "
                                                   "the file holds 5"),
    ("3\nfour\n5\n", r"line 2: expected the number of words W"),
    ("3\n4\n2\n1 1 2\n4 1 1\n", r"line 5: docID 4 is outside 1\.\.\.3"),
    ("3\n4\n2\n1 1 2\n1 0 1\n", r"line 5: wordID 0 is outside 1\.\.\.4"),
    ("3\n4\n2\n1 1 2\n1 x 1\n", r"line 5: expected 'docID wordID count' \(three integers\), "
                                "got '1 x 1'"),
    ("3\n4\n2\n1 1 2\n1 2\n", r"line 5: expected 'docID wordID count'"),
    ("3\n4\n1\n1 1 -2\n", "line 4: negative count -2"),
    ("0\n4\n0\n", "announces 0 documents"),
])
def test_uci_errors(tmp_path, docword, pattern):
    write(tmp_path / "vocab.f.txt", UCI_VOCAB)
    p = write(tmp_path / "docword.f.txt", docword)
    with pytest.raises(ValueError, match=r"docword\.f\.txt.*" + pattern):
        read_corpus(p)


def test_uci_vocabulary_problems(tmp_path):
    p = write(tmp_path / "docword.f.txt", UCI_DOCWORD)
    with pytest.raises(ValueError, match=r"vocab\.f\.txt is missing; pass vocab="):
        read_corpus(p)
    write(tmp_path / "v.txt", "apple\nbanana\n")
    with pytest.raises(ValueError, match=r"v\.txt holds 2 terms, but .*docword\.f\.txt has 4"):
        read_corpus(p, vocab=tmp_path / "v.txt")


# ---------------------------------------------------------------------------------- misc
def test_format_detection_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        read_corpus(tmp_path / "missing.txt")
    p = write(tmp_path / "data.json", "{}")
    with pytest.raises(ValueError, match=r"cannot tell the format of .*data\.json.*"
                                         "format='jsonl'"):
        read_corpus(p)
    p = write(tmp_path / "data.xyz", "x")
    with pytest.raises(ValueError, match="pass format= one of folder, lines"):
        read_corpus(p)
    assert len(read_corpus(write(tmp_path / "d.dat", "cats\ndogs cats\n"), format="lines",
                           **LOOSE)) == 2
    with pytest.raises(ValueError, match="format must be 'auto' or one of"):
        read_corpus(write(tmp_path / "z.txt", "a"), format="word")
    with pytest.raises(TypeError, match="format must be a str"):
        read_corpus(tmp_path / "z.txt", format=3)
    with pytest.raises(TypeError, match="path must be"):
        read_corpus(3)
    with pytest.raises(ValueError, match="unknown encoding 'nope'"):
        read_corpus(tmp_path / "z.txt", encoding="nope")
    with pytest.raises(TypeError, match="meta_cols must be"):
        read_corpus(write(tmp_path / "m.csv", "text,y\na,1\n"), text_col="text", meta_cols=3)
    with pytest.raises(TypeError, match="meta_cols must hold column names"):
        read_corpus(tmp_path / "m.csv", text_col="text", meta_cols=[3])
    with pytest.raises(TypeError, match="id_col must be a column name"):
        read_corpus(tmp_path / "m.csv", text_col="text", id_col=3)
    with pytest.raises(TypeError, match="vocab must be the name"):
        read_corpus(tmp_path / "m.csv", text_col="text", vocab=3)
    with pytest.raises(TypeError, match="encoding must be a str"):
        read_corpus(tmp_path / "m.csv", text_col="text", encoding=None)
    with pytest.raises(TypeError, match="extensions must be"):
        read_corpus(tmp_path, extensions=3)
    with pytest.raises(ValueError, match="'min_df' parameter of read_corpus"):
        read_corpus(tmp_path / "z.txt", min_df=-1)


def test_fixed_vocabulary_from_a_file(tmp_path):
    model = read_corpus(write(tmp_path / "train.txt", "cats purr\ndogs bark\ncats bark\n"),
                        **LOOSE)
    with pytest.warns(UserWarning, match="ids 'line 2'"):
        new = read_corpus(write(tmp_path / "new.txt", "Cats and more cats\nbirds sing\n"),
                          vocabulary=model.vocabulary)
    np.testing.assert_array_equal(new.vocabulary, model.vocabulary)
    assert dense(new) == {("line 1", "cats"): 2.0}


def _news20_texts():
    z = np.load(NEWS20_SAME, allow_pickle=False)
    offsets, blob = z["texts_offsets"], z["texts_utf8"].tobytes()
    return [blob[offsets[i]:offsets[i + 1]].decode() for i in range(len(offsets) - 1)], z


@pytest.mark.skipif(not os.path.exists(NEWS20_SAME),
                    reason="data/ holds no datasets in this copy (sdist)")
def test_real_news20_same(tmp_path):
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    texts, z = _news20_texts()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        c = Corpus.from_texts(texts)
    assert c.counts.shape[0] == 2924 == len(texts)
    assert 10000 < c.n_terms < 26558
    tf = np.asarray(c.counts.sum(axis=0)).ravel()
    top = c.vocabulary[np.argsort(-tf)[:30]].tolist()
    assert not set(top) & ENGLISH_STOP_WORDS
    assert {"windows", "graphics", "image", "file", "program"} <= set(top)
    assert all(w[0].isalpha() for w in c.vocabulary)
    assert all(len(s) <= 300 for s in c.snippets)
    empty = np.flatnonzero(c.counts.getnnz(axis=1) == 0)
    assert [str(w.message).startswith(f"{empty.size} of 2924") for w in rec] == (
        [True] if empty.size else [])
    # the same texts from a JSONL file and a folder give the same counts
    p = tmp_path / "news.jsonl"
    with open(p, "w", encoding="utf-8") as f:
        for i, t in enumerate(texts[:300]):
            f.write(json.dumps({"id": f"post{i}", "text": t,
                                "group": str(z["label_names"][z["y"][i]])}) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = read_corpus(p, id_col="id", meta_cols=["group"])
        b = Corpus.from_texts(texts[:300])
    assert (a.counts != b.counts).nnz == 0 and a.ids[0] == "post0"
    assert set(a.metadata["group"]) <= set(z["label_names"].tolist())
    # the .npz itself: labels, split and texts become metadata, titles and snippets
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # one post has no word
        n = read_corpus(NEWS20_SAME)
    assert n.counts.shape == (2924, 26558)
    assert set(n.metadata["label"]) == set(z["label_names"].tolist())
    assert n.snippets[0] == c.snippets[0] and n.titles[0] == c.titles[0]


# ------------------------------------------------- hostile inputs (tests/hostile, issue 11)
@pytest.mark.parametrize("encoding", ["rot13", "base64", "zlib"])
def test_codecs_that_are_not_text_encodings_are_refused(tmp_path, encoding):
    p = tmp_path / "d.txt"
    p.write_text("alpha beta\ngamma delta\n", encoding="utf-8")
    for reader in (read_corpus, read_documents):
        with pytest.raises(ValueError, match=f"encoding '{encoding}' is not a text encoding"):
            reader(p, encoding=encoding)


@pytest.mark.parametrize("reader", [read_corpus, read_documents])
def test_paths_that_are_no_file_name_are_named(reader):
    with pytest.raises(ValueError, match="path is empty"):
        reader("")
    for bad in (None, 5, ["a.txt"]):
        with pytest.raises(TypeError, match="path must be a file or folder name"):
            reader(bad)


@pytest.mark.filterwarnings("ignore:min_df=2 and max_df=0.5 select no word")
def test_json_numbers_beyond_the_float_range_name_the_field(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps({"text": f"alpha beta {i}"})[:-1] + ', "v": 1'
                         + "0" * 400 + "}\n" for i in range(3)), encoding="utf-8")
    for reader in (read_corpus, read_documents):
        with pytest.raises(ValueError, match="meta_cols: the field 'v' .* float range"):
            reader(p, meta_cols=["v"])


def test_uci_header_announcing_too_many_documents_allocates_nothing(tmp_path):
    (tmp_path / "docword.x.txt").write_text(f"{10**12}\n2\n1\n1 1 3\n")
    (tmp_path / "vocab.x.txt").write_text("a\nb\n")
    with pytest.raises(MemoryError, match=r"docword\.x\.txt: the D=1000000000000 documents"):
        read_corpus(tmp_path / "docword.x.txt")


def test_folder_with_file_names_that_are_not_utf8(tmp_path):
    root = os.fsencode(tmp_path / "posts")
    os.mkdir(root)
    for i, text in enumerate(["alpha beta", "beta gamma", "gamma alpha"]):
        with open(os.path.join(root, b"\xff%d.txt" % i), "w", encoding="utf-8") as f:
            f.write(text)
    c = read_corpus(os.fsdecode(root), min_df=1, max_df=1.0)
    assert c.ids.tolist() == [os.fsdecode(b"\xff%d.txt" % i) for i in range(3)]
    assert read_documents(os.fsdecode(root))["texts"][1] == "beta gamma"
