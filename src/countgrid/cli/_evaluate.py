"""``countgrid evaluate``: cross-validated accuracy of a counting-grid classifier given a
label column, next to multinomial naive Bayes on the same folds."""
import time
import warnings

import numpy as np

from countgrid.cli._args import UsageError, add_common, positive_int, resolve_threads
from countgrid.cli._inputs import INPUT_HELP, add_input_options, read_documents
from countgrid.cli._models import add_dtype_option, add_grid_options, grid_parameters
from countgrid.cli._progress import show_progress
from countgrid.cli._split import stratified_folds
from countgrid.grid import CountingGridClassifier, GenerativeCountingGridClassifier, regions
from countgrid.maps._data import REGION_CELLS
from countgrid.metrics import completion_perplexity, topic_coherence, topic_top_words
from countgrid.text._readers import _detect

EXAMPLE = """\
examples:
  countgrid evaluate posts.csv --text-col body --label-col group
  countgrid evaluate posts.npz --label-col folder --folds 10 --classifier generative --class-words 5000
"""


NAME = "evaluate"
HELP = "cross-validated accuracy given a label column"
DESCRIPTION = ("Stratified k-fold cross-validation of a counting-grid classifier (label "
               "embedding, paper eq. 9, or one grid per class) on labelled documents, with "
               "multinomial naive Bayes on the same folds as a baseline (scikit-learn).  The "
               "vocabulary is chosen without the labels.  For label embedding each fold's "
               "grid is also scored on its test documents: held-out perplexity by document "
               "completion and the NPMI coherence of its regions' top words.")


def add_arguments(p):
    p.add_argument("input", metavar="INPUT", help=INPUT_HELP)
    p.add_argument("--label-col", required=True,
                   help="metadata column (CSV/TSV column, JSONL field, 'label' of a .npz "
                        "dataset) holding the class of each document")
    p.add_argument("--folds", type=positive_int, default=5, help="folds (default 5)")
    p.add_argument("--classifier", choices=["embedding", "generative"], default="embedding",
                   help="embedding: one grid, labels embedded (default); generative: one "
                        "grid per class")
    p.add_argument("--class-words", type=positive_int, default=None, metavar="K",
                   help="generative: learn the grids on the K words that tell the classes "
                        "apart (largest chi-squared statistic on each training fold; "
                        "default: every word).  Many classes over a large vocabulary need "
                        "it: 55 classes x 38,559 words would take about 20 GB of grids")
    p.add_argument("--no-diagnostics", action="store_true",
                   help="skip the held-out perplexity (document completion) and the NPMI "
                        "coherence of each fold's grid on its test documents (label "
                        "embedding only; docs/diagnostics.md)")
    g = p.add_argument_group("counting grid (the defaults of CountingGridClassifier)")
    add_grid_options(g, CountingGridClassifier)
    add_dtype_option(g)
    add_input_options(p)
    add_common(p)


def _has_columns(args):
    """Whether INPUT is a table (CSV, TSV, JSON Lines) whose label column must be read as
    metadata; folders and pre-vectorised corpora bring their own."""
    try:
        return _detect(args.input, args.format) in ("csv", "tsv", "jsonl")
    except (OSError, ValueError):
        return True                              # read_corpus names the problem


#: Top words per region of the coherence that evaluate reports.
COHERENCE_WORDS = 10


def fold_diagnostics(grid, X_test, seed):
    """``(perplexity, npmi, n_regions)`` of a fold's grid on its test documents: the
    completion perplexity (``None`` when the counts are not integers) and the mean NPMI of
    the top words of about one region per 50 cells, on the test documents as boolean
    documents (topics whose words they never hold left out)."""
    try:
        perplexity = completion_perplexity(grid, X_test, random_state=seed)
    except ValueError:
        perplexity = None                        # not integer counts, or no 2-token document
    n_cells = int(np.prod(np.shape(grid.pi_)[:-1]))
    n_regions = max(2, min(n_cells, round(n_cells / REGION_CELLS[1])))
    top = topic_top_words(grid, COHERENCE_WORDS, regions=regions(grid, n_regions))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # words no test document holds
        npmi = topic_coherence(top, X_test, measure="c_npmi").mean
    return perplexity, npmi, n_regions


def _mean_sd(values):
    v = np.asarray([x for x in values if x is not None and np.isfinite(x)], dtype=np.float64)
    return (float(v.mean()), float(v.std())) if v.size else (float("nan"), float("nan"))


