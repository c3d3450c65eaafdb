"""A counting grid loaded with its window histograms ``h_`` deferred
(``countgrid.io._load(defer_derived=True)``, how the command line loads models): inference,
the map and the word rankings read what they need of ``h_`` from ``pi_`` a block of words at
a time, never hold ``h_`` whole, and give the bits of the model loaded as ``countgrid.load``
does (issue 22, "memory": ``countgrid html`` under 2x the model's size)."""
import json

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid import io
from countgrid.grid import _counting_grid
from _synthetic import draw_corpus, true_grid

EXTENT, WINDOW, Z = (7, 6), (3, 2), 90


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X, _ = draw_corpus(true_grid(EXTENT, Z, rng), WINDOW, 70, 25, rng)
    return sp.csr_matrix(X)


@pytest.fixture(scope="module", params=[np.float32, np.float64], ids=["f32", "f64"])
def model_file(request, data, tmp_path_factory):
    cg = countgrid.CountingGrid(EXTENT, WINDOW, n_iter=4, tol=0, dtype=request.param,
                                window_schedule=None, random_state=0).fit(data)
    path = tmp_path_factory.mktemp("deferred") / "model.npz"
    cg.save(path)
    with np.load(path, allow_pickle=False) as f:
        assert json.loads(str(f["__countgrid__"]))["model"]["derived"] == ["h_"]
    return path


@pytest.fixture(scope="module")
def eager(model_file):
    """The model as countgrid.load gives it (h_ derived whole, in the default blocks)."""
    return countgrid.load(model_file)


@pytest.fixture(params=[1 << 20, 3 * 42], ids=["one-block", "blocks-of-3-words"])
def block(request, monkeypatch):
    monkeypatch.setattr(_counting_grid, "_HISTOGRAM_BLOCK", request.param)
    return request.param


def _deferred(path):
    cg = io._load(path, defer_derived=True)
    assert "h_" not in vars(cg)
    return cg


def test_inference_reads_h_from_pi_with_the_same_bits(model_file, eager, data, block):
    lazy = _deferred(model_file)
    _same(lazy.transform(data), eager.transform(data))
    _same(lazy.score_samples(data), eager.score_samples(data))
    _same(lazy.positions(data, anchor="center"), eager.positions(data, anchor="center"))
    for ranking in ("depth", "coverage"):
        for a, b in zip(lazy.documents_near(data, (2, 3), 9, ranking=ranking),
                        eager.documents_near(data, (2, 3), 9, ranking=ranking)):
            _same(a, b)
    _same(lazy.top_words(4), eager.top_words(4))
    assert "h_" not in vars(lazy)          # nothing above held h_ whole
    _same(lazy.h_, eager.h_)               # read whole, it is derived (and kept)
    assert "h_" in vars(lazy)


def test_window_values_gather_h(model_file, eager, block):
    lazy = _deferred(model_file)
    rng = np.random.default_rng(0)
    cells, words = rng.integers(0, 42, size=(5, 40)), rng.integers(0, Z, size=(5, 40))
    _same(lazy._window_values(cells, words), eager.h_.reshape(42, Z)[cells, words])
    _same(eager._window_values(cells, words), eager.h_.reshape(42, Z)[cells, words])
    assert "h_" not in vars(lazy)


@pytest.mark.parametrize("dense", [False, True], ids=["sparse", "dense"])
def test_the_map_page_is_the_same(model_file, eager, data, block, dense):
    X = data.toarray() if dense else data
    meta = {"group": np.array(["a", "b", "c"])[np.arange(data.shape[0]) % 3]}
    pages = [m.to_html(None, X=X, metadata=meta, color_by="group")
             for m in (eager, _deferred(model_file))]
    assert pages[0] == pages[1]


def test_the_deferred_model_refits_and_saves(model_file, data, tmp_path):
    lazy = _deferred(model_file)
    lazy.save(tmp_path / "again.npz")             # h_ derived to compare, then left out
    _same(countgrid.load(tmp_path / "again.npz").h_, countgrid.load(model_file).h_)
    refit = countgrid.CountingGrid(**lazy.get_params()).fit(data)
    lazy.fit(data)
    _same(lazy.h_, refit.h_)
    _same(lazy.transform(data), refit.transform(data))


def test_without_pi_there_is_no_h(model_file):
    lazy = _deferred(model_file)
    with pytest.raises(ValueError):
        lazy.fit(np.full((3, Z + 1), -1.0))
    if "pi_" in vars(lazy):                        # a fit that failed left it unfitted
        del lazy.pi_
    assert not hasattr(lazy, "h_")                 # nothing to derive it from
    with pytest.raises(AttributeError, match="h_"):
        lazy.h_


def test_deferring_still_checks_what_deriving_needs(model_file, tmp_path):
    """A re-signed file whose window does not fit its grid is refused at load, deferred or
    not (the error of deriving h_)."""
    with np.load(model_file, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    header = json.loads(str(arrays.pop("__countgrid__")))
    header["model"]["params"]["window"] = [9, 9]
    header["sha256"] = io._digest(header, arrays)
    arrays["__countgrid__"] = np.array(json.dumps(header))
    bad = tmp_path / "bad.npz"
    np.savez_compressed(bad, **arrays)
    for defer in (False, True):
        with pytest.raises(ValueError, match="cannot recompute h_"):
            io._load(bad, defer_derived=defer)


def test_a_stored_h_is_read_as_stored(data, tmp_path):
    cg = countgrid.CountingGrid(EXTENT, WINDOW, n_iter=2, tol=0, dtype=np.float64,
                                random_state=1).fit(data)
    cg.h_ = cg.h_ * (1 + 1e-12)                    # not what pi_ gives: the file keeps it
    cg.save(tmp_path / "edited.npz")
    lazy = io._load(tmp_path / "edited.npz", defer_derived=True)
    assert "h_" in vars(lazy)
    _same(lazy.h_, cg.h_)
    _same(lazy.transform(data), cg.transform(data))


def test_classifier_grids_are_deferred_too(data, tmp_path):
    y = np.arange(data.shape[0]) % 2
    clf = countgrid.CountingGridClassifier(EXTENT, WINDOW, n_iter=3, tol=0,
                                           random_state=0).fit(data, y)
    clf.save(tmp_path / "clf.npz")
    lazy = io._load(tmp_path / "clf.npz", defer_derived=True)
    assert "h_" not in vars(lazy.grid_)
    _same(lazy.predict_proba(data), countgrid.load(tmp_path / "clf.npz").predict_proba(data))
