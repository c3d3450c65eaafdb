"""Reading ``.npz`` files that anyone may have written (docs/security.md): countgrid's
model and corpus files, scipy's sparse files, corpus shards.

One definition of how such an archive is opened, so that every reader gets the same
guarantees:

* nothing is unpickled: object, structured and void dtypes are refused before any data
  is read;
* nothing is decompressed before it is checked: :class:`NpzArchive` reads the zip
  directory and the ``.npy`` header of every member (dtype, shape, order: a few hundred
  bytes each) and checks that each member's declared size is exactly its header plus
  ``prod(shape) * itemsize``; the caller checks the names, dtypes and shapes against what
  it expects (a model class's ``_fitted_schema``, the corpus format) and the total against
  ``max_bytes`` with :meth:`NpzArchive.check_budget`; only then does
  :meth:`NpzArchive.read` decompress a member, into an array allocated once at its
  declared size, reading no byte beyond it (a zip bomb cannot expand past what was
  declared and accepted);
* the SHA-256 checksum (:func:`digest`) names accidental damage; it is not a signature.
"""
import dataclasses
import hashlib
import json
import math
import os
import stat
import zipfile

import numpy as np

from countgrid._utils.memory import check_memory, format_bytes

__all__ = ["DEFAULT_MAX_BYTES", "LOAD_MEMORY_FACTOR", "Member", "NpzArchive", "digest", "open_archive",
           "read_arrays", "resolve_max_bytes"]

#: The most bytes of arrays a file may declare, decompressed, unless ``max_bytes`` (or
#: the environment variable ``COUNTGRID_MAX_LOAD_BYTES``) says otherwise: 2 GiB (a 64 x 64
#: grid over 60,000 words in float64 is 1.9 GiB).
DEFAULT_MAX_BYTES = 2 * 2**30
#: Loading takes at most this multiple of the declared bytes (docs/security.md; measured
#: about 2: a counting grid derives its window histograms, the size of pi_, by blocks).
LOAD_MEMORY_FACTOR = 4
#: The largest ``.npy`` header numpy's own reader accepts without ``allow_pickle``.
_NPY_HEADER_LIMIT = 10_000
_CHUNK = 2**20
_DEFLATE_MAX_RATIO = 1032
_SUFFIXES = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_bytes(value, name):
    """An int number of bytes from an int or a string with an optional K/M/G/T suffix
    (binary units: ``"8G"`` is 8 GiB)."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a number of bytes, got {value!r}")
    if isinstance(value, (int, np.integer)):
        n = int(value)
    elif isinstance(value, str):
        text = value.strip().upper().removesuffix("IB").removesuffix("B")
        suffix = text[-1:] if text[-1:] in _SUFFIXES else ""
        try:
            n = int(float(text[: len(text) - len(suffix)]) * _SUFFIXES[suffix])
        except (ValueError, OverflowError):
            raise ValueError(f"{name} must be a number of bytes with an optional K/M/G/T "
                             f"suffix, got {value!r}") from None
    else:
        raise TypeError(f"{name} must be an int number of bytes or a str such as '8G', got "
                        f"{type(value).__name__}")
    if n < 1:
        raise ValueError(f"{name} must be at least 1 byte, got {value!r}")
    return n


def resolve_max_bytes(max_bytes):
    """``max_bytes`` as an int: None means ``COUNTGRID_MAX_LOAD_BYTES`` when set, else
    :data:`DEFAULT_MAX_BYTES`."""
    if max_bytes is None:
        env = os.environ.get("COUNTGRID_MAX_LOAD_BYTES", "").strip()
        return parse_bytes(env, "COUNTGRID_MAX_LOAD_BYTES") if env else DEFAULT_MAX_BYTES
    return parse_bytes(max_bytes, "max_bytes")


@dataclasses.dataclass(frozen=True)
class Member:
    """What a member's ``.npy`` header declares, read without decompressing its data."""

    name: str
    dtype: np.dtype
    shape: tuple
    fortran_order: bool
    header_size: int

    @property
    def nbytes(self):
        return math.prod(self.shape) * self.dtype.itemsize

    @property
    def ndim(self):
        return len(self.shape)


