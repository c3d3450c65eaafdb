"""``countgrid plot``: pictures of a fitted model (PNG, SVG, PDF, ...)."""
import argparse

import numpy as np

from countgrid import plotting
from countgrid._utils import progress as _progress
from countgrid.cli._args import (UsageError, add_colouring_options, add_common, check_output,
                                 input_paths, integer, positive_int)
from countgrid.cli._inputs import add_load_options, load_model, model_vocabulary
from countgrid.cli._models import grid_of, model_kind
from countgrid.cli._output import write_file, wrote
from countgrid.cli._progress import show_progress
from countgrid.cli._top_words import add_weighting_options, weighting_of
from countgrid.grid import visit_posteriors
from countgrid.grid._browse import window_coverage
from countgrid.grid._torus import check_grid
from countgrid.grid._words import word_weights

#: Beyond this a picture of a few inches has tens of thousands of pixels a side.
MAX_DPI = 1200


def dpi(text):
    v = integer(text)
    if not 1 <= v <= MAX_DPI:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_DPI} dots per inch, "
                                         f"got {text}")
    return v


KINDS = ("words", "labels", "positions", "word", "likelihood", "topics", "map")
EXAMPLE = """\
examples:
  countgrid plot model.npz -o grid.png                         # the word grid
  countgrid plot model.npz -o tinted.png --color-by group      # ... tinted by group
  countgrid plot model.npz -o groups.png --kind labels --color-by group
  countgrid plot model.npz -o where.png --kind word --word space
  countgrid plot model.npz -o docs.svg --kind positions --color-by group
  countgrid plot model.npz -o two.png --kind positions --color-by group --levels sci.space,alt.atheism
  countgrid plot topics.npz -o topics.png                      # pLSA: top words per topic
"""


NAME = "plot"
HELP = "draw a picture of a model (PNG, SVG, PDF)"
DESCRIPTION = ("Draw a fitted model with matplotlib (pip install countgrid[plot]).  Kinds: words "
               "(the word grid, default for grids), labels (the label embedding as colours), "
               "positions (documents over the grid), word (where one word lives), likelihood "
               "(the log-likelihood curve), topics (pLSA top words, default for pLSA), map "
               "(ZIP-GTM, default for it).")


def add_arguments(p):
    p.add_argument("model", metavar="MODEL", help="a model file written by 'countgrid fit'")
    p.add_argument("-o", "--output", required=True,
                   help="picture file (.png, .svg, .pdf or another matplotlib format)")
    p.add_argument("--kind", choices=KINDS, default=None, help="what to draw (see above)")
    add_colouring_options(p, "metadata column of the saved corpus to colour by: words "
                             "(cells tinted by the column's label embedding), labels, "
                             "positions, map; the other kinds refuse it")
    p.add_argument("--word", default=None, help="the word of --kind word")
    p.add_argument("--n-words", type=positive_int, default=3,
                   help="words per cell or topic shown")
    p.add_argument("--vocab", default=None, help="vocabulary file, one word per line")
    add_weighting_options(p, "the words of the word grid (--kind words)")
    p.add_argument("--dpi", type=dpi, default=110,
                   help=f"resolution of raster pictures (1 to {MAX_DPI}; default 110)")
    add_load_options(p)
    add_common(p, seed=False)


def _picture_formats():
    from matplotlib.backend_bases import FigureCanvasBase

    return sorted(FigureCanvasBase.get_supported_filetypes())


