"""``countgrid html``: the interactive offline map of a counting grid (one HTML file)."""
import os
import time

import numpy as np

from countgrid import maps
from countgrid._utils import progress as _progress
from countgrid._utils.dates import parse_dates, period_codes
from countgrid.cli._args import (UsageError, add_colouring_options, add_common, check_input,
                                 check_output, input_paths, positive_int, printable)
from countgrid.cli._inputs import (add_input_options, add_load_options, load_model,
                                   model_vocabulary, read_documents)
from countgrid.cli._models import grid_of, model_kind, time_column
from countgrid.cli._output import size_text
from countgrid.cli._progress import show_progress
from countgrid.cli._top_words import add_weighting_options, weighting_of
from countgrid.cli._transform import documents_for
from countgrid.maps._bundle import CHUNK_FOLDER

EXAMPLE = """\
examples:
  countgrid html model.npz -o map.html
  countgrid html model.npz -o map.html --color-by group --idf
  countgrid html model.npz -o map.html --color-by group --levels sci.space,alt.atheism
  countgrid html model.npz -o map.html --weighting probability   # most probable words
  countgrid html model.npz -o map.html --time-col date   # a time slider over the dates
  countgrid html model.npz -o map.html --feature space   # where a word (a gene) is used
  countgrid html periods.npz -o periods.html    # a grid per period under the time slider
  countgrid html model.npz -o again.html --annotations countgrid-notes.json
  countgrid html model.npz new_posts/ --versus other_posts/ --names new,other -o diff.html
  countgrid html model.npz other_posts/ -o other.html --max-docs 20000
  countgrid html model.npz posts.csv --text-col body --bundle posts_map   # a folder: 1M documents
"""


NAME = "html"
HELP = "write the interactive map of a counting grid (one offline HTML file)"
DESCRIPTION = ("Write one self-contained HTML file (no network, no server): the grid's words "
               "cell by cell, zoom and pan around the torus, word search, click a cell for the "
               "documents there, colour by a metadata column.  With --bundle, a folder that "
               "holds a million documents.  docs/map.md explains how to read it.")


def add_arguments(p):
    p.add_argument("model", metavar="MODEL", help="a counting-grid model file written by "
                                                  "'countgrid fit'")
    p.add_argument("input", metavar="INPUT", nargs="?", default=None,
                   help="documents to place on the map (default: those the model was "
                        "fitted on)")
    p.add_argument("-o", "--output", default=None, help="the HTML file to write")
    p.add_argument("--bundle", default=None, metavar="DIR",
                   help="write a folder instead of one file: DIR/index.html draws at once "
                        "and loads the documents from DIR/documents/ (beyond ~250,000 "
                        "documents; opens from file:// or any static web host)")
    add_colouring_options(p, "metadata column to colour the cells by (categorical: a "
                             "legend; numbers: a colour bar)")
    p.add_argument("--feature", action="append", default=None, metavar="TERM",
                   help="colour the cells by the share of TERM (a word, a gene) in the "
                        "documents: a colouring named 'TERM share' (repeatable; the map opens "
                        "on the first unless --color-by)")
    p.add_argument("--time-col", default=None,
                   help="metadata column of dates (ISO 8601 or Unix timestamps): a time "
                        "slider, the map of each period and each region's share over time")
    p.add_argument("--period", default="auto", choices=["auto", "day", "week", "month", "year"],
                   help="the periods of --time-col (default auto: the finest giving at "
                        "most 60 periods)")
    p.add_argument("--versus", default=None, metavar="OTHER",
                   help="a second corpus (read as INPUT is, onto the model's words): the map "
                        "holds both and opens on where they differ")
    p.add_argument("--names", default=None, metavar="A,B",
                   help="the two corpora's names with --versus (default: the inputs' names)")
    p.add_argument("--annotations", default=None, metavar="JSON",
                   help="region names and cell notes saved from a map of this model (its "
                        "'Notes ↓' button)")
    add_weighting_options(p, "the words of the cells")
    p.add_argument("--n-words", type=positive_int, default=None,
                   help="words stored per cell (default: the map's own)")
    p.add_argument("--title", default=None, help="title of the page")
    p.add_argument("--vocab", default=None, help="vocabulary file, one word per line")
    add_input_options(p, vectorizer=False)
    add_load_options(p)
    add_common(p)


def _stem(path):
    """A corpus's name from its path: the file or folder name without its extension."""
    name = os.path.basename(os.path.normpath(str(path)))
    return printable(name.split(".")[0] or name)


def _bundle_folder(path):
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"argument --bundle: {printable(path)} exists and is not a folder")
    return path


