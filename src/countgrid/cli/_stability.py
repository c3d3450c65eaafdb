"""``countgrid stability``: fit a counting grid several times with other seeds and report
how reproducible its words and its documents' places are (countgrid.grid.stability;
docs/counting_grids.md, "Stability across restarts")."""
import numpy as np

from countgrid._utils import progress as _progress
from countgrid.cli._args import (UsageError, add_common, check_output, input_paths,
                                 positive_int, resolve_threads)
from countgrid.cli._inputs import INPUT_HELP, add_input_options, read_documents
from countgrid.cli._models import (add_dtype_option, add_grid_options, check_region_count,
                                   default, grid_parameters)
from countgrid.cli._output import write_table, wrote
from countgrid.cli._plot import picture_option, write_picture
from countgrid.cli._progress import show_progress
from countgrid.grid import CountingGrid, auto_extent, region_words, stability
from countgrid.plotting import plot_cell_stability

EXAMPLE = """\
examples:
  countgrid stability posts/ --restarts 3                  # 3 fits of the defaults
  countgrid stability posts/ --restarts 3 --grid 16x16 --regions 6 -o regions.tsv
  countgrid stability posts.csv --text-col body --restarts 2 --picture stability.png
"""

NAME = "stability"
HELP = "how reproducible a grid is across restarts (summary, TSV, picture)"
DESCRIPTION = ("Fit a counting grid of the documents several times with other seeds, align "
               "every fit onto the first (translations, reversed and swapped axes of the "
               "torus) and report how alike the maps are (mean Bhattacharyya coefficient of "
               "the paired windows, and the same against chance), how often the documents land "
               "in the same place, and per cell (or region, --regions) how stable the words "
               "are.")


def add_arguments(p):
    p.add_argument("input", metavar="INPUT", help=INPUT_HELP)
    p.add_argument("--restarts", type=positive_int, default=5,
                   help="fits with other seeds (default 5, at least 2)")
    p.add_argument("--regions", type=positive_int, default=None, metavar="N",
                   help="summarise by N regions of the first fit (countgrid.grid.regions)")
    p.add_argument("-o", "--output", default=None,
                   help="TSV: one row per cell (row, col, stability) or, with --regions, per "
                        "region (cells, stability, document agreement, words)")
    p.add_argument("--picture", default=None, metavar="FILE",
                   help="the grid's cells coloured by their stability (.png, .svg, .pdf; "
                        "needs matplotlib)")
    g = p.add_argument_group("counting grid (the defaults of CountingGrid)")
    add_grid_options(g)
    add_dtype_option(g)
    add_input_options(p)
    add_common(p)


def run(args, out):
    if args.restarts < 2:
        raise UsageError("argument --restarts: at least 2 fits are compared")
    output = None if args.output is None else check_output(
        args.output, ["tsv", "txt"], example="stability", inputs=input_paths(args))
    if output == "-":
        raise UsageError("argument --output/-o: give a file name (stdout holds the summary)")
    picture = None if args.picture is None else picture_option(
        args.picture, input_paths(args), "stability")
    threads = resolve_threads(args.threads)
    grid_parameters(args)                        # option errors before reading anything
    corpus = read_documents(args, args.input)
    params = grid_parameters(args, len(corpus), corpus.n_terms)
    extent = params.get("extent", "auto")
    if extent == "auto":
        extent = auto_extent(len(corpus), params.get("window", default(CountingGrid,
                                                                         "window")))
    check_region_count(args.regions, int(np.prod(extent)))
    if args.picture is not None and len(extent) != 2:
        raise UsageError("argument --picture: the picture is of 2-D grids")
    say = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=out, flush=True))
    say(f"{len(corpus)} documents x {corpus.n_terms} words: {args.restarts} fits (seed "
        f"{args.seed})")
    with show_progress(quiet=args.quiet, verbose=args.verbose), _progress.passes("stability"):
        result = stability(corpus.counts, args.restarts, random_state=args.seed,
                           n_regions=args.regions, num_threads=threads, **params)
    ref = result.reference
    extent = tuple(ref.pi_.shape[:-1])
    agreement = result.placement_agreement
    print(f"similarity {result.mean_similarity:.4f} ({result.mean_adjusted_similarity:.4f} "
          f"over chance): mean Bhattacharyya coefficient of the paired windows of two fits, "
          f"after alignment ({'x'.join(map(str, extent))} grid, window "
          f"{'x'.join(map(str, ref.window))})", file=out)
    print(f"documents placed alike: {np.mean(agreement):.1%} (per fit against the first: "
          f"{', '.join(f'{a:.1%}' for a in agreement)}; within half a window)", file=out)
    print(f"cell stability: median {np.median(result.cell_stability):.4f}, least stable "
          f"tenth below {np.quantile(result.cell_stability, 0.1):.4f}", file=out)
    if output is not None:
        vocabulary = np.asarray(corpus.vocabulary).astype(str)
        if args.regions is not None:
            words = region_words(ref, result.regions, 5, vocabulary)
            sizes = np.bincount(result.regions.ravel(), minlength=args.regions)
            header = ["region", "cells", "stability", "document_agreement", "words"]
            rows = [[str(r), str(sizes[r]), f"{result.region_stability[r]:.6g}",
                     f"{result.region_agreement[r]:.6g}", " ".join(words[r])]
                    for r in range(args.regions)]
        else:
            cells = np.stack(np.unravel_index(np.arange(int(np.prod(extent))), extent), axis=1)
            header = (["row", "col"] if len(extent) == 2
                      else [f"dim{d}" for d in range(len(extent))]) + ["stability"]
            flat = result.cell_stability.ravel()
            rows = [[*map(str, cells[k]), f"{flat[k]:.6g}"] for k in range(flat.size)]
        write_table(output, header, rows, delimiter="\t")
        if not args.quiet:
            wrote(out, output, f"{len(rows)} rows")
    if picture is not None:
        write_picture(picture, lambda: plot_cell_stability(result))
        if not args.quiet:
            wrote(out, picture)
    return 0
