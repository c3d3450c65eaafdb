"""The SHA-256 checksum of countgrid's ``.npz`` files (model files, countgrid.io; corpus
files, countgrid.text): one definition, so that both formats detect damage the same way."""
import hashlib
import json

import numpy as np

__all__ = ["digest"]


def digest(header, arrays):
    """SHA-256 over the canonical JSON of the header (without its checksum) and every
    array's name, dtype, shape and bytes, in name order."""
    h = hashlib.sha256()
    h.update(json.dumps({k: v for k, v in header.items() if k != "sha256"},
                        sort_keys=True).encode())
    for key in sorted(arrays):
        arr = np.ascontiguousarray(arrays[key])
        h.update(json.dumps([key, arr.dtype.str, list(arr.shape)]).encode())
        h.update(memoryview(arr).cast("B") if arr.size else b"")
    return h.hexdigest()
