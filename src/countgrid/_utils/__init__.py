"""Private helpers shared by every layer: argument and count checks, sparse input, memory
and thread budgets, parameter rules, fitted-state checks, numeric helpers, reading of
model archives, progress reports, the atomic writer, the colour palette, the result
dicts, and the coherence measures with their compiled co-occurrence counts (``_cooc``,
csrc/cooc).

Rule (tests/test_imports.py): these modules import numpy, scipy, the ``_kernels``
extension, ``countgrid.exceptions`` and each other, never ``countgrid._base``, a model
family or the front door (docs/architecture.md).
"""
