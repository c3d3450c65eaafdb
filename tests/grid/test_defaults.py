"""The counting grids' defaults: the coarse-to-fine ``window_schedule="auto"``, the
``extent="auto"`` rule and the warning for grids that leave many cells unused."""
import warnings

import numpy as np
import pytest

from countgrid import CountingGrid, CountingGridClassifier, GenerativeCountingGridClassifier
from countgrid.exceptions import CapacityWarning
from countgrid.grid import auto_extent, auto_window_schedule
from countgrid.grid._capacity import capacity_for, unused_cells
from _expected_warnings import FEW_ITERATIONS
from _synthetic import draw_corpus, true_grid


def corpus(extent, window, n_docs, n_features=30, doc_length=40, seed=0):
    rng = np.random.default_rng(seed)
    X, pos = draw_corpus(true_grid(extent, n_features, rng), window, n_docs, doc_length, rng,
                         sparse=True)
    return X, pos


@pytest.mark.parametrize("extent, window, n_iter, expected", [
    # the authors' driver script: 10x10 then 6x6 before 4x4 on 40x40
    ((40, 40), (4, 4), 100, [((10, 10), 15), ((6, 6), 15)]),
    ((32, 32), (5, 5), 100, [((10, 10), 15), ((7, 7), 15)]),
    ((24, 24), (4, 4), 100, [((8, 8), 15), ((6, 6), 15)]),
    ((16, 16), (4, 4), 100, [((5, 5), 15)]),
    ((12, 12, 12), (3, 3, 2), 100, [((4, 4, 4), 15), ((3, 3, 3), 15)]),
    ((40, 40), (4, 4), 20, [((10, 10), 5), ((6, 6), 5)]),   # a short fit stays short
    ((40, 40), (4, 4), 3, []),
    ((40, 40), (4, 4), None, [((10, 10), 15), ((6, 6), 15)]),   # stage length as given
    ((10, 10), (3, 3), 100, []),                             # the window cannot grow
    ((8, 8), (8, 8), 100, []),
])
def test_auto_window_schedule(extent, window, n_iter, expected):
    assert auto_window_schedule(extent, window, n_iter) == expected


def test_auto_schedule_is_the_default_and_equals_the_explicit_schedule():
    extent, window = (16, 16), (3, 3)
    X, _ = corpus(extent, window, 120, seed=1)
    kw = dict(n_iter=12, tol=0, random_state=0, num_threads=1)
    schedule = auto_window_schedule(extent, window, 12)
    assert schedule == [((5, 5), 3), ((4, 4), 3)]
    default = CountingGrid(extent, window, **kw).fit(X)
    explicit = CountingGrid(extent, window, window_schedule=schedule, **kw).fit(X)
    none = CountingGrid(extent, window, window_schedule=None, **kw).fit(X)
    assert CountingGrid().window_schedule == "auto"
    np.testing.assert_array_equal(default.pi_, explicit.pi_)
    assert not np.allclose(default.pi_, none.pi_)


@pytest.mark.parametrize("n, kappa", [(1, 16.0), (48, 16.0), (60, 20.0), (150, 50.0),
                                      (299, 99.67), (300, 100.0), (10 ** 6, 100.0)])
def test_capacity_rule(n, kappa):
    assert capacity_for(n) == pytest.approx(kappa, abs=0.01)


@pytest.mark.parametrize("n, window, extent", [
    (2000, (4, 4), (40, 40)), (108, (4, 4), (24, 24)), (192, (4, 4), (32, 32)),
    (20, (4, 4), (16, 16)),
    (2000, (3, 3, 2), (14, 14, 9)), (5, (2,), (32,)), (10 ** 6, (1, 1), (10, 10))])
def test_auto_extent(n, window, extent):
    got = auto_extent(n, window)
    assert got == extent
    kappa = np.prod(got) / np.prod(window)
    assert 0.75 * capacity_for(n) <= kappa <= 1.35 * capacity_for(n)


