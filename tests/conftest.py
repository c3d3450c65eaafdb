"""Test helpers (tests/_reference, _synthetic.py, _downstream.py) are importable from every
test directory; the tests mirror the package's families (docs/architecture.md).  So is
``repo_data`` (data/repo_data.py: ``data_path(name)``, where the real datasets of the
repository are; data/README.md)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "data"))

# A shell that starts pytest in the background (`pytest &`, nohup, some CI runners) leaves
# SIGINT ignored, and Python then installs no KeyboardInterrupt handler: the Ctrl-C tests
# (tests/test_interrupts.py, the families' interrupts in their *_numerics.py, `countgrid
# demo` exiting 130, whose child process inherits the ignored signal) would fail for the
# launcher's reason.
import signal  # noqa: E402

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


import pytest  # noqa: E402

from _tiers import STALE_SLOW_TESTS, in_slow_file, listed_slow_tests  # noqa: E402


def pytest_collection_modifyitems(config, items):
    """Mark the tests outside the fast tier ``slow`` (tests/_tiers.py); note the listed
    tests that a file collected here no longer has (tests/test_tiers.py)."""
    listed = listed_slow_tests()
    collected = {item.nodeid for item in items}
    files = {nodeid.split("::", 1)[0] for nodeid in collected}
    config.stash[STALE_SLOW_TESTS] = sorted(
        n for n in listed - collected if n.split("::", 1)[0] in files)
    for item in items:
        if in_slow_file(item.nodeid) or item.nodeid in listed:
            item.add_marker(pytest.mark.slow)