def _npy_header(fh):
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(fh, max_header_size=_NPY_HEADER_LIMIT)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(fh, max_header_size=_NPY_HEADER_LIMIT)
    raise ValueError(f".npy format version {version[0]}.{version[1]} (countgrid reads "
                     "1.0 and 2.0)")


def _plain_dtype(dtype):
    """Whether ``dtype`` is a flat dtype of numbers, bools or strings (no objects, no
    fields, no sub-arrays, no void, no datetimes)."""
    return (dtype.kind in "biufcSU" and dtype.fields is None and dtype.subdtype is None
            and not dtype.hasobject)


class NpzArchive:
    """An ``.npz`` archive opened for checked reading (see the module docstring).

    Parameters
    ----------
    fh : binary file object
        Seekable; left open (the caller owns it).
    label : str
        How errors name the file.
    what : str
        What the file should be, for errors ("countgrid model file").

    Attributes
    ----------
    members : dict of str -> Member
        Every member, by name without ``.npy``, in archive order.
    """

    def __init__(self, fh, label, what):
        self.label, self.what = label, what
        try:
            self._zip = zipfile.ZipFile(fh)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError,
                NotImplementedError, OverflowError) as exc:
            raise self.error(f"{type(exc).__name__}: {exc}") from None
        self._infos = {}
        self.members = {}
        for info in self._zip.infolist():
            self._add(info)

    def error(self, reason):
        return ValueError(f"{self.label} is not a readable {self.what}: {reason}")

    def _add(self, info):
        filename = info.filename
        if not filename.endswith(".npy"):
            raise self.error(f"the member {filename!r} is not a .npy array")
        name = filename[:-4]
        if name in self.members:
            raise self.error(f"the member {filename!r} appears twice")
        if info.flag_bits & 0x1:
            raise self.error(f"the member {filename!r} is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise self.error(f"the member {filename!r} uses compression method "
                             f"{info.compress_type} (countgrid reads stored and deflated "
                             "members)")
        # deflate expands at most 1032:1; a member claiming more cannot hold its data
        most = info.compress_size if info.compress_type == zipfile.ZIP_STORED \
            else _DEFLATE_MAX_RATIO * info.compress_size + 2**16
        if info.file_size > most:
            raise self.error(f"the member {filename!r} claims {info.file_size} bytes from "
                             f"{info.compress_size} stored bytes, more than "
                             f"{'storing' if info.compress_type == zipfile.ZIP_STORED else 'deflate'}"
                             " can give")
        try:
            with self._zip.open(info) as fh:
                shape, fortran_order, dtype = _npy_header(fh)
                header_size = fh.tell()
        except Exception as exc:  # noqa: BLE001 - zipfile, zlib and numpy's header parser
            # raise many types on damaged bytes (BadZipFile, zlib.error, EOFError, ...)
            raise self.error(f"the member {filename!r} has no readable .npy header: "
                             f"{type(exc).__name__}: {exc}") from None
        if not _plain_dtype(dtype):
            raise self.error(f"the member {filename!r} holds the dtype {dtype} (objects, "
                             "records and pickled data are never loaded)")
        if not (isinstance(shape, tuple) and all(isinstance(s, int) and s >= 0
                                                 for s in shape)) or len(shape) > 32:
            raise self.error(f"the member {filename!r} declares the shape {shape!r}")
        member = Member(name, dtype, shape, bool(fortran_order), header_size)
        if header_size + member.nbytes != info.file_size:
            raise self.error(f"the member {filename!r} declares an array of shape {shape} "
                             f"({dtype}, {member.nbytes} bytes) but holds "
                             f"{info.file_size - header_size} bytes")
        self._infos[name] = info
        self.members[name] = member

    def check_budget(self, names, max_bytes):
        """Refuse (ValueError) when the members ``names`` declare more than ``max_bytes``
        bytes in all, and (MemoryError) when :data:`LOAD_MEMORY_FACTOR` times that is more
        than this process can get."""
        total = sum(self.members[n].nbytes for n in names)
        if total > max_bytes:
            raise ValueError(f"{self.label} declares {format_bytes(total)} of arrays, more "
                             f"than max_bytes = {format_bytes(max_bytes)}; if the file is "
                             "what you expect, pass a larger max_bytes (or set "
                             "COUNTGRID_MAX_LOAD_BYTES; --max-bytes on the command line)")
        check_memory(LOAD_MEMORY_FACTOR * total, f"reading {self.label} "
                     f"({format_bytes(total)} of arrays)")
        return total

    def read(self, name):
        """The member ``name`` as an array, decompressed into one allocation of its declared
        size; a member whose data is shorter, longer or fails its CRC is a ValueError."""
        member, info = self.members[name], self._infos[name]
        order = "F" if member.fortran_order else "C"
        out = np.empty(member.shape, dtype=member.dtype, order=order)
        view = memoryview(out.reshape(-1, order="A").view(np.uint8)) if out.size else None
        try:
            with self._zip.open(info) as fh:
                fh.read(member.header_size)
                done = 0
                while view is not None and done < member.nbytes:
                    got = fh.readinto(view[done:done + _CHUNK])
                    if not got:
                        raise EOFError(f"{member.nbytes - done} bytes missing")
                    done += got
                if fh.read(1):          # the end of the member: zipfile checks its CRC
                    raise ValueError("data beyond the declared array")
        except Exception as exc:  # noqa: BLE001 - zlib.error, BadZipFile (CRC), EOFError, ...
            raise self.error(f"the member {info.filename!r} is damaged: "
                             f"{type(exc).__name__}: {exc}") from None
        return out

    def read_small(self, name, limit):
        """The member ``name`` if it declares at most ``limit`` bytes, else a ValueError."""
        member = self.members[name]
        if member.nbytes > limit:
            raise self.error(f"the member {name!r} declares {format_bytes(member.nbytes)}; "
                             f"at most {format_bytes(limit)} are expected")
        return self.read(name)


