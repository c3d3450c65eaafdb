"""Fits and transforms of dask arrays on a dask.distributed cluster (docs/scale.md).

The pattern of dask-ml's KMeans: the row blocks of X are validated and persisted on the
workers once; every EM iteration broadcasts the parameters, runs the one block step of
the model (``grid._em.block_statistics``, ``topics._plsa.block_step``, handed in by the
estimator) as one task per block, and sums the statistics in a fixed binary tree over the block order, so that the
result does not depend on scheduling or on the number of workers.  The M-step and the
convergence test run on the client; per-document quantities (posteriors, pLSA's P(z|d))
never travel to the client during the fit.  Dask reductions over scipy.sparse blocks are
avoided (dask issues #4664, #5008): the tasks call our kernels and return dense
statistics.

Threads: dask's nanny sets ``OMP_NUM_THREADS=1`` in its workers, and dask runs one task
per worker thread; each task runs the kernels with the estimator's ``num_threads`` when
it is a positive int, else with 1 thread.
"""
import operator

import numpy as np

from countgrid.streaming._blocks import (check_row_indices, count_nonzero, max_count,
                                         stack_rows)

__all__ = ["DaskBlocks", "transform"]


def _modules():
    try:
        import dask
        import dask.array as da
        from distributed import default_client
    except ImportError as exc:
        raise ImportError(f"fitting or transforming a dask array needs dask.distributed "
                          f"({exc}): pip install 'countgrid[dask]'") from None
    try:
        client = default_client()
    except ValueError:
        raise ValueError("X is a dask array but no dask.distributed Client is running: "
                         "start one first, e.g. Client(LocalCluster(n_workers=2))") from None
    return dask, da, client


def _task_threads(num_threads):
    if isinstance(num_threads, (int, np.integer)) and not isinstance(num_threads, bool) \
            and num_threads > 0:
        return int(num_threads)
    return 1


def _row_blocks(X, da):
    if not isinstance(X, da.Array):
        raise TypeError(f"X must be a dask array of row blocks, got {type(X).__name__}")
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D dask array, got {X.ndim} dimensions")
    if len(X.chunks[1]) != 1:
        X = X.rechunk({1: X.shape[1]})
    return X, list(X.to_delayed().ravel())


# ----------------------------------------------------------------- tasks (on workers)
def _validated(block, make_counts, n_features, index):
    counts = make_counts(block, f"block {index} of X", n_features)
    if counts.is_sparse:
        counts.csc     # built once, kept with the persisted block
    return counts


def _summary(counts):
    return (counts.n_samples, float(counts.lengths.sum()), count_nonzero(counts),
            max_count(counts))


def _column_sums(counts):
    return np.asarray(counts.X.sum(axis=0), dtype=np.float64).ravel()


def _rows(counts, rows):
    return counts.csr[rows]


def _add(a, b):
    if isinstance(a, np.ndarray):
        return a + b
    return a.add(b)      # a is this task's own result, used nowhere else


def _with_state(step, counts, state, params, threads):
    state = state.copy()     # the persisted input stays as it was (a task may rerun)
    statistics, value = step(counts, state, params, threads)
    return statistics, value, state


def _apply(estimator, block, method):
    return getattr(estimator, method)(block)


# ----------------------------------------------------------------------- client side
def _tree_sum(client, parts):
    """Sum futures in a fixed binary tree over their order (deterministic)."""
    while len(parts) > 1:
        paired = [client.submit(_add, parts[i], parts[i + 1], pure=False)
                  for i in range(0, len(parts) - 1, 2)]
        if len(parts) % 2:
            paired.append(parts[-1])
        parts = paired
    return parts[0].result()


