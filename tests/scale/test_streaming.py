"""Chunk sources (countgrid.streaming): what they yield, what they refuse."""
import io
import json
import os
import re
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp

from countgrid.streaming import (CSRChunks, MemmapCSR, NpzShards, write_memmap_csr,
                                 write_npz_shards)

from _expected_warnings import FEW_ITERATIONS


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


# ---------------------------------------------------------------- hostile input (issue 14)
# Regression tests of what the hostile suite found (tests/hostile/_hostile_scale.py).
import pickle  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402

import countgrid  # noqa: E402
from countgrid.streaming import ChunkSource  # noqa: E402

_GRID = dict(extent=(3, 3), window=(2, 2), n_iter=3, random_state=0, num_threads=1,
             dtype=np.float64)


@pytest.mark.parametrize("made, what", [(None, "NoneType"), (5, "int"),
                                        ("matrix", "one csr_matrix")])
def test_chunk_function_must_return_an_iterable_of_matrices(made, what):
    X = _counts()
    source = CSRChunks(lambda: X if made == "matrix" else made)
    with pytest.raises(TypeError, match=f"chunks: the function returned {what}"):
        countgrid.CountingGrid(**_GRID).fit(source)


def test_a_source_read_only_once_is_refused_not_fitted_on_nothing():
    # before: the counting pass emptied the iterator and EM fitted on no document
    X = _counts()
    for est in (countgrid.CountingGrid(**_GRID), countgrid.PLSA(2, n_iter=3),
                countgrid.CountingGrid(**_GRID, learning_method="online", batch_size=8),
                countgrid.RAP(2, n_epochs=1)):
        it = iter([X[:30], X[30:]])
        with pytest.raises(ValueError, match="0 documents .* in this pass, but 57 documents"
                                             ".* same chunks at every pass"):
            est.fit(CSRChunks(lambda: it))
        assert not hasattr(est, "n_features_in_")
    model = countgrid.PLSA(2).partial_fit(X)
    before = model.components_.copy()
    it = iter([X[:30], X[30:]])
    with pytest.raises(ValueError, match="same chunks at every pass"):
        model.partial_fit(CSRChunks(lambda: it))
    np.testing.assert_array_equal(model.components_, before)


def test_a_source_that_grows_between_passes_is_refused():
    X = _counts()
    calls = []

    def chunks():
        calls.append(1)
        return iter([X] * len(calls))
    with pytest.raises(ValueError, match="more than 57 documents by chunk 1"):
        countgrid.PLSA(2, n_iter=3).fit(CSRChunks(chunks))


@FEW_ITERATIONS
def test_chunks_without_rows_are_skipped():
    X = _counts()
    full = countgrid.CountingGrid(**_GRID).fit(X)
    source = CSRChunks([sp.csr_matrix((0, 0)), X[:0], X[:20], X[20:20], np.zeros((0, 13)),
                        X[20:]])
    chunked = countgrid.CountingGrid(**_GRID).fit(source)
    np.testing.assert_allclose(chunked.pi_, full.pi_, rtol=1e-10)
    with pytest.raises(ValueError, match="no rows"):
        countgrid.CountingGrid(**_GRID).fit(CSRChunks([X[:0], X[:0]]))


def test_custom_sources_are_checked():
    X = _counts()

    class NoIterable(ChunkSource):
        def chunks(self):
            return None

    class BadWidth(ChunkSource):
        n_features = "13"

        def chunks(self):
            return iter([X])
    with pytest.raises(TypeError, match=r"NoIterable.chunks\(\) returned NoneType"):
        countgrid.PLSA(2).fit(NoIterable())
    with pytest.raises(TypeError, match="X.n_features must be None or an int"):
        countgrid.PLSA(2).fit(BadWidth())


def test_column_totals_check_memory_first(monkeypatch):
    # before: numpy's MemoryError (22.4 GiB for the column totals) naming nothing; the
    # limit keeps this test from allocating on a machine that has the 22.4 GiB
    monkeypatch.setenv("COUNTGRID_MAX_MEMORY", "1G")
    n = 4
    X = sp.csr_matrix((np.ones(n), np.arange(n) * 7, np.arange(n + 1)), shape=(n, 3 * 10**9))
    with pytest.raises(MemoryError, match="3000000000 (features|words)"):
        countgrid.PLSA(2).partial_fit(X)


