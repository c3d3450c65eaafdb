"""Peak resident memory of the calling process, in MB.

On Linux this is ``VmHWM`` of ``/proc/self/status``, not ``getrusage``'s ``ru_maxrss``:
the kernel carries ``ru_maxrss`` across ``execve``, so a child started by ``subprocess``
(vfork + exec) reports its parent's peak when that is larger -- a benchmark's writer run
from a 600 MB pytest process read 618 MB where its own peak was 380 MB.
"""
import resource


def peak_rss_mb():
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    # macOS reports bytes, Linux KiB; elsewhere than Linux there is no /proc to read
    import sys
    scale = 1024.0 * 1024.0 if sys.platform == "darwin" else 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale
