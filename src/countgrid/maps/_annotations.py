"""Region names and cell notes written in the map and read back (docs/map.md,
"Names and notes").

The page exports them as a small JSON file::

    {"countgrid_annotations": 1, "extent": [40, 40],
     "regions": [{"n_regions": 12, "anchor": [3, 17], "name": "packaging"}],
     "notes": [{"cell": [5, 9], "text": "check these"}]}

A region is named through a cell of it (its anchor when it was renamed), so the name
finds its region again in a later map of the same grid whatever the region's number.
The file may come from anyone: it is read as plain JSON with a size limit, every field
is checked, texts are cut, and nothing else is kept.
"""
import json
import os
from numbers import Integral

from countgrid.maps._data import MAX_LABEL_CHARS, truncate_text

__all__ = ["read_annotations", "MAX_ANNOTATION_BYTES", "MAX_NOTE_CHARS", "MAX_NOTES"]

#: The largest annotations file read (bytes).
MAX_ANNOTATION_BYTES = 1 << 20
#: Notes are cut at this many characters.
MAX_NOTE_CHARS = 1000
#: At most this many notes and this many region names.
MAX_NOTES = 1000
_FORMAT = 1


def _cell(value, extent, where):
    if not isinstance(value, list) or len(value) != 2 or not all(
            isinstance(v, Integral) and not isinstance(v, bool) for v in value):
        raise ValueError(f"annotations: {where} must be a cell [row, column], got "
                         f"{truncate_text(repr(value), 60)}")
    r, c = value
    if not (0 <= r < extent[0] and 0 <= c < extent[1]):
        raise ValueError(f"annotations: {where} {value} is outside the {extent[0]} x "
                         f"{extent[1]} grid")
    return [int(r), int(c)]


def _text(value, where, limit):
    if not isinstance(value, str):
        raise ValueError(f"annotations: {where} must be a string, got "
                         f"{type(value).__name__}")
    return truncate_text(" ".join(value.split()), limit)


def read_annotations(source):
    """Region names and cell notes exported from a map, checked.

    Parameters
    ----------
    source : str, path-like or dict
        The JSON file the map's "Save notes" button wrote (at most
        1 MB (``MAX_ANNOTATION_BYTES``)), or its content as a dict.

    Returns
    -------
    dict
        The file's content as checked, itself a valid input: ``countgrid_annotations``
        (1), ``extent`` ([rows, columns]), ``regions`` (list of dicts ``n_regions``,
        ``anchor`` ([row, column]), ``name``) and ``notes`` (list of dicts ``cell``
        ([row, column]), ``text``); names cut at 100 characters, notes at
        1,000 characters (``MAX_NOTE_CHARS``), white space collapsed.

    Raises
    ------
    ValueError
        For an empty file name, a file that is too large, not JSON (a number of more than
        4,300 digits included), not of this format or version, or a field of the wrong type
        or out of the grid (naming it); at most 1,000 (``MAX_NOTES``) notes and region
        names.
    """
    if isinstance(source, dict):
        doc = source
    elif isinstance(source, (str, bytes, os.PathLike)):
        if not os.fspath(source):
            raise ValueError("annotations: the file name is empty; give the JSON file the "
                             "map's \"Save notes\" button wrote")
        with open(source, "rb") as fh:
            raw = fh.read(MAX_ANNOTATION_BYTES + 1)
        if len(raw) > MAX_ANNOTATION_BYTES:
            raise ValueError(f"annotations: the file is larger than "
                             f"{MAX_ANNOTATION_BYTES} bytes")
        try:
            doc = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            # ValueError: JSONDecodeError, UnicodeDecodeError, and Python's limit of
            # 4,300 digits on an int's text
            raise ValueError(f"annotations: not a JSON file ({truncate_text(str(exc), 80)})"
                             ) from None
    else:
        raise TypeError(f"annotations must be a file name or a dict, got "
                        f"{type(source).__name__}")
    if not isinstance(doc, dict) or doc.get("countgrid_annotations") != _FORMAT:
        raise ValueError("annotations: not a countgrid annotations file "
                         "(\"countgrid_annotations\": 1 missing)")
    extent = doc.get("extent")
    if not isinstance(extent, list) or len(extent) != 2 or not all(
            isinstance(v, Integral) and not isinstance(v, bool) and 0 < v <= 1 << 16
            for v in extent):
        raise ValueError("annotations: extent must be [rows, columns] of the grid")
    extent = (int(extent[0]), int(extent[1]))
    regions, notes = doc.get("regions", []), doc.get("notes", [])
    for name, items in (("regions", regions), ("notes", notes)):
        if not isinstance(items, list):
            raise ValueError(f"annotations: {name} must be a list")
        if len(items) > MAX_NOTES:
            raise ValueError(f"annotations: more than {MAX_NOTES} {name}")
    out_regions = []
    for i, item in enumerate(regions):
        if not isinstance(item, dict):
            raise ValueError(f"annotations: regions[{i}] must be an object")
        n = item.get("n_regions")
        if not isinstance(n, Integral) or isinstance(n, bool) \
                or not 1 <= n <= extent[0] * extent[1]:
            raise ValueError(f"annotations: regions[{i}].n_regions must be a number of "
                             "regions of the grid")
        out_regions.append({"n_regions": int(n),
                            "anchor": _cell(item.get("anchor"), extent, f"regions[{i}].anchor"),
                            "name": _text(item.get("name"), f"regions[{i}].name",
                                          MAX_LABEL_CHARS)})
    out_notes = []
    for i, item in enumerate(notes):
        if not isinstance(item, dict):
            raise ValueError(f"annotations: notes[{i}] must be an object")
        out_notes.append({"cell": _cell(item.get("cell"), extent, f"notes[{i}].cell"),
                          "text": _text(item.get("text"), f"notes[{i}].text",
                                        MAX_NOTE_CHARS)})
    return {"countgrid_annotations": _FORMAT, "extent": list(extent), "regions": out_regions,
            "notes": out_notes}


def apply_annotations(data, annotations):
    """Put the names and notes of ``annotations`` (:func:`read_annotations`) into the map
    data of :func:`countgrid.maps.map_data` (in place): a region name replaces the name
    of the region of its level holding its anchor; names of levels the map does not have
    are dropped."""
    ann = read_annotations(annotations)
    extent = tuple(int(e) for e in data["extent"])
    if tuple(ann["extent"]) != extent:
        raise ValueError(f"annotations: written for a {ann['extent'][0]} x "
                         f"{ann['extent'][1]} grid, this map's is {extent[0]} x {extent[1]}")
    levels = {lev["n_regions"]: lev for lev in data["regions"]}
    for item in ann["regions"]:
        lev = levels.get(item["n_regions"])
        if lev is None:
            continue
        r, c = item["anchor"]
        k = int(lev["labels"][r * extent[1] + c])
        lev["names"][k] = item["name"]
        lev.setdefault("renamed", []).append(k)
    data["notes"] = [{"cell": r * extent[1] + c, "text": n["text"]}
                     for n in ann["notes"] for r, c in [n["cell"]]]
    return data
