"""Progress of long computations, for front ends (the command line's progress display).

Estimators report every completed iteration or epoch of a fit (or every model of a fit
that fits several in turn, such as one grid per class) with :func:`report`;
nothing happens unless a front end installed a listener with :func:`listen`.  The
listener lives in a context variable, so a fit in another thread or task reports only to
its own listener.  The listener's exceptions propagate (a progress bar interrupted by
Ctrl-C interrupts the fit, which is transactional: docs/architecture.md, "Interrupted
fits").

Long passes of inference over a fitted grid (the posteriors of documents a block at a
time, the ranking of the cells' words a block of cells at a time) report with
:func:`report_pass`, but only inside :func:`passes`, which names them: a front end asks
for them where they are the work the user waits for (``countgrid html``, ``plot``,
``top-words``), and they stay silent inside a fit or an evaluation that calls them many
times.
"""
import contextlib
import contextvars

__all__ = ["listen", "report", "passes", "quiet_passes", "report_pass", "UPDATE_UNITS",
           "PASS_UNITS"]

#: Units of the updates of a fit: ``done`` goes up by one per event ("model": one of
#: several models fitted in turn, countgrid._engine.per_class.fit_groups).
UPDATE_UNITS = ("iteration", "epoch", "model")
#: Units of the items of a pass: ``done`` goes up by a block of items per event.
PASS_UNITS = ("document", "cell")

_LISTENER = contextvars.ContextVar("countgrid_progress_listener", default=None)
_PASS_OWNER = contextvars.ContextVar("countgrid_progress_pass_owner", default=None)


@contextlib.contextmanager
def listen(callback):
    """Call ``callback(event)`` for every progress event reported inside the block.

    ``event`` is a dict with the keys ``owner`` (e.g. "CountingGrid", or the name given
    to :func:`passes`, e.g. "map"), ``stage`` (e.g. " window (10, 10)", " posteriors" or
    ""), ``done`` and ``total`` (how many of the stage's units are complete, of how many),
    ``value`` (the objective after ``done`` updates, or None), ``label`` (what ``value``
    is, e.g. "log-likelihood") and ``unit``: "iteration", "epoch" or "model" for the
    updates of a fit (:data:`UPDATE_UNITS`, one event per update), "document" or "cell"
    for the items of a pass (:data:`PASS_UNITS`, one event per block of items).
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


@contextlib.contextmanager
def passes(owner):
    """Report the passes of inference run inside the block (:func:`report_pass`) as
    ``owner`` (e.g. "map" for ``countgrid html``)."""
    token = _PASS_OWNER.set(owner)
    try:
        yield
    finally:
        _PASS_OWNER.reset(token)


@contextlib.contextmanager
def quiet_passes():
    """Report no pass run inside the block (a short pass inside a longer one, such as
    naming a map's regions, whose stage would read as the longer one's)."""
    token = _PASS_OWNER.set(None)
    try:
        yield
    finally:
        _PASS_OWNER.reset(token)


def report_pass(stage, done, total, unit):
    """Tell the active listener that ``done`` of the ``total`` items (``unit``, one of
    :data:`PASS_UNITS`) of a pass are complete, when the pass runs inside :func:`passes`
    (else nothing)."""
    owner = _PASS_OWNER.get()
    if owner is not None and _LISTENER.get() is not None:
        report(owner, done, total, None, "", stage, unit)
