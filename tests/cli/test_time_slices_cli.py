"""Time-sliced grids on the command line (``fit --time-col``, and ``top-words``,
``transform``, ``html`` of the model) and ``countgrid align``, through the real entry
point, checked against the Python API."""
import csv
import warnings

import numpy as np
import pytest

import countgrid
from countgrid.datasets import load_news20_3class_texts
from countgrid.grid import TimeSlicedCountingGrid, align
from countgrid.maps import map_data

from tests.cli.test_verbs import SMALL_GRID, ok, one_line_error, run

YEARS = ("2019", "2020", "2021")


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """dated.csv: 150 posts (body, group, date) over three years."""
    root = tmp_path_factory.mktemp("slices")
    data = load_news20_3class_texts()
    with open(root / "dated.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["body", "group", "date"])
        for g in range(3):
            for k, i in enumerate(np.flatnonzero(data.y == g)[:50]):
                w.writerow([data.texts[i], data.label_names[g],
                            f"{YEARS[k % 3]}-{1 + k % 12:02d}-10"])
    return root


@pytest.fixture(scope="module")
def sliced(sandbox):
    res = ok(run(["fit", "dated.csv", "--text-col", "body", "--meta-cols", "group,date",
                  "--time-col", "date", "-o", "slices.npz", "--smoothness", "1",
                  *SMALL_GRID], sandbox))
    assert "8x8 counting grid per year: 3 periods (2019 to 2021)" in res.stdout
    model, corpus = countgrid.io.load(sandbox / "slices.npz", return_corpus=True)
    return model, corpus


def test_fit_time_col_fits_a_grid_per_period(sliced):
    model, corpus = sliced
    assert isinstance(model, TimeSlicedCountingGrid)
    assert model.period_ == "year" and model.period_labels_.tolist() == list(YEARS)
    assert model.smoothness == 1.0 and model.pi_.shape[:3] == (3, 8, 8)
    assert model.n_documents_.tolist() == [51, 51, 48]
    # the same model as Python's, from the corpus it saved
    with warnings.catch_warnings():        # 4 iterations: the command line's warnings
        warnings.simplefilter("ignore", countgrid.ConvergenceWarning)
        same = TimeSlicedCountingGrid(**model.get_params()).fit(
            corpus.counts, times=corpus.metadata["date"])
    np.testing.assert_array_equal(same.pi_, model.pi_)


def test_top_words_and_transform_read_each_period(sandbox, sliced):
    model, corpus = sliced
    ok(run(["top-words", "slices.npz", "-o", "top.tsv", "--weighting", "probability",
            "-n", "3"], sandbox))
    with open(sandbox / "top.tsv", encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    assert rows[0] == ["period", "row", "col", "words"] and len(rows) == 1 + 3 * 64
    vocab = np.asarray(corpus.vocabulary)
    for row in rows[1:][::37]:
        p, r, c = YEARS.index(row[0]), int(row[1]), int(row[2])
        pi = model.pi_[p, r, c].astype(np.float64)
        assert row[3].split() == list(vocab[np.argsort(-pi, kind="stable")[:3]])
    ok(run(["transform", "slices.npz", "-o", "pos.csv"], sandbox))
    with open(sandbox / "pos.csv", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    dates = corpus.metadata["date"]
    assert [t["period"] for t in table] == [d[:4] for d in dates]
    pos = model.positions(corpus.counts, times=dates, anchor="center")
    assert [(int(t["row"]), int(t["col"])) for t in table] == [tuple(p) for p in pos]
    np.testing.assert_allclose([float(t["log_likelihood"]) for t in table],
                               model.score_samples(corpus.counts, times=dates), rtol=1e-6)


def test_html_shows_each_period_s_grid(sandbox, sliced):
    model, corpus = sliced
    res = ok(run(["html", "slices.npz", "-o", "slices.html"], sandbox))
    assert "wrote" in res.stdout and (sandbox / "slices.html").stat().st_size > 0
    data = map_data(model, corpus=corpus, time="date")
    assert data["time"]["grids"].tolist() == [0, 1, 2]
    one = one_line_error(run(["html", "slices.npz", "-o", "x.html", "--period", "month"],
                             sandbox), 2, "--period")
    assert "year" in one


@pytest.mark.parametrize("extra, names", [
    (["--smoothness", "2"], ["--smoothness", "--time-col"]),
    (["--span", "2"], ["--span"]),
    (["--time-col", "when"], ["--time-col", "when", "date"]),
    (["--time-col", "date", "--layers", "2"], ["--time-col", "--layers"]),
    (["--time-col", "date", "--model", "plsa"], ["--time-col", "plsa"]),
])
def test_time_options_are_checked(sandbox, extra, names):
    res = run(["fit", "dated.csv", "--text-col", "body", "--meta-cols", "group,date",
               "-o", "bad.npz", *SMALL_GRID, *extra], sandbox)
    one_line_error(res, 2, *names)
    assert not (sandbox / "bad.npz").exists()


def test_align_reports_and_moves_a_grid(sandbox):
    for seed in ("1", "2"):
        ok(run(["fit", "dated.csv", "--text-col", "body", "-o", f"g{seed}.npz", "--seed", seed,
                *SMALL_GRID], sandbox))
    a, b = (countgrid.load(sandbox / f"g{s}.npz") for s in "12")
    res = ok(run(["align", "g1.npz", "g2.npz", "-o", "moved.npz"], sandbox))
    r = align(a, b)
    assert f"similarity {r.similarity:.4f}" in res.stdout
    assert f"shift {r.shift}" in res.stdout
    moved = countgrid.load(sandbox / "moved.npz")
    np.testing.assert_array_equal(moved.pi_, r.aligned.astype(a.pi_.dtype))
    # the moved grid is the same model: the same likelihood of the same documents, and
    # it sits in b's frame (aligning it again moves nothing)
    _, corpus = countgrid.io.load(sandbox / "moved.npz", return_corpus=True)
    np.testing.assert_allclose(moved.score_samples(corpus.counts),
                               a.score_samples(corpus.counts), rtol=1e-5)
    again = align(moved, b)
    assert again.shift == (0, 0) and not any(again.flips)
    assert again.similarity == pytest.approx(r.similarity, abs=1e-9)
    # a grid onto itself: the identity, similarity 1
    res = ok(run(["align", "g1.npz", "g1.npz"], sandbox))
    assert "shift (0, 0): similarity 1.0000" in res.stdout


def test_align_over_the_shared_words_of_two_corpora(sandbox):
    rows = list(csv.reader(open(sandbox / "dated.csv", encoding="utf-8")))
    with open(sandbox / "half.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([rows[0]] + rows[1::2])
    ok(run(["fit", "half.csv", "--text-col", "body", "-o", "half.npz", *SMALL_GRID],
           sandbox))
    ok(run(["fit", "dated.csv", "--text-col", "body", "-o", "g1.npz", "--seed", "1",
            *SMALL_GRID], sandbox))
    res = ok(run(["align", "half.npz", "g1.npz"], sandbox))
    _, ca = countgrid.io.load(sandbox / "half.npz", return_corpus=True)
    _, cb = countgrid.io.load(sandbox / "g1.npz", return_corpus=True)
    shared = len(np.intersect1d(ca.vocabulary, cb.vocabulary))
    assert len(ca.vocabulary) != len(cb.vocabulary)
    assert f"over {shared} shared words" in res.stdout
    one_line_error(run(["align", "half.npz", "dated.csv"], sandbox), 1, "dated.csv")


def test_the_dates_column_is_found_or_named(sandbox, sliced):
    """The verbs after fit find the one column whose dates fall in the model's periods;
    with two such columns they ask for --time-col; a document outside the periods gets
    its id and empty fields."""
    rows = list(csv.reader(open(sandbox / "dated.csv", encoding="utf-8")))
    with open(sandbox / "two_dates.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(rows[0] + ["posted"])
        for k, row in enumerate(rows[1:7]):
            posted = "1990-01-01" if k == 0 else row[2]
            w.writerow(row + [posted])
    base = ["transform", "slices.npz", "two_dates.csv", "--text-col", "body",
            "--meta-cols", "group,date,posted"]
    # date: every date in a fitted year; posted: one in 1990, so only date fits
    ok(run(base + ["-o", "found.csv"], sandbox))
    with open(sandbox / "found.csv", encoding="utf-8") as f:
        found = list(csv.DictReader(f))
    assert [t["period"] for t in found] == [r[2][:4] for r in rows[1:7]]
    # named: posted, whose first document lies outside the periods
    ok(run(base + ["--time-col", "posted", "-o", "named.csv"], sandbox))
    with open(sandbox / "named.csv", encoding="utf-8") as f:
        named = list(csv.DictReader(f))
    assert [named[0][k] for k in ("period", "row", "col", "log_likelihood")] == [""] * 4
    assert named[1:] == found[1:]
    # two candidates: the documents' dates twice
    with open(sandbox / "twice.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(rows[0] + ["again"])
        for row in rows[1:7]:
            w.writerow(row + [row[2]])
    line = one_line_error(run(["transform", "slices.npz", "twice.csv", "--text-col", "body",
                               "--meta-cols", "group,date,again"], sandbox),
                          2, "--time-col", "candidates: date, again")
    assert "per year" in line


def test_plot_draws_the_average_and_diagnostics_point_to_the_periods(sandbox, sliced):
    ok(run(["plot", "slices.npz", "-o", "slices.png"], sandbox))
    assert (sandbox / "slices.png").stat().st_size > 0
    one_line_error(run(["plot", "slices.npz", "-o", "where.png", "--kind", "positions"],
                       sandbox), 2, "--kind", "per year", "html")
    one_line_error(run(["diagnostics", "slices.npz", "-o", "d.tsv"], sandbox), 2,
                   "MODEL", "per year", "period_grid")
