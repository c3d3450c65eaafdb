"""The one memory rule of countgrid: estimate before allocating.

An operation whose working set grows with a product of sizes (a grid of ``prod(extent)``
cells times the vocabulary, a Gram matrix of ``n_a x n_b``, per-document posteriors over
grid positions, ...) calls :func:`check_memory` with its estimate before it allocates.
When the estimate exceeds the memory this process can still get (``MemAvailable`` of
``/proc/meminfo``, bounded by the cgroup limit of a container), a :class:`MemoryError`
names the operation, the sizes and what to change, instead of the allocator failing half
way (or the kernel's OOM killer ending the process).  Where the available memory cannot be
read (not Linux), only estimates beyond the addressable size are refused.

``COUNTGRID_MAX_MEMORY`` (bytes, with an optional K/M/G/T suffix) lowers the limit, e.g.
for a shared machine or to test the rule.
"""
import math
import os
import sys

__all__ = ["available_memory", "check_memory", "format_bytes"]

_SUFFIXES = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def _read_int(path):
    try:
        with open(path) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _meminfo_available():
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_headroom():
    """Bytes the cgroup still grants (v2 memory.max - memory.current, or v1), or None."""
    limit = _read_int("/sys/fs/cgroup/memory.max")
    used = _read_int("/sys/fs/cgroup/memory.current")
    if limit is None:
        limit = _read_int("/sys/fs/cgroup/memory/memory.limit_in_bytes")
        used = _read_int("/sys/fs/cgroup/memory/memory.usage_in_bytes")
        if limit is not None and limit >= 2**60:      # v1 "unlimited"
            limit = None
    if limit is None:
        return None
    return max(limit - (used or 0), 0)


def _env_limit():
    text = os.environ.get("COUNTGRID_MAX_MEMORY", "").strip().upper().removesuffix("B")
    if not text:
        return None
    suffix = text[-1] if text[-1] in _SUFFIXES and not text[-1].isdigit() else ""
    number = text[: len(text) - len(suffix)]
    try:
        return int(float(number) * _SUFFIXES[suffix])
    except ValueError:
        raise ValueError(f"COUNTGRID_MAX_MEMORY must be a number of bytes with an optional "
                         f"K/M/G/T suffix, got {os.environ['COUNTGRID_MAX_MEMORY']!r}") from None


def available_memory():
    """Bytes this process can still allocate (best estimate), or None when unknown."""
    candidates = [v for v in (_meminfo_available(), _cgroup_headroom(), _env_limit())
                  if v is not None]
    return min(candidates) if candidates else None


def format_bytes(n):
    """``n`` bytes in binary units, e.g. ``'1.5 GiB'``."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"  # pragma: no cover


def check_memory(n_bytes, what, advice=""):
    """Raise MemoryError if ``n_bytes`` (an estimate; int, float or a product of sizes)
    exceeds the memory available.

    Parameters
    ----------
    n_bytes : int or float
        Estimated bytes the operation allocates (may exceed 2**63: Python ints).
    what : str
        The operation and its sizes, e.g. ``"a counting grid of extent (5000, 5000) over
        20000 words"``.
    advice : str, optional
        What the user can change (smaller sizes, float32, blocks, out-of-core fitting).
    """
    n_bytes = math.ceil(n_bytes)
    limit = available_memory()
    if limit is None:
        limit = sys.maxsize
    if n_bytes > limit:
        message = (f"{what} needs about {format_bytes(n_bytes)}, more than the "
                   f"{format_bytes(limit)} available")
        raise MemoryError(message + (f"; {advice}" if advice else ""))
