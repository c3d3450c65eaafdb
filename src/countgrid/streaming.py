"""Counts larger than memory: sources of row chunks for out-of-core and online fits.

``CountingGrid.fit``, ``PLSA.fit`` and ``RAP.fit`` accept any :class:`ChunkSource` in
place of a matrix: they read it one chunk at a time, once per EM pass, so the corpus is
never loaded whole (docs/scale.md).  Three sources cover the usual cases:

- :class:`CSRChunks`: a list of matrices, or a function that returns a fresh iterable of
  matrices at every pass (a generator function reading your own files);
- :class:`NpzShards`: a folder (or list) of ``.npz`` shards written by
  ``scipy.sparse.save_npz``, :func:`write_npz_shards` or ``countgrid.text.Corpus.save``;
- :class:`MemmapCSR`: one CSR matrix in three flat binary files, memory-mapped and read in
  row slices (:func:`write_memmap_csr` writes it, from a matrix or from any source).

Every chunk is validated as a count matrix when it is read (the same checks as an
in-memory ``X``); errors name the chunk.
"""
import json
import os
from numbers import Integral

import numpy as np
import scipy.sparse as sp

from countgrid._sparse import to_checked_csr
from countgrid.text import Corpus

__all__ = ["ChunkSource", "CSRChunks", "NpzShards", "MemmapCSR", "write_memmap_csr",
           "write_npz_shards", "is_chunk_source"]

_MEMMAP_FORMAT = "countgrid-memmap-csr"
_MEMMAP_VERSION = 1


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