@FEW_ITERATIONS
def test_extent_auto_sizes_the_grid_to_the_documents():
    X, _ = corpus((10, 10), (3, 3), 150, seed=2)
    cg = CountingGrid(window=(3, 3), n_iter=5, random_state=0, num_threads=1).fit(X)
    assert cg.extent == "auto"
    assert cg.pi_.shape[:-1] == auto_extent(150, (3, 3)) == (21, 21)
    assert cg.transform(X).shape == (150, 21 * 21)
    clf = CountingGridClassifier(window=(3, 3), n_iter=5, random_state=0, num_threads=1)
    y = np.arange(150) % 3
    clf.fit(X, y)
    assert clf.gamma_.shape == (21, 21, 3)
    assert clf.predict(X).shape == (150,)
    gen = GenerativeCountingGridClassifier(window=(3, 3), n_iter=5, random_state=0,
                                           num_threads=1).fit(X, y)
    # each class grid is sized for its own 50 documents
    assert [g.pi_.shape[:-1] for g in gen.grids_] == [auto_extent(50, (3, 3))] * 3


def test_extent_auto_refuses_a_bare_int_window():
    X, _ = corpus((6, 6), (3, 3), 20)
    with pytest.raises(ValueError, match="window"):
        CountingGrid(window=3, n_iter=2).fit(X)


def test_partial_fit_with_extent_auto_uses_total_samples():
    X, _ = corpus((8, 8), (2, 2), 60, seed=3)
    cg = CountingGrid(window=(2, 2), total_samples=400, random_state=0, num_threads=1)
    cg.partial_fit(X[:30]).partial_fit(X[30:])
    assert cg.pi_.shape[:-1] == auto_extent(400, (2, 2))


def test_unused_cells_of_a_constructed_mass():
    extent, window = (4, 4), (2, 2)
    mass = np.zeros(16)
    mass[0] = 10.0                        # one window position at cell (0, 0)
    assert unused_cells(mass, extent, window) == 12 / 16
    assert unused_cells(np.ones(16), extent, window) == 0.0
    assert unused_cells(np.zeros(16), extent, window) == 0.0


@FEW_ITERATIONS
def test_oversized_grid_warns_and_a_fitting_one_does_not():
    X, _ = corpus((8, 8), (3, 3), 20, seed=5)
    kw = dict(n_iter=20, random_state=0, num_threads=1)
    with pytest.warns(CapacityWarning, match=r"cells of the 40x40 grid.*extent='auto'"):
        CountingGrid((40, 40), (3, 3), **kw).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CapacityWarning)
        CountingGrid((8, 8), (3, 3), **kw).fit(X)


@FEW_ITERATIONS
def test_the_auto_grid_on_few_documents_does_not_warn():
    # 20 documents: extent="auto" is its smallest grid (capacity 16), which leaves most
    # cells unused; there is no smaller grid to advise, so no warning (it was a false alarm
    # advising the grid in use for every small class of the generative classifier)
    X, _ = corpus((8, 8), (3, 3), 2, seed=5)
    X = X[np.arange(20) % 2]              # two distinct documents fill two windows
    kw = dict(n_iter=20, random_state=0, num_threads=1)
    assert unused_cells_after_fit(X, kw) > 1 / 3
    with warnings.catch_warnings():
        warnings.simplefilter("error", CapacityWarning)
        cg = CountingGrid(window=(3, 3), **kw).fit(X)
    assert cg.pi_.shape[:-1] == auto_extent(20, (3, 3))


def unused_cells_after_fit(X, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CapacityWarning)
        cg = CountingGrid(window=(3, 3), **kw).fit(X)
    q = np.asarray(cg.transform(X)).reshape(X.shape[0], -1)
    mass = np.asarray(X.sum(axis=1)).ravel() @ q          # tokens placed at each position
    return unused_cells(mass, cg.pi_.shape[:-1], cg.window)


@FEW_ITERATIONS
def test_auto_parameters_round_trip_in_model_files(tmp_path):
    from countgrid import io
    X, _ = corpus((10, 10), (3, 3), 60, seed=7)
    cg = CountingGrid(window=(3, 3), n_iter=4, random_state=0, num_threads=1).fit(X)
    path = tmp_path / "grid.npz"
    io.save(cg, path)
    back = io.load(path)
    assert back.extent == "auto" and back.window_schedule == "auto"
    np.testing.assert_array_equal(back.pi_, cg.pi_)
    np.testing.assert_array_equal(back.transform(X), cg.transform(X))
