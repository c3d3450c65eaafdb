"""The ``countgrid`` command line.

``countgrid demo``
    Learn a counting grid on the bundled 20 Newsgroups corpus (three
    groups), classify held-out posts by label embedding and draw the word
    grid coloured by class.
``countgrid info``
    Print the build and runtime configuration (:func:`countgrid.show_config`).

Every argument and the output file are checked before any work starts.  Errors are one
line on stderr: exit status 2 for a bad argument (as argparse), 1 for a failure while
running, 130 for Ctrl-C.  ``--debug`` (or the environment variable ``COUNTGRID_DEBUG=1``)
adds the Python traceback of a failure.
"""
import argparse
import contextlib
import math
import os
import sys
import tempfile
import time
import traceback
import warnings
from numbers import Real

import numpy as np

from countgrid._config import show_config
from countgrid._memory import check_memory
from countgrid._param_validation import Interval, validate_params
from countgrid._threads import effective_n_threads
from countgrid._validation import check_random_state, encode_labels
from countgrid._version import __version__
from countgrid.datasets import load_news20_3class
from countgrid.grid import CountingGridClassifier
from countgrid.plotting import (_new_figure, plot_word_grid, text_word_grid,
                                word_grid_cells)

__all__ = ["main", "build_parser", "stratified_split"]

# Defaults of the demo: about 10 CPU-seconds of EM on 2,224 training posts
# (test accuracy about 96-98 % over seeds).  A short coarse stage with a
# larger window spreads the classes over big regions first and reliably
# gives a few points of accuracy over starting with the target window.
DEMO_EXTENT = (24, 24)
DEMO_WINDOW = (4, 4)
DEMO_COARSE_WINDOW = (8, 8)
DEMO_COARSE_ITER = 10
DEMO_N_ITER = 100
DEMO_OUTPUT = "countgrid_demo.png"


def stratified_split(y, test_size=0.2, random_state=0):
    """Seeded stratified train/test split of sample indices.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    test_size : float, default=0.2
        Fraction of every class put in the test set (rounded, at least one
        sample of each class with two or more samples stays in training).
    random_state : int or numpy.random.Generator, default=0

    Returns
    -------
    train, test : ndarray of int
        Sorted indices of the two parts.
    """
    validate_params({"test_size": [Interval(Real, 0, 1, closed="neither")],
                     "random_state": ["random_state"]},
                    {"test_size": test_size, "random_state": random_state}, "stratified_split()")
    classes, codes = encode_labels(y)
    rng = check_random_state(random_state)
    test = []
    for c in range(len(classes)):
        idx = np.flatnonzero(codes == c)
        rng.shuffle(idx)
        n_test = min(int(round(test_size * len(idx))), len(idx) - 1)
        test.append(idx[:n_test])
    test = np.sort(np.concatenate(test))
    train = np.setdiff1d(np.arange(len(codes)), test)
    return train, test


class UsageError(Exception):
    """A bad argument found after parsing (exit status 2); the message names it."""


def _one_line(text):
    return " ".join(str(text).split())


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``countgrid demo: error: ... (see --help)``."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {_one_line(message)} "
                     f"(see '{self.prog} --help')\n")


