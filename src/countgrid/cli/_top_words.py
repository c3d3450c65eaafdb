"""``countgrid top-words``: the most probable words of each cell, topic or unit (TSV)."""
from countgrid.cli._args import add_common, check_output, input_paths, positive_int
from countgrid.cli._inputs import add_load_options, load_model, model_vocabulary
from countgrid.cli._models import top_words_table
from countgrid.cli._output import write_table, wrote

EXAMPLE = """\
examples:
  countgrid top-words model.npz | head            # cells of a grid: row, col, words
  countgrid top-words topics.npz -n 15 -o topics.tsv
"""


def add_parser(sub):
    p = sub.add_parser("top-words", help="the most probable words of each cell/topic (TSV)",
                       description="Write the top words of every cell of a counting grid "
                                   "(0-based row, col of pi_), topic of pLSA, hidden unit of "
                                   "RAP or node of a ZIP-GTM map, as tab-separated values.",
                       epilog=EXAMPLE)
    p.add_argument("model", metavar="MODEL", help="a model file written by 'countgrid fit'")
    p.add_argument("-n", "--n-words", type=positive_int, default=10,
                   help="words per row (default 10)")
    p.add_argument("-o", "--output", default="-", help="TSV file (default: stdout)")
    p.add_argument("--vocab", default=None,
                   help="vocabulary file, one word per line (for models saved without "
                        "their corpus)")
    add_load_options(p, table=True)
    add_common(p, threads_option=False, seed=False)
    p.set_defaults(func=run)
    return p


def run(args, out):
    output = check_output(args.output, ["tsv", "txt"], example="top-words",
                          inputs=input_paths(args))
    est, corpus = load_model(args.model, max_bytes=args.max_bytes)
    vocabulary = model_vocabulary(est, corpus, args)
    header, rows = top_words_table(est, vocabulary, args.n_words)
    write_table(output, header, rows, delimiter="\t",
                escape_formulas=not args.no_escape_formulas)
    if output != "-" and not args.quiet:
        wrote(out, output, f"{len(rows)} rows")
    return 0
