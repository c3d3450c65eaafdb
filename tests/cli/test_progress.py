"""The command line's progress display (countgrid.cli._progress) on a log, a terminal
without tqdm, and quiet; and the events the estimators report (countgrid._progress)."""
import io

import numpy as np

import countgrid
from countgrid import _progress
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