def run(args, out):
    if (args.output is None) == (args.bundle is None):
        raise UsageError("argument -o/--output: give the HTML file to write, or --bundle DIR "
                         "for a folder (not both)")
    if args.bundle is not None:
        output = _bundle_folder(args.bundle)
    else:
        output = check_output(args.output, ["html", "htm"], example="map",
                              inputs=input_paths(args))
    t0 = time.perf_counter()
    est, corpus = load_model(args.model, max_bytes=args.max_bytes)
    if grid_of(est) is None:
        raise UsageError(f"argument MODEL: the map is of counting grids; {args.model} holds "
                         f"a {type(est).__name__} (try 'countgrid plot')")
    extent = np.shape(grid_of(est).pi_)[:-1]
    if len(extent) != 2:
        raise UsageError(f"argument MODEL: the map is of 2-D counting grids; {args.model} "
                         f"holds a {'x'.join(map(str, extent))} grid")
    words = model_vocabulary(est, corpus, args)
    docs = None
    if args.input is not None or corpus is not None:
        docs = documents_for(args, est, corpus)
    versus, names = None, None
    if args.versus is not None:
        if docs is None:
            raise UsageError("argument --versus: give the first corpus (INPUT) or a model "
                             "that holds one")
        if args.color_by is not None or args.time_col is not None:
            raise UsageError("argument --versus: the map opens on the two corpora's "
                             "difference; drop --color-by and --time-col")
        if args.names is not None:
            names = tuple(v.strip() for v in args.names.split(","))
            if len(names) != 2 or not all(names) or names[0] == names[1]:
                raise UsageError(f"argument --names: two different names separated by a "
                                 f"comma, got {args.names!r}")
        else:
            first = "model's corpus" if args.input is None else _stem(args.input)
            names = (first, _stem(args.versus))
            if names[0] == names[1]:
                names = (names[0] + " (1)", names[1] + " (2)")
        versus = read_documents(args, args.versus, vocabulary=words, name="--versus")
    elif args.names is not None:
        raise UsageError("argument --names: name the two corpora of --versus")
    if model_kind(est) == "cg-time" and docs is not None:
        # a grid per period: the slider runs over the model's periods, each document on
        # its period's grid (docs/map.md, "Time-sliced grids")
        if versus is not None:
            raise UsageError("argument --versus: the model holds a grid per period; compare "
                             "two corpora on a single grid")
        if args.period not in ("auto", est.period_):
            raise UsageError(f"argument --period: the model holds a grid per "
                             f"{est.period_}; the slider's periods are those")
        args.time_col = time_column(est, docs, args.time_col)
    metadata = None
    if args.feature:
        if docs is None:
            raise UsageError("argument --feature: give the documents (INPUT) or a model that "
                             "holds them")
        if args.versus is not None:
            raise UsageError("argument --feature: the map of --versus opens on the two "
                             "corpora's difference; drop --feature")
        try:
            shares = maps.feature_shares(docs.counts, docs.vocabulary, args.feature)
        except ValueError as exc:
            raise UsageError(f"argument --feature: {exc}") from None
        metadata = {**docs.metadata, **shares}
        if args.color_by is None:
            args.color_by = next(iter(shares))
    if args.color_by is not None and (docs is None or args.color_by not in
                                      (metadata or docs.metadata)):
        have = [] if docs is None else list(docs.metadata)
        raise UsageError(f"argument --color-by: the documents have no column "
                         f"{args.color_by!r} (they have: {', '.join(have) or 'none'})")
    if args.time_col is not None:
        if docs is None or args.time_col not in docs.metadata:
            have = [] if docs is None else list(docs.metadata)
            raise UsageError(f"argument --time-col: the documents have no column "
                             f"{args.time_col!r} (they have: {', '.join(have) or 'none'})")
        if args.color_by == args.time_col:
            raise UsageError(f"argument --color-by: {args.time_col!r} is the --time-col "
                             "(the time slider colours the map by the dates)")
        try:
            period_codes(parse_dates(docs.metadata[args.time_col], "--time-col"),
                         args.period, "--period")
        except ValueError as exc:
            raise UsageError(f"argument {exc}") from None
    elif args.period != "auto":
        raise UsageError("argument --period: choose the periods of a --time-col column")
    annotations = None
    if args.annotations is not None:
        check_input(args.annotations, "--annotations")
        try:
            annotations = maps.read_annotations(args.annotations)
        except ValueError as exc:
            raise UsageError(f"argument --annotations: {exc}") from None
        extent2 = tuple(int(e) for e in extent)
        if tuple(annotations["extent"]) != extent2:
            raise UsageError(f"argument --annotations: written for a "
                             f"{annotations['extent'][0]} x {annotations['extent'][1]} grid, "
                             f"the model's is {extent2[0]} x {extent2[1]}")
    levels = None
    if args.levels is not None:
        if args.color_by is None:
            raise UsageError("argument --levels: choose the levels of a --color-by column")
        levels = [v.strip() for v in args.levels.split(",") if v.strip()]
        have = set(np.asarray((metadata or docs.metadata)[args.color_by]).astype(str).tolist())
        missing = [v for v in levels if v not in have]
        if missing or not levels:
            raise UsageError(f"argument --levels: {', '.join(map(repr, missing)) or 'nothing'} "
                             f"is not a level of --color-by {args.color_by!r}")
    options = dict(color_by=args.color_by, levels=levels, random_state=args.seed,
                   time=args.time_col, period=args.period, annotations=annotations,
                   max_docs=args.max_docs,
                   weighting=weighting_of(args, None if docs is None else docs.counts))
    if metadata is not None:
        options["metadata"] = metadata
    if args.n_words:
        options["n_words"] = args.n_words
    if args.title:
        options["title"] = args.title
    write = maps.write_html if args.bundle is None else maps.write_bundle
    with show_progress(quiet=args.quiet, verbose=args.verbose), _progress.passes("map"):
        if docs is None:
            page = write(est, output, feature_names=words, **options)
        elif versus is not None:
            page = write(est, output, corpus=docs, versus=versus, names=names, **options)
        else:
            page = write(est, output, corpus=docs, **options)
    n = (0 if docs is None else len(docs)) + (0 if versus is None else len(versus))
    what = f"{size_text(output)}, {n} documents"
    if args.bundle is not None:
        chunks = os.listdir(os.path.join(output, CHUNK_FOLDER))
        what += f" in {len(chunks)} chunk file{'s' if len(chunks) != 1 else ''}"
    print(f"wrote {printable(str(page))} ({what}) in {time.perf_counter() - t0:.1f} s: "
          "open it in a web browser", file=out)
    return 0