def open_regular(path, label, what):
    """``open(path, "rb")`` of a regular file only.  Opened without blocking, so that a
    FIFO or a device named as an input is refused at once instead of waiting forever for
    a writer (docs/security.md, "Loading: what is promised")."""
    nonblocking = getattr(os, "O_NONBLOCK", 0)

    def opener(name, flags):
        return os.open(name, flags | nonblocking)

    fh = open(path, "rb", opener=opener)
    try:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ValueError(f"{label} is not a readable {what}: not a regular file")
        if nonblocking:
            os.set_blocking(fh.fileno(), True)
        return fh
    except BaseException:
        fh.close()
        raise


class open_archive:
    """``with open_archive(path, label, what) as archive:`` an :class:`NpzArchive` of a file
    name or a seekable binary file object.  A file that is not a zip of ``.npy`` members is
    a ValueError naming it; missing files and permission errors are OSError."""

    def __init__(self, path, label, what):
        self.path, self.label, self.what = path, label, what
        self._own = None

    def __enter__(self):
        if isinstance(self.path, (str, bytes, os.PathLike)):
            self._own = open_regular(self.path, self.label, self.what)
            fh = self._own
        else:
            fh = self.path
        try:
            return NpzArchive(fh, self.label, self.what)
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def __exit__(self, *exc):
        if self._own is not None:
            self._own.close()
            self._own = None
        return False


def read_arrays(path, label, what, max_bytes=None):
    """``{name: array}`` of every member of the ``.npz`` archive ``path`` (a file name or a
    binary file object), after checking all the headers and that the members declare at
    most ``max_bytes`` in all (None: :func:`resolve_max_bytes`).

    A file that is not a readable archive (truncated, damaged, a single ``.npy`` array) is
    a ValueError ``"<label> is not a readable <what>: ..."``; missing files and permission
    errors propagate as OSError.
    """
    limit = resolve_max_bytes(max_bytes)
    with open_archive(path, label, what) as archive:
        archive.check_budget(archive.members, limit)
        return {name: archive.read(name) for name in archive.members}


def parse_json(text, label, what="header"):
    """``json.loads`` of a header, every failure (deep nesting included) a ValueError."""
    try:
        return json.loads(text)
    except (ValueError, TypeError, RecursionError) as exc:
        kind = "is nested too deeply" if isinstance(exc, RecursionError) else "is not JSON"
        raise ValueError(f"{label} has a corrupt {what}: it {kind}") from None


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
