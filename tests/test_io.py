"""save / load round trips (npz without pickle) and rejection of bad files."""
import json
import zipfile

import numpy as np
import pytest


import countgrid  # noqa: E402
from countgrid import (CountingGrid, CountingGridClassifier, CountingGridRegressor,  # noqa: E402
                       GenerativeCountingGridClassifier)
from _expected_warnings import FEW_ITERATIONS  # noqa: E402
from _synthetic import assert_same_fitted, draw_corpus, true_grid  # noqa: E402

# the models saved and loaded here are fitted a few EM iterations, on purpose (fast)
pytestmark = FEW_ITERATIONS

EXTENT, WINDOW = (6, 6), (3, 3)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    pi = true_grid(EXTENT, 15, rng)
    X, pos = draw_corpus(pi, WINDOW, 60, 30, rng)
    return X, pos


def _assert_same_params(a, b):
    pa, pb = a.get_params(deep=False), b.get_params(deep=False)
    assert sorted(pa) == sorted(pb)
    for k in pa:
        if k == "random_state" and isinstance(pa[k], np.random.Generator):
            continue
        assert pa[k] == pb[k], (k, pa[k], pb[k])
        assert type(pa[k]) is type(pb[k]), (k, type(pa[k]), type(pb[k]))


def _roundtrip(est, tmp_path, name="model.npz"):
    path = tmp_path / name
    est.save(path)
    # plain numpy can read it without pickle
    with np.load(path, allow_pickle=False) as f:
        assert "__countgrid__" in f.files
        header = json.loads(str(f["__countgrid__"]))
        assert header["format_version"] == countgrid.io.FORMAT_VERSION
        for k in f.files:
            assert f[k].dtype != object
    loaded = countgrid.load(path)
    assert type(loaded) is type(est)
    _assert_same_params(est, loaded)
    assert_same_fitted(est, loaded)
    return loaded


@pytest.mark.parametrize("kw", [
    dict(),
    dict(learn_prior=True),
    dict(window_schedule=[(4, 4)]),
    dict(window_schedule=[((5, 5), 2), (4, 4)], learn_prior=True),
    dict(dtype=np.float32),
    dict(dtype=np.float32, learn_prior=True, pseudocount=0.05, posterior_floor=0.0),
    dict(extent=[6, 6], window=[3, 3], tol=0.0, min_iter=0, num_threads=-1),
])
def test_counting_grid_roundtrip(tmp_path, data, kw):
    X, _ = data
    params = dict(extent=EXTENT, window=WINDOW, n_iter=5, random_state=0, num_threads=1)
    params.update(kw)
    cg = CountingGrid(**params).fit(X)
    loaded = _roundtrip(cg, tmp_path)
    assert loaded.pi_.dtype == cg.pi_.dtype
    assert hasattr(loaded, "prior_") == bool(params.get("learn_prior"))
    assert np.array_equal(loaded.transform(X), cg.transform(X))
    assert np.array_equal(loaded.score_samples(X), cg.score_samples(X))
    assert np.array_equal(loaded.positions(X), cg.positions(X))
    # the loaded model can be refitted and gives the same model as the original
    assert np.array_equal(loaded.fit(X).pi_, CountingGrid(**params).fit(X).pi_)


def test_counting_grid_generator_random_state(tmp_path, data):
    X, _ = data
    cg = CountingGrid(EXTENT, WINDOW, n_iter=3, num_threads=1,
                      random_state=np.random.default_rng(5)).fit(X)
    loaded = _roundtrip(cg, tmp_path)
    assert isinstance(loaded.random_state, np.random.Generator)
    assert loaded.random_state.bit_generator.state == cg.random_state.bit_generator.state
    assert np.array_equal(loaded.transform(X), cg.transform(X))


def test_unfitted_roundtrip(tmp_path):
    cg = CountingGrid((5, 4), (2, 2), n_iter=7, dtype=np.float32)
    loaded = countgrid.load(_save(cg, tmp_path))
    _assert_same_params(cg, loaded)
    assert not hasattr(loaded, "pi_")


def _save(est, tmp_path, name="m.npz"):
    path = tmp_path / name
    est.save(path)
    return path


