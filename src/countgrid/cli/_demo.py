"""``countgrid demo``: the whole workflow on bundled posts — raw text, a counting grid, its
accuracy, the word-grid picture and the interactive map."""
import argparse
import os
import time

import numpy as np

from countgrid import maps
from countgrid.cli._args import (UsageError, add_common, check_output, fraction, positive_int,
                                 printable, resolve_threads)
from countgrid.cli._models import add_dtype_option, add_grid_options, grid_parameters
from countgrid.cli._output import write_file
from countgrid.cli._progress import show_progress
from countgrid.cli._split import stratified_split
from countgrid.datasets import load_news20_3class, load_news20_3class_texts
from countgrid.grid import CountingGridClassifier, auto_extent
from countgrid.grid._schedule import STAGE_ITER
from countgrid.plotting import _new_figure, plot_word_grid, text_word_grid, word_grid_cells
from countgrid.text import Corpus

# The model is the package's defaults (the one table of docs/choosing.md, "Defaults":
# CountingGridClassifier's signature), so that the demo, `countgrid fit` and Python give
# the same model for the same posts and seed.
DEMO_OUTPUT = "countgrid_demo.png"
DEMO_HTML = "countgrid_demo.html"
# The vocabulary of the demo (scikit-learn's CountVectorizer on the texts, no labels used):
# scikit-learn's English stop words, plus Usenet boiler-plate and contraction fragments
# (the list of tools/make_demo_data.py), words of 3+ letters in 5 to 50 % of the posts.
USENET_STOP_WORDS = frozenset("""
writes wrote article articles edu com org net gov mil uucp apr mar may jun jan feb reply
posting posted post posts mail email message messages news newsgroup newsgroups subject
fax phone internet dept university univ inc don didn doesn isn ll ve wasn weren wouldn
couldn shouldn haven hasn hadn aren won ain just like know think want really say said
""".split())
DEMO_VOCABULARY = dict(min_df=5, max_df=0.5, max_features=2500,
                       token_pattern=r"(?u)\b[a-z]{3,}\b")


class _LegacyExtent(argparse.Action):
    """``--extent E1 E2`` of 0.2.0.dev0: the grid, and messages name ``--extent``."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, tuple(values))
        namespace.grid_option = option_string

def _demo_stop_words():
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return sorted(ENGLISH_STOP_WORDS | USENET_STOP_WORDS)

EXAMPLE = """\
examples:
  countgrid demo                                   # countgrid_demo.png + countgrid_demo.html
  countgrid demo --grid 32x32 --window 5x5 -o grid.svg --html map.html
