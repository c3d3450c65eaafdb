"""``countgrid plot``: pictures of a fitted model (PNG, SVG, PDF, ...)."""
import argparse

import numpy as np

from countgrid import plotting
from countgrid.cli._args import (UsageError, add_common, check_output, input_paths, integer,
                                 positive_int)
from countgrid.cli._inputs import add_load_options, load_model, model_vocabulary
from countgrid.cli._models import grid_of, model_kind
from countgrid.cli._output import write_file, wrote
from countgrid.grid._label_embedding import embedding_from_stats

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
  countgrid plot model.npz -o groups.png --kind labels --color-by group
  countgrid plot model.npz -o where.png --kind word --word space
  countgrid plot model.npz -o docs.svg --kind positions --color-by group
  countgrid plot topics.npz -o topics.png                      # pLSA: top words per topic
"""


def add_parser(sub):
    p = sub.add_parser("plot", help="draw a picture of a model (PNG, SVG, PDF)",
                       description="Draw a fitted model with matplotlib (pip install "
                                   "countgrid[plot]).  Kinds: words (the word grid, default "
                                   "for grids), labels (the label embedding as colours), "
                                   "positions (documents over the grid), word (where one word "
                                   "lives), likelihood (the log-likelihood curve), topics "
                                   "(pLSA top words, default for pLSA), map (ZIP-GTM, default "
                                   "for it).",
                       epilog=EXAMPLE)
    p.add_argument("model", metavar="MODEL", help="a model file written by 'countgrid fit'")
    p.add_argument("-o", "--output", required=True,
                   help="picture file (.png, .svg, .pdf or another matplotlib format)")
    p.add_argument("--kind", choices=KINDS, default=None, help="what to draw (see above)")
    p.add_argument("--color-by", default=None,
                   help="metadata column of the saved corpus to colour by (labels, positions, "
                        "map)")
    p.add_argument("--word", default=None, help="the word of --kind word")
    p.add_argument("--n-words", type=positive_int, default=3,
                   help="words per cell or topic shown")
    p.add_argument("--vocab", default=None, help="vocabulary file, one word per line")
    p.add_argument("--dpi", type=dpi, default=110,
                   help=f"resolution of raster pictures (1 to {MAX_DPI}; default 110)")
    add_load_options(p)
    add_common(p, seed=False)
    p.set_defaults(func=run)
    return p


def _picture_formats():
    from matplotlib.backend_bases import FigureCanvasBase

    return sorted(FigureCanvasBase.get_supported_filetypes())


def _labels(corpus, column, name="--color-by"):
    if column is None:
        return None
    if corpus is None or column not in corpus.metadata:
        have = [] if corpus is None else list(corpus.metadata)
        raise UsageError(f"argument {name}: the model's corpus has no column {column!r} "
                         f"(it has: {', '.join(have) or 'none'})")
    return np.asarray(corpus.metadata[column])


def _label_embedding(grid, X, labels, block=2048):
    """(gamma, classes): the label embedding of ``labels`` on ``grid`` (paper eq. 9), the
    posteriors computed block by block (never the whole n_documents x cells matrix)."""
    classes, codes = np.unique(np.asarray(labels).astype(str), return_inverse=True)
    extent = np.shape(grid.pi_)[:-1]
    L = int(np.prod(extent))
    M = np.zeros((len(classes), L))
    mass = np.zeros(L)
    for start in range(0, X.shape[0], block):
        Q = np.asarray(grid.transform(X[start:start + block]), dtype=np.float64)
        onehot = np.zeros((len(classes), Q.shape[0]))
        onehot[codes[start:start + block], np.arange(Q.shape[0])] = 1.0
        M += onehot @ Q
        mass += Q.sum(axis=0)
    fill = np.full(len(classes), 1.0 / len(classes))
    gamma = embedding_from_stats(M, mass, extent, grid.window, fill)
    return gamma.reshape(tuple(extent) + (len(classes),)), classes


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
    words = model_vocabulary(est, corpus, args)
    labels = _labels(corpus, args.color_by)
    X = None if corpus is None else corpus.counts
    if what in ("words", "labels", "positions", "word") and grid is None:
        raise UsageError(f"argument --kind: {what} pictures are of counting grids, and "
                         f"{args.model} holds a {type(est).__name__}")
    if what in ("words", "labels", "positions", "word") and np.ndim(grid.pi_) != 3:
        extent = "x".join(map(str, np.shape(grid.pi_)[:-1]))
        raise UsageError(f"argument MODEL: {args.model} holds a {extent} counting grid; "
                         f"{what} pictures are of 2-D grids (--kind likelihood draws any)")
    if what in ("positions", "map") and X is None:
        raise UsageError(f"argument --kind: {what} needs the documents, and {args.model} "
                         "holds no corpus")

    def draw(fh):
        import matplotlib.pyplot as plt

        if what == "words":
            ax = plotting.plot_word_grid(est if kind == "cg-classifier" else grid, words,
                                         n_words=args.n_words)
        elif what == "labels":
            if kind == "cg-classifier":
                ax = plotting.plot_label_embedding(est)
            else:
                if labels is None:
                    raise UsageError("argument --color-by: --kind labels of a counting grid "
                                     "needs the metadata column to embed")
                gamma, classes = _label_embedding(grid, X, labels)
                ax = plotting.plot_label_embedding(grid, gamma=gamma,
                                                   label_names=[str(c) for c in classes])
        elif what == "positions":
            ax = plotting.plot_positions(grid, X, labels=labels)
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

    write_file(output, draw)
    if not args.quiet:
        wrote(out, output)
    return 0
