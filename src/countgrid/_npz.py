"""Reading countgrid's ``.npz`` files (model files, countgrid.io; corpus files,
countgrid.text) without pickle, and their SHA-256 checksum: one definition, so that both
formats name damage the same way."""
import hashlib
import json
import os

import numpy as np

__all__ = ["digest", "read_arrays"]


def read_arrays(path, label, what):
    """``{name: array}`` of the ``.npz`` archive ``path`` (a file name or a binary file
    object).

    A file that is not a readable archive (truncated, damaged, a single ``.npy`` array) is
    a ValueError ``"<label> is not a readable <what>: ..."``; missing files and permission
    errors propagate as OSError.
    """
    if isinstance(path, (str, bytes, os.PathLike)):
        with open(path, "rb") as fh:        # numpy.load leaks its handle on a damaged zip
            return read_arrays(fh, label, what)
    try:
        data = np.load(path, allow_pickle=False)
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise ValueError(f"{label} is not a readable {what}: it is a single .npy array, "
                             "not a .npz archive")
        with data:
            return {k: data[k] for k in data.files}
    except (FileNotFoundError, IsADirectoryError, PermissionError, MemoryError):
        raise
    except ValueError as exc:
        if str(exc).startswith(label):
            raise
        raise ValueError(f"{label} is not a readable {what}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - numpy/zipfile/zlib raise many types on damaged
        # files (BadZipFile, zlib.error, EOFError, tokenize.TokenError, SyntaxError, ...)
        raise ValueError(f"{label} is not a readable {what}: {type(exc).__name__}: "
                         f"{exc}") from None


def digest(header, arrays):
    """SHA-256 over the canonical JSON of the header (without its checksum) and every
    array's name, dtype, shape and bytes, in name order."""
    h = hashlib.sha256()
    h.update(json.dumps({k: v for k, v in header.items() if k != "sha256"},
                        sort_keys=True).encode())
    for key in sorted(arrays):
        arr = np.ascontiguousarray(arrays[key])
        h.update(json.dumps([key, arr.dtype.str, list(arr.shape)]).encode())
        h.update(memoryview(arr).cast("B") if arr.size else b"")
    return h.hexdigest()
