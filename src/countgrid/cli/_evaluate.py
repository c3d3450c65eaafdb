"""``countgrid evaluate``: cross-validated accuracy of a counting-grid classifier given a
label column, next to multinomial naive Bayes on the same folds."""
import time

import numpy as np

from countgrid.cli._args import (UsageError, add_common, check_grid_memory, check_window,
                                 grid_shape, nonnegative_int, positive_int, resolve_threads)
from countgrid.cli._inputs import INPUT_HELP, add_input_options, read_documents
from countgrid.cli._models import COARSE_ITER, DEFAULT_WINDOW, coarse_to_fine
from countgrid.cli._progress import show_progress
from countgrid.cli._split import stratified_folds
from countgrid.grid import CountingGridClassifier, GenerativeCountingGridClassifier

EXAMPLE = """\
examples:
  countgrid evaluate posts.csv --text-col body --label-col topic --grid 24x24 --window 4x4
  countgrid evaluate corpus.npz --label-col label --folds 10 --classifier generative
"""


def add_parser(sub):
    p = sub.add_parser("evaluate", help="cross-validated accuracy given a label column",
                       description="Stratified k-fold cross-validation of a counting-grid "
                                   "classifier (label embedding, paper eq. 9, or one grid per "
                                   "class) on labelled documents, with multinomial naive Bayes "
                                   "on the same folds as a baseline (scikit-learn).  The "
                                   "vocabulary is chosen without the labels.",
                       epilog=EXAMPLE)
    p.add_argument("input", metavar="INPUT", help=INPUT_HELP)
    p.add_argument("--label-col", required=True,
                   help="metadata column (CSV/TSV column, JSONL field, 'label' of a .npz "
                        "dataset) holding the class of each document")
    p.add_argument("--folds", type=positive_int, default=5, help="folds (default 5)")
    p.add_argument("--classifier", choices=["embedding", "generative"], default="embedding",
                   help="embedding: one grid, labels embedded (default); generative: one "
                        "grid per class")
    g = p.add_argument_group("counting grid")
    g.add_argument("--grid", type=grid_shape, default=(24, 24), metavar="EXTENT",
                   help="grid shape (default 24x24)")
    g.add_argument("--window", type=grid_shape, default=None, metavar="WINDOW",
                   help="window shape (default 4x4)")
    g.add_argument("--coarse-iter", type=nonnegative_int, default=COARSE_ITER,
                   help="iterations of each larger window run first (coarse to fine; "
                        f"default {COARSE_ITER}, 0: none)")
    g.add_argument("--n-iter", type=positive_int, default=100, help="EM iterations (100)")
    add_input_options(p)
    add_common(p)
    p.set_defaults(func=run)
    return p


def run(args, out):
    if args.folds < 2:
        raise UsageError("argument --folds: at least 2 folds are needed")
    extent = args.grid
    window = check_window(extent, args.window or tuple(min(DEFAULT_WINDOW[0] - 1, e)
                                                       for e in extent))
    threads = resolve_threads(args.threads)
    meta = [c for c in (args.meta_cols or "").split(",") if c.strip()]
    if args.label_col not in meta:
        args.meta_cols = ",".join(meta + [args.label_col])
    corpus = read_documents(args, args.input)
    if args.label_col not in corpus.metadata:
        raise UsageError(f"argument --label-col: the documents have no column "
                         f"{args.label_col!r} (they have: "
                         f"{', '.join(corpus.metadata) or 'none'})")
    y = np.asarray(corpus.metadata[args.label_col])
    X = corpus.counts
    check_grid_memory(extent, corpus.n_terms, len(corpus))
    try:
        folds = stratified_folds(y, args.folds, args.seed)
    except ValueError as exc:
        raise UsageError(f"argument --folds: {exc} (column --label-col {args.label_col!r})") \
            from None
    schedule = coarse_to_fine(extent, window, args.coarse_iter)
    say = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=out, flush=True))
    classes, counts = np.unique(y, return_counts=True)
    say(f"{len(corpus)} documents x {corpus.n_terms} words, {len(classes)} classes "
        f"({', '.join(f'{c}: {n}' for c, n in zip(classes, counts))}); {args.folds} "
        f"stratified folds (seed {args.seed})")
    try:
        from sklearn.naive_bayes import MultinomialNB
    except ImportError:
        MultinomialNB = None
    scores, baseline = [], []
    t0 = time.perf_counter()
    for k, (train, test) in enumerate(folds, 1):
        if args.classifier == "embedding":
            clf = CountingGridClassifier(extent, window, n_iter=args.n_iter,
                                         window_schedule=schedule, random_state=args.seed,
                                         num_threads=threads)
        else:
            clf = GenerativeCountingGridClassifier(extent, window, n_iter=args.n_iter,
                                                   window_schedule=schedule,
                                                   random_state=args.seed,
                                                   num_threads=threads)
        with show_progress(quiet=args.quiet or not args.verbose, verbose=args.verbose):
            clf.fit(X[train], y[train])
        scores.append(float(np.mean(clf.predict(X[test]) == y[test])))
        line = f"fold {k}/{args.folds}: counting grid {scores[-1]:.4f}"
        if MultinomialNB is not None:
            nb = MultinomialNB().fit(X[train], y[train])
            baseline.append(float(np.mean(nb.predict(X[test]) == y[test])))
            line += f", naive Bayes {baseline[-1]:.4f}"
        say(line + f"  ({time.perf_counter() - t0:.1f} s)")
    name = {"embedding": "counting grid (label embedding)",
            "generative": "counting grids (one per class)"}[args.classifier]
    print(f"accuracy {np.mean(scores):.4f} +- {np.std(scores):.4f}: {name} "
          f"{'x'.join(map(str, extent))}, window {'x'.join(map(str, window))}", file=out)
    if baseline:
        print(f"accuracy {np.mean(baseline):.4f} +- {np.std(baseline):.4f}: multinomial naive "
              "Bayes (same folds)", file=out)
    return 0
