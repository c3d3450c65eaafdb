"""The fast tier (tests/_tiers.py) is what it says: its lists name real tests."""
import os

from _tiers import SLOW_FILES, STALE_SLOW_TESTS, listed_slow_tests

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_slow_files_exist():
    for path in SLOW_FILES:
        assert os.path.exists(os.path.join(REPO, path)), path


def test_listed_slow_tests_exist(request):
    """Every listed test of a collected file is still collected (else rewrite the list
    with tools/slow_tier.py)."""
    assert len(listed_slow_tests()) > 50
    assert request.config.stash[STALE_SLOW_TESTS] == []


def test_the_tiers_are_marked(request):
    session = request.session
    marked = {item.nodeid for item in session.items if item.get_closest_marker("slow")}
    assert "tests/test_tiers.py::test_the_tiers_are_marked" not in marked
    listed = listed_slow_tests() & {item.nodeid for item in session.items}
    assert listed <= marked
