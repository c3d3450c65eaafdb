"""Model files written by countgrid 0.1.0 (tests/fixtures/v0_1_0, made by
tools/make_v010_fixtures.py) still load, with every array bit for bit, and predict exactly
what 0.1.0 predicted from them.

The expected outputs were computed by 0.1.0 with COUNTGRID_SIMD=baseline on one machine
(index.json).  With the same instruction set, CPU architecture and NumPy SIMD features the
outputs must be bit-identical; elsewhere (another libm or NumPy exp/log, FMA contraction on
another architecture) the last bits may differ, and 1e-10 relative is asserted instead."""
import json
import os
import platform

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures", "v0_1_0")
with open(os.path.join(FIXTURES, "index.json")) as fh:
    INDEX = json.load(fh)


def same_machine_kind():
    from numpy._core._multiarray_umath import __cpu_features__ as features

    return (platform.machine() == INDEX["machine"]
            and sorted(k for k, v in features.items() if v) == INDEX["numpy_cpu_features"])


@pytest.fixture(autouse=True)
def baseline_simd(monkeypatch):
    monkeypatch.setenv("COUNTGRID_SIMD", "baseline")


def _load_all_arrays(path):
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _derived_keys(meta, prefix=""):
    keys = {prefix + name for name in meta.get("derived", [])}
    for attr, child in meta["children"].items():
        if isinstance(child, list):
            for i, c in enumerate(child):
                keys |= _derived_keys(c, f"{prefix}{attr}.{i}/")
        else:
            keys |= _derived_keys(child, f"{prefix}{attr}/")
    return keys


def _attribute(est, key):
    """The fitted attribute a file key such as ``grids_.1/h_`` names."""
    *path, name = key.split("/")
    for part in path:
        attr, _, index = part.partition(".")
        est = getattr(est, attr)
        if index:
            est = est[int(index)]
    return np.asarray(getattr(est, name))


@pytest.mark.parametrize("name", sorted(INDEX["files"]))
def test_v010_file_loads_and_predicts_as_0_1_0(name, tmp_path):
    meta = INDEX["files"][name]
    path = os.path.join(FIXTURES, f"{name}.npz")
    est = countgrid.load(path)
    assert type(est).__name__ == meta["class"]
    # load checks the restored state; the check passes on its own too
    assert est._check_fitted_state() is None
    # every stored array comes back bit for bit
    stored = _load_all_arrays(path)
    header = json.loads(str(stored.pop("__countgrid__")))
    assert header["countgrid_version"] == "0.1.0"
    resaved = tmp_path / "resaved.npz"
    est.save(resaved)
    again = _load_all_arrays(resaved)
    derived = _derived_keys(json.loads(str(again.pop("__countgrid__")))["model"])
    # arrays that are a function of the others (h_ of a grid) are recomputed, not stored
    assert sorted(again) == sorted(set(stored) - derived)
    reloaded = countgrid.load(resaved)
    for key, value in stored.items():
        got = again[key] if key in again else _attribute(reloaded, key)
        assert got.dtype == value.dtype, key
        assert got.shape == value.shape and got.tobytes() == value.tobytes(), key
    expected = _load_all_arrays(os.path.join(FIXTURES, f"{name}.expected.npz"))
    X_test = expected.pop("X_test")
    if meta["class"] != "HistogramGMM":  # 0.1.0 predicted from the CSR matrix of these counts
        X_test = sp.csr_matrix(X_test)
    exact = same_machine_kind()
    for method, want in expected.items():
        got = getattr(est, method)(X_test)
        got = got.toarray() if hasattr(got, "toarray") else np.asarray(got)
        assert got.shape == want.shape and got.dtype == want.dtype, method
        if exact or want.dtype.kind not in "fc":
            np.testing.assert_array_equal(got, want, err_msg=f"{name}.{method}")
        else:
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=0, err_msg=f"{name}.{method}")


def test_every_saveable_estimator_of_0_1_0_has_a_file():
    classes = {meta["class"] for meta in INDEX["files"].values()}
    assert len(classes) == 17
    assert classes <= set(countgrid.io.registered())