@pytest.mark.parametrize("labels", ["int", "str", "object"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_classifier_roundtrip(tmp_path, data, labels, dtype):
    X, pos = data
    y = (pos[:, 0] < 3).astype(int)
    if labels == "str":
        y = np.where(y == 1, "north", "south")
    elif labels == "object":
        y = np.array(["north" if v else "south" for v in y], dtype=object)
    clf = CountingGridClassifier(EXTENT, WINDOW, n_iter=5, random_state=0, num_threads=1,
                                 dtype=dtype).fit(X, y)
    loaded = _roundtrip(clf, tmp_path)
    assert np.array_equal(loaded.predict(X), clf.predict(X))
    assert np.array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    assert loaded.classes_.dtype == clf.classes_.dtype
    assert loaded.grid_.pi_.dtype == dtype


def test_regressor_roundtrip(tmp_path, data):
    X, pos = data
    y = np.cos(2 * np.pi * pos[:, 0] / 6) + 0.1 * pos[:, 1]
    reg = CountingGridRegressor(EXTENT, WINDOW, n_iter=5, random_state=0, num_threads=1,
                                learn_prior=True).fit(X, y)
    loaded = _roundtrip(reg, tmp_path)
    assert np.array_equal(loaded.predict(X), reg.predict(X))
    assert loaded.score(X, y) == reg.score(X, y)


@pytest.mark.parametrize("labels", ["int", "str"])
def test_generative_classifier_roundtrip(tmp_path, data, labels):
    X, pos = data
    y = np.array([0, 1, 2])[pos[:, 0] % 3]
    if labels == "str":
        y = np.array(["a", "bb", "ccc"])[y]
    gen = GenerativeCountingGridClassifier(EXTENT, WINDOW, n_iter=4, random_state=3,
                                           num_threads=1).fit(X, y)
    loaded = _roundtrip(gen, tmp_path)
    assert len(loaded.grids_) == 3
    assert np.array_equal(loaded.class_log_likelihoods(X), gen.class_log_likelihoods(X))
    assert np.array_equal(loaded.predict(X), gen.predict(X))
    assert np.array_equal(loaded.predict_proba(X), gen.predict_proba(X))


def test_save_does_not_pickle_and_path_types(tmp_path, data):
    X, _ = data
    cg = CountingGrid(EXTENT, WINDOW, n_iter=2, random_state=0, num_threads=1).fit(X)
    p = tmp_path / "x.npz"
    cg.save(str(p))
    assert zipfile.is_zipfile(p)
    with zipfile.ZipFile(p) as z:
        for name in z.namelist():
            assert name.endswith(".npy")
    a = countgrid.load(str(p))
    b = countgrid.load(p)
    assert np.array_equal(a.pi_, b.pi_)


def test_save_rejects_foreign_objects(tmp_path):
    from countgrid.io import save

    with pytest.raises(TypeError):
        save(object(), tmp_path / "x.npz")


# -------------------------------------------------------------- bad files
@pytest.fixture
def good_file(tmp_path, data):
    X, _ = data
    cg = CountingGrid(EXTENT, WINDOW, n_iter=2, random_state=0, num_threads=1,
                      dtype=np.float64).fit(X)
    return _save(cg, tmp_path, "good.npz")


def test_load_non_countgrid_npz(tmp_path):
    p = tmp_path / "other.npz"
    np.savez(p, a=np.arange(3), b=np.ones((2, 2)))
    with pytest.raises(ValueError, match="countgrid"):
        countgrid.load(p)


def test_load_npy_file(tmp_path):
    p = tmp_path / "arr.npy"
    np.save(p, np.arange(4))
    with pytest.raises(ValueError):
        countgrid.load(p)


def test_load_text_file(tmp_path):
    p = tmp_path / "notes.npz"
    p.write_text("this is not a model\n" * 10)
    with pytest.raises(ValueError):
        countgrid.load(p)


def test_load_empty_file(tmp_path):
    p = tmp_path / "empty.npz"
    p.write_bytes(b"")
    with pytest.raises(ValueError):
        countgrid.load(p)


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9, 0.99])
def test_load_truncated_file(good_file, tmp_path, fraction):
    raw = good_file.read_bytes()
    p = tmp_path / "trunc.npz"
    p.write_bytes(raw[: int(len(raw) * fraction)])
    with pytest.raises(ValueError):
        countgrid.load(p)


