"""Argument types and checks shared by the verbs of the command line.

Every argument and output file is checked before any work starts (docs/cli.md, "Errors"):
an argparse type error or a :class:`UsageError` exits with status 2 and one line naming
the argument.
"""
import argparse
import math
import os
import re
import tempfile
import textwrap
import warnings

from countgrid._utils.atomic import check_target
from countgrid._utils.memory import check_memory
from countgrid._utils.threads import effective_n_threads

MAX_GRID_CELLS = 2 ** 24


class UsageError(Exception):
    """A bad argument found after parsing (exit status 2); the message names it."""


# C0 and C1 control characters (terminal escape sequences start with ESC or CSI) and the
# bidirectional overrides that can make a file name display as another (Trojan Source)
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text):
    """``text`` safe to print on a terminal: control characters, escape sequences and
    bidirectional overrides shown as ``\\x1b``-style escapes (a file name is data)."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"),
                            str(text))


def one_line(text):
    """``text`` on one line (runs of whitespace made one space), safe to print."""
    return printable(" ".join(str(text).split()))


#: The command line's name for each parameter of the Python API that messages of the
#: library may name (a warning that advises ``extent='auto'`` says ``--grid auto`` here).
CLI_FLAGS = {"extent": "--grid", "window": "--window", "n_iter": "--n-iter", "tol": "--tol",
             "n_components": "--n-components", "dtype": "--dtype",
             "text_col": "--text-col", "id_col": "--id-col", "title_col": "--title-col",
             "link_col": "--link-col", "meta_cols": "--meta-cols",
             "text_field": "--text-field", "encoding": "--encoding", "max_docs": "--max-docs",
             "min_df": "--min-df", "max_df": "--max-df", "max_features": "--max-features",
             "stop_words": "--stop-words", "token_pattern": "--token-pattern",
             "lowercase": "--no-lowercase", "num_threads": "--threads",
             "random_state": "--seed", "max_bytes": "--max-bytes", "on_error": "--on-error",
             "estep": "--estep", "subsample": "--subsample"}
# ``name=value`` (quoted, a tuple, or a bare value) and the bare names that are no English
# word (``window``, ``extent``, ``encoding``, ``dtype`` are only translated with a value)
_ASSIGNED = re.compile(r"\b(" + "|".join(CLI_FLAGS) + r")=(?:'([^']*)'|\"([^\"]*)\"|"
                       r"\(([^)]*)\)|([^\s,;)]+))")
_BARE = re.compile(r"(?<![-\w.'\"])(n_iter|tol|n_components|text_col|id_col|title_col|link_col|"
                   r"meta_cols|text_field|max_docs|min_df|max_df|max_features|stop_words|"
                   r"token_pattern|num_threads|random_state|max_bytes)(?![\w=(])")


#: Advice of library messages that only a Python user can follow, dropped on the command line.
_PYTHON_ONLY = (" (drop them with corpus.subset(corpus.counts.getnnz(axis=1) > 0))",)


def cli_terms(text):
    """A library message in the command line's terms: ``n_iter`` becomes ``--n-iter``,
    ``extent='auto'`` becomes ``--grid auto``, ``window=(4, 4)`` becomes ``--window 4x4``;
    advice that needs Python is left out."""
    text = str(text)
    for advice in _PYTHON_ONLY:
        text = text.replace(advice, "")
    def assigned(m):
        flag = CLI_FLAGS[m.group(1)]
        quoted = m.group(2) if m.group(2) is not None else m.group(3)
        if m.group(4) is not None:
            value = "x".join(p.strip() for p in m.group(4).split(",") if p.strip())
        else:
            value = quoted if quoted is not None else m.group(5)
        if flag == "--no-lowercase":
            return flag if value in ("False", "false", "0") else "(lowercase, the default)"
        return f"{flag} {value}"
    return _BARE.sub(lambda m: CLI_FLAGS[m.group(1)], _ASSIGNED.sub(assigned, str(text)))


class _Formatter(argparse.HelpFormatter):
    """Paragraphs are wrapped; indented lines (examples) are kept as written."""

    def _fill_text(self, text, width, indent):
        out = []
        for block in text.split("\n\n"):
            lines = block.splitlines()
            if any(ln.startswith("  ") for ln in lines) or block.rstrip().endswith(":"):
                out.append("\n".join(indent + ln for ln in lines))
            else:
                out.append(textwrap.fill(" ".join(block.split()), width,
                                         initial_indent=indent, subsequent_indent=indent))
        return "\n\n".join(out)


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``countgrid fit: error: ... (see --help)``) and the
    examples of the epilog kept as written."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {one_line(message)} "
                     f"(see '{self.prog} --help')\n")


def _number_type(parse, kind, accept, requirement, name):
    """An argparse ``type``: ``parse(text)`` ("must be {kind}" when it fails), then
    ``accept(value)`` ("{requirement}, got {text}" when it does not hold)."""
    def convert(text):
        try:
            v = parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {kind}, got {text!r}") from None
        if not accept(v):
            raise argparse.ArgumentTypeError(f"{requirement}, got {text}")
        return v

    convert.__name__ = convert.__qualname__ = name
    return convert


integer = _number_type(int, "an integer", lambda v: True, "", "integer")
positive_int = _number_type(int, "an integer", lambda v: v >= 1,
                            "must be a positive integer", "positive_int")
nonnegative_int = _number_type(int, "an integer", lambda v: v >= 0,
                               "must be a non-negative integer", "nonnegative_int")
nonnegative_float = _number_type(float, "a number", lambda v: v >= 0 and math.isfinite(v),
                                 "must be a non-negative number", "nonnegative_float")
fraction = _number_type(float, "a number", lambda v: 0 < v < 1,
                        "must lie strictly between 0 and 1", "fraction")


def threads(text):
    v = integer(text)
    if v == 0:
        raise argparse.ArgumentTypeError("must not be 0 (omit it to use all cores; -1 is all "
                                         "cores too)")
    return v


def count_or_fraction(text):
    """A document-frequency bound: an int (documents) or a float in [0, 1] (a fraction)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a count or a fraction, got {text!r}") \
            from None
    if not (0.0 <= v <= 1.0):
        raise argparse.ArgumentTypeError(f"as a fraction must lie in [0, 1], got {text}")
    return v


