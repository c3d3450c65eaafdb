"""The distributed fit on a real LocalCluster with 2 worker processes (docs/scale.md):
the same model as in memory, whatever the scheduling; transform returns a dask array."""
import os

import numpy as np
import pytest

import countgrid
from countgrid.streaming import CSRChunks

from _scale_data import grid_corpus

if os.environ.get("CI") == "true":
    import dask.array as da                         # noqa: F401  (must run in CI)
    from distributed import Client, LocalCluster
else:
    da = pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    Client, LocalCluster = distributed.Client, distributed.LocalCluster

# float64: the paths are compared to 1e-10 (float32 agrees to its own precision)
GRID = dict(extent=(6, 6), window=(2, 2), n_iter=10, tol=0, random_state=4, dtype=np.float64)


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def X():
    return grid_corpus(n_docs=260, empty_rows=(3,))


def _dask(X, rows):
    return da.from_array(X, chunks=(rows, -1), asarray=False)


def _rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(a)))


@pytest.mark.parametrize("extra", [{}, {"learn_prior": True},
                                   {"estep": "coarse-to-fine",
                                    "estep_params": {"stride": 2, "exact_iter": 3}},
                                   {"accelerate": True, "subsample": 0.5}])
def test_grid_dask_equals_in_memory(client, X, extra):
    """The distributed fit is the in-memory one; its coarse-to-fine E-step keeps no
    per-document state and searches every pass, asked to track or not (the in-memory
    one without tracking)."""
    full = countgrid.CountingGrid(**GRID, **extra).fit(X)
    if "estep_params" in extra:
        extra = {**extra, "estep_params": {**extra["estep_params"], "track": True}}
    dist = countgrid.CountingGrid(**GRID, **extra).fit(_dask(X, 70))
    assert _rel(full.pi_, dist.pi_) < 1e-10
    np.testing.assert_allclose(full.log_likelihood_, dist.log_likelihood_, rtol=1e-12)
    Q = dist.transform(_dask(X, 100))
    assert isinstance(Q, da.Array) and Q.shape == (X.shape[0], 36)
    np.testing.assert_allclose(Q.compute(), dist.transform(X), rtol=1e-12, atol=1e-15)


def test_grid_dask_same_blocks_same_bits(client, X):
    """The statistics are summed in a fixed tree over the blocks: the result does not
    depend on which worker ran what (two runs, and a run with the blocks' tasks in a
    different order of completion, agree bit for bit)."""
    one = countgrid.CountingGrid(**GRID).fit(_dask(X, 50))
    two = countgrid.CountingGrid(**GRID).fit(_dask(X, 50))
    np.testing.assert_array_equal(one.pi_, two.pi_)
    chunked = countgrid.CountingGrid(**GRID).fit(
        CSRChunks([X[r:r + 50] for r in range(0, X.shape[0], 50)]))
    assert _rel(one.pi_, chunked.pi_) < 1e-10


def test_plsa_dask_equals_in_memory(client, X):
    # plain EM, the only batch EM a dask array gets (tempered="auto" tempers in memory)
    kw = dict(n_components=4, n_iter=12, tol=0, random_state=2, tempered=False)
    full = countgrid.PLSA(**kw).fit(X)
    dist = countgrid.PLSA(**kw).fit(_dask(X, 90))
    assert _rel(full.components_, dist.components_) < 1e-10
    assert isinstance(dist.doc_topic_, da.Array)
    assert _rel(full.doc_topic_, dist.doc_topic_.compute()) < 1e-10
    theta = dist.transform(_dask(X, 90))
    assert isinstance(theta, da.Array)
    np.testing.assert_allclose(theta.compute(), full.transform(X), atol=1e-9)


def test_dask_errors(client, X):
    with pytest.raises(ValueError, match="learning_method='batch'"):
        countgrid.CountingGrid(**GRID, learning_method="online").fit(_dask(X, 70))
    with pytest.raises(ValueError, match="tempered=False"):
        countgrid.PLSA(tempered=True).fit(_dask(X, 70))
    bad = X.toarray()
    bad[100, 0] = np.nan
    with pytest.raises(ValueError, match="block 1 of X"):
        countgrid.CountingGrid(**GRID).fit(da.from_array(bad, chunks=(70, -1)))

