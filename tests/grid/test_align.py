"""countgrid.grid.align against the literal reference of tests/_reference/align.py, exact
recovery of constructed symmetries, and the maps of cells and window positions
(docs/counting_grids.md, "Aligning two grids")."""
import itertools

import numpy as np
import pytest

import countgrid
from countgrid.grid import GridAlignment, align
from _expected_warnings import FEW_ITERATIONS, LARGE_GRID
from _reference.align import align_ref


def _moved(pi, axes, flips, shift):
    out = np.transpose(pi, tuple(axes) + (pi.ndim - 1,))
    for d, f in enumerate(flips):
        if f:
            out = np.flip(out, axis=d)
    return np.roll(out, shift, axis=tuple(range(len(shift))))


@pytest.mark.parametrize("extent", [(5, 5), (4, 6), (7,), (3, 3, 2)])
@pytest.mark.parametrize("seed", [0, 1])
def test_matches_reference(extent, seed):
    rng = np.random.default_rng(seed)
    a = rng.dirichlet(np.full(7, 0.5), size=extent)
    b = rng.dirichlet(np.full(7, 0.5), size=extent) * rng.uniform(1, 3, size=extent + (1,))
    got = align(a, b)
    scores, cands, best, shift = align_ref(a, b)
    assert got.candidates == cands
    np.testing.assert_allclose(got.scores, scores, rtol=1e-10)
    assert (got.axes, got.flips) == cands[best] and got.shift == shift
    assert got.similarity == pytest.approx(scores[best], rel=1e-10)
    # the aligned grid is a's cells in b's frame: its cell similarities are the score
    An = a / a.sum(-1, keepdims=True)
    Bn = b / b.sum(-1, keepdims=True)
    cell = np.sqrt(got.aligned / got.aligned.sum(-1, keepdims=True) * Bn).sum(-1)
    np.testing.assert_allclose(got.cell_similarity, cell, rtol=1e-10)
    np.testing.assert_allclose(got.aligned.sum(-1).sum(), a.sum(-1).sum(), rtol=1e-12)
    # chance: the mean coefficient over every pair of cells, one from each grid
    pairs = np.sqrt(An.reshape(-1, 1, 7) * Bn.reshape(1, -1, 7)).sum(-1)
    assert got.chance_similarity == pytest.approx(pairs.mean(), rel=1e-12)
    assert np.isclose(An.sum(), np.prod(extent))
    for flips, transpose in [(False, True), (True, False), (False, False)]:
        s2, c2, b2, t2 = align_ref(a, b, flips=flips, transpose=transpose)
        r2 = align(a, b, flips=flips, transpose=transpose)
        assert r2.candidates == c2 and (r2.axes, r2.flips) == c2[b2] and r2.shift == t2


@pytest.mark.parametrize("extent", [(6, 6), (5, 8), (9,), (4, 4, 3)])
def test_constructed_symmetries_are_recovered_exactly(extent):
    rng = np.random.default_rng(3)
    a = rng.dirichlet(np.full(11, 0.3), size=extent)
    n = len(extent)
    for axes in itertools.permutations(range(n)):
        if any(extent[axes[d]] != extent[d] for d in range(n)):
            continue
        for flips in itertools.product((False, True), repeat=n):
            shift = tuple(int(rng.integers(e)) for e in extent)
            b = _moved(a, axes, flips, shift)
            r = align(a, b)
            assert (r.axes, r.flips, r.shift) == (axes, flips, shift)
            assert r.similarity == pytest.approx(1.0, abs=1e-12)
            np.testing.assert_array_equal(r.aligned, b)
            # every cell of a lands where the constructed map sent it
            cells = np.stack(np.unravel_index(np.arange(a[..., 0].size), extent), axis=-1)
            landed = r.cells(cells)
            np.testing.assert_array_equal(b[tuple(landed.T)], a[tuple(cells.T)])


def test_window_positions_follow_their_cells():
    rng = np.random.default_rng(4)
    a = rng.dirichlet(np.ones(5), size=(7, 7))
    window = (3, 2)
    b = _moved(a, (1, 0), (True, False), (2, 5))
    r = align(a, b)
    corners = np.stack(np.unravel_index(np.arange(49), (7, 7)), axis=-1)
    mapped = r.positions(corners, window)
    wb = (window[1], window[0])                 # b's window: the axes swapped
    for c, m in zip(corners, mapped):
        covered = {tuple(x) for x in r.cells(np.array(
            [[(c[0] + i) % 7, (c[1] + j) % 7] for i in range(window[0])
             for j in range(window[1])]))}
        in_b = {((m[0] + i) % 7, (m[1] + j) % 7) for i in range(wb[0]) for j in range(wb[1])}
        assert covered == in_b


