"""Progress of long fits, for front ends (the command line's progress bar).

Estimators report every completed iteration or epoch with :func:`report`; nothing happens
unless a front end installed a listener with :func:`listen`.  The listener lives in a
context variable, so a fit in another thread or task reports only to its own listener.
The listener's exceptions propagate (a progress bar interrupted by Ctrl-C interrupts the
fit, which is transactional: docs/architecture.md, "Interrupted fits").
"""
import contextlib
import contextvars

__all__ = ["listen", "report"]

_LISTENER = contextvars.ContextVar("countgrid_progress_listener", default=None)


@contextlib.contextmanager
def listen(callback):
    """Call ``callback(event)`` for every progress event reported inside the block.

    ``event`` is a dict with the keys ``owner`` (e.g. "CountingGrid"), ``stage`` (e.g.
    " window (10, 10)" or ""), ``done`` and ``total`` (iterations, epochs or models of
    the stage), ``value`` (the objective after ``done`` updates, or None), ``label`` (what
    ``value`` is, e.g. "log-likelihood") and ``unit`` ("iteration", "epoch", or "model":
    one of several models fitted in turn, such as the grids of the classes).
    """
    token = _LISTENER.set(callback)
    try:
        yield
    finally:
        _LISTENER.reset(token)


def report(owner, done, total, value=None, label="log-likelihood", stage="",
           unit="iteration"):
    """Tell the active listener (if any) that ``done`` of ``total`` updates are complete."""
    callback = _LISTENER.get()
    if callback is not None:
        callback({"owner": owner, "stage": stage, "done": int(done), "total": int(total),
                  "value": None if value is None else float(value), "label": label,
                  "unit": unit})
