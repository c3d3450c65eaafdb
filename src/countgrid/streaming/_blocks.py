"""The documents of a fit as validated blocks of rows: one in-memory matrix, or a
:class:`countgrid.streaming.ChunkSource` read chunk by chunk (docs/scale.md).

The EM drivers (batch, out-of-core, online) see only :class:`Blocks`: an in-memory ``X``
is validated once and is its own single block; a source is validated chunk by chunk at
every pass, so that no more than one chunk is in memory.  Chunks without rows are skipped,
and every pass must give the documents of the first (a source read only once, e.g. a
function returning the same exhausted iterator, would otherwise fit on nothing).
"""
from numbers import Integral

import numpy as np
import scipy.sparse as sp

from countgrid._utils.memory import check_memory
from countgrid.streaming._sources import is_chunk_source

__all__ = ["Blocks", "count_nonzero", "is_dask_collection", "max_count"]


def is_dask_collection(X):
    """Whether ``X`` is a dask collection (fitted by countgrid.streaming._dask), without importing
    dask."""
    return hasattr(type(X), "__dask_graph__") and type(X).__module__.startswith("dask")


class Blocks:
    """Validated count blocks of ``X``.

    Parameters
    ----------
    X : matrix or ChunkSource
    make_counts : callable
        ``make_counts(matrix, name, n_features)`` returns a validated
        :class:`countgrid._utils.counts.Counts` (``n_features`` None for the first block).
    name : str
        The argument's name in error messages.

    Attributes
    ----------
    n_samples, n_features : int
    n_tokens : float
        Total count (the sum of all entries).
    n_nonzero : int
        Non-zero entries (distinct words of all documents).
    in_memory : bool
    is_dense : bool
        The in-memory counts stay dense (the BLAS path of the grid).
    """

    def __init__(self, X, make_counts, name="X"):
        self._make, self._name = make_counts, name
        self.in_memory = not is_chunk_source(X)
        if self.in_memory:
            self._whole = make_counts(X, name, None)
            self.n_samples = self._whole.n_samples
            self.n_features = self._whole.n_features
            self.n_tokens = float(self._whole.lengths.sum())
            self.is_dense = not self._whole.is_sparse
            self.n_nonzero = count_nonzero(self._whole)
            self._max = max_count(self._whole)
            return
        self._source = X
        n_features = getattr(X, "n_features", None)
        if n_features is not None and (isinstance(n_features, bool) or not isinstance(
                n_features, Integral) or n_features < 0):
            raise TypeError(f"{name}.n_features must be None or an int >= 0, got "
                            f"{n_features!r}")
        self.n_features = None if n_features is None else int(n_features)
        self.is_dense = False
        self.n_samples, self.n_tokens, self.n_nonzero, self._max = None, 0.0, 0, 0.0
        n_samples = 0
        for counts in self():
            n_samples += counts.n_samples
            self.n_tokens += float(counts.lengths.sum())
            self.n_nonzero += count_nonzero(counts)
            self._max = max(self._max, max_count(counts))
        self.n_samples = n_samples
        if self.n_samples == 0:
            raise ValueError(f"{name} has no rows: its chunk source produced no documents")

    def __call__(self):
        """A new iterator over the blocks (Counts), in row order."""
        if self.in_memory:
            yield self._whole
            return
        name, first = self._name, self.n_samples is None
        chunks = self._source.chunks()
        try:
            chunks = iter(chunks)
        except TypeError:
            raise TypeError(f"{name}: {type(self._source).__name__}.chunks() returned "
                            f"{type(chunks).__name__}, not an iterable of matrices") from None
        rows = nonzero = 0
        for i, chunk in enumerate(chunks):
            shape = getattr(chunk, "shape", None)
            if isinstance(shape, tuple) and len(shape) == 2 and shape[0] == 0:
                continue                        # no rows: nothing to validate or fit
            counts = self._make(chunk, f"chunk {i} of {name}", self.n_features)
            self.n_features = counts.n_features
            rows += counts.n_samples
            if not first:
                nonzero += count_nonzero(counts)
                if rows > self.n_samples:
                    raise ValueError(self._changed(f"more than {self.n_samples} documents "
                                                   f"by chunk {i}"))
            yield counts
        if not first and (rows, nonzero) != (self.n_samples, self.n_nonzero):
            raise ValueError(self._changed(f"{rows} documents ({nonzero} non-zero counts)"))

    def _changed(self, what):
        return (f"{self._name}: its chunk source gave {what} in this pass, but "
                f"{self.n_samples} documents ({self.n_nonzero} non-zero counts) in the first "
                f"pass: a chunk source must give the same chunks at every pass (a generator "
                f"object, or a function returning the same iterator, is read only once)")

    def minibatches(self, batch_size):
        """Blocks of at most ``batch_size`` rows, in row order (online EM)."""
        for counts in self():
            if counts.n_samples <= batch_size:
                yield counts
                continue
            for r0 in range(0, counts.n_samples, batch_size):
                rows = counts.X[r0:r0 + batch_size]
                yield self._make(rows, self._name, self.n_features)

    @property
    def whole(self):
        """The in-memory counts (a Counts); AttributeError for a chunk source."""
        if not self.in_memory:
            raise AttributeError("a chunk source has no in-memory counts")
        return self._whole

    def map_counts(self, fn):
        """Apply ``fn(counts) -> counts`` to every block from now on (e.g. a rescaling)."""
        make = self._make
        self._make = lambda M, name, n_features: fn(make(M, name, n_features))
        if self.in_memory:
            self._whole = fn(self._whole)

    def rows(self, indices):
        """The rows ``indices`` (sorted or not, repeats allowed) as a CSR matrix."""
        indices = np.asarray(indices, dtype=np.int64)
        if self.in_memory:
            return self._whole.csr[indices]
        check_row_indices(indices, self.n_samples)
        wanted, inverse = np.unique(indices, return_inverse=True)
        parts, offset = [], 0
        for counts in self():
            lo, hi = np.searchsorted(wanted, [offset, offset + counts.n_samples])
            if hi > lo:
                parts.append(counts.csr[wanted[lo:hi] - offset])
            offset += counts.n_samples
        return stack_rows(parts, inverse, self.n_features)

    def column_sums(self):
        """Column totals (float64) over all documents."""
        check_memory(8 * self.n_features, f"the column totals of {self._name} "
                     f"({self.n_features} features)", "use fewer features")
        total = np.zeros(self.n_features)
        for counts in self():
            total += np.asarray(counts.X.sum(axis=0), dtype=np.float64).ravel()
        return total

    def max_count(self):
        """The largest entry of the counts as given (found by the first pass)."""
        return self._max

    @property
    def mean_length(self):
        return self.n_tokens / max(self.n_samples, 1)


def check_row_indices(indices, n_samples):
    """IndexError for a row index outside ``[0, n_samples)``."""
    if indices.size and (indices.min() < 0 or indices.max() >= n_samples):
        raise IndexError(f"row indices must lie in [0, {n_samples}), got "
                         f"{int(indices.min())}..{int(indices.max())}")


def stack_rows(parts, inverse, n_features):
    """The rows of ``parts`` (CSR blocks of sorted distinct rows) stacked, then taken in
    the order ``inverse`` (``np.unique``'s inverse of the rows asked for)."""
    if not parts:
        return sp.csr_matrix((0, n_features))
    return sp.vstack(parts, format="csr")[inverse]


def max_count(counts):
    """The largest entry of one block's counts."""
    data = counts.X.data if counts.is_sparse else counts.X
    return float(np.max(data)) if data.size else 0.0


def count_nonzero(counts):
    """Non-zero entries of one block's counts."""
    return counts.X.nnz if counts.is_sparse else int(np.count_nonzero(counts.X))
