"""``countgrid demo``: the whole workflow on bundled posts — raw text, a counting grid, its
accuracy, the word-grid picture and the interactive map."""
import os
import time

import numpy as np

from countgrid import maps
from countgrid.cli._args import (UsageError, add_common, check_grid_memory, check_output, fraction,
                                 nonnegative_int, positive_int, printable, resolve_threads)
from countgrid.cli._output import write_file
from countgrid.cli._progress import show_progress
from countgrid.cli._split import stratified_split
from countgrid.datasets import load_news20_3class, load_news20_3class_texts
from countgrid.grid import CountingGridClassifier
from countgrid.plotting import _new_figure, plot_word_grid, text_word_grid, word_grid_cells
from countgrid.text import Corpus

# About 10 CPU-seconds of EM on 2,224 training posts (test accuracy about 96-98 % over
# seeds).  A short coarse stage with a larger window spreads the classes over big regions
# first and reliably gives a few points of accuracy over starting with the target window.
DEMO_EXTENT = (24, 24)
DEMO_WINDOW = (4, 4)
DEMO_COARSE_WINDOW = (8, 8)
DEMO_COARSE_ITER = 10
DEMO_N_ITER = 100
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


def _demo_stop_words():
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return sorted(ENGLISH_STOP_WORDS | USENET_STOP_WORDS)

EXAMPLE = """\
examples:
  countgrid demo                                   # countgrid_demo.png + countgrid_demo.html
  countgrid demo --extent 32 32 --window 5 5 -o grid.svg --html map.html
"""


def add_parser(sub):
    p = sub.add_parser("demo", help="the whole workflow on bundled 20 Newsgroups posts",
                       description="Vectorise 2,780 bundled posts from three 20 Newsgroups "
                                   "groups (raw text, scikit-learn's CountVectorizer), learn a "
                                   "counting grid on 80 %% of them, classify the others by "
                                   "label embedding, and write the word grid (PNG) and the "
                                   "interactive map of all posts (HTML).",
                       epilog=EXAMPLE)
    p.add_argument("--extent", type=positive_int, nargs=2, default=list(DEMO_EXTENT),
                   metavar=("E1", "E2"), help="grid shape (default 24 24)")
    p.add_argument("--window", type=positive_int, nargs=2, default=list(DEMO_WINDOW),
                   metavar=("W1", "W2"), help="window shape (default 4 4)")
    p.add_argument("--n-iter", type=positive_int, default=DEMO_N_ITER,
                   help=f"maximum EM iterations with the target window (default {DEMO_N_ITER})")
    p.add_argument("--coarse-window", type=positive_int, nargs=2,
                   default=list(DEMO_COARSE_WINDOW), metavar=("W1", "W2"),
                   help="window of the first, coarse stage (default 8 8)")
    p.add_argument("--coarse-iter", type=nonnegative_int, default=DEMO_COARSE_ITER,
                   help=f"iterations of the coarse stage (default {DEMO_COARSE_ITER}; 0: none)")
    p.add_argument("--output", "-o", default=DEMO_OUTPUT,
                   help=f"the word-grid picture: .png, .svg, .pdf, or .txt for a text "
                        f"rendering (default {DEMO_OUTPUT})")
    p.add_argument("--html", default=DEMO_HTML,
                   help=f"the interactive map (default {DEMO_HTML}); 'none' to skip it")
    p.add_argument("--test-size", type=fraction, default=0.2,
                   help="fraction of each group held out for the test (default 0.2)")
    add_common(p)
    p.set_defaults(func=run)
    return p


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

    extent, window = tuple(args.extent), tuple(args.window)
    if any(w > e for w, e in zip(window, extent)):
        raise UsageError(f"argument --window: window {window} is larger than extent {extent}")
    # absurd sizes, before loading anything
    check_grid_memory(extent, name="--extent", words_option=None)
    output, text_only, note = _picture_output(args.output, _have("matplotlib"))
    html = None if args.html.lower() == "none" else check_output(args.html, ["html", "htm"],
                                                                 name="--html",
                                                                 example="countgrid_demo")
    threads = resolve_threads(args.threads)
    schedule = None
    if args.coarse_iter > 0:
        coarse = tuple(min(w, e) for w, e in zip(args.coarse_window, extent))
        if coarse != window:
            schedule = [(coarse, int(args.coarse_iter))]

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
    check_grid_memory(extent, X.shape[1], len(train), name="--extent",
                      words_option=None)
    if vec_note:
        say(vec_note)
    say(f"20 Newsgroups, 3 groups ({', '.join(names)}): {X.shape[0]} posts, "
        f"{X.shape[1]} words")
    say(f"stratified split (seed {args.seed}): {len(train)} training, {len(test)} test posts")
    stages = (f"{schedule[0][1]} iterations with window {schedule[0][0]}, then "
              if schedule else "")
    say(f"counting grid {extent} window {window}: {stages}up to {args.n_iter} iterations")

    clf = CountingGridClassifier(extent, window, n_iter=args.n_iter, window_schedule=schedule,
                                 random_state=args.seed, num_threads=threads,
                                 verbose=1 if args.verbose else 0)
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
