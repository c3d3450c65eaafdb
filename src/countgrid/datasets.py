"""Small bundled and on-disk count corpora for examples, tests and the demo.

Every file is a compressed ``.npz`` archive of plain arrays (CSR parts
``data``/``indices``/``indptr``/``shape``, labels, names and a description),
read with ``numpy.load(..., allow_pickle=False)``: loading a data set never
unpickles anything.
"""
import io
import os
from collections import namedtuple
from importlib import resources

import numpy as np
import scipy.sparse as sp

from countgrid._utils.npz import read_arrays
from countgrid._utils.sparse import _check_compressed

__all__ = ["Dataset", "TextDataset", "load_news20_3class", "load_news20_3class_texts",
           "load_npz_corpus"]

_NEWS20_3CLASS = "news20_3class.npz"
_NEWS20_3CLASS_TEXTS = "news20_3class_texts.npz"
#: The data/ folder of a source checkout (src/countgrid/datasets.py -> data/): where the
#: repository's datasets are for an editable install (data/README.md).
_CHECKOUT_DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "data")

TextDataset = namedtuple("TextDataset", ["texts", "y", "label_names", "split", "description"])
TextDataset.__doc__ = """Raw texts with labels: ``(texts, y, label_names, split, description)``."""


class Dataset(namedtuple("Dataset", ["X", "y", "feature_names", "label_names"])):
    """A labelled count corpus; unpacks as ``X, y, feature_names, label_names``.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        Counts (or intensities for the microarray files).
    y : ndarray of shape (n_samples,) or None
        Integer class labels indexing ``label_names``.
    feature_names : ndarray of str, shape (n_features,) or None
        The vocabulary (or feature identifiers).
    label_names : ndarray of str, shape (n_classes,) or None
        Names of the classes.
    description : str
        Provenance and preprocessing, as stored in the file.
    extras : dict of str to ndarray
        The other arrays of the file (e.g. ``split``, ``split_names``,
        ``sample_ids``, ``texts_utf8``/``texts_offsets``).
    """

    def __new__(cls, X, y, feature_names, label_names, description="", extras=None):
        self = super().__new__(cls, X, y, feature_names, label_names)
        self.description = description
        self.extras = dict(extras or {})
        return self

    def __repr__(self):
        n, m = self.X.shape
        k = "?" if self.label_names is None else len(self.label_names)
        return f"Dataset(X: {n} x {m} sparse, {k} classes, extras={sorted(self.extras)})"


_CSR_KEYS = ("data", "indices", "indptr", "shape", "format")
_MAIN_KEYS = _CSR_KEYS + ("y", "feature_names", "label_names", "description")


def _index_dtype(n):
    return np.int32 if n <= np.iinfo(np.int32).max else np.int64


def _check_dtype(dtype):
    """None (keep the stored type) or a real numeric numpy dtype."""
    if dtype is None:
        return None
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be None or a numpy numeric dtype, got {dtype!r}") from None
    if dt.kind not in "iuf":
        raise ValueError(f"dtype must be an integer or floating dtype (counts), got {dt}")
    return dt


