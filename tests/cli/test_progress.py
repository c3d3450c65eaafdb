"""The command line's progress display (countgrid.cli._progress) on a log, a terminal
without tqdm, and quiet; and the events the estimators report (countgrid._utils.progress)."""
import io

import numpy as np
import pytest

import countgrid
from countgrid._utils import progress as _progress
from countgrid.cli._progress import ProgressDisplay, show_progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def _events(display, total=25, stage=""):
    for done in range(1, total + 1):
        display({"owner": "CountingGrid", "stage": stage, "done": done, "total": total,
                 "value": -1000.0 + done, "label": "log-likelihood", "unit": "iteration"})


def test_log_lines_every_tenth_update_and_the_last():
    out = io.StringIO()
    d = ProgressDisplay(stream=out)
    _events(d, 25)
    d.close()
    lines = out.getvalue().splitlines()
    assert [ln.split(":")[1].split()[1] for ln in lines] == ["1/25", "10/25", "20/25", "25/25"]
    assert "log-likelihood -9.750000e+02" in lines[-1]


def test_a_stage_that_stops_early_still_logs_its_last_update():
    out = io.StringIO()
    d = ProgressDisplay(stream=out)
    _events(d, 7)                                  # of 7 ... but say it converged at 7/100:
    d({"owner": "PLSA", "stage": "", "done": 3, "total": 100, "value": 1.0,
       "label": "log-likelihood", "unit": "iteration"})
    d({"owner": "PLSA", "stage": "", "done": 4, "total": 100, "value": 2.0,
       "label": "log-likelihood", "unit": "iteration"})
    d.close()
    assert out.getvalue().splitlines()[-1].startswith("PLSA: iteration 4/100")


def test_terminal_without_tqdm_rewrites_one_line(monkeypatch):
    monkeypatch.setattr("countgrid.cli._progress._tqdm", lambda: None)
    out = Terminal()
    d = ProgressDisplay(stream=out)
    _events(d, 5)
    d.close()
    text = out.getvalue()
    assert text.count("\r") == 5 and text.endswith("\n") and text.count("\n") == 1


def test_quiet_shows_nothing_and_verbose_logs_every_update():
    out = io.StringIO()
    d = ProgressDisplay(stream=out, quiet=True)
    _events(d, 5)
    d.close()
    assert out.getvalue() == ""
    out = io.StringIO()
    d = ProgressDisplay(stream=out, verbose=1)
    _events(d, 5)
    d.close()
    assert len(out.getvalue().splitlines()) == 5


def test_estimators_report_every_iteration_to_the_listener():
    X = np.random.default_rng(0).poisson(1.0, size=(40, 15))
    seen = []
    with _progress.listen(seen.append):
        countgrid.CountingGrid((5, 5), (2, 2), n_iter=4, tol=0, window_schedule=[((3, 3), 2)],
                               random_state=0).fit(X)
        countgrid.PLSA(3, n_iter=3, tol=0, random_state=0).fit(X)
        countgrid.RAP(4, n_epochs=2, random_state=0).fit(X)
    grid = [(e["stage"], e["done"], e["total"]) for e in seen if e["owner"] == "CountingGrid"]
    assert grid == [(" window (3, 3)", 1, 2), (" window (3, 3)", 2, 2),
                    ("", 1, 4), ("", 2, 4), ("", 3, 4), ("", 4, 4)]
    plsa = [e for e in seen if e["owner"] == "PLSA"]
    assert [e["done"] for e in plsa][-1] == 3 and all(np.isfinite(e["value"]) for e in plsa)
    assert [(e["done"], e["unit"]) for e in seen if e["owner"] == "RAP"] == [
        (1, "epoch"), (2, "epoch")]
    # no listener, no events (and no cost): the context variable is reset
    assert _progress._LISTENER.get() is None


def test_show_progress_closes_the_line_on_error():
    out = io.StringIO()
    try:
        with show_progress(stream=out):
            _progress.report("X", 1, 3, 1.0)
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert out.getvalue().endswith("\n")


def test_terminal_with_tqdm_draws_a_bar_per_stage():
    tqdm = __import__("pytest").importorskip("tqdm")
    assert tqdm
    out = Terminal()
    d = ProgressDisplay(stream=out)
    _events(d, 5, stage=" window (8, 8)")
    _events(d, 3)
    d.close()
    text = out.getvalue()
    assert "CountingGrid window (8, 8)" in text and "5/5" in text and "3/3" in text
    assert "log-likelihood" in text


# ---------------------------------------------------------------- passes (html, plot, top-words)
def _pass(display, sizes, total, stage=" posteriors", unit="document"):
    done = 0
    display({"owner": "map", "stage": stage, "done": 0, "total": total, "value": None,
             "label": "", "unit": unit})
    for size in sizes:
        done += size
        display({"owner": "map", "stage": stage, "done": done, "total": total,
                 "value": None, "label": "", "unit": unit})


