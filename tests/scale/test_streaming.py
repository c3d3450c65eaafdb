"""Chunk sources (countgrid.streaming): what they yield, what they refuse."""
import json
import os

import numpy as np
import pytest
import scipy.sparse as sp

from countgrid.streaming import (CSRChunks, MemmapCSR, NpzShards, write_memmap_csr,
                                 write_npz_shards)


def _counts(n=57, m=13, seed=0):
    rng = np.random.default_rng(seed)
    return sp.csr_matrix(rng.poisson(0.7, size=(n, m)).astype(np.float64))


def _stack(source):
    return sp.vstack(list(source.chunks()), format="csr")


def test_csr_chunks_list_and_function_are_reiterable():
    X = _counts()
    listed = CSRChunks([X[:20], X[20:]])
    made = CSRChunks(lambda: (X[i:i + 10] for i in range(0, X.shape[0], 10)))
    for source in (listed, made):
        for _ in range(2):      # every pass sees all rows again
            assert (_stack(source) != X).nnz == 0
    assert [c.shape[0] for c in made] == [10, 10, 10, 10, 10, 7]


def test_csr_chunks_refuses_a_generator():
    X = _counts()
    with pytest.raises(TypeError, match="chunks must be a list.*function"):
        CSRChunks(X[i:i + 10] for i in range(0, 50, 10))


@pytest.mark.parametrize("rows", [1, 7, 57, 1000])
def test_memmap_roundtrip(tmp_path, rows):
    X = _counts()
    source = write_memmap_csr(X, tmp_path / "mm", rows_per_chunk=rows)
    assert source.shape == X.shape and source.n_features == X.shape[1]
    chunks = list(source.chunks())
    assert all(c.shape[0] <= rows for c in chunks)
    assert (sp.vstack(chunks) != X).nnz == 0
    again = MemmapCSR(tmp_path / "mm", rows_per_chunk=5)
    assert (_stack(again) != X).nnz == 0


def test_memmap_from_a_source_and_values_kept(tmp_path):
    X = _counts()
    X.data = X.data * 0.5             # non-integer counts survive
    source = write_memmap_csr(CSRChunks([X[:30], X[30:]]), tmp_path / "mm", rows_per_chunk=8)
    np.testing.assert_array_equal(_stack(source).toarray(), X.toarray())


def test_memmap_errors(tmp_path):
    X = _counts()
    write_memmap_csr(X, tmp_path / "mm")
    with pytest.raises(FileNotFoundError, match="csr.json"):
        MemmapCSR(tmp_path / "nothing")
    with pytest.raises(ValueError, match="rows_per_chunk must be >= 1"):
        MemmapCSR(tmp_path / "mm", rows_per_chunk=0)
    with pytest.raises(TypeError, match="rows_per_chunk must be an int"):
        MemmapCSR(tmp_path / "mm", rows_per_chunk=2.5)
    data = tmp_path / "mm" / "data.bin"
    data.write_bytes(data.read_bytes()[:-8])
    with pytest.raises(ValueError, match="data.bin.*truncated"):
        MemmapCSR(tmp_path / "mm")
    (tmp_path / "mm" / "csr.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(ValueError, match="not a countgrid memmap CSR"):
        MemmapCSR(tmp_path / "mm")
    (tmp_path / "mm" / "csr.json").write_text("{")
    with pytest.raises(ValueError, match="not a countgrid memmap CSR"):
        MemmapCSR(tmp_path / "mm")


def test_write_refuses_mismatched_chunks(tmp_path):
    X = _counts()
    with pytest.raises(ValueError, match="chunk 1 of X has 12 columns"):
        write_memmap_csr(CSRChunks([X[:10], X[10:, :12]]), tmp_path / "mm")


def test_npz_shards_folder_order_and_corpus_files(tmp_path):
    X = _counts()
    shards = write_npz_shards(X, tmp_path / "shards", rows_per_shard=20)
    assert [os.path.basename(p) for p in shards.paths] == [
        "shard-00000.npz", "shard-00001.npz", "shard-00002.npz"]
    assert (_stack(NpzShards(tmp_path / "shards")) != X).nnz == 0
    from countgrid.text import Corpus
    corpus = Corpus(X[:30], [f"w{i}" for i in range(X.shape[1])])
    corpus.save(tmp_path / "c.npz")
    mixed = NpzShards([tmp_path / "c.npz", tmp_path / "shards" / "shard-00002.npz"])
    assert [c.shape[0] for c in mixed] == [30, 17]
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="contains no .npz"):
        NpzShards(tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match="no such file"):
        NpzShards([tmp_path / "missing.npz"])
