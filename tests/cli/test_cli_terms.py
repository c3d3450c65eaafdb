"""The command line speaks its own terms (issue 22, item 2): library messages that name a
Python parameter are shown with the option the user types; every value of the Python API
is accepted (``--grid auto``, ``--tol``); evaluate shows progress inside folds and checks
the memory of every grid it will hold."""
import os

import numpy as np
import pytest

import countgrid
from countgrid.cli._args import cli_terms

from cli.test_verbs import run, write_news_csv


@pytest.mark.parametrize("text, expected", [
    ("tol=1e-05: raise n_iter or tol", "--tol 1e-05: raise --n-iter or --tol"),
    ("extent='auto' would use 24x24", "--grid auto would use 24x24"),
    ("e.g. encoding='latin-1' or encoding='cp1252'",
     "e.g. --encoding latin-1 or --encoding cp1252"),
    ("text_col is required", "--text-col is required"),
    ("meta_cols applies to CSV", "--meta-cols applies to CSV"),
    ("window=(4, 4) is larger", "--window 4x4 is larger"),
    ("on_error='fail' stops", "--on-error fail stops"),
    ("the window is larger than the extent", "the window is larger than the extent"),
    ("n_iter_ = 3 and self.tol", "n_iter_ = 3 and self.tol"),
    ("ids 'row 3'; they are kept as empty rows (drop them with "
     "corpus.subset(corpus.counts.getnnz(axis=1) > 0))",
     "ids 'row 3'; they are kept as empty rows"),
    ("a tolerance", "a tolerance"),
    ("estep='coarse-to-fine' searches 1-D and 2-D grids",
     "--estep coarse-to-fine searches 1-D and 2-D grids"),
    ("subsample=0.5 needs batch EM", "--subsample 0.5 needs batch EM"),
])
def test_cli_terms(text, expected):
    assert cli_terms(text) == expected


@pytest.fixture()
def small_csv(tmp_path):
    return write_news_csv(tmp_path, 12)


def test_warnings_name_the_options(small_csv):
    res = run(["fit", "docs.csv", "--text-col", "body", "-o", "m.npz", "--n-iter", "2",
               "--grid", "auto", "--coarse-iter", "0", "--threads", "1"], small_csv)
    assert res.returncode == 0, res.stderr
    assert "raise --n-iter or --tol" in res.stderr and "n_iter" not in res.stderr
    est = countgrid.load(small_csv / "m.npz")
    assert est.extent == "auto" and est.window == (4, 4)
    assert est.pi_.shape[:2] == (16, 16)                      # auto for 36 documents
    res = run(["fit", "docs.csv", "--text-col", "nope", "-o", "m2.npz"], small_csv)
    assert res.returncode == 1 and "--text-col" in res.stderr and "text_col" not in res.stderr


def test_tol_and_dtype_reach_the_model(small_csv):
    res = run(["fit", "docs.csv", "--text-col", "body", "-o", "m.npz", "--tol", "0.5",
               "--dtype", "float64", "--threads", "1"], small_csv)
    assert res.returncode == 0, res.stderr
    est = countgrid.load(small_csv / "m.npz")
    assert est.tol == 0.5 and est.pi_.dtype == np.float64 and est.n_iter_ <= 35
    # tol=0 is a value of the Python API (run every iteration): the command line takes it
    res = run(["fit", "docs.csv", "--text-col", "body", "-o", "m0.npz", "--tol", "0",
               "--n-iter", "3", "--coarse-iter", "0", "--threads", "1", "-q"], small_csv)
    assert res.returncode == 0, res.stderr
    est = countgrid.load(small_csv / "m0.npz")
    assert est.tol == 0 and est.n_iter_ == 3
    for bad in (["--tol", "-1"], ["--tol", "nan"], ["--dtype", "float16"], ["--grid", "autox"]):
        res = run(["fit", "docs.csv", "--text-col", "body", "-o", "m.npz", *bad], small_csv)
        assert res.returncode == 2 and bad[0] in res.stderr, res.stderr


def test_evaluate_shows_progress_inside_folds_and_advice(small_csv):
    res = run(["evaluate", "docs.csv", "--text-col", "body", "--label-col", "group",
               "--folds", "2", "--n-iter", "3", "--coarse-iter", "0", "--threads", "1"],
              small_csv)
    assert res.returncode == 0, res.stderr
    assert "fold 1/2: fitting on" in res.stdout
    assert "CountingGrid" in res.stderr and "iteration" in res.stderr     # progress
    assert "accuracy" in res.stdout and "(sized to the documents)" in res.stdout


def test_evaluate_checks_the_memory_of_every_grid(small_csv):
    res = run(["evaluate", "docs.csv", "--text-col", "body", "--label-col", "group",
               "--folds", "2", "--classifier", "generative", "--grid", "64x64"], small_csv,
              env={"COUNTGRID_MAX_MEMORY": "20M"})
    assert res.returncode in (1, 2) and "3 counting grids (one per class" in res.stderr, \
        res.stderr


