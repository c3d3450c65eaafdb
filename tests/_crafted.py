"""Crafting hostile files for the tests (tests/security, tests/hostile): model and corpus
files rewritten and re-signed (a SHA-256 checksum anyone can recompute, docs/security.md),
and raw zip archives whose members lie about their sizes."""
import io
import json
import struct
import zipfile

import numpy as np

from countgrid._utils.npz import digest

MODEL_HEADER = "__countgrid__"


def read_model(path):
    """(header dict, {name: array}) of a model file, read with numpy."""
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    return json.loads(str(arrays.pop(MODEL_HEADER))), arrays


def write_model(out, header, arrays, resign=True):
    """Write a model file from its parts; ``resign`` recomputes the checksum (what an
    attacker does), otherwise the header's checksum is kept."""
    header = dict(header)
    if resign:
        header.pop("sha256", None)
        header["sha256"] = digest(header, arrays)
    np.savez_compressed(out, **arrays, **{MODEL_HEADER: np.array(json.dumps(header))})
    return out


def rewrite_model(path, out, change_header=None, change_arrays=None, resign=True):
    header, arrays = read_model(path)
    if change_header:
        change_header(header)
    if change_arrays:
        change_arrays(arrays)
    return write_model(out, header, arrays, resign=resign)


def resign_corpus_arrays(arrays):
    """Recompute the checksum in a corpus's ``header`` entry (of ``Corpus.to_dict``)."""
    header = json.loads(str(arrays["header"]))
    header.pop("sha256", None)
    rest = {k: v for k, v in arrays.items() if k != "header"}
    header["sha256"] = digest(header, rest)
    arrays["header"] = np.array(json.dumps(header))
    return arrays


def npy_bytes(arr):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(arr), allow_pickle=False)
    return buf.getvalue()


def zip_members(out, members, compression=zipfile.ZIP_DEFLATED):
    """A zip of ``{name: bytes}`` members (names as given, e.g. ``"pi_.npy"``)."""
    with zipfile.ZipFile(out, "w", compression=compression) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out


def lie_about_size(path, member, file_size):
    """Patch the uncompressed size that the zip directory and local header of ``member``
    declare (the data are left as they are)."""
    raw = bytearray(open(path, "rb").read())
    with zipfile.ZipFile(io.BytesIO(bytes(raw))) as z:
        info = z.getinfo(member)
    name = member.encode()
    # local file header: signature, ..., uncompressed size at offset 22
    local = info.header_offset
    assert raw[local:local + 4] == b"PK\x03\x04"
    struct.pack_into("<I", raw, local + 22, file_size)
    # central directory entry: uncompressed size at offset 24
    pos = raw.find(b"PK\x01\x02")
    while pos >= 0:
        n = struct.unpack_from("<H", raw, pos + 28)[0]
        if raw[pos + 46:pos + 46 + n] == name:
            struct.pack_into("<I", raw, pos + 24, file_size)
            break
        pos = raw.find(b"PK\x01\x02", pos + 4)
    open(path, "wb").write(bytes(raw))
    return path
