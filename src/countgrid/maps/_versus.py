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


def _words(vocabulary):
    """A vocabulary as a list of str (a dict ``word -> column`` in column order)."""
    if isinstance(vocabulary, dict):
        return [str(w) for w, _ in sorted(vocabulary.items(), key=lambda item: item[1])]
    return [str(w) for w in vocabulary]


def _check_vocabulary(second, vocabulary):
    """Refuse a ``versus`` Corpus over other words than the map's (ValueError naming
    versus): its counts would be put on the grid column by column."""
    if vocabulary is None or not (hasattr(second, "counts") and hasattr(second, "vocabulary")):
        return
    theirs, ours = _words(second.vocabulary), _words(vocabulary)
    if theirs == ours:
        return
    if len(theirs) != len(ours):
        where = f"{len(theirs)} words, the map's {len(ours)}"
    else:
        j = next(i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b)
        shown = [w if len(w) <= 40 else w[:37] + "..." for w in (theirs[j], ours[j])]
        where = f"column {j} is {shown[0]!r}, the map's {shown[1]!r}"
    raise ValueError(f"versus: the Corpus's vocabulary differs from the map's ({where}); "
                     "count the other corpus over the map's words, e.g. "
                     "Corpus.from_texts(texts, vocabulary=...)")


def combine_corpora(first, second, names, n_features, vocabulary=None):
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
    vocabulary : sequence of str or dict, optional
        The map's words (of its ``corpus=``, ``feature_names`` or the grid): a
        ``second`` Corpus over other words, or the same words in another order, is
        refused (ValueError naming ``versus``).  None: not compared.

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
    _check_vocabulary(second, vocabulary)
    Xa, _ = check_counts(first["X"], np.float64, n_features=n_features, owner="the map's grid")
    Xb, _ = check_counts(X2, np.float64, n_features=n_features, name="versus",
                         owner="the map's grid")
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
