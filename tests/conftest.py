"""Test helpers (tests/_reference, _synthetic.py, _downstream.py) are importable from every
test directory; the tests mirror the package's families (docs/architecture.md).  So is
``repo_data`` (data/repo_data.py: ``data_path(name)``, where the real datasets of the
repository are; data/README.md)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "data"))
