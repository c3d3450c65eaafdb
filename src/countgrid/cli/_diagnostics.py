"""``countgrid diagnostics``: the per-topic diagnostics table of a fitted model (TSV or
JSON) and its picture, coherence against exclusivity (countgrid.metrics.topic_diagnostics;
docs/diagnostics.md)."""
import json
import math

import numpy as np

from countgrid._utils import progress as _progress
from countgrid.cli._args import (UsageError, add_common, check_output, input_paths,
                                 positive_int, printable)
from countgrid.cli._inputs import add_input_options, add_load_options, load_model
from countgrid.cli._models import check_region_count, grid_of, model_kind
from countgrid.cli._output import write_file, write_table, wrote
from countgrid.cli._plot import picture_option, write_picture
from countgrid.cli._progress import show_progress
from countgrid.cli._transform import add_model_and_documents, documents_for
from countgrid.metrics import DIAGNOSTIC_COLUMNS, topic_diagnostics
from countgrid.plotting import plot_topic_quality

EXAMPLE = """\
examples:
  countgrid diagnostics model.npz                          # the table on stdout (TSV)
  countgrid diagnostics model.npz -o diag.tsv --picture quality.png
  countgrid diagnostics model.npz --regions 12 -o regions.json   # a grid's regions
  countgrid diagnostics topics.npz new_posts/ --coherence c_npmi  # other documents
"""

NAME = "diagnostics"
HELP = "coherence, exclusivity, size of every topic/cell (TSV, JSON, picture)"
DESCRIPTION = ("One row per topic of pLSA, cell (or region) of a counting grid, hidden unit "
               "of RAP or node of ZIP-GTM: its expected tokens and share, documents where it "
               "is the largest, document entropy, effective number of words, distances from "
               "the uniform and the corpus word distribution, exclusivity, FREX and "
               "coherence of its top words (MALLET's diagnostics set; docs/diagnostics.md), "
               "on the documents the model was fitted on or on INPUT.")


def add_arguments(p):
    add_model_and_documents(p, "to measure on")
    p.add_argument("-o", "--output", default="-",
                   help="the table: .tsv (or .txt) or .json (default: TSV on stdout)")
    p.add_argument("--picture", default=None, metavar="FILE",
                   help="also draw coherence against exclusivity per topic (.png, .svg, "
                        ".pdf; needs matplotlib)")
    p.add_argument("-n", "--n-words", type=positive_int, default=10,
                   help="top words per topic for exclusivity, FREX and coherence "
                        "(default 10, at least 2)")
    p.add_argument("--regions", type=positive_int, default=None, metavar="N",
                   help="a grid's cells grouped into N regions (countgrid.grid.regions): one "
                        "row per region instead of per cell")
    p.add_argument("--coherence", choices=["u_mass", "c_npmi", "c_uci", "c_v"],
                   default="u_mass",
                   help="coherence measure on the documents (default u_mass, as MALLET and "
                        "stm report)")
    p.add_argument("--frex-weight", type=float, default=0.7, metavar="W",
                   help="FREX's weight on exclusivity, in (0, 1) (default 0.7, stm's)")
    add_input_options(p, vectorizer=False)
    add_load_options(p, table=True)
    add_common(p, seed=False)


def _cell(value):
    if isinstance(value, (np.integer, int)):
        return str(int(value))
    return f"{float(value):.6g}"


def _json_value(value):
    """A JSON number, or null for NaN and infinity (JSON has neither)."""
    if isinstance(value, (np.integer, int)):
        return int(value)
    v = float(value)
    return v if math.isfinite(v) else None


def run(args, out):
    table_ext = ["tsv", "txt", "json"]
    output = check_output(args.output, table_ext, example="diagnostics",
                          inputs=input_paths(args))
    picture = None if args.picture is None else picture_option(
        args.picture, input_paths(args), "quality")
    if args.n_words < 2:
        raise UsageError("argument --n-words: coherence needs at least 2 top words")
    if not 0.0 < args.frex_weight < 1.0:
        raise UsageError(f"argument --frex-weight: must be between 0 and 1 (exclusive), got "
                         f"{args.frex_weight:g}")
    est, corpus = load_model(args.model, max_bytes=args.max_bytes)
    model = grid_of(est) or est
    if model_kind(est) == "cg-time":
        raise UsageError(f"argument MODEL: {printable(args.model)} holds a grid per "
                         f"{est.period_}; the diagnostics are of one model (in Python: "
                         "topic_diagnostics(model.period_grid(p), ...))")
    if model_kind(model) not in ("cg", "plsa", "rap", "zipgtm"):
        raise UsageError(f"argument MODEL: {printable(args.model)} holds a "
                         f"{type(est).__name__}; diagnostics are of counting grids, pLSA, "
                         "RAP and ZIP-GTM models")
    if args.regions is not None and grid_of(est) is None:
        raise UsageError(f"argument --regions: regions are of counting grids, not of a "
                         f"{type(est).__name__}")
    if args.regions is not None:
        check_region_count(args.regions, int(np.prod(np.shape(model.pi_)[:-1])))
    docs = documents_for(args, est, corpus)
    vocabulary = docs.vocabulary
    with show_progress(quiet=args.quiet, verbose=args.verbose), \
            _progress.passes("diagnostics"):
        result = topic_diagnostics(model, docs.counts, n_words=args.n_words,
                                   regions=args.regions, coherence=args.coherence,
                                   frex_weight=args.frex_weight, num_threads=args.threads)
    table = result.table(vocabulary)
    kind = result.topics
    names = [kind, *DIAGNOSTIC_COLUMNS, "top_words"]
    rows = [[str(int(table["topic"][k])), *(_cell(table[c][k]) for c in DIAGNOSTIC_COLUMNS),
             table["top_words"][k]] for k in range(len(table["topic"]))]
    if output.lower().endswith(".json"):
        words = np.asarray([str(w) for w in vocabulary], dtype=object)
        payload = {"model": type(est).__name__, "topics": kind,
                   "n_documents": result.n_documents, "n_tokens": result.n_tokens,
                   "coherence_measure": result.coherence_measure,
                   "frex_weight": result.frex_weight, "n_words": args.n_words,
                   "rows": [{kind: int(table["topic"][k]),
                             **{c: _json_value(table[c][k]) for c in DIAGNOSTIC_COLUMNS},
                             "top_words": [str(w) for w in words[result.top_words[k]]]}
                            for k in range(len(rows))]}
        text = json.dumps(payload, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
        write_file(output, lambda fh: fh.write(text), mode="w")
    else:
        write_table(output, names, rows, delimiter="\t",
                    escape_formulas=not args.no_escape_formulas)
    if picture is not None:
        write_picture(picture, lambda: plot_topic_quality(result, vocabulary))
    if not args.quiet and output != "-":      # stdout holds the table otherwise
        wrote(out, output, f"{len(rows)} {kind}s")
        if picture is not None:
            wrote(out, picture)
    return 0
