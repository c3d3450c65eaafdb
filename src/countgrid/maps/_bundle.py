"""A map as a folder (docs/map.md, "Bundles"): ``index.html`` with the map part of the data,
and the documents part in chunk files that the page loads one after another, after its
first frame, with ``<script>`` tags (which work from ``file://``, where ``fetch`` does not).
"""
import json
import os
import pathlib
import re

from countgrid._utils.atomic import atomic_files
from countgrid.maps._annotations import apply_annotations
from countgrid.maps._data import map_data
from countgrid.maps._html import encode_payload, render_html
from countgrid.maps._parts import document_chunks, split_documents

__all__ = ["write_bundle", "CHUNK_DOCUMENTS"]

#: Documents per chunk file (about 11 MB on the synthetic corpus of benchmarks/bench_map.py).
CHUNK_DOCUMENTS = 50_000
#: The chunk files, under the bundle's folder.
CHUNK_FOLDER = "documents"
_CHUNK_NAME = re.compile(r"chunk-(\d{5})\.js")


def _chunk_script(k, part):
    fmt, payload = encode_payload(part, "gzip")
    # base64 only: nothing in it can end the string or the script
    return f"countgridChunk({k},{json.dumps(fmt)},{json.dumps(payload)});\n"


def write_bundle(grid, folder, X=None, *, chunk_documents=CHUNK_DOCUMENTS, annotations=None,
                 **kwargs):
    """Write the interactive map as a folder: ``index.html`` and ``documents/chunk-*.js``.

    For corpora beyond what one file opens quickly (docs/map.md, "Size and speed": a
    million documents and more).  ``index.html`` holds the map part (it draws at once);
    the chunks hold ``chunk_documents`` documents each and are loaded after the first
    frame, from ``file://`` or any static web host (no server code).  The page lists
    documents, searches them and filters them once every chunk is in; it shows how many
    are.  Files are written through one atomic writer: the chunks, then ``index.html``;
    chunks of an earlier, larger bundle in the folder are removed.

    Parameters
    ----------
    grid, X
        As for :func:`write_html`.
    folder : str or path-like
        The bundle's folder (created when missing; it may not be a file).
    chunk_documents : int, default=50000
        Documents per chunk file.
    annotations
        As for :func:`write_html`.
    **kwargs
        The other keyword arguments of :func:`write_html` (``corpus``, ``titles``,
        ``metadata``, ``time``, ...); ``data_format`` applies to ``index.html`` only (the
        chunks are always gzip + base64).

    Returns
    -------
    pathlib.Path
        The path of ``index.html``.
    """
    if not isinstance(folder, (str, bytes, os.PathLike)):
        raise TypeError(f"folder must be a folder name (str or os.PathLike), got "
                        f"{type(folder).__name__}")
    if isinstance(chunk_documents, bool) or not isinstance(chunk_documents, int) \
            or chunk_documents < 1:
        raise ValueError(f"chunk_documents must be a positive int, got {chunk_documents!r}")
    folder = pathlib.Path(os.fsdecode(folder))
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"folder: {str(folder)!r} exists and is not a folder")
    data_format = kwargs.pop("data_format", "auto")
    data = map_data(grid, X, **kwargs)
    if annotations is not None:
        apply_annotations(data, annotations)
    return write_bundle_data(data, folder, chunk_documents, data_format)


def write_bundle_data(data, folder, chunk_documents=CHUNK_DOCUMENTS, data_format="auto"):
    """:func:`write_bundle` of the data of :func:`map_data` (checked arguments)."""
    folder = pathlib.Path(folder)
    chunks = document_chunks(split_documents(data)[1], chunk_documents)
    names = [f"{CHUNK_FOLDER}/chunk-{k:05d}.js" for k in range(len(chunks))]
    if (folder / CHUNK_FOLDER).is_symlink():
        raise ValueError(f"folder: {str(folder / CHUNK_FOLDER)!r} is a symbolic link; write "
                         "the bundle to a new folder")
    (folder / CHUNK_FOLDER).mkdir(parents=True, exist_ok=True)
    index = folder / "index.html"
    with atomic_files() as write:
        for k, (name, part) in enumerate(zip(names, chunks)):
            with write(folder / name, "w", name="folder", encoding="utf-8") as fh:
                fh.write(_chunk_script(k, part))
            chunks[k] = None                       # free each chunk once written
        with write(index, "w", name="folder", encoding="utf-8") as fh:
            fh.write(render_html(data, data_format, bundle_files=names))
    for entry in os.scandir(folder / CHUNK_FOLDER):
        m = _CHUNK_NAME.fullmatch(entry.name)
        if m and int(m.group(1)) >= len(names) and entry.is_file(follow_symlinks=False):
            os.unlink(entry.path)
    return index
