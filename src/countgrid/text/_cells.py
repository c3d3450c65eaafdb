"""Counts beyond text: the files of single-cell genomics as corpora (docs/text.md, "Cells
and genes"): a 10x Genomics folder (``matrix.mtx`` + ``features.tsv`` or ``genes.tsv`` +
``barcodes.tsv``, gzipped or not) and AnnData's ``.h5ad`` (the ``anndata`` extra).  A cell
is a document, a feature (gene, peak) a term; the cells' annotations are the metadata.

Files come from anyone (docs/security.md): the matrix's shape is checked against the
annotation files before it is kept, a ``.h5ad`` is read through h5py/anndata (no pickle)
and, ``backed``, a block of cells at a time, so that the dense matrix of a large file is
never held whole.
"""
import gzip
import os
import warnings
import zlib

import numpy as np
import scipy.io
import scipy.sparse as sp

from countgrid._utils.memory import check_memory
from countgrid.text._corpus import counts_corpus, warn

__all__ = ["read_10x", "read_h5ad", "is_10x_folder", "unique_names", "mmread_checked"]

#: The names of a 10x folder's files, newest first (Cell Ranger 3+, then 2).
MATRIX_NAMES = ("matrix.mtx.gz", "matrix.mtx")
FEATURE_NAMES = ("features.tsv.gz", "features.tsv", "genes.tsv.gz", "genes.tsv")
BARCODE_NAMES = ("barcodes.tsv.gz", "barcodes.tsv")
#: Cells read at once from a backed .h5ad.
H5AD_BLOCK_CELLS = 10_000


def _first(folder, names):
    for name in names:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    return None


def is_10x_folder(folder):
    """Does ``folder`` hold a 10x matrix (``matrix.mtx[.gz]`` and ``barcodes.tsv[.gz]``)?"""
    return _first(folder, MATRIX_NAMES) is not None and \
        _first(folder, BARCODE_NAMES) is not None


#: What a damaged (gzipped) text file raises while it is read.
_DAMAGED = (UnicodeDecodeError, gzip.BadGzipFile, EOFError, zlib.error)


def _tsv_rows(path, encoding):
    opener = gzip.open if path.lower().endswith(".gz") else open
    try:
        with opener(path, "rt", encoding=encoding, newline="") as fh:
            return [line.rstrip("\r\n").split("\t") for line in fh if line.strip()]
    except _DAMAGED as exc:
        raise ValueError(f"{path} is not a readable tab-separated file in {encoding}: "
                         f"{type(exc).__name__}: {exc}") from None


def unique_names(names):
    """``names`` with repeats numbered as scanpy's ``var_names_make_unique`` does: the first
    keeps its name, the next ``name-1``, ``name-2``, ... (skipping names already taken)."""
    names = [str(n) for n in names]
    taken = set(names)
    seen = {}
    out = []
    for n in names:
        if n not in seen:
            seen[n] = 0
            out.append(n)
            continue
        k = seen[n]
        while True:
            k += 1
            candidate = f"{n}-{k}"
            if candidate not in taken:
                break
        seen[n] = k
        taken.add(candidate)
        out.append(candidate)
    return out


def read_10x(folder, encoding="utf-8"):
    """The cells of a 10x Genomics matrix folder as a :class:`~countgrid.text.Corpus`.

    ``matrix.mtx`` is features x cells (Cell Ranger's orientation); the corpus is cells x
    features.  Terms: the feature names (second column of ``features.tsv``/``genes.tsv``,
    repeats numbered as scanpy does, ``name-1``); ids: the barcodes; metadata
    ``"n_counts"`` (each cell's total) and, with Cell Ranger 3's ``features.tsv``, nothing
    per feature (its ids and types are not kept).

    Parameters
    ----------
    folder : str or path-like
    encoding : str, default="utf-8"

    Returns
    -------
    Corpus

    Raises
    ------
    FileNotFoundError
        Without ``matrix.mtx[.gz]`` or ``barcodes.tsv[.gz]``.
    ValueError
        When the matrix is not a readable MatrixMarket file or its shape does not match
        the features and barcodes.
    """
    folder = os.fsdecode(folder)
    matrix = _first(folder, MATRIX_NAMES)
    barcodes = _first(folder, BARCODE_NAMES)
    features = _first(folder, FEATURE_NAMES)
    if matrix is None or barcodes is None:
        raise FileNotFoundError(f"{folder} is not a 10x folder: it needs matrix.mtx[.gz] and "
                                f"barcodes.tsv[.gz] (and features.tsv[.gz] or genes.tsv[.gz])")
    M = mmread_checked(matrix)
    cells = [row[0] for row in _tsv_rows(barcodes, encoding)]
    if features is not None:
        rows = _tsv_rows(features, encoding)
        names = [r[1] if len(r) > 1 and r[1] else r[0] for r in rows]
    else:
        names = [f"feature{j}" for j in range(M.shape[0])]
    if M.shape != (len(names), len(cells)):
        raise ValueError(f"{matrix} holds a {M.shape[0]} x {M.shape[1]} matrix, but "
                         f"{os.path.basename(features or 'features')} lists {len(names)} "
                         f"features and {os.path.basename(barcodes)} {len(cells)} cells "
                         f"(10x matrices are features x cells)")
    X = sp.csr_matrix(M.T)
    _check_counts(X, matrix)
    return counts_corpus(X, unique_names(names), folder, ids=unique_names(cells),
                         metadata={"n_counts": np.asarray(X.sum(axis=1)).ravel().astype(float)})


