"""Loading a file a stranger wrote (docs/security.md, "Loading"): nothing in it selects
code, every array is checked from its header before it is decompressed, and memory is
bounded by max_bytes.  The files are re-signed (their checksum recomputed), as an attacker
would."""
import json
import os
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest

import countgrid
from countgrid import io
from countgrid._utils.npz import DEFAULT_MAX_BYTES, parse_bytes, resolve_max_bytes
from countgrid.text import Corpus

from _crafted import (lie_about_size, npy_bytes, read_model, resign_corpus_arrays,
                      rewrite_model, write_model, zip_members)

MB = 2**20


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(0).poisson(1.0, (40, 30))


@pytest.fixture(scope="module")
def grid_file(tmp_path_factory, X):
    path = tmp_path_factory.mktemp("m") / "grid.npz"
    cg = countgrid.CountingGrid((6, 6), (2, 2), n_iter=2, random_state=0, num_threads=1)
    with pytest.warns(countgrid.ConvergenceWarning):
        cg.fit(X)
    cg.save(path)
    return path


@pytest.fixture(scope="module")
def generator_file(tmp_path_factory, X):
    path = tmp_path_factory.mktemp("g") / "gen.npz"
    countgrid.PLSA(2, n_iter=3, random_state=np.random.default_rng(5)).save(path)
    return path


def peak_memory(fn):
    """(result or exception, peak bytes numpy and Python allocated during fn())."""
    tracemalloc.start()
    try:
        try:
            out = fn()
        except Exception as exc:  # noqa: BLE001 - returned to the test
            out = exc
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# --------------------------------------------------------------- nothing selects code
@pytest.mark.parametrize("name", ["seed", "test", "get_state", "set_state", "bytes",
                                  "default_rng", "__class__", "RandomState", "Generator",
                                  "", 5, None])
def test_a_random_state_cannot_name_a_function(generator_file, tmp_path, name):
    def change(header):
        header["model"]["params"]["random_state"]["__generator__"] = name
    bad = rewrite_model(generator_file, tmp_path / "bad.npz", change_header=change)
    before = np.random.get_state()[1].copy()
    cwd = os.listdir(tmp_path)
    with pytest.raises(ValueError, match="random_state|corrupt"):
        countgrid.load(bad)
    assert np.array_equal(np.random.get_state()[1], before)   # the global generator
    assert os.listdir(tmp_path) == cwd                       # no cache folder written


def test_a_saved_generator_still_round_trips(generator_file):
    est = countgrid.load(generator_file)
    assert isinstance(est.random_state, np.random.Generator)
    again = np.random.default_rng(5)
    assert est.random_state.bit_generator.state == again.bit_generator.state


@pytest.mark.parametrize("state", ["x", [], {"bit_generator": "PCG64"},
                                   {"bit_generator": "MT19937", "state": {"key": [1], "pos": 0}}])
def test_a_random_state_with_a_bad_state_is_refused(generator_file, tmp_path, state):
    def change(header):
        header["model"]["params"]["random_state"]["state"] = state
    bad = rewrite_model(generator_file, tmp_path / "bad.npz", change_header=change)
    with pytest.raises(ValueError):
        countgrid.load(bad)


@pytest.mark.parametrize("dtype", ["O", "object", "i4,f8", "V8", "M8[s]", "U3", "S2",
                                   "float32" * 10, 7])
def test_a_dtype_parameter_is_one_of_a_fixed_table(grid_file, tmp_path, dtype):
    def change(header):
        header["model"]["params"]["dtype"] = {"__dtype__": dtype}
    bad = rewrite_model(grid_file, tmp_path / "bad.npz", change_header=change)
    with pytest.raises(ValueError, match="dtype"):
        countgrid.load(bad)


def test_a_deeply_nested_header_is_a_value_error(grid_file, tmp_path):
    header, arrays = read_model(grid_file)
    text = json.dumps(header)[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}"
    np.savez_compressed(tmp_path / "deep.npz", **arrays,
                        **{"__countgrid__": np.array(text)})
    with pytest.raises(ValueError, match="nested too deeply"):
        countgrid.load(tmp_path / "deep.npz")


def test_nested_parameters_are_bounded(grid_file, tmp_path):
    value = 1
    for _ in range(40):
        value = {"__seq__": "tuple", "items": [value]}

    def change(header):
        header["model"]["params"]["extent"] = value
    bad = rewrite_model(grid_file, tmp_path / "bad.npz", change_header=change)
    with pytest.raises(ValueError, match="nested too deeply"):
        countgrid.load(bad)


