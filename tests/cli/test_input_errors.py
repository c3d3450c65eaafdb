"""Hostile inputs of the command line found by the hostile suite (tests/hostile, issue 11):
each is one line on stderr naming the argument, never a traceback.  The verbs run in-process
(``countgrid.cli.main``), as the hostile suite runs them."""
import warnings

import numpy as np
import pytest

import countgrid
from countgrid.cli import main
from countgrid.text import Corpus

from _expected_warnings import FEW_ITERATIONS

pytestmark = FEW_ITERATIONS


def run(argv, capsys):
    try:
        status = main(argv)
    except SystemExit as exc:              # argparse errors
        status = exc.code
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip() and "warning:" not in ln]
    assert "Traceback" not in err and len(lines) == 1, err
    return status, lines[0]


@pytest.fixture
def models(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    X = np.random.default_rng(0).poisson(1.0, size=(20, 6))
    corpus = Corpus(X, [f"w{i}" for i in range(6)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g2 = countgrid.CountingGrid((3, 3), (2, 2), n_iter=2, random_state=0).fit(X)
        g3 = countgrid.CountingGrid((3, 3, 2), (2, 2, 1), n_iter=2, random_state=0).fit(X)
    countgrid.io.save(g2, "grid.npz")
    countgrid.io.save(g3, "grid3d.npz", corpus=corpus)
    return tmp_path


def test_vocab_file_that_is_not_utf8(models, capsys):
    (models / "vocab.txt").write_bytes(b"\xff\xfe\x00abc\n" * 6)
    status, line = run(["top-words", "grid.npz", "--vocab", "vocab.txt"], capsys)
    assert status == 2 and "--vocab" in line and "vocab.txt is not UTF-8" in line


@pytest.mark.parametrize("dpi", ["0", "-5", "100000"])
def test_plot_dpi_out_of_range(models, capsys, dpi):
    pytest.importorskip("matplotlib")
    status, line = run(["plot", "grid.npz", "-o", "p.png", "--dpi", dpi],
                       capsys)
    assert status == 2 and "--dpi" in line
    assert not (models / "p.png").exists()


@pytest.mark.parametrize("argv", [["plot", "grid3d.npz", "-o", "p.png"],
                                  ["html", "grid3d.npz", "-o", "m.html"]])
def test_pictures_and_maps_of_a_3d_grid_name_the_model(models, capsys, argv):
    pytest.importorskip("matplotlib")
    status, line = run(argv, capsys)
    assert status == 2 and "argument MODEL" in line and "3x3x2" in line


def test_evaluate_with_more_folds_than_a_class_has_documents(models, capsys):
    texts = [f"alpha{i % 3} beta{i % 5} gamma{i % 2}" for i in range(12)]
    (models / "d.csv").write_text("text,label\n" + "".join(
        f"{t},{'ab'[i % 2]}\n" for i, t in enumerate(texts)))
    status, line = run(["evaluate", "d.csv", "--text-col", "text", "--label-col", "label",
                        "--folds", "50", "--grid", "3x3", "--window", "2x2", "--min-df", "1",
                        "--max-df", "1.0", "-q"], capsys)
    assert status == 2 and "--folds" in line and "'label'" in line