#: The fewest bytes a MatrixMarket entry takes ("1 1\n" of a pattern file).
MIN_ENTRY_BYTES = 4
#: What scipy's reader holds per declared entry (row, column, value, the sparse copy).
ENTRY_BYTES = 40


def _mtx_header(path):
    """(rows, columns, entries) declared by a MatrixMarket file's size line."""
    try:
        return _read_mtx_header(path)
    except _DAMAGED as exc:
        raise ValueError(f"{path} is not a readable MatrixMarket file: {type(exc).__name__}: "
                         f"{exc}") from None


def _read_mtx_header(path):
    opener = gzip.open if path.lower().endswith(".gz") else open
    with opener(path, "rb") as fh:
        banner = fh.readline(1024).decode("ascii", "replace").lower()
        if not banner.startswith("%%matrixmarket"):
            raise ValueError(f"{path} is not a readable MatrixMarket file: it does not start "
                             f"with %%MatrixMarket")
        for _ in range(100_000):
            line = fh.readline(1024).decode("ascii", "replace").strip()
            if line and not line.startswith("%"):
                break
        else:
            raise ValueError(f"{path} is not a readable MatrixMarket file: no size line")
    try:
        sizes = [int(v) for v in line.split()]
    except ValueError:
        raise ValueError(f"{path} is not a readable MatrixMarket file: the size line "
                         f"{line[:60]!r} is not numbers") from None
    if "coordinate" in banner and len(sizes) == 3:
        return sizes[0], sizes[1], sizes[2]
    if "array" in banner and len(sizes) == 2:
        return sizes[0], sizes[1], sizes[0] * sizes[1]
    raise ValueError(f"{path} is not a readable MatrixMarket file: size line {line[:60]!r}")


