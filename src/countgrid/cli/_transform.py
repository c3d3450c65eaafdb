"""``countgrid transform``: documents -> positions, topic proportions or codes (CSV)."""
import numpy as np

from countgrid.cli._args import UsageError, add_common, check_output, input_paths, printable
from countgrid.cli._inputs import (INPUT_HELP, add_input_options, add_load_options, load_model,
                                   read_documents)
from countgrid.cli._models import model_kind, time_column, transform_table
from countgrid.cli._output import write_table, wrote

EXAMPLE = """\
examples:
  countgrid transform model.npz -o positions.csv            # the documents it was fitted on
  countgrid transform model.npz new_posts/ -o new.csv        # new documents, same vocabulary
  countgrid transform periods.npz -o periods.csv     # a grid per period: each under its own
"""


NAME = "transform"
HELP = "positions / topic proportions / codes of documents (CSV)"
DESCRIPTION = ("Write one CSV row per document: for a counting grid the window centre (row, col: "
               "0-based cells of pi_) and the log-likelihood; for pLSA the topic proportions; "
               "for RAP the hidden coordinates; for ZIP-GTM the latent position.  A grid per "
               "period (fit --time-col) places each document on its period's grid and adds "
               "the period.")


def add_model_and_documents(p, purpose):
    """MODEL and the optional INPUT whose documents a verb works on (default: the model's
    saved corpus; :func:`documents_for`)."""
    p.add_argument("model", metavar="MODEL", help="a model file written by 'countgrid fit'")
    p.add_argument("input", metavar="INPUT", nargs="?", default=None,
                   help=f"documents {purpose} (default: those the model was fitted on), "
                        f"mapped onto the model's vocabulary; " + INPUT_HELP)


def add_arguments(p):
    add_model_and_documents(p, "to transform")
    p.add_argument("-o", "--output", default="-", help="CSV file to write (default: stdout)")
    p.add_argument("--anchor", choices=["center", "corner"], default="center",
                   help="counting grids: a document's position is its window's centre "
                        "(default) or first cell")
    p.add_argument("--time-col", default=None, metavar="COL",
                   help="a grid per period: the documents' column of dates (default: the "
                        "one column whose dates fall in the model's periods)")
    add_input_options(p, vectorizer=False)
    add_load_options(p, table=True)
    add_common(p)


def documents_for(args, est, corpus):
    """The corpus to work on: INPUT mapped onto the model's vocabulary, or the saved one."""
    if args.input is None:
        if corpus is None:
            raise UsageError(f"argument INPUT: {printable(args.model)} holds no corpus (it was not "
                             "written by 'countgrid fit'); give the documents")
        if getattr(args, "max_docs", None) and len(corpus) > args.max_docs:
            corpus = corpus.sample(args.max_docs, random_state=args.seed)
        return corpus
    vocabulary = None if corpus is None else corpus.vocabulary
    return read_documents(args, args.input, vocabulary=vocabulary)


def run(args, out):
    output = check_output(args.output, ["csv", "txt"], example="positions",
                          inputs=input_paths(args))
    est, corpus = load_model(args.model, max_bytes=args.max_bytes)
    docs = documents_for(args, est, corpus)
    times = None
    if model_kind(est) == "cg-time":     # each document under its period's grid
        times = docs.metadata[time_column(est, docs, args.time_col)]
    elif args.time_col is not None:
        raise UsageError(f"argument --time-col: {printable(args.model)} holds one "
                         f"{type(est).__name__}, not a grid per period")
    header, columns = transform_table(est, docs.counts, anchor=args.anchor, times=times)
    rows = []
    for i in range(len(docs)):
        rows.append([docs.ids[i]] + [_fmt(c[i]) for c in columns])
    write_table(output, ["id"] + header, rows, escape_formulas=not args.no_escape_formulas)
    if output != "-" and not args.quiet:
        wrote(out, output, f"{len(rows)} documents")
    return 0


def _fmt(v):
    if isinstance(v, (str, np.str_)):
        return str(v)
    if isinstance(v, (float, np.floating)) and np.isnan(v):
        return ""                # a document outside a time-sliced grid's periods
    if isinstance(v, (np.integer, int)):
        return str(int(v))
    return f"{float(v):.8g}"
