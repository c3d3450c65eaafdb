"""The one threading rule of countgrid.

Every estimator and function resolves its ``num_threads`` once, with
:func:`effective_n_threads`, and hands the resulting positive count to the C kernels,
which pass it to each OpenMP region (never setting it globally).  BLAS is limited with
:func:`limit_blas_threads` around code that mixes our OpenMP regions with BLAS calls, so
that the two thread pools do not oversubscribe the cores; where our kernels do the work
(sparse counts) and BLAS only side products, BLAS gets one thread: OpenBLAS's threads spin
for a while after each call and slow the next OpenMP region several times over when the
cores are few (docs/map.md, "The notebook widget").  As in scikit-learn's
``_openmp_effective_n_threads``, the default honours ``OMP_NUM_THREADS`` and otherwise the
CPUs this process may really use (affinity mask and cgroup quota).

GNU OpenMP (libgomp) is not fork-safe: a ``fork()`` child of a process whose OpenMP threads
have run hangs in its first parallel region with more than one thread.  Such a child is
detected (``os.register_at_fork``) and runs every OpenMP region on one thread, with one
``RuntimeWarning`` (docs/robustness.md, "Fork safety").
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

# Fork safety (docs/robustness.md): libgomp keeps its worker threads after a parallel
# region; a fork() child inherits its bookkeeping of them but not the threads.
_openmp_threads_used = False   # effective_n_threads gave more than 1 in this process
_forked_after_openmp = False   # this process is a fork() child of such a process
_fork_fallback = None          # in such a child: True once libgomp was found (1 thread)


def _after_fork_in_child():
    global _forked_after_openmp, _fork_fallback
    if _openmp_threads_used:
        _forked_after_openmp, _fork_fallback = True, None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _libgomp_fork_fallback():
    """In a fork() child of a process that ran OpenMP threads: True if the OpenMP runtime
    is GNU libgomp, after limiting every OpenMP runtime of the process to one thread (so
    that regions run with the OpenMP default, e.g. other libraries', cannot hang either)
    and warning once.  LLVM's libomp re-initialises itself in a fork child: no fallback."""
    global _fork_fallback
    if _fork_fallback is None:
        from threadpoolctl import threadpool_info, threadpool_limits

        gomp = [info for info in threadpool_info()
                if info.get("user_api") == "openmp" and info.get("prefix") == "libgomp"]
        _fork_fallback = bool(gomp)
        if _fork_fallback:
            threadpool_limits(limits=1, user_api="openmp")
            warnings.warn("countgrid: this process was forked from one that had run OpenMP "
                          "threads, and GNU OpenMP (libgomp) would hang here with more than "
                          "one thread; using 1 thread.  Start worker processes with the "
                          "'spawn' or 'forkserver' method to use several (see "
                          "docs/robustness.md)", RuntimeWarning, stacklevel=4)
    return _fork_fallback


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
        A positive thread count; 1 in a ``fork()`` child of a process that had run
        GNU OpenMP threads (which would hang there; one ``RuntimeWarning``, see
        docs/robustness.md).

    Raises
    ------
    TypeError
        If ``num_threads`` is not None or an int.
    ValueError
        If ``num_threads`` is 0.
    """
    global _openmp_threads_used
    n = _resolve(num_threads)
    if _forked_after_openmp and _libgomp_fork_fallback():
        return 1
    if n > 1:
        _openmp_threads_used = True
    return n


def _resolve(num_threads):
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
                      RuntimeWarning, stacklevel=4)
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
