"""``countgrid top-words``: the best words of each cell, topic or unit (TSV).

The cells of a counting grid list their most relevant words by default (LDAvis' relevance,
:func:`countgrid.grid.word_relevance`; ``--weighting probability`` gives the most probable,
``--idf`` weights them by the saved corpus's idf); topics, units and nodes of the other
models their most probable words."""
import numpy as np

from countgrid._utils import progress as _progress
from countgrid.cli._args import (UsageError, add_common, check_output, input_paths,
                                 positive_int)
from countgrid.cli._inputs import add_load_options, load_model, model_vocabulary
from countgrid.cli._models import check_region_count, grid_of, model_kind, top_words_table
from countgrid.cli._output import write_table, wrote
from countgrid.cli._progress import show_progress
from countgrid.grid import region_words, regions

EXAMPLE = """\
examples:
  countgrid top-words model.npz | head            # cells of a grid: row, col, words
  countgrid top-words model.npz --weighting probability    # the most probable words
  countgrid top-words model.npz --regions 12      # 12 regions of alike cells, their words
  countgrid top-words topics.npz -n 15 -o topics.tsv
  countgrid top-words periods.npz --regions 8     # a grid per period: a period column first
"""
#: The word rankings of the cells of a grid (countgrid.grid.word_weights).
WEIGHTINGS = ("relevance", "probability", "lift")


def add_weighting_options(p, what="the cells' words"):
    """--weighting and --idf (top-words, plot, html)."""
    p.add_argument("--weighting", choices=WEIGHTINGS, default=None,
                   help=f"how {what} are ranked: relevance (default; words frequent in the "
                        "cell and specific to it, LDAvis' relevance with lambda 0.7), "
                        "probability (the most probable words, as until 0.2.0.dev0) or lift "
                        "(rare words win)")
    p.add_argument("--idf", action="store_true",
                   help="rank words by probability x inverse document frequency in the "
                        "saved corpus (or the documents given) instead")


def weighting_of(args, X, name="--idf"):
    """The weighting to pass (countgrid.grid.word_weights) from --weighting and --idf:
    "relevance" by default; --idf gives "idf" (needs the documents X)."""
    if args.idf:
        if args.weighting not in (None, "relevance"):
            raise UsageError(f"argument --idf: --idf ranks words by probability x idf; it "
                             f"contradicts --weighting {args.weighting}")
        if X is None:
            raise UsageError(f"argument {name}: the idf needs the documents, and the model "
                             "holds no corpus")
        return "idf"
    return args.weighting or "relevance"


NAME = "top-words"
HELP = "the best words of each cell/topic (TSV)"
DESCRIPTION = ("Write the top words of every cell of a counting grid (0-based row, col of pi_; "
               "the most relevant words by default, see --weighting), topic of pLSA, hidden unit "
               "of RAP or node of a ZIP-GTM map (the most probable words), as tab-separated "
               "values.")


def add_arguments(p):
    p.add_argument("model", metavar="MODEL", help="a model file written by 'countgrid fit'")
    p.add_argument("-n", "--n-words", type=positive_int, default=10,
                   help="words per row (default 10)")
    p.add_argument("-o", "--output", default="-", help="TSV file (default: stdout)")
    p.add_argument("--vocab", default=None,
                   help="vocabulary file, one word per line (for models saved without "
                        "their corpus)")
    p.add_argument("--regions", type=positive_int, default=None, metavar="N",
                   help="a grid's cells grouped into N contiguous regions that use the same "
                        "words (countgrid.grid.regions): one row per region, its size in "
                        "cells and its most relevant words, largest first")
    add_weighting_options(p, "the words of a grid's cells")
    add_load_options(p, table=True)
    add_common(p, threads_option=False, seed=False)


def grid_table(grid, vocabulary, n_words, weighting, X=None):
    """(header, rows) of the top-words TSV of a counting grid: one row per cell in C
    order, its coordinates and its words ranked by ``weighting``."""
    top = grid.top_words(n_words, np.asarray(vocabulary).astype(str), weighting=weighting,
                         X=X)
    extent = top.shape[:-1]
    flat = top.reshape(-1, top.shape[-1])
    cells = np.stack(np.unravel_index(np.arange(flat.shape[0]), extent), axis=1)
    header = ["row", "col"] if len(extent) == 2 else [f"dim{d}" for d in range(len(extent))]
    rows = [[*map(str, cells[i]), " ".join(flat[i])] for i in range(len(flat))]
    return header + ["words"], rows


def region_table(grid, vocabulary, n_regions, n_words, weighting, X=None):
    """(header, rows) of ``top-words --regions``: one row per region (largest first), its
    number of cells and its words ranked by ``weighting``."""
    n_cells = int(np.prod(np.shape(grid.pi_)[:-1]))
    check_region_count(n_regions, n_cells)
    labels = regions(grid, n_regions)
    words = region_words(grid, labels, n_words, np.asarray(vocabulary).astype(str),
                         weighting=weighting, X=X)
    sizes = np.bincount(labels.ravel(), minlength=n_regions)
    rows = [[str(r), str(sizes[r]), " ".join(words[r])] for r in range(n_regions)]
    return ["region", "cells", "words"], rows


def run(args, out):
    output = check_output(args.output, ["tsv", "txt"], example="top-words",
                          inputs=input_paths(args))
    est, corpus = load_model(args.model, max_bytes=args.max_bytes)
    vocabulary = model_vocabulary(est, corpus, args)
    grid = grid_of(est)
    if grid is not None:
        X = None if corpus is None else corpus.counts
        weighting = weighting_of(args, X)
        with show_progress(quiet=args.quiet, verbose=args.verbose), \
                _progress.passes("top-words"):
            if model_kind(est) == "cg-time":      # each period's grid, period by period
                grids = [(str(v), est.period_grid(p)) for p, v in
                         enumerate(est.period_labels_)]
            else:
                grids = [(None, grid)]
            header, rows = None, []
            for label, one in grids:
                if args.regions is None:
                    header, part = grid_table(one, vocabulary, args.n_words, weighting, X)
                else:
                    header, part = region_table(one, vocabulary, args.regions, args.n_words,
                                                weighting, X)
                rows += part if label is None else [[label] + row for row in part]
            if len(grids) > 1 or grids[0][0] is not None:
                header = ["period"] + header
    else:
        if args.regions is not None:
            raise UsageError(f"argument --regions: regions are of counting grids, not of a "
                             f"{type(est).__name__}")
        if args.idf or args.weighting not in (None, "probability"):
            flag = "--idf" if args.idf else "--weighting"
            raise UsageError(f"argument {flag}: the word rankings are of counting grids; "
                             f"the topics of a {type(est).__name__} list their most "
                             "probable words")
        header, rows = top_words_table(est, vocabulary, args.n_words)
    write_table(output, header, rows, delimiter="\t",
                escape_formulas=not args.no_escape_formulas)
    if output != "-" and not args.quiet:
        wrote(out, output, f"{len(rows)} rows")
    return 0
