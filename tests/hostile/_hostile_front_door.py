"""Cases of the hostile suite for the front door (issue 11): the corpus and its readers
(countgrid.text), the offline map (countgrid.maps, CountingGrid.to_html), browsing a fitted
grid (documents_near, word_map, word_cells, top_words, positions(anchor=)), the pictures
(countgrid.plotting), model files with their corpus (io.save(corpus=), io.load_corpus) and
the verbs of the command line (vectorize, fit, transform, top-words, diagnostics, plot,
html, evaluate, stability).

Classes of input added here: ``text-file`` (hostile files and folders given to the readers:
binary garbage, wrong encodings, empty files and folders, CSV with missing or duplicate
columns and ragged rows, huge fields, JSON Lines that are not objects, UCI headers that lie,
.npz and .mtx files that are not corpora), ``corpus-file`` (damaged corpus files, the corpus
inside a model file), ``output-path`` (outputs that cannot be written) and ``cells``
(cells, words and anchors of a fitted grid).  The command-line verbs run in-process
(``countgrid.cli.main`` in the worker, its stdout and stderr captured), as cheap as a
function call; ``cli_classify`` judges them as the subprocess cases of ``countgrid demo``.
"""
import contextlib
import gzip
import io
import json
import os
import traceback

import numpy as np

import _hostile_cases as H
from _hostile_cases import D, Case, model, make, nonfinite, oracle_finite

_TRACEBACK = "Traceback (most recent call last)"


def _cg():
    return H.cg


def _sp():
    return H.sp


# ============================================================================ data
def _texts():
    """40 short documents over 60 words, two themes (words of a document: 14 of its
    theme's 30), deterministic."""
    if not hasattr(D, "texts"):
        rng = np.random.default_rng(1)
        themes = [[f"alpha{c}{k}" for k in range(30)] for c in "ab"]
        D.texts = [" ".join(rng.choice(themes[i % 2], size=14)) for i in range(40)]
        D.text_groups = np.array(["even", "odd"] * 20)
    return D.texts


def corpus(**over):
    kw = dict(ids=[f"d{i}" for i in range(40)], titles=[f"title {i}" for i in range(40)],
              metadata={"group": np.where(D.y == 1, "b", "a"), "score": D.y_real})
    kw.update(over)
    return _cg().text.Corpus(D.X, D.words, **kw)


def corpus_problem(c, n=None, m=None):
    """Why ``c`` is not a consistent Corpus (None if it is)."""
    sp = _sp()
    if not isinstance(c, _cg().text.Corpus):
        return f"returned {type(c).__name__}, not a Corpus"
    X = c.counts
    if not sp.issparse(X) or X.format != "csr":
        return "counts is not CSR"
    try:
        X.check_format(full_check=True)
    except ValueError as exc:
        return f"counts is corrupt: {exc}"
    if not X.has_canonical_format:
        return "counts is not canonical"
    if X.data.size and (not np.isfinite(X.data).all() or (X.data < 0).any()):
        return "counts holds NaN/inf or negative values"
    rows, cols = X.shape
    if n is not None and rows != n:
        return f"{rows} documents, expected {n}"
    if m is not None and cols != m:
        return f"{cols} terms, expected {m}"
    for name, length in (("vocabulary", cols), ("ids", rows), ("titles", rows),
                         ("snippets", rows)):
        a = getattr(c, name)
        if not isinstance(a, np.ndarray) or a.dtype.kind != "U" or a.shape != (length,):
            return f"{name} is not a str array of shape ({length},)"
    if c.links is not None and (c.links.dtype.kind != "U" or c.links.shape != (rows,)):
        return "links is not a str array of one entry per document"
    for k, v in c.metadata.items():
        if not isinstance(v, np.ndarray) or v.dtype.kind not in "biufU" or v.shape != (rows,):
            return f"metadata[{k!r}] is not a 1-D array of numbers or str"
    if np.unique(c.ids).size != rows or np.unique(c.vocabulary).size != cols:
        return "ids or vocabulary repeat"
    return None


def corpus_oracle(n=None, m=None, same=None):
    """A consistent corpus; ``same``: a function of the result giving a problem or None."""
    def oracle(c):
        p = corpus_problem(c, n, m)
        if p is None and same is not None:
            p = same(c)
        return p
    return oracle


def _same_counts(c):
    if c.counts.shape != D.X.shape or (c.counts != _sp().csr_matrix(D.X)).nnz:
        return "the counts differ from the input"
    return None


def _write(path, data, mode="wb"):
    with open(path, mode) as fh:
        fh.write(data)
    return path


def _garbage(n=4000, seed=0):
    return np.random.default_rng(seed).bytes(n)


# ============================================================================ Corpus(...)
def gen_corpus():
    out = []
    need = ("countgrid.text.Corpus",)

    def add(entry, klass, variant, expect, f, names, oracle=None, needs=need, **kw):
        out.append(Case(entry, "", klass, variant, expect, lambda ctx, f=f: f(), names,
                        oracle, needs, **kw))

    # counts
    for variant, expect, build in [
            ("dense", "ok", lambda: D.X), ("list", "ok", lambda: D.X.tolist()),
            ("csr", "ok", lambda: _sp().csr_matrix(D.X)),
            ("coo", "ok", lambda: _sp().coo_matrix(D.X)),
            ("csc_array", "ok", lambda: _sp().csc_array(D.X)),
            ("int8", "ok", lambda: D.X.astype(np.int8)),
            ("float32", "ok", lambda: D.X.astype(np.float32)),
            ("duplicates", "ok", lambda: H._duplicates(D.X)),
            ("unsorted", "ok", lambda: H._unsorted(D.X)),
            ("NaN", "raise", lambda: H._set(1, 1, np.nan)(D.X)),
            ("inf", "raise", lambda: H._set(1, 1, np.inf)(D.X)),
            ("negative", "raise", lambda: H._set(1, 1, -1.0)(D.X)),
            ("sparse-negative", "raise", lambda: H._set(3, None, -1.0, sparse=True)(D.X)),
            ("complex", "raise", lambda: D.X.astype(complex)),
            ("str", "raise", lambda: D.X.astype(int).astype(str)),
            ("1-D", "raise", lambda: D.X[0]), ("3-D", "raise", lambda: D.X[None]),
            ("None", "raise", lambda: None), ("string", "raise", lambda: "abc"),
            ("csr:index-out-of-range", "raise", lambda: H._corrupt("csr:index-out-of-range")(D.X)),
            ("csr:decreasing-indptr", "raise", lambda: H._corrupt("csr:decreasing-indptr")(D.X)),
            ("coo:row-out-of-range", "raise", lambda: H._corrupt("coo:row-out-of-range")(D.X)),
            ("fractional", "either", lambda: D.X + 0.5)]:
        oracle = corpus_oracle(40, 12, _same_counts if expect == "ok" else None)
        add("text.Corpus", "values" if variant in ("NaN", "inf", "negative", "sparse-negative",
                                                     "fractional") else "shape",
            f"counts-{variant}", expect,
            lambda build=build: _cg().text.Corpus(build(), D.words), ("counts",), oracle,
            recycle=variant.startswith(("csr:", "coo:")))
    # vocabulary, ids, titles, snippets, links
    w = D.words
    for arg, variant, expect, value in [
            ("vocabulary", "too-short", "raise", lambda: w[:-1]),
            ("vocabulary", "repeated", "raise", lambda: np.r_[w[:-1], w[:1]]),
            ("vocabulary", "None", "raise", lambda: None),
            ("vocabulary", "single-str", "raise", lambda: "abcdefghijkl"),
            ("vocabulary", "ints", "raise", lambda: list(range(12))),
            ("vocabulary", "int-array", "raise", lambda: np.arange(12)),
            ("vocabulary", "bytes", "raise", lambda: [s.encode() for s in w]),
            ("vocabulary", "NUL-ending", "raise", lambda: [s + "\x00" for s in w]),
            ("vocabulary", "2-D", "raise", lambda: w.reshape(3, 4)),
            ("vocabulary", "dict", "raise", lambda: {s: i for i, s in enumerate(w)}),
            ("vocabulary", "generator", "either", lambda: (s for s in w)),
            ("vocabulary", "object-array", "ok", lambda: w.astype(object)),
            ("vocabulary", "unicode", "ok",
             lambda: [f"\u00e9t\u00e9{i}\U0001F600" for i in range(12)]),
            ("ids", "repeated", "raise", lambda: ["x"] * 40),
            ("ids", "ints", "raise", lambda: list(range(40))),
            ("ids", "too-long", "raise", lambda: [str(i) for i in range(41)]),
            ("ids", "empty-strings", "raise", lambda: [""] * 40),
            ("ids", "numpy-str", "ok", lambda: np.array([f"i{i}" for i in range(40)])),
            ("titles", "too-short", "raise", lambda: ["t"] * 39),
            ("titles", "floats", "raise", lambda: [1.5] * 40),
            ("titles", "None-entries", "raise", lambda: [None] * 40),
            ("snippets", "too-long", "raise", lambda: ["s"] * 41),
            ("snippets", "huge", "ok", lambda: ["x" * 100000] * 40),
            ("links", "ints", "raise", lambda: list(range(40))),
            ("links", "single-str", "raise", lambda: "http://x"),
            ("source", "int", "raise", lambda: 5),
            ("source", "None", "ok", lambda: None)]:
        def f(arg=arg, value=value):
            if arg == "vocabulary":
                return _cg().text.Corpus(D.X, value())
            return _cg().text.Corpus(D.X, D.words, **{arg: value()})
        add("text.Corpus", "params", f"{arg}-{variant}", expect, f, (arg,),
            corpus_oracle(40, 12))
    # metadata
    for variant, expect, value in [
            ("list", "raise", lambda: [1] * 40),
            ("too-short", "raise", lambda: {"x": np.arange(39)}),
            ("2-D", "raise", lambda: {"x": np.ones((40, 2))}),
            ("scalar", "raise", lambda: {"x": 5}),
            ("str-value", "raise", lambda: {"x": "abc"}),
            ("dict-value", "raise", lambda: {"x": {"a": 1}}),
            ("int-key", "raise", lambda: {5: np.arange(40)}),
            ("empty-key", "raise", lambda: {"": np.arange(40)}),
            ("mixed-types", "raise", lambda: {"x": ["a", 1] * 20}),
            ("nested-lists", "raise", lambda: {"x": [[1]] * 40}),
            ("complex", "raise", lambda: {"x": np.ones(40, complex)}),
            ("datetime", "raise", lambda: {"x": np.arange(40).astype("datetime64[D]")}),
            ("object-None", "either", lambda: {"x": np.array([None] * 40, dtype=object)}),
            ("None-in-numbers", "ok", lambda: {"x": [None] + [1.5] * 39}),
            ("int-2**70", "ok", lambda: {"x": [2**70] + [1] * 39}),
            ("int-10**400", "either", lambda: {"x": [10**400] + [1] * 39}),
            ("bool", "ok", lambda: {"x": [True, False] * 20}),
            ("NaN", "ok", lambda: {"x": np.r_[np.nan, np.ones(39)]}),
            ("str-NUL-ending", "raise", lambda: {"x": ["a\x00"] * 40}),
            ("empty-dict", "ok", lambda: {})]:
        add("text.Corpus", "params", f"metadata-{variant}", expect,
            lambda value=value: _cg().text.Corpus(D.X, D.words, metadata=value()),
            ("metadata",), corpus_oracle(40, 12))
    return out


# ============================================================================ from_texts
def gen_from_texts():
    out = []
    need = ("countgrid.text.Corpus.from_texts",)

    def add(klass, variant, expect, f, names, oracle=None):
        out.append(Case("text.Corpus.from_texts", "", klass, variant, expect,
                        lambda ctx, f=f: f(), names, oracle or corpus_oracle(), need))

    def ft(texts=None, **kw):
        kw.setdefault("min_df", 1)
        kw.setdefault("max_df", 1.0)
        return lambda: _cg().text.Corpus.from_texts(_texts() if texts is None else texts(),
                                                    **kw)
    T = _texts
    for variant, expect, texts, names in [
            ("valid", "ok", None, ("texts",)),
            ("generator", "ok", lambda: (t for t in T()), ("texts",)),
            ("tuple", "ok", lambda: tuple(T()), ("texts",)),
            ("numpy-str", "ok", lambda: np.array(T()), ("texts",)),
            ("numpy-object", "ok", lambda: np.array(T(), dtype=object), ("texts",)),
            ("single-str", "raise", lambda: "alpha beta gamma", ("texts",)),
            ("bytes-items", "raise", lambda: [t.encode() for t in T()], ("texts",)),
            ("None-item", "raise", lambda: T()[:3] + [None], ("texts",)),
            ("int-items", "raise", lambda: [1, 2, 3], ("texts",)),
            ("None", "raise", lambda: None, ("texts",)),
            ("int", "raise", lambda: 5, ("texts",)),
            ("empty-list", "raise", lambda: [], ("texts",)),
            ("empty-strings", "raise", lambda: [""] * 5, ("texts", "stop_words",
                                                         "token_pattern")),
            ("only-stop-words", "raise", lambda: ["the and of", "a an the"],
             ("stop_words", "token_pattern")),
            ("only-numbers", "raise", lambda: ["1993 2001", "42 17"],
             ("stop_words", "token_pattern")),
            ("one-document", "ok", lambda: T()[:1], ("texts",)),
            ("NUL-characters", "ok", lambda: [t + "\x00" for t in T()], ("texts",)),
            ("lone-surrogate", "either", lambda: [t + " \ud800x" for t in T()], ("texts",)),
            ("huge-document", "ok", lambda: T()[:-1] + [" ".join(T()) * 200], ("texts",)),
            ("50000-distinct-words", "ok",
             lambda: T() + [" ".join(f"z{i}" for i in range(50000))], ("texts",))]:
        add("shape", f"texts-{variant}", expect, ft(texts), names)
    for variant, expect, kw, names in [
            ("min_df=-1", "raise", dict(min_df=-1), ("min_df",)),
            ("min_df=2.5", "raise", dict(min_df=2.5), ("min_df",)),
            ("min_df='2'", "raise", dict(min_df="2"), ("min_df",)),
            ("min_df=True", "raise", dict(min_df=True), ("min_df",)),
            ("min_df=nan", "raise", dict(min_df=float("nan")), ("min_df",)),
            ("min_df=10**18", "either", dict(min_df=10**18), ("min_df",)),
            ("max_df=0", "either", dict(max_df=0), ("max_df", "min_df")),
            ("max_df=1.5", "raise", dict(max_df=1.5), ("max_df",)),
            ("max_df=-1", "raise", dict(max_df=-1), ("max_df",)),
            ("min_df>max_df", "either", dict(min_df=30, max_df=5), ("max_df", "min_df")),
            ("max_features=0", "raise", dict(max_features=0), ("max_features",)),
            ("max_features=2.5", "raise", dict(max_features=2.5), ("max_features",)),
            ("max_features=10**18", "ok", dict(max_features=10**18), ("max_features",)),
            ("token_pattern='('", "raise", dict(token_pattern="("), ("token_pattern",)),
            ("token_pattern-two-groups", "raise", dict(token_pattern=r"(a)(b)"),
             ("token_pattern",)),
            ("token_pattern=5", "raise", dict(token_pattern=5), ("token_pattern",)),
            ("token_pattern=''", "either", dict(token_pattern=""), ("token_pattern",)),
            ("token_pattern-one-group", "either", dict(token_pattern=r"(alpha)\w+"),
             ("token_pattern",)),
            ("stop_words='french'", "raise", dict(stop_words="french"), ("stop_words",)),
            ("stop_words=5", "raise", dict(stop_words=5), ("stop_words",)),
            ("stop_words=[1,2]", "raise", dict(stop_words=[1, 2]), ("stop_words",)),
            ("stop_words-set", "ok", dict(stop_words={"alphaa0"}), ("stop_words",)),
            ("lowercase='no'", "raise", dict(lowercase="no"), ("lowercase",)),
            ("vocabulary=[]", "raise", dict(vocabulary=[]), ("vocabulary",)),
            ("vocabulary-repeated", "raise", dict(vocabulary=["alphaa1", "alphaa1"]),
             ("vocabulary",)),
            ("vocabulary-ints", "raise", dict(vocabulary=[1, 2]), ("vocabulary",)),
            ("vocabulary-single-str", "raise", dict(vocabulary="alphaa1"), ("vocabulary",)),
            ("vocabulary-unknown-words", "raise", dict(vocabulary=["zzz", "yyy"]),
             ("vocabulary",)),
            ("vocabulary-capitals", "either", dict(vocabulary=["AlphaA1", "alphaa2"]),
             ("vocabulary",)),
            ("ids-too-short", "raise", dict(ids=["a"]), ("ids",)),
            ("ids-repeated", "raise", dict(ids=["a"] * 40), ("ids",)),
            ("titles-too-long", "raise", dict(titles=["t"] * 41), ("titles",)),
            ("links-ints", "raise", dict(links=list(range(40))), ("links",)),
            ("metadata-too-short", "raise", dict(metadata={"g": [1, 2]}), ("metadata",)),
            ("metadata-list", "raise", dict(metadata=[1, 2]), ("metadata",)),
            ("source=5", "raise", dict(source=5), ("source",)),
            ("unknown-option", "raise", dict(foo=1), ("foo",))]:
        add("params", variant, expect, ft(**kw), names)
    return out


