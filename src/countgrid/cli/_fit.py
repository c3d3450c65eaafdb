"""``countgrid fit``: documents -> a model file (with its corpus)."""
import time

import numpy as np

from countgrid.cli._args import add_common, check_output, input_paths, resolve_threads
from countgrid.cli._inputs import INPUT_HELP, add_input_options, read_documents
from countgrid.cli._models import (add_large_corpus_options, add_model_options,
                                   add_time_options, describe, make_estimator, time_column)
from countgrid.cli._output import size_text, write_file, wrote
from countgrid.cli._progress import show_progress

EXAMPLE = """\
examples:
  countgrid fit posts/ -o model.npz                # a grid sized to the posts, window 4x4
  countgrid fit posts.csv --text-col body --meta-cols group,date -o model.npz --seed 1
  countgrid fit posts/ -o big.npz --grid 48x48 --window 5x5 --tol 1e-6
  countgrid fit posts.npz -o topics.npz --model plsa -k 50
  countgrid fit posts/ -o layers.npz --layers 2       # two word distributions per cell
  countgrid fit posts/ -o fast.npz --estep coarse-to-fine --accelerate --subsample auto
  countgrid fit posts.csv --text-col body --meta-cols date --time-col date -o periods.npz
"""


NAME = "fit"
HELP = "learn a model from documents (raw text or counts)"
DESCRIPTION = ("Learn a counting grid (default), pLSA, RAP or ZIP-GTM from documents and save "
               "it, with the corpus it was fitted on (vocabulary, ids, titles, metadata), in one "
               ".npz file.")


def add_arguments(p):
    p.add_argument("input", metavar="INPUT", help=INPUT_HELP)
    p.add_argument("-o", "--output", required=True, help="the model file to write (.npz)")
    add_model_options(p)
    add_large_corpus_options(p)
    add_time_options(p)
    add_input_options(p)
    add_common(p)


def run(args, out):
    output = check_output(args.output, ["npz"], example="model", inputs=input_paths(args))
    threads = resolve_threads(args.threads)
    make_estimator(args, threads)            # option errors before reading anything
    t0 = time.perf_counter()
    corpus = read_documents(args, args.input)
    X = corpus.counts
    est = make_estimator(args, threads, n_words=corpus.n_terms, n_docs=len(corpus))
    say = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=out, flush=True))
    say(f"{len(corpus)} documents x {corpus.n_terms} words ({int(X.sum())} tokens) read in "
        f"{time.perf_counter() - t0:.1f} s")
    t1 = time.perf_counter()
    fit_params = {}
    if args.time_col is not None:
        column = time_column(est, corpus, args.time_col)
        fit_params["times"] = corpus.metadata[column]
    with show_progress(quiet=args.quiet, verbose=args.verbose):
        est.fit(X, **fit_params)
    say(f"fitted a {describe(est)} in {time.perf_counter() - t1:.1f} s")
    ll = getattr(est, "log_likelihood_", None)
    if "times" in fit_params:            # a grid per period: each on its own documents
        codes = est.periods(fit_params["times"])
        if est.span == 1:
            tokens = np.bincount(codes[codes >= 0], weights=np.asarray(X.sum(axis=1)).ravel()[
                codes >= 0], minlength=len(ll))
            say("log-likelihood per token by period: " + ", ".join(
                f"{lab} {v / max(t, 1.0):.4f}"
                for lab, v, t in zip(est.period_labels_, ll, tokens)))
    elif ll is not None and np.size(ll):
        say(f"final log-likelihood {float(np.ravel(ll)[-1]):.6e} "
            f"({float(np.ravel(ll)[-1]) / max(float(X.sum()), 1.0):.4f} per token)")
    write_file(output, lambda fh: est.save(fh, corpus=corpus))
    wrote(out, output, size_text(output))
    return 0
