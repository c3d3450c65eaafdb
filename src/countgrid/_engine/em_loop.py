"""The EM monitor shared by every EM estimator: history, tolerance test, progress line and
``ConvergenceWarning`` (the role of ``sklearn/mixture/_base.py``'s loop bookkeeping).

The estimators keep their own E- and M-steps and call :meth:`EMMonitor.record` with the
objective after every update; the monitor decides when to stop.  The test is the same for
all of them: stop when the improvement of the objective is below ``tol``, relative to its
magnitude (``relative=True``: log-likelihoods of counts, whose scale grows with the data)
or absolute (``relative=False``: a per-unit mean, as HistogramGMM's).  A decrease also
stops.  ``tol=0`` runs every iteration.
"""
import os
import sys
import time
import warnings
from numbers import Integral, Real

import numpy as np

from countgrid._utils import progress as _progress
from countgrid._utils.param_validation import Interval
from countgrid._utils.threads import effective_n_threads
from countgrid._utils.validation import resolve_dtype
from countgrid.exceptions import ConvergenceWarning

__all__ = ["N_BATCH_ITER_DOC", "STEP_SIZE_CONSTRAINTS", "STEP_SIZE_PARAMS_DOC", "EMMonitor",
           "minibatch_inputs", "minibatch_rho", "start_fit"]


class EMMonitor:
    """Bookkeeping of one EM run.

    Parameters
    ----------
    owner : str
        Name in the progress line and the warning (usually the estimator's class).
    n_iter : int
        Maximum number of updates.
    tol : float
        Stop when ``(new - old) < tol * |old|`` (relative) or ``(new - old) < tol``.
    min_iter : int, default=1
        The test starts once this many updates were recorded (and two values exist).
    relative : bool, default=True
    verbose : int, default=0
        Print one line per recorded value.
    label : str, default="log-likelihood"
        What the recorded value is, for the progress line.
    stage : str, default=""
        Appended to the owner in the progress line (e.g. an annealing stage).
    """

    def __init__(self, owner, n_iter, tol, min_iter=1, relative=True, verbose=0,
                 label="log-likelihood", stage=""):
        self.owner, self.n_iter, self.tol = owner, int(n_iter), float(tol)
        self.min_iter, self.relative, self.verbose = int(min_iter), bool(relative), verbose
        self.label, self.stage = label, stage
        self.history = []
        self.converged = False
        self.n_updates = 0
        self.change = None
        self._tic = time.perf_counter()

    def record(self, value, n_updates=None):
        """Record the objective after ``n_updates`` updates (default: one more than the last
        call); returns True when the run has converged."""
        self.n_updates = self.n_updates + 1 if n_updates is None else int(n_updates)
        value = float(value)
        if self.history:
            old = self.history[-1]
            scale = abs(old) if self.relative else 1.0
            self.change = (value - old) / scale if scale > 0 else value - old
        self.history.append(value)
        if self.verbose:
            change = "" if self.change is None else f"  change {self.change:+.3e}"
            now = time.perf_counter()
            print(f"[{self.owner}{self.stage}] iteration {self.n_updates:4d}  {self.label} "
                  f"{value:.6e}{change}  ({now - self._tic:.3f} s)", flush=True)
            self._tic = now
        _progress.report(self.owner, self.n_updates, self.n_iter, value, self.label,
                         self.stage)
        if (self.tol > 0 and self.change is not None and len(self.history) >= 2
                and self.n_updates >= self.min_iter and self.change < self.tol):
            self.converged = True
        return self.converged

    def finish(self):
        """Warn with ``ConvergenceWarning`` if the run ended at ``n_iter`` without meeting a
        positive ``tol``; returns ``converged``."""
        if not self.converged and self.tol > 0:
            last = "" if self.change is None else f" (last relative change {self.change:.2e})"
            if not self.relative and self.change is not None:
                last = f" (last change {self.change:.2e})"
            warnings.warn(f"{self.owner}{self.stage} did not converge in {self.n_iter} "
                          f"iterations{last}, tol={self.tol:g}: raise n_iter or tol",
                          ConvergenceWarning, stacklevel=_caller_level())
        return self.converged


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _caller_level():
    """The ``stacklevel`` of the first frame outside countgrid (the user's call)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def minibatch_rho(step, learning_offset, learning_decay):
    """Step size ``rho_t = (tau_0 + t)^-kappa`` of stepwise EM (Cappe & Moulines 2009;
    scikit-learn's LatentDirichletAllocation names: ``learning_offset``, ``learning_decay``).
    The first step (t = 0) takes the minibatch's statistics whole."""
    if step == 0:
        return 1.0
    return float(learning_offset + step) ** -float(learning_decay)


# ------------------------------------------------------------------ stepwise (online) EM
# The estimators that learn online (CountingGrid, PLSA) share the step size, its
# parameters and their documentation, and how fit and partial_fit begin.

#: Constraints of the step-size parameters of stepwise EM.
STEP_SIZE_CONSTRAINTS = {
    "learning_offset": [Interval(Real, 0, None, closed="neither")],
    "learning_decay": [Interval(Real, 0.5, 1, closed="right")],
    "total_samples": [Interval(Integral, 1, None)],
}

#: Their documentation, a fragment of the estimators' Parameters sections (written as
#: ``    """ + STEP_SIZE_PARAMS_DOC + """`` on a line of its own, as grid._classifiers does).
STEP_SIZE_PARAMS_DOC = """learning_offset : float, default=10.0
        ``tau_0 > 0`` of the step size (scikit-learn's LatentDirichletAllocation name).
    learning_decay : float in (0.5, 1], default=0.7
        ``kappa`` of the step size.
    total_samples : int, default=1_000_000
        Corpus size the minibatch statistics of :meth:`partial_fit` are scaled to
        (``fit`` uses the number of documents it sees)."""

#: The documentation of the minibatch count (a fragment of the Attributes sections).
N_BATCH_ITER_DOC = """n_batch_iter_ : int
        Minibatch updates of online EM (``learning_method="online"`` or
        :meth:`partial_fit`); 0 after batch EM."""


def start_fit(est, X):
    """The start of ``fit`` of an estimator that may also learn online: its parameters
    validated, the minibatch count of earlier :meth:`partial_fit` calls dropped.  Returns
    ``(dtype, num_threads)``, the working precision for ``X`` and the OpenMP threads."""
    est._validate_params()
    est.__dict__.pop("n_batch_iter_", None)
    return resolve_dtype(est.dtype, X), effective_n_threads(est.num_threads)


def minibatch_inputs(est, X, fitted):
    """``(dtype, n_features)`` of the minibatch ``X`` of a ``partial_fit`` call: those of
    ``X`` on the first call (``n_features`` None), then the dtype of the fitted attribute
    ``fitted`` and ``n_features_in_``."""
    model = getattr(est, fitted, None)
    if model is None:
        return resolve_dtype(est.dtype, X), None
    return np.dtype(model.dtype), est.n_features_in_
