"""``countgrid html --time-col`` (docs/map.md, "Time"): the map gets the periods of a
metadata column of dates; a missing column, a value that is not a date, too many periods
and --period without --time-col are one line naming the argument."""
import re
import warnings

import numpy as np
import pytest

import countgrid
from countgrid.cli import main
from countgrid.text import Corpus

from _map_page import decode


@pytest.fixture
def model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    X = np.random.default_rng(0).poisson(1.0, size=(40, 8))
    dates = np.array([f"2021-{1 + t % 5:02d}-{1 + t % 20:02d}" for t in range(40)], object)
    dates[3] = ""
    corpus = Corpus(X, [f"w{i}" for i in range(8)],
                    metadata={"date": dates, "bad": np.array(["2021-01-01"] * 39 + ["soon"]),
                              "old": np.array(["1800-01-01"] + ["2021-01-01"] * 39)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid = countgrid.CountingGrid((4, 5), (2, 2), n_iter=3, random_state=0).fit(X)
    countgrid.io.save(grid, "grid.npz", corpus=corpus)
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
def test_errors_name_the_argument(model, capsys, args, message):
    status, out = run(["html", "grid.npz", "-o", "m.html", *args], capsys)
    lines = [ln for ln in out.err.splitlines() if ln.strip()]
    assert status == 2 and len(lines) == 1 and "Traceback" not in out.err, out.err
    assert re.search(message, lines[0]), lines[0]
    assert not (model / "m.html").exists()
