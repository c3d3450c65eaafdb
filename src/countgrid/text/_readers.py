"""Readers: raw text and pre-vectorised counts from files into a :class:`Corpus`.

Raw text (a folder of ``.txt`` files, one document per line, CSV/TSV, JSONL, stdin) is
read once, as a stream, straight into scikit-learn's ``CountVectorizer``: only the
snippets, titles, ids and metadata are kept next to the counts.  Pre-vectorised input
(``.npz``, MatrixMarket, UCI bag-of-words) is read as stored.  Every problem of the input
is a ValueError (or OSError) naming the file and, for row-level problems, the line.
docs/text.md is the user's page.
"""
import codecs
import csv
import gzip
import io
import json
import math
import numbers
import os
import sys
import warnings

import numpy as np
import scipy.sparse as sp

from countgrid._utils.memory import check_memory
from countgrid._utils.param_validation import validate_call_params
from countgrid._utils.validation import check_random_state
from countgrid._utils.npz import open_archive, open_regular
from countgrid.datasets import load_npz_corpus
from countgrid.text._corpus import (_TEXT_OPTIONS, HEADER_KEY, Corpus, _build, _check_options,
                                    _from_dict, _load_npz, _warn_empty, counts_corpus,
                                    snippet_of, title_of, warn)

from countgrid.text._cells import is_10x_folder, mmread_checked, read_10x, read_h5ad

__all__ = ["read_corpus", "read_documents", "FORMATS"]

#: Formats of raw text, then of pre-vectorised counts.
TEXT_FORMATS = ("folder", "lines", "csv", "tsv", "jsonl")
COUNT_FORMATS = ("npz", "mtx", "uci", "10x", "h5ad")
FORMATS = TEXT_FORMATS + COUNT_FORMATS
_MISSING = {"", "na", "n/a", "nan", "null", "none"}


# ------------------------------------------------------------------------------ detection
def _name_of(path):
    return "<stdin>" if path == "-" else os.fsdecode(path)


def _detect(path, fmt):
    """The format of ``path`` (``fmt`` when it is not "auto")."""
    if path == "-":
        if fmt == "auto":
            return "lines"
        if fmt not in TEXT_FORMATS or fmt == "folder":
            raise ValueError(f"format={fmt!r} cannot be read from stdin; stdin takes "
                             "'lines', 'csv', 'tsv' or 'jsonl'")
        return fmt
    name = _name_of(path)
    if not name:
        raise ValueError("path is empty: give a file or folder name, or '-' for stdin")
    if not os.path.exists(name):
        raise FileNotFoundError(f"no such file or folder: {name}")
    if os.path.isdir(name):
        if fmt == "10x" or (fmt == "auto" and is_10x_folder(name)):
            return "10x"
        if fmt not in ("auto", "folder"):
            raise ValueError(f"{name} is a folder; format={fmt!r} reads a file "
                             "(format='folder' or 'auto' reads a folder of .txt files, "
                             "'10x' a 10x Genomics matrix folder)")
        return "folder"
    if fmt in ("folder", "10x"):
        raise ValueError(f"format={fmt!r} needs a folder, and {name} is a file")
    if fmt != "auto":
        return fmt
    base = os.path.basename(name).lower()
    stem = base[:-3] if base.endswith(".gz") else base
    if base.startswith("docword.") and stem.endswith(".txt"):
        return "uci"
    ext = os.path.splitext(stem)[1]
    found = {".txt": "lines", ".text": "lines", ".csv": "csv", ".tsv": "tsv",
             ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".npz": "npz",
             ".mtx": "mtx", ".h5ad": "h5ad"}.get(ext)
    if found is None:
        hint = " (a .json file holding one object per line is JSON Lines: format='jsonl')" \
            if ext == ".json" else ""
        raise ValueError(f"cannot tell the format of {name} from its name{hint}; pass "
                         f"format= one of {', '.join(FORMATS)}")
    return found


def _open_binary(path):
    if path == "-":
        if sys.stdin is None:
            raise OSError("there is no standard input to read from")
        return sys.stdin.buffer, False
    name = _name_of(path)
    if name.lower().endswith(".gz"):
        return gzip.open(name, "rb"), True
    return open(name, "rb"), True


def _check_encoding(encoding):
    if not isinstance(encoding, str):
        raise TypeError(f"encoding must be a str, got {type(encoding).__name__}")
    try:
        info = codecs.lookup(encoding)
    except LookupError:
        raise ValueError(f"unknown encoding {encoding!r}") from None
    if not getattr(info, "_is_text_encoding", True):
        # rot13, base64, zlib, ...: codecs between str and str or bytes and bytes
        raise ValueError(f"encoding {encoding!r} is not a text encoding (bytes to str); "
                         "pass the encoding of the files, e.g. 'utf-8' or 'latin-1'")
    if info.name == "utf-8-sig":       # the BOM is dropped anyway
        return "utf-8", True
    ascii_lines = "\n".encode(info.name, "ignore") == b"\n" and \
        'A,\t"'.encode(info.name, "ignore") == b'A,\t"'
    return info.name, ascii_lines


def _decode_error(label, encoding, exc, offset, line):
    bad = exc.object[exc.start:exc.start + 4]
    return ValueError(f"{label}, line {line}: bytes {bad!r} at byte offset {offset} are not "
                      f"valid {encoding}; pass the file's encoding, e.g. encoding='latin-1' "
                      "or encoding='cp1252'")