# ============================================================================ subset, sample
def gen_selection():
    out = []
    for variant, expect, idx in [
            ("list", "ok", lambda: [3, 1, 2]), ("negative", "ok", lambda: [-1, 0]),
            ("mask", "ok", lambda: D.y == 1),
            ("numpy-uint8", "ok", lambda: np.array([1, 2], np.uint8)),
            ("range", "ok", lambda: range(5)),
            ("empty", "raise", lambda: []), ("out-of-range", "raise", lambda: [40]),
            ("too-negative", "raise", lambda: [-41]), ("repeated", "raise", lambda: [1, 1]),
            ("mask-too-short", "raise", lambda: (D.y == 1)[:-1]),
            ("mask-all-false", "raise", lambda: np.zeros(40, bool)),
            ("floats", "raise", lambda: [0.5, 1.5]), ("whole-floats", "raise", lambda: [0.0, 1.0]),
            ("str", "raise", lambda: ["1", "2"]), ("2-D", "raise", lambda: [[0, 1], [2, 3]]),
            ("scalar", "raise", lambda: 3), ("None", "raise", lambda: None),
            ("2**70", "raise", lambda: [2**70]), ("2**63", "raise", lambda: [2**63]),
            ("mixed-bool-int", "either", lambda: [True, 2]),
            ("object-ints", "ok", lambda: np.array([1, 2], dtype=object)),
            ("sparse-mask", "raise", lambda: _sp().csr_matrix((D.y == 1)[None]))]:
        out.append(Case("text.Corpus.subset", "", "params", f"indices-{variant}", expect,
                        lambda ctx, idx=idx: corpus().subset(idx()), ("indices",),
                        corpus_oracle(m=12), ("countgrid.text.Corpus.subset",)))
    for variant, expect, kw in [
            ("n=0", "raise", dict(n=0)), ("n=-1", "raise", dict(n=-1)),
            ("n=2.5", "raise", dict(n=2.5)), ("n='3'", "raise", dict(n="3")),
            ("n=True", "raise", dict(n=True)), ("n=None", "raise", dict(n=None)),
            ("n=10**18", "ok", dict(n=10**18)), ("n=numpy.int64(3)", "ok", dict(n=np.int64(3))),
            ("random_state=-1", "raise", dict(n=3, random_state=-1)),
            ("random_state='seed'", "raise", dict(n=3, random_state="seed")),
            ("random_state=2**70", "either", dict(n=3, random_state=2**70)),
            ("random_state=default_rng", "ok", dict(n=3, random_state=np.random.default_rng(1)))]:
        names = ("random_state",) if "random_state" in variant else ("n",)
        out.append(Case("text.Corpus.sample", "", "params", variant, expect,
                        lambda ctx, kw=kw: corpus().sample(**kw), names, corpus_oracle(m=12),
                        ("countgrid.text.Corpus.sample",)))
    return out


# ============================================================================ corpus files
def _read_npz(path):
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _resign(arrays, key="header"):
    """Recompute the checksum of a corpus dict after an edit (damage that a checksum does
    not catch: a consistent-looking but wrong file)."""
    from countgrid._utils.npz import digest

    header = json.loads(str(arrays[key]))
    body = {k: v for k, v in arrays.items() if k != key}
    header["sha256"] = digest(header, body)
    arrays[key] = np.array(json.dumps(header))
    return arrays


def _corpus_edit(fn, resign=True):
    def mutate(path):
        arrays = _read_npz(path)
        fn(arrays)
        if resign:
            _resign(arrays)
        with open(path, "wb") as fh:
            np.savez(fh, **arrays)
    return mutate


def _header_edit(fn):
    def edit(arrays):
        h = json.loads(str(arrays["header"]))
        fn(h)
        arrays["header"] = np.array(json.dumps(h))
    return edit


def _set_key(key, value):
    def edit(arrays):
        arrays[key] = value(arrays[key]) if callable(value) else value
    return edit


def _bytes_edit(fn):
    def mutate(path):
        with open(path, "rb") as fh:
            data = bytearray(fh.read())
        with open(path, "wb") as fh:
            fh.write(bytes(fn(data)))
    return mutate


def _flip(frac):
    def fn(data):
        i = min(len(data) - 1, int(len(data) * frac))
        data[i] ^= 0xFF
        return data
    return fn


def _indices_out(a):
    a = a.copy()
    a[3] = 99
    return a


def _indptr_decreasing(a):
    a = a.copy()
    a[5] = a[6] + 1
    return a


