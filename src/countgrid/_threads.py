"""The one threading rule of countgrid.

Every estimator and function resolves its ``num_threads`` once, with
:func:`effective_n_threads`, and hands the resulting positive count to the C kernels,
which pass it to each OpenMP region (never setting it globally).  BLAS is limited with
:func:`limit_blas_threads` around code that mixes our OpenMP regions with BLAS calls, so
that the two thread pools do not oversubscribe the cores.  As in scikit-learn's
``_openmp_effective_n_threads``, the default honours ``OMP_NUM_THREADS`` and otherwise the
CPUs this process may really use (affinity mask and cgroup quota).
"""
import contextlib
import math
import numbers
import os
import warnings

import numpy as np

from countgrid import _kernels

__all__ = ["cpu_count", "effective_n_threads", "limit_blas_threads"]

#: Thread counts above ``max(MAX_THREADS_PER_CPU * cpu_count(), MIN_THREAD_CAP)`` are capped
#: there (with a warning): more threads than that only add scheduling overhead, and an
#: absurd count would make the OpenMP runtime fail to create its threads.
MAX_THREADS_PER_CPU = 4
MIN_THREAD_CAP = 64


def _cgroup_cpu_quota():
    """CPUs granted by the cgroup CPU quota (v2 ``cpu.max``, v1 CFS), or None if unlimited."""
    try:
        with open("/sys/fs/cgroup/cpu.max") as fh:
            quota, period = fh.read().split()[:2]
        if quota != "max" and int(period) > 0:
            return int(quota) / int(period)
        return None
    except (OSError, ValueError):
        pass
    try:
        with open("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") as fh:
            quota = int(fh.read())
        with open("/sys/fs/cgroup/cpu/cpu.cfs_period_us") as fh:
            period = int(fh.read())
        if quota > 0 and period > 0:
            return quota / period
    except (OSError, ValueError):
        pass
    return None


def cpu_count():
    """CPUs this process may use: ``os.cpu_count()`` bounded by the affinity mask and the
    cgroup CPU quota (containers), at least 1."""
    n = os.cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        try:
            n = min(n, len(os.sched_getaffinity(0)))
        except OSError:
            pass
    quota = _cgroup_cpu_quota()
    if quota is not None:
        n = min(n, math.ceil(quota))
    return max(1, n)


def effective_n_threads(num_threads):
    """The thread count the kernels use for ``num_threads``.

    Parameters
    ----------
    num_threads : int or None
        None: the OpenMP default, i.e. ``OMP_NUM_THREADS`` when it is set and otherwise
        :func:`cpu_count`; ``n > 0``: ``n`` threads; ``n < 0``: ``cpu_count() + 1 + n``
        (``-1`` is all CPUs), at least 1.  Counts above
        ``max(4 * cpu_count(), 64)`` are capped there with a ``RuntimeWarning``.

    Returns
    -------
    int
        A positive thread count.

    Raises
    ------
    TypeError
        If ``num_threads`` is not None or an int.
    ValueError
        If ``num_threads`` is 0.
    """
    if num_threads is None:
        n = _kernels.max_threads()
        if "OMP_NUM_THREADS" not in os.environ:
            n = min(n, cpu_count())
        return max(1, n)
    if isinstance(num_threads, (bool, np.bool_)) or not isinstance(num_threads,
                                                                   numbers.Integral):
        raise TypeError(f"num_threads must be None or an int, got {num_threads!r}")
    n = int(num_threads)
    if n == 0:
        raise ValueError("num_threads must not be 0 (None uses the OpenMP default, -1 all "
                         "CPUs)")
    if n < 0:
        return max(1, cpu_count() + 1 + n)
    cap = max(MAX_THREADS_PER_CPU * cpu_count(), MIN_THREAD_CAP)
    if n > cap:
        warnings.warn(f"num_threads={n} is capped at {cap} ({cpu_count()} CPUs available)",
                      RuntimeWarning, stacklevel=3)
        n = cap
    return n


@contextlib.contextmanager
def limit_blas_threads(num_threads, active=True):
    """Limit BLAS to ``num_threads`` inside the block (threadpoolctl).

    ``active=False`` leaves BLAS alone (e.g. on a sparse path that calls no BLAS).
    """
    if not active:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=num_threads, user_api="blas"):
        yield
