"""Test helpers (tests/_reference, _synthetic.py, _downstream.py) are importable from every
test directory; the tests mirror the package's families (docs/architecture.md)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