def _lines(fh, label, encoding, ascii_lines):
    """(line number, decoded line with its end of line) of a binary file; undecodable
    bytes are a ValueError naming the file, the line and the byte offset."""
    if not ascii_lines:      # UTF-16/32: \n is not one byte, decode as a text stream
        text = io.TextIOWrapper(fh, encoding=encoding, newline="")
        number = 0
        try:
            for number, line in enumerate(text, 1):
                if number == 1 and line.startswith("\ufeff"):
                    line = line[1:]
                yield number, line
        except UnicodeDecodeError as exc:
            raise ValueError(f"{label}, near line {number + 1}: bytes that are not valid "
                             f"{encoding} ({exc.reason}); pass the file's encoding") from None
        finally:
            text.detach()
        return
    offset = 0
    try:
        for number, raw in enumerate(fh, 1):
            try:
                line = raw.decode(encoding)
            except UnicodeDecodeError as exc:
                raise _decode_error(label, encoding, exc, offset + exc.start, number) from None
            if number == 1 and line.startswith("\ufeff"):
                line = line[1:]
            offset += len(raw)
            yield number, line
    except (OSError, EOFError) as exc:
        if isinstance(exc, (FileNotFoundError, PermissionError)):
            raise
        raise ValueError(f"{label} cannot be read past byte {offset}: {exc}") from None


# ------------------------------------------------------------------------------ records
class _Fields:
    """Ids, titles (None: the text's first line), links and metadata collected while the
    texts stream."""

    def __init__(self, meta_names=(), with_links=False):
        self.ids, self.titles = [], []
        self.links = [] if with_links else None
        self.meta = {name: [] for name in meta_names}
        self.seen = {}

    def add(self, label, where, doc_id, title, link=None, meta=()):
        previous = self.seen.get(doc_id)
        if previous is not None:
            raise ValueError(f"{label}, {where}: the id {doc_id!r} repeats that of "
                             f"{previous}; ids must be unique")
        self.seen[doc_id] = where
        self.ids.append(doc_id)
        self.titles.append(title)
        if self.links is not None:
            self.links.append(link)
        for column, value in zip(self.meta.values(), meta):
            column.append(value)


#: Bytes looked at to tell a binary file from text: a NUL byte among them (as git does).
_BINARY_PROBE = 8192


def _folder_records(root, label, encoding, extensions, fields, on_error="skip",
                    ascii_lines=True):
    paths, others = [], []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for f in filenames:
            if f.startswith("."):
                continue
            ext = os.path.splitext(f)[1].lower()
            (paths if ext in extensions else others).append(os.path.join(dirpath, f))
    if not paths:
        shown = ", ".join(sorted(os.path.relpath(p, root) for p in others)[:5])
        hint = ""
        if any(not os.path.splitext(p)[1] for p in others):
            hint = "; files without an extension are read with extensions=('.txt', '')"
        kinds = " or ".join(e or "extension-less" for e in extensions)
        more = ", ..." if len(others) > 5 else ""
        found = (f" ({len(others)} other files: {shown}{more}{hint})" if others
                 else " (it is empty)")
        raise ValueError(f"{label} holds no {kinds} file{found}")
    rel = sorted((os.path.relpath(p, root).replace(os.sep, "/"), p) for p in paths)
    folders = {os.path.dirname(r) for r, _ in rel}
    if len(folders) > 1:
        fields.meta["folder"] = []
    skipped = []
    for rel_path, full in rel:
        text, why = _read_text_file(full, encoding, on_error, ascii_lines)
        if text is None:
            skipped.append((rel_path, why))
            continue
        if text.startswith("\ufeff"):
            text = text[1:]
        stem = os.path.splitext(os.path.basename(rel_path))[0]
        fields.add(label, rel_path, rel_path, stem, meta=(os.path.dirname(rel_path),)
                   if len(folders) > 1 else ())
        yield text
    if skipped:
        _warn_skipped(label, skipped, len(rel), encoding)


def _read_text_file(path, encoding, on_error, ascii_lines):
    """(text, None) of one file of a folder, or (None, why) for a file that is not readable
    text when ``on_error="skip"`` (``"fail"`` raises: OSError, or ValueError naming the
    file)."""
    try:
        # a FIFO or a device in the folder would block the read forever
        with open_regular(path, repr(path), "text file") as fh:
            raw = fh.read()
    except ValueError:
        if on_error == "fail":
            raise
        return None, "not a regular file"
    except OSError as exc:
        if on_error == "fail":
            raise
        return None, (exc.strerror or type(exc).__name__).lower()
    if ascii_lines and b"\x00" in raw[:_BINARY_PROBE]:
        if on_error == "fail":
            raise ValueError(f"{path} is a binary file, not text (it holds NUL bytes); remove "
                             "it, or pass on_error='skip' to skip such files")
        return None, "binary"
    try:
        return raw.decode(encoding), None
    except UnicodeDecodeError as exc:
        if on_error == "fail":
            line = raw.count(b"\n", 0, exc.start) + 1
            raise _decode_error(path, encoding, exc, exc.start, line) from None
        return None, f"not {encoding}"


def _warn_skipped(label, skipped, total, encoding):
    shown = ", ".join(f"{p} ({why})" for p, why in skipped[:5])
    more = f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
    hint = ("; if they are text in another encoding, pass it (encoding='latin-1'...)"
            if any(why == f"not {encoding}" for _, why in skipped) else "")
    warn(f"skipped {len(skipped)} of the {total} files of {label} that are not readable "
         f"text: {shown}{more}{hint}; on_error='fail' stops at the first instead")
    if len(skipped) == total:
        raise ValueError(f"{label}: none of its {total} files is readable text ({shown}{more})"
                         f"{hint}")


def _line_records(lines, label, fields):
    for number, line in lines:
        text = line.rstrip("\r\n")
        if not text.strip():
            continue
        fields.add(label, f"line {number}", f"line {number}", None)
        yield text