CORPUS_DAMAGE = [
    ("truncated-half", _bytes_edit(lambda d: d[:len(d) // 2]), "raise"),
    ("truncated-end", _bytes_edit(lambda d: d[:-22]), "raise"),
    ("empty", _bytes_edit(lambda d: b""), "raise"),
    ("flip-byte-25%", _bytes_edit(_flip(0.25)), "either"),
    ("flip-byte-60%", _bytes_edit(_flip(0.6)), "either"),
    ("checksum-mismatch", _corpus_edit(_set_key("counts_data", lambda a: a * 2), False),
     "raise"),
    ("header-not-json", _corpus_edit(_set_key("header", np.array("{nope")), False), "raise"),
    ("header-json-list", _corpus_edit(_set_key("header", np.array("[1]")), False), "raise"),
    ("header-int", _corpus_edit(_set_key("header", np.array(5)), False), "raise"),
    ("format-other", _corpus_edit(_header_edit(lambda h: h.__setitem__("format", "x"))),
     "raise"),
    ("format-version-999", _corpus_edit(_header_edit(
        lambda h: h.__setitem__("format_version", 999))), "raise"),
    ("format-version-true", _corpus_edit(_header_edit(
        lambda h: h.__setitem__("format_version", True))), "raise"),
    ("metadata-header-int", _corpus_edit(_header_edit(
        lambda h: h.__setitem__("metadata", 5))), "raise"),
    ("metadata-key-missing", _corpus_edit(_header_edit(
        lambda h: h.__setitem__("metadata", [["x", "metadata_9"]]))), "raise"),
    ("links-flag-without-links", _corpus_edit(_header_edit(
        lambda h: h.__setitem__("links", True))), "raise"),
    ("extra-array", _corpus_edit(_set_key("evil", np.zeros(3))), "raise"),
    ("indices-out-of-range", _corpus_edit(_set_key("counts_indices", _indices_out)), "raise"),
    ("indptr-decreasing", _corpus_edit(_set_key("counts_indptr", _indptr_decreasing)),
     "raise"),
    ("shape-negative", _corpus_edit(_set_key("counts_shape", np.array([-40, 12]))), "raise"),
    ("shape-3-entries", _corpus_edit(_set_key("counts_shape", np.array([40, 12, 1]))),
     "raise"),
    ("shape-10**12-rows", _corpus_edit(_set_key("counts_shape", np.array([10**12, 12]))),
     "raise"),
    ("shape-10**12-columns", _corpus_edit(_set_key("counts_shape", np.array([40, 10**12]))),
     "raise"),
    ("shape-float", _corpus_edit(_set_key("counts_shape", np.array([40.0, 12.0]))), "raise"),
    ("data-NaN", _corpus_edit(_set_key("counts_data",
                                       lambda a: np.r_[np.nan, a[1:].astype(float)])),
     "raise"),
    ("data-negative", _corpus_edit(_set_key("counts_data", lambda a: np.r_[-1, a[1:]])),
     "raise"),
    ("data-complex", _corpus_edit(_set_key("counts_data", lambda a: a.astype(complex))),
     "raise"),
    ("data-2-D", _corpus_edit(_set_key("counts_data", lambda a: a[None])), "raise"),
    ("ids-repeated", _corpus_edit(_set_key("ids", lambda a: np.full_like(a, "x"))), "raise"),
    ("vocabulary-short", _corpus_edit(_set_key("vocabulary", lambda a: a[:-1])), "raise"),
    ("vocabulary-ints", _corpus_edit(_set_key("vocabulary", lambda a: np.arange(a.size))),
     "raise"),
    ("titles-2-D", _corpus_edit(_set_key("titles", lambda a: a.reshape(2, -1))), "raise"),
    ("metadata-wrong-length", _corpus_edit(_set_key("metadata_0", lambda a: a[:-1])),
     "raise"),
    ("bytes-array", _corpus_edit(_set_key("snippets", lambda a: a.astype("S"))), "raise"),
]


def _corpus_file_oracle(c):
    p = corpus_problem(c, 40, 12)
    if p is None and ((c.counts != _sp().csr_matrix(D.X)).nnz or list(c.ids) != [
            f"d{i}" for i in range(40)]):
        return "the loaded corpus differs from the saved one"
    return p


def gen_corpus_files():
    out = []
    need = ("countgrid.text.Corpus.load",)
    for variant, mutate, expect in CORPUS_DAMAGE:
        def run(ctx, mutate=mutate):
            path = ctx.path("corpus.npz")
            corpus().save(path)
            mutate(path)
            return _cg().text.Corpus.load(path)
        out.append(Case("text.Corpus.load", "", "corpus-file", variant, expect, run,
                        ("corpus.npz",), _corpus_file_oracle, need, files=True, recycle=True))
        if variant in ("indices-out-of-range", "shape-negative", "checksum-mismatch",
                       "metadata-key-missing", "ids-repeated", "truncated-end"):
            def run2(ctx, mutate=mutate):
                path = ctx.path("corpus.npz")
                corpus().save(path)
                mutate(path)
                return _cg().text.read_corpus(path)
            out.append(Case("text.read_corpus", "", "corpus-file", variant, expect, run2,
                            ("corpus.npz",), _corpus_file_oracle,
                            ("countgrid.text.read_corpus",), files=True, recycle=True))

    def not_corpus():
        return [
            ("valid", "ok", lambda ctx: corpus().save(ctx.path("c.npz")) or ctx.path("c.npz"),
             "c.npz"),
            ("valid-file-object", "ok", lambda ctx: _bytesio(corpus()), "path"),
            ("empty-file", "raise", lambda ctx: _write(ctx.path("c.npz"), b""), "c.npz"),
            ("text-file", "raise", lambda ctx: _write(ctx.path("c.npz"), b"hello\n"), "c.npz"),
            ("garbage", "raise", lambda ctx: _write(ctx.path("c.npz"), _garbage()), "c.npz"),
            ("single-npy", "raise", lambda ctx: _npy(ctx.path("c.npz")), "c.npz"),
            ("zip-of-text", "raise", lambda ctx: H._zip_text(ctx.path("c.npz")), "c.npz"),
            ("model-file", "raise", lambda ctx: _model_file(ctx.path("c.npz")), "c.npz"),
            ("scipy-npz", "raise", lambda ctx: _scipy_npz(ctx.path("c.npz")), "c.npz"),
            ("object-array", "raise", lambda ctx: H._npz(ctx.path("c.npz"), header=np.array(
                [{}], dtype=object)), "c.npz"),
            ("directory", "raise", lambda ctx: ctx.tmp, os.path.basename),
            ("missing", "raise", lambda ctx: ctx.path("nope.npz"), "nope.npz"),
            ("path-None", "raise", lambda ctx: None, "path"),
            ("path-int", "raise", lambda ctx: 12345, "path"),
            ("path-text-io", "raise", lambda ctx: io.StringIO("x"), "path"),
        ]
    for variant, expect, make_path, nm in not_corpus():
        def run(ctx, make_path=make_path, nm=nm):
            p = make_path(ctx)
            if callable(nm):
                ctx.extra_names.append(nm(p))
            return _cg().text.Corpus.load(p)
        oracle = _corpus_file_oracle
        out.append(Case("text.Corpus.load", "", "corpus-file", variant, expect, run,
                        (nm,) if isinstance(nm, str) else ("path",), oracle, need, files=True))
    # from_dict
    fd = ("countgrid.text.Corpus.from_dict",)
    for variant, expect, d in [
            ("valid", "ok", lambda: corpus().to_dict()),
            ("list", "raise", lambda: [1, 2]), ("None", "raise", lambda: None),
            ("empty", "raise", lambda: {}),
            ("without-header", "raise", lambda: {k: v for k, v in corpus().to_dict().items()
                                                 if k != "header"}),
            ("without-ids", "raise", lambda: {k: v for k, v in corpus().to_dict().items()
                                              if k != "ids"}),
            ("lists-for-arrays", "either", lambda: {k: v.tolist()
                                                    for k, v in corpus().to_dict().items()}),
            ("object-array", "raise", lambda: dict(corpus().to_dict(),
                                                   ids=np.array([None] * 40, dtype=object))),
            ("header-dict", "raise", lambda: dict(corpus().to_dict(), header={"a": 1}))]:
        out.append(Case("text.Corpus.from_dict", "", "corpus-file", variant, expect,
                        lambda ctx, d=d: _cg().text.Corpus.from_dict(d()),
                        ("d", "corpus"), _corpus_file_oracle, fd))
    # save: outputs that cannot be written
    sv = ("countgrid.text.Corpus.save",)
    for variant, expect, path, nm in [
            ("valid", "ok", lambda ctx: ctx.path("c.npz"), "c.npz"),
            ("pathlib", "ok", lambda ctx: __import__("pathlib").Path(ctx.path("c.npz")),
             "c.npz"),
            ("bytes-path", "ok", lambda ctx: os.fsencode(ctx.path("c.npz")), "c.npz"),
            ("file-object", "ok", lambda ctx: io.BytesIO(), "path"),
            ("directory", "raise", lambda ctx: ctx.tmp, os.path.basename),
            ("missing-folder", "raise", lambda ctx: ctx.path("no/such/c.npz"), "c.npz"),
            ("read-only-place", "raise", lambda ctx: "/proc/countgrid-hostile.npz",
             "countgrid-hostile.npz"),
            ("empty-string", "raise", lambda ctx: "", "path"),
            ("None", "raise", lambda ctx: None, "path"),
            ("int", "raise", lambda ctx: 12345, "path"),
            ("text-file-object", "raise", lambda ctx: io.StringIO(), "path")]:
        def run(ctx, path=path, nm=nm):
            p = path(ctx)
            if callable(nm):
                ctx.extra_names.append(nm(p))
            corpus().save(p)
            if isinstance(p, io.BytesIO):
                p.seek(0)
            return _cg().text.Corpus.load(p)
        out.append(Case("text.Corpus.save", "", "output-path", variant, expect, run,
                        (nm,) if isinstance(nm, str) else ("path",), _corpus_file_oracle, sv,
                        files=True))
    return out


def _bytesio(c):
    b = io.BytesIO()
    c.save(b)
    b.seek(0)
    return b


def _npy(path):
    with open(path, "wb") as fh:
        np.save(fh, np.ones(3))
    return path


def _model_file(path, corpus_too=False):
    m = model("CountingGrid")
    _cg().io.save(m, path, corpus=corpus() if corpus_too else None)
    return path


def _scipy_npz(path):
    with open(path, "wb") as fh:
        _sp().save_npz(fh, _sp().csr_matrix(D.X))
    return path


# ============================================================================ readers
def _folder(ctx, name, files):
    root = ctx.path(name)
    os.makedirs(root, exist_ok=True)
    for rel, data in files.items():
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if data is None:
            os.symlink(os.path.join(root, "does-not-exist"), p)
        else:
            _write(p, data if isinstance(data, bytes) else data.encode("utf-8"))
    return root


def _csv_text(rows):
    return "\n".join(rows) + "\n"


def _good_csv(sep=",", text="text"):
    rows = [sep.join(["id", text, "group", "year"])]
    for i, t in enumerate(_texts()):
        rows.append(sep.join([f"p{i}", t, D.text_groups[i], str(1990 + i % 7)]))
    return _csv_text(rows)


def _good_jsonl():
    return "".join(json.dumps({"id": f"p{i}", "text": t, "group": D.text_groups[i],
                               "year": 1990 + i % 7}) + "\n"
                   for i, t in enumerate(_texts()))


def _uci(ctx, D_=None, W=None, NNZ=None, lines=None, vocab=None, name="docword.x.txt"):
    sp = _sp()
    X = sp.coo_matrix(D.X)
    body = lines if lines is not None else [f"{r + 1} {c + 1} {int(v)}"
                                            for r, c, v in zip(X.row, X.col, X.data)]
    head = [str(40 if D_ is None else D_), str(12 if W is None else W),
            str(len(body) if NNZ is None else NNZ)]
    path = _write(ctx.path(name), ("\n".join(head + body) + "\n").encode())
    v = vocab if vocab is not None else "\n".join(D.words) + "\n"
    if v is not False:
        _write(ctx.path("vocab." + name[len("docword."):]), v.encode() if isinstance(v, str)
               else v)
    return path


# (variant, expect, build(ctx) -> path, read_corpus keywords, names besides the file)
def _reader_files():
    T = _texts
    utf8 = lambda s: s.encode("utf-8")  # noqa: E731
    lines = lambda: "\n".join(T()) + "\n"  # noqa: E731
    F = []

    def f(variant, expect, build, kw=None, names=(), text=True):
        F.append((variant, expect, build, kw or {}, names, text))
    # plain text and folders
    f("lines-valid", "ok", lambda c: _write(c.path("d.txt"), utf8(lines())))
    f("lines-garbage", "raise", lambda c: _write(c.path("d.txt"), _garbage()))
    f("lines-latin-1", "raise", lambda c: _write(c.path("d.txt"),
                                                 lines().replace("alpha", "caf\u00e9 alpha")
                                                 .encode("latin-1")), names=("encoding",))
    f("lines-latin-1-declared", "ok", lambda c: _write(c.path("d.txt"), lines().replace(
        "alpha", "caf\u00e9 alpha").encode("latin-1")), dict(encoding="latin-1"))
    f("lines-utf-16", "raise", lambda c: _write(c.path("d.txt"), lines().encode("utf-16")),
      names=("encoding",))
    f("lines-utf-16-declared", "ok", lambda c: _write(c.path("d.txt"),
                                                      lines().encode("utf-16")),
      dict(encoding="utf-16"))
    f("lines-utf-8-bom", "ok", lambda c: _write(c.path("d.txt"), b"\xef\xbb\xbf"
                                                + utf8(lines())))
    f("lines-crlf", "ok", lambda c: _write(c.path("d.txt"), utf8(lines().replace("\n", "\r\n"))))
    f("lines-cr-only", "either", lambda c: _write(c.path("d.txt"),
                                                  utf8(lines().replace("\n", "\r"))))
    f("lines-empty", "raise", lambda c: _write(c.path("d.txt"), b""))
    f("lines-blank", "raise", lambda c: _write(c.path("d.txt"), b"\n \n\t\n"))
    f("lines-NUL-bytes", "either", lambda c: _write(c.path("d.txt"),
                                                    utf8(lines()).replace(b" ", b"\x00", 5)))
    f("lines-one-huge-line", "ok", lambda c: _write(c.path("d.txt"),
                                                    utf8(lines() + " ".join(T()) * 300)))
    f("lines-gz", "ok", lambda c: _gz(c.path("d.txt.gz"), utf8(lines())))
    f("lines-gz-not-gzip", "raise", lambda c: _write(c.path("d.txt.gz"), utf8(lines())))
    f("lines-gz-truncated", "raise", lambda c: _write(c.path("d.txt.gz"), __import__(
        "gzip").compress(utf8(lines() * 20))[:-40]))
    f("encoding-nope", "raise", lambda c: _write(c.path("d.txt"), utf8(lines())),
      dict(encoding="nope"), ("encoding",))
    f("encoding-rot13", "raise", lambda c: _write(c.path("d.txt"), utf8(lines())),
      dict(encoding="rot13"), ("encoding",))
    f("encoding-base64", "raise", lambda c: _write(c.path("d.txt"), utf8(lines())),
      dict(encoding="base64"), ("encoding",))
    f("encoding-int", "raise", lambda c: _write(c.path("d.txt"), utf8(lines())),
      dict(encoding=8), ("encoding",))
    f("encoding-utf-32", "ok", lambda c: _write(c.path("d.txt"), lines().encode("utf-32")),
      dict(encoding="utf-32"))
    f("folder-valid", "ok", lambda c: _folder(c, "posts", {f"{i:02d}.txt": t
                                                         for i, t in enumerate(T())}))
    f("folder-nested", "ok", lambda c: _folder(c, "posts", {f"{'ab'[i % 2]}/{i:02d}.txt": t
                                                          for i, t in enumerate(T())}))
    f("folder-empty", "raise", lambda c: _folder(c, "posts", {}))
    f("folder-only-pdfs", "raise", lambda c: _folder(c, "posts", {"a.pdf": _garbage(),
                                                                "b.pdf": _garbage()}))
    f("folder-no-extensions", "raise", lambda c: _folder(c, "posts", {"a": T()[0],
                                                                    "b": T()[1]}))
    # a file that is not readable text: skipped with a warning (on_error="skip", the
    # default), or an error naming it (on_error="fail")
    f("folder-garbage-txt", "raise", lambda c: _folder(c, "posts", {"a.txt": T()[0],
                                                                  "b.txt": _garbage()}),
      dict(on_error="fail"), ("b.txt",))
    f("folder-garbage-txt-skipped", "ok", lambda c: _folder(c, "posts", {
        **{f"{i:02d}.txt": t for i, t in enumerate(T())}, "zz.txt": _garbage()}))
    f("folder-empty-files", "raise", lambda c: _folder(c, "posts", {"a.txt": "", "b.txt": ""}),
      names=("stop_words", "token_pattern"))
    f("folder-broken-symlink", "raise", lambda c: _folder(c, "posts", {"a.txt": T()[0],
                                                                     "b.txt": T()[1],
                                                                     "c.txt": None}),
      dict(on_error="fail"), ("c.txt",))
    f("folder-broken-symlink-skipped", "ok", lambda c: _folder(c, "posts", {
        **{f"{i:02d}.txt": t for i, t in enumerate(T())}, "zz.txt": None}))
    f("folder-undecodable-names", "ok", lambda c: _folder(c, "posts", {
        os.fsdecode(b"\xff%02d.txt" % i): t for i, t in enumerate(T())}))
    f("folder-hidden-only", "raise", lambda c: _folder(c, "posts", {".a.txt": T()[0]}))
    f("folder-as-lines", "raise", lambda c: _folder(c, "posts", {"a.txt": T()[0]}),
      dict(format="lines"), ("format",))
    f("file-as-folder", "raise", lambda c: _write(c.path("d.txt"), utf8(lines())),
      dict(format="folder"), ("format",))
    f("extensions-int", "raise", lambda c: _folder(c, "posts", {"a.txt": T()[0]}),
      dict(extensions=5), ("extensions",))
    f("extensions-empty", "raise", lambda c: _folder(c, "posts", {"a.txt": T()[0]}),
      dict(extensions=[]), ("extensions",))
    f("unknown-extension", "raise", lambda c: _write(c.path("d.docx"), utf8(lines())),
      names=("format",))
    f("json-extension", "raise", lambda c: _write(c.path("d.json"), utf8(_good_jsonl())),
      names=("format",))
    f("format-nope", "raise", lambda c: _write(c.path("d.txt"), utf8(lines())),
      dict(format="nope"), ("format",))
    f("format-None", "raise", lambda c: _write(c.path("d.txt"), utf8(lines())),
      dict(format=None), ("format",))
    f("format-npz-of-text", "raise", lambda c: _write(c.path("d.txt"), utf8(lines())),
      dict(format="npz"))
    f("format-uci-of-text", "raise", lambda c: _write(c.path("d.txt"), utf8(lines())),
      dict(format="uci"))
    # CSV / TSV
    f("csv-valid", "ok", lambda c: _write(c.path("d.csv"), utf8(_good_csv())),
      dict(text_col="text", id_col="id", meta_cols=["group", "year"]))
    f("tsv-valid", "ok", lambda c: _write(c.path("d.tsv"), utf8(_good_csv("\t"))),
      dict(text_col="text", meta_cols="group,year"))
    # without text_col: the one column named "text" (any case), else an error naming it
    f("csv-text-column-by-default", "ok",
      lambda c: _write(c.path("d.csv"), utf8(_good_csv(text="Text"))), dict(meta_cols=["year"]))
    f("csv-no-text_col", "raise",
      lambda c: _write(c.path("d.csv"), utf8(_good_csv(text="body"))), names=("text_col",))
    f("csv-missing-column", "raise", lambda c: _write(c.path("d.csv"), utf8(_good_csv())),
      dict(text_col="body"), ("text_col", "body"))
    f("csv-missing-meta-column", "raise", lambda c: _write(c.path("d.csv"), utf8(_good_csv())),
      dict(text_col="text", meta_cols=["nope"]), ("meta_cols", "nope"))
    f("csv-duplicate-columns", "raise", lambda c: _write(c.path("d.csv"), utf8(
        _good_csv().replace("id,text,group,year", "text,text,group,year", 1))),
      dict(text_col="text"), ("text_col", "text"))
    f("csv-duplicate-ids", "raise", lambda c: _write(c.path("d.csv"), utf8(
        _good_csv().replace("p1,", "p0,", 1))), dict(text_col="text", id_col="id"),
      ("id_col", "p0"))
    f("csv-ragged-rows", "raise", lambda c: _write(c.path("d.csv"), utf8(
        _good_csv() + "p99,only two\n")), dict(text_col="text"))
    f("csv-unbalanced-quote", "raise", lambda c: _write(c.path("d.csv"), utf8(
        _good_csv() + 'p99,"never closed,a,1\n')), dict(text_col="text"))
    f("csv-header-only", "raise", lambda c: _write(c.path("d.csv"), b"id,text\n"),
      dict(text_col="text"))
    f("csv-empty", "raise", lambda c: _write(c.path("d.csv"), b""), dict(text_col="text"))
    f("csv-huge-field", "ok", lambda c: _write(c.path("d.csv"), utf8(
        _good_csv() + "p99," + " ".join(T()) * 300 + ",even,1\n")), dict(text_col="text"))
    f("csv-NUL-in-field", "either", lambda c: _write(c.path("d.csv"), utf8(
        _good_csv().replace("alpha", "al\x00pha", 3))), dict(text_col="text"))
    f("csv-text_col-int", "raise", lambda c: _write(c.path("d.csv"), utf8(_good_csv())),
      dict(text_col=1), ("text_col",))
    f("csv-meta_cols-int", "raise", lambda c: _write(c.path("d.csv"), utf8(_good_csv())),
      dict(text_col="text", meta_cols=5), ("meta_cols",))
    f("csv-meta_cols-ints", "raise", lambda c: _write(c.path("d.csv"), utf8(_good_csv())),
      dict(text_col="text", meta_cols=[1, 2]), ("meta_cols",))
    f("csv-empty-texts", "raise", lambda c: _write(c.path("d.csv"), utf8(
        _csv_text(["id,text"] + [f"p{i}," for i in range(5)]))), dict(text_col="text"),
      ("stop_words", "token_pattern"))
    f("csv-missing-ids", "either", lambda c: _write(c.path("d.csv"), utf8(
        _good_csv().replace("p1,", ",", 1).replace("p2,", ",", 1))),
      dict(text_col="text", id_col="id"), ("id_col",))
    f("csv-mixed-meta", "ok", lambda c: _write(c.path("d.csv"), utf8(
        _good_csv().replace(",1991\n", ",n/a\n").replace(",1992\n", ",abc\n"))),
      dict(text_col="text", meta_cols=["year"]))
    f("csv-vocab", "raise", lambda c: _write(c.path("d.csv"), utf8(_good_csv())),
      dict(text_col="text", vocab=c_path("v.txt")), ("vocab",))
    # JSON Lines
    f("jsonl-valid", "ok", lambda c: _write(c.path("d.jsonl"), utf8(_good_jsonl())),
      dict(id_col="id", meta_cols=["group", "year"]))
    for what, line in (("list", "[1, 2]"), ("string", '"text"'), ("number", "5"),
                       ("null", "null")):
        f(f"jsonl-{what}-line", "raise", lambda c, line=line: _write(
            c.path("d.jsonl"), utf8(_good_jsonl() + line + "\n")))
    f("jsonl-invalid", "raise", lambda c: _write(c.path("d.jsonl"), utf8(
        _good_jsonl() + '{"text": "x",\n')))
    f("jsonl-deeply-nested", "raise", lambda c: _write(c.path("d.jsonl"), utf8(
        _good_jsonl() + "[" * 200000 + "]" * 200000 + "\n")))
    f("jsonl-no-text-field", "raise", lambda c: _write(c.path("d.jsonl"), utf8(
        _good_jsonl().replace('"text"', '"body"'))), names=("text_field",))
    f("jsonl-text-list", "raise", lambda c: _write(c.path("d.jsonl"), utf8(
        _good_jsonl() + json.dumps({"text": ["a", "b"]}) + "\n")), names=("text_field",))
    f("jsonl-text-number", "raise", lambda c: _write(c.path("d.jsonl"), utf8(
        _good_jsonl() + json.dumps({"text": 5}) + "\n")), names=("text_field",))
    f("jsonl-text-null", "either", lambda c: _write(c.path("d.jsonl"), utf8(
        _good_jsonl() + json.dumps({"text": None}) + "\n")), names=("text_field",))
    f("jsonl-duplicate-ids", "raise", lambda c: _write(c.path("d.jsonl"), utf8(
        _good_jsonl().replace('"p1"', '"p0"'))), dict(id_col="id"), ("id_col", "p0"))
    f("jsonl-numeric-ids", "ok", lambda c: _write(c.path("d.jsonl"), utf8(
        "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(T())))),
      dict(id_col="id"))
    f("jsonl-id-object", "raise", lambda c: _write(c.path("d.jsonl"), utf8(
        _good_jsonl() + json.dumps({"id": {"a": 1}, "text": "x"}) + "\n")), dict(id_col="id"),
      ("id_col",))
    f("jsonl-meta-object", "raise", lambda c: _write(c.path("d.jsonl"), utf8(
        _good_jsonl() + json.dumps({"text": "x", "group": [1]}) + "\n")),
      dict(meta_cols=["group"]), ("meta_cols",))
    f("jsonl-meta-NaN-Infinity", "either", lambda c: _write(c.path("d.jsonl"), utf8(
        "".join(f'{{"text": "{t}", "v": {"NaN" if i % 3 else "Infinity"}}}\n'
                for i, t in enumerate(T())))), dict(meta_cols=["v"]), ("meta_cols", "v"))
    f("jsonl-huge-number", "either", lambda c: _write(c.path("d.jsonl"), utf8(
        "".join(f'{{"text": "{t}", "v": 1{"0" * 400}}}\n' for t in T()))),
      dict(meta_cols=["v"]), ("meta_cols", "v"))
    f("jsonl-text_field-int", "raise", lambda c: _write(c.path("d.jsonl"), utf8(_good_jsonl())),
      dict(text_field=5), ("text_field",))
    f("jsonl-utf-16", "ok", lambda c: _write(c.path("d.jsonl"), _good_jsonl().encode("utf-16")),
      dict(encoding="utf-16"))
    # UCI bag of words
    f("uci-valid", "ok", lambda c: _uci(c), text=False)
    f("uci-NNZ-too-large", "raise", lambda c: _uci(c, NNZ=10**6), text=False,
      names=("NNZ",))
    f("uci-D-too-small", "raise", lambda c: _uci(c, D_=3), text=False, names=("D", "docID"))
    f("uci-W-too-small", "raise", lambda c: _uci(c, W=3), text=False, names=("W", "wordID"))
    f("uci-W-larger-than-vocab", "raise", lambda c: _uci(c, W=20), text=False,
      names=("vocab.x.txt",))
    f("uci-D-10**12", "either", lambda c: _uci(c, D_=10**12), text=False, names=("D",))
    f("uci-D-10**7", "either", lambda c: _uci(c, D_=10**7), text=False, names=("D",))
    f("uci-D-0", "raise", lambda c: _uci(c, D_=0, lines=[]), text=False, names=("D",))
    f("uci-negative-count", "raise", lambda c: _uci(c, lines=["1 1 -3"]), text=False)
    f("uci-count-overflow", "raise", lambda c: _uci(c, lines=["1 1 99999999999999999999"]),
      text=False)
    f("uci-float-count", "raise", lambda c: _uci(c, lines=["1 1 2.5"]), text=False)
    f("uci-four-columns", "raise", lambda c: _uci(c, lines=["1 1 2 3"]), text=False)
    f("uci-header-text", "raise", lambda c: _write(c.path("docword.x.txt"), b"abc\n1\n1\n"),
      text=False)
    f("uci-empty", "raise", lambda c: _write(c.path("docword.x.txt"), b""), text=False)
    f("uci-garbage", "raise", lambda c: _write(c.path("docword.x.txt"), _garbage()),
      text=False)
    f("uci-no-vocab", "raise", lambda c: _uci(c, vocab=False), text=False, names=("vocab",))
    f("uci-vocab-repeated", "raise", lambda c: _uci(c, vocab="\n".join(["a"] * 12)),
      text=False, names=("vocab.x.txt",))
    f("uci-vocab-garbage", "raise", lambda c: _uci(c, vocab=_garbage()), text=False,
      names=("vocab.x.txt",))
    f("uci-vocab-blank-line", "raise", lambda c: _uci(c, vocab="\n".join(
        list(D.words[:5]) + [""] + list(D.words[5:]))), text=False, names=("vocab.x.txt",))
    f("uci-all-zero-counts", "raise", lambda c: _uci(c, lines=["1 1 0"]), text=False)
    # MatrixMarket
    mm = "%%MatrixMarket matrix coordinate integer general\n"
    f("mtx-valid", "ok", lambda c: _mtx(c.path("d.mtx")), text=False)
    f("mtx-negative", "raise", lambda c: _write(c.path("d.mtx"), utf8(mm + "3 3 1\n1 1 -5\n")),
      text=False)
    f("mtx-complex", "raise", lambda c: _write(c.path("d.mtx"), utf8(
        "%%MatrixMarket matrix coordinate complex general\n3 3 1\n1 1 1.0 2.0\n")), text=False)
    f("mtx-10**12-rows", "either", lambda c: _write(c.path("d.mtx"), utf8(
        mm + "1000000000000 3 1\n1 1 5\n")), text=False, names=("rows",))
    f("mtx-entry-outside", "raise", lambda c: _write(c.path("d.mtx"), utf8(
        mm + "3 3 1\n7 7 5\n")), text=False)
    f("mtx-garbage", "raise", lambda c: _write(c.path("d.mtx"), _garbage()), text=False)
    f("mtx-empty", "raise", lambda c: _write(c.path("d.mtx"), b""), text=False)
    f("mtx-vocab-short", "raise", lambda c: _mtx(c.path("d.mtx"), vocab=c.path("v.txt"),
                                                 n_vocab=5), dict(vocab=c_path("v.txt")),
      text=False, names=("v.txt",))
    f("mtx-transpose", "ok", lambda c: _mtx(c.path("d.mtx")), dict(transpose=True),
      text=False)
    f("mtx-declares-2e9-entries", "raise", lambda c: _write(c.path("d.mtx"), utf8(
        mm + "1000000 1000000 2000000000\n1 1 5\n")), text=False)
    f("mtx-gz-declares-9e11-entries", "raise", lambda c: _write(c.path("d.mtx.gz"), gzip.compress(
        utf8(mm + "100000000 100000000 900000000000\n1 1 5\n"))), text=False)
    f("mtx-gz-damaged", "raise", lambda c: _write(c.path("d.mtx.gz"), gzip.compress(
        utf8(mm + "3 3 1\n1 1 5\n"))[:-12]), text=False)
    # 10x Genomics folders (features x cells)
    f("10x-valid", "ok", lambda c: _tenx(c), text=False)
    f("10x-barcodes-short", "raise", lambda c: _tenx(c, n_barcodes=N_DOCS - 1), text=False,
      names=("barcodes.tsv",))
    f("10x-no-features-file", "ok", lambda c: _tenx(c, features=False), text=False)
    f("10x-barcodes-not-utf8", "raise", lambda c: _tenx(c, barcodes=b"\xff\xfe\x00A\n" * N_DOCS),
      text=False, names=("barcodes.tsv",))
    f("10x-features-gz-damaged", "raise", lambda c: _tenx(c, damage="features.tsv.gz"),
      text=False, names=("features.tsv.gz",))
    f("10x-matrix-garbage", "raise", lambda c: _tenx(c, matrix=_garbage()), text=False,
      names=("matrix.mtx",))
    f("10x-matrix-declares-2e9", "raise", lambda c: _tenx(c, matrix=utf8(
        mm + "12 40 2000000000\n1 1 5\n")), text=False, names=("matrix.mtx",))
    f("10x-transpose", "raise", lambda c: _tenx(c), dict(transpose=True), text=False,
      names=("transpose",))
    # npz that are not corpora
    f("npz-valid-scipy", "ok", lambda c: _scipy_npz(c.path("d.npz")), text=False)
    f("npz-garbage", "raise", lambda c: _write(c.path("d.npz"), _garbage()), text=False)
    f("npz-empty-archive", "raise", lambda c: H._npz(c.path("d.npz")), text=False)
    f("npz-random-arrays", "raise", lambda c: H._npz(c.path("d.npz"), a=np.ones(3),
                                                     b=np.zeros((2, 2))), text=False)
    f("npz-single-npy", "raise", lambda c: _npy(c.path("d.npz")), text=False)
    f("npz-model-file", "raise", lambda c: _model_file(c.path("d.npz")), text=False)
    f("npz-feature_names-short", "raise", lambda c: _scipy_npz_extra(
        c.path("d.npz"), feature_names=D.words[:-1]), text=False, names=("feature_names",))
    f("npz-texts-offsets-bad", "raise", lambda c: _scipy_npz_extra(
        c.path("d.npz"), texts_utf8=np.frombuffer(b"abc", np.uint8),
        texts_offsets=np.arange(41) * 100), text=False, names=("texts_offsets",))
    f("npz-y-short", "raise", lambda c: _scipy_npz_extra(c.path("d.npz"), y=D.y[:-1]),
      text=False, names=("y",))
    f("npz-label_names-out-of-range", "ok", lambda c: _scipy_npz_extra(
        c.path("d.npz"), y=D.y + 5, label_names=np.array(["a", "b"])), text=False)
    f("npz-vocab", "raise", lambda c: _scipy_npz(c.path("d.npz")),
      dict(vocab=c_path("v.txt")), text=False, names=("vocab",))
    f("npz-with-text_col", "raise", lambda c: _scipy_npz(c.path("d.npz")),
      dict(text_col="text"), text=False, names=("text_col",))
    # paths
    f("path-missing", "raise", lambda c: c.path("nope.txt"))
    f("path-empty-string", "raise", lambda c: "", names=("path",))
    f("path-None", "raise", lambda c: None, names=("path",))
    f("path-int", "raise", lambda c: 5, names=("path",))
    f("path-list", "raise", lambda c: [c.path("d.txt")], names=("path",))
    f("path-stdin-empty", "raise", lambda c: "-", names=("<stdin>", "stdin"))
    return F


class c_path:
    """A keyword value that is a file of the case's folder (resolved when the case runs)."""

    def __init__(self, name):
        self.name = name


def _resolve_kw(kw, ctx):
    return {k: (ctx.path(v.name) if isinstance(v, c_path) else v) for k, v in kw.items()}


def _gz(path, data):
    import gzip

    with gzip.open(path, "wb") as fh:
        fh.write(data)
    return path


N_DOCS = 40      # the canonical corpus's documents (D.X)


def _tenx(c, n_barcodes=None, features=True, barcodes=None, matrix=None, damage=None):
    """A 10x folder of the canonical counts (features x cells, gzipped); the parts given
    replace the good ones."""
    import scipy.io

    folder = c.path("tenx")
    os.makedirs(folder, exist_ok=True)
    buf = io.BytesIO()
    scipy.io.mmwrite(buf, _sp().coo_matrix(D.X.astype(np.int64).T))
    parts = {"matrix.mtx": buf.getvalue() if matrix is None else matrix,
             "barcodes.tsv": barcodes if barcodes is not None else "".join(
                 f"CELL{k}-1\n" for k in range(N_DOCS if n_barcodes is None else n_barcodes))
             .encode()}
    if features:
        parts["features.tsv"] = "".join(f"ID{j}\t{w}\tGene Expression\n"
                                        for j, w in enumerate(D.words)).encode()
    for name, data in parts.items():
        packed = gzip.compress(data, mtime=0)
        if damage == name + ".gz":
            packed = packed[:len(packed) // 2]
        _write(os.path.join(folder, name + ".gz"), packed)
    return folder


def _mtx(path, vocab=None, n_vocab=12):
    import scipy.io

    scipy.io.mmwrite(path, _sp().coo_matrix(D.X.astype(np.int64)))
    if vocab is not None:
        _write(vocab, ("\n".join(D.words[:n_vocab]) + "\n").encode())
    return path


def _scipy_npz_extra(path, **extra):
    X = _sp().csr_matrix(D.X)
    parts = dict(data=X.data, indices=X.indices, indptr=X.indptr, shape=np.array(X.shape),
                 format=np.array("csr"))
    parts.update(extra)
    with open(path, "wb") as fh:
        np.savez(fh, **parts)
    return path


def _reader_oracle(reader):
    def oracle(value):
        if reader == "read_corpus":
            return corpus_problem(value)
        if not isinstance(value, dict) or not {"texts", "ids", "titles", "links", "metadata",
                                               "source"} <= set(value):
            return "read_documents did not return its dict"
        n = len(value["texts"])
        if not n or len(value["ids"]) != n or len(value["titles"]) != n:
            return "texts, ids and titles differ in length"
        if not all(isinstance(t, str) for t in value["texts"] + value["ids"]
                   + value["titles"]):
            return "texts, ids or titles hold non-str values"
        if len(set(value["ids"])) != n:
            return "ids repeat"
        for k, v in value["metadata"].items():
            if len(v) != n:
                return f"metadata[{k!r}] has {len(v)} entries for {n} documents"
        return None
    return oracle


def gen_readers():
    out = []
    for variant, expect, build, kw, names, is_text in _reader_files():
        readers = ("read_corpus", "read_documents") if is_text else ("read_corpus",)
        for reader in readers:
            if reader == "read_documents" and (
                    "vocab" in kw or variant.startswith(("format-npz", "format-uci"))):
                continue
            doc_kw = {k: v for k, v in kw.items() if k not in ("vocab",)}
            exp = expect
            if reader == "read_documents" and "stop_words" in names:
                exp = "either"          # no vectorising: documents without words are fine

            def run(ctx, build=build, kw=kw, doc_kw=doc_kw, reader=reader):
                path = build(ctx)
                if isinstance(path, str) and path not in ("", "-"):
                    ctx.extra_names.append(os.path.basename(path))
                f = getattr(_cg().text, reader)
                return f(path, **_resolve_kw(kw if reader == "read_corpus" else doc_kw, ctx))
            out.append(Case(f"text.{reader}", "", "text-file", variant, exp, run,
                            ("path",) + tuple(names), _reader_oracle(reader),
                            (f"countgrid.text.{reader}",), files=True, timeout=60.0))
    return out


# ============================================================================ browsing a grid
def _grid():
    return model("CountingGrid")


def _brute_scores(X, cell, ranking="depth"):
    """Every document's score at ``cell``, by brute force over the windows of
    ``transform(X)``: the posterior mean depth of the cell in the document's window
    (``K(d) = prod min(d + 1, W - d) / ceil(W / 2)``, documents_near's default) or, for
    ``ranking="coverage"``, the probability that the window contains the cell."""
    g = _grid()
    E, W = tuple(g.pi_.shape[:-1]), tuple(g.window)
    flat = cell if isinstance(cell, (int, np.integer)) else int(np.ravel_multi_index(
        tuple(int(c) for c in cell), E))
    target = np.unravel_index(int(flat), E)
    Q = np.asarray(g.transform(X), dtype=np.float64).reshape((-1,) + E)
    out = np.zeros(Q.shape[0])
    for d in np.ndindex(*W):
        depth = 1.0 if ranking == "coverage" else float(np.prod(
            [min(a + 1, w - a) / float(-(-w // 2)) for a, w in zip(d, W)]))
        corner = tuple((t - a) % e for t, a, e in zip(target, d, E))
        out += depth * Q[(slice(None),) + corner]
    return out


def _rank_key(s):
    """Scores to 3 decimals: documents_near orders scores equal to 3 decimals by the
    documents' log-likelihood per token, so a document may pass one that scores less than
    1e-3 more."""
    return np.floor(np.asarray(s, dtype=np.float64) * 1000.0 + 0.5)


def gen_browse():
    out = []
    E = (4, 4)

    def near_oracle(X, cell, k, ranking="depth"):
        def oracle(value):
            idx, scores = value
            n = H._n_rows(X)
            want = min(k, n)
            if idx.shape != (want,) or scores.shape != (want,) or idx.dtype != np.int64:
                return f"indices/scores of shape {idx.shape}, expected ({want},) int64"
            p = nonfinite(scores)
            if p:
                return p
            if want and (np.unique(idx).size != want or idx.min() < 0 or idx.max() >= n):
                return "indices repeat or are out of range"
            if np.any(scores < -1e-9) or np.any(scores > 1 + 1e-6):
                return "scores are not in [0, 1]"
            ref = _brute_scores(X, cell, ranking)
            if not np.allclose(scores, ref[idx], rtol=1e-5, atol=1e-7):
                return f"scores differ from the {ranking} of the cell in transform(X)'s windows"
            if ranking == "coverage":
                if np.any(np.diff(scores) > 1e-12):
                    return "scores are not descending"
                if want and np.sort(ref)[::-1][want - 1] > scores[-1] + 1e-6:
                    return "a better-covering document is missing"
                return None
            key = _rank_key(ref)
            if np.any(np.diff(key[idx]) > 0):
                return "scores are not descending (to 3 decimals)"
            rest = np.setdiff1d(np.arange(n), idx)
            if want and rest.size and key[rest].max() > key[idx].min():
                return "a document the cell is deeper in (to 3 decimals) is missing"
            return None
        return oracle

    need = ("countgrid.CountingGrid.documents_near",)
    for variant, expect, cell in [
            ("(0,0)", "ok", (0, 0)), ("(3,3)", "ok", (3, 3)), ("flat-15", "ok", 15),
            ("numpy-ints", "ok", (np.int64(1), np.int32(2))), ("numpy-int", "ok", np.int64(5)),
            ("list", "ok", [1, 2]), ("array", "ok", np.array([2, 1])),
            ("uint64", "ok", (np.uint64(1), np.uint64(3))),
            ("flat-16", "raise", 16), ("flat--1", "raise", -1), ("(4,0)", "raise", (4, 0)),
            ("(0,-1)", "raise", (0, -1)), ("(0,)", "raise", (0,)), ("(0,0,0)", "raise", (0, 0, 0)),
            ("(0.5,1)", "raise", (0.5, 1)), ("(1.0,2.0)", "raise", (1.0, 2.0)),
            ("'ab'", "raise", "ab"), ("None", "raise", None), ("True", "raise", True),
            ("(True,1)", "raise", (True, 1)), ("2**70", "raise", 2**70),
            ("(2**70,0)", "raise", (2**70, 0)), ("0-d-array", "raise", np.array(5)),
            ("(nan,1)", "raise", (np.nan, 1)), ("dict", "raise", {"a": 1}),
            ("2-D-array", "raise", np.array([[1, 2]]))]:
        out.append(Case("CountingGrid", "documents_near", "cells", f"cell={variant}", expect,
                        lambda ctx, cell=cell: _grid().documents_near(D.Xq, cell, 5),
                        ("cell",), near_oracle(D.Xq, cell, 5), need))
    for variant, expect, k in [("0", "raise", 0), ("-1", "raise", -1), ("2.5", "raise", 2.5),
                               ("True", "raise", True), ("'3'", "raise", "3"),
                               ("None", "raise", None), ("10**18", "ok", 10**18),
                               ("numpy.int64(3)", "ok", np.int64(3)), ("1", "ok", 1)]:
        out.append(Case("CountingGrid", "documents_near", "params", f"n_documents={variant}",
                        expect, lambda ctx, k=k: _grid().documents_near(D.Xq, (1, 1), k),
                        ("n_documents",), near_oracle(D.Xq, (1, 1),
                                                      k if isinstance(k, int) else 3), need))
    for variant, expect, X in [
            ("sparse", "ok", lambda: _sp().csr_matrix(D.Xq)), ("list", "ok", lambda: D.Xq.tolist()),
            ("NaN", "raise", lambda: H._set(1, 1, np.nan)(D.Xq)),
            ("negative", "raise", lambda: H._set(1, 1, -1.0)(D.Xq)),
            ("wrong-n_features", "raise", lambda: H._wrong_features(D.Xq)),
            ("0-rows", "either", lambda: D.Xq[:0]), ("1-D", "raise", lambda: D.Xq[0]),
            ("None", "raise", lambda: None),
            ("csr:index-out-of-range", "raise", lambda: H._corrupt("csr:index-out-of-range")(D.Xq)),
            ("csr:short-indptr", "raise", lambda: H._corrupt("csr:short-indptr")(D.Xq))]:
        out.append(Case("CountingGrid", "documents_near", "shape" if "rows" in variant or
                        variant in ("1-D", "None", "wrong-n_features") else "values",
                        f"X-{variant}", expect,
                        lambda ctx, X=X: _grid().documents_near(X(), (1, 1), 5),
                        ("X", "n_features", "features"), near_oracle(X(), (1, 1), 5)
                        if expect == "ok" else oracle_finite(), need,
                        recycle=variant.startswith("csr:")))
    for variant, expect, ranking in [("'coverage'", "ok", "coverage"), ("'depth'", "ok", "depth"),
                                     ("'centre'", "raise", "centre"), ("None", "raise", None),
                                     ("'Depth'", "raise", "Depth")]:
        out.append(Case("CountingGrid", "documents_near", "params", f"ranking={variant}",
                        expect, lambda ctx, r=ranking: _grid().documents_near(D.Xq, (1, 2), 6,
                                                                              ranking=r),
                        ("ranking",), near_oracle(D.Xq, (1, 2), 6, ranking)
                        if expect == "ok" else None, need))
    out.append(Case("CountingGrid", "documents_near", "params", "unfitted", "raise",
                    lambda ctx: make("CountingGrid").documents_near(D.Xq, (0, 0)),
                    ("CountingGrid", "fit"), None, need))

    # word_map, word_cells, top_words
    def wm_oracle(word):
        def oracle(m):
            g = _grid()
            w = list(D.words).index(word) if isinstance(word, str) else int(word) % 12
            if np.shape(m) != E or not np.array_equal(m, g.pi_[..., w]):
                return "word_map is not pi_[..., w]"
            return None
        return oracle
    for variant, expect, word, names in [
            ("'w3'", "ok", "w3", ("word",)), ("3", "ok", 3, ("word",)), ("-1", "ok", -1, ("word",)),
            ("numpy.int64(3)", "ok", np.int64(3), ("word",)),
            ("numpy.str_", "ok", np.str_("w3"), ("word",)),
            ("12", "raise", 12, ("word",)), ("-13", "raise", -13, ("word",)),
            ("'nope'", "raise", "nope", ("word", "nope")), ("'W3'", "raise", "W3", ("word",)),
            ("None", "raise", None, ("word",)), ("2.0", "raise", 2.0, ("word",)),
            ("True", "raise", True, ("word",)), ("bytes", "raise", b"w3", ("word",)),
            ("2**70", "raise", 2**70, ("word",)), ("list", "raise", ["w3"], ("word",)),
            ("''", "raise", "", ("word",))]:
        out.append(Case("CountingGrid", "word_map", "cells", f"word={variant}", expect,
                        lambda ctx, word=word: _grid().word_map(word, feature_names=D.words),
                        names, wm_oracle(word), ("countgrid.CountingGrid.word_map",)))
    for variant, expect, fn, word in [
            ("too-short", "raise", lambda: D.words[:-1], "w3"),
            ("None-with-str-word", "raise", lambda: None, "w3"),
            ("single-str", "raise", lambda: "abc", "w3"),
            ("2-D", "raise", lambda: D.words.reshape(3, 4), "w3"),
            ("dict", "raise", lambda: {w: i for i, w in enumerate(D.words)}, "w3"),
            ("ints", "either", lambda: np.arange(12), "3"),
            ("repeated", "either", lambda: np.r_[D.words[:6], D.words[:6]], "w3"),
            ("None-with-int-word", "ok", lambda: None, 3)]:
        out.append(Case("CountingGrid", "word_map", "params", f"feature_names-{variant}",
                        expect, lambda ctx, fn=fn, word=word: _grid().word_map(
                            word, feature_names=fn()), ("feature_names", "word"),
                        oracle_finite(), ("countgrid.CountingGrid.word_map",)))

    def cells_oracle(value):
        cells, weights = value
        g = _grid()
        if cells.ndim != 2 or cells.shape[1] != 2 or cells.shape[0] != weights.shape[0]:
            return f"cells of shape {cells.shape}"
        if (cells < 0).any() or (cells >= 4).any():
            return "cells out of the grid"
        if not np.array_equal(weights, g.pi_[cells[:, 0], cells[:, 1], 3]):
            return "weights are not pi_ at the cells"
        if np.any(np.diff(weights) > 0):
            return "weights are not descending"
        return None
    for variant, expect, k in [("0", "raise", 0), ("-1", "raise", -1), ("2.5", "raise", 2.5),
                               ("True", "raise", True), ("None", "raise", None),
                               ("'3'", "raise", "3"), ("10**18", "ok", 10**18),
                               ("numpy.int64(2)", "ok", np.int64(2)), ("16", "ok", 16)]:
        out.append(Case("CountingGrid", "word_cells", "params", f"n_cells={variant}", expect,
                        lambda ctx, k=k: _grid().word_cells(3, n_cells=k), ("n_cells",),
                        cells_oracle, ("countgrid.CountingGrid.word_cells",)))

    def top_oracle(k, weighting="relevance"):
        def oracle(t):
            g = _grid()
            kk = min(k, 12)
            if t.shape != E + (kk,):
                return f"top_words has shape {t.shape}, expected {E + (kk,)}"
            names = np.asarray(D.words)
            pi = np.asarray(g.pi_, dtype=np.float64).reshape(-1, 12)
            if weighting == "relevance":
                # LDAvis' relevance, top_words' default: lam log pi + (1 - lam) log(pi / p),
                # p the grid's average word distribution; the same order as pi * p^(lam - 1)
                if getattr(g, "prior_", None) is not None:
                    return "the oracle expects a grid with the uniform prior"
                lam = _cg().grid.RELEVANCE_LAMBDA
                score = pi * pi.mean(axis=0) ** (lam - 1.0)
            else:
                score = pi
            idx = np.searchsorted(np.sort(names), t.reshape(-1, kk)) if t.dtype.kind == "U" \
                else t.reshape(-1, kk)
            if t.dtype.kind == "U":
                idx = np.argsort(names)[idx]
            vals = np.take_along_axis(score, idx, axis=1)
            best = np.sort(score, axis=1)[:, ::-1][:, :kk]
            if np.any(np.diff(vals, axis=1) > 1e-12 * best[:, :1]) or not np.allclose(
                    vals, best, rtol=1e-9, atol=0):
                most = "relevant" if weighting == "relevance" else "probable"
                return f"top_words are not the most {most} words in order"
            return None
        return oracle
    for variant, expect, k in [("0", "raise", 0), ("-1", "raise", -1), ("2.5", "raise", 2.5),
                               ("True", "raise", True), ("None", "raise", None),
                               ("10**18", "ok", 10**18), ("12", "ok", 12), ("1", "ok", 1),
                               ("numpy.int64(4)", "ok", np.int64(4))]:
        out.append(Case("CountingGrid", "top_words", "params", f"n_words={variant}", expect,
                        lambda ctx, k=k: _grid().top_words(k, feature_names=D.words),
                        ("n_words",), top_oracle(k if isinstance(k, (int, np.integer))
                                                 and not isinstance(k, bool) else 1),
                        ("countgrid.CountingGrid.top_words",)))
    out.append(Case("CountingGrid", "top_words", "params", "weighting='probability'", "ok",
                    lambda ctx: _grid().top_words(5, feature_names=D.words,
                                                  weighting="probability"),
                    ("weighting",), top_oracle(5, "probability"),
                    ("countgrid.CountingGrid.top_words",)))
    out.append(Case("CountingGrid", "top_words", "params", "feature_names-too-short",
                    "raise", lambda ctx: _grid().top_words(3, feature_names=D.words[:5]),
                    ("feature_names",), None, ("countgrid.CountingGrid.top_words",)))

    # positions(anchor=)
    def pos_oracle(anchor):
        def oracle(p):
            g = _grid()
            if p.shape != (7, 2) or p.dtype != np.int64 or (p < 0).any() or (p >= 4).any():
                return f"positions of shape {p.shape} / dtype {p.dtype} out of the grid"
            corner = np.stack(np.unravel_index(np.argmax(g.transform(D.Xq), axis=1), E), 1)
            want = corner if anchor == "corner" else (corner + np.asarray(g.window) // 2) % 4
            return None if np.array_equal(p, want) else "positions differ from argmax q"
        return oracle
    for variant, expect, anchor in [("'center'", "ok", "center"), ("'corner'", "ok", "corner"),
                                    ("numpy.str_", "ok", np.str_("center")),
                                    ("'middle'", "raise", "middle"), ("None", "raise", None),
                                    ("1", "raise", 1), ("'CENTER'", "raise", "CENTER"),
                                    ("list", "raise", ["center"])]:
        out.append(Case("CountingGrid", "positions", "cells", f"anchor={variant}", expect,
                        lambda ctx, a=anchor: _grid().positions(D.Xq, anchor=a), ("anchor",),
                        pos_oracle(str(anchor)), ("countgrid.CountingGrid.positions",)))
    return out


# ============================================================================ maps
def _grid3d():
    key = "CountingGrid:3d"
    if key not in H._MODELS:
        H._MODELS[key] = H._cached(("model", key), lambda: _cg().CountingGrid(
            (3, 3, 2), (2, 2, 1), n_iter=2, random_state=0, num_threads=1).fit(D.Xs))
    import copy
    return copy.deepcopy(H._MODELS[key])


def map_oracle(n=None):
    def oracle(d):
        if not isinstance(d, dict):
            return "map_data did not return a dict"
        L = int(np.prod(d["extent"]))
        Z = d["n_features"]
        k = d["n_documents"]
        if n is not None and k != n:
            return f"{k} documents in the map, expected {n}"
        off = np.asarray(d["doc_offsets"])
        if off.shape != (k + 1,) or off[0] != 0 or np.any(np.diff(off) < 1) and k:
            return "doc_offsets are not increasing offsets, one per document"
        pos, q = np.asarray(d["doc_positions"]), np.asarray(d["doc_posteriors"])
        if pos.shape != q.shape or pos.size != off[-1] or (pos.size and pos.max() >= L):
            return "doc_positions are inconsistent"
        if nonfinite(q) or (q.size and (q.min() < 0 or q.max() > 1 + 1e-6)):
            return "doc_posteriors are not probabilities"
        if np.asarray(d["top_words"]).max() >= Z or nonfinite(d["top_weights"]):
            return "top words out of range or non-finite"
        for key in ("titles", "snippets", "ids"):
            if len(d[key]) != k or not all(isinstance(s, str) for s in d[key]):
                return f"{key} are not {k} str"
        if len(d["vocabulary"]) != Z:
            return "vocabulary length"
        for c in d["colorings"]:
            v = np.asarray(c["values"], dtype=np.float64)
            if c["kind"] == "categorical" and (nonfinite(v) or v.min() < 0):
                return f"colouring {c['name']!r} has invalid proportions"
            if c["kind"] == "continuous" and not (np.isfinite(c["vmin"])
                                                   and np.isfinite(c["vmax"])):
                return f"colouring {c['name']!r} has a non-finite range"
        return None
    return oracle


def _html_oracle(value):
    path = str(value)
    if not os.path.isfile(path):
        return "no file written"
    with open(path, encoding="utf-8") as fh:
        head = fh.read(4096)
    if "<html" not in head.lower():
        return "the file is not HTML"
    return None


CORPUS = "<the canonical corpus>"


def _lazy(kw):
    return {k: corpus() if isinstance(v, str) and v == CORPUS else v for k, v in kw.items()}


def gen_maps():
    out = []

    def md(**kw0):
        def call():
            kw = _lazy(kw0)
            X = kw.pop("X", D.Xs)
            grid = kw.pop("grid", None)
            return _cg().maps.map_data(_grid() if grid is None else grid(), X, **kw)
        return call

    def add(entry, klass, variant, expect, f, names, oracle=None, files=False):
        needs = {"maps.map_data": ("countgrid.maps.map_data",),
                 "maps.write_html": ("countgrid.maps.write_html",),
                 "CountingGrid.to_html": ("countgrid.CountingGrid.to_html",)}[entry]
        entry_, method = (entry.split(".") if entry == "CountingGrid.to_html" else (entry, ""))
        out.append(Case(entry_, method, klass, variant, expect, f, names, oracle, needs,
                        files=files))
    P = ("grid",)
    rows = [  # (klass, variant, expect, kwargs, names, n documents)
        ("params", "valid", "ok", {}, P, 40),
        ("params", "corpus", "ok", dict(X=None, corpus=CORPUS), P, 40),
        ("params", "corpus-and-X-of-another-size", "raise", dict(X=D.Xq, corpus=CORPUS),
         ("titles", "X"), None),
        ("params", "corpus-and-X", "ok", dict(X=D.X[::-1], corpus=CORPUS), P, 40),
        ("params", "no-documents", "ok", dict(X=None), P, 0),
        ("params", "grid-unfitted", "raise", dict(grid=lambda: make("CountingGrid")),
         ("grid", "CountingGrid", "fit"), None),
        ("params", "grid-PLSA", "raise", dict(grid=lambda: model("PLSA")), P, None),
        ("params", "grid-None", "raise", dict(grid=lambda: None), P, None),
        ("params", "grid-str", "raise", dict(grid=lambda: "model.npz"), P, None),
        ("params", "grid-3-D", "raise", dict(grid=_grid3d), ("grid", "extent"), None),
        ("params", "grid-generative", "raise",
         dict(grid=lambda: model("GenerativeCountingGridClassifier")), ("grid", "grids_"),
         None),
        ("params", "grid-classifier", "ok", dict(grid=lambda: model("CountingGridClassifier")),
         P, 40),
        ("params", "grid-regressor", "either",
         dict(grid=lambda: model("CountingGridRegressor")), P, 40),
        ("shape", "X-wrong-n_features", "raise", dict(X=H._wrong_features(D.X)),
         ("X", "n_features", "features"), None),
        ("values", "X-NaN", "raise", dict(X=H._set(1, 1, np.nan)(D.X)), ("X",), None),
        ("values", "X-negative", "raise", dict(X=H._set(1, 1, -1.0)(D.X)), ("X",), None),
        ("shape", "X-0-rows", "either", dict(X=D.X[:0]), ("X",), 0),
        ("shape", "X-list", "ok", dict(X=D.X.tolist()), ("X",), 40),
        ("values", "X-all-zero", "either", dict(X=np.zeros_like(D.X)), ("X",), 40),
        ("shape", "X-1-D", "raise", dict(X=D.X[0]), ("X",), None),
        ("shape", "X-str", "raise", dict(X="abc"), ("X",), None),
        ("params", "titles-too-short", "raise", dict(titles=["t"] * 39), ("titles",), None),
        ("params", "titles-single-str", "raise", dict(titles="abc"), ("titles",), None),
        ("params", "titles-ints", "ok", dict(titles=list(range(40))), ("titles",), 40),
        ("params", "titles-without-X", "raise", dict(X=None, titles=["t"]), ("titles", "X"),
         None),
        ("params", "snippets-huge", "ok", dict(snippets=["x" * 10**5] * 40), ("snippets",), 40),
        ("params", "snippets-script", "ok", dict(snippets=["</script><script>alert(1)"] * 40),
         ("snippets",), 40),
        ("params", "titles-lone-surrogate", "ok", dict(titles=[f"t\ud800{i}" for i in range(40)],
                                                       title="map \udcff"), ("titles",), 40),
        ("params", "snippets-surrogateescape", "ok",
         dict(snippets=[f"caf\udce9 {i}" for i in range(40)], feature_names=[
             f"w\udcff{i}" for i in range(12)]), ("snippets",), 40),
        ("params", "links-too-long", "raise", dict(links=["l"] * 41), ("links",), None),
        ("params", "ids-int", "raise", dict(ids=5), ("ids",), None),
        ("params", "metadata-list", "raise", dict(metadata=[1, 2]), ("metadata",), None),
        ("params", "metadata-too-short", "raise", dict(metadata={"g": D.y[:-1]}),
         ("metadata",), None),
        ("params", "metadata-2-D", "raise", dict(metadata={"g": np.ones((40, 2))}),
         ("metadata",), None),
        ("params", "metadata-inf", "raise", dict(metadata={"g": np.r_[np.inf, D.y_real[1:]]}),
         ("metadata",), None),
        ("params", "metadata-NaN", "ok", dict(metadata={"g": np.r_[np.nan, D.y_real[1:]]}),
         ("metadata",), 40),
        ("params", "metadata-all-NaN", "ok", dict(metadata={"g": np.full(40, np.nan)}),
         ("metadata",), 40),
        ("params", "metadata-100-levels", "ok", dict(metadata={"g": np.arange(40).astype(str)}),
         ("metadata",), 40),
        ("params", "metadata-None-values", "ok", dict(metadata={"g": [None, "a"] * 20}),
         ("metadata",), 40),
        ("params", "metadata-objects", "either", dict(metadata={"g": [object()] * 40}),
         ("metadata",), 40),
        ("params", "metadata-key-int", "either", dict(metadata={5: D.y.astype(str)}),
         ("metadata",), 40),
        ("params", "color_by-unknown", "raise", dict(color_by="nope"), ("color_by", "nope"),
         None),
        ("params", "color_by-int", "raise", dict(color_by=5), ("color_by",), None),
        ("params", "n_words=0", "raise", dict(n_words=0), ("n_words",), None),
        ("params", "n_words=2.5", "raise", dict(n_words=2.5), ("n_words",), None),
        ("params", "n_words=True", "raise", dict(n_words=True), ("n_words",), None),
        ("params", "n_words=10**18", "ok", dict(n_words=10**18), ("n_words",), 40),
        ("params", "max_docs=0", "raise", dict(max_docs=0), ("max_docs",), None),
        ("params", "max_docs=5", "ok", dict(max_docs=5), ("max_docs",), 5),
        ("params", "max_docs=5-idf", "ok", dict(max_docs=5, idf=True), ("max_docs",), 5),
        ("params", "max_docs=5-corpus", "ok", dict(X=None, corpus=CORPUS, max_docs=5),
         ("max_docs",), 5),
        ("params", "max_docs=2.5", "raise", dict(max_docs=2.5), ("max_docs",), None),
        ("params", "idf='yes'", "raise", dict(idf="yes"), ("idf",), None),
        ("params", "idf-without-X", "raise", dict(X=None, idf=True), ("idf", "X"), None),
        ("params", "random_state=-1", "raise", dict(max_docs=5, random_state=-1),
         ("random_state",), None),
        ("params", "title=5", "raise", dict(title=5), ("title",), None),
        ("params", "feature_names-short", "raise", dict(feature_names=D.words[:-1]),
         ("feature_names",), None),
        ("params", "feature_names-dict-out-of-range", "raise",
         dict(feature_names={"a": 99, **{w: i for i, w in enumerate(D.words[1:], 1)}}),
         ("feature_names",), None),
        ("params", "feature_names-single-str", "raise", dict(feature_names="abc"),
         ("feature_names",), None),
        ("params", "corpus-not-a-corpus", "raise", dict(X=None, corpus=object()),
         ("corpus", "X"), None),
        ("params", "corpus-dict", "raise", dict(X=None, corpus={"counts": D.X}),
         ("corpus", "X"), None),
        ("params", "unknown-keyword", "raise", dict(foo=1), ("foo",), None),
    ]
    for klass, variant, expect, kw, names, n in rows:
        add("maps.map_data", klass, variant, expect, lambda ctx, f=md(**kw): f(), names,
            map_oracle(n))
        if variant in ("valid", "corpus", "grid-3-D", "X-NaN", "color_by-unknown",
                       "metadata-inf", "n_words=0", "snippets-script", "grid-classifier",
                       "metadata-all-NaN", "unknown-keyword", "corpus-not-a-corpus",
                       "titles-lone-surrogate", "snippets-surrogateescape"):
            def run(ctx, kw=kw):
                kw = _lazy(kw)
                X = kw.pop("X", D.Xs)
                grid = kw.pop("grid", None)
                return _cg().maps.write_html(_grid() if grid is None else grid(),
                                             ctx.path("m.html"), X, **kw)
            add("maps.write_html", klass, variant, expect, run, names, _html_oracle, True)
    add("maps.write_html", "params", "gzip-with-surrogates", "ok",
        lambda ctx: _cg().maps.write_html(_grid(), ctx.path("m.html"), D.Xs, data_format="gzip",
                                          titles=[f"t\udcff{i}" for i in range(40)]),
        ("titles",), _html_oracle, True)
    for variant, expect, fmt in [("json", "ok", "json"), ("gzip", "ok", "gzip"),
                                 ("nope", "raise", "nope"), ("None", "raise", None)]:
        add("maps.write_html", "params", f"data_format={variant}", expect,
            lambda ctx, fmt=fmt: _cg().maps.write_html(_grid(), ctx.path("m.html"), D.Xs,
                                                       data_format=fmt),
            ("data_format",), _html_oracle, True)
    for variant, expect, path, nm in [
            ("valid", "ok", lambda ctx: ctx.path("m.html"), "m.html"),
            ("pathlib", "ok", lambda ctx: __import__("pathlib").Path(ctx.path("m.html")),
             "m.html"),
            ("directory", "raise", lambda ctx: ctx.tmp, os.path.basename),
            ("missing-folder", "raise", lambda ctx: ctx.path("no/such/m.html"), "m.html"),
            ("read-only-place", "raise", lambda ctx: "/proc/countgrid-hostile.html",
             "countgrid-hostile.html"),
            ("empty-string", "raise", lambda ctx: "", "path"),
            ("None", "raise", lambda ctx: None, "path"),
            ("int", "raise", lambda ctx: 5, "path"),
            ("file-object", "raise", lambda ctx: io.StringIO(), "path")]:
        for entry in ("maps.write_html", "CountingGrid.to_html"):
            if entry == "CountingGrid.to_html" and variant == "None":
                continue            # to_html() returns the page (tests/maps/test_notebook.py)

            def run(ctx, path=path, nm=nm, entry=entry):
                p = path(ctx)
                if callable(nm):
                    ctx.extra_names.append(nm(p))
                if entry == "maps.write_html":
                    return _cg().maps.write_html(_grid(), p, D.Xs)
                return _grid().to_html(p, D.Xs)
            add(entry, "output-path", variant, expect, run,
                (nm,) if isinstance(nm, str) else ("path",), _html_oracle, True)
    for variant, expect, kw, names in [
            ("X-NaN", "raise", dict(X=H._set(1, 1, np.nan)(D.X)), ("X",)),
            ("color_by-unknown", "raise", dict(color_by="nope"), ("color_by",)),
            ("unknown-keyword", "raise", dict(foo=1), ("foo",)),
            ("corpus", "ok", dict(X=None, corpus=CORPUS), ("corpus",))]:
        def run(ctx, kw=kw):
            kw = _lazy(kw)
            X = kw.pop("X", D.Xs)
            return _grid().to_html(ctx.path("m.html"), X, **kw)
        add("CountingGrid.to_html", "params", variant, expect, run, names, _html_oracle, True)
    return out


# ============================================================================ plotting
def gen_pictures():
    out = []

    def add(fname, variant, expect, f, names, klass="params"):
        out.append(Case(f"plotting.{fname}", "", klass, variant, expect,
                        lambda ctx, f=f: f() and None, names, None,
                        (f"countgrid.plotting.{fname}", "matplotlib")))
    pl = lambda name: getattr(_cg().plotting, name)  # noqa: E731
    clf = lambda: model("CountingGridClassifier")  # noqa: E731
    reg = lambda: model("CountingGridRegressor")  # noqa: E731
    # plot_label_embedding
    le = lambda **kw: (lambda: pl("plot_label_embedding")(kw.pop("est", clf)(), **kw))  # noqa
    gamma3 = lambda: np.abs(np.random.default_rng(0).normal(size=(4, 4, 3)))  # noqa: E731
    for variant, expect, f, names in [
            ("valid", "ok", le(), ("estimator",)),
            ("regressor", "ok", le(est=reg), ("estimator",)),
            ("CountingGrid-with-gamma", "ok", le(est=_grid, gamma=gamma3()), ("gamma",)),
            ("words=2", "ok", le(feature_names=D.words, words=2), ("words",)),
            ("unfitted", "raise", le(est=lambda: make("CountingGridClassifier")),
             ("estimator", "CountingGridClassifier", "fit")),
            ("PLSA", "raise", le(est=lambda: model("PLSA")), ("estimator",)),
            ("None", "raise", le(est=lambda: None), ("estimator",)),
            ("generative", "raise", le(est=lambda: model("GenerativeCountingGridClassifier")),
             ("estimator",)),
            ("CountingGrid-without-gamma", "raise", le(est=_grid), ("estimator", "gamma")),
            ("gamma-wrong-shape", "raise", le(gamma=np.ones((3, 3, 2))), ("gamma",)),
            ("gamma-NaN", "raise", le(gamma=np.full((4, 4, 2), np.nan)), ("gamma",)),
            ("gamma-negative", "raise", le(gamma=-np.ones((4, 4, 2))), ("gamma",)),
            ("gamma-str", "raise", le(gamma=np.full((4, 4), "a")), ("gamma",)),
            ("gamma-all-zero", "either", le(gamma=np.zeros((4, 4, 3))), ("gamma",)),
            ("gamma-1e300", "either", le(gamma=np.full((4, 4, 3), 1e300)), ("gamma",)),
            ("label_names-too-short", "raise", le(label_names=["a"]), ("label_names",)),
            ("colors-too-few", "raise", le(gamma=gamma3(), colors=["red"]), ("colors",)),
            ("colors-invalid", "raise", le(gamma=gamma3(), colors=["nope", "red", "blue"]),
             ("colors",)),
            ("colors-int", "raise", le(gamma=gamma3(), colors=5), ("colors",)),
            ("words=2-without-names", "raise", le(words=2), ("words", "feature_names")),
            ("words=-1", "raise", le(words=-1), ("words",)),
            ("words=2.5", "raise", le(words=2.5), ("words",)),
            ("words=10**9", "either", le(feature_names=D.words, words=10**9), ("words",)),
            ("legend='no'", "raise", le(legend="no"), ("legend",)),
            ("cmap-unknown", "raise", le(est=reg, cmap="nope"), ("cmap",)),
            ("cmap-int", "raise", le(est=reg, cmap=5), ("cmap",)),
            ("ax-str", "raise", le(ax="ax"), ("ax",))]:
        add("plot_label_embedding", variant, expect, f, names)
    # plot_positions
    pp = lambda **kw: (lambda: pl("plot_positions")(kw.pop("grid", clf)(),  # noqa: E731
                                                    kw.pop("X", D.Xq), **kw))
    for variant, expect, f, names in [
            ("valid", "ok", pp(labels=D.yq), ("grid",)),
            ("no-labels", "ok", pp(), ("grid",)),
            ("str-labels", "ok", pp(labels=np.array(list("abcabca"))), ("labels",)),
            ("background-words", "ok", pp(background="words", feature_names=D.words),
             ("background",)),
            ("X-NaN", "raise", pp(X=H._set(1, 1, np.nan)(D.Xq)), ("X",)),
            ("X-wrong-n_features", "raise", pp(X=H._wrong_features(D.Xq)),
             ("X", "n_features", "features")),
            ("X-0-rows", "either", pp(X=D.Xq[:0]), ("X",)),
            ("labels-too-short", "raise", pp(labels=D.yq[:-1]), ("labels",)),
            ("labels-2-D", "raise", pp(labels=np.c_[D.yq, D.yq]), ("labels",)),
            ("labels-NaN", "either", pp(labels=np.r_[np.nan, D.yq[1:]]), ("labels",)),
            ("labels-None-objects", "either", pp(labels=np.array([None, "a"] * 3 + ["b"],
                                                                 dtype=object)), ("labels",)),
            ("labels-mixed", "either", pp(labels=np.array([1, "a"] * 3 + ["b"], dtype=object)),
             ("labels",)),
            ("labels-100-classes", "ok", pp(X=D.X, labels=np.arange(40)), ("labels",)),
            ("background='nope'", "raise", pp(background="nope"), ("background",)),
            ("background-words-without-names", "raise", pp(background="words"),
             ("background", "feature_names")),
            ("jitter=-1", "raise", pp(jitter=-1.0), ("jitter",)),
            ("jitter=nan", "raise", pp(jitter=float("nan")), ("jitter",)),
            ("jitter=1e300", "either", pp(jitter=1e300), ("jitter",)),
            ("random_state='x'", "raise", pp(random_state="x"), ("random_state",)),
            ("size=-1", "raise", pp(size=-1.0), ("size",)),
            ("label_names-short", "raise", pp(labels=D.yq, label_names=["a"]),
             ("label_names",)),
            ("colors-invalid", "raise", pp(labels=D.yq, colors=["nope", "red"]), ("colors",)),
            ("grid-PLSA", "raise", pp(grid=lambda: model("PLSA")), ("grid",)),
            ("grid-3-D", "raise", pp(grid=_grid3d), ("grid",))]:
        add("plot_positions", variant, expect, f, names)
    # plot_log_likelihood
    ll = lambda est, **kw: (lambda: pl("plot_log_likelihood")(est(), **kw))  # noqa: E731
    for variant, expect, f, names in [
            ("CountingGrid", "ok", ll(_grid), ("estimator",)),
            ("PLSA", "ok", ll(lambda: model("PLSA")), ("estimator",)),
            ("ZIPGTM", "ok", ll(lambda: model("ZIPGTM")), ("estimator",)),
            ("HistogramGMM", "ok", ll(lambda: model("HistogramGMM")), ("estimator",)),
            ("generative", "ok", ll(lambda: model("GenerativeCountingGridClassifier")),
             ("estimator",)),
            ("RAP", "raise", ll(lambda: model("RAP")), ("estimator",)),
            ("unfitted", "raise", ll(lambda: make("PLSA")), ("estimator", "PLSA", "fit")),
            ("None", "raise", ll(lambda: None), ("estimator",)),
            ("int", "raise", ll(lambda: 5), ("estimator",)),
            ("ax-str", "raise", ll(_grid, ax="ax"), ("ax",)),
            ("title-int", "either", ll(_grid, title=5), ("title",))]:
        add("plot_log_likelihood", variant, expect, f, names)
    # plot_top_words
    tw = lambda **kw: (lambda: pl("plot_top_words")(kw.pop("plsa", lambda: model("PLSA"))(),  # noqa
                                                    kw.pop("names", D.words), **kw))
    for variant, expect, f, names in [
            ("valid", "ok", tw(), ("plsa",)),
            ("topics-list", "ok", tw(topics=[1]), ("topics",)),
            ("n_words=100", "ok", tw(n_words=100), ("n_words",)),
            ("unfitted", "raise", tw(plsa=lambda: make("PLSA")), ("plsa", "PLSA", "fit")),
            ("CountingGrid", "raise", tw(plsa=_grid), ("plsa",)),
            ("feature_names-short", "raise", tw(names=D.words[:-1]), ("feature_names",)),
            ("feature_names-None", "raise", tw(names=None), ("feature_names",)),
            ("feature_names-2-D", "raise", tw(names=D.words.reshape(3, 4)), ("feature_names",)),
            ("n_words=0", "raise", tw(n_words=0), ("n_words",)),
            ("topics=[99]", "raise", tw(topics=[99]), ("topics",)),
            ("topics=[-1]", "raise", tw(topics=[-1]), ("topics",)),
            ("topics=[]", "raise", tw(topics=[]), ("topics",)),
            ("topics=['a']", "raise", tw(topics=["a"]), ("topics",)),
            ("topics=[0.5]", "raise", tw(topics=[0.5]), ("topics",)),
            ("topics=5", "either", tw(topics=1), ("topics",)),
            ("topics=2**70", "raise", tw(topics=[2**70]), ("topics",)),
            ("ncols=0", "raise", tw(ncols=0), ("ncols",)),
            ("ax-too-few", "raise", tw(ax=[]), ("ax",)),
            ("ax-str", "raise", tw(ax="ax"), ("ax",))]:
        add("plot_top_words", variant, expect, f, names)
    # plot_zip_gtm_map
    zg = lambda **kw: (lambda: pl("plot_zip_gtm_map")(  # noqa: E731
        kw.pop("m", lambda: model("ZIPGTM"))(), kw.pop("X", D.Xq), **kw))
    for variant, expect, f, names in [
            ("valid", "ok", zg(labels=D.yq), ("zipgtm",)),
            ("no-latent", "ok", zg(show_latent=False), ("show_latent",)),
            ("unfitted", "raise", zg(m=lambda: make("ZIPGTM")), ("zipgtm", "ZIPGTM", "fit")),
            ("PLSA", "raise", zg(m=lambda: model("PLSA")), ("zipgtm",)),
            ("X-NaN", "raise", zg(X=H._set(1, 1, np.nan)(D.Xq)), ("X",)),
            ("X-wrong-n_features", "raise", zg(X=H._wrong_features(D.Xq)),
             ("X", "n_features", "features")),
            ("labels-too-short", "raise", zg(labels=D.yq[:-1]), ("labels",)),
            ("size=0", "raise", zg(size=0.0), ("size",)),
            ("size=nan", "raise", zg(size=float("nan")), ("size",)),
            ("legend='no'", "raise", zg(legend="no"), ("legend",)),
            ("colors-invalid", "raise", zg(labels=D.yq, colors=["nope", "red"]), ("colors",))]:
        add("plot_zip_gtm_map", variant, expect, f, names)
    # plot_word_map
    wm = lambda **kw: (lambda: pl("plot_word_map")(kw.pop("grid", _grid)(),  # noqa: E731
                                                   kw.pop("word", "w3"), D.words, **kw))
    for variant, expect, f, names in [
            ("valid", "ok", wm(), ("word",)), ("int-word", "ok", wm(word=3), ("word",)),
            ("n_cells=0", "ok", wm(n_cells=0), ("n_cells",)),
            ("n_cells=10**9", "ok", wm(n_cells=10**9), ("n_cells",)),
            ("word-unknown", "raise", wm(word="nope"), ("word",)),
            ("word-None", "raise", wm(word=None), ("word",)),
            ("n_cells=-1", "raise", wm(n_cells=-1), ("n_cells",)),
            ("n_cells=2.5", "raise", wm(n_cells=2.5), ("n_cells",)),
            ("colorbar='no'", "raise", wm(colorbar="no"), ("colorbar",)),
            ("cmap-unknown", "raise", wm(cmap="nope"), ("cmap",)),
            ("grid-PLSA", "raise", wm(grid=lambda: model("PLSA")), ("grid",)),
            ("grid-3-D", "raise", wm(grid=_grid3d), ("grid",)),
            ("ax-str", "raise", wm(ax="ax"), ("ax",))]:
        add("plot_word_map", variant, expect, f, names)
    return out


# ============================================================================ io with a corpus
def _model_edit(fn):
    """Edit a model file's header (then re-sign it)."""
    def mutate(path):
        header, arrays = H._read_model(path)
        fn(header, arrays)
        from countgrid._utils.npz import digest

        header["sha256"] = digest(header, arrays)
        H._write_model(path, header, arrays)
    return mutate


def _unsigned_edit(fn):
    """Edit a model file's arrays and keep the old checksum (content damage)."""
    def mutate(path):
        header, arrays = H._read_model(path)
        fn(header, arrays)
        H._write_model(path, header, arrays)
    return mutate


def _corpus_array(key, value):
    def fn(header, arrays):
        k = "corpus:" + key
        arrays[k] = value(arrays[k])
    return fn


def gen_io_corpus():
    out = []
    sv = ("countgrid.io.save",)
    for variant, expect, c, names in [
            ("valid", "ok", corpus, ("corpus",)),
            ("wrong-n_terms", "raise", lambda: _cg().text.Corpus(D.X[:, :5], D.words[:5]),
             ("corpus",)),
            ("str", "raise", lambda: "corpus.npz", ("corpus",)),
            ("dict", "raise", lambda: corpus().to_dict(), ("corpus",)),
            ("csr-matrix", "raise", lambda: D.Xs, ("corpus",))]:
        def run(ctx, c=c):
            path = ctx.path("m.npz")
            _cg().io.save(model("CountingGrid"), path, corpus=c())
            return _cg().io.load_corpus(path)
        out.append(Case("io.save", "", "corpus-file", f"corpus-{variant}", expect, run, names,
                        _corpus_file_oracle, sv, files=True))
    lc = ("countgrid.io.load_corpus",)
    for variant, expect, mutate, names in [
            ("valid", "ok", None, ()),
            ("indices-out-of-range", "raise", _model_edit(_corpus_array(
                "counts_indices", _indices_out)), ("corpus",)),
            ("corpus-ids-repeated", "raise", _model_edit(_corpus_array(
                "ids", lambda a: np.full_like(a, "x"))), ("corpus", "ids")),
            ("corpus-header-damaged", "raise", _model_edit(_corpus_array(
                "header", lambda a: np.array("{nope"))), ("corpus",)),
            ("corpus-entry-int", "raise", _model_edit(
                lambda h, a: h.__setitem__("corpus", 5)), ("corpus",)),
            ("corpus-entry-unknown-key", "raise", _model_edit(
                lambda h, a: h.__setitem__("corpus", h["corpus"] + ["nope"])), ("corpus",)),
            ("corpus-array-missing", "raise", _model_edit(
                lambda h, a: a.pop("corpus:ids")), ("corpus",)),
            # an array changed without re-signing (a flipped byte of the file may fall
            # where zip and deflate leave the content intact: the file is then fine)
            ("checksum-mismatch", "raise", _unsigned_edit(
                lambda h, a: a.__setitem__("corpus:counts_data",
                                           a["corpus:counts_data"] * 2)), ()),
            ("derived-malformed", "either", _model_edit(
                lambda h, a: h["model"].__setitem__("derived", 5)), ("derived",)),
            ("derived-unknown", "either", _model_edit(
                lambda h, a: h["model"].__setitem__("derived", ["nope_"])), ("nope_",))]:
        def run(ctx, mutate=mutate):
            path = ctx.path("m.npz")
            _model_file(path, corpus_too=True)
            if mutate is not None:
                mutate(path)
            return _cg().io.load_corpus(path)
        out.append(Case("io.load_corpus", "", "corpus-file", variant, expect, run,
                        ("m.npz",) + tuple(names), _corpus_file_oracle, lc, files=True,
                        recycle=True))
        if variant.startswith("derived"):
            def run_load(ctx, mutate=mutate):
                path = ctx.path("m.npz")
                _model_file(path, corpus_too=True)
                mutate(path)
                return H.outputs("CountingGrid", _cg().io.load(path))
            out.append(Case("load", "", "model-file", f"format-3-{variant}", "raise",
                            run_load, ("m.npz", "derived", "nope_"), None, ("countgrid.load",),
                            files=True, recycle=True))
    for variant, expect, make_path, nm in [
            ("model-without-corpus", "ok", lambda ctx: _model_file(ctx.path("m.npz")), "m.npz"),
            ("corpus-file", "raise", lambda ctx: corpus().save(ctx.path("m.npz")) or
             ctx.path("m.npz"), "m.npz"),
            ("garbage", "raise", lambda ctx: _write(ctx.path("m.npz"), _garbage()), "m.npz"),
            ("missing", "raise", lambda ctx: ctx.path("nope.npz"), "nope.npz"),
            ("path-None", "raise", lambda ctx: None, "path")]:
        oracle = (lambda v: None if v is None else "a corpus from a model saved without one") \
            if expect == "ok" else None
        out.append(Case("io.load_corpus", "", "corpus-file", variant, expect,
                        lambda ctx, make_path=make_path: _cg().io.load_corpus(make_path(ctx)),
                        (nm,), oracle, lc, files=True))
    return out


# ============================================================================ command line
def cli_run(args, ctx):
    """``countgrid ARGS`` in this worker: (exit status, stdout, stderr) as _cli gives them;
    an exception escaping main is a traceback on stderr."""
    from countgrid.cli import main

    args = [a.replace("{tmp}", ctx.tmp) for a in args]
    out, err = io.StringIO(), io.StringIO()
    os.chdir(ctx.tmp)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(args)
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # noqa: BLE001 - shown as the subprocess would show it
            traceback.print_exc()
            rc = 1
    return {"rc": rc, "out": out.getvalue(), "err": err.getvalue(), "tmp": ctx.tmp,
            "args": args}


def _fixtures(ctx, what):
    """Files a command-line case starts from, in its folder."""
    T = _texts()
    if "posts" in what:
        _folder(ctx, "posts", {f"{i:02d}.txt": t for i, t in enumerate(T)})
    if "csv" in what:
        _write(ctx.path("d.csv"), _good_csv().encode())
        _write(ctx.path("b.csv"), _good_csv(text="body").encode())     # no column "text"
    if "wcsv" in what:            # documents in the words of the model (w0 ... w11)
        rows = ["id,text"] + [f"q{i}," + " ".join(w for w, k in zip(D.words, row)
                                                 for _ in range(int(k)))
                              for i, row in enumerate(D.Xq)]
        _write(ctx.path("w.csv"), _csv_text(rows).encode())
    if "model" in what:
        _model_file(ctx.path("model.npz"), corpus_too=True)
    if "bare" in what:
        _model_file(ctx.path("bare.npz"))
    if "plsa" in what:
        _cg().io.save(model("PLSA"), ctx.path("plsa.npz"), corpus=corpus())
    if "gmm" in what:
        model("HistogramGMM").save(ctx.path("gmm.npz"))
    if "grid3d" in what:
        _cg().io.save(_grid3d(), ctx.path("grid3d.npz"), corpus=corpus())
    if "surrogates" in what:      # fitted on files whose names are not UTF-8
        _folder(ctx, "sposts", {os.fsdecode(b"\xff%02d.txt" % i): t
                                for i, t in enumerate(T)})
        c = _cg().text.read_corpus(ctx.path("sposts"), min_df=1, max_df=1.0)
        g = _cg().CountingGrid((3, 3), (2, 2), n_iter=2, random_state=0,
                               num_threads=1).fit(c.counts)
        _cg().io.save(g, ctx.path("smodel.npz"), corpus=c)
    if "corpusfile" in what:
        corpus().save(ctx.path("corpus.npz"))
    if "garbage" in what:
        _write(ctx.path("garbage.txt"), _garbage())
        _write(ctx.path("garbage.npz"), _garbage())
    if "empty" in what:
        _write(ctx.path("empty.txt"), b"")
        os.makedirs(ctx.path("emptydir"), exist_ok=True)
    if "vocab" in what:
        _write(ctx.path("vocab.txt"), ("\n".join(D.words) + "\n").encode())
        _write(ctx.path("vocab-short.txt"), b"a\nb\n")
        _write(ctx.path("vocab-garbage.txt"), _garbage())
    if "jsonl" in what:
        _write(ctx.path("d.jsonl"), (_good_jsonl() + "[1, 2]\n").encode())
    if "uci" in what:
        _uci(ctx, NNZ=10**6)
    if "truncated" in what:
        _model_file(ctx.path("trunc.npz"), corpus_too=True)
        with open(ctx.path("trunc.npz"), "rb") as fh:
            data = fh.read()
        _write(ctx.path("trunc.npz"), data[:len(data) // 2])


def _exists(*names):
    def oracle(value):
        for n in names:
            p = os.path.join(value["tmp"], n)
            if not os.path.exists(p) or os.path.getsize(p) == 0:
                return f"exit status 0 but {n} was not written"
        if "nan" in value["out"].lower().split():
            return "the output reports NaN"
        return None
    return oracle


def _without(options, args):
    """``options`` without the ones ``args`` sets (an option and its value)."""
    out, skip = [], False
    for i, a in enumerate(options):
        if skip:
            skip = False
            continue
        if a in args and a.startswith("--") and i + 1 < len(options) and \
                not options[i + 1].startswith("-"):
            skip = True
            continue
        out.append(a)
    return out


FIT = ["--grid", "4x4", "--window", "2x2", "--n-iter", "2", "--coarse-iter", "0",
       "--threads", "1", "-q"]
DF = ["--min-df", "1", "--max-df", "1.0"]


def gen_cli_verbs():
    out = []
    need = ("countgrid.cli.main",)
    O = ("--output", "-o")

    def add(verb, klass, variant, expect, args, fixtures=(), names=O, oracle=None,
            needs=()):
        def run(ctx, args=args, fixtures=fixtures):
            _fixtures(ctx, fixtures)
            return cli_run(args, ctx)
        out.append(Case("cli", verb, klass, variant, expect, run, names, oracle,
                        need + needs, timeout=60.0, classify=H.cli_classify, cost=3.0,
                        files=True))
    P, C, M = ("posts",), ("csv",), ("model",)
    # vectorize
    v = ["vectorize"]
    add("vectorize", "text-file", "folder", "ok", v + ["posts", "-o", "c.npz", "-q"] + DF, P,
        oracle=_exists("c.npz"))
    add("vectorize", "text-file", "csv", "ok", v + ["d.csv", "--text-col", "text", "--meta-cols",
                                                    "group,year", "-o", "c.npz"] + DF, C,
        oracle=_exists("c.npz"))
    add("vectorize", "text-file", "csv-text-column-by-default", "ok",
        v + ["d.csv", "-o", "c.npz"] + DF, C, oracle=_exists("c.npz"))
    for variant, args, fx, names in [
            ("garbage", ["garbage.txt"], ("garbage",), ("garbage.txt", "--encoding")),
            ("garbage-npz", ["garbage.npz"], ("garbage",), ("garbage.npz",)),
            ("empty-file", ["empty.txt"], ("empty",), ("empty.txt",)),
            ("empty-folder", ["emptydir"], ("empty",), ("emptydir",)),
            ("missing", ["nope.txt"], (), ("nope.txt", "INPUT")),
            ("empty-path", [""], (), ("INPUT",)),
            ("csv-no-text-col", ["b.csv"], C, ("--text-col", "text_col")),
            ("csv-missing-column", ["d.csv", "--text-col", "body"], C, ("--text-col", "body")),
            ("csv-missing-meta", ["d.csv", "--text-col", "text", "--meta-cols", "nope"], C,
             ("--meta-cols", "nope")),
            ("jsonl-non-object", ["d.jsonl"], ("jsonl",), ("d.jsonl",)),
            ("uci-header-lies", ["docword.x.txt"], ("uci",), ("docword.x.txt", "NNZ")),
            ("npz-not-corpus", ["bare.npz"], ("bare",), ("bare.npz",)),
            ("encoding-nope", ["posts", "--encoding", "nope"], P, ("--encoding", "encoding")),
            ("encoding-rot13", ["posts", "--encoding", "rot13"], P,
             ("--encoding", "encoding")),
            ("format-csv-of-folder", ["posts", "--format", "csv"], P, ("--format", "format")),
            ("format-nope", ["posts", "--format", "nope"], P, ("--format",)),
            ("min-df=-1", ["posts", "--min-df", "-1"], P, ("--min-df", "min_df")),
            ("min-df=abc", ["posts", "--min-df", "abc"], P, ("--min-df",)),
            ("max-df=2.5", ["posts", "--max-df", "2.5"], P, ("--max-df", "max_df")),
            ("max-features=-1", ["posts", "--max-features", "-1"], P, ("--max-features",)),
            ("token-pattern=(", ["posts", "--token-pattern", "("], P,
             ("--token-pattern", "token_pattern")),
            ("stop-words=french", ["posts", "--stop-words", "french"], P,
             ("--stop-words", "stop_words")),
            ("max-docs=0", ["posts", "--max-docs", "0"], P, ("--max-docs",))]:
        add("vectorize", "text-file" if variant[0] in "gejucnm" and "=" not in variant
            else "cli", variant, "raise", v + args + ["-o", "c.npz"], fx, names)
    for variant, target, names in [
            ("output-directory", "{tmp}", O), ("output-missing-folder", "no/such/c.npz",
                                               O + ("c.npz",)),
            ("output-read-only", "/proc/countgrid-hostile.npz", O + ("countgrid-hostile.npz",)),
            ("output-wrong-extension", "c.txt", O + ("c.txt",)), ("output-empty", "", O)]:
        add("vectorize", "output-path", variant, "raise", v + ["posts", "-o", target] + DF, P,
            names)
    # fit
    f = ["fit"]
    add("fit", "text-file", "folder", "ok", f + ["posts", "-o", "m.npz"] + FIT + DF, P,
        oracle=_exists("m.npz"))
    add("fit", "text-file", "corpus-file", "ok", f + ["corpus.npz", "-o", "m.npz"] + FIT,
        ("corpusfile",), oracle=_exists("m.npz"))
    add("fit", "cli", "plsa", "ok", f + ["posts", "-o", "m.npz", "--model", "plsa", "-k", "2",
                                        "--n-iter", "2", "--threads", "1", "-q"] + DF, P,
        oracle=_exists("m.npz"))
    add("fit", "cli", "ring-4x", "either", f + ["posts", "-o", "m.npz", "--grid", "4x",
                                               "--window", "2x2", "--n-iter", "2",
                                               "--coarse-iter", "0", "--threads", "1", "-q"]
        + DF, P, O + ("--window", "--grid"), _exists("m.npz"))
    add("fit", "cli", "max-docs=1", "either", f + ["posts", "-o", "m.npz", "--max-docs", "1"]
        + FIT + DF, P, O + ("--max-docs",), _exists("m.npz"))
    for variant, args, fx, names in [
            ("garbage", ["garbage.txt"], ("garbage",), ("garbage.txt", "--encoding")),
            ("empty-folder", ["emptydir"], ("empty",), ("emptydir",)),
            ("model-file-as-input", ["bare.npz"], ("bare",), ("bare.npz",)),
            ("grid=0x0", ["posts", "--grid", "0x0"], P, ("--grid",)),
            ("grid=100000x100000", ["posts", "--grid", "100000x100000"], P, ("--grid",)),
            ("grid=4000x4000", ["posts", "--grid", "4000x4000"], P, ("--grid",)),
            ("window=9x9", ["posts", "--window", "9x9"], P, ("--window",)),
            ("window-3-D", ["posts", "--window", "2x2x2"], P, ("--window",)),
            ("model=nope", ["posts", "--model", "nope"], P, ("--model",)),
            ("plsa-k=0", ["posts", "--model", "plsa", "-k", "0"], P,
             ("--n-components", "-k")),
            ("plsa-window", ["posts", "--model", "plsa", "--window", "2x2"], P, ("--window",)),
            ("zipgtm-3-D", ["posts", "--model", "zipgtm", "--grid", "3x3x3"], P, ("--grid",)),
            ("n-iter=0", ["posts", "--n-iter", "0"], P, ("--n-iter",)),
            ("threads=0", ["posts", "--threads", "0"], P, ("--threads",))]:
        base = _without(FIT, args)
        if "--model" in args:                   # no window, no annealing outside grids
            base = _without(base, ["--window", "--coarse-iter"])
        klass = "text-file" if variant in ("garbage", "empty-folder", "model-file-as-input") \
            else "cli"
        add("fit", klass, variant, "raise", f + args + ["-o", "m.npz"] + base + DF, fx, names)
    add("fit", "output-path", "output-wrong-extension", "raise",
        f + ["posts", "-o", "m.txt"] + FIT + DF, P, O + ("m.txt",))
    add("fit", "output-path", "output-read-only", "raise",
        f + ["posts", "-o", "/proc/countgrid-hostile.npz"] + FIT + DF, P,
        O + ("countgrid-hostile.npz",))
    # transform
    t = ["transform"]
    add("transform", "model-file", "saved-corpus", "ok", t + ["model.npz", "-o", "p.csv"], M,
        oracle=_exists("p.csv"))
    add("transform", "text-file", "new-documents", "ok", t + ["model.npz", "w.csv", "--text-col",
                                                             "text", "-o", "p.csv"],
        ("model", "wcsv"), oracle=_exists("p.csv"))
    for variant, args, fx, names, klass in [
            ("model-garbage", ["garbage.npz"], ("garbage",), ("garbage.npz", "MODEL"),
             "model-file"),
            ("model-truncated", ["trunc.npz"], ("truncated",), ("trunc.npz", "MODEL"),
             "model-file"),
            ("model-is-corpus", ["corpus.npz"], ("corpusfile",), ("corpus.npz", "MODEL"),
             "model-file"),
            ("model-missing", ["nope.npz"], (), ("nope.npz", "MODEL"), "model-file"),
            ("model-folder", ["{tmp}"], (), ("MODEL",), "model-file"),
            ("model-without-corpus", ["bare.npz"], ("bare",), ("INPUT", "bare.npz"),
             "model-file"),
            ("model-histogram-gmm", ["gmm.npz", "d.csv", "--text-col", "text"], ("gmm", "csv"),
             ("MODEL", "gmm.npz"), "model-file"),
            ("input-garbage", ["model.npz", "garbage.txt"], ("model", "garbage"),
             ("garbage.txt", "--encoding"), "text-file"),
            ("input-unknown-words", ["model.npz", "empty.txt"], ("model", "empty"),
             ("empty.txt",), "text-file"),
            ("anchor=nope", ["model.npz", "--anchor", "nope"], M, ("--anchor",), "cli")]:
        add("transform", klass, variant, "raise", t + args + ["-o", "p.csv"], fx, names)
    add("transform", "text-file", "input-no-known-words", "raise",
        t + ["model.npz", "posts", "-o", "p.csv"], ("model", "posts"),
        ("posts", "vocabulary", "INPUT"))
    add("transform", "output-path", "output-wrong-extension", "raise",
        t + ["model.npz", "-o", "p.tsv"], M, O + ("p.tsv",))
    # top-words
    w = ["top-words"]
    add("top-words", "model-file", "grid", "ok", w + ["model.npz", "-o", "t.tsv"], M,
        oracle=_exists("t.tsv"))
    add("top-words", "model-file", "plsa", "ok", w + ["plsa.npz", "-o", "t.tsv"], ("plsa",),
        oracle=_exists("t.tsv"))
    add("top-words", "model-file", "bare-with-vocab", "ok",
        w + ["bare.npz", "--vocab", "vocab.txt", "-o", "t.tsv"], ("bare", "vocab"),
        oracle=_exists("t.tsv"))
    for variant, args, fx, names, klass in [
            ("n=0", ["model.npz", "-n", "0"], M, ("--n-words", "-n"), "cli"),
            ("n=abc", ["model.npz", "-n", "abc"], M, ("--n-words", "-n"), "cli"),
            ("vocab-missing", ["bare.npz", "--vocab", "nope.txt"], ("bare",),
             ("--vocab", "nope.txt"), "text-file"),
            ("vocab-short", ["bare.npz", "--vocab", "vocab-short.txt"], ("bare", "vocab"),
             ("--vocab", "vocab-short.txt"), "text-file"),
            ("vocab-garbage", ["bare.npz", "--vocab", "vocab-garbage.txt"], ("bare", "vocab"),
             ("--vocab", "vocab-garbage.txt"), "text-file"),
            ("model-garbage", ["garbage.npz"], ("garbage",), ("garbage.npz", "MODEL"),
             "model-file"),
            ("model-histogram-gmm", ["gmm.npz"], ("gmm",), ("MODEL", "gmm.npz"), "model-file")]:
        add("top-words", klass, variant, "raise", w + args + ["-o", "t.tsv"], fx, names)
    # diagnostics
    dg = ["diagnostics"]
    add("diagnostics", "model-file", "grid", "ok", dg + ["model.npz", "-o", "d.tsv"], M,
        oracle=_exists("d.tsv"))
    add("diagnostics", "model-file", "plsa-json", "ok", dg + ["plsa.npz", "-o", "d.json"],
        ("plsa",), oracle=_exists("d.json"))
    add("diagnostics", "text-file", "new-documents", "ok",
        dg + ["model.npz", "w.csv", "--text-col", "text", "-o", "d.tsv"], ("model", "wcsv"),
        oracle=_exists("d.tsv"))
    for variant, args, fx, names, klass in [
            ("n=1", ["model.npz", "-n", "1"], M, ("--n-words",), "cli"),
            ("regions=0", ["model.npz", "--regions", "0"], M, ("--regions",), "cli"),
            ("regions-of-plsa", ["plsa.npz", "--regions", "2"], ("plsa",), ("--regions",),
             "cli"),
            ("frex-weight=nan", ["model.npz", "--frex-weight", "nan"], M, ("--frex-weight",),
             "cli"),
            ("coherence=nope", ["model.npz", "--coherence", "nope"], M, ("--coherence",),
             "cli"),
            ("picture-to-stdout", ["model.npz", "--picture", "-"], M, ("--picture",), "cli"),
            ("model-garbage", ["garbage.npz"], ("garbage",), ("garbage.npz", "MODEL"),
             "model-file"),
            ("model-without-corpus", ["bare.npz"], ("bare",), ("INPUT", "bare.npz"),
             "model-file"),
            ("model-histogram-gmm", ["gmm.npz", "d.csv", "--text-col", "text"], ("gmm", "csv"),
             ("MODEL", "gmm.npz"), "model-file"),
            ("input-garbage", ["model.npz", "garbage.txt"], ("model", "garbage"),
             ("garbage.txt", "--encoding"), "text-file")]:
        add("diagnostics", klass, variant, "raise", dg + args + ["-o", "d.tsv"], fx, names)
    add("diagnostics", "output-path", "output-wrong-extension", "raise",
        dg + ["model.npz", "-o", "d.csv"], M, O + ("d.csv",))
    # stability
    st = ["stability"]
    ST = ["--restarts", "2"] + FIT + DF
    add("stability", "text-file", "folder", "ok", st + ["posts", "-o", "s.tsv"] + ST, P,
        oracle=_exists("s.tsv"))
    for variant, args, fx, names, klass in [
            ("restarts=1", ["posts", "--restarts", "1"], P, ("--restarts",), "cli"),
            ("restarts=0", ["posts", "--restarts", "0"], P, ("--restarts",), "cli"),
            ("regions=65", ["posts", "--regions", "65"], P, ("--regions",), "cli"),
            ("picture-to-stdout", ["posts", "--picture", "-"], P, ("--picture",), "cli"),
            ("output-to-stdout", ["posts", "-o", "-"], P, O, "cli"),
            ("window=9x9", ["posts", "--window", "9x9"], P, ("--window",), "cli"),
            ("garbage", ["garbage.txt"], ("garbage",), ("garbage.txt", "--encoding"),
             "text-file"),
            ("empty-folder", ["emptydir"], ("empty",), ("emptydir",), "text-file")]:
        base = _without(ST, args)
        add("stability", klass, variant, "raise", st + args + base, fx, names)
    add("stability", "output-path", "output-wrong-extension", "raise",
        st + ["posts", "-o", "s.csv"] + ST, P, O + ("s.csv",))
    # plot
    pl = ["plot"]
    mpl = ("matplotlib",)
    for kind in ("words", "positions", "likelihood"):
        add("plot", "cli", f"kind={kind}", "ok", pl + ["model.npz", "-o", "p.png", "--kind",
                                                      kind, "--dpi", "30"], M,
            oracle=_exists("p.png"), needs=mpl)
    add("plot", "cli", "kind=word", "ok", pl + ["model.npz", "-o", "p.svg", "--kind", "word",
                                               "--word", "w3"], M, oracle=_exists("p.svg"),
        needs=mpl)
    for variant, args, fx, names in [
            ("kind=word-without-word", ["--kind", "word"], M, ("--word",)),
            ("word-unknown", ["--kind", "word", "--word", "nope"], M, ("--word", "word", "nope")),
            ("kind=topics-of-grid", ["--kind", "topics"], M, ("--kind",)),
            ("kind=map-of-grid", ["--kind", "map"], M, ("--kind",)),
            ("kind=nope", ["--kind", "nope"], M, ("--kind",)),
            ("color-by-unknown", ["--kind", "positions", "--color-by", "nope"], M,
             ("--color-by", "nope")),
            ("dpi=0", ["--dpi", "0"], M, ("--dpi",)),
            ("dpi=-5", ["--dpi", "-5"], M, ("--dpi",)),
            ("dpi=100000", ["--dpi", "100000"], M, ("--dpi",)),
            ("n-words=0", ["--n-words", "0"], M, ("--n-words", "n_words")),
            ("n-words=-3", ["--n-words", "-3"], M, ("--n-words", "n_words")),
            ("vocab-short", ["--vocab", "vocab-short.txt"], ("model", "vocab"),
             ("--vocab", "vocab-short.txt"))]:
        add("plot", "cli", variant, "raise", pl + ["model.npz", "-o", "p.png"] + args, fx,
            O + names, needs=mpl)
    add("plot", "model-file", "model-without-corpus-positions", "raise",
        pl + ["bare.npz", "-o", "p.png", "--kind", "positions"], ("bare",),
        ("--kind", "bare.npz"), needs=mpl)
    add("plot", "model-file", "model-garbage", "raise", pl + ["garbage.npz", "-o", "p.png"],
        ("garbage",), ("garbage.npz", "MODEL"), needs=mpl)
    add("plot", "model-file", "grid-3-D", "either", pl + ["grid3d.npz", "-o", "p.png"],
        ("grid3d",), ("MODEL", "grid3d.npz", "--kind"), _exists("p.png"), needs=mpl)
    for variant, target, names in [
            ("output-unknown-format", "p.xyz", O + ("p.xyz",)),
            ("output-without-extension", "picture", O + ("picture",)),
            ("output-missing-folder", "no/such/p.png", O + ("p.png",))]:
        add("plot", "output-path", variant, "raise", pl + ["model.npz", "-o", target], M,
            names, needs=mpl)
    # html
    h = ["html"]
    add("html", "model-file", "saved-corpus", "ok", h + ["model.npz", "-o", "m.html"], M,
        oracle=_exists("m.html"))
    add("html", "model-file", "bare", "ok", h + ["bare.npz", "-o", "m.html"], ("bare",),
        oracle=_exists("m.html"))
    add("html", "model-file", "corpus-of-undecodable-file-names", "ok",
        h + ["smodel.npz", "-o", "m.html"], ("surrogates",), oracle=_exists("m.html"))
    add("html", "cli", "title-script", "ok", h + ["model.npz", "-o", "m.html", "--title",
                                                 "</script><b>x"], M,
        oracle=_exists("m.html"))
    add("html", "cli", "color-by-group", "ok", h + ["model.npz", "-o", "m.html", "--color-by",
                                                   "group", "--idf", "--max-docs", "5"], M,
        oracle=_exists("m.html"))
    for variant, args, fx, names, klass in [
            ("color-by-unknown", ["model.npz", "--color-by", "nope"], M, ("--color-by",),
             "cli"),
            ("n-words=0", ["model.npz", "--n-words", "0"], M, ("--n-words",), "cli"),
            ("max-docs=0", ["model.npz", "--max-docs", "0"], M, ("--max-docs",), "cli"),
            ("model-plsa", ["plsa.npz"], ("plsa",), ("MODEL",), "model-file"),
            ("model-3-D-grid", ["grid3d.npz"], ("grid3d",), ("MODEL", "grid3d.npz"),
             "model-file"),
            ("model-garbage", ["garbage.npz"], ("garbage",), ("garbage.npz", "MODEL"),
             "model-file"),
            ("input-garbage", ["model.npz", "garbage.txt"], ("model", "garbage"),
             ("garbage.txt", "--encoding"), "text-file")]:
        add("html", klass, variant, "raise", h + args + ["-o", "m.html"], fx, names)
    for variant, target, names in [
            ("output-wrong-extension", "m.txt", O + ("m.txt",)),
            ("output-read-only", "/proc/countgrid-hostile.html", O + ("countgrid-hostile.html",)),
            ("output-directory", "{tmp}", O)]:
        add("html", "output-path", variant, "raise", h + ["model.npz", "-o", target], M, names)
    # evaluate
    e = ["evaluate", "d.csv", "--text-col", "text", "--grid", "3x3", "--window", "2x2",
         "--n-iter", "2", "--coarse-iter", "0", "--threads", "1", "-q"] + DF
    add("evaluate", "cli", "valid", "ok", e + ["--label-col", "group", "--folds", "2"], C,
        ("--label-col",), lambda v: None if "accuracy" in v["out"] else "no accuracy line")
    for variant, args, names in [
            ("label-col-missing", ["--label-col", "nope"], ("--label-col", "nope")),
            ("folds=1", ["--label-col", "group", "--folds", "1"], ("--folds",)),
            ("folds=0", ["--label-col", "group", "--folds", "0"], ("--folds",)),
            ("folds=1000", ["--label-col", "group", "--folds", "1000"], ("--folds",)),
            ("one-class", ["--label-col", "id", "--folds", "2"], ("--folds", "--label-col")),
            ("classifier=nope", ["--label-col", "group", "--classifier", "nope"],
             ("--classifier",))]:
        add("evaluate", "cli", variant, "raise", e + args, C, names)
    add("evaluate", "cli", "numeric-labels", "either", e + ["--label-col", "year", "--folds", "2"],
        C, ("--label-col", "--folds"), lambda v: None if "accuracy" in v["out"] else
        "no accuracy line")
    return out


def gen_cli_subprocess():
    """A few verbs through the real ``python -m countgrid.cli`` (exit status, no traceback,
    the files it writes): the in-process cases above share its code but not its process."""
    out = []
    need = ("countgrid.cli.main",)

    def add(variant, expect, args, fixtures, names, oracle=None):
        def run(ctx, args=args, fixtures=fixtures):
            _fixtures(ctx, fixtures)
            return H._cli(args, ctx)
        out.append(Case("cli", "subprocess", "text-file", variant, expect, run, names, oracle,
                        need, timeout=90.0, classify=H.cli_classify, cost=30.0, files=True))
    add("fit-garbage", "raise", ["fit", "garbage.txt", "-o", "m.npz"] + FIT, ("garbage",),
        ("garbage.txt", "--encoding"))
    add("html-truncated-model", "raise", ["html", "trunc.npz", "-o", "m.html"],
        ("truncated",), ("trunc.npz", "MODEL"))
    return out


def _with_data(gen):
    """The generators read the shared data (shapes, labels) while building the cases: the
    runner, which never calls preload(), builds them here too (numpy and scipy only)."""
    def build():
        if not hasattr(D, "X"):
            if H.sp is None:
                import scipy.sparse

                H.sp = scipy.sparse
            D.build()
        return gen()
    build.__name__ = gen.__name__
    return build


GENERATORS = tuple(_with_data(g) for g in (
    gen_corpus, gen_from_texts, gen_selection, gen_corpus_files, gen_readers, gen_browse,
    gen_maps, gen_pictures, gen_io_corpus, gen_cli_verbs, gen_cli_subprocess))
