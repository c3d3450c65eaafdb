"""Sparse posteriors in the counting-grid statistics (posterior_top_k, docs/scale.md)."""
import numpy as np
import pytest

import countgrid
from countgrid.grid._em import GridStatistics, block_statistics, grid_counts
from countgrid.streaming import CSRChunks

from _reference.grid import (accumulate_topk_ref, estep_ref, histograms_ref,
                             topk_posterior_ref)
from _scale_data import grid_corpus


@pytest.fixture(scope="module")
def X():
    return grid_corpus(n_docs=200, empty_rows=(7,))


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-10), (np.float32, 2e-4)])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("k", [1, 5, 36])
def test_block_statistics_top_k_matches_reference(X, dtype, rtol, threads, k):
    rng = np.random.default_rng(1)
    pi = rng.dirichlet(np.ones(X.shape[1]), size=36).T.copy()
    h, logh = histograms_ref(pi, (6, 6), (2, 2))
    counts = grid_counts(X, np.dtype(dtype))
    stats = GridStatistics(X.shape[1], 36, np.dtype(dtype), False)
    block_statistics(counts, logh.astype(dtype), None, 0.0, threads, stats, top_k=k)
    q, loglik = estep_ref(X.toarray(), logh)
    idx, val = topk_posterior_ref(q, k)
    expected = accumulate_topk_ref(X.toarray(), idx, val, 36)
    np.testing.assert_allclose(stats.n, expected, rtol=rtol, atol=1e-12)
    assert stats.log_likelihood == pytest.approx(loglik.sum(), rel=1e-6 if dtype ==
                                                 np.float32 else 1e-12)
    # every document keeps its mass: column sums of n are the word totals
    np.testing.assert_allclose(stats.n.sum(axis=1), np.asarray(X.sum(axis=0)).ravel(),
                               rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_top_k_fit(X):
    kw = dict(extent=(6, 6), window=(2, 2), n_iter=15, tol=0, random_state=0)
    dense = countgrid.CountingGrid(**kw).fit(X)
    everything = countgrid.CountingGrid(**kw, posterior_top_k=36).fit(X)
    sparse = countgrid.CountingGrid(**kw, posterior_top_k=4).fit(X)
    np.testing.assert_allclose(everything.pi_, dense.pi_, rtol=1e-9, atol=1e-14)
    assert not np.allclose(sparse.pi_, dense.pi_)            # it did cut the posteriors
    # ... at a small cost in fit
    assert sparse.log_likelihood_[-1] > dense.log_likelihood_[-1] * 1.01
    chunked = countgrid.CountingGrid(**kw, posterior_top_k=4).fit(
        CSRChunks([X[:90], X[90:]]))
    np.testing.assert_allclose(chunked.pi_, sparse.pi_, rtol=1e-10, atol=1e-15)
    online = countgrid.CountingGrid(**dict(kw, n_iter=2), posterior_top_k=4,
                                    learning_method="online", batch_size=50).fit(X)
    assert np.isfinite(online.log_likelihood_).all()


def test_top_k_checked():
    with pytest.raises(ValueError, match="posterior_top_k"):
        countgrid.CountingGrid((4, 4), (2, 2), posterior_top_k=0).fit(np.ones((3, 4)))
    with pytest.raises(TypeError, match="posterior_top_k"):
        countgrid.CountingGrid((4, 4), (2, 2), posterior_top_k=2.5).fit(np.ones((3, 4)))