def picture_option(path, inputs, example):
    """The ``--picture`` file a verb draws besides its output: matplotlib importable (the
    Agg backend), a picture format matplotlib writes, a file (not stdout)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
    except ImportError:
        raise UsageError("argument --picture: needs matplotlib: pip install "
                         "countgrid[plot]") from None
    picture = check_output(path, _picture_formats(), name="--picture", example=example,
                           inputs=inputs)
    if picture == "-":
        raise UsageError("argument --picture: give a file name (a picture is not written "
                         "to stdout)")
    return picture


def write_picture(path, draw, dpi=110):
    """Write the figure of the axes ``draw()`` returns to ``path`` (atomically), in the
    format of its extension, and close it."""
    def write(fh):
        import matplotlib.pyplot as plt

        ax = draw()
        ax.figure.savefig(fh, dpi=dpi, format=path.rsplit(".", 1)[-1].lower())
        plt.close(ax.figure)

    write_file(path, write)


def _labels(corpus, column, name="--color-by"):
    if column is None:
        return None
    if corpus is None or column not in corpus.metadata:
        have = [] if corpus is None else list(corpus.metadata)
        raise UsageError(f"argument {name}: the model's corpus has no column {column!r} "
                         f"(it has: {', '.join(have) or 'none'})")
    return np.asarray(corpus.metadata[column])


#: The kinds that draw --color-by, and those that take --levels and --weighting/--idf.
COLOURED = ("words", "labels", "positions", "map")
LEVELLED = ("words", "labels", "positions")


def _check_flags(args, what):
    """--color-by, --levels, --weighting and --idf are honoured by some kinds and refused
    with a message by the others (never silently ignored)."""
    if args.color_by is not None and what not in COLOURED:
        raise UsageError(f"argument --color-by: --kind {what} draws no colours by a column "
                         f"(--color-by applies to --kind {', '.join(COLOURED)})")
    if args.levels is not None:
        if what not in LEVELLED:
            raise UsageError(f"argument --levels: --kind {what} takes no --levels (it "
                             f"applies to --kind {', '.join(LEVELLED)})")
    for flag, given in (("--weighting", args.weighting is not None), ("--idf", args.idf)):
        if given and what != "words":
            raise UsageError(f"argument {flag}: ranks the words of the word grid; --kind "
                             f"{what} draws none")


def _levels(args, labels):
    if args.levels is None:
        return None
    if labels is None:
        raise UsageError("argument --levels: choose the levels of a --color-by column")
    levels = [v.strip() for v in args.levels.split(",") if v.strip()]
    have = set(np.asarray(labels).astype(str).tolist())
    missing = [v for v in levels if v not in have]
    if missing or not levels:
        raise UsageError(f"argument --levels: {', '.join(map(repr, missing)) or 'nothing'} "
                         f"is not a level of --color-by {args.color_by!r}")
    return levels


def _label_embedding(grid, X, labels):
    """(gamma (extent + (C,)), class names) of a metadata column: the coverage-weighted
    class distribution of every cell (paper eq. 9, as countgrid.embed_labels and the map's
    colourings), accumulated block by block (memory O(block x cells))."""
    classes, codes = np.unique(np.asarray(labels).astype(str), return_inverse=True)
    extent = tuple(np.shape(grid.pi_)[:-1])
    _, window = check_grid(extent, grid.window)
    L = int(np.prod(extent))
    stats = np.zeros((len(classes), L))

    def visit(t0, t1, qb, llb):
        onehot = np.zeros((len(classes), t1 - t0))
        onehot[codes.ravel()[t0:t1], np.arange(t1 - t0)] = 1.0
        stats[:] += onehot @ np.asarray(qb, dtype=np.float64)

    visit_posteriors(grid, X, visit)
    C = window_coverage(stats, extent, window)
    tot = C.sum(axis=0, keepdims=True)
    P = np.divide(C, tot, out=np.full_like(C, 1.0 / len(classes)), where=tot > 0)
    return np.ascontiguousarray(P.T).reshape(extent + (len(classes),)), list(classes)


def run(args, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
    except ImportError:
        raise UsageError("plot needs matplotlib: pip install countgrid[plot]") from None
    output = check_output(args.output, _picture_formats(), example="picture",
                          inputs=input_paths(args))
    est, corpus = load_model(args.model, max_bytes=args.max_bytes)
    kind = model_kind(est)
    grid = grid_of(est)
    what = args.kind or {"plsa": "topics", "zipgtm": "map", "rap": "likelihood"}.get(kind,
                                                                                     "words")
    _check_flags(args, what)
    words = model_vocabulary(est, corpus, args)
    labels = _labels(corpus, args.color_by)
    levels = _levels(args, labels)
    X = None if corpus is None else corpus.counts
    if what in ("words", "labels", "positions", "word") and grid is None:
        raise UsageError(f"argument --kind: {what} pictures are of counting grids, and "
                         f"{args.model} holds a {type(est).__name__}")
    if what in ("words", "labels", "positions", "word") and np.ndim(grid.pi_) != 3:
        extent = "x".join(map(str, np.shape(grid.pi_)[:-1]))
        raise UsageError(f"argument MODEL: {args.model} holds a {extent} counting grid; "
                         f"{what} pictures are of 2-D grids (--kind likelihood draws any)")
    if kind == "cg-time" and what not in ("words", "word"):
        raise UsageError(f"argument --kind: {args.model} holds a grid per {est.period_}; "
                         f"its pictures are of their average's words (--kind words or "
                         f"word); 'countgrid html' shows each period")
    if what in ("positions", "map") and X is None:
        raise UsageError(f"argument --kind: {what} needs the documents, and {args.model} "
                         "holds no corpus")
    weighting = weighting_of(args, X) if what == "words" else None
    if weighting == "idf":      # the per-word factors of the saved corpus
        weighting = word_weights(grid.pi_, "idf", X=X)

    def draw(fh):
        import matplotlib.pyplot as plt

        if what == "words":
            if labels is not None:      # tinted by the column's label embedding
                gamma, names = _label_embedding(grid, X, labels)
                ax = plotting.plot_word_grid(grid, words, n_words=args.n_words, gamma=gamma,
                                             label_names=names, weighting=weighting,
                                             levels=levels)
            else:
                ax = plotting.plot_word_grid(est if kind == "cg-classifier" else grid, words,
                                             n_words=args.n_words, weighting=weighting,
                                             levels=levels)
        elif what == "labels":
            if labels is not None:
                gamma, names = _label_embedding(grid, X, labels)
                ax = plotting.plot_label_embedding(grid, gamma=gamma, label_names=names,
                                                   levels=levels)
            elif kind == "cg-classifier":
                ax = plotting.plot_label_embedding(est, levels=levels)
            else:
                raise UsageError("argument --color-by: --kind labels of a counting grid "
                                 "needs the metadata column to embed")
        elif what == "positions":
            ax = plotting.plot_positions(grid, X, labels=labels, levels=levels)
        elif what == "word":
            if not args.word:
                raise UsageError("argument --word: --kind word needs --word WORD")
            ax = plotting.plot_word_map(grid, args.word, words)
        elif what == "likelihood":
            ax = plotting.plot_log_likelihood(est)
        elif what == "topics":
            if kind != "plsa":
                raise UsageError(f"argument --kind: topics are of pLSA models, not "
                                 f"{type(est).__name__}")
            ax = plotting.plot_top_words(est, words, n_words=max(args.n_words, 8))
        else:
            if kind != "zipgtm":
                raise UsageError(f"argument --kind: map is the ZIP-GTM picture, not of a "
                                 f"{type(est).__name__}")
            ax = plotting.plot_zip_gtm_map(est, X, labels=labels)
        fig = ax.figure if hasattr(ax, "figure") else ax
        fig.savefig(fh, dpi=args.dpi, format=output.rsplit(".", 1)[-1].lower())
        plt.close(fig)

    with show_progress(quiet=args.quiet, verbose=args.verbose), _progress.passes("plot"):
        write_file(output, draw)
    if not args.quiet:
        wrote(out, output)
    return 0
