"""The ``countgrid`` command: the parser of every verb, and the error policy.

Errors are one line on stderr: exit status 2 for a bad argument (as argparse), 1 for a
failure while running, 130 for Ctrl-C.  ``--debug`` (or the environment variable
``COUNTGRID_DEBUG=1``) adds the Python traceback of a failure.  docs/cli.md is the user's
page.
"""
import contextlib
import os
import sys
import traceback
import warnings

from countgrid._version import __version__
from countgrid.cli import (_align, _demo, _diagnostics, _evaluate, _fit, _html, _info, _plot,
                           _stability, _top_words, _transform, _vectorize)
from countgrid.cli._args import Parser, UsageError, cli_terms, one_line

#: The verbs in the order ``countgrid --help`` lists them.  Each module says what
#: :func:`build_parser` makes of it: ``NAME``, ``HELP`` (its line in ``countgrid --help``),
#: ``DESCRIPTION`` and ``EXAMPLE`` (the epilog), ``add_arguments(parser)`` and
#: ``run(args, out)``, which returns the exit status.
VERBS = (_vectorize, _fit, _transform, _top_words, _diagnostics, _plot, _html, _evaluate,
         _stability, _align, _demo, _info)

DESCRIPTION = """\
Latent models of count data, from raw text to an interactive map.

  countgrid fit posts/ -o model.npz          # a folder of .txt files -> a counting grid
  countgrid html model.npz -o map.html       # the map: open it in any browser, offline
  countgrid demo                             # the whole workflow on bundled posts

'countgrid COMMAND --help' shows the options and an example of each command.
"""


def build_parser():
    """The argparse parser of the ``countgrid`` command (one sub-parser per verb).

    Returns
    -------
    argparse.ArgumentParser
        The parser of ``countgrid``, with ``--version``, ``--debug`` and one required
        sub-command per verb; each sub-parser sets ``func``, the function that runs it.
    """
    parser = Parser(prog="countgrid", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"countgrid {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the Python traceback of a failure")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for verb in VERBS:
        p = sub.add_parser(verb.NAME, help=verb.HELP, description=verb.DESCRIPTION,
                           epilog=verb.EXAMPLE)
        verb.add_arguments(p)
        p.set_defaults(func=verb.run)
    return parser


@contextlib.contextmanager
def _one_line_warnings(prog):
    """Warnings as ``prog: warning: message`` lines on stderr (no source lines)."""
    def show(message, category, filename, lineno, file=None, line=None):
        print(f"{prog}: warning: {one_line(cli_terms(message))}", file=sys.stderr, flush=True)

    saved = warnings.showwarning
    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = saved


def _describe(exc):
    """One line for a failure: the message, or the kind of failure when there is none."""
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{where}"
    if isinstance(exc, MemoryError):
        return f"out of memory{': ' + one_line(cli_terms(exc)) if str(exc) else ''}"
    text = one_line(cli_terms(exc))
    return text if text else type(exc).__name__


def main(argv=None):
    """Run the ``countgrid`` command.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit status: 0 on success, 1 for a failure while running, 2 for a bad argument
        (argparse errors raise ``SystemExit(2)``), 130 after Ctrl-C.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    prog = f"{parser.prog} {args.command}"
    debug = getattr(args, "debug", False) or os.environ.get("COUNTGRID_DEBUG", "") not in (
        "", "0")
    with _one_line_warnings(prog):
        try:
            return args.func(args, sys.stdout)
        except UsageError as exc:
            print(f"{prog}: error: {one_line(exc)} (see '{prog} --help')", file=sys.stderr)
            return 2
        except BrokenPipeError:                 # e.g. `countgrid top-words m.npz | head`
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return 1
        except KeyboardInterrupt as exc:
            if debug:
                traceback.print_exc()
            # the transactional fit notes where it stopped (countgrid._base)
            where = [one_line(n) for n in getattr(exc, "__notes__", ())]
            detail = f" ({where[0]})" if where else ""
            print(f"\n{prog}: interrupted{detail}; nothing was written", file=sys.stderr)
            return 130
        except Exception as exc:  # noqa: BLE001 - one line, never a traceback (unless --debug)
            if debug:
                traceback.print_exc()
            print(f"{prog}: error: {_describe(exc)}"
                  + ("" if debug else " (--debug shows the traceback)"), file=sys.stderr)
            return 1
