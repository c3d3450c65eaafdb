"""The chunk sources and their on-disk formats (the face is :mod:`countgrid.streaming`)."""
import contextlib
import json
import os
import re
from collections.abc import Iterable
from numbers import Integral

import numpy as np
import scipy.sparse as sp

from countgrid import io
from countgrid._utils.atomic import atomic_files
from countgrid._utils.npz import open_archive, resolve_max_bytes
from countgrid._utils.sparse import to_checked_csr
from countgrid._utils.validation import as_real_array, check_real_dtype

__all__ = ["ChunkSource", "CSRChunks", "NpzShards", "MemmapCSR", "write_memmap_csr",
           "write_npz_shards", "is_chunk_source"]

_MEMMAP_FORMAT = "countgrid-memmap-csr"
_MEMMAP_VERSION = 1
_SHARD_NAME = re.compile(r"shard-(\d{5,})\.npz")


def is_chunk_source(X):
    """Whether ``X`` is a :class:`ChunkSource` (read chunk by chunk by the fits).

    Parameters
    ----------
    X : object

    Returns
    -------
    bool
    """
    return isinstance(X, ChunkSource)


def _check_rows(value, name):
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


def _check_path(value, name):
    """``value`` as a str path (bytes decoded with the file-system encoding); a TypeError
    naming the argument for anything that is no path."""
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError(f"{name} must be a path (str or os.PathLike), got "
                        f"{type(value).__name__}")
    path = os.fspath(value)
    path = os.fsdecode(path) if isinstance(path, bytes) else path
    if not path:
        raise ValueError(f"{name} is an empty path")
    return path


class ChunkSource:
    """Base class of the chunk sources: a re-iterable sequence of row chunks.

    Subclasses implement :meth:`chunks`; ``n_features`` is the number of columns when it is
    known without reading the data (else None).  Every call of :meth:`chunks` must give the
    same chunks (a fit reads them once per pass and checks that every pass has the
    documents of the first).
    """

    n_features = None

    def chunks(self):
        """A new iterator over the row chunks (sparse matrices or arrays), in order."""
        raise NotImplementedError

    def __iter__(self):
        return iter(self.chunks())


class CSRChunks(ChunkSource):
    """Row chunks held in memory or produced on demand.

    Parameters
    ----------
    chunks : list of matrices or callable
        The chunks in row order (sparse matrices or arrays with the same number of
        columns), or a function without arguments that returns a new iterable of them; it
        is called once per pass, so a generator function streams from disk.  Chunks
        without rows are skipped.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from countgrid.streaming import CSRChunks
    >>> X = sp.random(100, 8, density=0.3, format="csr", random_state=0)
    >>> source = CSRChunks([X[:60], X[60:]])
    >>> [c.shape for c in source]
    [(60, 8), (40, 8)]
    """

    def __init__(self, chunks):
        if callable(chunks):
            self._make = chunks
        elif isinstance(chunks, (list, tuple)):
            items = list(chunks)
            self._make = lambda: iter(items)
        else:
            raise TypeError(f"chunks must be a list of matrices or a function returning an "
                            f"iterable of them, got {type(chunks).__name__} (a generator "
                            f"can be read only once: pass the function that makes it)")

    def chunks(self):
        made = self._make()
        if sp.issparse(made) or isinstance(made, np.ndarray):
            raise TypeError(f"chunks: the function returned one {type(made).__name__}, not "
                            f"an iterable of matrices (return [matrix] for one chunk)")
        try:
            return iter(made)
        except TypeError:
            raise TypeError(f"chunks: the function returned {type(made).__name__}, not an "
                            f"iterable of matrices") from None


def _npz_paths(paths):
    if isinstance(paths, (str, bytes, os.PathLike)):
        path = _check_path(paths, "paths")
        if os.path.isdir(path):
            found = sorted(os.path.join(path, f) for f in os.listdir(path)
                           if f.endswith(".npz"))
            if not found:
                raise ValueError(f"paths: folder {path!r} contains no .npz file")
            return found
        return [path]
    if not isinstance(paths, Iterable):
        raise TypeError(f"paths must be a folder, a .npz file or a list of .npz files, got "
                        f"{type(paths).__name__}")
    found = [_check_path(p, "paths") for p in paths]
    if not found:
        raise ValueError("paths is empty")
    return found