def grid_shape_or_auto(text):
    """``auto`` (the grid sized to the documents, ``extent="auto"``) or a shape
    (:func:`grid_shape`)."""
    if text.strip().lower() == "auto":
        return "auto"
    return grid_shape(text)


def grid_shape(text):
    """``32x32`` (or ``32,32``, ``16x16x4``; a single number is one-dimensional only when
    written ``16x`` or ``(16,)``: ``16`` alone means a square ``16x16``)."""
    parts = [p for p in re.split(r"[x×,*]", text.strip().strip("()").lower())]
    if len(parts) == 2 and parts[1] == "":
        parts = parts[:1]                       # "16x": a ring of 16 cells
    elif len(parts) == 1:
        parts = parts * 2                       # "16": a 16x16 grid, as users mean it
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must look like 32x32 (or 16x16x4), got {text!r}") \
            from None
    if any(s < 1 for s in shape):
        raise argparse.ArgumentTypeError(f"sizes must be positive, got {text!r}")
    if math.prod(shape) > MAX_GRID_CELLS:
        raise argparse.ArgumentTypeError(f"{text} has {math.prod(shape)} cells; at most "
                                         f"{MAX_GRID_CELLS} are supported")
    return shape


def check_window(extent, window, name="--window"):
    if len(window) != len(extent):
        if len(window) == 2 and window[0] == window[1] and len(extent) != 2:
            window = (window[0],) * len(extent)
        else:
            raise UsageError(f"argument {name}: window {'x'.join(map(str, window))} and grid "
                             f"{'x'.join(map(str, extent))} must have as many dimensions")
    if any(w > e for w, e in zip(window, extent)):
        raise UsageError(f"argument {name}: window {'x'.join(map(str, window))} is larger "
                         f"than the grid {'x'.join(map(str, extent))}")
    return window


def check_grid_memory(extent, n_words=1, n_docs=1, name="--grid", words_option="--max-features"):
    """Refuse a grid that cannot fit: a few (cells x words) arrays and a block of
    posteriors.  The advice names the options ``name`` and ``words_option`` (None: the
    verb has no vocabulary option)."""
    cells = math.prod(extent)
    fewer = f" or fewer words ({words_option})" if words_option else ""
    try:
        check_memory(8 * cells * (4 * n_words + min(n_docs, 4096)),
                     f"a {'x'.join(map(str, extent))} counting grid over {n_words} words",
                     f"choose a smaller {name}{fewer}")
    except MemoryError as exc:
        raise UsageError(f"argument {name}: {exc}") from None