def _run_isolated(code):
    """Run ``code`` in a fresh interpreter (a SIGBUS there fails this test, not the
    session)."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, f"exit status {r.returncode}: {r.stderr[-2000:]}"
    return r.stdout


def test_memmap_files_changed_after_opening_raise_instead_of_crashing(tmp_path):
    # before: the files were memory-mapped, and reading a truncated one killed the process
    # with SIGBUS
    out = _run_isolated(f"""
        import numpy as np, scipy.sparse as sp
        import countgrid
        from countgrid.streaming import write_memmap_csr
        X = sp.random(3000, 12, density=0.5, format="csr", random_state=0,
                      data_rvs=lambda n: np.ones(n))
        for case in ("before-fit", "during-pass", "rewritten"):
            d = {str(tmp_path)!r} + "/" + case
            source = write_memmap_csr(X, d, rows_per_chunk=1000)
            try:
                if case == "before-fit":
                    open(d + "/data.bin", "wb").close()
                    countgrid.CountingGrid((3, 3), (2, 2), n_iter=2).fit(source)
                elif case == "during-pass":
                    chunks = source.chunks()
                    next(chunks)
                    open(d + "/data.bin", "wb").close()
                    list(chunks)
                else:
                    write_memmap_csr(X[:10], d)
                    countgrid.PLSA(2, n_iter=2).fit(source)
            except ValueError as exc:
                print(case, "|", exc)
    """)
    lines = dict(line.split(" | ", 1) for line in out.strip().splitlines())
    assert set(lines) == {"before-fit", "during-pass", "rewritten"}, out
    assert "data.bin' has 0 bytes, expected 144000" in lines["before-fit"]
    assert "data.bin' ended after" in lines["during-pass"]
    assert "changed after it was opened" in lines["during-pass"]
    assert "indptr.bin' has 88 bytes, expected 24008" in lines["rewritten"]


def _meta(tmp_path, **over):
    X = _counts()
    write_memmap_csr(X, tmp_path / "mm")
    path = tmp_path / "mm" / "csr.json"
    meta = json.loads(path.read_text())
    meta.update(over)
    path.write_text(json.dumps(meta))
    return tmp_path / "mm"


@pytest.mark.parametrize("over, message", [
    (dict(version="x"), "version must be an int, got 'x'"),
    (dict(version=None), "version must be an int"),
    (dict(shape=[57.5, 13]), "shape must be an int, got 57.5"),
    (dict(shape=["57", "13"]), "shape must be an int, got '57'"),
    (dict(shape=[True, 13]), "shape must be an int, got True"),
    (dict(shape={"rows": 57}), "shape must be a list of two ints"),
    (dict(index_dtype=[["a", "<i8"]]), "index_dtype: a dtype name"),
    (dict(index_dtype=">i8"), "unsupported index_dtype >i8"),
    (dict(data_dtype={"a": 1}), "data_dtype: a dtype name"),
])
def test_memmap_csr_json_is_checked_strictly(tmp_path, over, message):
    # before: TypeError/OverflowError naming nothing, or a float shape silently truncated
    folder = _meta(tmp_path, **over)
    with pytest.raises(ValueError, match="csr.json.*" + re.escape(message)):
        MemmapCSR(folder)


@pytest.mark.parametrize("text", ["[" * 100000 + "]" * 100000,
                                  '{"format": "countgrid-memmap-csr", "shape": [1e400, 13]}',
                                  '{"format": "countgrid-memmap-csr", "shape": [NaN, 13]}'],
                         ids=["nested-100000-deep", "shape-1e400", "shape-NaN"])
def test_memmap_csr_json_that_python_cannot_hold(tmp_path, text):
    folder = _meta(tmp_path)
    (folder / "csr.json").write_text(text)
    with pytest.raises(ValueError, match="csr.json"):
        MemmapCSR(folder)


def test_memmap_arguments_and_missing_files(tmp_path):
    X = _counts()
    write_memmap_csr(X, tmp_path / "mm")
    for bad in (None, 5):
        with pytest.raises(TypeError, match="directory must be a path"):
            MemmapCSR(bad)
    assert (_stack(MemmapCSR(os.fsencode(tmp_path / "mm"))) != X).nnz == 0
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError, match="is not a folder"):
        MemmapCSR(tmp_path / "file")
    (tmp_path / "mm" / "indices.bin").unlink()
    with pytest.raises(FileNotFoundError, match="has no indices.bin"):
        MemmapCSR(tmp_path / "mm")


def _shard_bytes(kind, X):
    buf = io.BytesIO()
    if kind == "text":
        return b"hello, not an npz\n"
    if kind == "npy":
        np.save(buf, X.toarray())
    elif kind == "pickle":
        return pickle.dumps(X)
    elif kind == "object-array":
        np.savez(buf, data=X.data.astype(object), indices=X.indices, indptr=X.indptr,
                 shape=np.array(X.shape), format=np.array("csr"))
    elif kind in ("truncated", "flipped"):
        sp.save_npz(buf, X, compressed=False)
        data = bytearray(buf.getvalue())
        if kind == "truncated":
            return bytes(data[:len(data) // 2])
        data[len(data) // 3] ^= 0xFF
        return bytes(data)
    elif kind == "huge-header":
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
        with zipfile.ZipFile(buf, "w") as z:
            for key, value in (("indptr", X.indptr), ("indices", X.indices),
                               ("shape", np.array(X.shape)), ("format", np.array("csr"))):
                member = io.BytesIO()
                np.lib.format.write_array(member, np.asarray(value))
                z.writestr(f"{key}.npy", member.getvalue())
            z.writestr("data.npy", header.getvalue() + X.data.tobytes())
    elif kind == "format-int":
        np.savez(buf, data=X.data, indices=X.indices, indptr=X.indptr,
                 shape=np.array(X.shape), format=np.array(5))
    return buf.getvalue()


@pytest.mark.parametrize("kind", ["text", "npy", "pickle", "object-array", "truncated",
                                  "flipped", "huge-header", "format-int"])
def test_npz_shard_that_is_no_sparse_npz_is_named(tmp_path, kind):
    # before: "contains pickled data" for a text file, BadZipFile, EOFError, AttributeError,
    # or numpy's MemoryError for a header claiming 8 TB
    X = _counts()
    write_npz_shards(X, tmp_path / "s", rows_per_shard=20)
    bad = tmp_path / "s" / "shard-00001.npz"
    bad.write_bytes(_shard_bytes(kind, X[20:40]))
    with pytest.raises(ValueError, match=r"paths: .*shard-00001\.npz' is not a"):
        countgrid.PLSA(2, n_iter=2).fit(NpzShards(tmp_path / "s"))


def test_npz_shards_of_any_sparse_format_and_bad_paths(tmp_path):
    X = _counts()
    sp.save_npz(tmp_path / "a.npz", sp.coo_matrix(X[:30]))
    sp.save_npz(tmp_path / "b.npz", sp.csc_matrix(X[30:]))
    assert (_stack(NpzShards(tmp_path)) != X).nnz == 0          # coo was refused before
    assert (_stack(NpzShards(os.fsencode(tmp_path))) != X).nnz == 0
    for bad, message in ((None, "paths must be a folder"), (5, "paths must be a folder"),
                         ([None], "paths must be a path")):
        with pytest.raises(TypeError, match=message):
            NpzShards(bad)
    (tmp_path / "sub.npz").mkdir()
    with pytest.raises(IsADirectoryError, match="sub.npz' is a folder"):
        NpzShards(tmp_path)


@pytest.mark.parametrize("write", [write_memmap_csr, write_npz_shards])
def test_writers_store_bool_and_float16_and_refuse_what_is_no_count(tmp_path, write):
    X = _counts()
    for i, M in enumerate((X.toarray() > 1, sp.csr_matrix(X > 1), X.toarray().astype(
            np.float16))):
        back = _stack(write(M, tmp_path / f"ok{i}"))
        want = M.toarray() if sp.issparse(M) else M
        np.testing.assert_array_equal(back.toarray(), want.astype(np.float64))
    for M, error, message in ((X.toarray() + 1j, ValueError, "Complex data not supported: X"),
                              (sp.csr_matrix(X.toarray() + 1j), ValueError, "Complex.*X"),
                              (X.toarray().astype(str), TypeError, "X must hold real numbers")):
        with pytest.raises(error, match=message):
            write(M, tmp_path / "bad")
    for bad in (None, 7):
        with pytest.raises(TypeError, match="directory must be a path"):
            write(X, bad)
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError, match="exists and is not a folder"):
        write(X, tmp_path / "file")


def test_write_memmap_refuses_values_the_first_dtype_cannot_hold(tmp_path):
    # before: int8 first chunk, then 300.25 stored as 44
    X = _counts()
    source = CSRChunks([X[:20].astype(np.int8), X[20:] * 0.5 + X[20:] * 300])
    with pytest.raises(ValueError, match="chunk 1 of X has values that int8"):
        write_memmap_csr(source, tmp_path / "mm")
    assert not (tmp_path / "mm" / "csr.json").exists()      # no folder that looks complete
    ok = CSRChunks([X[:20].astype(np.int8), X[20:].astype(np.int64)])
    assert (_stack(write_memmap_csr(ok, tmp_path / "mm")) != X).nnz == 0


def test_write_npz_shards_checks_widths_and_removes_stale_shards(tmp_path):
    X = _counts()
    with pytest.raises(ValueError, match="chunk 1 of X has 13 columns, the first had 12"):
        write_npz_shards(CSRChunks([X[:10, :12], X[10:]]), tmp_path / "w")
    write_npz_shards(sp.vstack([X] * 3), tmp_path / "s", rows_per_shard=20)
    (tmp_path / "s" / "notes.npz.txt").write_text("kept")
    write_npz_shards(X, tmp_path / "s", rows_per_shard=20)
    assert (_stack(NpzShards(tmp_path / "s")) != X).nnz == 0   # before: 171 rows read back
    assert (tmp_path / "s" / "notes.npz.txt").exists()


def test_writers_refuse_to_write_onto_their_own_source(tmp_path):
    X = _counts()
    mm = write_memmap_csr(X, tmp_path / "mm", rows_per_chunk=7)
    with pytest.raises(ValueError, match="is the folder X is read from"):
        write_memmap_csr(mm, tmp_path / "mm", rows_per_chunk=5)
    assert (_stack(MemmapCSR(tmp_path / "mm")) != X).nnz == 0
    shards = write_npz_shards(X, tmp_path / "s", rows_per_shard=7)
    with pytest.raises(ValueError, match="is the folder X is read from"):
        write_npz_shards(shards, tmp_path / "s", rows_per_shard=5)
    assert (_stack(NpzShards(tmp_path / "s")) != X).nnz == 0


# ---------------------------------------------------------- writes that fail half way
# (the hostile suite's full-disk class, issue 30: docs/security.md, "Writing")
def _files(folder):
    return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder))}


def test_a_full_disk_leaves_the_previous_memmap_folder(tmp_path):
    """Before: ndarray.tofile wrote through a C stream of its own and lost the failure of
    its final flush, so under a write limit the three .bin files were replaced by
    truncated ones (the previous folder destroyed; then a ValueError about a truncated
    indptr.bin)."""
    X = _counts(40, 12)
    write_memmap_csr(X, tmp_path / "mm", rows_per_chunk=16)
    before = _files(tmp_path / "mm")
    script = textwrap.dedent(f"""
        import resource, signal, numpy as np, scipy.sparse as sp
        from countgrid.streaming import write_memmap_csr
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE,
                           (128, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        X = sp.csr_matrix(np.random.default_rng(1).poisson(2.0, (40, 12)).astype(float))
        try:
            write_memmap_csr(X, {str(tmp_path / 'mm')!r}, rows_per_chunk=16)
        except OSError as exc:
            print("refused", exc.errno)
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    assert "refused 27" in res.stdout, res.stdout + res.stderr          # EFBIG
    assert _files(tmp_path / "mm") == before                             # nothing left over
    assert (_stack(MemmapCSR(tmp_path / "mm")) != X).nnz == 0


@pytest.mark.parametrize("write", ["write_memmap_csr", "write_npz_shards"])
def test_a_write_that_fails_half_way_leaves_the_previous_folder(tmp_path, write):
    """Before: write_npz_shards replaced the shards one by one, so a failure at the second
    shard left the new first shard beside the old second one, and NpzShards(folder) read
    a mixture of two writes without a word; write_memmap_csr removed csr.json first."""
    writer = {"write_memmap_csr": write_memmap_csr, "write_npz_shards": write_npz_shards}
    reader = {"write_memmap_csr": MemmapCSR, "write_npz_shards": NpzShards}
    X = _counts(40, 12)
    writer[write](X, tmp_path / "f", 20)
    before = _files(tmp_path / "f")
    other = _counts(40, 12, seed=1)
    bad = CSRChunks([other[:20], other[20:], _counts(5, 13)])      # the third chunk is wider
    with pytest.raises(ValueError, match="chunk 2 of X has 13 columns"):
        writer[write](bad, tmp_path / "f", 20)
    assert _files(tmp_path / "f") == before
    assert (_stack(reader[write](tmp_path / "f")) != X).nnz == 0
    writer[write](other, tmp_path / "f", 20)                       # a good write replaces it
    assert (_stack(reader[write](tmp_path / "f")) != other).nnz == 0


def test_rows_of_a_chunk_source_are_the_matrix_rows():
    """Blocks.rows (pLSA's start from documents): any order, repeats, none; out of range is
    an IndexError naming the range."""
    from countgrid._utils.counts import Counts
    from countgrid.streaming._blocks import Blocks
    X = sp.csr_matrix(np.random.default_rng(3).poisson(1.0, (50, 40)).astype(np.float64))
    blocks = Blocks(CSRChunks([X[r0:r0 + 12] for r0 in range(0, 50, 12)]),
                    lambda M, name, nf: Counts(M, np.float64))
    for rows in ([3, 0, 49, 12, 12, 25], [], list(range(50))[::-1]):
        got = blocks.rows(rows)
        assert got.shape == (len(rows), X.shape[1])
        np.testing.assert_array_equal(got.toarray(), X[rows].toarray())
    with pytest.raises(IndexError, match=r"\[0, 50\)"):
        blocks.rows([0, 50])
