"""countgrid.maps.write_bundle (docs/map.md, "Bundles"): a folder of index.html and chunk
files of documents that the page loads after its first frame; the chunks and the files
(test_bundle_browser.py: the page in Chromium)."""
import base64
import gzip
import json
import re

import numpy as np
import pytest

from countgrid.maps import map_data, write_bundle
from countgrid.maps._bundle import CHUNK_FOLDER
from countgrid.maps._parts import document_chunks, split_documents



def _chunk_part(path):
    m = re.fullmatch(r'countgridChunk\((\d+),"gzip","([A-Za-z0-9+/=]*)"\);\n',
                     path.read_text("utf-8"))
    raw = gzip.decompress(base64.b64decode(m.group(2)))
    n = int.from_bytes(raw[:4], "little")
    return int(m.group(1)), json.loads(raw[4:4 + n])


def test_chunks_hold_consecutive_documents_with_their_own_offsets(fitted, map_options):
    data = map_data(fitted["grid"], fitted["X"], **map_options)
    docs = split_documents(data)[1]
    parts = document_chunks(docs, 70)
    assert [len(p["doc_index"]) for p in parts] == [70, 70, 70, 30]
    positions = np.concatenate([p["doc_positions"] for p in parts])
    np.testing.assert_array_equal(positions, data["doc_positions"])
    for p, t0 in zip(parts, range(0, 240, 70)):
        t1 = t0 + len(p["doc_index"])
        np.testing.assert_array_equal(
            p["doc_offsets"], data["doc_offsets"][t0:t1 + 1] - data["doc_offsets"][t0])
        assert p["titles"] == data["titles"][t0:t1]
        np.testing.assert_array_equal(p["colorings"][0]["doc_levels"],
                                      data["colorings"][0]["doc_levels"][t0:t1])
    # an empty corpus is one empty chunk
    empty = document_chunks(split_documents(map_data(fitted["grid"]))[1], 70)
    assert len(empty) == 1 and len(empty[0]["doc_index"]) == 0


def test_bundle_files_and_rewrites(fitted, map_options, tmp_path):
    index = write_bundle(fitted["grid"], tmp_path / "b", fitted["X"], chunk_documents=70,
                         **map_options)
    assert index == tmp_path / "b" / "index.html"
    chunks = sorted((tmp_path / "b" / CHUNK_FOLDER).iterdir())
    assert [c.name for c in chunks] == [f"chunk-{k:05d}.js" for k in range(4)]
    assert [_chunk_part(c)[0] for c in chunks] == [0, 1, 2, 3]
    page = index.read_text("utf-8")
    assert 'id="cg-documents"' not in page
    assert fitted["titles"][0] not in page
    # a smaller rewrite leaves no chunk of the first
    write_bundle(fitted["grid"], tmp_path / "b", fitted["X"], chunk_documents=200,
                 **map_options)
    assert sorted(c.name for c in (tmp_path / "b" / CHUNK_FOLDER).iterdir()) == \
        ["chunk-00000.js", "chunk-00001.js"]
    (tmp_path / "f").write_text("x")
    with pytest.raises(NotADirectoryError, match="folder"):
        write_bundle(fitted["grid"], tmp_path / "f", fitted["X"])
    for bad in (0, -1, 1.5, True, "10"):
        with pytest.raises(ValueError, match="chunk_documents"):
            write_bundle(fitted["grid"], tmp_path / "c", fitted["X"], chunk_documents=bad)
    with pytest.raises(TypeError, match="folder"):
        write_bundle(fitted["grid"], 3, fitted["X"])
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / CHUNK_FOLDER).symlink_to(tmp_path)
    with pytest.raises(ValueError, match="symbolic link"):
        write_bundle(fitted["grid"], tmp_path / "d", fitted["X"])