def _integer(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def _positive_int(text):
    v = _integer(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return v


def _nonnegative_int(text):
    v = _integer(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text}")
    return v


def _int_or_none(text):
    v = _integer(text)
    if v == 0:
        raise argparse.ArgumentTypeError("must not be 0 (omit it to use all cores; -1 is all "
                                         "cores too)")
    return v


def _fraction(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not (math.isfinite(v) and 0.0 < v < 1.0):
        raise argparse.ArgumentTypeError(f"must be a fraction strictly between 0 and 1, "
                                         f"got {text}")
    return v


for _f, _name in ((_integer, "integer"), (_positive_int, "positive integer"),
                  (_nonnegative_int, "non-negative integer"), (_int_or_none, "integer"),
                  (_fraction, "fraction")):
    _f.__name__ = _name                         # what argparse says of a failed conversion


def build_parser():
    """The argument parser of the ``countgrid`` command."""
    parser = _Parser(
        prog="countgrid",
        description="Counting grids: latent models of count data.")
    parser.add_argument("--version", action="version", version=f"countgrid {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the Python traceback of a failure (also COUNTGRID_DEBUG=1)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    demo = sub.add_parser(
        "demo", help="learn a grid on bundled 20 Newsgroups posts and draw it",
        description="Learn a counting grid on 2,780 posts from alt.atheism, rec.sport.baseball "
                    "and sci.space (80/20 stratified split), classify the held-out posts by "
                    "label embedding and draw the word grid coloured by class.")
    demo.add_argument("--extent", type=_positive_int, nargs=2, default=list(DEMO_EXTENT),
                      metavar=("E1", "E2"), help="grid size (default: %(default)s)")
    demo.add_argument("--window", type=_positive_int, nargs=2, default=list(DEMO_WINDOW),
                      metavar=("W1", "W2"), help="window size (default: %(default)s)")
    demo.add_argument("--n-iter", type=_positive_int, default=DEMO_N_ITER,
                      help="maximum EM iterations with the target window "
                           "(default: %(default)s; stops earlier at convergence)")
    demo.add_argument("--coarse-window", type=_positive_int, nargs=2,
                      default=list(DEMO_COARSE_WINDOW), metavar=("W1", "W2"),
                      help="window of the coarse annealing stage (default: %(default)s)")
    demo.add_argument("--coarse-iter", type=_nonnegative_int, default=DEMO_COARSE_ITER,
                      help="iterations of the coarse stage, 0 to skip it (default: %(default)s)")
    demo.add_argument("--output", "-o", default=DEMO_OUTPUT,
                      help="picture of the grid, PNG/PDF/SVG or another format matplotlib "
                           "writes (default: %(default)s); a .txt name writes the text "
                           "rendering")
    demo.add_argument("--seed", type=_nonnegative_int, default=0,
                      help="seed of the split and of the grid initialisation (default: 0)")
    demo.add_argument("--threads", type=_int_or_none, default=None,
                      help="OpenMP threads (default: all cores; negative: all but |n|-1)")
    demo.add_argument("--test-size", type=_fraction, default=0.2,
                      help="held-out fraction of every class (default: %(default)s)")
    demo.add_argument("--quiet", "-q", action="store_true",
                      help="do not print the log-likelihood of every iteration")
    demo.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                      help=argparse.SUPPRESS)
    demo.set_defaults(func=_demo)

    info = sub.add_parser("info", help="print the build and runtime configuration")
    info.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                      help=argparse.SUPPRESS)
    info.set_defaults(func=_info)
    return parser


def _info(args, out):
    show_config(file=out)
    return 0


def _have_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _picture_formats():
    """Extensions matplotlib's ``savefig`` writes (without the dot)."""
    from matplotlib.backend_bases import FigureCanvasBase

    return sorted(FigureCanvasBase.get_supported_filetypes())


def _check_output(path, have_matplotlib):
    """(path, text_only, note) for ``--output``; UsageError unless the file can be written.

    Checked before any work: not empty, not a folder, a known extension, an existing
    folder we can create files in (tried for real: access() says yes to root on
    read-only places).
    """
    if not path.strip():
        raise UsageError("argument --output/-o: the file name is empty")
    if os.path.isdir(path):
        raise UsageError(f"argument --output/-o: {path} is a folder; give a file name such "
                         f"as {os.path.join(path, DEMO_OUTPUT)}")
    stem, ext = os.path.splitext(path)
    ext = ext.lower().lstrip(".")
    note = None
    if ext == "txt":
        text_only = True
    elif not ext:
        raise UsageError(f"argument --output/-o: {path} has no extension; use .png, .pdf, "
                         ".svg (or another format matplotlib writes) or .txt")
    elif not have_matplotlib:
        path = stem + ".txt"
        text_only = True
        note = ("matplotlib is not installed (pip install countgrid[plot]): "
                f"writing the text rendering of the grid to {path} instead")
    else:
        formats = _picture_formats()
        if ext not in formats:
            raise UsageError(f"argument --output/-o: matplotlib cannot write .{ext} files "
                             f"({path}); use .txt or one of ."
                             + ", .".join(formats))
        text_only = False
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        what = "is not a folder" if os.path.exists(folder) else "does not exist"
        raise UsageError(f"argument --output/-o: the folder {folder} of {path} {what}")
    try:
        if os.path.exists(path):
            with open(path, "ab"):
                pass
        else:
            fd, probe = tempfile.mkstemp(prefix=".countgrid-", suffix=".tmp", dir=folder)
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        raise UsageError(f"argument --output/-o: cannot write {path}: "
                         f"{exc.strerror or exc}") from None
    return path, text_only, note


def _resolve_threads(num_threads):
    """The thread count, with the cap of countgrid._threads reported as a warning about
    --threads."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        n = effective_n_threads(num_threads)
    if caught and num_threads is not None:
        warnings.warn(f"--threads {num_threads} is more than is useful here: using {n} "
                      "threads", RuntimeWarning, stacklevel=2)
    return n


def _check_grid(extent, window):
    if any(w > e for w, e in zip(window, extent)):
        raise UsageError(f"argument --window: window {window} is larger than extent {extent}")


def _check_grid_memory(extent, n_words=1, n_train=1):
    """The EM of a counting grid keeps a few (cells x words) arrays and the (posts x cells)
    posteriors: refuse an extent that cannot fit (first with one word and one post, before
    loading the data, then with the real sizes)."""
    cells = math.prod(extent)
    what = f"a {extent[0]} x {extent[1]} counting grid"
    if n_words > 1:
        what += f" over {n_words} words and {n_train} posts"
    try:
        check_memory(8 * cells * (4 * n_words + n_train), what, "choose a smaller --extent")
    except MemoryError as exc:
        raise UsageError(f"argument --extent: {exc}") from None


def _demo(args, out):
    def say(*a):
        print(*a, file=out, flush=True)

    extent, window = tuple(args.extent), tuple(args.window)
    _check_grid(extent, window)
    _check_grid_memory(extent)                  # absurd sizes, before loading anything
    output, text_only, note = _check_output(args.output, _have_matplotlib())
    threads = _resolve_threads(args.threads)
    schedule = None
    if args.coarse_iter > 0:
        coarse = tuple(min(w, e) for w, e in zip(args.coarse_window, extent))
        if coarse != window:
            schedule = [(coarse, int(args.coarse_iter))]

    t_start = time.perf_counter()
    data = load_news20_3class()
    X, y, words, label_names = data
    labels = label_names[y]
    train, test = stratified_split(y, args.test_size, args.seed)
    if len(test) == 0:
        raise UsageError(f"argument --test-size: {args.test_size} of each group rounds to no "
                         f"post at all (the groups have {np.bincount(y).min()} to "
                         f"{np.bincount(y).max()} posts)")
    _check_grid_memory(extent, X.shape[1], len(train))
    say(f"20 Newsgroups, 3 groups ({', '.join(label_names)}): {X.shape[0]} posts, "
        f"{X.shape[1]} words")
    say(f"stratified split (seed {args.seed}): {len(train)} training, {len(test)} test posts")
    stages = (f"{schedule[0][1]} iterations with window {schedule[0][0]}, then "
              if schedule else "")
    say(f"counting grid {extent} window {window}: {stages}up to {args.n_iter} iterations")

    clf = CountingGridClassifier(
        extent, window, n_iter=args.n_iter, window_schedule=schedule, random_state=args.seed,
        num_threads=threads, verbose=0 if args.quiet else 1)
    t0 = time.perf_counter()
    clf.fit(X[train], labels[train])  # verbose: one line per EM iteration on stdout
    t_fit = time.perf_counter() - t0
    grid = clf.grid_
    n_tokens = float(X[train].sum())
    ll = float(grid.log_likelihood_[-1])
    pred = clf.predict(X[test])
    acc = float(np.mean(pred == labels[test]))
    say(f"fitted in {t_fit:.1f} s: {grid.n_iter_} iterations"
        f" ({'converged' if grid.converged_ else 'not converged'})")
    say(f"final log-likelihood (training): {ll:.6e} ({ll / n_tokens:.4f} per word)")
    say(f"test accuracy (label embedding): {acc:.4f} ({int(np.sum(pred == labels[test]))}"
        f"/{len(test)})")
    for name in label_names:
        m = labels[test] == name
        score = f"{np.mean(pred[m] == name):.4f}" if m.any() else "   n/a"
        say(f"  {name:<20s} {score} ({int(m.sum())} posts)")

    if note:
        say(note)
    if text_only:
        text = text_word_grid(clf, words, n_words=2)
        say(text)
        with open(output, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        say(f"wrote the text word grid to {output}")
    else:
        shown = word_grid_cells(clf, words, n_words=1)["words"].shape[:2]
        fig, ax = _new_figure(shown, pyplot=False)
        plot_word_grid(clf, words, ax=ax, n_words=3,
                       title=f"{extent[0]} x {extent[1]} counting grid, window "
                             f"{window[0]} x {window[1]}: 20 Newsgroups, test accuracy "
                             f"{acc:.1%}")
        fig.savefig(output, dpi=110)
        say(f"wrote the word grid to {output}")
    say(f"total time {time.perf_counter() - t_start:.1f} s")
    return 0


@contextlib.contextmanager
def _one_line_warnings(prog):
    """Warnings as ``prog: warning: message`` lines on stderr (no source lines)."""
    def show(message, category, filename, lineno, file=None, line=None):
        print(f"{prog}: warning: {_one_line(message)}", file=sys.stderr, flush=True)

    saved = warnings.showwarning
    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = saved


def _describe(exc):
    """One line for a failure: the message, or the kind of failure when there is none."""
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{where}"
    if isinstance(exc, MemoryError):
        return f"out of memory{': ' + _one_line(exc) if str(exc) else ''}"
    text = _one_line(exc)
    return text if text else type(exc).__name__


def main(argv=None):
    """Run the ``countgrid`` command.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit status: 0 on success, 1 for a failure while running, 2 for a bad argument
        (argparse errors raise ``SystemExit(2)``), 130 after Ctrl-C.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    prog = f"{parser.prog} {args.command}"
    debug = getattr(args, "debug", False) or os.environ.get("COUNTGRID_DEBUG", "") not in (
        "", "0")
    with _one_line_warnings(prog):
        try:
            return args.func(args, sys.stdout)
        except UsageError as exc:
            print(f"{prog}: error: {_one_line(exc)} (see '{prog} --help')", file=sys.stderr)
            return 2
        except BrokenPipeError:                 # e.g. `countgrid demo | head`
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return 1
        except KeyboardInterrupt as exc:
            if debug:
                traceback.print_exc()
            # the transactional fit notes where it stopped (countgrid._base)
            where = [_one_line(n) for n in getattr(exc, "__notes__", ())]
            detail = f" ({where[0]})" if where else ""
            print(f"{prog}: interrupted{detail}; nothing was written", file=sys.stderr)
            return 130
        except Exception as exc:  # noqa: BLE001 - one line, never a traceback (unless --debug)
            if debug:
                traceback.print_exc()
            print(f"{prog}: error: {_describe(exc)}"
                  + ("" if debug else " (--debug shows the traceback)"), file=sys.stderr)
            return 1


if __name__ == "__main__":
    sys.exit(main())
