"""Cases with known outcomes, to test the hostile engine itself (test_hostile.py)."""
import ctypes
import os
import time
import warnings

from _hostile_cases import Case

STATE = {"damaged": False}


def preload():
    pass


def available(name):
    return name != "missing.thing"


class Context:
    def __init__(self, tmp, case):
        self.tmp, self.case = tmp, case
        self.extra_names = []


def cleanup():
    pass


def canary():
    return "damaged" if STATE["damaged"] else "fine"


def _raise(exc):
    def run(ctx):
        raise exc
    return run


def _damage(ctx):
    STATE["damaged"] = True
    return 1.0


def _warn(ctx):
    warnings.warn("x is deprecated", DeprecationWarning)
    return 1.0


def build_cases():
    c = [
        Case("self", "", "engine", "ok", "ok", lambda ctx: 1.0, ("x",), lambda v: None),
        Case("self", "", "engine", "clear", "raise", _raise(ValueError("x must be > 0")),
             ("x",)),
        Case("self", "", "engine", "not-naming", "raise", _raise(ValueError("bad value")),
             ("x",)),
        Case("self", "", "engine", "index-error", "raise", _raise(IndexError("x")), ("x",)),
        Case("self", "", "engine", "refused", "ok", _raise(TypeError("x must be a float")),
             ("x",)),
        Case("self", "", "engine", "accepted", "raise", lambda ctx: 1.0, ("x",)),
        Case("self", "", "engine", "nan", "either", lambda ctx: float("nan"), ("x",),
             lambda v: "NaN" if v != v else None),
        Case("self", "", "engine", "segfault", "ok", lambda ctx: ctypes.string_at(0), ("x",)),
        Case("self", "", "engine", "abort", "ok", lambda ctx: os.abort(), ("x",)),
        Case("self", "", "engine", "hang", "ok", lambda ctx: time.sleep(60), ("x",),
             timeout=2.0),
        Case("self", "", "engine", "damage", "ok", _damage, ("x",), lambda v: None),
        Case("self", "", "engine", "after-damage", "ok", lambda ctx: 2.0, ("x",),
             lambda v: None),
        Case("self", "", "engine", "missing", "ok", lambda ctx: 1.0, ("x",),
             needs=("missing.thing",)),
        Case("self", "", "engine", "file-error", "raise",
             _raise(FileNotFoundError(2, "No such file", "m.npz")), ("m.npz",), files=True),
        # an error pinned down by its class and message (pytest.raises(error, match=))
        Case("self", "", "engine", "pinned", "raise", _raise(ValueError("x must be > 0")),
             ("x",), error=ValueError, match=r"must be > \d"),
        Case("self", "", "engine", "other-class", "raise", _raise(ValueError("x must be > 0")),
             ("x",), error=TypeError),
        Case("self", "", "engine", "other-message", "raise",
             _raise(ValueError("x must be > 0")), ("x",), error=ValueError, match="finite"),
        Case("self", "", "engine", "quiet", "ok", lambda ctx: 1.0, ("x",), lambda v: None,
             quiet=True),
        Case("self", "", "engine", "warned", "ok", _warn, ("x",), lambda v: None, quiet=True),
    ]
    return c