def test_a_pass_logs_its_start_each_tenth_and_its_end():
    out = io.StringIO()
    d = ProgressDisplay(stream=out)
    _pass(d, [7] * 142 + [6], 1000)                # 143 blocks of documents
    d.close()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("map posteriors: document 0/1000  (")
    assert lines[-1].startswith("map posteriors: document 1000/1000  (")
    assert len(lines) == 11                        # the start, 9 tenths, the end
    assert [int(ln.split()[3].split("/")[0]) * 10 // 1000 for ln in lines[1:-1]] == \
        list(range(1, 10))
    out = io.StringIO()
    d = ProgressDisplay(stream=out)
    _pass(d, [400, 400, 200], 1000, " word ranking", "cell")    # fewer blocks than tenths
    d.close()
    assert [ln.split(":")[1].split()[:2] for ln in out.getvalue().splitlines()] == [
        ["cell", "0/1000"], ["cell", "400/1000"], ["cell", "800/1000"], ["cell", "1000/1000"]]


def test_passes_report_only_inside_passes():
    X = np.random.default_rng(0).poisson(1.0, size=(50, 30))
    cg = countgrid.CountingGrid((6, 6), (2, 2), n_iter=2, tol=0, window_schedule=None,
                                random_state=0).fit(X)
    seen = []
    with _progress.listen(seen.append):
        cg.transform(X)
        cg.positions(X)
        cg.top_words(3)
    assert seen == []                              # a fit's listener sees no passes
    _progress.report_pass(" posteriors", 1, 2, "document")      # no listener: nothing
    with _progress.listen(seen.append), _progress.passes("map"):
        cg.positions(X)
        cg.top_words(3)
        _progress.report("CountingGrid", 1, 1)     # the updates of a fit still pass through
    posteriors = [e for e in seen if e["stage"] == " posteriors"]
    words = [e for e in seen if e["stage"] == " word ranking"]
    assert all(e["owner"] == "map" and e["value"] is None for e in posteriors + words)
    assert [e["done"] for e in posteriors] == [0, 50]
    assert {e["unit"] for e in posteriors} == {"document"} and posteriors[0]["total"] == 50
    assert [e["done"] for e in words] == [0, 36] and {e["unit"] for e in words} == {"cell"}
    assert seen[-1]["owner"] == "CountingGrid"
    assert _progress._PASS_OWNER.get() is None
    assert {e["unit"] for e in seen} <= set(_progress.UPDATE_UNITS + _progress.PASS_UNITS)


def test_terminal_with_tqdm_draws_a_bar_per_pass():
    pytest.importorskip("tqdm")
    out = Terminal()
    d = ProgressDisplay(stream=out)
    _pass(d, [300, 300, 400], 1000)
    d.close()
    text = out.getvalue()
    assert "map posteriors" in text and "1000/1000" in text and "document" in text


# ---------------------------------------------------------------- the verbs
@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    """A saved 8x8 grid with its corpus (120 documents, 150 words, a 'group' column)."""
    from countgrid.text import Corpus

    rng = np.random.default_rng(1)
    X = rng.poisson(0.3, size=(120, 150))
    X[np.arange(120), rng.integers(0, 150, 120)] += 1
    corpus = Corpus(X, [f"word{j}" for j in range(150)], ids=[f"d{i}" for i in range(120)],
                    titles=[f"title {i}" for i in range(120)],
                    metadata={"group": np.array(["a", "b", "c"])[np.arange(120) % 3]})
    cg = countgrid.CountingGrid((8, 8), (3, 3), n_iter=3, tol=0, window_schedule=None,
                                random_state=0).fit(X)
    path = tmp_path_factory.mktemp("progress") / "model.npz"
    cg.save(path, corpus=corpus)
    return path


@pytest.fixture
def small_blocks(monkeypatch):
    """Posterior blocks of 10 documents (12 blocks), word rankings of 8 cells (8 blocks)."""
    from countgrid.grid import _em, _words

    monkeypatch.setattr(_em, "BLOCK_ELEMENTS", 64 * 10)
    monkeypatch.setattr(_words, "_TOP_WORDS_BLOCK", 150 * 8)


def _cli(capsys, *argv):
    from countgrid.cli import main

    capsys.readouterr()
    assert main([str(a) for a in argv]) == 0
    return capsys.readouterr()


def _stages(err):
    """{stage name: [done/total, ...]} of the progress lines in ``err``."""
    out = {}
    for line in err.splitlines():
        name, _, rest = line.partition(": ")
        out.setdefault(name, []).append(rest.split()[1])
    return out


VERBS = [
    ("html", ["map.html"], {"map word ranking": "64/64", "map posteriors": "120/120"}),
    ("plot", ["words.png", "--color-by", "group"],
     {"plot word ranking": "64/64", "plot posteriors": "120/120"}),
    ("plot", ["positions.png", "--kind", "positions"], {"plot posteriors": "120/120"}),
    ("top-words", ["top.tsv"], {"top-words word ranking": "64/64"}),
    ("top-words", ["-"], {"top-words word ranking": "64/64"}),
]


@pytest.mark.parametrize("verb, rest, stages", VERBS,
                         ids=["html", "plot-words", "plot-positions", "top-words",
                              "top-words-stdout"])
def test_verbs_show_progress_on_stderr_and_nothing_with_q(model_file, tmp_path, capsys,
                                                          small_blocks, verb, rest, stages):
    outputs = []
    for quiet in ([], ["-q"]):
        folder = tmp_path / ("quiet" if quiet else "shown")
        folder.mkdir()
        target = rest[0] if rest[0] == "-" else folder / rest[0]
        res = _cli(capsys, verb, model_file, "-o", target, *rest[1:], *quiet)
        outputs.append(res.out.encode() if rest[0] == "-" else target.read_bytes())
        if quiet:
            assert res.err == ""
            continue
        seen = _stages(res.err)
        assert set(seen) == set(stages), res.err
        for name, last in stages.items():
            assert seen[name][0].startswith("0/") and seen[name][-1] == last
            assert len(seen[name]) >= 3, res.err        # several updates of the pass
    assert outputs[0] == outputs[1]                     # the same bytes, shown or not
