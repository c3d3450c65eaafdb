"""Ctrl-C from a timer, for the tests of interruptible kernels."""
import gc
import os
import signal
import threading
import time

import pytest


def steady_time(call, repeats=3):
    """Seconds ``call()`` takes once warm: the first call (thread pool start-up, page faults,
    a sanitizer's shadow memory) is not timed, then the fastest of ``repeats``.  A cold first
    timing once made a tenth of the work look longer than the whole, so the signal came
    after the call had returned (CI under the sanitizers)."""
    call()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - t0)
    return best


def sigint_latency(call, after):
    """Run ``call()`` with a SIGINT sent to this process after ``after`` seconds; the call
    must raise KeyboardInterrupt.  Returns the seconds from the signal to the exception."""
    sent = []

    def interrupt():
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(after, interrupt)
    # A signal that arrives while a garbage-collection callback runs (hypothesis installs
    # one) raises KeyboardInterrupt inside the callback, where Python ignores it: the call
    # then "does not raise" (seen in the full suite and in CI under the sanitizers).
    collecting = gc.isenabled()
    gc.disable()
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            call()
        return time.perf_counter() - sent[0]
    finally:
        timer.cancel()
        if collecting:
            gc.enable()