def resolve_threads(num_threads):
    """The thread count; the cap of countgrid._utils.threads is reported as a warning about
    --threads."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        n = effective_n_threads(num_threads)
    if caught and num_threads is not None:
        warnings.warn(f"--threads {num_threads} is more than is useful here: using {n} "
                      "threads", RuntimeWarning, stacklevel=2)
    return n


def check_input(path, name="INPUT"):
    """An input path that exists (``-`` is stdin)."""
    if path == "-":
        return path
    if not path.strip():
        raise UsageError(f"argument {name}: the path is empty")
    if not os.path.exists(path):
        raise UsageError(f"argument {name}: {path} does not exist")
    if not os.access(path, os.R_OK):
        raise UsageError(f"argument {name}: {path} is not readable")
    return path


def check_output(path, extensions, name="--output/-o", example="out", inputs=()):
    """An output file we can write, with one of ``extensions`` (without dots; None:
    any), that is neither a special file (a FIFO, a device) nor one of ``inputs`` (the
    ``(label, path)`` pairs of :func:`input_paths`).  Checked before any work, without
    opening the file itself (a FIFO would block); the write goes through a temporary file
    in the same folder (countgrid._utils.atomic), so that folder must be writable."""
    if not path.strip():
        raise UsageError(f"argument {name}: the file name is empty")
    if path == "-":
        return path
    if os.path.isdir(path):
        ext = extensions[0] if extensions else "txt"
        raise UsageError(f"argument {name}: {printable(path)} is a folder; give a file name "
                         f"such as {printable(os.path.join(path, example + '.' + ext))}")
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if extensions is not None and ext not in extensions:
        raise UsageError(f"argument {name}: {printable(path)} should end in ."
                         + " or .".join(extensions))
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        what = "is not a folder" if os.path.exists(folder) else "does not exist"
        raise UsageError(f"argument {name}: the folder {printable(folder)} of "
                         f"{printable(path)} {what}")
    try:
        check_target(path, name=f"argument {name}:", inputs=inputs)
    except (ValueError, PermissionError) as exc:
        raise UsageError(str(exc)) from None
    try:
        fd, probe = tempfile.mkstemp(prefix=".countgrid-", suffix=".tmp", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(f"argument {name}: cannot write {printable(path)}: "
                         f"{exc.strerror or exc}") from None
    return path


def input_paths(args):
    """``(label, path)`` of the files a verb reads (its MODEL, INPUT and --vocab), which its
    output may not overwrite."""
    found = []
    for attr, label in (("model", "MODEL"), ("input", "INPUT"), ("vocab", "--vocab")):
        value = getattr(args, attr, None)
        if isinstance(value, str) and value.strip() and value != "-":
            found.append((f"{label} {printable(value)}", value))
    return found


def add_common(parser, threads_option=True, seed=True):
    """-q/-v, --debug (and --threads, --seed) on a verb."""
    group = parser.add_argument_group("general")
    group.add_argument("-q", "--quiet", action="store_true",
                       help="print only errors and the final summary")
    group.add_argument("-v", "--verbose", action="count", default=0,
                       help="print every iteration (repeat for more detail)")
    if threads_option:
        group.add_argument("--threads", type=threads, default=None,
                           help="OpenMP threads (default: all CPUs available; -1: all CPUs)")
    if seed:
        group.add_argument("--seed", type=nonnegative_int, default=0,
                           help="random seed: the same seed gives the same result "
                                "(default: 0)")
    group.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show the Python traceback of a failure")


def add_colouring_options(parser, color_by_help):
    """--color-by (a metadata column; ``color_by_help`` says what it colours) and
    --levels (its levels that get a colour of their own): the map's and the pictures'."""
    parser.add_argument("--color-by", default=None, help=color_by_help)
    parser.add_argument("--levels", default=None,
                        help="comma-separated levels of --color-by that get a colour of their "
                             "own (the rest: 'other'); default: every level up to 50, else "
                             "the 49 most frequent")