def _resolve_column(name, columns, label, what, where="column"):
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a column name (str), got {name!r}")
    if name in columns:
        if columns.count(name) > 1:
            raise ValueError(f"{label}: the {where} {name!r} ({what}) appears "
                             f"{columns.count(name)} times in the header")
        return columns.index(name)
    close = [i for i, c in enumerate(columns) if c.strip().lower() == name.strip().lower()]
    if len(close) == 1:
        return close[0]
    raise ValueError(f"{label} has no {where} {name!r} ({what}); its {where}s are: "
                     f"{', '.join(map(repr, columns))}")


def _meta_list(meta_cols):
    if meta_cols is None:
        return []
    if isinstance(meta_cols, str):
        return [c.strip() for c in meta_cols.split(",") if c.strip()]
    if not hasattr(meta_cols, "__iter__"):
        raise TypeError(f"meta_cols must be a list of column names or a comma-separated "
                        f"str, got {meta_cols!r}")
    cols = list(meta_cols)
    for c in cols:
        if not isinstance(c, str):
            raise TypeError(f"meta_cols must hold column names (str), got {c!r}")
    return cols


def _csv_records(lines, label, delimiter, text_col, id_col, title_col, link_col, meta_cols,
                 fields_box):
    previous = csv.field_size_limit()
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    # strict: an unbalanced quote is an error, not the rest of the file swallowed in a field
    reader = csv.reader((line for _, line in lines), delimiter=delimiter, strict=True)
    hint = ("; a field that starts with a quote must end with one, and quotes inside it are "
            "doubled")
    try:
        try:
            header = next((row for row in reader if row), None)
        except csv.Error as exc:
            raise ValueError(f"{label}, line {reader.line_num}: {exc}{hint}") from None
        if header is None:
            raise ValueError(f"{label} is empty: no header row, no documents")
        kind = "TSV" if delimiter == "\t" else "CSV"
        if text_col is None:
            # as JSON Lines' text_field: a column named "text" is the text (only one such)
            named = [c for c in header if c.strip().lower() == "text"]
            if len(named) != 1:
                raise ValueError(f"text_col is required for a {kind} file without a single "
                                 f"column named 'text': name the column holding the text; "
                                 f"the columns of {label} are: "
                                 f"{', '.join(map(repr, header))}")
            text_col = named[0]
        t = _resolve_column(text_col, header, label, "text_col")
        i = None if id_col is None else _resolve_column(id_col, header, label, "id_col")
        h = None if title_col is None else _resolve_column(title_col, header, label,
                                                           "title_col")
        k = None if link_col is None else _resolve_column(link_col, header, label, "link_col")
        names = _meta_list(meta_cols)
        m = [_resolve_column(c, header, label, "meta_cols") for c in names]
        fields = _Fields(names, k is not None)
        fields_box.append(fields)
        row_number = 0
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                raise ValueError(f"{label}, line {reader.line_num}: {exc}{hint}") from None
            if not row:
                continue
            row_number += 1
            if len(row) != len(header):
                raise ValueError(f"{label}, line {reader.line_num}: {len(row)} fields, but "
                                 f"the header has {len(header)} columns (a {kind} file needs"
                                 " the same number in every row; quote fields holding "
                                 f"{'tabs' if delimiter == chr(9) else 'commas'})")
            where = f"line {reader.line_num}"
            doc_id = f"row {row_number}" if i is None else row[i]
            fields.add(label, where, doc_id, None if h is None else row[h],
                       None if k is None else row[k], [row[j] for j in m])
            yield row[t]
    finally:
        csv.field_size_limit(previous)


def _json_value(obj, key, label, number, what, scalar_ok=True):
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        raise ValueError(f"{label}, line {number}: the field {key!r} ({what}) holds a "
                         f"{'list' if isinstance(value, list) else 'object'}, not a string")
    if not scalar_ok:
        raise ValueError(f"{label}, line {number}: the field {key!r} ({what}) holds "
                         f"{type(value).__name__} {value!r}, not a string")
    return value


def _jsonl_records(lines, label, text_field, id_col, title_col, link_col, meta_cols,
                   fields_box):
    for name, what in ((text_field, "text_field"), (id_col, "id_col"),
                       (title_col, "title_col"), (link_col, "link_col")):
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{what} must be a field name (str), got {name!r}")
    names = _meta_list(meta_cols)
    fields = _Fields(names, link_col is not None)
    fields_box.append(fields)
    for number, line in lines:
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{label}, line {number}: not valid JSON ({exc.msg}, column "
                             f"{exc.colno})") from None
        except RecursionError:
            raise ValueError(f"{label}, line {number}: JSON nested too deeply") from None
        if not isinstance(obj, dict):
            raise ValueError(f"{label}, line {number}: a JSON Lines corpus holds one object "
                             f"per line, got {type(obj).__name__}")
        if text_field not in obj:
            raise ValueError(f"{label}, line {number}: no field {text_field!r} (text_field);"
                             f" the fields of this line are: {', '.join(map(repr, obj))}")
        text = _json_value(obj, text_field, label, number, "text_field", scalar_ok=False)
        where = f"line {number}"
        if id_col is not None:
            if id_col not in obj or obj[id_col] is None:
                raise ValueError(f"{label}, line {number}: no value for the id field "
                                 f"{id_col!r}; the fields of this line are: "
                                 f"{', '.join(map(repr, obj))}")
            doc_id = _json_value(obj, id_col, label, number, "id_col")
            doc_id = doc_id if isinstance(doc_id, str) else json.dumps(doc_id)
        else:
            doc_id = where
        title = None if title_col is None else _json_value(obj, title_col, label, number,
                                                           "title_col")
        link = None if link_col is None else _json_value(obj, link_col, label, number,
                                                         "link_col")
        meta = [_json_value(obj, c, label, number, "meta_cols") for c in names]
        fields.add(label, where, doc_id, None if title is None else str(title),
                   "" if link is None else str(link), meta)
        yield "" if text is None else text


