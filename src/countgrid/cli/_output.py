"""Writing tables (CSV/TSV) and reporting what was written."""
import contextlib
import csv
import os
import sys


@contextlib.contextmanager
def open_text_output(path):
    """A text file to write (``-``: stdout), written atomically: a failure or Ctrl-C
    leaves no half-written file."""
    if path in (None, "-"):
        yield sys.stdout
        sys.stdout.flush()
        return
    tmp = f"{path}.countgrid-partial"
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            yield f
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_table(path, header, rows, delimiter=","):
    """Write ``rows`` (sequences of str/numbers) under ``header``."""
    with open_text_output(path) as f:
        writer = csv.writer(f, delimiter=delimiter, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def write_atomically(path, write):
    """Call ``write(tmp_path)`` then move the file into place."""
    root, ext = os.path.splitext(path)
    tmp = f"{root}.countgrid-partial{ext}"
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def size_text(path):
    n = os.path.getsize(path)
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000.0
