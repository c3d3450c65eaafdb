"""Reading the command line's inputs: documents (raw text or pre-vectorised, through
:func:`countgrid.text.read_corpus`) and model files (with the corpus saved beside the
model)."""
import argparse
import os

import numpy as np

from countgrid import io
from countgrid._utils.npz import parse_bytes
from countgrid.cli._args import (UsageError, check_input, count_or_fraction, nonnegative_int,
                                 positive_int)
from countgrid.text import read_corpus

INPUT_HELP = ("documents: a folder of .txt files (one per document, recursive), a .txt file "
              "with one document per line, .csv/.tsv (the column 'text', or --text-col), .jsonl "
              "(with --text-field), - for stdin, or pre-vectorised counts: a corpus .npz "
              "(countgrid vectorize), a scipy .npz, .mtx, a UCI docword.*.txt, a 10x Genomics "
              "folder (matrix.mtx, features.tsv, barcodes.tsv: cells as documents) or an "
              "AnnData .h5ad")


def add_input_options(parser, vectorizer=True):
    group = parser.add_argument_group("input")
    group.add_argument("--format", default="auto",
                       choices=["auto", "folder", "lines", "csv", "tsv", "jsonl", "npz", "mtx",
                                "uci", "10x", "h5ad"],
                       help="input format (default: from the path)")
    group.add_argument("--text-col", help="CSV/TSV column holding the text (default: the "
                                          "column named 'text', if there is one)")
    group.add_argument("--id-col", help="CSV/TSV column (or JSONL field) of document ids")
    group.add_argument("--title-col", help="CSV/TSV column (or JSONL field) of titles")
    group.add_argument("--link-col", help="CSV/TSV column (or JSONL field) of links (URLs)")
    group.add_argument("--meta-cols", default=None,
                       help="comma-separated CSV/TSV columns (or JSONL fields) kept as "
                            "metadata, e.g. to colour the map by")
    group.add_argument("--text-field", default="text", help="JSONL field holding the text "
                                                            "(default: text)")
    group.add_argument("--encoding", default="utf-8", help="text encoding (default: utf-8)")
    group.add_argument("--layer", default=None,
                       help="the layer of raw counts of an .h5ad file (default: 'counts' when "
                            "present, else X; 'raw' reads .raw.X)")
    group.add_argument("--transpose", action="store_true",
                       help="a .mtx file is terms x documents (features x cells, as genomics "
                            "tools write it)")
    group.add_argument("--on-error", choices=["skip", "fail"], default="skip",
                       help="a file of a folder that is not readable text (binary, another "
                            "encoding, unreadable): skip it with one warning listing such "
                            "files (default), or fail at the first")
    group.add_argument("--max-docs", type=positive_int, default=None,
                       help="use a seeded random sample of at most this many documents")
    if vectorizer:
        vec = parser.add_argument_group("vocabulary (raw text only; scikit-learn's "
                                        "CountVectorizer)")
        vec.add_argument("--min-df", type=count_or_fraction, default=2,
                         help="drop words in fewer documents (count, or fraction; default 2)")
        vec.add_argument("--max-df", type=count_or_fraction, default=0.5,
                         help="drop words in more documents (fraction, or count; default 0.5)")
        vec.add_argument("--max-features", type=nonnegative_int, default=None,
                         help="keep at most this many words, the most frequent "
                              "(default: all; 0 means all)")
        vec.add_argument("--stop-words", default="english",
                         help="'english' (default) or 'none'")
        vec.add_argument("--no-lowercase", action="store_true",
                         help="keep the case of words")
        vec.add_argument("--token-pattern", default=None,
                         help="regular expression of a token (default: scikit-learn's, words "
                              "of 2+ letters or digits)")


def _reader_options(args):
    meta = None
    if args.meta_cols:
        meta = [c.strip() for c in args.meta_cols.split(",") if c.strip()]
    options = dict(format=args.format, text_col=args.text_col, id_col=args.id_col,
                   title_col=args.title_col, link_col=args.link_col, meta_cols=meta,
                   text_field=args.text_field, encoding=args.encoding,
                   on_error=args.on_error, transpose=args.transpose, layer=args.layer)
    if hasattr(args, "min_df"):
        stop = None if str(args.stop_words).lower() in ("none", "") else args.stop_words
        options.update(min_df=args.min_df, max_df=args.max_df,
                       max_features=args.max_features or None, stop_words=stop,
                       lowercase=not args.no_lowercase, token_pattern=args.token_pattern)
    return options


def read_documents(args, path, vocabulary=None, name="INPUT"):
    """The Corpus of ``path`` (raw text is vectorised; with ``vocabulary``, onto it)."""
    check_input(path, name)
    options = _reader_options(args)
    if vocabulary is not None:
        options["vocabulary"] = vocabulary
        for key in ("min_df", "max_df", "max_features"):
            options.pop(key, None)
    # the sample is drawn before the vocabulary is built (read_corpus, max_docs)
    return read_corpus(path, **options, max_docs=getattr(args, "max_docs", None),
                       random_state=getattr(args, "seed", 0))


def add_load_options(parser, table=False):
    """--max-bytes (verbs that read a model file) and, for verbs that write a table,
    --no-escape-formulas."""
    group = parser.add_argument_group("files")
    group.add_argument("--max-bytes", type=byte_size, default=None,
                       help="the most bytes of arrays a model file may hold, decompressed "
                            "(default: COUNTGRID_MAX_LOAD_BYTES, else 2G); raise it for "
                            "larger models you expect")
    if table:
        group.add_argument("--no-escape-formulas", action="store_true",
                           help="write text cells as they are, even those a spreadsheet "
                                "would run as a formula (=, +, -, @, tab, CR first; by "
                                "default they get a leading ')")


def byte_size(text):
    """An argparse type: a number of bytes with an optional K/M/G/T suffix."""
    try:
        return parse_bytes(text, "--max-bytes")
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def load_model(path, name="MODEL", max_bytes=None):
    """(estimator, corpus or None) of a model file written by ``countgrid fit``.

    Arrays the file derives (a counting grid's ``h_``) are derived only if read whole:
    the verbs read what they need of them from ``pi_`` (peak memory about pi_, one
    table of log h_ and the corpus; docs/cli.md)."""
    check_input(path, name)
    if os.path.isdir(path):
        raise UsageError(f"argument {name}: {path} is a folder, not a model file")
    return io._load(path, return_corpus=True, max_bytes=max_bytes,   # one read for both
                    defer_derived=True)


def model_vocabulary(est, corpus, args, name="--vocab"):
    """The vocabulary of a model: its saved corpus's, else a ``--vocab`` file (one word per
    line), else w0, w1, ..."""
    n = getattr(est, "n_features_in_", None)
    vocab_file = getattr(args, "vocab", None)
    if vocab_file:
        check_input(vocab_file, name)
        try:
            with open(vocab_file, encoding="utf-8") as f:
                words = np.array([ln.strip() for ln in f if ln.strip()])
        except UnicodeDecodeError as exc:
            raise UsageError(f"argument {name}: {vocab_file} is not UTF-8 text (byte "
                             f"{exc.start}: {exc.reason}); a vocabulary file holds one word "
                             "per line") from None
        except IsADirectoryError:
            raise UsageError(f"argument {name}: {vocab_file} is a folder, not a vocabulary "
                             "file") from None
        if n is not None and len(words) != n:
            raise UsageError(f"argument {name}: {vocab_file} has {len(words)} words, the "
                             f"model {n}")
        return words
    if corpus is not None:
        return np.asarray(corpus.vocabulary)
    return np.array([f"w{j}" for j in range(n or 0)])