def _read_npz_chunk(path):
    """One shard as a sparse matrix or a Corpus's counts.  Anything that makes it
    unreadable is a ValueError naming the file (OSError and MemoryError pass through)."""
    if os.path.isdir(path):
        raise IsADirectoryError(f"paths: {path!r} is a folder, not a .npz shard")
    with open(path, "rb") as fh:
        magic = fh.read(4)
    if magic not in (b"PK\x03\x04", b"PK\x05\x06"):
        raise ValueError(f"paths: {path!r} is not a .npz shard (a zip archive of arrays, "
                         f"as scipy.sparse.save_npz, write_npz_shards and "
                         f"countgrid.text.Corpus.save write)")
    try:
        # every member's header checked and the total bounded before scipy reads it
        # (docs/security.md): scipy's reader then allocates only what was checked
        with open_archive(path, f"paths: {path!r}", "sparse .npz shard") as archive:
            archive.check_budget(archive.members, resolve_max_bytes(None))
            sparse = "format" in archive.members
        if sparse:
            return sp.load_npz(path)
        corpus_type = io.corpus_type()    # the text layer's Corpus, registered on import
        if corpus_type is None:
            raise ValueError("not a scipy.sparse shard, and no corpus class is registered "
                             "to read a corpus file (import countgrid.text)")
        return corpus_type.load(path).counts
    except (OSError, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - zip, zlib, npy and scipy errors of a bad file
        raise ValueError(f"paths: {path!r} is not a readable sparse .npz shard: "
                         f"{type(exc).__name__}: {exc}") from None


class NpzShards(ChunkSource):
    """Row chunks stored as ``.npz`` shards, read one at a time.

    Parameters
    ----------
    paths : str, path or list of paths
        A folder (its ``*.npz`` files in name order) or the shard files in row order.
        Each is a ``scipy.sparse.save_npz`` file (any sparse format) or a
        ``countgrid.text.Corpus`` file.  Shards are read without unpickling anything; a
        shard that cannot be read is a ValueError naming it.
    """

    def __init__(self, paths):
        self.paths = _npz_paths(paths)
        for p in self.paths:
            if os.path.isdir(p):
                raise IsADirectoryError(f"paths: {p!r} is a folder; give a folder alone, "
                                        f"or a list of .npz files")
            if not os.path.isfile(p):
                raise FileNotFoundError(f"paths: no such file {p!r}")

    def chunks(self):
        for path in self.paths:
            yield _read_npz_chunk(path)


def _prepare_folder(X, directory, reads_from):
    """The output folder as a str, created; refuses a file, and the folder a source ``X``
    reads from (writing would overwrite what is still to be read)."""
    directory = _check_path(directory, "directory")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise NotADirectoryError(f"directory: {directory!r} exists and is not a folder")
    for source_dir in reads_from(X):
        if os.path.isdir(directory) and os.path.samefile(source_dir, directory):
            raise ValueError(f"directory: {directory!r} is the folder X is read from: "
                             f"write to another folder")
    os.makedirs(directory, exist_ok=True)
    return directory


def _source_folders(X):
    if isinstance(X, MemmapCSR):
        return [X.directory] if os.path.isdir(X.directory) else []
    if isinstance(X, NpzShards):
        return sorted({os.path.dirname(os.path.abspath(p)) for p in X.paths
                       if os.path.isfile(p)})
    return []


def write_npz_shards(X, directory, rows_per_shard=100_000):
    """Write counts as ``.npz`` shards (``shard-00000.npz``, ...), one chunk at a time.

    Shards of an earlier write in the same folder (``shard-*.npz`` beyond the last one
    written) are removed, so that ``NpzShards(directory)`` reads what was written.

    Parameters
    ----------
    X : {array-like, sparse matrix} or ChunkSource
        The counts (a source is read chunk by chunk; all chunks must have the same
        number of columns).
    directory : str or path
        Created if missing; not the folder a source ``X`` reads from.
    rows_per_shard : int, default=100_000
        At most this many rows per shard.

    Returns
    -------
    NpzShards
        The shards written, in row order.
    """
    rows = _check_rows(rows_per_shard, "rows_per_shard")
    directory = _prepare_folder(X, directory, _source_folders)
    paths, n_cols = [], None
    # every shard goes to a temporary file; all of them replace the folder's shards only
    # once the last is written (docs/security.md, "Writing"): a write that fails half way
    # (a full disk) leaves the previous shards, never a mixture of two writes
    with atomic_files() as write:
        for i, chunk in enumerate(_rechunk(X, rows)):
            n_cols = _same_columns(chunk, n_cols, i)
            path = os.path.join(directory, f"shard-{i:05d}.npz")
            with write(path) as fh:
                sp.save_npz(fh, chunk, compressed=False)
            paths.append(path)
        if not paths:
            raise ValueError("X has no rows")
    for name in os.listdir(directory):
        m = _SHARD_NAME.fullmatch(name)
        if m and int(m.group(1)) >= len(paths) and os.path.isfile(
                os.path.join(directory, name)):
            os.remove(os.path.join(directory, name))
    return NpzShards(paths)


def _same_columns(chunk, n_cols, i):
    if n_cols is not None and chunk.shape[1] != n_cols:
        raise ValueError(f"chunk {i} of X has {chunk.shape[1]} columns, the first had "
                         f"{n_cols}")
    return chunk.shape[1]


def _as_csr(chunk, name):
    """``chunk`` as CSR of real numbers scipy stores (bool as uint8, float16 as float32);
    its structure checked, its values not (the fits check them when they read them)."""
    if sp.issparse(chunk):
        X = to_checked_csr(chunk, name)
        check_real_dtype(X.dtype, name)
    else:
        arr = as_real_array(chunk, name)
        if arr.ndim != 2:
            raise ValueError(f"{name} must be 2-D, got shape {arr.shape}")
        if arr.dtype == np.float16:
            arr = arr.astype(np.float32)
        X = sp.csr_matrix(arr)
    if X.dtype.kind == "b":
        X = X.astype(np.uint8)
    return X


def _rechunk(X, rows):
    """Row chunks of at most ``rows`` rows of a matrix or a source."""
    if is_chunk_source(X):
        for i, chunk in enumerate(X.chunks()):
            chunk = _as_csr(chunk, f"chunk {i} of X")
            for r0 in range(0, chunk.shape[0], rows):
                yield chunk[r0:r0 + rows]
        return
    X = _as_csr(X, "X")
    for r0 in range(0, X.shape[0], rows):
        yield X[r0:r0 + rows]


def _meta_int(value, what, where):
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"directory: {where!r} is malformed: {what} must be an int, got "
                         f"{value!r}")
    return value