"""


NAME = "demo"
HELP = "the whole workflow on bundled 20 Newsgroups posts"
DESCRIPTION = ("Vectorise 2,780 bundled posts from three 20 Newsgroups groups (raw text, "
               "scikit-learn's CountVectorizer), learn a counting grid on 80 %% of them, "
               "classify the others by label embedding, and write the word grid (PNG) and the "
               "interactive map of all posts (HTML).")


def add_arguments(p):
    g = p.add_argument_group("counting grid (the defaults of CountingGridClassifier)")
    add_grid_options(g, CountingGridClassifier, window_tokens="many")
    add_dtype_option(g)
    # the options of 0.2.0.dev0 keep working (not shown)
    g.add_argument("--extent", type=positive_int, nargs=2, dest="grid", default=argparse.SUPPRESS,
                   metavar=("E1", "E2"), help=argparse.SUPPRESS, action=_LegacyExtent)
    g.add_argument("--coarse-window", type=positive_int, nargs=2, default=None,
                   metavar=("W1", "W2"), help=argparse.SUPPRESS)
    p.add_argument("--output", "-o", default=DEMO_OUTPUT,
                   help=f"the word-grid picture: .png, .svg, .pdf, or .txt for a text "
                        f"rendering (default {DEMO_OUTPUT})")
    p.add_argument("--html", default=DEMO_HTML,
                   help=f"the interactive map (default {DEMO_HTML}); 'none' to skip it")
    p.add_argument("--test-size", type=fraction, default=0.2,
                   help="fraction of each group held out for the test (default 0.2)")
    add_common(p)


def _have(module):
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def _picture_output(path, have_matplotlib):
    """(path, text_only, note) for ``--output``."""
    if not path.strip():
        raise UsageError("argument --output/-o: the file name is empty")
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if os.path.isdir(path):
        check_output(path, ["png"], example="countgrid_demo")
    if not ext:
        raise UsageError(f"argument --output/-o: {path} has no extension; use .png, .pdf, "
                         ".svg (or another format matplotlib writes) or .txt")
    note = None
    if ext == "txt":
        return check_output(path, ["txt"]), True, None
    if not have_matplotlib:
        path = os.path.splitext(path)[0] + ".txt"
        note = ("matplotlib is not installed (pip install countgrid[plot]): "
                f"writing the text rendering of the grid to {path} instead")
        return check_output(path, ["txt"]), True, note
    from matplotlib.backend_bases import FigureCanvasBase

    formats = sorted(FigureCanvasBase.get_supported_filetypes())
    if ext not in formats:
        raise UsageError(f"argument --output/-o: matplotlib cannot write .{ext} files "
                         f"({path}); use .txt or one of ." + ", .".join(formats))
    return check_output(path, formats), False, note


def demo_corpus():
    """(corpus, note): the bundled posts vectorised from their text (scikit-learn), or the
    bundled pre-vectorised counts of the same posts when scikit-learn is missing."""
    data = load_news20_3class_texts()
    groups = np.asarray(data.label_names)[data.y]
    ids = np.array([f"post-{i:04d}" for i in range(len(data.texts))])
    titles = np.array([" ".join(t.split()[:8]) for t in data.texts])
    metadata = {"group": groups, "split": np.array(["train", "test"])[data.split]}
    if _have("sklearn"):
        corpus = Corpus.from_texts(data.texts, ids=ids, titles=titles, metadata=metadata,
                                   stop_words=_demo_stop_words(), **DEMO_VOCABULARY)
        return corpus, None
    X, y, words, _ = load_news20_3class()
    snippets = np.array([" ".join(t.split())[:300] for t in data.texts])
    corpus = Corpus(X, words, ids=ids, titles=titles, snippets=snippets, metadata=metadata,
                    source="bundled 20 Newsgroups posts (pre-vectorised)")
    return corpus, ("scikit-learn is not installed (pip install countgrid[text]): using the "
                    "bundled pre-vectorised counts of the posts instead of their text")


def run(args, out):
    def say(*a):
        print(*a, file=out, flush=True)

    if getattr(args, "grid", None) is not None and not isinstance(args.grid, str):
        args.grid = tuple(args.grid)
    grid_parameters(args, cls=CountingGridClassifier)     # absurd sizes, before any work
    output, text_only, note = _picture_output(args.output, _have("matplotlib"))
    html = None if args.html.lower() == "none" else check_output(args.html, ["html", "htm"],
                                                                 name="--html",
                                                                 example="countgrid_demo")
    threads = resolve_threads(args.threads)

    t_start = time.perf_counter()
    corpus, vec_note = demo_corpus()
    X, words = corpus.counts, corpus.vocabulary
    labels = corpus.metadata["group"]
    names = np.unique(labels)
    train, test = stratified_split(labels, args.test_size, args.seed)
    if len(test) == 0:
        sizes = np.unique(labels, return_counts=True)[1]
        raise UsageError(f"argument --test-size: {args.test_size} of each group rounds to no "
                         f"post at all (the groups have {sizes.min()} to {sizes.max()} posts)")
    params = grid_parameters(args, len(train), X.shape[1], CountingGridClassifier)
    if args.coarse_window is not None:              # 0.2.0.dev0's one custom coarse stage
        extent = params.get("extent", "auto")
        if extent == "auto":
            extent = params["extent"] = auto_extent(len(train), params.get("window", (4, 4)))
        coarse = tuple(min(w, e) for w, e in zip(args.coarse_window, extent))
        iters = args.coarse_iter if args.coarse_iter is not None else STAGE_ITER
        params["window_schedule"] = [(coarse, iters)] if iters and coarse != tuple(
            params.get("window", (4, 4))) else None
    if vec_note:
        say(vec_note)
    say(f"20 Newsgroups, 3 groups ({', '.join(names)}): {X.shape[0]} posts, "
        f"{X.shape[1]} words")
    say(f"stratified split (seed {args.seed}): {len(train)} training, {len(test)} test posts")
    clf = CountingGridClassifier(**params, random_state=args.seed, num_threads=threads,
                                 verbose=1 if args.verbose else 0)
    extent, window, schedule = clf._new_grid()._grid_and_schedule(len(train))
    stages = "".join(f"{n} iterations with window {'x'.join(map(str, w))}, then "
                     for w, n in schedule)
    say(f"counting grid {'x'.join(map(str, extent))}, window {'x'.join(map(str, window))}: "
        f"{stages}up to {clf.n_iter} iterations")
    t0 = time.perf_counter()
    with show_progress(quiet=args.quiet or args.verbose, stream=out):
        clf.fit(X[train], labels[train])
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
    for name in names:
        m = labels[test] == name
        score = f"{np.mean(pred[m] == name):.4f}" if m.any() else "   n/a"
        say(f"  {name:<20s} {score} ({int(m.sum())} posts)")

    if note:
        say(note)
    if text_only:
        text = text_word_grid(clf, words, n_words=2)
        say(text)
        write_file(output, lambda fh: fh.write(text + "\n"), mode="w")
        say(f"wrote the text word grid to {printable(output)}")
    else:
        shown = word_grid_cells(clf, words, n_words=1)["words"].shape[:2]
        fig, ax = _new_figure(shown, pyplot=False)
        plot_word_grid(clf, words, ax=ax, n_words=3,
                       title=f"{extent[0]} x {extent[1]} counting grid, window "
                             f"{window[0]} x {window[1]}: 20 Newsgroups, test accuracy "
                             f"{acc:.1%}")
        write_file(output, lambda fh: fig.savefig(fh, dpi=110,
                                                  format=output.rsplit(".", 1)[-1].lower()))
        say(f"wrote the word grid to {printable(output)}")
    if html is not None:
        maps.write_html(clf, html, corpus=corpus, color_by="group", random_state=args.seed,
                        title=f"20 Newsgroups (3 groups): {extent[0]} x {extent[1]} "
                              "counting grid")
        say(f"wrote the interactive map of all {len(corpus)} posts to {printable(html)}: "
            "open it in a web browser")
    say(f"total time {time.perf_counter() - t_start:.1f} s")
    return 0