def _column(values, name):
    """A metadata column read from text: numbers when every present value is one (missing
    ones NaN), else str."""
    present = [v for v in values if not (v is None or (isinstance(v, str)
                                                       and v.strip().lower() in _MISSING))]
    if present and all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                       for v in present):
        try:
            return [math.nan if v is None or isinstance(v, str) else float(v)
                    for v in values]
        except OverflowError:           # a JSON integer beyond the float range
            big = next(v for v in present if not -1e308 < v < 1e308)
            raise ValueError(f"meta_cols: the field {name!r} holds a number beyond the float "
                             f"range ({str(big)[:20]}...); scale it or quote it as a "
                             "string") from None
    if present and all(isinstance(v, str) for v in present):
        try:
            converted = {v: float(v) for v in set(present)}
        except ValueError:
            converted = None
        if converted is not None:
            return [converted.get(v, math.nan) for v in values]
    return ["" if v is None else (json.dumps(v) if isinstance(v, bool) else str(v))
            for v in values]


def _check_on_error(on_error):
    if on_error not in ("skip", "fail"):
        raise (TypeError if not isinstance(on_error, str) else ValueError)(
            f"on_error must be 'skip' or 'fail', got {on_error!r}")
    return on_error


def _texts_and_fields(path, fmt, *, label, text_col, id_col, title_col, link_col, meta_cols,
                      text_field, encoding, extensions, on_error="skip"):
    """(stream of texts, list that will hold the _Fields once the stream has started)."""
    enc, ascii_lines = _check_encoding(encoding)
    on_error = _check_on_error(on_error)
    if fmt not in TEXT_FORMATS and fmt not in COUNT_FORMATS:
        raise ValueError(f"format must be 'auto' or one of {', '.join(FORMATS)}, got {fmt!r}")
    table = fmt in ("csv", "tsv", "jsonl")
    for value, what in ((text_col, "text_col"), (id_col, "id_col"), (title_col, "title_col"),
                        (link_col, "link_col"), (meta_cols, "meta_cols")):
        if value is not None and not table:
            raise ValueError(f"{what} applies to CSV, TSV and JSONL input, not to "
                             f"{label} (format {fmt!r})")
    box = []
    if fmt == "folder":
        exts = _extensions(extensions)
        fields = _Fields()
        box.append(fields)
        return _folder_records(_name_of(label), label, enc, exts, fields, on_error,
                               ascii_lines), box

    def stream():
        fh, owned = _open_binary(label if label != "<stdin>" else "-")
        try:
            lines = _lines(fh, label, enc, ascii_lines)
            if fmt == "lines":
                fields = _Fields()
                box.append(fields)
                records = _line_records(lines, label, fields)
            elif fmt in ("csv", "tsv"):
                records = _csv_records(lines, label, "," if fmt == "csv" else "\t", text_col,
                                       id_col, title_col, link_col, meta_cols, box)
            else:
                field = text_field if text_col is None else text_col
                if not isinstance(field, str):
                    raise TypeError(f"text_field must be a str, got {field!r}")
                records = _jsonl_records(lines, label, field, id_col, title_col,
                                         link_col, meta_cols, box)
            n = 0
            for text in records:
                n += 1
                yield text
            if n == 0:
                raise ValueError(f"{label} holds no document")
        finally:
            if owned:
                fh.close()

    return stream(), box


def _extensions(extensions):
    if isinstance(extensions, str):
        extensions = (extensions,)
    try:
        exts = tuple(extensions)
    except TypeError:
        raise TypeError(f"extensions must be a sequence of file name endings such as "
                        f"('.txt',), got {extensions!r}") from None
    if not exts or not all(isinstance(e, str) for e in exts):
        raise TypeError(f"extensions must be a non-empty sequence of str, got {extensions!r}")
    return tuple(e.lower() if not e or e.startswith(".") else "." + e.lower() for e in exts)


# ------------------------------------------------------------------------------- public
def read_documents(path, *, format="auto", text_col=None, id_col=None, title_col=None,
                   link_col=None, meta_cols=None, text_field="text", encoding="utf-8",
                   extensions=(".txt",), on_error="skip"):
    """Read raw documents and their fields, before vectorising.

    The same inputs as :func:`read_corpus` for raw text (``"folder"``, ``"lines"``,
    ``"csv"``, ``"tsv"``, ``"jsonl"``, stdin); the result feeds
    :meth:`Corpus.from_texts` (``Corpus.from_texts(d["texts"], ids=d["ids"], ...)``
    gives what ``read_corpus`` gives).

    Parameters
    ----------
    path, format, text_col, id_col, title_col, link_col, meta_cols, text_field, encoding, \
extensions, on_error
        As in :func:`read_corpus`.

    Returns
    -------
    dict
        ``"texts"``, ``"ids"``, ``"titles"`` (lists of str), ``"links"`` (list of str or
        None), ``"metadata"`` (dict of name to list of float or of str, a missing number
        being NaN) and ``"source"`` (str).

    Raises
    ------
    ValueError
        For pre-vectorised input (use :func:`read_corpus`) and for every problem of the
        input (the message names the file and the line).
    OSError
        If the file cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> from countgrid.text import read_documents
    >>> path = os.path.join(tempfile.mkdtemp(), "posts.csv")
    >>> with open(path, "w", encoding="utf-8") as f:
    ...     _ = f.write('id,body,year\\np1,"Hello, world",2001\\np2,Second post,\\n')
    >>> d = read_documents(path, text_col="body", id_col="id", meta_cols=["year"])
    >>> d["texts"], d["ids"], d["metadata"]
    (['Hello, world', 'Second post'], ['p1', 'p2'], {'year': [2001.0, nan]})
    """
    _check_path(path)
    fmt = _detect(path, format) if isinstance(format, str) else format
    if not isinstance(fmt, str):
        raise TypeError(f"format must be a str, got {format!r}")
    label = _name_of(path)
    if fmt in COUNT_FORMATS:
        raise ValueError(f"{label} holds pre-vectorised counts (format {fmt!r}), not texts:"
                         " read it with countgrid.text.read_corpus")
    stream, box = _texts_and_fields(path, fmt, label=label, text_col=text_col,
                                    id_col=id_col, title_col=title_col, link_col=link_col,
                                    meta_cols=meta_cols, text_field=text_field,
                                    encoding=encoding, extensions=extensions,
                                    on_error=on_error)
    texts = list(stream)
    fields = box[0]
    return {"texts": texts, "ids": fields.ids,
            "titles": [title_of(t) if h is None else h for t, h in zip(texts, fields.titles)],
            "links": fields.links,
            "metadata": {k: _column(v, k) for k, v in fields.meta.items()},
            "source": label}


