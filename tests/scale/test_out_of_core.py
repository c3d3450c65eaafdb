"""One block step, several drivers: the out-of-core fit (chunk sources) gives the model of
the in-memory fit (docs/scale.md)."""
import numpy as np
import pytest

import countgrid
from countgrid.streaming import CSRChunks, write_memmap_csr, write_npz_shards

from _scale_data import grid_corpus

# float64: the paths are compared to 1e-10 (float32 agrees to its own precision)
GRID = dict(extent=(6, 6), window=(2, 2), n_iter=12, tol=0, random_state=3, dtype=np.float64)


def _rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(a)))


@pytest.fixture(scope="module")
def X():
    return grid_corpus(empty_rows=(5, 77))


@pytest.mark.parametrize("extra", [{}, {"learn_prior": True},
                                   {"window_schedule": [((3, 3), 4)]}])
def test_grid_chunks_equal_in_memory_float64(X, extra):
    full = countgrid.CountingGrid(**GRID, **extra).fit(X)
    chunked = countgrid.CountingGrid(**GRID, **extra).fit(
        CSRChunks([X[:101], X[101:102], X[102:]]))
    assert _rel(full.pi_, chunked.pi_) < 1e-10
    np.testing.assert_allclose(full.log_likelihood_, chunked.log_likelihood_, rtol=1e-12)
    assert full.pseudocount_ == chunked.pseudocount_
    if "learn_prior" in extra:
        assert _rel(full.prior_, chunked.prior_) < 1e-10
    # and the fit really used the data: far from the random start
    assert full.log_likelihood_[-1] > full.log_likelihood_[0] + 100


def test_grid_on_disk_sources_float32(X, tmp_path):
    kw = dict(GRID, dtype=np.float32)
    full = countgrid.CountingGrid(**kw).fit(X)
    for source in (write_memmap_csr(X, tmp_path / "mm", rows_per_chunk=64),
                   write_npz_shards(X, tmp_path / "shards", rows_per_shard=90)):
        model = countgrid.CountingGrid(**kw).fit(source)
        assert model.pi_.dtype == np.float32
        assert _rel(full.pi_, model.pi_) < 1e-4
        np.testing.assert_allclose(model.transform(X), full.transform(X), atol=1e-3)


@pytest.mark.parametrize("threads", [1, 2])
def test_grid_chunked_independent_of_threads(X, threads):
    source = CSRChunks([X[:150], X[150:]])
    one = countgrid.CountingGrid(**GRID, num_threads=1).fit(source)
    other = countgrid.CountingGrid(**GRID, num_threads=threads).fit(source)
    np.testing.assert_array_equal(one.pi_, other.pi_)


def test_plsa_chunks_equal_in_memory(X, tmp_path):
    # plain EM, the only batch EM a chunk source gets (tempered="auto" tempers in memory)
    kw = dict(n_components=4, n_iter=15, tol=0, random_state=1, tempered=False)
    full = countgrid.PLSA(**kw).fit(X)
    for source in (CSRChunks([X[:120], X[120:]]),
                   write_memmap_csr(X, tmp_path / "mm", rows_per_chunk=50)):
        model = countgrid.PLSA(**kw).fit(source)
        assert _rel(full.components_, model.components_) < 1e-10
        assert _rel(full.doc_topic_, model.doc_topic_) < 1e-10
        np.testing.assert_allclose(full.log_likelihood_, model.log_likelihood_, rtol=1e-12)


def test_plsa_random_init_and_chunks(X):
    kw = dict(n_components=3, n_iter=8, tol=0, random_state=0, init="random", tempered=False)
    full = countgrid.PLSA(**kw).fit(X)
    model = countgrid.PLSA(**kw).fit(CSRChunks([X[:7], X[7:]]))
    assert _rel(full.components_, model.components_) < 1e-10


def test_chunk_errors_name_the_chunk(X):
    bad = X[100:].toarray()
    bad[3, 2] = -1
    with pytest.raises(ValueError, match="chunk 1 of X"):
        countgrid.CountingGrid(**GRID).fit(CSRChunks([X[:100], bad]))
    with pytest.raises(ValueError, match="chunk 1 of X.*features"):
        countgrid.CountingGrid(**GRID).fit(CSRChunks([X[:100], X[100:, :30]]))
    with pytest.raises(ValueError, match="no rows"):
        countgrid.CountingGrid(**GRID).fit(CSRChunks([]))
    with pytest.raises(ValueError, match="tempered=True"):
        countgrid.PLSA(tempered=True).fit(CSRChunks([X]))


def test_out_of_core_memory_is_one_chunk(X, tmp_path):
    """The source is read lazily: a chunk is requested only when the fit reaches it."""
    seen = []

    def chunks():
        for r0 in range(0, X.shape[0], 100):
            seen.append(r0)
            yield X[r0:r0 + 100]
    countgrid.CountingGrid(**dict(GRID, n_iter=2)).fit(CSRChunks(chunks))
    # a scan, then one pass per E-step: 2 updates + the final log-likelihood
    assert seen == [0, 100, 200] * 4


def test_rap_reads_chunk_sources(X):
    kw = dict(n_components=5, batch_size=50, random_state=0, learning_rate=1e-3)
    whole = countgrid.RAP(**kw).partial_fit(X)
    chunked = countgrid.RAP(**kw).partial_fit(CSRChunks([X[:100], X[100:]]))
    np.testing.assert_array_equal(whole.components_, chunked.components_)
    assert whole.n_updates_ == chunked.n_updates_ == 6
    model = countgrid.RAP(**dict(kw, n_epochs=3)).fit(CSRChunks([X[:150], X[150:]]))
    again = countgrid.RAP(**dict(kw, n_epochs=3)).fit(CSRChunks([X[:150], X[150:]]))
    np.testing.assert_array_equal(model.components_, again.components_)
    assert model.n_updates_ == 3 * (3 + 3) and model.n_iter_ == 3
    assert np.isfinite(model.score_samples(X)).all()