def _read_npz(file, dtype, label):
    """The corpus in ``file`` (named ``label`` in errors), every part checked."""
    # every member's header checked and the total bounded before anything is
    # decompressed; no pickled object is ever loaded (docs/security.md)
    arrays = read_arrays(file, label, ".npz corpus")
    if not isinstance(arrays, dict) or not arrays:
        raise ValueError(f"{label} is not a .npz corpus (an empty archive or a single array)")
    missing = [k for k in ("data", "indices", "indptr", "shape") if k not in arrays]
    if missing:
        raise ValueError(f"{label} is not a sparse count corpus: arrays {missing} are missing "
                         f"(found {sorted(arrays)})")
    fmt = arrays.get("format", np.asarray(b"csr"))
    fmt = fmt.item() if fmt.size == 1 else fmt
    fmt = fmt.decode() if isinstance(fmt, bytes) else str(fmt)
    shape_array = arrays["shape"]
    if shape_array.dtype.kind not in "iu" or shape_array.shape != (2,):
        raise ValueError(f"{label}: shape must hold two integers, got {shape_array!r}")
    shape = tuple(int(v) for v in shape_array)
    if fmt not in ("csr", "csc"):
        raise ValueError(f"{label}: unsupported sparse format {fmt!r} (csr or csc)")
    if min(shape) < 0:
        raise ValueError(f"{label}: negative shape {shape}")
    data = arrays["data"]
    if data.ndim != 1 or data.dtype.kind not in "biuf":
        raise ValueError(f"{label}: data must be a 1-D array of real numbers, got dtype "
                         f"{data.dtype} and shape {data.shape}")
    n_major, n_minor = shape if fmt == "csr" else shape[::-1]
    try:
        nnz = _check_compressed(arrays["indptr"], arrays["indices"], data.shape[0],
                                n_major, n_minor, f"{label} (indices/indptr/data)")
    except ValueError as exc:
        raise ValueError(f"{exc} (shape {shape})") from None
    data = data[:nnz]
    if not np.isfinite(data).all():
        raise ValueError(f"{label}: data contains NaN or infinity")
    # negative values are kept: the microarray files hold signed intensities (the
    # estimators check their own input)
    itype = _index_dtype(max(shape + (nnz,)))
    parts = (data if dtype is None else data.astype(dtype),
             arrays["indices"][:nnz].astype(itype), arrays["indptr"].astype(itype))
    cls = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
    X = cls(parts, shape=shape).tocsr()
    X.sum_duplicates()
    X.sort_indices()

    def opt(key, cast=None):
        if key not in arrays:
            return None
        a = arrays[key]
        return a.astype(cast) if cast is not None else a

    y = opt("y")
    if y is not None:
        if y.ndim != 1 or y.shape[0] != shape[0]:
            raise ValueError(f"{label}: y has shape {y.shape}, expected ({shape[0]},) "
                             "(one label per row)")
        if y.dtype.kind in "iub":
            y = y.astype(np.int64)
    description = str(arrays["description"]) if "description" in arrays else ""
    extras = {k: v for k, v in arrays.items() if k not in _MAIN_KEYS}
    return Dataset(X, y, opt("feature_names", str), opt("label_names", str), description, extras)


def load_npz_corpus(path, dtype=np.float64):
    """Load a corpus stored as a compressed ``.npz`` of CSR parts (no pickle).

    The format is that of ``scipy.sparse.save_npz`` plus optional arrays
    ``y``, ``feature_names``, ``label_names`` and ``description``; any other
    arrays are returned in ``extras``.  This reads the datasets kept in the
    ``data/`` folder of the source repository (``news20_*.npz``,
    ``reuters_r8.npz``, ...; not installed with the package) and the bundled
    demo corpus.

    Parameters
    ----------
    path : str, path-like or binary file object
        The ``.npz`` file.
    dtype : numpy dtype or None, default=numpy.float64
        Data type of ``X``; None keeps the stored type (e.g. integer counts).

    Returns
    -------
    Dataset
        A named tuple ``(X, y, feature_names, label_names)`` with extra
        attributes ``description`` and ``extras``.  ``X`` is CSR with sorted
        indices; missing optional arrays are None.

    Raises
    ------
    ValueError
        If the file is not a ``.npz`` archive of a valid 2-D CSR/CSC matrix of finite
        values (the message names the file and the part), or ``y`` has not one entry per
        row.
    TypeError
        For a ``path`` or ``dtype`` of the wrong type.
    """
    dtype = _check_dtype(dtype)
    if isinstance(path, (str, bytes, os.PathLike)):
        if os.path.isdir(path):
            raise IsADirectoryError(f"path {os.fsdecode(path)!r} is a directory, not a .npz "
                                    "file")
        with open(path, "rb") as f:
            return _read_npz(f, dtype, os.path.basename(os.fsdecode(path)))
    if not (hasattr(path, "read") and hasattr(path, "seek")):
        raise TypeError(f"path must be a file name (str or os.PathLike) or a binary file "
                        f"object, got {type(path).__name__}")
    return _read_npz(path, dtype, getattr(path, "name", "the file"))


