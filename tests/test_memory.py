"""countgrid._utils.memory: estimates are checked before allocating, and what is too large is a
MemoryError that names the operation and gives advice."""
import numpy as np
import scipy.sparse as sp
import pytest

import countgrid
from countgrid._utils.memory import available_memory, check_memory, format_bytes

from _expected_warnings import FEW_ITERATIONS


def test_available_memory_is_positive_on_linux():
    avail = available_memory()
    assert avail is None or avail > 0


def test_env_limit(monkeypatch):
    monkeypatch.setenv("COUNTGRID_MAX_MEMORY", "1.5M")
    assert available_memory() <= 1.5 * 2**20
    check_memory(2**20, "a small thing")
    with pytest.raises(MemoryError, match=r"a big thing needs about 2\.0 MiB.*use less"):
        check_memory(2 * 2**20, "a big thing", "use less")
    monkeypatch.setenv("COUNTGRID_MAX_MEMORY", "lots")
    with pytest.raises(ValueError, match="COUNTGRID_MAX_MEMORY"):
        available_memory()


def test_format_bytes():
    assert format_bytes(512) == "512 B"
    assert format_bytes(3 * 2**30) == "3.0 GiB"
    assert format_bytes(2**100).endswith("PiB")


def test_sizes_beyond_any_machine_never_overflow():
    with pytest.raises(MemoryError):
        check_memory(2**200, "an absurd operation")


@pytest.fixture
def X():
    return np.random.default_rng(0).poisson(1.0, (20, 30))


@pytest.mark.parametrize("extent", [(2**40, 2**40), (100_000, 100_000), (2**21,) * 3])
def test_absurd_grids_are_a_memory_error_before_allocating(X, extent):
    with pytest.raises(MemoryError, match="counting grid of extent.*float32"):
        countgrid.CountingGrid(extent, (2,) * len(extent), n_iter=2).fit(X)


def test_plsa_absurd_topics(X):
    with pytest.raises(MemoryError, match="n_components"):
        countgrid.PLSA(10**9).fit(X)


@FEW_ITERATIONS
def test_transform_output_too_large(X, monkeypatch):
    cg = countgrid.CountingGrid((16, 16), (3, 3), n_iter=2, random_state=0).fit(X)
    monkeypatch.setenv("COUNTGRID_MAX_MEMORY", "10K")
    with pytest.raises(MemoryError, match="posteriors of 20 documents over 256 positions"):
        cg.transform(X)


@FEW_ITERATIONS
def test_plsa_out_of_core_needs_no_memory_per_entry_and_topic(monkeypatch):
    """pLSA's kernels form the responsibilities on the fly: out of core, its estimate is
    the documents' and words' arrays, not n_nonzero x n_components (which refused the
    scATAC benchmark's 800M non-zeros x 20 topics as 59 GiB)."""
    from countgrid.streaming import CSRChunks
    X = sp.csr_matrix(np.random.default_rng(0).poisson(3.0, (200, 50)).astype(np.float32))
    monkeypatch.setenv("COUNTGRID_MAX_MEMORY", "500K")   # nnz x K x 4 bytes alone is 800K
    chunks = CSRChunks([X[:100], X[100:]])
    model = countgrid.PLSA(20, tempered=False, n_iter=2, dtype=np.float32,
                           random_state=0).fit(chunks)
    assert model.doc_topic_.shape == (200, 20)
    monkeypatch.setenv("COUNTGRID_MAX_MEMORY", "50K")
    with pytest.raises(MemoryError, match="n_components"):
        countgrid.PLSA(20, tempered=False, n_iter=2, random_state=0).fit(chunks)
