"""What the command line writes for people to open: CSV/TSV cells safe in a spreadsheet
(OWASP's leading-apostrophe rule, with --no-escape-formulas to opt out) and file names
printed without their terminal escape sequences (docs/security.md, "Exports")."""
import csv
import io

import numpy as np
import pytest

import countgrid
from countgrid.cli._args import one_line, printable
from countgrid.cli._output import escape_formula, write_table
from countgrid.text import Corpus

from cli.test_verbs import run

HOSTILE = ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\r=x", "=HYPERLINK(\"http://e\")"]


@pytest.mark.parametrize("cell, expected", [
    ("=1+1", "'=1+1"), ("+x", "'+x"), ("-x", "'-x"), ("@x", "'@x"), ("\tx", "'\tx"),
    ("\rx", "'\rx"), ("plain", "plain"), ("", ""), ("a=b", "a=b"), ("'=x", "'=x"),
    ("-1.5", "-1.5"), ("+3", "+3"), ("-2e-05", "-2e-05"), ("-inf", "-inf"), ("-1+2", "'-1+2"),
    (-1.5, -1.5), (3, 3), (None, None),
])
def test_the_rule(cell, expected):
    assert escape_formula(cell) == expected


def test_write_table_escapes_every_text_cell_and_can_opt_out(tmp_path):
    rows = [[c, -0.5, 2] for c in HOSTILE]
    write_table(tmp_path / "t.csv", ["=id", "x", "y"], rows)
    got = list(csv.reader(open(tmp_path / "t.csv", newline="")))
    assert got[0] == ["'=id", "x", "y"]
    assert [r[0] for r in got[1:]] == ["'" + c.replace("\r", "\n") for c in HOSTILE]
    assert all(r[1:] == ["-0.5", "2"] for r in got[1:])
    write_table(tmp_path / "raw.csv", ["=id"], [[c] for c in HOSTILE], escape_formulas=False)
    assert [r[0] for r in csv.reader(open(tmp_path / "raw.csv", newline=""))][1:] == [
        c.replace("\r", "\n") for c in HOSTILE]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A model whose corpus has formula ids and words, saved as the command line would."""
    root = tmp_path_factory.mktemp("model")
    X = np.random.default_rng(0).poisson(1.0, (12, 8))
    words = ["=cmd", "+w", "-w", "@w", "ok", "fine", "good", "nice"]
    ids = [f"=HYPERLINK(\"http://x/{i}\")" if i % 2 else f"-{i}+1" for i in range(12)]
    corpus = Corpus(X, words, ids=ids)
    est = countgrid.CountingGrid((4, 4), (2, 2), n_iter=2, random_state=0)
    with pytest.warns(countgrid.ConvergenceWarning):
        est.fit(X)
    countgrid.io.save(est, root / "m.npz", corpus=corpus)
    return root / "m.npz", ids, words


def test_transform_and_top_words_escape_formulas(model, tmp_path):
    path, ids, words = model
    res = run(["transform", str(path), "-o", "p.csv"], tmp_path)
    assert res.returncode == 0, res.stderr
    got = list(csv.DictReader(open(tmp_path / "p.csv", newline="")))
    assert [r["id"] for r in got] == ["'" + i for i in ids]
    assert all(float(r["log_likelihood"]) < 0 for r in got)     # numbers stay numbers
    res = run(["top-words", str(path), "-o", "w.tsv"], tmp_path)
    assert res.returncode == 0, res.stderr
    text = (tmp_path / "w.tsv").read_text()
    for cell in text.replace("\n", "\t").split("\t"):
        assert not cell.startswith(("=", "+", "@")), cell
    res = run(["top-words", str(path), "-o", "raw.tsv", "--no-escape-formulas"], tmp_path)
    assert res.returncode == 0 and "=cmd" in (tmp_path / "raw.tsv").read_text()
    assert "'=cmd" not in (tmp_path / "raw.tsv").read_text()


def test_stdout_tables_are_escaped_too(model, tmp_path):
    path, ids, _ = model
    res = run(["transform", str(path)], tmp_path)
    got = list(csv.DictReader(io.StringIO(res.stdout)))
    assert [r["id"] for r in got] == ["'" + i for i in ids]


@pytest.mark.parametrize("name, shown", [
    ("\x1b[31mred.npz", "\\x1b[31mred.npz"), ("bell\x07.npz", "bell\\x07.npz"),
    ("csi\x9b2J.npz", "csi\\x9b2J.npz"), ("rtl\u202egnp.npz", "rtl\\u202egnp.npz"),
    ("plain é.npz", "plain é.npz"),
])
def test_printed_file_names_carry_no_terminal_control(name, shown):
    assert printable(name) == shown
    assert one_line(f"wrote {name}\n") == f"wrote {shown}"


def test_the_wrote_line_of_a_hostile_name(model, tmp_path):
    path, _, _ = model
    name = "\x1b]0;pwned\x07\x1b[2Jx.csv"
    res = run(["transform", str(path), "-o", name], tmp_path)
    assert res.returncode == 0, res.stderr
    assert "\x1b" not in res.stdout and "\x07" not in res.stdout
    assert "\\x1b]0;pwned\\x07\\x1b[2Jx.csv" in res.stdout
    res = run(["transform", str(path), "-o", "\x1b[31mnope/x.csv"], tmp_path)
    assert res.returncode == 2 and "\x1b" not in res.stderr and "\\x1b[31m" in res.stderr
