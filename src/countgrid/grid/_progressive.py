"""Progressive fitting of a counting grid (``CountingGrid(subsample=...)``; issue 29,
docs/scale.md, "Progressive fitting").

The window schedule and most of the target window's iterations lay the themes out over
the torus and settle them; a random subsample of the documents holding a few dozen
documents per cell does that at a fraction of the cost of a pass.  Batch EM then
continues on every document from the subsample's grid.  Measured, that last part still
takes most of a plain fit's target-window passes (72 over a million documents: the
convergence tail belongs to the whole corpus), so the saving is the schedule's and the
early passes' cost, 18 % of the time there.
"""
from numbers import Integral, Real

import numpy as np

from countgrid._utils.memory import check_memory
from countgrid.streaming._blocks import Blocks

__all__ = ["AUTO_MIN_DOCUMENTS", "AUTO_PER_CELL", "resolve_subsample", "subsample_blocks"]

#: ``subsample="auto"``: documents per grid cell of the first fit ...
AUTO_PER_CELL = 25
#: ... and never fewer documents than this, nor a subsample of a corpus smaller than
#: twice its size (the fit on all documents is then cheap anyway).
AUTO_MIN_DOCUMENTS = 50_000


def resolve_subsample(subsample, n_samples, L):
    """Documents of the first fit: an int in ``[1, n_samples)``, or None to fit all
    documents at once.

    ``subsample`` is None, "auto" (``max(AUTO_MIN_DOCUMENTS, AUTO_PER_CELL L)`` when the
    corpus has at least twice as many documents), an int (documents) or a float in
    (0, 1) (a fraction of them); a subsample of every document is no subsample.
    """
    if subsample is None:
        return None
    if isinstance(subsample, str):      # "auto", the only string the constraints allow
        m = max(AUTO_MIN_DOCUMENTS, AUTO_PER_CELL * int(L))
        return m if 2 * m <= n_samples else None
    if isinstance(subsample, Integral):
        m = int(subsample)
    elif isinstance(subsample, Real):
        if not 0.0 < subsample < 1.0:
            raise ValueError(f"subsample must be 'auto', None, an int >= 1 or a float in "
                             f"(0, 1), got {subsample!r}")
        m = int(np.ceil(float(subsample) * n_samples))
    else:
        raise TypeError(f"subsample must be 'auto', None, an int or a float, got "
                        f"{type(subsample).__name__}")
    if m < 1:
        raise ValueError(f"subsample must be 'auto', None, an int >= 1 or a float in (0, 1), "
                         f"got {subsample!r}")
    return m if m < n_samples else None


def subsample_blocks(data, n_documents, rng, make_counts):
    """``n_documents`` distinct documents of ``data`` (Blocks or DaskBlocks) drawn
    uniformly by ``rng``, in row order, as in-memory :class:`Blocks` (one pass over a
    chunk source; gathered from a cluster)."""
    n = int(data.n_samples)
    nonzero = data.n_nonzero * (n_documents / max(n, 1))
    check_memory(12 * nonzero + 8 * n_documents,
                 f"a subsample of {n_documents} of the {n} documents in memory",
                 "use a smaller subsample")
    rows = np.sort(rng.choice(n, size=n_documents, replace=False))
    if data.in_memory:
        X = data.whole.X[rows]
    else:
        X = data.rows(rows)
    return Blocks(X, make_counts, name="the subsample of X")