def load_news20_3class(dtype=np.float64):
    """The bundled demo corpus: 2,780 posts from three 20 Newsgroups groups.

    Posts from ``alt.atheism``, ``rec.sport.baseball`` and ``sci.space``
    (bydate train and test parts together) as bags of words over a pruned
    vocabulary of 2,500 words: English stop words, Usenet boiler-plate and
    rare words removed, the most frequent remaining words kept (chosen
    without the labels).  See ``Dataset.description`` for the provenance and
    ``tools/make_demo_data.py`` for the exact preprocessing.

    Parameters
    ----------
    dtype : numpy dtype or None, default=numpy.float64
        Data type of ``X``; None keeps the stored ``uint16`` counts.

    Returns
    -------
    Dataset
        ``X`` (CSR, shape (2780, 2500)), ``y`` (int, 0..2),
        ``feature_names`` (2,500 words) and ``label_names`` (3 names);
        ``extras["split"]`` / ``extras["split_names"]`` hold the original
        bydate train/test split.

    Examples
    --------
    >>> from countgrid.datasets import load_news20_3class
    >>> X, y, words, labels = load_news20_3class()
    >>> X.shape, labels.tolist()
    ((2780, 2500), ['alt.atheism', 'rec.sport.baseball', 'sci.space'])
    """
    resource = resources.files("countgrid").joinpath("data", _NEWS20_3CLASS)
    # Read the bytes so this also works from a zipped installation.
    data = resource.read_bytes()
    return _read_npz(io.BytesIO(data), _check_dtype(dtype), _NEWS20_3CLASS)


def load_news20_3class_texts():
    """The texts of the bundled demo corpus: the same 2,780 posts as
    :func:`load_news20_3class`, as text.

    Each post is the text of the 20 Newsgroups "all-terms" distribution (subject line
    first, then the body; letters only, lower case) cut after 2,000 characters at a word
    boundary (``tools/make_demo_data.py``).  ``countgrid demo`` writes them as a folder of
    text files and maps them.

    Returns
    -------
    TextDataset
        ``texts`` (list of 2,780 str), ``y`` (int8 labels 0..2), ``label_names``
        (3 group names), ``split`` (0 = bydate train, 1 = test) and ``description``.

    Examples
    --------
    >>> from countgrid.datasets import load_news20_3class_texts
    >>> data = load_news20_3class_texts()
    >>> len(data.texts), data.label_names.tolist()
    (2780, ['alt.atheism', 'rec.sport.baseball', 'sci.space'])
    """
    raw = resources.files("countgrid").joinpath("data", _NEWS20_3CLASS_TEXTS).read_bytes()
    with np.load(io.BytesIO(raw), allow_pickle=False) as z:
        blob, offsets = z["texts_utf8"].tobytes(), z["texts_offsets"]
        texts = [blob[offsets[i]:offsets[i + 1]].decode("utf-8")
                 for i in range(len(offsets) - 1)]
        return TextDataset(texts, z["y"], z["label_names"], z["split"], str(z["description"]))


def _repository_file(name):
    """The repository dataset ``name``: in ``$COUNTGRID_DATA_DIR`` when set, else in the
    ``data/`` folder of the source checkout this package runs from (an editable install);
    FileNotFoundError saying where to find it otherwise (it is not in the wheel)."""
    folder = os.environ.get("COUNTGRID_DATA_DIR") or _CHECKOUT_DATA
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"{path} does not exist: {name} is one of the datasets of the data/ folder of a "
            f"git clone of countgrid (not in its wheel or sdist; data/README.md). Pass its "
            f"path, or set COUNTGRID_DATA_DIR to the folder holding it")
    return path