@validate_call_params({k: v for k, v in _TEXT_OPTIONS.items() if k != "source"})
def read_corpus(path, *, format="auto", text_col=None, id_col=None, title_col=None,
                link_col=None, meta_cols=None, text_field="text", encoding="utf-8",
                vocab=None, extensions=(".txt",), lowercase=True, stop_words="english",
                min_df=2, max_df=0.5, max_features=None, token_pattern=None,
                vocabulary=None, on_error="skip", max_docs=None, random_state=None,
                transpose=False, layer=None):
    """Read a corpus from a folder, a text, CSV, TSV or JSONL file, stdin or counts.

    Formats (``format="auto"`` tells them from the path):

    ============  ========================================================================
    ``folder``    a folder: every ``.txt`` file below it (recursively, hidden files and
                  folders skipped, sorted by path) is a document; id = path relative to
                  the folder (with ``/``), title = file name without extension; when the
                  files lie in several folders, metadata ``"folder"`` = their folder
    ``lines``     ``.txt`` file or ``-`` (stdin): one document per line, blank lines
                  skipped; id = ``"line N"`` (N counts every line), title = the line
    ``csv/tsv``   ``.csv``, ``.tsv``: a header row, then one document per row;
                  ``text_col`` (default: the column named "text"); id = ``id_col`` or
                  ``"row N"``, title =
                  ``title_col`` or the first line of the text
    ``jsonl``     ``.jsonl``, ``.ndjson``: one JSON object per line, the text in
                  ``text_field``; ``id_col`` etc. name fields; id default ``"line N"``
    ``npz``       a saved :class:`Corpus` (read exactly), or a ``scipy.sparse.save_npz``
                  matrix with optional ``feature_names`` (else terms ``w0``, ``w1``, ...),
                  ``y`` + ``label_names`` (metadata ``"label"``), ``split`` +
                  ``split_names`` (metadata ``"split"``), ``texts_utf8`` +
                  ``texts_offsets`` (snippets and titles) and ``sample_ids`` (ids)
    ``mtx``       ``.mtx`` MatrixMarket, documents x terms, terms from ``vocab=`` (a file
                  with one term per line) or ``w0``, ``w1``, ...; terms x documents with
                  ``transpose=True``
    ``uci``       ``docword.NAME.txt(.gz)`` of the UCI bag-of-words format (three header
                  lines D, W, NNZ then ``docID wordID count``, 1-based) with
                  ``vocab.NAME.txt`` next to it (or ``vocab=``); id = the docID
    ``10x``       a 10x Genomics folder (``matrix.mtx``, ``features.tsv`` or
                  ``genes.tsv``, ``barcodes.tsv``, gzipped or not): cells are documents,
                  features terms (:func:`countgrid.text.read_10x`)
    ``h5ad``      an AnnData ``.h5ad`` file, read backed a block of cells at a time:
                  ``layers["counts"]`` or ``X``, ``obs`` as metadata
                  (:func:`countgrid.text.read_h5ad`; the ``anndata`` extra)
    ============  ========================================================================

    Files ending in ``.gz`` are decompressed.  Ids must be unique.  Documents left
    without a word are kept and reported by one warning.  Pre-vectorised documents get
    their most frequent words as snippet when the file has no texts.

    Parameters
    ----------
    path : str or path-like
        The file or folder, or ``"-"`` for the standard input.
    format : str, default="auto"
        One of "auto", "folder", "lines", "csv", "tsv", "jsonl", "npz", "mtx", "uci",
        "10x", "h5ad".
    text_col, id_col, title_col, link_col : str, optional
        Column (CSV/TSV) or field (JSONL) names.  ``text_col`` defaults to the one column
        named "text" (any case) of a CSV/TSV file, and is required when there is none.
    meta_cols : list of str or str, optional
        Metadata columns/fields (a str: comma-separated names).  A column whose values
        are all numbers (empty, ``NA``, ``nan``, ``null`` being missing) becomes a float
        array with NaN for the missing ones; any other becomes str (categorical).
    text_field : str, default="text"
        The field of the text in JSONL (``text_col`` is accepted too).
    encoding : str, default="utf-8"
        Of the text files (a UTF-8 byte order mark is dropped).
    vocab : str or path-like, optional
        The vocabulary file (one term per line) of ``mtx`` or ``uci`` input.
    extensions : sequence of str, default=(".txt",)
        File name endings read from a folder (``""``: files without an extension).
    max_docs : int, optional
        Keep a seeded random sample of at most this many documents, drawn *before* the
        vocabulary is built (raw text: one pass, a reservoir sample in document order),
        so that ``min_df``/``max_df``/``max_features`` describe the sample and the model
        stays the size of the sample; pre-vectorised counts keep their vocabulary.
    random_state : None, int or numpy.random.Generator
        Seed of that sample.
    transpose : bool, default=False
        MatrixMarket only: the file is terms x documents (features x cells, as
        genomics tools write it); ``vocab=`` then lists its rows.
    layer : str, optional
        ``.h5ad`` only: the layer of raw counts (default ``"counts"`` when present, else
        ``X``; ``"raw"`` reads ``.raw.X``; :func:`countgrid.text.read_h5ad`).
    on_error : {"skip", "fail"}, default="skip"
        A file of a folder that is not readable text: a binary file (a NUL byte in its
        first 8 KiB, as git tells), one that is not valid in ``encoding``, or one that
        cannot be opened.  ``"skip"`` leaves such files out with one warning that lists
        them and counts them (all of them skipped is a ValueError); ``"fail"`` stops at
        the first (a ValueError naming the file, or the OSError).
    lowercase, stop_words, min_df, max_df, max_features, token_pattern
        Vectorising options of :meth:`Corpus.from_texts`, for raw text only:
        pre-vectorised counts are read as stored.
    vocabulary : sequence of str, optional
        A fixed vocabulary (e.g. a model's).  Raw text is counted over it; the columns
        of pre-vectorised counts are mapped onto it by term (terms it lacks are dropped,
        its terms missing from the file are zero columns).

    Returns
    -------
    Corpus
        The documents' counts over the vocabulary, with their ids, titles, snippets, links
        and metadata (those the format holds).

    Raises
    ------
    ValueError
        For every problem of the input: unknown format, undecodable bytes (with the
        line and byte offset), a missing column or field (with the ones that exist),
        malformed JSON or CSV rows, repeated ids, inconsistent UCI headers, no documents
        or no words.  The message names the file and, for rows, the line.
    OSError
        If the file cannot be opened (``FileNotFoundError`` when it does not exist).
    ImportError
        For raw text without scikit-learn (``pip install countgrid[text]``).

    Examples
    --------
    >>> import os, tempfile
    >>> from countgrid.text import read_corpus
    >>> folder = tempfile.mkdtemp()
    >>> for name, text in [("a.txt", "Cats purr. Cats sleep."), ("b.txt", "Dogs bark."),
    ...                    ("c.txt", "Cats and dogs play.")]:
    ...     with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
    ...         _ = f.write(text)
    >>> corpus = read_corpus(folder, min_df=1, max_df=1.0)
    >>> corpus.ids, corpus.titles
    (array(['a.txt', 'b.txt', 'c.txt'], dtype='<U5'), array(['a', 'b', 'c'], dtype='<U1'))
    >>> corpus.vocabulary
    array(['bark', 'cats', 'dogs', 'play', 'purr', 'sleep'], dtype='<U5')
    """
    _check_path(path)
    _check_on_error(on_error)
    if max_docs is not None and (isinstance(max_docs, bool)
                                 or not isinstance(max_docs, numbers.Integral)):
        raise TypeError(f"max_docs must be None or an int >= 1, got {max_docs!r}")
    if max_docs is not None and max_docs < 1:
        raise ValueError(f"max_docs must be None or an int >= 1, got {max_docs!r}")
    rng = check_random_state(random_state) if max_docs is not None else None
    if not isinstance(format, str):
        raise TypeError(f"format must be a str, got {format!r}")
    fmt = _detect(path, format)
    label = _name_of(path)
    if not isinstance(transpose, (bool, np.bool_)):
        raise TypeError(f"transpose must be a bool, got {type(transpose).__name__}")
    if transpose and fmt != "mtx":
        raise ValueError(f"transpose=True applies to MatrixMarket input (.mtx), not to "
                         f"{label}")
    if layer is not None and fmt != "h5ad":
        raise ValueError(f"layer= applies to .h5ad input, not to {label}")
    options = dict(lowercase=lowercase, stop_words=stop_words, min_df=min_df, max_df=max_df,
                   max_features=max_features, token_pattern=token_pattern)
    if vocab is not None and not isinstance(vocab, (str, bytes, os.PathLike)):
        raise TypeError(f"vocab must be the name of a vocabulary file, got "
                        f"{type(vocab).__name__}")
    if fmt in COUNT_FORMATS:
        if vocab is not None and fmt not in ("mtx", "uci"):
            raise ValueError(f"vocab= applies to MatrixMarket and UCI input, not to {label}")
        for value, what in ((text_col, "text_col"), (id_col, "id_col"),
                            (title_col, "title_col"), (link_col, "link_col"),
                            (meta_cols, "meta_cols")):
            if value is not None:
                raise ValueError(f"{what} applies to CSV, TSV and JSONL input, not to "
                                 f"{label} (pre-vectorised counts)")
        _check_options(lowercase, stop_words, token_pattern, None)
        if fmt == "npz":
            corpus = _read_npz(label)
        elif fmt == "mtx":
            corpus = _read_mtx(label, vocab, encoding, transpose)
        elif fmt == "10x":
            corpus = read_10x(label, encoding)
        elif fmt == "h5ad":
            corpus = read_h5ad(label, layer=layer)
        else:
            corpus = _read_uci(label, vocab, encoding)
        if vocabulary is not None:
            corpus = _map_vocabulary(corpus, vocabulary, label)
        if max_docs is not None and len(corpus) > max_docs:
            corpus = corpus.sample(max_docs, random_state=rng)
        return corpus
    if vocab is not None:
        raise ValueError(f"vocab= applies to MatrixMarket and UCI input, not to {label}; "
                         "pass vocabulary= to count raw text over fixed terms")
    stream, box = _texts_and_fields(path, fmt, label=label, text_col=text_col, id_col=id_col,
                                    title_col=title_col, link_col=link_col,
                                    meta_cols=meta_cols, text_field=text_field,
                                    encoding=encoding, extensions=extensions,
                                    on_error=on_error)

    keep = None
    if max_docs is not None:
        keep, stream = _reservoir(stream, max_docs, rng)

    def late_fields():
        fields = box[0]
        pick = (lambda v: v) if keep is None else (
            lambda v: None if v is None else [v[i] for i in keep])
        return dict(ids=pick(fields.ids), titles=pick(fields.titles),
                    links=pick(fields.links),
                    metadata={k: _column(pick(v), k) for k, v in fields.meta.items()})

    return _build(stream, ids=None, titles=None, links=None, metadata=None, source=label,
                  vocabulary=vocabulary, late_fields=late_fields, name=label, **options)