# ---------------------------------------------------- checked before decompressing
def test_an_inconsistent_bomb_is_refused_before_anything_is_decompressed(grid_file, tmp_path):
    """1.5 GB of zeros in 1.5 MB, with a header that contradicts the grid: refused from the
    .npy headers, without decompressing it."""
    header, arrays = read_model(grid_file)
    arrays["pi_"] = np.zeros((6, 6, 1_500_000_000 // 8 // 36))      # n_features_in_ stays 30
    write_model(tmp_path / "bomb.npz", header, arrays)
    assert os.path.getsize(tmp_path / "bomb.npz") < 2 * MB
    out, peak = peak_memory(lambda: countgrid.load(tmp_path / "bomb.npz"))
    assert isinstance(out, ValueError) and "pi_ of CountingGrid has shape" in str(out), out
    assert peak < 4 * MB, peak


def test_a_consistent_bomb_is_refused_by_max_bytes(grid_file, tmp_path):
    header, arrays = read_model(grid_file)
    n = 1_500_000_000 // 8 // 36
    arrays["pi_"] = np.full((6, 6, n), 1.0 / n)           # a valid-looking uniform grid
    arrays["n_features_in_"] = np.array(n)
    write_model(tmp_path / "bomb.npz", header, arrays)
    assert os.path.getsize(tmp_path / "bomb.npz") < 3 * MB
    out, peak = peak_memory(lambda: countgrid.load(tmp_path / "bomb.npz", max_bytes="1G"))
    assert isinstance(out, ValueError) and "more than max_bytes = 1.0 GiB" in str(out), out
    assert peak < 4 * MB, peak


def test_the_default_limit_and_its_overrides(grid_file, monkeypatch):
    assert resolve_max_bytes(None) == DEFAULT_MAX_BYTES == 2 * 2**30
    monkeypatch.setenv("COUNTGRID_MAX_LOAD_BYTES", "1K")
    assert resolve_max_bytes(None) == 1024
    with pytest.raises(ValueError, match="max_bytes"):
        countgrid.load(grid_file)
    assert countgrid.load(grid_file, max_bytes=10**6).pi_.shape == (6, 6, 30)
    monkeypatch.setenv("COUNTGRID_MAX_LOAD_BYTES", "lots")
    with pytest.raises(ValueError, match="COUNTGRID_MAX_LOAD_BYTES"):
        countgrid.load(grid_file)


@pytest.mark.parametrize("value, expected", [(1, 1), ("8G", 8 * 2**30), ("1.5M", 1.5 * MB),
                                             ("512 KiB", 512 * 1024), ("2gb", 2 * 2**30)])
def test_byte_sizes(value, expected):
    assert parse_bytes(value, "max_bytes") == expected


@pytest.mark.parametrize("value, error", [(0, ValueError), (-5, ValueError), ("x", ValueError),
                                          ("", ValueError), (True, TypeError), (1.5, TypeError),
                                          ([], TypeError)])
def test_bad_byte_sizes_name_the_argument(grid_file, value, error):
    with pytest.raises(error, match="max_bytes"):
        countgrid.load(grid_file, max_bytes=value)


def test_a_member_claiming_more_than_deflate_can_give_is_refused(grid_file, tmp_path):
    bad = tmp_path / "liar.npz"
    bad.write_bytes(grid_file.read_bytes())
    header, arrays = read_model(grid_file)
    lie_about_size(bad, "pi_.npy", 2**31)
    out, peak = peak_memory(lambda: countgrid.load(bad))
    assert isinstance(out, ValueError) and "more than deflate can give" in str(out), out
    assert peak < 4 * MB


def test_a_member_whose_header_disagrees_with_its_size_is_refused(tmp_path, X):
    """The .npy header claims 10**9 values, the member holds 80 bytes: numpy would
    allocate 8 GB before finding out."""
    data = bytearray(npy_bytes(np.zeros(10)))
    data[data.index(b"(10,)"):data.index(b"(10,)") + 5] = b"(10**9"[:0] + b"(99,)"
    zip_members(tmp_path / "short.npz", {"__countgrid__.npy": npy_bytes(np.array("{}")),
                                         "pi_.npy": bytes(data)})
    with pytest.raises(ValueError, match="declares an array of shape"):
        countgrid.load(tmp_path / "short.npz")


@pytest.mark.parametrize("member, match", [
    (np.array([1, "a", None], dtype=object), "objects"),
    (np.zeros(3, dtype=[("a", "<f8"), ("b", "<i4")]), "records"),
    (np.zeros(3, dtype="V4"), "records"),
    (np.zeros(3, dtype="M8[s]"), "dtype"),
])
def test_object_record_and_void_members_are_never_read(grid_file, tmp_path, member, match):
    header, arrays = read_model(grid_file)
    raw = {f"{k}.npy": npy_bytes(v) for k, v in arrays.items()}
    raw["__countgrid__.npy"] = npy_bytes(np.array(json.dumps(header)))
    import io as _io
    buf = _io.BytesIO()
    np.lib.format.write_array(buf, member, allow_pickle=True)
    raw["pi_.npy"] = buf.getvalue()
    zip_members(tmp_path / "obj.npz", raw)
    with pytest.raises(ValueError, match=match):
        countgrid.load(tmp_path / "obj.npz")


def test_a_member_named_twice_is_refused(grid_file, tmp_path):
    import warnings
    import zipfile
    header, arrays = read_model(grid_file)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # zipfile warns about the duplicate name
        with zipfile.ZipFile(tmp_path / "twice.npz", "w") as z:
            z.writestr("__countgrid__.npy", npy_bytes(np.array(json.dumps(header))))
            for k, v in arrays.items():
                z.writestr(f"{k}.npy", npy_bytes(v))
            z.writestr("pi_.npy", npy_bytes(np.zeros_like(arrays["pi_"])))
    with pytest.raises(ValueError, match="appears twice"):
        countgrid.load(tmp_path / "twice.npz")


@pytest.mark.parametrize("name", ["pi_", "../x", "a.txt"])
def test_members_that_are_not_npy_arrays_are_refused(grid_file, tmp_path, name):
    header, arrays = read_model(grid_file)
    raw = {f"{k}.npy": npy_bytes(v) for k, v in arrays.items()}
    raw["__countgrid__.npy"] = npy_bytes(np.array(json.dumps(header)))
    raw[name] = b"hello"
    zip_members(tmp_path / "extra.npz", raw)
    with pytest.raises(ValueError, match="is not a .npy array"):
        countgrid.load(tmp_path / "extra.npz")


def test_a_huge_header_is_refused_before_it_is_read(grid_file, tmp_path):
    header, arrays = read_model(grid_file)
    header["padding"] = " " * (5 * MB)                  # 20 MB as numpy's UTF-32
    write_model(tmp_path / "fat.npz", header, arrays)
    out, peak = peak_memory(lambda: countgrid.load(tmp_path / "fat.npz"))
    assert isinstance(out, ValueError) and "declares" in str(out), out
    assert peak < 4 * MB


@pytest.mark.parametrize("change, match", [
    (lambda a: a.__setitem__("n_iter_", np.array([3, 4])), "n_iter_ should be a scalar"),
    (lambda a: a.__setitem__("n_features_in_", np.array(30.0)), "n_features_in_ of "
                                                                "CountingGrid must be an int"),
    (lambda a: a.__setitem__("n_features_in_", np.array(-3)), "must be an int >= 0"),
    (lambda a: a.__setitem__("prior_", np.ones((5, 6)) / 30), "prior_ of CountingGrid has "
                                                              "shape"),
    (lambda a: a.__setitem__("log_likelihood_", np.zeros((2, 2))), "log_likelihood_"),
    (lambda a: a.__setitem__("pi_", a["pi_"].astype(np.float16)), "pi_ of CountingGrid has "
                                                                 "the dtype float16"),
    (lambda a: a.__setitem__("pi_", a["pi_"].astype(np.complex128)), "dtype"),
])
def test_the_schema_names_what_is_wrong(grid_file, tmp_path, change, match):
    def declare_prior(header):
        header["model"]["arrays"]["prior_"] = "array"

    bad = rewrite_model(grid_file, tmp_path / "bad.npz",
                        change_header=declare_prior if "prior_" in match else None,
                        change_arrays=change)
    with pytest.raises(ValueError, match=match):
        countgrid.load(bad)


def test_every_saveable_class_declares_a_schema():
    for name, cls in io.registered().items():
        assert cls._fitted_schema, name
        assert tuple(cls._fitted_schema) == cls._fitted_arrays, name


def test_a_class_cannot_declare_both(monkeypatch):
    with pytest.raises(TypeError, match="both _fitted_schema and _fitted_arrays"):
        class _Bad(countgrid.PLSA):
            _fitted_schema = {}
            _fitted_arrays = ()


def test_loading_takes_a_bounded_multiple_of_the_declared_bytes(tmp_path):
    """docs/security.md states the bound: at most 4 x the declared arrays (a counting
    grid recomputes its window histograms h_, the size of pi_), plus 1 MiB."""
    X = np.random.default_rng(1).poisson(0.3, (200, 5000))
    cg = countgrid.CountingGrid((24, 24), (3, 3), n_iter=2, random_state=0)
    with pytest.warns(countgrid.ConvergenceWarning):
        cg.fit(X)
    cg.save(tmp_path / "m.npz")
    declared = cg.pi_.nbytes + 1000
    out, peak = peak_memory(lambda: countgrid.load(tmp_path / "m.npz"))
    assert isinstance(out, countgrid.CountingGrid)
    assert peak <= 4 * declared + MB, (peak, declared)


# ------------------------------------------------------------------------ corpora
@pytest.fixture(scope="module")
def corpus():
    return Corpus([[1, 0, 2], [0, 3, 0], [4, 0, 0]], ["a", "b", "c"], ids=["x", "y", "z"],
                  titles=["one", "two", "three"], metadata={"year": [2001, 2002, 2003]})


def _crafted_corpus(tmp_path, corpus, change):
    arrays = corpus.to_dict()
    change(arrays)
    resign_corpus_arrays(arrays)
    np.savez_compressed(tmp_path / "c.npz", **arrays)
    return tmp_path / "c.npz"


@pytest.mark.parametrize("change, match", [
    (lambda a: a.__setitem__("titles", np.array(["t"] * 4)), "titles of .* has shape"),
    (lambda a: a.__setitem__("counts_indptr", np.arange(3)), "counts_indptr of .* has shape"),
    (lambda a: a.__setitem__("vocabulary", np.array([1, 2, 3])), "vocabulary of .* dtype"),
    (lambda a: a.__setitem__("counts_shape", np.array([3, 3, 1])), "counts_shape"),
    (lambda a: a.__setitem__("extra", np.zeros(3)), "unexpected"),
    (lambda a: a.pop("snippets"), "missing"),
])
def test_corpus_files_are_checked_from_their_headers(tmp_path, corpus, change, match):
    with pytest.raises(ValueError, match=match):
        Corpus.load(_crafted_corpus(tmp_path, corpus, change))


def test_a_corpus_bomb_is_refused_by_max_bytes(tmp_path, corpus):
    """One 100-million-character title makes every title of the fixed-width string array
    that long: 1.2 GB declared, a megabyte on disk."""
    def change(arrays):
        titles = arrays["titles"].astype(object)
        titles[0] = "t" * 100_000_000
        arrays["titles"] = titles.astype(str)
    path = _crafted_corpus(tmp_path, corpus, change)
    assert os.path.getsize(path) < 3 * MB
    out, peak = peak_memory(lambda: Corpus.load(path, max_bytes="256M"))
    assert isinstance(out, ValueError) and "max_bytes" in str(out), out
    assert peak < 4 * MB


def test_the_corpus_of_a_model_file_is_checked_too(tmp_path, corpus):
    X = corpus.counts
    est = countgrid.PLSA(2, n_iter=2, random_state=0)
    with pytest.warns(countgrid.ConvergenceWarning):
        est.fit(X)
    io.save(est, tmp_path / "m.npz", corpus=corpus)

    def change(arrays):
        arrays["corpus:titles"] = np.array(["t"] * 7)
        inner = {k[len("corpus:"):]: v for k, v in arrays.items() if k.startswith("corpus:")}
        resign_corpus_arrays(inner)
        arrays["corpus:header"] = inner["header"]
    bad = rewrite_model(tmp_path / "m.npz", tmp_path / "bad.npz", change_arrays=change)
    with pytest.raises(ValueError, match="corpus that does not load.*titles"):
        countgrid.load(bad)
    with pytest.raises(ValueError, match="corpus that does not load.*titles"):
        io.load_corpus(bad)


def test_the_readers_of_other_npz_files_are_bounded(tmp_path, monkeypatch):
    """scipy .npz corpora (read_corpus, datasets.load_npz_corpus) and corpus shards
    (streaming.NpzShards) go through the same checked reader."""
    import scipy.sparse as sp
    from countgrid.datasets import load_npz_corpus
    from countgrid.streaming import NpzShards
    from countgrid.text import read_corpus
    sp.save_npz(tmp_path / "s.npz", sp.random(50, 40, density=0.2, format="csr",
                                              random_state=0) * 10)
    monkeypatch.setenv("COUNTGRID_MAX_LOAD_BYTES", "1K")
    for call in (lambda: read_corpus(tmp_path / "s.npz"),
                 lambda: load_npz_corpus(tmp_path / "s.npz"),
                 lambda: next(iter(NpzShards([str(tmp_path / "s.npz")]).chunks()))):
        with pytest.raises(ValueError, match="max_bytes"):
            call()


def test_a_model_file_from_another_process_runs_nothing(tmp_path):
    """End to end in a fresh interpreter: importing and loading a crafted file imports no
    test module and calls nothing by name (numpy.random.test would import pytest)."""
    script = textwrap.dedent(f"""
        import sys, json, numpy as np, countgrid
        from countgrid._utils.npz import digest
        countgrid.PLSA(2, random_state=np.random.default_rng(1)).save({str(tmp_path / 'a.npz')!r})
        with np.load({str(tmp_path / 'a.npz')!r}) as f:
            arrays = {{k: f[k] for k in f.files}}
        header = json.loads(str(arrays.pop("__countgrid__")))
        header["model"]["params"]["random_state"]["__generator__"] = "test"
        header.pop("sha256"); header["sha256"] = digest(header, arrays)
        np.savez({str(tmp_path / 'b.npz')!r}, __countgrid__=np.array(json.dumps(header)), **arrays)
        before = set(sys.modules)
        try:
            countgrid.load({str(tmp_path / 'b.npz')!r})
        except ValueError as exc:
            print("refused:", exc)
        print("new modules:", sorted(m for m in set(sys.modules) - before if "test" in m))
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "refused:" in res.stdout and "new modules: []" in res.stdout, res.stdout


def test_a_bomb_refused_for_its_values_costs_about_what_it_declares(grid_file, tmp_path):
    """pi_ of zeros (shapes consistent, within max_bytes): read, refused by the value
    checks before the window histograms are derived from it (no 4x)."""
    header, arrays = read_model(grid_file)
    n = 150_000_000 // 8 // 36
    arrays["pi_"] = np.zeros((6, 6, n))
    arrays["n_features_in_"] = np.array(n)
    write_model(tmp_path / "zeros.npz", header, arrays)
    out, peak = peak_memory(lambda: countgrid.load(tmp_path / "zeros.npz"))
    assert isinstance(out, ValueError) and "pi_" in str(out), out
    assert peak < 1.3 * arrays["pi_"].nbytes + 2 * MB, peak


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_fifo_named_as_a_file_is_refused_at_once(tmp_path):
    """A FIFO has no writer: opening it for reading blocks forever.  Model, corpus and
    .npz inputs and the files of a folder are opened without blocking and must be regular
    files; run in a child with a timeout so that a regression fails instead of hanging."""
    fifo = tmp_path / "model.npz"
    os.mkfifo(fifo)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("cats and dogs and cats", encoding="utf-8")
    (folder / "b.txt").write_text("dogs and cats and dogs", encoding="utf-8")
    os.mkfifo(folder / "c.txt")
    code = textwrap.dedent(f"""
        import warnings
        import countgrid
        from countgrid.text import Corpus, read_corpus
        for load in (countgrid.io.load, Corpus.load, read_corpus):
            try:
                load({str(fifo)!r})
            except ValueError as exc:
                assert "not a regular file" in str(exc), exc
            else:
                raise AssertionError(load)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            corpus = read_corpus({str(folder)!r}, min_df=1, max_df=1.0)
        assert sorted(corpus.ids) == ["a.txt", "b.txt"], corpus.ids
        assert any("c.txt (not a regular file)" in str(w.message) for w in caught)
        try:
            read_corpus({str(folder)!r}, on_error="fail")
        except ValueError as exc:
            assert "c.txt" in str(exc) and "not a regular file" in str(exc), exc
        else:
            raise AssertionError("on_error='fail'")
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
