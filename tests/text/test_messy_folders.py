"""Folders as users have them (issue 22, item 8): a binary file named .txt, a file in
another encoding, an unreadable file.  By default they are skipped with one warning that
lists and counts them; on_error="fail" stops at the first, naming it."""
import os
import warnings

import pytest

from countgrid.text import read_corpus, read_documents

TEXTS = ["cats purr and sleep all day", "dogs bark at cats", "cats and dogs play in the sun",
         "the sun is warm and dogs sleep"]


@pytest.fixture()
def folder(tmp_path):
    for i, t in enumerate(TEXTS):
        (tmp_path / f"doc{i}.txt").write_text(t, encoding="utf-8")
    (tmp_path / "program.txt").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4)
    (tmp_path / "latin.txt").write_bytes("café crème brûlée".encode("latin-1"))
    return tmp_path


def test_skip_is_the_default_and_says_what_it_skipped(folder):
    with pytest.warns(UserWarning) as caught:
        corpus = read_corpus(folder, min_df=1, max_df=1.0)
    assert sorted(corpus.ids) == [f"doc{i}.txt" for i in range(4)]
    messages = [str(w.message) for w in caught if "skipped" in str(w.message)]
    assert len(messages) == 1
    assert "skipped 2 of the 6 files" in messages[0]
    assert "program.txt (binary)" in messages[0] and "latin.txt (not utf-8)" in messages[0]
    assert "encoding='latin-1'" in messages[0]


def test_the_right_encoding_reads_the_latin_file_but_never_a_binary(folder):
    with pytest.warns(UserWarning, match="program.txt \\(binary\\)"):
        corpus = read_corpus(folder, min_df=1, max_df=1.0, encoding="latin-1")
    assert "latin.txt" in corpus.ids and "program.txt" not in corpus.ids
    assert "crème" in corpus.vocabulary


def test_fail_stops_at_the_first(folder):
    with pytest.raises(ValueError, match="latin.txt, line 1: bytes .* are not valid utf-8"):
        read_corpus(folder, on_error="fail")
    os.remove(folder / "latin.txt")
    with pytest.raises(ValueError, match="program.txt is a binary file"):
        read_documents(folder, on_error="fail")


def test_unreadable_files_are_skipped(folder):
    if os.geteuid() == 0:
        (folder / "locked.txt").mkdir()          # root reads anything: a folder named .txt
    else:
        (folder / "locked.txt").write_text("secret")
        os.chmod(folder / "locked.txt", 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        corpus = read_corpus(folder, min_df=1, max_df=1.0)
    assert "locked.txt" not in corpus.ids
    assert any("skipped" in str(w.message) for w in caught)


def test_a_folder_of_nothing_readable_is_an_error(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"\x00\x01\x02")
    with pytest.raises(ValueError, match="none of its 1 files is readable text"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            read_corpus(tmp_path)


@pytest.mark.parametrize("value, error", [("ignore", ValueError), (None, TypeError),
                                          (1, TypeError)])
def test_on_error_is_checked(folder, value, error):
    with pytest.raises(error, match="on_error"):
        read_corpus(folder, on_error=value)


def test_utf16_files_are_not_taken_for_binary(tmp_path):
    for i, t in enumerate(TEXTS):
        (tmp_path / f"d{i}.txt").write_bytes(t.encode("utf-16"))
    corpus = read_corpus(tmp_path, encoding="utf-16", min_df=1, max_df=1.0)
    assert len(corpus) == 4