def _rewrite_header(path, out, change):
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    header = json.loads(str(arrays["__countgrid__"]))
    change(header)
    del arrays["__countgrid__"]
    if header.get("format_version") in (2, 3):   # a crafted file with a valid checksum
        header["sha256"] = countgrid.io._digest(header, arrays)
    arrays["__countgrid__"] = np.array(json.dumps(header))
    np.savez_compressed(out, **arrays)
    return out


def test_load_rewritten_header_still_loads(good_file, tmp_path):
    """Control for the tests below: rewriting the header unchanged keeps it loadable."""
    p = _rewrite_header(good_file, tmp_path / "same.npz", lambda h: None)
    assert np.array_equal(countgrid.load(p).pi_, countgrid.load(good_file).pi_)


@pytest.mark.parametrize("change", [
    lambda h: h.__setitem__("format_version", countgrid.io.FORMAT_VERSION + 1),
    lambda h: h.__setitem__("format_version", 999),
    lambda h: h.__setitem__("format_version", "1"),
    lambda h: h.__setitem__("format_version", 0),
    lambda h: h.__setitem__("format", "something-else"),
    lambda h: h["model"].__setitem__("class", "os.system"),
    lambda h: h["model"]["params"].__setitem__("no_such_param", 1),
    lambda h: h["model"]["arrays"].__setitem__("missing_", "array"),
    lambda h: h.pop("model"),
], ids=["future", "future999", "version_str", "version0", "format", "class", "param",
        "array", "no_model"])
def test_load_bad_header(good_file, tmp_path, change):
    p = _rewrite_header(good_file, tmp_path / "bad.npz", change)
    with pytest.raises(ValueError):
        countgrid.load(p)