def _reservoir(stream, k, rng):
    """(indices, texts) of a uniform sample of at most ``k`` texts of ``stream``, read once
    (reservoir sampling, Vitter's algorithm R), in document order."""
    sample = []
    for i, text in enumerate(stream):
        if i < k:
            sample.append((i, text))
        else:
            j = int(rng.integers(0, i + 1))
            if j < k:
                sample[j] = (i, text)
    sample.sort(key=lambda pair: pair[0])
    return [i for i, _ in sample], [t for _, t in sample]


def _check_path(path):
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"path must be a file or folder name, or '-' for stdin, got "
                        f"{type(path).__name__}")


# ---------------------------------------------------------------------- pre-vectorised
def _read_npz(label):
    with open_regular(label, label, ".npz file") as fh:
        head = _load_npz_keys(fh, label)
        if HEADER_KEY in head:
            fh.seek(0)
            return _from_dict(_load_npz(fh, label), label)
        fh.seek(0)
        data = load_npz_corpus(fh, dtype=np.float64)
    X = data.X
    n, m = X.shape
    names = data.feature_names
    terms = names if names is not None and names.shape == (m,) else \
        np.array([f"w{j}" for j in range(m)])
    if names is not None and names.shape != (m,):
        raise ValueError(f"{label}: feature_names has shape {names.shape}, but the matrix "
                         f"has {m} columns")
    ex = data.extras
    metadata = {}
    if data.y is not None:
        y = np.asarray(data.y)
        ln = data.label_names
        if ln is not None and y.dtype.kind in "iu" and y.size and 0 <= y.min() and \
                y.max() < ln.shape[0]:
            metadata["label"] = ln[y].astype(str)
        else:
            metadata["label"] = y.astype(str)
    split, split_names = ex.get("split"), ex.get("split_names")
    if split is not None and split.shape == (n,) and split.dtype.kind in "iu":
        if split_names is not None and split.size and split.min() >= 0 and \
                split.max() < split_names.shape[0]:
            metadata["split"] = split_names.astype(str)[split]
        else:
            metadata["split"] = split.astype(str)
    # any other array of one value per row (e.g. a bundled dataset's dates, releases or
    # links) is a metadata column under its member's name, as a CSV column would be
    used = {"split", "split_names", "sample_ids", "texts_utf8", "texts_offsets"}
    for name in sorted(set(ex) - used - set(metadata)):
        column = ex[name]
        if column.shape == (n,) and column.dtype.kind in "biufU":
            metadata[name] = column.astype(str) if column.dtype.kind == "U" else column
    ids = None
    sample_ids = ex.get("sample_ids")
    if sample_ids is not None and sample_ids.shape == (n,) and \
            np.unique(sample_ids).size == n:
        ids = sample_ids.astype(str)
    titles = snippets = None
    blob, offsets = ex.get("texts_utf8"), ex.get("texts_offsets")
    if blob is not None and offsets is not None:
        if offsets.shape != (n + 1,) or offsets.dtype.kind not in "iu" or \
                blob.dtype != np.uint8 or np.any(np.diff(offsets) < 0) or \
                (n and (offsets[0] < 0 or offsets[-1] > blob.size)):
            raise ValueError(f"{label}: texts_offsets must be {n + 1} increasing offsets "
                             f"into texts_utf8 (one text per row)")
        raw = blob.tobytes()
        texts = [raw[offsets[i]:offsets[i + 1]].decode("utf-8", "replace") for i in range(n)]
        snippets = [snippet_of(t) for t in texts]
        titles = [title_of(t) or (str(i) if ids is None else ids[i])
                  for i, t in enumerate(texts)]
    return counts_corpus(X, terms, label, ids=ids, titles=titles, snippets=snippets,
                          metadata=metadata)


