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

__all__ = ["Dataset", "load_news20_3class", "load_npz_corpus"]

_NEWS20_3CLASS = "news20_3class.npz"


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


def _read_npz(file, dtype):
    with np.load(file, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    missing = [k for k in ("data", "indices", "indptr", "shape") if k not in arrays]
    if missing:
        raise ValueError(f"not a sparse count corpus: keys {missing} are missing "
                         f"(found {sorted(arrays)})")
    fmt = arrays.get("format", np.asarray(b"csr")).item()
    fmt = fmt.decode() if isinstance(fmt, bytes) else str(fmt)
    shape = tuple(int(s) for s in arrays["shape"])
    if fmt not in ("csr", "csc") or len(shape) != 2:
        raise ValueError(f"unsupported sparse format {fmt!r} with shape {shape}")
    itype = _index_dtype(max(shape + (len(arrays["data"]),)))
    parts = (np.asarray(arrays["data"]) if dtype is None else arrays["data"].astype(dtype),
             arrays["indices"].astype(itype), arrays["indptr"].astype(itype))
    cls = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
    X = cls(parts, shape=shape).tocsr()
    X.sort_indices()

    def opt(key, cast=None):
        if key not in arrays:
            return None
        a = arrays[key]
        return a.astype(cast) if cast is not None else a

    y = opt("y")
    if y is not None and y.dtype.kind in "iub":
        y = y.astype(np.int64)
    description = str(arrays["description"]) if "description" in arrays else ""
    extras = {k: v for k, v in arrays.items() if k not in _MAIN_KEYS}
    return Dataset(X, y, opt("feature_names", str), opt("label_names", str), description, extras)


def load_npz_corpus(path, dtype=np.float64):
    """Load a corpus stored as a compressed ``.npz`` of CSR parts (no pickle).

    The format is that of ``scipy.sparse.save_npz`` plus optional arrays
    ``y``, ``feature_names``, ``label_names`` and ``description``; any other
    arrays are returned in ``extras``.  This reads the files of the shared
    data directory (``news20_*.npz``, ``reuters_r8.npz``, ...) and the
    bundled demo corpus.

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
        If the file does not hold a 2-D CSR/CSC matrix.
    """
    if isinstance(path, (str, bytes, os.PathLike)):
        with open(path, "rb") as f:
            return _read_npz(f, dtype)
    return _read_npz(path, dtype)


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
    return _read_npz(io.BytesIO(data), dtype)