def _meta_dtype(value, kinds, what, where):
    """A plain native numeric dtype of one of ``kinds`` from its name in csr.json."""
    try:
        if not isinstance(value, str):
            raise TypeError(f"a dtype name, got {value!r}")
        dtype = np.dtype(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"directory: {where!r} is malformed: {what}: {exc}") from None
    if dtype.kind not in kinds or not dtype.isnative or dtype.fields or dtype.shape:
        raise ValueError(f"directory: {where!r} describes an unsupported {what} {dtype}")
    return dtype


class MemmapCSR(ChunkSource):
    """A CSR matrix in flat binary files, read in row slices.

    The files are read with plain reads at every pass (as a memory map would, through the
    operating system's page cache), never mapped: a file truncated or rewritten while the
    source is open is a ValueError, not a crash of the process.

    Parameters
    ----------
    directory : str or path
        Written by :func:`write_memmap_csr`: ``csr.json`` (shape and dtypes), ``indptr.bin``,
        ``indices.bin``, ``data.bin``.
    rows_per_chunk : int, default=50_000
        Rows per chunk handed to the fit: the memory of a pass is that of one chunk (plus
        the operating system's page cache, which it may reclaim).

    Attributes
    ----------
    shape : tuple of int
    n_features : int
    """

    _FILES = ("indptr.bin", "indices.bin", "data.bin")

    def __init__(self, directory, rows_per_chunk=50_000):
        self.directory = _check_path(directory, "directory")
        self.rows_per_chunk = _check_rows(rows_per_chunk, "rows_per_chunk")
        if os.path.exists(self.directory) and not os.path.isdir(self.directory):
            raise NotADirectoryError(f"directory: {self.directory!r} is not a folder")
        meta_path = os.path.join(self.directory, "csr.json")
        try:
            with open(meta_path, encoding="utf-8") as f:
                meta = json.load(f)
        except FileNotFoundError:
            raise FileNotFoundError(f"directory: {self.directory!r} has no csr.json; write "
                                    f"it with countgrid.streaming.write_memmap_csr") from None
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise ValueError(f"directory: {meta_path!r} is not a countgrid memmap CSR "
                             f"description: {type(exc).__name__}: {exc}") from None
        if not isinstance(meta, dict) or meta.get("format") != _MEMMAP_FORMAT:
            raise ValueError(f"directory: {meta_path!r} is not a countgrid memmap CSR "
                             f"description")
        version = _meta_int(meta.get("version", _MEMMAP_VERSION), "version", meta_path)
        if version > _MEMMAP_VERSION:
            raise ValueError(f"directory: {meta_path!r} has version {version}; this "
                             f"countgrid reads up to {_MEMMAP_VERSION}: upgrade countgrid")
        shape = meta.get("shape")
        if not isinstance(shape, list) or len(shape) != 2:
            raise ValueError(f"directory: {meta_path!r} is malformed: shape must be a list "
                             f"of two ints, got {shape!r}")
        n_rows, n_cols = (_meta_int(v, "shape", meta_path) for v in shape)
        if n_rows < 0 or n_cols < 0:
            raise ValueError(f"directory: {meta_path!r} describes a matrix of negative "
                             f"shape {shape}")
        index_dtype = _meta_dtype(meta.get("index_dtype"), "i", "index_dtype", meta_path)
        if index_dtype.itemsize not in (4, 8):
            raise ValueError(f"directory: {meta_path!r} describes an unsupported "
                             f"index_dtype {index_dtype}")
        data_dtype = _meta_dtype(meta.get("data_dtype"), "iuf", "data_dtype", meta_path)
        self.shape = (n_rows, n_cols)
        self.n_features = n_cols
        self._dtypes = (index_dtype, index_dtype, data_dtype)
        self._sizes = {"indptr.bin": (n_rows + 1) * index_dtype.itemsize}
        self._check_size("indptr.bin")
        with open(self._path("indptr.bin"), "rb", buffering=0) as fh:
            ends = self._read(fh, "indptr.bin", index_dtype, 0, 1)
            ends = np.r_[ends, self._read(fh, "indptr.bin", index_dtype, n_rows, 1)]
        nnz = int(ends[-1])
        if ends[0] != 0 or nnz < 0:
            raise ValueError(f"directory: {self.directory!r}: indptr.bin is corrupt (it "
                             f"starts at {int(ends[0])} and ends at {nnz})")
        self._nnz = nnz
        self._sizes["indices.bin"] = nnz * index_dtype.itemsize
        self._sizes["data.bin"] = nnz * data_dtype.itemsize
        for name in self._FILES[1:]:
            self._check_size(name)

    def _path(self, name):
        return os.path.join(self.directory, name)

    def _check_size(self, name, size=None):
        path = self._path(name)
        if size is None:
            if not os.path.exists(path):
                raise FileNotFoundError(f"directory: {self.directory!r} has no {name}")
            if not os.path.isfile(path):
                raise ValueError(f"directory: {path!r} is not a file")
            size = os.path.getsize(path)
        if size != self._sizes[name]:
            raise ValueError(f"directory: {path!r} has {size} bytes, expected "
                             f"{self._sizes[name]} (a truncated or mismatched file)")

    def _read(self, fh, name, dtype, start, count):
        """``count`` values from value ``start`` of the open file ``name``; a short read
        (the file changed since it was opened) is a ValueError naming it."""
        out = np.empty(count, dtype=dtype)
        view = memoryview(out).cast("B")
        fh.seek(start * dtype.itemsize)
        done = 0
        while done < len(view):
            n = fh.readinto(view[done:])
            if not n:
                raise ValueError(f"directory: {self._path(name)!r} ended after "
                                 f"{(start * dtype.itemsize + done)} bytes, expected "
                                 f"{self._sizes[name]}: the folder changed after it was "
                                 f"opened (open it again)")
            done += n
        return out

    def chunks(self):
        n_rows, step = self.shape[0], self.rows_per_chunk
        with contextlib.ExitStack() as stack:
            files = []
            for name in self._FILES:
                try:
                    fh = stack.enter_context(open(self._path(name), "rb", buffering=0))
                except FileNotFoundError:
                    raise FileNotFoundError(f"directory: {self.directory!r} has no {name} "
                                            f"(removed after it was opened)") from None
                self._check_size(name, os.fstat(fh.fileno()).st_size)
                files.append(fh)
            f_ptr, f_idx, f_val = files
            ptr_dtype, idx_dtype, val_dtype = self._dtypes
            for r0 in range(0, n_rows, step):
                r1 = min(n_rows, r0 + step)
                ptr = self._read(f_ptr, "indptr.bin", ptr_dtype, r0, r1 - r0 + 1).astype(
                    np.int64, copy=False)
                p0, p1 = int(ptr[0]), int(ptr[-1])
                if not 0 <= p0 <= p1 <= self._nnz:
                    raise ValueError(f"directory: {self.directory!r}: indptr.bin is corrupt "
                                     f"around row {r0} (entries {p0} to {p1} of {self._nnz})")
                indices = self._read(f_idx, "indices.bin", idx_dtype, p0, p1 - p0)
                data = self._read(f_val, "data.bin", val_dtype, p0, p1 - p0)
                yield sp.csr_matrix((data, indices, ptr - p0), shape=(r1 - r0, self.shape[1]))