def _load_npz_keys(fh, label):
    """The member names of a .npz file, from its zip directory and .npy headers alone."""
    with open_archive(fh, label, ".npz file") as archive:
        return set(archive.members)


def _read_vocab(path, label, encoding, n_terms):
    name = os.fsdecode(path)
    enc, ascii_lines = _check_encoding(encoding)
    fh, _ = _open_binary(name)
    terms = []
    try:
        for number, line in _lines(fh, name, enc, ascii_lines):
            terms.append(line.rstrip("\r\n").strip())
    finally:
        fh.close()
    while terms and not terms[-1]:
        terms.pop()
    if "" in terms:
        raise ValueError(f"{name}, line {terms.index('') + 1}: an empty term (a vocabulary "
                         "file holds one term per line)")
    if len(terms) != n_terms:
        raise ValueError(f"{name} holds {len(terms)} terms, but {label} has {n_terms} "
                         "term columns")
    arr = np.array(terms, dtype=str)
    uniq, counts = np.unique(arr, return_counts=True)
    if uniq.size != arr.size:
        dup = str(uniq[counts > 1][0])
        raise ValueError(f"{name}: the term {dup!r} appears {counts[uniq == dup][0]} times "
                         f"(lines {', '.join(str(i + 1) for i in np.flatnonzero(arr == dup)[:3])})")
    return arr