def run(args, out):
    if args.folds < 2:
        raise UsageError("argument --folds: at least 2 folds are needed")
    threads = resolve_threads(args.threads)
    cls = CountingGridClassifier if args.classifier == "embedding" \
        else GenerativeCountingGridClassifier
    if args.class_words is not None and args.classifier != "generative":
        raise UsageError("argument --class-words: only with --classifier generative (label "
                         "embedding learns its one grid without the labels)")
    grid_parameters(args, cls=cls)              # option errors before reading anything
    meta = [c for c in (args.meta_cols or "").split(",") if c.strip()]
    if args.label_col not in meta and _has_columns(args):
        args.meta_cols = ",".join(meta + [args.label_col])
    corpus = read_documents(args, args.input)
    if args.label_col not in corpus.metadata:
        raise UsageError(f"argument --label-col: the documents have no column "
                         f"{args.label_col!r} (they have: "
                         f"{', '.join(corpus.metadata) or 'none'})")
    y = np.asarray(corpus.metadata[args.label_col]).astype(str)
    # classes too small to appear in every fold cannot be cross-validated: left out, said
    classes, counts = np.unique(y, return_counts=True)
    small = counts < args.folds
    if small.any() and (~small).sum() >= 2:
        shown = ", ".join(f"{c} ({n})" for c, n in zip(classes[small][:10], counts[small][:10]))
        more = ", ..." if small.sum() > 10 else ""
        warnings.warn(f"{int(small.sum())} of {len(classes)} classes have fewer documents than "
                      f"--folds {args.folds} and are left out ({int(counts[small].sum())} "
                      f"documents): {shown}{more}", UserWarning, stacklevel=2)
        kept = np.flatnonzero(~np.isin(y, classes[small]))
        corpus, y = corpus.subset(kept), y[kept]
    X = corpus.counts
    n_train = len(corpus) - len(corpus) // args.folds
    generative = args.classifier == "generative"
    params = grid_parameters(args, n_train, corpus.n_terms, cls, n_grids=None if generative
                             else 1)
    if generative:                               # the memory of every class's grid
        params["max_features"] = args.class_words
        try:
            cls(**params)._check_memory(X, y)
        except MemoryError as exc:
            what = str(exc).split(";")[0]
            raise UsageError(f"{what}; keep the words that tell the classes apart "
                             "(--class-words, e.g. 5000), or use a smaller --grid or "
                             "--max-docs") from None
    try:
        folds = stratified_folds(y, args.folds, args.seed)
    except ValueError as exc:
        raise UsageError(f"argument --folds: {exc} (column --label-col {args.label_col!r})") \
            from None
    say = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=out, flush=True))
    classes, counts = np.unique(y, return_counts=True)
    say(f"{len(corpus)} documents x {corpus.n_terms} words, {len(classes)} classes "
        f"({', '.join(f'{c}: {n}' for c, n in zip(classes, counts))}); {args.folds} "
        f"stratified folds (seed {args.seed})")
    try:
        from sklearn.naive_bayes import MultinomialNB
    except ImportError:
        MultinomialNB = None
    per_class = ""
    if generative:
        words = (f", on the {args.class_words} words that tell the classes apart"
                 if args.class_words else "")
        per_class = f" ({len(classes)} grids, one per class{words})"
    scores, baseline, perplexities, coherences, n_regions = [], [], [], [], None
    diagnose = not args.no_diagnostics and not generative
    t0 = time.perf_counter()
    for k, (train, test) in enumerate(folds, 1):
        clf = cls(**params, random_state=args.seed, num_threads=threads)
        say(f"fold {k}/{args.folds}: fitting on {len(train)} documents{per_class}")
        with show_progress(quiet=args.quiet, verbose=args.verbose):
            clf.fit(X[train], y[train])
        scores.append(float(np.mean(clf.predict(X[test]) == y[test])))
        line = f"fold {k}/{args.folds}: counting grid {scores[-1]:.4f}"
        if MultinomialNB is not None:
            nb = MultinomialNB().fit(X[train], y[train])
            baseline.append(float(np.mean(nb.predict(X[test]) == y[test])))
            line += f", naive Bayes {baseline[-1]:.4f}"
        if diagnose:
            ppl, npmi, n_regions = fold_diagnostics(clf.grid_, X[test], args.seed)
            perplexities.append(ppl)
            coherences.append(npmi)
            if ppl is not None:
                line += f", held-out perplexity {ppl:.1f}"
            line += f", NPMI {npmi:.4f}"
        say(line + f"  ({time.perf_counter() - t0:.1f} s)")
    name = {"embedding": "counting grid (label embedding)",
            "generative": "counting grids (one per class"
            + (f", {args.class_words} class words" if args.class_words else "") + ")"
            }[args.classifier]
    grids = [clf.grid_] if hasattr(clf, "grid_") else clf.grids_
    shapes = sorted({np.shape(g.pi_)[:-1] for g in grids}, key=np.prod)
    shape = "x".join(map(str, shapes[0]))
    if len(shapes) > 1:                          # class grids sized to their documents
        shape += " to " + "x".join(map(str, shapes[-1]))
    grid = grids[0]
    sized = " (sized to the documents)" if clf.extent == "auto" else ""
    print(f"accuracy {np.mean(scores):.4f} +- {np.std(scores):.4f}: {name} "
          f"{shape}{sized}, window {'x'.join(map(str, grid.window))}", file=out)
    if baseline:
        print(f"accuracy {np.mean(baseline):.4f} +- {np.std(baseline):.4f}: multinomial naive "
              "Bayes (same folds)", file=out)
    if diagnose:
        if any(p is not None for p in perplexities):
            m, sd = _mean_sd(perplexities)
            print(f"held-out perplexity {m:.1f} +- {sd:.1f}: document completion of the test "
                  "folds (half of each document's tokens predicted from the other half; "
                  "lower is better)", file=out)
        else:
            print("held-out perplexity: not computed (the counts are not integers)", file=out)
        m, sd = _mean_sd(coherences)
        print(f"coherence {m:.4f} +- {sd:.4f}: NPMI of the top {COHERENCE_WORDS} words of "
              f"{n_regions} regions on the test folds (higher is better; "
              "docs/diagnostics.md)", file=out)
        gap = np.mean(baseline) - np.mean(scores)
        if gap > 0.05 and args.classifier == "embedding":
            print(f"note: naive Bayes is {gap:.2f} ahead: label embedding reads "
                  f"{len(classes)} classes out of one map learned without them, which suits "
                  "few documents per class; with tens of documents per class, one grid per "
                  "class classifies better (--classifier generative"
                  + (", with --class-words 5000 for a large vocabulary" if len(classes) > 10
                     else "") + "; docs/choosing.md, 'Many classes')", file=out)
    return 0
