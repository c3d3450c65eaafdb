"""The record's checker, tools/results.py (docs/results.md, "Checked figures"; issue 23):
its parser finds every marked figure, markers and checks correspond one to one, a moved
documented value fails with a message naming the row, and ``--list`` works.  The
experiments themselves run in CI (``python tools/results.py`` in .ci/run); here only the
smallest check runs, once, end to end."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "results.py"
RECORD = ROOT / "docs" / "results.md"


@pytest.fixture(scope="module")
def results():
    if not TOOL.is_file() or not RECORD.is_file():
        pytest.skip("tools/results.py or docs/results.md not available (not a source checkout)")
    spec = importlib.util.spec_from_file_location("_cg_tool_results", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def record():
    return RECORD.read_text(encoding="utf-8")


def _moved(results, text, figure):
    """The record's text with ``figure``'s documented value moved by 10 tolerances, and the
    original marker."""
    marker = results.match_checks(results.parse_record(text))[figure]
    number = results.MARKER.match(marker.text).group("num")
    moved = f"{marker.value + 10 * marker.tol:.{marker.decimals}f}"
    new_text = marker.text.replace(number, moved, 1)
    assert text.count(marker.text) == 1
    return text.replace(marker.text, new_text), marker


def test_every_figure_of_the_checker_has_one_marker(results, record):
    markers = results.parse_record(record)
    matched = results.match_checks(markers)
    assert set(matched) == {i for c in results.CHECKS for i in c.marker_ids}
    assert len(markers) == len(matched) == sum(len(c.figures) for c in results.CHECKS)
    for m in markers:
        assert m.section and m.row and m.tol > 0, m
    # every check has its command, a budget and a stated reason for its tolerance
    for c in results.CHECKS:
        assert (ROOT / "experiments" / c.argv[0]).is_file()
        assert "{json}" in c.argv and c.budget > 0 and c.why
    assert sum(c.budget for c in results.CHECKS) <= 180


def test_the_parser_reads_numbers_spreads_and_emphasis(results):
    text = ("## Section\n"
            "| row a | 0.785 ± 0.025<!-- check: x tol=0.0005 --> | "
            "**88.68**<!-- check: y tol=0.005 --> (94/106) | "
            "*1,211.1*<!-- check: z tol=0.05 --> | 95.86 %<!-- check: w tol=0.005 --> | "
            "−6.16937<!-- check: v tol=0.000005 --> |\n")
    ms = {m.id: m for m in results.parse_record(text)}
    assert (ms["x"].value, ms["x"].sd, ms["x"].decimals, ms["x"].tol) == (0.785, 0.025, 3,
                                                                          0.0005)
    assert (ms["y"].value, ms["y"].sd) == (88.68, None)
    assert ms["z"].value == 1211.1
    assert ms["w"].value == 95.86
    assert ms["v"].value == -6.16937
    assert (ms["x"].section, ms["x"].row, ms["x"].line) == ("Section", "row a", 2)


@pytest.mark.parametrize("bad", [
    "| a | 0.8<!-- check: x -->",                  # no tolerance
    "| a | 0.8<!-- check: x tol=0.01 -->",         # below half the printed digit
    "| a | n/a<!-- check: x tol=0.5 -->",          # no number before it
    "| a | 0.8<!-- check: x tol=0.5 rel=1 -->",    # an option that does not exist
])
def test_malformed_markers_are_refused(results, bad):
    with pytest.raises(results.RecordError):
        results.parse_record(bad + "\n")


def test_markers_and_checks_correspond_one_to_one(results, record):
    first = results.parse_record(record)[0]
    number_only = results.MARKER.match(first.text).group("num")
    with pytest.raises(results.RecordError, match=f"{first.id!r} of tools/results.py has no"):
        results.match_checks(results.parse_record(record.replace(first.text, number_only, 1)))
    extra = record + "\n| x | 0.5<!-- check: no-such-figure tol=0.05 --> |\n"
    with pytest.raises(results.RecordError, match="no-such-figure"):
        results.match_checks(results.parse_record(extra))
    twice = record + f"\n| x | {first.text} |\n"
    with pytest.raises(results.RecordError, match="marked twice"):
        results.match_checks(results.parse_record(twice))


def test_a_moved_documented_value_fails(results, record, tmp_path):
    """A documented value altered in a copy of results.md: the value the record held
    before, measured again, is now beyond the tolerance, and the message names the row,
    both values and the tolerance."""
    for figure in ("zip-gtm-random", "promoters-2d:le-trans"):
        original = results.match_checks(results.parse_record(record))[figure]
        assert results.compare(original, original.value, original.sd) is None
        altered, _ = _moved(results, record, figure)
        copy = tmp_path / "results.md"
        copy.write_text(altered, encoding="utf-8")
        moved = results.match_checks(results.parse_record(copy.read_text(encoding="utf-8")))
        msg = results.compare(moved[figure], original.value, original.sd)
        assert msg is not None
        assert figure in msg and f"row '{original.row}'" in msg
        assert "documented" in msg and "measured" in msg and f"±{original.tol:g}" in msg
        # within the tolerance passes, beyond it does not, the spread included
        assert results.compare(original, original.value + 0.9 * original.tol, original.sd) is None
        assert results.compare(original, original.value + 1.1 * original.tol,
                               original.sd) is not None
    spread = results.match_checks(results.parse_record(record))["zip-gtm-random"]
    assert results.compare(spread, spread.value, spread.sd + 2 * spread.tol) is not None
    assert results.compare(spread, float("nan"), spread.sd) is not None


def test_list_shows_every_check_and_figure(results, capsys):
    assert results.main(["--list"]) == 0
    out = capsys.readouterr().out
    for c in results.CHECKS:
        assert c.id in out
        for i in c.marker_ids:
            assert i in out
    assert results.main(["--list", "--only", "promoters-2d"]) == 0
    out = capsys.readouterr().out
    assert "promoters-2d:le-trans" in out and "rap-r8-k25" not in out
    with pytest.raises(SystemExit) as exc:
        results.main(["--list", "--only", "no-such-check"])
    assert exc.value.code == 2
    assert "no-such-check" in capsys.readouterr().err


def test_a_record_that_disagrees_exits_2(results, record, tmp_path, capsys, monkeypatch):
    """A marker without a figure of CHECKS, a figure of CHECKS without its marker, or a
    malformed marker: exit 2 before any command runs, the culprit named."""
    monkeypatch.setattr(results, "run_check", _no_run)
    copy = tmp_path / "results.md"
    copy.write_text(record + "\n| x | 0.5<!-- check: no-such-figure tol=0.05 --> |\n",
                    encoding="utf-8")
    assert results.main(["--doc", str(copy)]) == 2
    assert "no-such-figure" in capsys.readouterr().err
    marker = results.match_checks(results.parse_record(record))["rap-r8-k25:lsi-p1"]
    copy.write_text(record.replace(marker.text, f"{marker.value:.3f}", 1), encoding="utf-8")
    assert results.main(["--doc", str(copy)]) == 2
    assert "'rap-r8-k25:lsi-p1' of tools/results.py has no marker" in capsys.readouterr().err
    copy.write_text(record.replace(marker.text, marker.text.replace(" tol=0.0005", ""), 1),
                    encoding="utf-8")
    assert results.main(["--doc", str(copy)]) == 2
    assert "needs exactly tol=" in capsys.readouterr().err
    assert results.main(["--doc", str(tmp_path / "absent.md")]) == 2
    assert "cannot read the record" in capsys.readouterr().err


def _no_run(check, workdir):
    raise AssertionError("no command may run when the record and the checker disagree")


def _documented(results, text):
    """A run_check that measures exactly what ``text`` documents."""
    markers = results.match_checks(results.parse_record(text))

    def run(check, workdir):
        return {name: (markers[i].value, markers[i].sd)
                for name, i in zip(check.figures, check.marker_ids)}
    return run


def test_exit_status_of_a_run(results, record, tmp_path, capsys, monkeypatch):
    """The commands replaced by their documented figures: 0 when every figure is within
    its tolerance; 1 when a documented value moved, the row, both values and the
    tolerance on stderr; 2 when a command fails, with its message."""
    monkeypatch.setattr(results, "run_check", _documented(results, record))
    assert results.main(["--only", "zip-gtm-random,promoters-2d"]) == 0
    out = capsys.readouterr().out
    assert "ok   zip-gtm-random" in out and "ok   promoters-2d:nn-trans" in out
    assert "0 moved beyond their tolerance, 0 errors" in out

    altered, marker = _moved(results, record, "promoters-2d:le-trans")
    copy = tmp_path / "results.md"
    copy.write_text(altered, encoding="utf-8")
    assert results.main(["--only", "promoters-2d", "--doc", str(copy)]) == 1
    captured = capsys.readouterr()
    assert "FAIL promoters-2d:le-trans" in captured.out
    assert "ok   promoters-2d:nn-trans" in captured.out
    err = captured.err
    assert f"row '{marker.row}'" in err and f"measured {marker.value:.4f}" in err
    assert f"documented {marker.value + 10 * marker.tol:.2f}" in err and "±0.005" in err

    def fails(check, workdir):
        raise RuntimeError(f"{check.id}: the command failed (exit 1): boom")
    monkeypatch.setattr(results, "run_check", fails)
    assert results.main(["--only", "defaults-mnb"]) == 2
    captured = capsys.readouterr()
    assert "ERROR defaults-mnb" in captured.out and "boom" in captured.err


@pytest.mark.parametrize("figure, tol, ok", [
    ("0.805", "0.0005", True), ("0.805", "0.0004", False),       # half the last digit
    ("88.68", "0.005", True), ("88.68", "0.001", False),
    ("523.6", "0.05", True), ("523.6", "0.5", True),              # wider is allowed
    ("97", "0.5", True), ("97", "0.49", False),
    ("0.785 ± 0.0250", "0.00005", True), ("0.785 ± 0.0250", "0.00004", False),  # the sd's
    ("0.00001", "0.000005", True), ("0.00001", "0.000004", False),
])
def test_a_tolerance_is_at_least_half_the_printed_digit(results, figure, tol, ok):
    text = f"| a | {figure}<!-- check: x tol={tol} --> |\n"
    if ok:
        (m,) = results.parse_record(text)
        assert m.tol == float(tol)
    else:
        with pytest.raises(results.RecordError, match="below half the printed precision"):
            results.parse_record(text)


def test_the_tolerance_is_inclusive_and_absolute(results):
    (m,) = results.parse_record("| a | 592.6<!-- check: x tol=0.05 --> |\n")
    assert results.compare(m, 592.65) is None and results.compare(m, 592.55) is None
    assert results.compare(m, 592.651) is not None and results.compare(m, 592.549) is not None
    assert results.compare(m, float("inf")) is not None
    (m,) = results.parse_record("| a | 0.785 ± 0.025<!-- check: x tol=0.0005 --> |\n")
    assert results.compare(m, 0.7854, 0.0246) is None
    assert results.compare(m, 0.7854, 0.0244) is not None            # the spread moved
    assert results.compare(m, 0.7854) is not None                     # no spread measured


def test_ci_runs_the_checker_after_the_suite():
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    suite = run.index("python -m pytest tests")
    assert "python tools/results.py" in [line.split("#")[0].strip() for line in run[suite + 1:]]


def test_a_moved_figure_fails_end_to_end(results, record, tmp_path, capsys):
    """The smallest check (naive Bayes, a few seconds) against a copy of the record whose
    figure was moved: exit status 1, the row named on stderr.  In the slow tier
    (tests/slow_tests.txt)."""
    altered, marker = _moved(results, record, "defaults-mnb")
    copy = tmp_path / "results.md"
    copy.write_text(altered, encoding="utf-8")
    assert results.main(["--only", "defaults-mnb", "--doc", str(copy)]) == 1
    captured = capsys.readouterr()
    assert "FAIL defaults-mnb" in captured.err and marker.row in captured.err
    assert "FAIL defaults-mnb" in captured.out


def test_quoted_markers_are_not_markers(results):
    text = ("Write `0.8<!-- check: ID tol=0.05 -->` after a figure.\n"
            "```\n| a | 0.5<!-- check: in-a-code-block tol=0.05 --> |\n```\n"
            "| `code` row | 0.25<!-- check: real tol=0.005 --> |\n")
    markers = results.parse_record(text)
    assert [(m.id, m.row) for m in markers] == [("real", "`code` row")]
