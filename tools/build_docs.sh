#!/usr/bin/env bash
# Build the documentation site into docs/_build/html (open docs/_build/html/index.html).
#
#   pip install ".[docs]" && bash tools/build_docs.sh
#
# Warnings are errors (-W --keep-going -n: also every unresolved cross-reference), the
# gallery (examples/) is executed, numpydoc validates the public docstrings, and nothing
# is fetched from the network (no intersphinx).  A clean build each time: the API pages
# and the gallery are generated from the installed package, so stale copies are removed.
# Uses the `python` on PATH (PYTHON=... to choose another); the package must be installed
# in it (the pages document the installed package, like the tests).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"
rm -rf docs/_build docs/generated docs/gallery docs/_extra docs/sg_execution_times.rst
MPLBACKEND=Agg "$PYTHON" -m sphinx -W --keep-going -n -b html docs docs/_build/html "$@"
echo "docs: docs/_build/html/index.html"