def _read_mtx(label, vocab, encoding, transpose=False):
    M = mmread_checked(label)
    if transpose:         # terms x documents, as genomics tools write (features x cells)
        M = M.T
    m = M.shape[1]
    terms = (np.array([f"w{j}" for j in range(m)]) if vocab is None
             else _read_vocab(vocab, label, encoding, m))
    return counts_corpus(M, terms, label)


def _uci_vocab_path(label):
    folder, base = os.path.split(label)
    stem = base[:-3] if base.lower().endswith(".gz") else base
    if stem.lower().startswith("docword."):
        return os.path.join(folder, "vocab." + stem[len("docword."):])
    return None


def _read_uci(label, vocab, encoding):
    if vocab is None:
        vocab = _uci_vocab_path(label)
        if vocab is None or not os.path.exists(vocab):
            raise ValueError(f"{label}: the UCI vocabulary file "
                             f"{vocab or 'vocab.NAME.txt'} is missing; pass vocab=")
    fh, _ = _open_binary(label)
    try:
        header = []
        for what in ("the number of documents D", "the number of words W",
                     "the number of counts NNZ"):
            raw = fh.readline()
            text = raw.decode("ascii", "replace").strip()
            if not text.isdigit():
                raise ValueError(f"{label}, line {len(header) + 1}: expected {what} (a UCI "
                                 f"docword file starts with the three lines D, W, NNZ), got "
                                 f"{text[:40]!r}")
            header.append(int(text))
        D, W, NNZ = header
        if D == 0 or W == 0:
            raise ValueError(f"{label}: the header announces {D} documents and {W} words; "
                             "a corpus needs at least one of each")
        # a header that lies must not allocate: row pointers, ids and titles per document
        check_memory(200.0 * D, f"{label}: the D={D} documents its header "
                     "announces", "check the first line of the file (D)")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # "input contained no data"
            try:
                body = np.loadtxt(fh, dtype=np.int64, ndmin=2)
            except ValueError:
                body = None
    except (OSError, EOFError) as exc:
        if isinstance(exc, (FileNotFoundError, PermissionError)):
            raise
        raise ValueError(f"{label} cannot be read: {exc}") from None
    finally:
        fh.close()
    if body is None:
        _uci_first_bad_line(label)
    if body.size == 0:
        body = np.zeros((0, 3), dtype=np.int64)
    if body.shape[1] != 3:
        raise ValueError(f"{label}, line 4: expected 'docID wordID count', got "
                         f"{body.shape[1]} numbers")
    if body.shape[0] != NNZ:
        raise ValueError(f"{label}: the header announces NNZ={NNZ} counts, but the file "
                         f"holds {body.shape[0]} lines of counts")
    for col, bound, what in ((0, D, "docID"), (1, W, "wordID")):
        bad = np.flatnonzero((body[:, col] < 1) | (body[:, col] > bound))
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"{label}, line {i + 4}: {what} {body[i, col]} is outside 1..."
                             f"{bound} (the header's {'D' if col == 0 else 'W'})")
    bad = np.flatnonzero(body[:, 2] < 0)
    if bad.size:
        raise ValueError(f"{label}, line {int(bad[0]) + 4}: negative count {body[bad[0], 2]}")
    terms = _read_vocab(vocab, label, encoding, W)
    X = sp.coo_matrix((body[:, 2].astype(np.float64), (body[:, 0] - 1, body[:, 1] - 1)),
                      shape=(D, W)).tocsr()
    ids = np.arange(1, D + 1).astype(str)
    return counts_corpus(X, terms, label, ids=ids)


def _uci_first_bad_line(label):
    """Raise the ValueError naming the first line of a docword body that is not three
    integers (only after the fast reader failed)."""
    fh, _ = _open_binary(label)
    try:
        for number, raw in enumerate(fh, 1):
            if number <= 3 or not raw.strip():
                continue
            parts = raw.split()
            if len(parts) != 3 or not all(p.isdigit() or (p[:1] == b"-" and p[1:].isdigit())
                                          for p in parts):
                raise ValueError(f"{label}, line {number}: expected 'docID wordID count' "
                                 f"(three integers), got "
                                 f"{raw.decode('ascii', 'replace').strip()[:60]!r}")
    finally:
        fh.close()
    raise ValueError(f"{label}: the counts are not lines of three integers")


def _map_vocabulary(corpus, vocabulary, label):
    """The corpus with its columns mapped onto ``vocabulary`` by term."""
    vocabulary = _check_options(True, None, None, vocabulary)[2]
    position = {t: j for j, t in enumerate(vocabulary.tolist())}
    col = np.array([position.get(t, -1) for t in corpus.vocabulary.tolist()], dtype=np.int64)
    if not (col >= 0).any():
        raise ValueError(f"{label}: none of its {corpus.n_terms} terms is in the vocabulary "
                         f"(e.g. {', '.join(map(repr, corpus.vocabulary[:5].tolist()))})")
    X = corpus.counts.tocoo()
    keep = col[X.col] >= 0
    Y = sp.coo_matrix((X.data[keep], (X.row[keep], col[X.col[keep]])),
                      shape=(corpus.n_documents, vocabulary.shape[0])).tocsr()
    nnz = np.diff(Y.indptr)
    if not nnz.any():
        raise ValueError(f"{label}: no document holds a word of the vocabulary")
    out = Corpus(Y, vocabulary, ids=corpus.ids, titles=corpus.titles,
                 snippets=corpus.snippets, links=corpus.links, metadata=corpus.metadata,
                 source=corpus.source)
    _warn_empty(out.ids, np.flatnonzero((nnz == 0) & (np.diff(corpus.counts.indptr) > 0)),
                len(out), "no word of the vocabulary")
    return out
