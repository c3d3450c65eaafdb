"""``countgrid vectorize``: raw text -> a corpus file."""
import time

from countgrid.cli._args import add_common, check_output, input_paths, printable
from countgrid.cli._inputs import INPUT_HELP, add_input_options, read_documents
from countgrid.cli._output import size_text, write_file, wrote

EXAMPLE = """\
example:
  countgrid vectorize posts/ -o posts.npz --min-df 5 --max-features 5000
  countgrid vectorize reviews.csv --text-col body --title-col title --meta-cols stars -o r.npz
  countgrid fit posts.npz -o model.npz
"""


NAME = "vectorize"
HELP = "turn raw text into a corpus file (counts, vocabulary, titles, metadata)"
DESCRIPTION = ("Tokenise documents (scikit-learn's CountVectorizer), keep their ids, titles, "
               "snippets, links and metadata, and save them as one .npz corpus file (no pickle).")


def add_arguments(p):
    p.add_argument("input", metavar="INPUT", help=INPUT_HELP)
    p.add_argument("-o", "--output", required=True, help="the corpus file to write (.npz)")
    add_input_options(p)
    add_common(p, threads_option=False)


def run(args, out):
    output = check_output(args.output, ["npz"], example="corpus", inputs=input_paths(args))
    t0 = time.perf_counter()
    corpus = read_documents(args, args.input)
    write_file(output, corpus.save)
    if not args.quiet:
        print(f"{len(corpus)} documents x {corpus.n_terms} words "
              f"({int(corpus.counts.sum())} tokens) from {printable(args.input)} in "
              f"{time.perf_counter() - t0:.1f} s", file=out)
    wrote(out, output, size_text(output))
    return 0
