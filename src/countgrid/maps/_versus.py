"""Two corpora on one map (docs/map.md, "Two corpora"): the documents of both, placed by
the same grid, with a categorical column "corpus" naming where each came from; the page
opens on the difference of the two (countgrid.grid.compare_groups of that column)."""
import numpy as np
import scipy.sparse as sp

from countgrid._utils.counts import check_counts

__all__ = ["CORPUS_COLUMN", "combine_corpora"]

#: The metadata column that tells the two corpora apart.
CORPUS_COLUMN = "corpus"


def _fields(source, name):
    """(counts, titles, snippets, links, ids, metadata) of a Corpus or a count matrix."""
    if hasattr(source, "counts") and hasattr(source, "vocabulary"):
        return (source.counts, list(source.titles), list(source.snippets),
                None if source.links is None else list(source.links), list(source.ids),
                dict(source.metadata or {}))
    if isinstance(source, (str, bytes)) or not (sp.issparse(source) or np.ndim(source) == 2):
        raise TypeError(f"{name} must be a countgrid.text.Corpus or a count matrix, got "
                        f"{type(source).__name__}")
    return source, None, None, None, None, {}


def combine_corpora(first, second, names, n_features):
    """The documents of ``first`` then ``second`` as one set of map inputs.

    Parameters
    ----------
    first : dict
        ``X``, ``titles``, ``snippets``, ``links``, ``ids``, ``metadata`` of the first
        corpus (the map's own arguments).
    second : Corpus or count matrix
        The other corpus (``versus``), over the same words.
    names : pair of str
        The two corpora's names, the levels of the column ``"corpus"``.
    n_features : int
        The grid's number of words.

    Returns
    -------
    dict
        The same keys for both corpora together; metadata keeps the columns both have
        (the others would be missing for half of the documents) and adds ``"corpus"``.
    """
    if not (isinstance(names, (tuple, list)) and len(names) == 2
            and all(isinstance(v, str) and v.strip() for v in names)
            and names[0] != names[1]):
        raise ValueError(f"names must be two different non-empty names of the corpora, got "
                         f"{names!r}")
    X2, titles2, snippets2, links2, ids2, meta2 = _fields(second, "versus")
    Xa, _ = check_counts(first["X"], np.float64, n_features=n_features, owner="the map's grid")
    Xb, _ = check_counts(X2, np.float64, n_features=n_features, owner="the map's grid")
    na, nb = Xa.shape[0], Xb.shape[0]
    if na == 0 or nb == 0:
        raise ValueError("versus: each corpus needs documents to compare")
    X = sp.vstack([sp.csr_matrix(Xa), sp.csr_matrix(Xb)], format="csr") \
        if sp.issparse(Xa) or sp.issparse(Xb) else np.vstack([Xa, Xb])

    meta1 = dict(first["metadata"] or {})
    if CORPUS_COLUMN in meta1 or CORPUS_COLUMN in meta2:
        raise ValueError(f"versus: the column {CORPUS_COLUMN!r} names the two corpora; "
                         "rename the metadata column of that name")
    metadata = {}
    for key, values in meta1.items():
        if key in meta2:
            a, b = np.asarray(values), np.asarray(meta2[key])
            if (a.dtype.kind in "iuf") == (b.dtype.kind in "iuf"):
                metadata[key] = np.concatenate([a.astype(object), b.astype(object)]) \
                    if a.dtype.kind not in "iuf" else np.concatenate([a, b]).astype(float)
    metadata[CORPUS_COLUMN] = np.array([names[0]] * na + [names[1]] * nb, dtype=object)
    def both(a, b, default_a, default_b):
        if a is None and b is None:
            return None
        a = [default_a(i) for i in range(na)] if a is None else list(a)
        b = [default_b(i) for i in range(nb)] if b is None else list(b)
        return a + b

    # defaults as in a map of one corpus; the second corpus's are named after it, so that
    # titles and ids stay distinct
    return {"X": X,
            "titles": both(first["titles"], titles2, lambda i: f"document {i}",
                           lambda i: f"{names[1]}: document {i}"),
            "snippets": both(first["snippets"], snippets2, lambda i: "", lambda i: ""),
            "links": both(first["links"], links2, lambda i: "", lambda i: ""),
            "ids": both(first["ids"], ids2, str, lambda i: f"{names[1]}:{i}"),
            "metadata": metadata}
