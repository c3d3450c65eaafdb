"""Python's changelog as a dated :class:`Corpus` (a dataset of the repository's ``data/``
folder: data/README.md).  It lives with the corpus object, which it returns; the
datasets module below it finds the file."""
import os

import numpy as np

from countgrid.datasets import _repository_file as repository_file
from countgrid.datasets import load_npz_corpus
from countgrid.text._corpus import Corpus, title_of

__all__ = ["load_python_changelog"]

_PYTHON_CHANGELOG = "python_changelog.npz"


def load_python_changelog(path=None):
    """Python's changelog, one dated document per entry: 8,442 entries of 89 releases
    (2015-02-08 to 2023-02-07), with their release dates and sections.

    CPython's ``Misc/NEWS`` as rendered in the Python 3.11 documentation
    (``whatsnew/changelog.html``), from Debian's ``python3.11-doc`` package
    (3.11.2-6+deb12u9): every entry of every section (Library, Core and Builtins,
    Security, ...) of the releases from 3.5.0 alpha 1 to 3.11.2, as plain text, counted
    over a vocabulary of 3,620 words (English stop words, the changelog's own boiler-plate
    such as "fix" or "patch" and the credits "Patch by ..." left out; words of at least 3
    entries).  An entry listed again in a later release (a backport) is kept once, at its
    earliest listing.  Licence: the PSF License Agreement (version 2) of Python and its
    documentation.  ``tools/make_python_changelog.py`` makes the file from the package;
    ``data/README.md`` gives the details.

    The file, ``python_changelog.npz``, is one of the datasets of the repository's
    ``data/`` folder, not of the installed package: it is read from ``path``, else from
    the folder named by the environment variable ``COUNTGRID_DATA_DIR``, else from the
    ``data/`` folder of the source checkout the package runs from (an editable install).

    Parameters
    ----------
    path : str or path-like, optional
        The ``python_changelog.npz`` file.

    Returns
    -------
    countgrid.text.Corpus
        ``counts`` (CSR float64, shape (8442, 3620)), ``vocabulary``, ``ids`` (the issue:
        ``"gh-92173"``, ``"bpo-32782"``; ``"#2"``, ``"#3"`` added to later entries of the
        same issue; ``"RELEASE/SECTION/k"`` for the few entries without one),
        ``titles`` (the text's first 80 characters), ``snippets`` (the entry's whole
        text, without its issue number; at most 1,019 characters), ``links`` (the issue
        on GitHub or bugs.python.org; empty without an issue) and ``metadata``:
        ``"date"`` (the release date, ISO ``YYYY-MM-DD``), ``"release"`` (``"3.11.0rc2"``,
        ``"3.11.2"``, ...) and ``"section"`` (11 names), all str.  Documents are in date
        order.

    Raises
    ------
    FileNotFoundError
        When the file is not found (not a git checkout of countgrid, and no ``path`` or
        ``COUNTGRID_DATA_DIR``).
    ValueError
        If the file is not a valid corpus of this layout.

    Examples
    --------
    >>> from countgrid.text import load_python_changelog
    >>> corpus = load_python_changelog()  # doctest: +SKIP
    >>> corpus.counts.shape, sorted(corpus.metadata)  # doctest: +SKIP
    ((8442, 3620), ['date', 'release', 'section'])
    >>> corpus.metadata["date"][[0, -1]].tolist()  # doctest: +SKIP
    ['2015-02-08', '2023-02-07']
    """
    if path is None:
        path = repository_file(_PYTHON_CHANGELOG)
    data = load_npz_corpus(path, dtype=np.float64)
    label = os.path.basename(os.fsdecode(path)) if isinstance(
        path, (str, bytes, os.PathLike)) else _PYTHON_CHANGELOG
    n = data.X.shape[0]
    ex = data.extras
    missing = [k for k in ("texts_utf8", "texts_offsets", "sample_ids", "dates", "releases",
                           "links") if k not in ex]
    if missing or data.y is None or data.label_names is None or data.feature_names is None:
        raise ValueError(f"{label} is not the Python changelog corpus: arrays "
                         f"{missing or ['y', 'label_names', 'feature_names']} are missing")
    for key in ("sample_ids", "dates", "releases", "links"):
        if ex[key].shape != (n,) or ex[key].dtype.kind != "U":
            raise ValueError(f"{label}: {key} must hold {n} str (one per row), got dtype "
                             f"{ex[key].dtype} and shape {ex[key].shape}")
    y, names = data.y, data.label_names
    if y.dtype.kind not in "iu" or (n and (y.min() < 0 or y.max() >= names.shape[0])):
        raise ValueError(f"{label}: y must index label_names (0 .. {names.shape[0] - 1})")
    blob, offsets = ex["texts_utf8"], ex["texts_offsets"]
    if offsets.shape != (n + 1,) or offsets.dtype.kind not in "iu" or \
            blob.dtype != np.uint8 or np.any(np.diff(offsets) < 0) or \
            (n and (offsets[0] < 0 or offsets[-1] > blob.size)):
        raise ValueError(f"{label}: texts_offsets must be {n + 1} increasing offsets into "
                         "texts_utf8 (one text per row)")
    raw = blob.tobytes()
    texts = [raw[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n)]
    return Corpus(data.X, data.feature_names, ids=ex["sample_ids"],
                  titles=[title_of(t) for t in texts], snippets=texts, links=ex["links"],
                  metadata={"date": ex["dates"], "release": ex["releases"],
                            "section": names[y]},
                  source=_PYTHON_CHANGELOG)
