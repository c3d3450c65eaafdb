"""The ``countgrid`` command line.

``countgrid demo``
    Learn a counting grid on the bundled 20 Newsgroups corpus (three
    groups), classify held-out posts by label embedding and draw the word
    grid coloured by class.
``countgrid info``
    Print the build and runtime configuration (:func:`countgrid.show_config`).
"""
import argparse
import os
import sys
import time

import numpy as np

from countgrid._config import show_config
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
    if not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size must be in (0, 1), got {test_size}")
    y = np.asarray(y)
    rng = np.random.default_rng(random_state)
    test = []
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        rng.shuffle(idx)
        n_test = min(int(round(test_size * len(idx))), len(idx) - 1)
        test.append(idx[:n_test])
    test = np.sort(np.concatenate(test))
    train = np.setdiff1d(np.arange(len(y)), test)
    return train, test


def _positive_int(text):
    v = int(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return v


def _int_or_none(text):
    v = int(text)
    if v == 0:
        raise argparse.ArgumentTypeError("must not be 0 (omit it to use all cores)")
    return v


def build_parser():
    """The argument parser of the ``countgrid`` command."""
    parser = argparse.ArgumentParser(
        prog="countgrid",
        description="Counting grids: latent models of count data.")
    parser.add_argument("--version", action="version", version=f"countgrid {__version__}")
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
    demo.add_argument("--coarse-iter", type=int, default=DEMO_COARSE_ITER,
                      help="iterations of the coarse stage, 0 to skip it (default: %(default)s)")
    demo.add_argument("--output", "-o", default=DEMO_OUTPUT,
                      help="picture of the grid, PNG/PDF/SVG (default: %(default)s); "
                           "a .txt name writes the text rendering")
    demo.add_argument("--seed", type=int, default=0,
                      help="seed of the split and of the grid initialisation (default: 0)")
    demo.add_argument("--threads", type=_int_or_none, default=None,
                      help="OpenMP threads (default: all cores)")
    demo.add_argument("--test-size", type=float, default=0.2,
                      help="held-out fraction of every class (default: %(default)s)")
    demo.add_argument("--quiet", "-q", action="store_true",
                      help="do not print the log-likelihood of every iteration")
    demo.set_defaults(func=_demo)

    info = sub.add_parser("info", help="print the build and runtime configuration")
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


def _demo(args, out):
    def say(*a):
        print(*a, file=out, flush=True)

    extent, window = tuple(args.extent), tuple(args.window)
    if any(w > e for w, e in zip(window, extent)):
        raise SystemExit(f"countgrid demo: error: window {window} is larger than extent {extent}")
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
    say(f"20 Newsgroups, 3 groups ({', '.join(label_names)}): {X.shape[0]} posts, "
        f"{X.shape[1]} words")
    say(f"stratified split (seed {args.seed}): {len(train)} training, {len(test)} test posts")
    stages = (f"{schedule[0][1]} iterations with window {schedule[0][0]}, then "
              if schedule else "")
    say(f"counting grid {extent} window {window}: {stages}up to {args.n_iter} iterations")

    clf = CountingGridClassifier(
        extent, window, n_iter=args.n_iter, window_schedule=schedule, random_state=args.seed,
        num_threads=args.threads, verbose=0 if args.quiet else 1)
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
        say(f"  {name:<20s} {np.mean(pred[m] == name):.4f} ({int(m.sum())} posts)")

    output = args.output
    text_only = output.lower().endswith(".txt")
    if not text_only and not _have_matplotlib():
        output = os.path.splitext(output)[0] + ".txt"
        say("matplotlib is not installed (pip install countgrid[plot]): "
            f"writing the text rendering of the grid to {output} instead")
        text_only = True
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


def main(argv=None):
    """Run the ``countgrid`` command.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit status (0 on success).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    return args.func(args, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
