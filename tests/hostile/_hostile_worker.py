"""Zygote of the hostile suite: run as ``python _hostile_worker.py --workers N`` with the
Python under test (see _hostile_engine.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _hostile_engine import zygote_main  # noqa: E402

if __name__ == "__main__":
    zygote_main()