def mmread_checked(path):
    """The matrix of a MatrixMarket file, its declared size checked first: a file from
    anyone may declare billions of entries in a few bytes (docs/security.md)."""
    rows, cols, entries = _mtx_header(path)
    if min(rows, cols, entries) < 0:
        raise ValueError(f"{path} declares negative sizes ({rows} x {cols}, {entries} entries)")
    if not path.lower().endswith(".gz") and entries * MIN_ENTRY_BYTES > os.path.getsize(path):
        raise ValueError(f"{path} declares {entries} entries but holds only "
                         f"{os.path.getsize(path)} bytes (cut short, or not a count file)")
    check_memory(entries * ENTRY_BYTES + (rows + cols) * 8,
                 f"the MatrixMarket file {path} ({rows} x {cols}, {entries} entries)")
    try:
        M = scipy.io.mmread(path)
    except (FileNotFoundError, PermissionError, IsADirectoryError, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - scipy's reader raises many types
        raise ValueError(f"{path} is not a readable MatrixMarket file: "
                         f"{type(exc).__name__}: {exc}") from None
    if not sp.issparse(M):
        M = np.asarray(M)
        if M.ndim != 2:
            raise ValueError(f"{path} does not hold a matrix")
        M = sp.coo_matrix(M)
    return M


def _check_counts(X, label, hint=""):
    data = X.data
    if data.size and not np.all(np.isfinite(data)):
        raise ValueError(f"{label} holds values that are not finite{hint}")
    if data.size and data.min() < 0:
        raise ValueError(f"{label} holds negative values (scaled data?): the count models "
                         f"need raw counts, >= 0{hint}")
    if data.size and not np.all(data == np.round(data)):
        warn(f"{label} holds values that are not integers (normalised or log-transformed "
             f"data?); the count models expect raw counts{hint}")


def read_h5ad(path, layer=None, backed=True):
    """The cells of an AnnData ``.h5ad`` file as a :class:`~countgrid.text.Corpus`.

    Needs the ``anndata`` extra (``pip install 'countgrid[anndata]'``).

    Parameters
    ----------
    path : str or path-like
    layer : str, optional
        The layer holding the raw counts; default: ``layers["counts"]`` when the file has
        it, else ``X``; ``"raw"`` reads ``.raw.X`` (with ``.raw``'s features) when no
        layer has that name.
    backed : bool, default=True
        Open the file backed (``anndata.read_h5ad(backed="r")``) and read the counts
        ``H5AD_BLOCK_CELLS`` (10,000) cells at a time into a sparse matrix: the memory is that
        of the sparse counts, not of a dense ``X``.

    Returns
    -------
    Corpus
        Terms: ``var_names`` (repeats numbered); ids: ``obs_names``; metadata: every
        ``obs`` column (categories and strings as str, numbers as float, NaN missing).

    Raises
    ------
    ImportError
        Without anndata.
    ValueError
        When ``layer`` is not a layer of the file, or the counts are negative or not finite.
    """
    try:
        import anndata
    except ImportError as err:
        raise ImportError("reading .h5ad needs anndata: pip install 'countgrid[anndata]'") \
            from err

    label = os.fsdecode(path)
    if layer is not None and not isinstance(layer, str):
        raise TypeError(f"layer must be a str, got {type(layer).__name__}")
    if not isinstance(backed, (bool, np.bool_)):
        raise TypeError(f"backed must be a bool, got {type(backed).__name__}")
    try:
        with warnings.catch_warnings():
            # anndata's notes on moving old files' elements say nothing to our users
            warnings.simplefilter("ignore", FutureWarning)
            adata = anndata.read_h5ad(label, backed="r" if backed else None)
    except (FileNotFoundError, PermissionError, IsADirectoryError, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - h5py and anndata raise many types
        raise ValueError(f"{label} is not a readable .h5ad file: {type(exc).__name__}: "
                         f"{exc}") from None
    try:
        layers = list(adata.layers.keys())
        has_raw = getattr(adata, "raw", None) is not None
        if layer is None:
            layer = "counts" if "counts" in layers else None
        elif layer not in layers and not (layer == "raw" and has_raw):
            raise ValueError(f"layer={layer!r} is not a layer of {label}; it has "
                             f"{layers or 'none'}" + (" and a .raw (layer='raw')" if has_raw
                                                      else "") + " (None reads X)")
        if layer == "raw" and "raw" not in layers:
            source, var_names = adata.raw.X, adata.raw.var_names
        else:
            source = adata.X if layer is None else adata.layers[layer]
            var_names = adata.var_names
        where = "X" if layer is None else ".raw.X" if source is not adata.X and \
            layer == "raw" and "raw" not in layers else f"layer {layer!r}"
        hint = "" if where != "X" else (f"; the file's layers: {layers or 'none'}" +
                                        (", and a .raw (layer='raw')" if has_raw else ""))
        n = adata.n_obs
        blocks = []
        for t0 in range(0, n, H5AD_BLOCK_CELLS):
            block = source[t0:min(n, t0 + H5AD_BLOCK_CELLS)]
            blocks.append(sp.csr_matrix(block.to_memory() if hasattr(block, "to_memory")
                                        else block))
        X = sp.vstack(blocks, format="csr") if blocks else \
            sp.csr_matrix((0, adata.n_vars))
        metadata = {}
        for name in adata.obs.columns:
            col = adata.obs[name]
            if col.dtype.kind in "biuf":
                metadata[str(name)] = col.to_numpy(dtype=float, na_value=np.nan)
            else:
                metadata[str(name)] = np.asarray(col.astype(str).to_numpy(), dtype=str)
        terms = unique_names(var_names)
        ids = unique_names(adata.obs_names)
    finally:
        if backed and getattr(adata, "file", None) is not None:
            adata.file.close()
    _check_counts(X, f"{label} ({where})", hint)
    return counts_corpus(X, terms, label, ids=ids, metadata=metadata)
