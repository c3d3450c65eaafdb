"""Progress of long fits and passes on the command line.

Three displays, chosen from where stderr goes (docs/cli.md, "Progress"):

* a terminal with tqdm installed: a tqdm bar per stage (with the log-likelihood of a fit);
* a terminal without tqdm: one line rewritten in place (``\\r``);
* not a terminal (a log file, CI): a log line every ``log_every`` updates of a fit and at
  the end of each stage, so logs stay short; a pass over documents or cells (its events
  count items a block at a time) logs its first block, each tenth of the pass and its
  end.

``-q`` shows nothing; ``-v`` logs every update.  Events come from
:mod:`countgrid._utils.progress`.
"""
import contextlib
import sys
import time

from countgrid._utils import progress as _progress
def _tqdm():
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


class ProgressDisplay:
    """A listener for :func:`countgrid._utils.progress.listen` that draws progress on ``stream``.

    Parameters
    ----------
    stream : file, default=sys.stderr
    quiet, verbose : the -q / -v levels
    log_every : int, default=10
        Updates of a fit between two log lines when ``stream`` is not a terminal (a pass
        logs every ``1 / log_every`` of its items).
    """

    def __init__(self, stream=None, quiet=False, verbose=0, log_every=10):
        self.stream = sys.stderr if stream is None else stream
        self.quiet, self.verbose, self.log_every = quiet, verbose, log_every
        isatty = getattr(self.stream, "isatty", None)
        self.terminal = bool(isatty and isatty())
        self.tqdm = _tqdm() if self.terminal else None
        self._key = None
        self._bar = None
        self._tic = time.perf_counter()
        self._line = ""
        self._pending = None        # the last log line not written (written at the end)
        self._logged = -1           # of a pass: the last tenth of it logged

    def _describe(self, event):
        name = event["owner"] + event["stage"]
        value = event["value"]
        tail = "" if value is None else f"  {event['label']} {value:.6e}"
        return name, tail

    def __call__(self, event):
        if self.quiet:
            return
        key = (event["owner"], event["stage"], event["total"])
        name, tail = self._describe(event)
        done, total, unit = event["done"], event["total"], event["unit"]
        if key != self._key:
            self.close()
            self._key = key
            self._tic = time.perf_counter()
            self._logged = -1
            if self.tqdm is not None:
                self._bar = self.tqdm(total=total, desc=name, unit=unit, file=self.stream,
                                      leave=True, dynamic_ncols=True)
        elapsed = time.perf_counter() - self._tic
        if self._bar is not None:
            self._bar.update(done - self._bar.n)
            if event["value"] is not None:
                self._bar.set_postfix_str(f"{event['label']} {event['value']:.6e}")
            return
        text = f"{name}: {unit} {done}/{total}{tail}  ({elapsed:.1f} s)"
        if self.terminal and not self.verbose:
            pad = " " * max(0, len(self._line) - len(text))
            self.stream.write("\r" + text + pad)
            self.stream.flush()
            self._line = text
        elif self.verbose or done == total or self._log_line(done, total, unit):
            self.stream.write(text + "\n")
            self.stream.flush()
            self._pending = None
        else:
            self._pending = text

    def _log_line(self, done, total, unit):
        """Whether the event that completes ``done`` gets a log line (not a terminal)."""
        if unit in _progress.UPDATE_UNITS:
            return done == 1 or done % self.log_every == 0
        part = done * self.log_every // max(total, 1)      # a pass: which tenth of it
        if part > self._logged:
            self._logged = part
            return True
        return False

    def close(self):
        """End the current stage's bar or line."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._line:
            self.stream.write("\n")
            self.stream.flush()
            self._line = ""
        elif self._pending is not None:     # a stage that converged between two log lines
            self.stream.write(self._pending + "\n")
            self.stream.flush()
        self._pending = None
        self._key = None


@contextlib.contextmanager
def show_progress(quiet=False, verbose=0, stream=None):
    """Display the progress of every fit run inside the block (and of the passes of
    inference run inside :func:`countgrid._utils.progress.passes`)."""
    display = ProgressDisplay(stream=stream, quiet=quiet, verbose=verbose)
    try:
        with _progress.listen(display):
            yield display
    finally:
        display.close()
