"""The real datasets in data/ (data/README.md): every file listed in data/SHA256SUMS is
there and unchanged, nothing unlisted is there, and data_path finds them or says why not."""
import os

import numpy as np
import pytest
import scipy.sparse as sp

import repo_data
from repo_data import DATA_DIR, checksums, data_path, sha256, verify

LISTED = sorted(checksums())


def _present():
    return [n for n in LISTED if os.path.isfile(os.path.join(DATA_DIR, n))]


def test_the_list_names_the_thirteen_datasets():
    assert len(LISTED) == 13 and all(n.endswith(".npz") for n in LISTED)
    assert {"news20_same.npz", "news20_full.npz", "reuters_r8.npz",
            "colon_alon1999.npz", "python_changelog.npz"} <= set(LISTED)
    readme = open(os.path.join(DATA_DIR, "README.md"), encoding="utf-8").read()
    for name in LISTED:      # every file has its row (and provenance) in the README
        assert f"`{name}`" in readme or f"`{name[:-4]}`" in readme, name


def test_checksums():
    present = _present()
    if not present:
        # the sdist carries data/ without the .npz files; a checkout (and CI) has them
        if os.environ.get("CI") == "true":
            pytest.fail(f"no dataset in {DATA_DIR}: CI must check them")
        pytest.skip("the datasets are not in this copy (sdist)")
    assert verify() == []


def test_verify_names_what_is_wrong(tmp_path):
    if not _present():
        pytest.skip("the datasets are not in this copy (sdist)")
    small = min(LISTED, key=lambda n: os.path.getsize(os.path.join(DATA_DIR, n)))
    raw = open(os.path.join(DATA_DIR, small), "rb").read()
    (tmp_path / small).write_bytes(raw[:-1] + bytes([raw[-1] ^ 1]))      # one bit flipped
    (tmp_path / "extra.npz").write_bytes(b"")
    problems = verify(str(tmp_path))
    assert f"{small}: SHA-256 differs from SHA256SUMS" in problems
    assert "extra.npz: not listed in SHA256SUMS" in problems
    assert sum(p.endswith(": missing") for p in problems) == len(LISTED) - 1
    assert sha256(os.path.join(DATA_DIR, small)) == checksums()[small]


def test_data_path(monkeypatch, tmp_path):
    monkeypatch.delenv("COUNTGRID_DATA_DIR", raising=False)
    assert data_path("news20_same", must_exist=False) == os.path.join(DATA_DIR,
                                                                      "news20_same.npz")
    with pytest.raises(FileNotFoundError, match=r"nope\.npz does not exist.*git clone.*"
                                                r"news20_same\.npz"):
        data_path("nope")
    monkeypatch.setenv("COUNTGRID_DATA_DIR", str(tmp_path))
    assert repo_data.data_dir() == str(tmp_path)
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        data_path("news20_same.npz")


@pytest.mark.skipif(not os.path.isfile(data_path("news20_same", must_exist=False)),
                    reason="the datasets are not in this copy (sdist)")
def test_files_are_pickle_free_corpora():
    for name in LISTED:
        path = data_path(name)
        with np.load(path, allow_pickle=False) as z:
            for key in z.files:
                assert z[key].dtype.kind != "O", (name, key)
            n, m = (int(v) for v in z["shape"])
            assert z["y"].shape == (n,) and z["feature_names"].shape == (m,)
            assert z["y"].max() < len(z["label_names"])
        assert sp.load_npz(path).shape == (n, m)
