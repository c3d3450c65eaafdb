"""The two tiers of the suite (README, "Tests"): ``python -m pytest tests`` runs every
test (CI does); ``python -m pytest tests -m "not slow"`` runs the fast tier, under two
minutes on two idle cores, for the edit-test loop.

A test is slow when its file is one of ``SLOW_FILES`` (a kind of test that is slow by
nature) or its node id is listed in ``tests/slow_tests.txt`` (single tests that took
0.3 s or more in a full run, outside those files).  ``tools/slow_tier.py`` rewrites that
list from the JUnit report of a full run (``--junitxml``)."""
import os

import pytest

#: Files (or folders, ending in "/") outside the fast tier, and why.
SLOW_FILES = {
    "tests/hostile/": "the hostile suite: thousands of argument cases in worker processes",
    "tests/cli/test_help_examples.py": "every --help example, run as a command",
    "tests/cli/test_verbs.py": "each verb end to end in a subprocess",
    "tests/cli/test_demo_and_errors.py": "the demo and error paths end to end",
    "tests/cli/test_cli_terms.py": "the command line on real corpora",
    "tests/cli/test_same_model.py": "a command-line fit against a Python fit",
    "tests/maps/test_browser.py": "a real headless Chromium",
    "tests/maps/test_untrusted_browser.py": "a real headless Chromium on hostile maps",
    "tests/maps/test_regions_browser.py": "region names in a real headless Chromium",
    "tests/maps/test_view_state_browser.py": "shared views in a real headless Chromium",
    "tests/maps/test_document_search_browser.py": "document search in a real headless Chromium",
    "tests/maps/test_compare_browser.py": "group differences in a real headless Chromium",
    "tests/maps/test_select_browser.py": "cell selection in a real headless Chromium",
    "tests/maps/test_time_browser.py": "the time slider in a real headless Chromium",
    "tests/maps/test_filters_browser.py": "metadata filters in a real headless Chromium",
    "tests/maps/test_notes_browser.py": "region names and notes in a real headless Chromium",
    "tests/maps/test_versus_browser.py": "two corpora in a real headless Chromium",
    "tests/maps/test_bundle_browser.py": "bundles and the documents part in a real headless "
                                         "Chromium",
    "tests/maps/test_bundle_million.py": "a bundle of 1,000,000 documents in Chromium",
    "tests/maps/test_budgets.py": "a 20,000-document map written and opened in Chromium",
    "tests/test_benchmarks.py": "the counting-grid benchmark's quick run (40 s)",
    "tests/maps/test_widget_lab.py": "the notebook widget in a real JupyterLab and Chromium",
    "tests/test_properties.py": "property tests on many random inputs",
    "tests/capi/test_downstream_c.py": "compiles a C consumer",
    "tests/capi/test_downstream_cython.py": "compiles a Cython consumer",
    "tests/test_fork_safety.py": "forked processes after OpenMP",
    "tests/scale/test_dask.py": "a real dask LocalCluster",
    "tests/test_check_wheel.py": "builds and installs the wheel",
    "tests/kernels/test_itk_weighted_range.py": "the numerical range, on large Gram matrices",
    "tests/test_coherence_gensim.py": "gensim's own coherence pipeline on a real corpus",
}
#: The threshold of ``tests/slow_tests.txt``, in seconds of one test.
SLOW_SECONDS = 0.3
HERE = os.path.dirname(os.path.abspath(__file__))
LIST = os.path.join(HERE, "slow_tests.txt")
#: Where conftest.py leaves the listed tests that their collected file no longer has.
STALE_SLOW_TESTS = pytest.StashKey()


def in_slow_file(nodeid):
    path = nodeid.split("::", 1)[0]
    return any(path == f or (f.endswith("/") and path.startswith(f)) for f in SLOW_FILES)


def listed_slow_tests():
    """The node ids of tests/slow_tests.txt."""
    with open(LIST, encoding="utf-8") as fh:
        return {line.strip() for line in fh if line.strip() and not line.startswith("#")}
