"""Writing the command line's files (CSV/TSV tables, models, pictures) and reporting what
was written.  Every file goes through countgrid._utils.atomic (docs/security.md, "Writing");
every text cell of a table is made safe to open in a spreadsheet."""
import contextlib
import csv
import os
import re
import sys

from countgrid._utils.atomic import atomic_write
from countgrid.cli._args import printable

#: Characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection"):
#: a text cell starting with one of them gets a leading apostrophe (docs/security.md).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|nan)")


def escape_formula(cell):
    """``cell`` safe to open in a spreadsheet: a str starting with ``= + - @``, a tab or a
    carriage return gets a leading ``'``, which spreadsheets show as text; numbers
    (``-0.5`` written as text included) and other text are unchanged."""
    if isinstance(cell, str) and cell.startswith(FORMULA_STARTS) \
            and not _NUMBER.fullmatch(cell):
        return "'" + cell
    return cell


@contextlib.contextmanager
def open_text_output(path):
    """A text file to write (``-``: stdout), written atomically: a failure or Ctrl-C
    leaves the previous file (if any) as it was."""
    if path in (None, "-"):
        yield sys.stdout
        sys.stdout.flush()
        return
    with atomic_write(path, "w", name="--output/-o", newline="") as f:
        yield f


def write_table(path, header, rows, delimiter=",", escape_formulas=True):
    """Write ``rows`` (sequences of str/numbers) under ``header``; with
    ``escape_formulas``, every cell goes through :func:`escape_formula`."""
    def cell(value):
        if escape_formulas:
            value = escape_formula(value)
        if isinstance(value, str) and "\r" in value:
            # Python's csv quotes a field with "\n" but not one with a bare "\r", which
            # readers take for the end of the row
            value = value.replace("\r\n", "\n").replace("\r", "\n")
        return value

    with open_text_output(path) as f:
        writer = csv.writer(f, delimiter=delimiter, lineterminator="\n")
        writer.writerow([cell(c) for c in header])
        writer.writerows([cell(c) for c in row] for row in rows)


def write_file(path, write, mode="wb"):
    """Call ``write(fh)`` on a new temporary file, then move it onto ``path``
    (countgrid._utils.atomic.atomic_write)."""
    with atomic_write(path, mode, name="--output/-o") as fh:
        write(fh)


def wrote(out, path, details=""):
    """The ``wrote PATH (details)`` line, the path safe to print."""
    print(f"wrote {printable(path)}" + (f" ({details})" if details else ""), file=out)


def size_text(path):
    """The size of a file, or of the files in a folder and its subfolders, for people."""
    if os.path.isdir(path):
        n = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path)
                for f in files)
    else:
        n = os.path.getsize(path)
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000.0
