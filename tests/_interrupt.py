"""Ctrl-C from a timer, for the tests of interruptible kernels."""
import os
import signal
import threading
import time

import pytest


def sigint_latency(call, after):
    """Run ``call()`` with a SIGINT sent to this process after ``after`` seconds; the call
    must raise KeyboardInterrupt.  Returns the seconds from the signal to the exception."""
    sent = []

    def interrupt():
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(after, interrupt)
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            call()
        return time.perf_counter() - sent[0]
    finally:
        timer.cancel()
