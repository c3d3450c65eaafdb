"""A bare int extent or window is refused (it used to build a silent 1-D ring where a
square grid was meant), and model files that stored an int keep their old 1-D meaning."""
import json

import numpy as np
import pytest

import countgrid
from countgrid import (CountingGrid, CountingGridClassifier, CountingGridFESS,
                       CountingGridPosterior, CountingGridRegressor,
                       GenerativeCountingGridClassifier, ZIPGTM, embed_labels)

from _expected_warnings import FEW_ITERATIONS

# one EM iteration per fit: the tests are about the shapes of grids
pytestmark = FEW_ITERATIONS

X = np.random.default_rng(0).poisson(1.0, size=(24, 10))
Y = np.arange(24) % 2

GRID_ESTIMATORS = [
    lambda e, w: CountingGrid(e, w, n_iter=1, num_threads=1),
    lambda e, w: CountingGridClassifier(e, w, n_iter=1, num_threads=1),
    lambda e, w: CountingGridRegressor(e, w, n_iter=1, num_threads=1),
    lambda e, w: GenerativeCountingGridClassifier(e, w, n_iter=1, num_threads=1),
    lambda e, w: CountingGridPosterior(extent=e, window=w, n_iter=1, num_threads=1),
    lambda e, w: CountingGridFESS(extent=e, window=w, n_iter=1, num_threads=1),
]
IDS = ["CountingGrid", "Classifier", "Regressor", "Generative", "Posterior", "FESS"]


@pytest.mark.parametrize("make", GRID_ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("extent", [16, np.int64(16)])
def test_int_extent_is_a_value_error_with_the_hint(make, extent):
    est = make(extent, (4, 4))
    with pytest.raises(ValueError, match=r"'extent'.*pass \(16, 16\) for a 16x16 grid or "
                                         r"\(16,\) for a ring of 16 cells"):
        est.fit(X, Y)
    assert not hasattr(est, "pi_") and not hasattr(est, "grid_")


@pytest.mark.parametrize("make", GRID_ESTIMATORS, ids=IDS)
def test_int_window_is_a_value_error(make):
    with pytest.raises(ValueError, match=r"'window'.*pass \(4, 4\)"):
        make((6, 6), 4).fit(X, Y)


@pytest.mark.parametrize("make", GRID_ESTIMATORS, ids=IDS)
def test_tuples_of_one_int_still_make_a_ring(make):
    est = make((6,), (2,)).fit(X, Y)
    for name in ("grid_", "grids_", "models_"):
        if hasattr(est, name):
            est = getattr(est, name)
            est = est[0] if isinstance(est, list) else est
    assert est.pi_.shape == (6, 10)


def test_zipgtm_int_grid_shape():
    with pytest.raises(ValueError, match=r"'grid_shape'.*Pass a tuple such as \(5, 5\)"):
        ZIPGTM(grid_shape=5, n_iter=1).fit(X)


def test_embed_labels_and_window_schedule_refuse_ambiguous_ints():
    Q = np.full((4, 36), 1 / 36)
    with pytest.raises(ValueError, match=r"extent must be a tuple.*\(6, 6\) for a 6x6 grid"):
        embed_labels(Q, [0, 1, 0, 1], 6, (2, 2))
    with pytest.raises(ValueError, match=r"window must be a tuple.*\(2, 2\) for the 2-D grid"):
        embed_labels(Q, [0, 1, 0, 1], (6, 6), 2)
    with pytest.raises(ValueError, match=r"window_schedule entry.*\(3, 3\)"):
        CountingGrid((6, 6), (2, 2), window_schedule=[3], n_iter=1).fit(X)
    # on a 1-D grid an int schedule entry is unambiguous (and 0.1.0 files may hold one)
    cg = CountingGrid((6,), (2,), window_schedule=[3], n_iter=1, num_threads=1,
                      random_state=0).fit(X)
    assert cg.pi_.shape == (6, 10)


# ----------------------------------------------------------- model files with ints
def _as_old_file(est, path, out, format_version):
    """``est`` saved, then its header rewritten as 0.1.0 (format 1) or an early 0.2.0
    development version (format 2, checksum recomputed) wrote it: extent and window of
    every (nested) grid stored as bare ints, as those versions stored ``CountingGrid(12, 3)``."""
    est.save(path)
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    header = json.loads(str(arrays.pop("__countgrid__")))

    def to_ints(meta):
        for key in ("extent", "window"):
            value = meta["params"].get(key)
            if isinstance(value, dict) and "__seq__" in value:
                assert len(value["items"]) == 1
                meta["params"][key] = value["items"][0]
        for child in meta["children"].values():
            for c in child if isinstance(child, list) else [child]:
                to_ints(c)

    to_ints(header["model"])
    header.pop("sha256", None)
    header["format_version"] = format_version
    header["countgrid_version"] = "0.1.0" if format_version == 1 else "0.2.0.dev0"
    if format_version == 2:
        header["sha256"] = countgrid.io._digest(header, arrays)
    arrays["__countgrid__"] = np.array(json.dumps(header))
    np.savez_compressed(out, **arrays)
    assert '"extent": 12' in json.dumps(header)
    return out


@pytest.mark.parametrize("format_version", [1, 2])
@pytest.mark.parametrize("make", [
    lambda: CountingGrid((12,), (3,), n_iter=3, random_state=0, num_threads=1).fit(X),
    lambda: CountingGridClassifier((12,), (3,), n_iter=3, random_state=0,
                                   num_threads=1).fit(X, Y),
    lambda: GenerativeCountingGridClassifier((12,), (3,), n_iter=3, random_state=0,
                                             num_threads=1).fit(X, Y),
], ids=["CountingGrid", "Classifier", "Generative"])
def test_files_with_int_extents_load_as_rings(make, format_version, tmp_path):
    est = make()
    path = _as_old_file(est, tmp_path / "new.npz", tmp_path / "old.npz", format_version)
    old = countgrid.load(path)
    nested = [old] + ([old.grid_] if hasattr(old, "grid_") else list(getattr(old, "grids_", [])))
    assert len(nested) > 1 or isinstance(old, CountingGrid)
    for model in nested:
        assert model.get_params()["extent"] == (12,) and model.get_params()["window"] == (3,)
    method = "transform" if isinstance(est, CountingGrid) else "predict_proba"
    np.testing.assert_array_equal(getattr(old, method)(X), getattr(est, method)(X))
    # the loaded model is a valid estimator of today: it refits and saves again
    old.save(tmp_path / "again.npz")
    assert countgrid.load(tmp_path / "again.npz").get_params()["extent"] == (12,)


def test_legacy_value_only_for_shapes_of_any_length(tmp_path):
    """A grid_shape (ZIPGTM, two ints) was never an int: no legacy meaning to restore."""
    from countgrid._utils.param_validation import GridShape

    assert GridShape(ndim=2).legacy_value(5) == 5
    assert GridShape().legacy_value(5) == (5,)
    assert GridShape().legacy_value((5, 5)) == (5, 5)
