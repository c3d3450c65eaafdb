"""What the layers above the models read of a fitted grid (countgrid.grid.visit_posteriors
and window_loglik, issue 23): the posteriors of transform, block by block, and the
per-token log-likelihood of each document in a given window."""
import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.grid import visit_posteriors, window_loglik


@pytest.fixture(scope="module")
def grid_and_counts():
    X = np.random.default_rng(3).poisson(0.8, size=(70, 12)).astype(float)
    X[5] = 0                                       # an empty document
    grid = countgrid.CountingGrid((5, 6), (2, 2), n_iter=5, tol=0, random_state=0).fit(X)
    return grid, X


def test_blocks_are_the_posteriors_of_transform(grid_and_counts, monkeypatch):
    grid, X = grid_and_counts
    import countgrid.grid._em as em
    monkeypatch.setattr(em, "block_rows", lambda T, L: 16)     # several blocks
    spans, q, ll = [], [], []

    def visit(t0, t1, qb, llb):
        spans.append((t0, t1))
        q.append(qb.copy())
        ll.append(llb.copy())

    Xs = sp.csr_matrix(X)
    loglik = visit_posteriors(grid, Xs, visit)
    assert spans == [(0, 16), (16, 32), (32, 48), (48, 64), (64, 70)]
    np.testing.assert_array_equal(np.concatenate(q), grid.transform(Xs))
    np.testing.assert_array_equal(np.concatenate(ll), loglik)
    assert loglik.shape == (70,) and np.all(loglik <= 0)


def test_window_loglik_is_the_per_token_loglik_in_the_window(grid_and_counts):
    grid, X = grid_and_counts
    windows = np.random.default_rng(0).integers(0, 30, size=70)
    h = np.asarray(grid.h_, dtype=np.float64).reshape(30, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = (X * np.log(h[windows])).sum(axis=1) / X.sum(axis=1)
    dense = window_loglik(grid, X, windows)
    sparse = window_loglik(grid, sp.csr_matrix(X), windows)
    keep = np.arange(70) != 5
    np.testing.assert_allclose(dense[keep], expected[keep], rtol=1e-12)
    np.testing.assert_allclose(sparse[keep], expected[keep], rtol=1e-12)
    assert dense[5] == sparse[5] == -np.inf


def test_bad_arguments_are_named(grid_and_counts):
    grid, X = grid_and_counts
    with pytest.raises(TypeError, match="CountingGrid"):
        visit_posteriors(countgrid.PLSA(2), X, lambda *a: None)
    with pytest.raises(countgrid.NotFittedError):
        visit_posteriors(countgrid.CountingGrid((5, 6), (2, 2)), X, lambda *a: None)
    with pytest.raises(ValueError, match="one per document"):
        window_loglik(grid, X, np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match=r"\[0, 30\)"):
        window_loglik(grid, X, np.full(70, 30))


@pytest.mark.parametrize("num_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_largest_posteriors_are_those_of_a_stable_sort(grid_and_counts, dtype, num_threads):
    """The selection of the map's truncated posteriors (and countgrid.external's) against
    a full stable sort: the same positions in the same order (ties by the lower position, also
    among the ties at the k-th value, which a partition alone keeps at random) and the
    entries of q themselves, on a fitted grid's posteriors (a bump above the floor) and on
    rows with ties, zeros and a single value."""
    from countgrid.grid._posteriors import largest_posteriors

    grid, X = grid_and_counts
    rng = np.random.default_rng(5)
    q = grid.transform(X).astype(dtype)
    ties = rng.integers(0, 3, size=(6, q.shape[1])).astype(dtype)
    ties[:, 0] += 1                                # a positive entry in every row
    ties[1] = 1                                    # one value
    rows = np.ascontiguousarray(np.vstack([q, ties / ties.sum(axis=1, keepdims=True)]))
    for k in (1, 3, 8, 29, 30, 45):
        kk = min(k, rows.shape[1])
        ref_pos = np.argsort(-rows, axis=1, kind="stable")[:, :kk]
        ref_val = np.take_along_axis(rows, ref_pos, axis=1)
        pos, val = largest_posteriors(rows, k, num_threads)
        assert pos.shape == (len(rows), kk) and val.dtype == dtype
        np.testing.assert_array_equal(pos, ref_pos, err_msg=f"k={k}")
        np.testing.assert_array_equal(val, ref_val, err_msg=f"k={k}")