class DaskBlocks:
    """The row blocks of a dask array, validated and persisted on the workers.

    Has the attributes of :class:`countgrid.streaming._blocks.Blocks` that the fits read
    (``n_samples``, ``n_features``, ``n_tokens``, ``n_nonzero``, ``is_dense``,
    ``mean_length``, ``max_count()``, ``column_sums()``, ``rows()``, ``map_counts()``)
    and runs a model's block step on every block: :meth:`summed` (statistics summed in a
    fixed tree), :meth:`gathered`, and :meth:`stateful_step` for steps that update a
    per-block state (pLSA's P(z|d)), which stays on the workers.

    Parameters
    ----------
    X : dask.array.Array
    make_counts : callable
        ``make_counts(block, name, n_features)``: a validated Counts (module-level, so
        that the workers import it).
    num_threads : int or None
        The kernels' threads per task (see the module docstring).
    """

    in_memory = False
    is_dense = False

    def __init__(self, X, make_counts, num_threads):
        dask, da, client = _modules()
        X, delayed = _row_blocks(X, da)
        self._client, self._da, self._dask = client, da, dask
        self.n_features = int(X.shape[1])
        self.threads = _task_threads(num_threads)
        tasks = [dask.delayed(_validated)(b, make_counts, self.n_features, i)
                 for i, b in enumerate(delayed)]
        self._blocks = client.compute(tasks)
        summaries = client.gather(client.map(_summary, self._blocks))
        self.block_rows = [s[0] for s in summaries]
        self.n_samples = int(sum(self.block_rows))
        self.n_tokens = float(sum(s[1] for s in summaries))
        self.n_nonzero = int(sum(s[2] for s in summaries))
        self._max = max((s[3] for s in summaries), default=0.0)
        self._state = None
        if self.n_samples == 0:
            raise ValueError("X has no rows")

    @property
    def mean_length(self):
        return self.n_tokens / max(self.n_samples, 1)

    def max_count(self):
        return self._max

    def map_counts(self, fn):
        self._blocks = self._client.map(fn, self._blocks)

    def column_sums(self):
        return _tree_sum(self._client, self._client.map(_column_sums, self._blocks))

    def rows(self, indices):
        indices = np.asarray(indices, dtype=np.int64)
        check_row_indices(indices, self.n_samples)
        distinct, inverse = np.unique(indices, return_inverse=True)
        starts = np.concatenate([[0], np.cumsum(self.block_rows)])
        wanted = []
        for b, (r0, r1) in enumerate(zip(starts[:-1], starts[1:])):
            lo, hi = np.searchsorted(distinct, [r0, r1])
            if hi > lo:
                wanted.append((b, distinct[lo:hi] - r0))
        got = self._client.gather([self._client.submit(_rows, self._blocks[b], local)
                                   for b, local in wanted])
        return stack_rows(got, inverse, self.n_features)

    def _broadcast(self, params):
        [future] = self._client.scatter([params], broadcast=True)
        return future

    def summed(self, step, params):
        """``sum_b step(block_b, params, threads)``, summed in a fixed tree over the
        blocks (``.add`` of the results, or ``+`` for arrays)."""
        future = self._broadcast(params)
        parts = [self._client.submit(step, b, future, self.threads, pure=False)
                 for b in self._blocks]
        return _tree_sum(self._client, parts)

    def gathered(self, step, params):
        """``[step(block_b, params, threads) for b]`` in block order (small results)."""
        future = self._broadcast(params)
        return self._client.gather([self._client.submit(step, b, future, self.threads,
                                                        pure=False) for b in self._blocks])

    def set_state(self, state):
        """Send each block's rows of a per-document array (e.g. P(z|d)) to the cluster."""
        starts = np.concatenate([[0], np.cumsum(self.block_rows)])
        self._state = [self._client.scatter(np.ascontiguousarray(state[r0:r1]))
                       for r0, r1 in zip(starts[:-1], starts[1:])]

    def stateful_step(self, step, params):
        """``step(block, state, params, threads) -> (statistics, value)`` updating a copy
        of each block's state, which replaces it on the workers; returns (statistics
        summed in a fixed tree, the values' sum in block order)."""
        client = self._client
        future = self._broadcast(params)
        results = [client.submit(_with_state, step, b, s, future, self.threads, pure=False)
                   for b, s in zip(self._blocks, self._state)]
        stats = [client.submit(operator.itemgetter(0), r) for r in results]
        values = client.gather([client.submit(operator.itemgetter(1), r) for r in results])
        self._state = [client.submit(operator.itemgetter(2), r) for r in results]
        return _tree_sum(client, stats), float(sum(values))

    def state_values(self, fn, params):
        """``sum_b fn(block_b, state_b, params, threads)`` in block order."""
        future = self._broadcast(params)
        return float(sum(self._client.gather([
            self._client.submit(fn, b, s, future, self.threads, pure=False)
            for b, s in zip(self._blocks, self._state)])))

    def state_array(self, dtype):
        """The per-document state as a dask array whose blocks stay on the workers."""
        da, dask = self._da, self._dask
        width = self._client.submit(operator.attrgetter("shape"), self._state[0]).result()[1]
        return da.concatenate([da.from_delayed(dask.delayed(f), shape=(rows, width),
                                               dtype=dtype)
                               for rows, f in zip(self.block_rows, self._state)], axis=0)


def transform(estimator, X, n_columns, method="transform"):
    """``estimator.<method>`` of every row block of the dask array ``X``: a dask array of
    shape (n_samples, n_columns), computed on the cluster (the estimator is sent once)."""
    dask, da, client = _modules()
    X, delayed = _row_blocks(X, da)
    [model] = client.scatter([estimator], broadcast=True)
    model = dask.delayed(model)
    parts = []
    for rows, block in zip(X.chunks[0], delayed):
        out = dask.delayed(_apply)(model, block, method)
        probe = np.empty((0, n_columns), dtype=np.float64)
        parts.append(da.from_delayed(out, shape=(rows, n_columns), meta=probe))
    return da.concatenate(parts, axis=0)
