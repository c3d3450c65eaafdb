"""A dask array without a dask.distributed client is a clear error (not a hang)."""
import os

import pytest

import countgrid

from _scale_data import grid_corpus

if os.environ.get("CI") == "true":
    import dask.array as da
else:
    da = pytest.importorskip("dask.array")
    pytest.importorskip("distributed")


def test_dask_without_client_is_a_clear_error():
    from distributed import default_client
    with pytest.raises(ValueError):
        default_client()                # no client left by other tests
    X = da.from_array(grid_corpus(n_docs=40), chunks=(20, -1), asarray=False)
    with pytest.raises(ValueError, match="no dask.distributed Client"):
        countgrid.CountingGrid((4, 4), (2, 2)).fit(X)