class ChunkSource:
    """Base class of the chunk sources: a re-iterable sequence of row chunks.

    Subclasses implement :meth:`chunks`; ``n_features`` is the number of columns when it is
    known without reading the data (else None).
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
        is called once per pass, so a generator function streams from disk.

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
        return iter(self._make())


def _npz_paths(paths):
    if isinstance(paths, (str, os.PathLike)):
        path = os.fspath(paths)
        if os.path.isdir(path):
            found = sorted(os.path.join(path, f) for f in os.listdir(path)
                           if f.endswith(".npz"))
            if not found:
                raise ValueError(f"paths: folder {path!r} contains no .npz file")
            return found
        return [path]
    found = [os.fspath(p) for p in paths]
    if not found:
        raise ValueError("paths is empty")
    return found


def _read_npz_chunk(path):
    with np.load(path, allow_pickle=False) as z:
        keys = set(z.files)
    if {"indptr", "indices", "data", "shape"} <= keys and "format" in keys:
        return sp.load_npz(path)
    return Corpus.load(path).counts


class NpzShards(ChunkSource):
    """Row chunks stored as ``.npz`` shards, read one at a time.

    Parameters
    ----------
    paths : str, path or list of paths
        A folder (its ``*.npz`` files in name order) or the shard files in row order.
        Each is a ``scipy.sparse.save_npz`` file or a ``countgrid.text.Corpus`` file.
    """

    def __init__(self, paths):
        self.paths = _npz_paths(paths)
        missing = [p for p in self.paths if not os.path.isfile(p)]
        if missing:
            raise FileNotFoundError(f"paths: no such file {missing[0]!r}")

    def chunks(self):
        for path in self.paths:
            yield _read_npz_chunk(path)


def write_npz_shards(X, directory, rows_per_shard=100_000):
    """Write counts as ``.npz`` shards (``shard-00000.npz``, ...), one chunk at a time.

    Parameters
    ----------
    X : {array-like, sparse matrix} or ChunkSource
        The counts (a source is read chunk by chunk).
    directory : str or path
        Created if missing.
    rows_per_shard : int, default=100_000
        At most this many rows per shard.

    Returns
    -------
    NpzShards
        The shards written, in row order.
    """
    rows = _check_rows(rows_per_shard, "rows_per_shard")
    os.makedirs(directory, exist_ok=True)
    paths = []
    for i, chunk in enumerate(_rechunk(X, rows)):
        path = os.path.join(os.fspath(directory), f"shard-{i:05d}.npz")
        sp.save_npz(path, chunk, compressed=False)
        paths.append(path)
    if not paths:
        raise ValueError("X has no rows")
    return NpzShards(paths)


def _as_csr(chunk, name):
    if sp.issparse(chunk):
        return to_checked_csr(chunk, name)
    arr = np.asarray(chunk)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {arr.shape}")
    return sp.csr_matrix(arr)


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


class MemmapCSR(ChunkSource):
    """A CSR matrix in flat binary files, memory-mapped and read in row slices.

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

    def __init__(self, directory, rows_per_chunk=50_000):
        self.directory = os.fspath(directory)
        self.rows_per_chunk = _check_rows(rows_per_chunk, "rows_per_chunk")
        meta_path = os.path.join(self.directory, "csr.json")
        try:
            with open(meta_path, encoding="utf-8") as f:
                meta = json.load(f)
        except FileNotFoundError:
            raise FileNotFoundError(f"directory: {self.directory!r} has no csr.json; write "
                                    f"it with countgrid.streaming.write_memmap_csr") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"directory: {meta_path!r} is not a countgrid memmap CSR "
                             f"description: {exc}") from None
        if not isinstance(meta, dict) or meta.get("format") != _MEMMAP_FORMAT:
            raise ValueError(f"directory: {meta_path!r} is not a countgrid memmap CSR "
                             f"description")
        if meta.get("version", 0) > _MEMMAP_VERSION:
            raise ValueError(f"directory: {meta_path!r} has version {meta.get('version')}; "
                             f"this countgrid reads up to {_MEMMAP_VERSION}: upgrade countgrid")
        try:
            n_rows, n_cols = (int(v) for v in meta["shape"])
            index_dtype = np.dtype(meta["index_dtype"])
            data_dtype = np.dtype(meta["data_dtype"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"directory: {meta_path!r} is malformed: {exc!r}") from None
        if (n_rows < 0 or n_cols < 0 or index_dtype not in (np.int32, np.int64)
                or data_dtype.kind not in "iuf"):
            raise ValueError(f"directory: {meta_path!r} describes an unsupported matrix "
                             f"({meta['shape']}, {index_dtype}, {data_dtype})")
        self.shape = (n_rows, n_cols)
        self.n_features = n_cols
        self._indptr = self._map("indptr.bin", index_dtype, n_rows + 1)
        nnz = int(self._indptr[-1]) if n_rows >= 0 else 0
        if self._indptr[0] != 0 or nnz < 0:
            raise ValueError(f"directory: {self.directory!r}: indptr.bin is corrupt")
        self._indices = self._map("indices.bin", index_dtype, nnz)
        self._data = self._map("data.bin", data_dtype, nnz)

    def _map(self, name, dtype, count):
        path = os.path.join(self.directory, name)
        size = os.path.getsize(path) if os.path.exists(path) else -1
        if size != count * dtype.itemsize:
            raise ValueError(f"directory: {path!r} has {size} bytes, expected "
                             f"{count * dtype.itemsize} (a truncated or mismatched file)")
        if count == 0:
            return np.zeros(0, dtype=dtype)
        return np.memmap(path, dtype=dtype, mode="r", shape=(count,))

    def chunks(self):
        n_rows, step = self.shape[0], self.rows_per_chunk
        for r0 in range(0, n_rows, step):
            r1 = min(n_rows, r0 + step)
            ptr = np.array(self._indptr[r0:r1 + 1], dtype=np.int64)
            p0, p1 = int(ptr[0]), int(ptr[-1])
            if not 0 <= p0 <= p1 <= self._data.shape[0]:
                raise ValueError(f"directory: {self.directory!r}: indptr.bin is corrupt "
                                 f"around row {r0}")
            yield sp.csr_matrix((np.array(self._data[p0:p1]), np.array(self._indices[p0:p1]),
                                 ptr - p0), shape=(r1 - r0, self.shape[1]))


def write_memmap_csr(X, directory, rows_per_chunk=50_000):
    """Write counts as a :class:`MemmapCSR` folder, one chunk at a time.

    Indices are stored as int64 and values in the dtype of the first chunk.

    Parameters
    ----------
    X : {array-like, sparse matrix} or ChunkSource
        The counts (a source is read chunk by chunk).
    directory : str or path
        Created if missing; ``csr.json``, ``indptr.bin``, ``indices.bin`` and
        ``data.bin`` are (over)written.
    rows_per_chunk : int, default=50_000
        Rows per chunk when writing, and of the returned source.

    Returns
    -------
    MemmapCSR
        The folder, opened.
    """
    rows = _check_rows(rows_per_chunk, "rows_per_chunk")
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    n_rows, n_cols, nnz, data_dtype = 0, None, 0, None
    with open(os.path.join(directory, "indptr.bin"), "wb") as f_ptr, \
            open(os.path.join(directory, "indices.bin"), "wb") as f_idx, \
            open(os.path.join(directory, "data.bin"), "wb") as f_val:
        np.zeros(1, dtype=np.int64).tofile(f_ptr)
        for i, chunk in enumerate(_rechunk(X, rows)):
            if n_cols is None:
                n_cols, data_dtype = chunk.shape[1], chunk.dtype
            elif chunk.shape[1] != n_cols:
                raise ValueError(f"chunk {i} of X has {chunk.shape[1]} columns, the first "
                                 f"had {n_cols}")
            (chunk.indptr[1:].astype(np.int64) + nnz).tofile(f_ptr)
            chunk.indices.astype(np.int64).tofile(f_idx)
            chunk.data.astype(data_dtype).tofile(f_val)
            nnz += chunk.nnz
            n_rows += chunk.shape[0]
    if n_cols is None:
        raise ValueError("X has no rows")
    meta = {"format": _MEMMAP_FORMAT, "version": _MEMMAP_VERSION, "shape": [n_rows, n_cols],
            "index_dtype": "int64", "data_dtype": np.dtype(data_dtype).name}
    with open(os.path.join(directory, "csr.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f)
    return MemmapCSR(directory, rows_per_chunk=rows)