def _write_array(fh, arr):
    """Write the bytes of ``arr`` through the file object ``fh``, whose flush reports a
    full disk (``ndarray.tofile`` writes through a C stream of its own and loses a failure
    of its final flush: a full disk left truncated files that replaced the previous
    ones)."""
    arr = np.ascontiguousarray(arr)
    if arr.size:
        fh.write(memoryview(arr).cast("B"))


def write_memmap_csr(X, directory, rows_per_chunk=50_000):
    """Write counts as a :class:`MemmapCSR` folder, one chunk at a time.

    Indices are stored as int64 and values in the dtype of the first chunk (bool as
    uint8, float16 as float32); a later chunk whose values that dtype cannot hold exactly
    is a ValueError (give all chunks one dtype).  The files are written to temporary
    ones and replace the folder's together once all are complete, so that a write that
    fails leaves the previous folder as it was; ``csr.json`` is moved last, so that a
    process killed while they are moved leaves no folder that looks complete.

    Parameters
    ----------
    X : {array-like, sparse matrix} or ChunkSource
        The counts (a source is read chunk by chunk).
    directory : str or path
        Created if missing; ``csr.json``, ``indptr.bin``, ``indices.bin`` and
        ``data.bin`` are (over)written.  Not the folder a source ``X`` reads from.
    rows_per_chunk : int, default=50_000
        Rows per chunk when writing, and of the returned source.

    Returns
    -------
    MemmapCSR
        The folder, opened.
    """
    rows = _check_rows(rows_per_chunk, "rows_per_chunk")
    directory = _prepare_folder(X, directory, _source_folders)
    meta_path = os.path.join(directory, "csr.json")
    n_rows, n_cols, nnz, data_dtype = 0, None, 0, None
    # the four files are written to temporary ones and moved into place together once all
    # are complete (docs/security.md, "Writing"): a write that fails (a full disk, a bad
    # chunk, Ctrl-C) leaves the previous folder as it was
    with atomic_files() as write:
        with write(os.path.join(directory, "indptr.bin")) as f_ptr, \
                write(os.path.join(directory, "indices.bin")) as f_idx, \
                write(os.path.join(directory, "data.bin")) as f_val:
            _write_array(f_ptr, np.zeros(1, dtype=np.int64))
            for i, chunk in enumerate(_rechunk(X, rows)):
                n_cols = _same_columns(chunk, n_cols, i)
                if data_dtype is None:
                    data_dtype = chunk.dtype
                values = chunk.data.astype(data_dtype)
                if not np.can_cast(chunk.dtype, data_dtype) and not np.array_equal(
                        values, chunk.data, equal_nan=data_dtype.kind == "f"):
                    raise ValueError(f"chunk {i} of X has values that {data_dtype} (the "
                                     f"dtype of the first chunk) cannot hold exactly: give "
                                     f"all chunks one dtype (e.g. float64)")
                _write_array(f_ptr, chunk.indptr[1:].astype(np.int64) + nnz)
                _write_array(f_idx, chunk.indices.astype(np.int64))
                _write_array(f_val, values)
                nnz += chunk.nnz
                n_rows += chunk.shape[0]
        if n_cols is None:
            raise ValueError("X has no rows")
        meta = {"format": _MEMMAP_FORMAT, "version": _MEMMAP_VERSION,
                "shape": [n_rows, n_cols], "index_dtype": "int64",
                "data_dtype": np.dtype(data_dtype).name}
        with write(meta_path, "w") as f:
            json.dump(meta, f)
        # csr.json goes first and comes back last: a process killed while the files are
        # moved leaves no folder that looks complete
        if os.path.lexists(meta_path):
            os.remove(meta_path)
    return MemmapCSR(directory, rows_per_chunk=rows)
