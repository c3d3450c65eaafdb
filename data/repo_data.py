"""Where the datasets of this repository are, and whether they are intact.

The tests, benchmarks, experiments and tools of a countgrid checkout read the real
datasets through this one module (``data_path("news20_same.npz")``).  It lives in the
folder it describes, so the location it gives is right by construction in a clone, in a
copy of a checkout (``tools/check_wheel.sh``) or wherever the repository sits, and it
needs nothing installed: a caller puts this folder on ``sys.path`` and imports it::

    sys.path.insert(0, os.path.join(REPO, "data"))
    from repo_data import data_path

The installed package never imports it (the files are not in the wheel or the sdist;
``countgrid.datasets`` ships its own small demo corpus).  The environment variable
``COUNTGRID_DATA_DIR`` points it at another folder holding the same files.

``python data/repo_data.py`` checks every file against ``SHA256SUMS`` (see README.md).
"""
import hashlib
import os
import sys

DATA_DIR = os.path.dirname(os.path.abspath(__file__))
SUMS = os.path.join(DATA_DIR, "SHA256SUMS")


def data_dir():
    """The folder the datasets are read from: $COUNTGRID_DATA_DIR, else this folder."""
    return os.environ.get("COUNTGRID_DATA_DIR") or DATA_DIR


def data_path(name, must_exist=True):
    """Path of the dataset ``name`` (``"news20_same"`` or ``"news20_same.npz"``).

    With ``must_exist`` (default) a missing file is a FileNotFoundError that says where
    the files come from; without it the path is returned as is (for skip conditions).
    """
    if not name.endswith(".npz"):
        name += ".npz"
    path = os.path.join(data_dir(), name)
    if must_exist and not os.path.isfile(path):
        known = ", ".join(sorted(checksums())) or "none listed"
        raise FileNotFoundError(
            f"{path} does not exist. The datasets are in the data/ folder of a git clone of "
            f"countgrid (not in its wheel or sdist; see data/README.md); known files: {known}")
    return path


def checksums():
    """{file name: SHA-256 hex digest} from SHA256SUMS (``sha256sum`` format)."""
    if not os.path.isfile(SUMS):
        return {}
    out = {}
    with open(SUMS, encoding="ascii") as f:
        for line in f:
            if line.strip():
                digest, name = line.split(maxsplit=1)
                out[name.strip().lstrip("*")] = digest.lower()
    return out


def sha256(path):
    """SHA-256 hex digest of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify(folder=DATA_DIR):
    """Problems found in ``folder`` against SHA256SUMS: a list of strings, empty if none
    (a listed file missing or different, an unlisted ``.npz`` present)."""
    sums = checksums()
    problems = []
    if not sums:
        problems.append(f"{SUMS} is missing or empty")
    for name, digest in sorted(sums.items()):
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            problems.append(f"{name}: missing")
        elif sha256(path) != digest:
            problems.append(f"{name}: SHA-256 differs from SHA256SUMS")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".npz") and name not in sums:
            problems.append(f"{name}: not listed in SHA256SUMS")
    return problems


if __name__ == "__main__":
    found = verify(data_dir())
    for line in found:
        print(line)
    print(f"{len(checksums())} files listed, {len(found)} problem(s) in {data_dir()}")
    sys.exit(1 if found else 0)
