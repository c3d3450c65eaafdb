"""Counts larger than memory: sources of row chunks for out-of-core and online fits.

``CountingGrid.fit``, ``PLSA.fit`` and ``RAP.fit`` accept any :class:`ChunkSource` in
place of a matrix: they read it one chunk at a time, once per EM pass, so the corpus is
never loaded whole (docs/scale.md).  Three sources cover the usual cases:

- :class:`CSRChunks`: a list of matrices, or a function that returns a fresh iterable of
  matrices at every pass (a generator function reading your own files);
- :class:`NpzShards`: a folder (or list) of ``.npz`` shards written by
  ``scipy.sparse.save_npz``, :func:`write_npz_shards` or ``countgrid.text.Corpus.save``;
- :class:`MemmapCSR`: one CSR matrix in three flat binary files, read in row slices
  (:func:`write_memmap_csr` writes it, from a matrix or from any source).

Every chunk is validated as a count matrix when it is read (the same checks as an
in-memory ``X``); errors name the chunk.  A source on disk trusts nothing it reads: a
damaged folder or shard is a ValueError naming the file before anything is allocated from
what it claims (docs/robustness.md, the hostile suite).
"""
from countgrid.streaming._sources import (ChunkSource, CSRChunks, MemmapCSR, NpzShards,
                                          is_chunk_source, write_memmap_csr, write_npz_shards)

__all__ = ["ChunkSource", "CSRChunks", "NpzShards", "MemmapCSR", "write_memmap_csr",
           "write_npz_shards", "is_chunk_source"]