def test_load_header_not_json(good_file, tmp_path):
    with np.load(good_file, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    arrays["__countgrid__"] = np.array("{not json")
    p = tmp_path / "bad.npz"
    np.savez(p, **arrays)
    with pytest.raises(ValueError):
        countgrid.load(p)


def _member_data_offset(raw, info):
    # local file header: 30 bytes + file name + extra field
    off = info.header_offset
    assert raw[off:off + 4] == b"PK\x03\x04"
    n_name = int.from_bytes(raw[off + 26:off + 28], "little")
    n_extra = int.from_bytes(raw[off + 28:off + 30], "little")
    return off + 30 + n_name + n_extra


def test_load_corrupt_compressed_stream(good_file, tmp_path):
    """A flipped byte inside a deflate stream is a corrupt file: ValueError
    (not zlib.error)."""
    raw = bytearray(good_file.read_bytes())
    with zipfile.ZipFile(good_file) as z:
        info = z.getinfo("pi_.npy")
    assert info.compress_type == zipfile.ZIP_DEFLATED
    start = _member_data_offset(bytes(raw), info)
    raw[start:start + 4] = b"\xff\xff\xff\xff"  # reserved deflate block type
    p = tmp_path / "corrupt.npz"
    p.write_bytes(bytes(raw))
    with pytest.raises(ValueError):
        countgrid.load(p)


def test_load_corrupt_zip_directory(good_file, tmp_path):
    """A garbled 'version needed to extract' in the central directory:
    ValueError (not NotImplementedError)."""
    raw = bytearray(good_file.read_bytes())
    pos = raw.find(b"PK\x01\x02")
    assert pos > 0
    raw[pos + 6] = 0xFF
    p = tmp_path / "corrupt.npz"
    p.write_bytes(bytes(raw))
    with pytest.raises(ValueError):
        countgrid.load(p)


def test_load_random_byte_flips_only_raise_value_error(good_file, tmp_path):
    """Any single corrupted byte either loads or raises ValueError."""
    raw = good_file.read_bytes()
    rng = np.random.default_rng(0)
    p = tmp_path / "flip.npz"
    leaked = {}
    for i in rng.choice(len(raw), size=min(150, len(raw)), replace=False):
        d = bytearray(raw)
        d[i] ^= 0xFF
        p.write_bytes(bytes(d))
        try:
            countgrid.load(p)
        except ValueError:
            pass
        except Exception as exc:  # noqa: BLE001 - we record what leaked
            leaked.setdefault(type(exc).__name__, int(i))
    assert not leaked, f"non-ValueError exceptions at byte offsets: {leaked}"


def test_load_missing_file(tmp_path):
    with pytest.raises((ValueError, FileNotFoundError)):
        countgrid.load(tmp_path / "nope.npz")


# ---- nothing in a file is trusted (countgrid.io module docstring) -------------------------
def _rewrite(path, out, change_header=None, change_arrays=None, keep_checksum=False):
    """Rewrite a model file; the checksum is recomputed (a crafted file) unless
    ``keep_checksum`` (an accidentally damaged one)."""
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    header = json.loads(str(arrays.pop("__countgrid__")))
    if change_header:
        change_header(header)
    if change_arrays:
        change_arrays(arrays)
    if not keep_checksum:
        header["sha256"] = countgrid.io._digest(header, arrays)
    arrays["__countgrid__"] = np.array(json.dumps(header))
    np.savez_compressed(out, **arrays)
    return out


def test_files_carry_a_checksum_that_names_damage(good_file, tmp_path):
    def nudge(arrays):
        arrays["pi_"] = arrays["pi_"].copy()
        arrays["pi_"].flat[3] = np.nextafter(arrays["pi_"].flat[3], 1.0)
    p = _rewrite(good_file, tmp_path / "damaged.npz", change_arrays=nudge, keep_checksum=True)
    with pytest.raises(ValueError, match="damaged.*checksum"):
        countgrid.load(p)
    # the same change with a recomputed checksum is a valid (different) model
    p = _rewrite(good_file, tmp_path / "crafted.npz", change_arrays=nudge)
    assert not np.array_equal(countgrid.load(p).pi_, countgrid.load(good_file).pi_)


def test_a_changed_parameter_without_checksum_update_is_damage(good_file, tmp_path):
    p = _rewrite(good_file, tmp_path / "d.npz", keep_checksum=True,
                 change_header=lambda h: h["model"]["params"].__setitem__("n_iter", 7))
    with pytest.raises(ValueError, match="damaged"):
        countgrid.load(p)


@pytest.mark.parametrize("attribute", ["transform", "__class__", "_model", "extent",
                                       "not_an_attribute_"])
def test_undeclared_attributes_are_refused(good_file, tmp_path, attribute):
    def add(arrays):
        arrays[attribute] = np.zeros(3)

    p = _rewrite(good_file, tmp_path / "a.npz", change_arrays=add,
                 change_header=lambda h: h["model"]["arrays"].__setitem__(attribute, "array"))
    with pytest.raises(ValueError, match="no fitted attributes"):
        countgrid.load(p)


def test_arrays_that_no_attribute_declares_are_refused(good_file, tmp_path):
    p = _rewrite(good_file, tmp_path / "x.npz",
                 change_arrays=lambda a: a.__setitem__("smuggled", np.zeros(2)))
    with pytest.raises(ValueError, match="smuggled"):
        countgrid.load(p)


@pytest.mark.parametrize("param, value", [("n_iter", -3), ("window", {"__seq__": "tuple",
                                                                      "items": [0, 0]}),
                                          ("learn_prior", "no")])
def test_invalid_parameters_are_refused(good_file, tmp_path, param, value):
    p = _rewrite(good_file, tmp_path / "p.npz",
                 change_header=lambda h: h["model"]["params"].__setitem__(param, value))
    with pytest.raises(ValueError, match=f"invalid parameters.*{param}"):
        countgrid.load(p)


@pytest.mark.parametrize("change, match", [
    (lambda a: a.__setitem__("h_", a["h_"][..., :-1]), "h_ of CountingGrid has shape"),
    (lambda a: a.__setitem__("n_features_in_", np.array(10**9)), "n_features_in_"),
    (lambda a: a.__setitem__("pi_", -a["pi_"]), "pi_ holds negative"),
    (lambda a: a.__setitem__("pi_", a["pi_"].ravel()), "pi_ of CountingGrid has shape"),
    (lambda a: a.__setitem__("h_", np.full_like(a["h_"], np.nan)), "h_ holds NaN"),
    (lambda a: a.__setitem__("h_", a["h_"].astype(np.float32)), "dtype"),
    (lambda a: a.__setitem__("n_iter_", np.array([1, 2])), "n_iter_ should be a scalar"),
    (lambda a: a.__setitem__("posterior_floor_", np.array(2.0)), "posterior_floor_"),
    (lambda a: a.__setitem__("pi_", np.array(["a", "b"])), "pi_"),
])
def test_inconsistent_fitted_state_is_refused(good_file, tmp_path, change, match):
    # a file that stores h_ (as format 1 and 2 files do), so that h_ itself can be damaged
    h = countgrid.load(good_file).h_
    with_h = _rewrite(good_file, tmp_path / "with_h.npz",
                      change_header=lambda hd: (hd["model"].pop("derived"),
                                                hd["model"]["arrays"].__setitem__("h_",
                                                                                  "array")),
                      change_arrays=lambda a: a.__setitem__("h_", h))
    assert np.array_equal(countgrid.load(with_h).h_, h)
    p = _rewrite(with_h, tmp_path / "c.npz", change_arrays=change)
    with pytest.raises(ValueError, match=match):
        countgrid.load(p)


def test_classifier_children_are_checked(tmp_path, data):
    X, pos = data
    y = (pos[:, 0] >= 3).astype(int)
    clf = CountingGridClassifier(EXTENT, WINDOW, n_iter=3, random_state=0).fit(X, y)
    good = tmp_path / "clf.npz"
    clf.save(good)
    p = _rewrite(good, tmp_path / "bad.npz",
                 change_arrays=lambda a: a.__setitem__("gamma_", a["gamma_"][..., :1]))
    with pytest.raises(ValueError, match="(gamma_|classes_) of CountingGridClassifier has shape"):
        countgrid.load(p)
    p = _rewrite(good, tmp_path / "bad2.npz",
                 change_header=lambda h: h["model"]["children"]["grid_"].__setitem__(
                     "class", "PLSA"))
    with pytest.raises(ValueError):
        countgrid.load(p)


def test_format_1_files_without_checksum_still_load(good_file, tmp_path):
    def to_v1(header):
        header["format_version"] = 1
        header.pop("sha256")
    p = _rewrite(good_file, tmp_path / "v1.npz", change_header=to_v1, keep_checksum=True)
    assert np.array_equal(countgrid.load(p).pi_, countgrid.load(good_file).pi_)


# ---------------------------------------------------------------- derived arrays (format 3)
def test_counting_grid_file_leaves_out_h_and_recomputes_it_bit_for_bit(data, tmp_path):
    X, _ = data
    for dtype in (np.float64, np.float32):
        cg = CountingGrid(EXTENT, WINDOW, n_iter=4, tol=0, dtype=dtype, random_state=1).fit(X)
        path = tmp_path / f"cg_{np.dtype(dtype).name}.npz"
        cg.save(path)
        with np.load(path, allow_pickle=False) as f:
            assert "h_" not in f.files and "pi_" in f.files
            header = json.loads(str(f["__countgrid__"]))
        assert header["model"]["derived"] == ["h_"]
        loaded = countgrid.load(path)
        assert loaded.h_.dtype == cg.h_.dtype
        assert np.array_equal(loaded.h_.view(np.uint8), cg.h_.view(np.uint8))


def test_h_that_is_not_a_function_of_pi_is_stored(data, tmp_path):
    """A model whose h_ was edited (not what pi_ and window give) keeps its h_ in the file."""
    X, _ = data
    cg = CountingGrid(EXTENT, WINDOW, n_iter=2, tol=0, random_state=1, dtype=np.float64).fit(X)
    cg.h_ = cg.h_ * (1 + 1e-12)
    path = tmp_path / "edited.npz"
    cg.save(path)
    with np.load(path, allow_pickle=False) as f:
        assert "h_" in f.files
    assert np.array_equal(countgrid.load(path).h_, cg.h_)


def test_derived_entry_for_an_unknown_array_is_refused(data, tmp_path):
    X, _ = data
    cg = CountingGrid(EXTENT, WINDOW, n_iter=2, tol=0, random_state=1).fit(X)
    cg.save(tmp_path / "ok.npz")
    bad = _rewrite_header(tmp_path / "ok.npz", tmp_path / "bad.npz",
                          lambda h: h["model"].__setitem__("derived", ["pi_"]))
    with pytest.raises(ValueError, match="cannot recompute"):
        countgrid.load(bad)
    bad = _rewrite_header(tmp_path / "ok.npz", tmp_path / "bad2.npz",
                          lambda h: h["model"].__setitem__("derived", "h_"))
    with pytest.raises(ValueError, match="malformed"):
        countgrid.load(bad)


def test_model_files_are_about_the_size_of_pi(tmp_path):
    """The file of a 32 x 32 grid over 2,000 words holds pi_ once (16.4 MB of float64,
    8.2 MB of float32), not pi_ and h_ (issue 11: a 300-document model was 31 MB)."""
    X = np.random.default_rng(0).poisson(0.3, size=(300, 2000))
    for dtype, raw in ((np.float64, 8), (np.float32, 4)):
        cg = CountingGrid((32, 32), (4, 4), n_iter=2, tol=0, dtype=dtype,
                          random_state=0).fit(X)
        path = tmp_path / "big.npz"
        cg.save(path)
        assert path.stat().st_size < 1.05 * raw * 32 * 32 * 2000


# ---------------------------------------------------------------- a corpus saved with the model
def _corpus(X):
    from countgrid.text import Corpus

    n, Z = X.shape
    return Corpus(X, [f"word{j}" for j in range(Z)], ids=[f"doc{i}" for i in range(n)],
                  titles=[f"title {i}" for i in range(n)],
                  metadata={"group": np.array(["a", "b"])[np.arange(n) % 2],
                            "score": np.linspace(0, 1, n)})


def test_model_file_keeps_the_corpus_it_was_fitted_on(data, tmp_path):
    X, _ = data
    corpus = _corpus(X)
    cg = CountingGrid(EXTENT, WINDOW, n_iter=2, tol=0, random_state=1).fit(corpus.counts)
    path = tmp_path / "with_corpus.npz"
    cg.save(path, corpus=corpus)
    back = countgrid.io.load_corpus(path)
    assert (back.counts != corpus.counts).nnz == 0
    for name in ("vocabulary", "ids", "titles", "snippets"):
        assert np.array_equal(getattr(back, name), getattr(corpus, name)), name
    assert list(back.metadata) == ["group", "score"]
    assert np.array_equal(back.metadata["score"], corpus.metadata["score"])
    assert_same_fitted(cg, countgrid.load(path))          # the model loads as without it
    est, again = countgrid.load(path, return_corpus=True)  # both from one read
    assert_same_fitted(cg, est)
    assert np.array_equal(again.ids, corpus.ids) and (again.counts != corpus.counts).nnz == 0
    cg.save(tmp_path / "plain.npz")
    assert countgrid.io.load_corpus(tmp_path / "plain.npz") is None
    assert countgrid.load(tmp_path / "plain.npz", return_corpus=True)[1] is None


def test_corpus_of_another_vocabulary_is_refused_and_damage_is_named(data, tmp_path):
    X, _ = data
    cg = CountingGrid(EXTENT, WINDOW, n_iter=2, tol=0, random_state=1).fit(X)
    with pytest.raises(ValueError, match="terms"):
        cg.save(tmp_path / "x.npz", corpus=_corpus(X[:, :-1]))
    with pytest.raises(TypeError, match="corpus"):
        cg.save(tmp_path / "x.npz", corpus=X)

    class NotACorpus:                 # has to_dict, as a pandas DataFrame does
        def to_dict(self):
            return {}
    with pytest.raises(TypeError, match="corpus"):
        cg.save(tmp_path / "x.npz", corpus=NotACorpus())
    cg.save(tmp_path / "c.npz", corpus=_corpus(X))

    def nudge(arrays):
        key = next(k for k in arrays if k.startswith("corpus:") and arrays[k].dtype.kind == "U")
        arrays[key] = np.char.add(arrays[key], "!")
    damaged = _rewrite(tmp_path / "c.npz", tmp_path / "d.npz", change_arrays=nudge,
                       keep_checksum=True)
    for load in (countgrid.load, countgrid.io.load_corpus):
        with pytest.raises(ValueError, match="damaged"):
            load(damaged)
    missing = _rewrite(tmp_path / "c.npz", tmp_path / "m.npz",
                       change_arrays=lambda a: a.pop(next(k for k in a
                                                          if k.startswith("corpus:"))))
    with pytest.raises(ValueError, match="lacks the corpus"):
        countgrid.load(missing)


# ---- value ranges of the fitted state (issue 30) ------------------------------------------
def _value_models():
    rng = np.random.default_rng(30)
    rates = np.r_[np.full(6, 3.0), np.full(6, 0.3)]
    X = np.vstack([rng.poisson(rates, (20, 12)), rng.poisson(rates[::-1], (20, 12))])
    y = np.repeat([0, 1], 20)
    y3 = np.repeat([0, 1, 2], [14, 13, 13])
    s = np.r_[rng.normal(-1, 0.5, (300, 2)), rng.normal(1, 0.5, (300, 2))]
    edges = np.linspace(-3, 3, 13)
    W, _, _ = np.histogram2d(s[:, 0], s[:, 1], bins=[edges, edges])
    c = (edges[:-1] + edges[1:]) / 2
    P = dict(n_components=3, n_iter=10, random_state=0)
    G_EMBED = dict(extent=(4, 4), window=(2, 2), n_iter=3, random_state=0, num_threads=1)
    G = dict(G_EMBED, dtype=np.float64)
    edited_h = CountingGrid(**G).fit(X)
    edited_h.h_ = edited_h.h_ * (1 + 1e-12)          # not derivable: the file stores h_
    return {
        "PLSA": countgrid.PLSA(**P).fit(X),
        "PLSA32": countgrid.PLSA(**P, dtype=np.float32).fit(X),
        "CountingGrid": CountingGrid(**G, learn_prior=True).fit(X),
        "CountingGrid32": CountingGrid(**{**G, "dtype": np.float32}, learn_prior=True).fit(X),
        "CountingGrid_h": edited_h,
        "CountingGridClassifier": CountingGridClassifier(**G).fit(X, y3),
        "CountingGridRegressor": CountingGridRegressor(**G).fit(X, y * 1.5),
        "GenerativeCountingGridClassifier": GenerativeCountingGridClassifier(**G).fit(X, y),
        "FisherScore": countgrid.FisherScore(**P).fit(X, y3),
        "TOPEmbedding": countgrid.TOPEmbedding(**P).fit(X, y),
        "LLREmbedding": countgrid.LLREmbedding(**P).fit(X, y3),
        "MixtureOfTopics": countgrid.MixtureOfTopics(**P).fit(X, y),
        "FreeEnergyScoreSpace": countgrid.FreeEnergyScoreSpace(**P).fit(X, y),
        "PosteriorDivergence": countgrid.PosteriorDivergence(**P).fit(X, y),
        "CountingGridPosterior": countgrid.CountingGridPosterior(**G_EMBED).fit(X, y),
        "CountingGridFESS": countgrid.CountingGridFESS(**G_EMBED).fit(X, y),
        "ZIPGTM": countgrid.ZIPGTM((3, 3), n_basis=4, n_iter=3, random_state=0).fit(X),
        "HistogramGMM": countgrid.HistogramGMM(2, n_iter=5, random_state=0).fit(W, [c, c]),
        "RAP": countgrid.RAP(3, n_epochs=1, random_state=0).fit(X),
        "LSI": countgrid.LSI(3, random_state=0).fit(X),
    }


@pytest.fixture(scope="module")
def value_files(tmp_path_factory):
    import warnings

    folder = tmp_path_factory.mktemp("values")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = _value_models()
    paths = {}
    for name, est in models.items():
        paths[name] = folder / f"{name}.npz"
        est.save(paths[name])
    return paths


def _zeros(a):
    a[...] = 0


def _half(a):
    """The first distribution (along the last axis; a 1-D array: all of it) halved."""
    (a.reshape(-1, a.shape[-1])[0] if a.ndim > 1 else a)[...] *= 0.5


def _negative(a):
    """A negative entry, the sum of its distribution unchanged."""
    v = a.flat[0]
    a.flat[0] = -0.05
    a.flat[1] += v + 0.05


def _all_half(a):
    a *= 0.5


def _log_half(a):
    a[0] += np.log(0.5)


def _reverse(a):
    a[...] = a[::-1].copy()


# (model, array key in the file, the edit, the attribute the error names); every model
# of every saveable class, and every probability table of each
VALUE_CASES = [
    ("PLSA", "components_", _zeros, "components_"),
    ("PLSA", "components_", _half, "components_"),
    ("PLSA", "components_", _negative, "components_"),
    ("PLSA", "doc_topic_", _zeros, "doc_topic_"),
    ("PLSA", "doc_topic_", _half, "doc_topic_"),
    ("PLSA32", "components_", _half, "components_"),
    ("PLSA32", "doc_topic_", _negative, "doc_topic_"),
    ("CountingGrid", "pi_", _zeros, "pi_"),
    ("CountingGrid", "pi_", _half, "pi_"),
    ("CountingGrid", "pi_", _negative, "pi_"),
    ("CountingGrid", "prior_", _all_half, "prior_"),
    ("CountingGrid", "prior_", _negative, "prior_"),
    ("CountingGrid32", "pi_", _half, "pi_"),
    ("CountingGrid32", "prior_", _zeros, "prior_"),
    ("CountingGrid_h", "h_", _half, "h_"),
    ("CountingGrid_h", "h_", _zeros, "h_"),
    ("CountingGridClassifier", "gamma_", _half, "gamma_"),
    ("CountingGridClassifier", "gamma_", _negative, "gamma_"),
    ("CountingGridClassifier", "gamma_", _zeros, "gamma_"),
    ("CountingGridClassifier", "grid_/pi_", _zeros, "pi_"),
    ("CountingGridRegressor", "grid_/pi_", _half, "pi_"),
    ("GenerativeCountingGridClassifier", "grids_.1/pi_", _zeros, "pi_"),
    ("GenerativeCountingGridClassifier", "features_", _reverse, "features_"),
    ("GenerativeCountingGridClassifier", "features_", _zeros, "features_"),
    ("FisherScore", "topic_prior_", _half, "topic_prior_"),
    ("FisherScore", "topic_prior_", _zeros, "topic_prior_"),
    ("FisherScore", "models_.2/components_", _zeros, "components_"),
    ("TOPEmbedding", "log_priors_", _log_half, "log_priors_"),
    ("TOPEmbedding", "models_.1/doc_topic_", _half, "doc_topic_"),
    ("LLREmbedding", "log_priors_", _zeros, "log_priors_"),
    ("MixtureOfTopics", "models_.0/components_", _negative, "components_"),
    ("FreeEnergyScoreSpace", "models_.1/components_", _half, "components_"),
    ("PosteriorDivergence", "models_.0/doc_topic_", _zeros, "doc_topic_"),
    ("CountingGridPosterior", "models_.1/pi_", _half, "pi_"),
    ("CountingGridFESS", "models_.0/pi_", _negative, "pi_"),
    ("ZIPGTM", "mixing_", _all_half, "mixing_"),
    ("ZIPGTM", "mixing_", _negative, "mixing_"),
    ("HistogramGMM", "weights_", _all_half, "weights_"),
    ("HistogramGMM", "weights_", _negative, "weights_"),
    ("RAP", "n_trials_", _zeros, "n_trials_"),
    ("LSI", "components_", _zeros, "components_"),
    ("LSI", "components_", _half, "components_"),
    ("LSI", "singular_values_", _reverse, "singular_values_"),
    ("LSI", "singular_values_", _negative, "singular_values_"),
]


def test_value_files_load(value_files):
    """Control: the files of the cases below load unedited (and after re-signing)."""
    for name, path in value_files.items():
        assert name.startswith(type(countgrid.load(path)).__name__)


@pytest.mark.parametrize("model,key,edit,attr", VALUE_CASES,
                         ids=[f"{m}-{k}-{e.__name__.strip('_')}" for m, k, e, _ in VALUE_CASES])
def test_tables_that_are_no_distributions_are_refused(value_files, tmp_path, model, key,
                                                      edit, attr):
    """Issue 30: a re-signed PLSA file whose components_ was all zeros loaded, and scored
    -inf.  Every probability table must be a distribution (non-negative, summing to 1
    within the rounding of its dtype: zeros, a row halved and a negative entry are
    refused), the class distributions gamma_ too, log_priors_ the logs of one, and an
    LSI basis orthonormal with decreasing singular values; files edited so and re-signed
    are refused naming the attribute."""
    from countgrid._utils.npz import digest

    def change(arrays):
        arr = np.array(arrays[key], copy=True)
        edit(arr)
        arrays[key] = arr

    with np.load(value_files[model], allow_pickle=False) as f:
        assert key in f.files
    bad = _rewrite(value_files[model], tmp_path / "edited.npz", change_arrays=change)
    with pytest.raises(ValueError, match=f"not a consistent countgrid model file.*{attr}"):
        countgrid.load(bad)
    # the file is a crafted one, not a damaged one: its checksum holds
    with np.load(bad, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    header = json.loads(str(arrays.pop("__countgrid__")))
    assert header["sha256"] == digest(header, arrays)
