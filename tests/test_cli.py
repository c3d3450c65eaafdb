"""Tests of the countgrid command line (countgrid.cli)."""
import subprocess
import sys

import numpy as np
import pytest

from countgrid import cli

try:
    import matplotlib  # noqa: F401

    HAVE_MPL = True
except ImportError:  # pragma: no cover - depends on the environment
    HAVE_MPL = False

# A small, quick run: 10x10 grid, 2 coarse + 3 EM iterations.
QUICK = ["demo", "--extent", "10", "10", "--window", "3", "3", "--coarse-window", "5", "5",
         "--coarse-iter", "2", "--n-iter", "3", "--threads", "1"]


@pytest.mark.skipif(not HAVE_MPL, reason="matplotlib is not installed")
def test_demo_writes_png(tmp_path, capsys):
    out = tmp_path / "grid.png"
    assert cli.main(QUICK + ["--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2224 training, 556 test posts" in text
    assert "[CountingGrid window (5, 5)] iteration    2" in text   # per-iteration progress
    assert "[CountingGrid] iteration    3" in text
    assert "final log-likelihood" in text
    acc = float(text.split("test accuracy (label embedding): ")[1].split()[0])
    assert 0.5 < acc <= 1.0                     # well above chance even after 5 iterations
    assert f"wrote the word grid to {out}" in text
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_text_output(tmp_path, capsys):
    out = tmp_path / "grid.txt"
    assert cli.main(QUICK + ["--quiet", "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "iteration" not in text.replace("iterations", "")   # --quiet
    written = out.read_text()
    assert "10 x 10 counting grid" in written
    assert "A = alt.atheism, B = rec.sport.baseball, C = sci.space" in written


def test_demo_without_matplotlib_falls_back_to_text(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "_have_matplotlib", lambda: False)
    out = tmp_path / "grid.png"
    assert cli.main(QUICK + ["--quiet", "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "pip install countgrid[plot]" in text
    assert not out.exists()
    assert "counting grid" in (tmp_path / "grid.txt").read_text()


def test_info(capsys):
    assert cli.main(["info"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("countgrid ") and "OpenMP" in text and "threads" in text


@pytest.mark.parametrize("argv", [[], ["demo", "--window", "30", "30"], ["demo", "--extent", "0", "4"],
                                  ["demo", "--threads", "0"], ["nope"]])
def test_bad_arguments_exit(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code != 0


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("countgrid ")


def test_stratified_split():
    y = np.repeat([0, 1, 2], [50, 100, 10])
    train, test = cli.stratified_split(y, 0.2, random_state=3)
    assert np.bincount(y[test]).tolist() == [10, 20, 2]
    assert np.intersect1d(train, test).size == 0 and train.size + test.size == y.size
    again = cli.stratified_split(y, 0.2, random_state=3)
    assert np.array_equal(again[1], test)
    with pytest.raises(ValueError):
        cli.stratified_split(y, 1.5)


def test_module_entry_point():
    res = subprocess.run([sys.executable, "-m", "countgrid.cli", "info"], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert "OpenMP" in res.stdout