def test_evaluate_learns_class_grids_on_the_class_words(small_csv):
    """Many classes over a large vocabulary: --class-words K keeps the K words with the
    largest chi-squared statistic on each training fold (55 Debian sections x 38,559
    words needed about 20 GB of grids); the memory check counts the K words."""
    base = ["evaluate", "docs.csv", "--text-col", "body", "--label-col", "group",
            "--folds", "2", "--classifier", "generative", "--grid", "64x64", "--n-iter", "2",
            "--coarse-iter", "0", "--threads", "1", "-q"]
    res = run(base, small_csv, env={"COUNTGRID_MAX_MEMORY": "80M"})
    assert res.returncode in (1, 2) and "--class-words" in res.stderr, res.stderr
    assert "max_features" not in res.stderr
    res = run(base + ["--class-words", "20"], small_csv, env={"COUNTGRID_MAX_MEMORY": "80M"})
    assert res.returncode == 0, res.stderr
    assert "counting grids (one per class, 20 class words) 64x64" in res.stdout, res.stdout
    res = run(["evaluate", "docs.csv", "--text-col", "body", "--label-col", "group",
               "--class-words", "20"], small_csv)
    assert res.returncode == 2 and "--class-words: only with --classifier generative" \
        in res.stderr, res.stderr


def test_generative_classifier_counts_every_grid(monkeypatch):
    monkeypatch.setenv("COUNTGRID_MAX_MEMORY", "60M")
    X = np.random.default_rng(0).poisson(1, (300, 3000))
    y = np.arange(300) % 30
    with pytest.raises(MemoryError, match="30 counting grids .* over 3000 words.*max_features"):
        countgrid.GenerativeCountingGridClassifier().fit(X, y)
    # the selected words are what the grids hold: 100 of them fit
    with pytest.raises(MemoryError, match="over 100 words"):
        countgrid.GenerativeCountingGridClassifier(max_features=100, extent=(64, 64)).fit(X, y)
    assert os.environ["COUNTGRID_MAX_MEMORY"] == "60M"


def test_evaluate_leaves_out_classes_smaller_than_the_folds(small_csv):
    """A 58-section corpus sampled to 10,000 documents had sections of 1-3 documents:
    evaluate stopped with 'n_folds=5 is more than the 1 samples of ... np.str_('news')'.
    Such classes are left out with one warning that names them and their sizes."""
    with open(small_csv / "docs.csv", "a", newline="", encoding="utf-8") as f:
        f.write('"a lone post about zope and plone servers",zope\n')
    res = run(["evaluate", "docs.csv", "--text-col", "body", "--label-col", "group",
               "--folds", "3", "--grid", "6x6", "--window", "2x2", "--n-iter", "2",
               "--coarse-iter", "0", "--threads", "1"], small_csv)
    assert res.returncode == 0, res.stderr
    assert ("1 of 4 classes have fewer documents than --folds 3 and are left out "
            "(1 documents): zope (1)") in res.stderr
    assert "36 documents" in res.stdout and "3 classes" in res.stdout
    assert "np.str_" not in res.stdout + res.stderr


def test_large_corpus_options_reach_the_grid(small_csv):
    """--estep, --accelerate, --subsample and --track (docs/scale.md) are the grid's
    estep, accelerate, subsample and estep_params={"track": True}, kept in the model file;
    the fit is the one the Python API gives for the same parameters."""
    res = run(["fit", "docs.csv", "--text-col", "body", "-o", "fast.npz", "--grid", "8x8",
               "--window", "3x3", "--estep", "coarse-to-fine", "--accelerate", "--subsample",
               "0.5", "--track", "--n-iter", "40", "--threads", "1", "-q"], small_csv)
    assert res.returncode == 0, res.stderr
    model, corpus = countgrid.load(small_csv / "fast.npz", return_corpus=True)
    params = model.get_params()
    assert (params["estep"], params["accelerate"], params["subsample"],
            params["estep_params"]) == ("coarse-to-fine", True, 0.5, {"track": True})
    again = countgrid.CountingGrid(**params).fit(corpus.counts)
    np.testing.assert_array_equal(again.pi_, model.pi_)


@pytest.mark.parametrize("extra, flag, says", [
    (["--track"], "--track", "add --estep coarse-to-fine"),
    (["--accelerate", "--layers", "2"], "--accelerate", "not of --layers"),
    (["--estep", "coarse-to-fine", "--model", "plsa"], "--estep", "not of --model plsa"),
    (["--subsample", "auto", "--meta-cols", "group", "--time-col", "group"], "--subsample",
     "not of time slices"),
    (["--subsample", "1.5"], "--subsample", "strictly between 0 and 1"),
    (["--subsample", "0"], "--subsample", "positive integer"),
    (["--estep", "fine"], "--estep", "invalid choice"),
])
def test_large_corpus_options_refused_where_they_do_not_apply(small_csv, extra, flag, says):
    res = run(["fit", "docs.csv", "--text-col", "body", "-o", "m.npz", "-q", *extra], small_csv)
    assert res.returncode == 2, res.stderr
    assert f"argument {flag}" in res.stderr and says in res.stderr, res.stderr
    assert not (small_csv / "m.npz").exists()
