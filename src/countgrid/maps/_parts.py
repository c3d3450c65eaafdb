"""The two parts of a map's data (docs/map.md, "Size and speed").

The *map part* is what the first frame needs: the grid's words, regions, colourings of
cells, search index of words, time masses.  The *documents part* holds one entry per
document (their windows and posteriors, titles, snippets, links, ids, levels, values,
periods); the page decodes it after its first frame, so that the first frame does not
wait for a corpus of any size.  A bundle (``countgrid html --bundle``) cuts the documents
part into chunks of consecutive documents, each its own file.
"""
import numpy as np

__all__ = ["DOCUMENT_KEYS", "split_documents", "document_chunks"]

#: The per-document entries of :func:`countgrid.maps.map_data`'s top level.
DOCUMENT_KEYS = ("doc_index", "doc_offsets", "doc_positions", "doc_posteriors", "doc_map",
                 "doc_loglik", "titles", "snippets", "links", "ids")
#: Per-document entries of a colouring and of the time block.
COLORING_DOCUMENT_KEYS = ("doc_levels", "doc_values")
TIME_DOCUMENT_KEYS = ("doc_periods",)


def _without(d, keys):
    return {k: v for k, v in d.items() if k not in keys}


def _only(d, keys):
    return {k: d[k] for k in keys if k in d}


def split_documents(data):
    """(map part, documents part) of the data of :func:`map_data`; the page joins them
    back (``D.colorings[k]`` and ``D.time`` get their documents' entries)."""
    head = _without(data, DOCUMENT_KEYS)
    docs = _only(data, DOCUMENT_KEYS)
    colorings = data.get("colorings") or []
    # "per_document": the colouring has a value per document (the page can filter on it)
    head["colorings"] = [dict(_without(c, COLORING_DOCUMENT_KEYS),
                              per_document=any(k in c for k in COLORING_DOCUMENT_KEYS))
                         for c in colorings]
    docs["colorings"] = [_only(c, COLORING_DOCUMENT_KEYS) for c in colorings]
    if data.get("time"):
        head["time"] = _without(data["time"], TIME_DOCUMENT_KEYS)
        docs["time"] = _only(data["time"], TIME_DOCUMENT_KEYS)
    return head, docs


def _slice(value, t0, t1):
    if value is None:
        return None
    return value[t0:t1]


def document_chunks(docs, size):
    """The documents part cut into parts of ``size`` consecutive documents (the last may
    be shorter; one empty part for a map without documents).  Each part is a documents
    part of its own: ``doc_offsets`` start at 0 and index its own positions."""
    n = len(docs["doc_index"])
    offsets = np.asarray(docs["doc_offsets"])
    out = []
    for t0 in range(0, max(n, 1), size):
        t1 = min(n, t0 + size)
        lo, hi = int(offsets[t0]), int(offsets[t1])
        part = {k: _slice(docs[k], t0, t1) for k in DOCUMENT_KEYS
                if k in docs and k not in ("doc_offsets", "doc_positions", "doc_posteriors")}
        part["doc_offsets"] = offsets[t0:t1 + 1] - lo
        part["doc_positions"] = docs["doc_positions"][lo:hi]
        part["doc_posteriors"] = docs["doc_posteriors"][lo:hi]
        part["colorings"] = [{k: v[t0:t1] for k, v in c.items()} for c in docs["colorings"]]
        if "time" in docs:
            part["time"] = {k: v[t0:t1] for k, v in docs["time"].items()}
        out.append(part)
    return out
