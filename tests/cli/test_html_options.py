"""Options of ``countgrid html`` (docs/map.md): ``--time-col``/``--period`` give the map
the periods of a metadata column of dates; ``--versus``/``--names`` map two corpora and
open on their difference, named after the inputs or by --names.  Misuse (a missing column,
a value that is not a date, too many periods, --period without --time-col, --names
without --versus, ...) is one line naming the argument."""
import csv
import re
import warnings

import numpy as np
import pytest

import countgrid
from countgrid.cli import main
from countgrid.text import Corpus

from _map_page import decode, decode_block

WORDS = [f"w{i}" for i in range(8)]


@pytest.fixture
def model(tmp_path, monkeypatch):
    """grid.npz (with its corpus: columns date, bad, old) and two CSV corpora over its
    words, spring.csv and autumn.csv."""
    monkeypatch.chdir(tmp_path)
    X = np.random.default_rng(0).poisson(1.0, size=(40, 8))
    dates = np.array([f"2021-{1 + t % 5:02d}-{1 + t % 20:02d}" for t in range(40)], object)
    dates[3] = ""
    corpus = Corpus(X, WORDS,
                    metadata={"date": dates, "bad": np.array(["2021-01-01"] * 39 + ["soon"]),
                              "old": np.array(["1800-01-01"] + ["2021-01-01"] * 39)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid = countgrid.CountingGrid((4, 5), (2, 2), n_iter=3, random_state=0).fit(X)
    countgrid.io.save(grid, "grid.npz", corpus=corpus)
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


def test_the_map_gets_the_periods(model, capsys):
    status, _ = run(["html", "grid.npz", "-o", "m.html", "--time-col", "date", "-q"], capsys)
    assert status == 0
    data = decode((model / "m.html").read_text(encoding="utf-8"))
    assert data["time"]["name"] == "date" and data["time"]["period"] == "week"  # 20 weeks
    assert "date" not in [c["name"] for c in data["colorings"]]
    status, _ = run(["html", "grid.npz", "-o", "w.html", "--time-col", "date", "--period",
                     "month", "-q"], capsys)
    assert status == 0
    t = decode((model / "w.html").read_text(encoding="utf-8"))["time"]
    assert t["period"] == "month"
    assert t["labels"] == ["2021-01", "2021-02", "2021-03", "2021-04", "2021-05"]
    assert np.asarray(t["counts"]).tolist() == [8, 8, 8, 7, 8] and t["n_undated"] == 1


@pytest.mark.parametrize("args, message", [
    (["--time-col", "when"], re.escape("argument --time-col: the documents have no column "
                                       "'when' (they have: date, bad, old)")),
    (["--time-col", "bad"], r"argument --time-col\[39\] = 'soon' is not a date"),
    (["--time-col", "old", "--period", "day"], "argument --period='day' cuts the dates "
                                               r"\(1800-01-01 to 2021-01-01\) into"),
    (["--period", "year"], "argument --period: choose the periods of a --time-col column"),
    (["--time-col", "date", "--color-by", "date"], "argument --color-by: 'date' is the "
                                                   "--time-col"),
])
def test_time_errors_name_the_argument(model, capsys, args, message):
    status, out = run(["html", "grid.npz", "-o", "m.html", *args], capsys)
    lines = [ln for ln in out.err.splitlines() if ln.strip()]
    assert status == 2 and len(lines) == 1 and "Traceback" not in out.err, out.err
    assert re.search(message, lines[0]), lines[0]
    assert not (model / "m.html").exists()


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
def test_versus_errors_name_the_argument(model, capsys, args, message):
    status, out = run(["html", "grid.npz", "-o", "m.html", "--text-col", "text", *args],
                      capsys)
    lines = [ln for ln in out.err.splitlines() if ln.strip()]
    assert status == 2 and len(lines) == 1 and "Traceback" not in out.err, out.err
    assert re.search(message, lines[0]), lines[0]
    assert not (model / "m.html").exists()


def test_bundle_writes_a_folder_with_the_same_data(model, capsys):
    status, cap = run(["html", "grid.npz", "--bundle", "big", "--time-col", "date"], capsys)
    assert status == 0, cap.err
    assert re.search(r"wrote big/index\.html \([\d.]+ KB, 40 documents in 1 chunk file\)",
                     cap.out)
    assert sorted(p.name for p in (model / "big" / "documents").iterdir()) == \
        ["chunk-00000.js"]
    status, _ = run(["html", "grid.npz", "-o", "one.html", "--time-col", "date", "-q"], capsys)
    page = (model / "big" / "index.html").read_text(encoding="utf-8")
    assert 'id="cg-documents"' not in page and "documents/chunk-00000.js" in page
    one = decode((model / "one.html").read_text(encoding="utf-8"))
    assert one["time"]["labels"] == decode_block(page, "cg-data")["time"]["labels"]


@pytest.mark.parametrize("argv, message", [
    (["-o", "m.html", "--bundle", "b"], "argument -o/--output: .*not both"),
    ([], "argument -o/--output: give the HTML file to write, or --bundle DIR"),
    (["--bundle", "grid.npz"], "argument --bundle: grid.npz exists and is not a folder"),
])
def test_bundle_misuse_is_named(model, capsys, argv, message):
    status, cap = run(["html", "grid.npz", *argv], capsys)
    assert status == 2 and re.search(message, cap.err), cap.err
