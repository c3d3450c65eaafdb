"""window_coverage and CountingGrid.documents_near against slow obviously-correct loops."""
import warnings

import numpy as np
import scipy.sparse as sp
import pytest

import countgrid
from countgrid.exceptions import NotFittedError
from countgrid.grid._browse import (cell_corners, centred_coverage, check_cell, corner_depths,
                                    window_coverage, window_depth)

from _reference.browse import (coverage_reference, depth_ranking_reference, depth_reference,
                               map_loglik_reference)


@pytest.mark.parametrize("extent, window", [((5, 7), (2, 3)), ((4, 4), (4, 4)), ((6,), (3,)),
                                            ((3, 4, 5), (2, 1, 3)), ((8, 9), (1, 1))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_window_coverage_matches_loops(extent, window, dtype):
    rng = np.random.default_rng(1)
    L = int(np.prod(extent))
    Q = rng.random((7, L)).astype(dtype)
    S = window_coverage(Q, extent, window)
    assert S.dtype == np.float64 and S.shape == (7, L)
    np.testing.assert_allclose(S, coverage_reference(Q.astype(np.float64), extent, window),
                               rtol=1e-12, atol=1e-12)
    # a posterior covers W cells per unit of mass; a full window covers every cell
    np.testing.assert_allclose(S.sum(axis=1), Q.sum(axis=1, dtype=np.float64) * np.prod(window),
                               rtol=1e-10)


def test_window_coverage_in_blocks(monkeypatch):
    from countgrid.grid import _browse
    monkeypatch.setattr(_browse, "_BLOCK_ELEMENTS", 40)    # 2 documents per block
    Q = np.random.default_rng(2).random((5, 20))
    np.testing.assert_allclose(window_coverage(Q, (4, 5), (2, 2)),
                               coverage_reference(Q, (4, 5), (2, 2)), atol=1e-12)


def test_window_coverage_rejects_bad_input():
    with pytest.raises(ValueError, match="shape"):
        window_coverage(np.ones((2, 5)), (2, 3), (1, 1))
    with pytest.raises(ValueError, match="larger than"):
        window_coverage(np.ones((2, 6)), (2, 3), (3, 1))
    with pytest.raises(TypeError, match="real"):
        window_coverage(np.array([["a"] * 6]), (2, 3), (1, 1))


def test_cell_corners_are_the_covering_windows():
    extent, window = (5, 6), (2, 3)
    for cell in range(30):
        expected = [k for k in range(30) if coverage_reference(np.eye(30)[[k]], extent,
                                                               window)[0, cell] > 0]
        assert cell_corners(cell, extent, window).tolist() == expected


def test_check_cell():
    assert check_cell((2, 3), (4, 5)) == 13
    assert check_cell(np.int64(7), (4, 5)) == 7
    assert check_cell([np.int32(3), 4], (4, 5)) == 19
    for bad in [(4, 0), (-1, 0), (0, 5), 20, -1]:
        with pytest.raises(ValueError, match="out of range"):
            check_cell(bad, (4, 5))
    with pytest.raises(ValueError, match="dimensions"):
        check_cell((1, 2, 3), (4, 5))
    for bad in [(1.0, 2), True, "a", (1, None)]:
        with pytest.raises(TypeError):
            check_cell(bad, (4, 5))


@pytest.fixture(scope="module")
def grid_and_X():
    rng = np.random.default_rng(3)
    X = rng.poisson(1.0, size=(60, 15))
    X[:30, :5] += 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid = countgrid.CountingGrid((6, 7), (2, 3), n_iter=8, random_state=0).fit(X)
    return grid, X


def test_window_depth_and_centred_coverage():
    np.testing.assert_array_equal(window_depth((4,)), [0.5, 1, 1, 0.5])
    np.testing.assert_array_equal(window_depth((5,)), np.array([1, 2, 3, 2, 1]) / 3)
    np.testing.assert_array_equal(window_depth((1, 2)), [[1, 1]])
    K = window_depth((4, 4))
    assert K.max() == 1 and K[0, 0] == 0.25 and K[1, 2] == 1 and K[0, 1] == 0.5
    rng = np.random.default_rng(4)
    for extent, window in [((5, 7), (2, 3)), ((6, 6), (4, 4)), ((9,), (5,)),
                           ((3, 4, 5), (2, 1, 3))]:
        Q = rng.random((5, int(np.prod(extent))))
        np.testing.assert_allclose(centred_coverage(Q, extent, window),
                                   depth_reference(Q, extent, window), rtol=1e-12, atol=1e-14)
        for cell in (0, int(np.prod(extent)) - 1):
            d = corner_depths(cell, extent, window)
            np.testing.assert_allclose(Q @ d, depth_reference(Q, extent, window)[:, cell],
                                       rtol=1e-12)
            assert sorted(np.flatnonzero(d)) == cell_corners(cell, extent, window).tolist()
    # a document surely at the window centred on the cell scores 1; one touching it with
    # the corner of its window 1/4 (4 x 4 window)
    Q = np.zeros((2, 64))
    Q[0, np.ravel_multi_index((2, 2), (8, 8))] = 1.0      # window (2..5, 2..5): (3, 4) central
    Q[1, np.ravel_multi_index((0, 1), (8, 8))] = 1.0      # window (0..3, 1..4): (3, 4) corner
    C = centred_coverage(Q, (8, 8), (4, 4))[:, np.ravel_multi_index((3, 4), (8, 8))]
    assert C.tolist() == [1.0, 0.25]
    assert window_coverage(Q, (8, 8), (4, 4))[:, np.ravel_multi_index((3, 4), (8, 8))].tolist() \
        == [1.0, 1.0]


def test_documents_near_is_the_depth_ranking(grid_and_X):
    grid, X = grid_and_X
    Q = grid.transform(X).astype(np.float64)
    C = depth_reference(Q, (6, 7), (2, 3))
    ll = map_loglik_reference(X, grid.h_.reshape(42, -1), Q)
    for cell in [(0, 0), (5, 6), (3, 2)]:
        flat = np.ravel_multi_index(cell, (6, 7))
        idx, scores = grid.documents_near(X, cell, n_documents=12)
        expected = depth_ranking_reference(C[:, flat], ll, 12)
        assert idx.tolist() == expected
        np.testing.assert_allclose(scores, C[expected, flat], rtol=1e-9, atol=1e-12)
        idx2, _ = grid.documents_near(sp.csr_matrix(X), int(flat), n_documents=12)
        np.testing.assert_array_equal(idx, idx2)
    idx, _ = grid.documents_near(X, (1, 1), n_documents=1000)
    assert sorted(idx.tolist()) == list(range(60)) and idx.dtype == np.int64
    with pytest.raises(ValueError, match="ranking"):
        grid.documents_near(X, 0, ranking="centre")


def test_documents_near_breaks_ties_by_loglik_per_token():
    """Documents centred on the cell for sure (score 1 to 3 decimals) are ordered by how
    well their window explains them, per token."""
    rng = np.random.default_rng(5)
    X, group = rng.poisson(0.3, size=(80, 12)), np.arange(80) % 4
    for k in range(4):
        X[group == k, 3 * k:3 * k + 3] += rng.poisson(15, size=(20, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid = countgrid.CountingGrid((5, 5), (2, 2), n_iter=10, random_state=0).fit(X)
    Q = grid.transform(X)
    ll = map_loglik_reference(X, grid.h_.reshape(25, -1), Q)
    C = depth_reference(Q.astype(np.float64), (5, 5), (2, 2))
    cell = int(np.argmax((C >= 0.9995).sum(axis=0)))
    tied = np.flatnonzero(np.floor(C[:, cell] * 1000 + 0.5) == 1000)
    assert len(tied) >= 10
    assert len(np.unique(ll[tied])) == len(tied)
    idx, scores = grid.documents_near(X, cell, n_documents=len(tied))
    assert sorted(idx.tolist()) == sorted(tied.tolist())
    assert np.all(np.diff(ll[idx]) <= 0)


def test_documents_near_coverage_ranking(grid_and_X):
    grid, X = grid_and_X
    S = coverage_reference(grid.transform(X).astype(np.float64), (6, 7), (2, 3))
    for cell in [(0, 0), (5, 6), (3, 2)]:
        flat = np.ravel_multi_index(cell, (6, 7))
        idx, scores = grid.documents_near(X, cell, n_documents=12, ranking="coverage")
        s = S[:, flat]
        expected = sorted(range(len(s)), key=lambda t: (-s[t], t))[:12]
        np.testing.assert_allclose(scores, s[expected], rtol=1e-9, atol=1e-12)
        # same order up to exact-score ties broken by lower index (rounding aside)
        np.testing.assert_allclose(s[idx], s[expected], rtol=1e-9, atol=1e-12)
        assert np.all(np.diff(scores) <= 0)
        idx2, _ = grid.documents_near(X, int(flat), n_documents=12, ranking="coverage")
        np.testing.assert_array_equal(idx, idx2)
    idx, scores = grid.documents_near(X, (1, 1), n_documents=1000, ranking="coverage")
    assert sorted(idx.tolist()) == list(range(60)) and idx.dtype == np.int64


@pytest.mark.parametrize("ranking", ["depth", "coverage"])
def test_documents_near_ties_by_lower_index(grid_and_X, ranking):
    grid, X = grid_and_X
    Xd = np.repeat(X[:3], 4, axis=0)[::-1].copy()      # each document 4 times
    idx, scores = grid.documents_near(sp.csr_matrix(Xd), (2, 2), n_documents=12,
                                      ranking=ranking)
    for k in range(0, 12, 4):
        assert scores[k] == scores[k + 3]
        assert idx[k:k + 4].tolist() == sorted(idx[k:k + 4].tolist())


def test_documents_near_validates(grid_and_X):
    grid, X = grid_and_X
    for cell in [(6, 0), (0, -1), 42, (1,)]:
        with pytest.raises(ValueError):
            grid.documents_near(X, cell)
    with pytest.raises(ValueError, match="n_documents"):
        grid.documents_near(X, 0, n_documents=0)
    with pytest.raises(TypeError, match="n_documents"):
        grid.documents_near(X, 0, n_documents=2.0)
    with pytest.raises(ValueError):
        grid.documents_near(X[:, :4], 0)
    with pytest.raises(NotFittedError):
        countgrid.CountingGrid((3, 3), (2, 2)).documents_near(X, 0)
