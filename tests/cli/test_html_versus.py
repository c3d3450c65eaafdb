"""``countgrid html --versus`` (docs/map.md, "Two corpora"): the map of two corpora opens
on their difference; the names come from the inputs or --names; misuse is one line naming
the argument."""
import csv
import re
import warnings

import numpy as np
import pytest

import countgrid
from countgrid.cli import main
from countgrid.text import Corpus

from _map_page import decode

WORDS = [f"w{i}" for i in range(8)]


@pytest.fixture
def model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    X = np.random.default_rng(0).poisson(1.0, size=(40, 8))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid = countgrid.CountingGrid((4, 5), (2, 2), n_iter=3, random_state=0).fit(X)
    countgrid.io.save(grid, "grid.npz", corpus=Corpus(X, WORDS))
    for name, seed in (("spring.csv", 1), ("autumn.csv", 2)):
        rng = np.random.default_rng(seed)
        with open(name, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["text"])
            for _ in range(15):
                w.writerow([" ".join(rng.choice(WORDS, size=12))])
    return tmp_path


def run(argv, capsys):
    try:
        status = main(argv)
    except SystemExit as exc:
        status = exc.code
    return status, capsys.readouterr()


def test_two_corpora(model, capsys):
    status, out = run(["html", "grid.npz", "spring.csv", "--versus", "autumn.csv", "-o",
                       "d.html", "-q", "--text-col", "text"], capsys)
    assert status == 0, out.err
    data = decode((model / "d.html").read_text(encoding="utf-8"))
    assert data["compare"] == ["corpus", "spring", "autumn"] and data["n_documents"] == 30
    status, _ = run(["html", "grid.npz", "--versus", "autumn.csv", "--names", "fit,later",
                     "-o", "e.html", "-q", "--text-col", "text"], capsys)
    assert status == 0
    data = decode((model / "e.html").read_text(encoding="utf-8"))
    assert data["compare"] == ["corpus", "fit", "later"] and data["n_documents"] == 55


@pytest.mark.parametrize("args, message", [
    (["--versus", "nowhere.csv"], "argument --versus: .*nowhere.csv"),
    (["--versus", "autumn.csv", "--names", "one"], "argument --names: two different names"),
    (["--versus", "autumn.csv", "--names", "a,a"], "argument --names: two different names"),
    (["--names", "a,b"], "argument --names: name the two corpora of --versus"),
    (["--versus", "autumn.csv", "--color-by", "x"], "argument --versus: the map opens on"),
])
def test_errors_name_the_argument(model, capsys, args, message):
    status, out = run(["html", "grid.npz", "-o", "m.html", "--text-col", "text", *args],
                      capsys)
    lines = [ln for ln in out.err.splitlines() if ln.strip()]
    assert status == 2 and len(lines) == 1 and "Traceback" not in out.err, out.err
    assert re.search(message, lines[0]), lines[0]
    assert not (model / "m.html").exists()
