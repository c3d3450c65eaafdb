"""Rewrite tests/slow_tests.txt, the single tests outside the fast tier, from the JUnit
report of a full run (tests/_tiers.py; README, "Tests").

    python -m pytest tests --junitxml=/tmp/junit.xml
    python tools/slow_tier.py /tmp/junit.xml

Lists every test that took ``SLOW_SECONDS`` or more and is not in one of ``SLOW_FILES``;
then ``python -m pytest tests -m "not slow" --durations=5`` shows what the fast tier
costs.
"""
import argparse
import os
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
from _tiers import LIST, SLOW_SECONDS, in_slow_file  # noqa: E402


def nodeid(case):
    """The pytest node id of a JUnit test case (``tests/a/test_b.py::Class::test_c[p]``)."""
    parts = case.get("classname").split(".")
    cls = [parts.pop()] if parts[-1][:1].isupper() else []
    return "::".join(["/".join(parts) + ".py", *cls, case.get("name")])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("junit", help="the --junitxml report of a full run")
    args = parser.parse_args(argv)
    slow = sorted(nodeid(case) for case in ET.parse(args.junit).iter("testcase")
                  if float(case.get("time", 0)) >= SLOW_SECONDS
                  and not in_slow_file(nodeid(case)))
    with open(LIST, "w", encoding="utf-8") as fh:
        fh.write(f"# Tests outside the fast tier: {SLOW_SECONDS} s or more in a full run,\n"
                 "# outside tests/_tiers.py SLOW_FILES.  Written by tools/slow_tier.py.\n")
        fh.writelines(f"{n}\n" for n in slow)
    print(f"{len(slow)} tests listed in {os.path.relpath(LIST)}")


if __name__ == "__main__":
    main()