@FEW_ITERATIONS
@LARGE_GRID
def test_two_fits_of_one_corpus():
    rng = np.random.default_rng(5)
    phi = rng.dirichlet(np.full(30, 0.1), size=4)
    X = np.stack([rng.multinomial(40, phi[i % 4]) for i in range(120)])
    g1 = countgrid.CountingGrid((8, 8), (3, 3), n_iter=15, random_state=1).fit(X)
    g2 = countgrid.CountingGrid((8, 8), (3, 3), n_iter=15, random_state=2).fit(X)
    r = align(g1, g2)
    assert isinstance(r, GridAlignment) and "similarity=" in repr(r)
    identity = r.scores[0]                      # the identity map, its best translation
    assert r.similarity >= identity and r.similarity > 0.5
    assert r.aligned.shape == g2.pi_.shape
    np.testing.assert_allclose(r.cell_similarity.mean(), r.similarity, rtol=1e-12)
    # a classifier's grid is accepted, and the result does not depend on how a is given
    y = np.arange(120) % 2
    clf = countgrid.CountingGridClassifier((8, 8), (3, 3), n_iter=5, random_state=1).fit(X, y)
    assert align(clf, g2, on="cells").similarity == align(clf.grid_.pi_, g2.pi_).similarity
    assert align(clf, g2).similarity == align(clf.grid_.h_, g2.h_).similarity


def _window_means(pi, window):
    """h of cells ``pi``: the mean of the cells k + [0, window) on the torus, written out."""
    E = pi.shape[:-1]
    h = np.zeros_like(pi, dtype=np.float64)
    for k in np.ndindex(*E):
        for o in np.ndindex(*window):
            h[k] += pi[tuple((k[d] + o[d]) % E[d] for d in range(len(E)))]
    return h / np.prod(window)


@FEW_ITERATIONS
@LARGE_GRID
@pytest.mark.parametrize("axes, flips", [((0, 1), (False, False)), ((0, 1), (True, False)),
                                         ((1, 0), (False, True)), ((1, 0), (True, True))])
def test_windows_of_a_fitted_grid_give_the_cells_map(axes, flips):
    rng = np.random.default_rng(8)
    X = rng.poisson(0.8, size=(80, 20))
    a = countgrid.CountingGrid((7, 7), (3, 2), n_iter=6, window_schedule=None,
                               dtype=np.float64, random_state=0).fit(X)
    np.testing.assert_allclose(a.h_, _window_means(a.pi_, (3, 2)), rtol=1e-10)
    shift = (4, 2)
    moved = _moved(a.pi_, axes, flips, shift)
    b_windows = _window_means(moved, tuple(a.window[i] for i in axes))
    r = align(a, b_windows)                     # a's windows against b's, as given
    assert (r.axes, r.flips, r.shift) == (axes, flips, shift)
    assert r.similarity == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_array_equal(r.aligned, moved)


def test_errors_name_their_argument():
    rng = np.random.default_rng(6)
    a = rng.dirichlet(np.ones(5), size=(4, 4))
    with pytest.raises(ValueError, match="a has 5 words and b 6"):
        align(a, rng.dirichlet(np.ones(6), size=(4, 4)))
    with pytest.raises(ValueError, match="extent"):
        align(a, rng.dirichlet(np.ones(5), size=(4, 5)))
    with pytest.raises(ValueError, match="extent"):
        align(rng.dirichlet(np.ones(5), size=(4, 5)), rng.dirichlet(np.ones(5), size=(5, 4)),
              transpose=False)
    with pytest.raises(ValueError, match="b must hold finite, non-negative"):
        align(a, -a)
    with pytest.raises(ValueError, match="a must hold finite"):
        align(np.where(a > 0.5, np.nan, a), a)
    with pytest.raises(ValueError, match="b has a cell whose word weights sum to 0"):
        align(a, np.where(np.arange(16).reshape(4, 4, 1) == 3, 0.0, a))
    with pytest.raises(ValueError, match="a must have shape extent"):
        align(np.ones(5), a)
    with pytest.raises(TypeError, match="a must be a fitted CountingGrid"):
        align(object(), a)
    with pytest.raises(ValueError, match="on must be 'windows' or 'cells'"):
        align(a, a, on="h")
    with pytest.raises(TypeError, match="flips and transpose must be bool"):
        align(a, a, flips=1)
    with pytest.raises(countgrid.NotFittedError):
        align(countgrid.CountingGrid((4, 4), (2, 2)), a)
    r = align(a, a)
    with pytest.raises(ValueError, match="index must be integers with 2"):
        r.cells(np.zeros((3, 3), dtype=int))
    with pytest.raises(ValueError, match="window must have 2 entries"):
        r.positions(np.zeros((3, 2), dtype=int), (2, 2, 2))
