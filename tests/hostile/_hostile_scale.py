"""Cases of the hostile suite for the scale API (issue 14): ``partial_fit`` of the counting
grid and pLSA (first call, in _hostile_cases.all_slots; continuation, here), ``fit`` of
CountingGrid, PLSA and RAP on chunk sources whose chunks are hostile, the online-EM
parameters, and the sources and writers of ``countgrid.streaming`` on damaged folders and
files.

Classes of input added here: ``partial-fit`` (a second call after a good first one: other
features, other dtypes, empty documents, bad matrices and sources; after a failed call the
model must be exactly as before, and a good call must still work), ``chunk-source`` (bad
matrices inside one chunk of a ``CSRChunks``, chunks of other widths or without rows, empty
sources, generator objects, functions that fail or return no iterable), ``memmap-folder``
(``MemmapCSR`` folders with missing, truncated or extra-long ``.bin`` files, a corrupt
``csr.json``, index pointers and indices that lie, files truncated after opening),
``npz-shards`` (``NpzShards`` of files that are no sparse ``.npz``: text, ``.npy``, pickles,
truncated or flipped archives, arrays whose header claims terabytes) and ``writer``
(``write_memmap_csr`` / ``write_npz_shards`` into places that cannot be written, bad
``rows_per_*``, chunks that do not fit together, writing a folder onto itself).  The new
parameters (``learning_method``, ``batch_size``, ``learning_offset``, ``learning_decay``,
``total_samples``) join the ``params`` class.

A chunk source's own failure (a function that raises :class:`SourceFailure`) must reach
the caller as it is: :func:`classify_scale` counts it as a clear error; a model changed by
a failed call, or unusable after it, is ``silent-wrong``.
"""
import copy
import io
import json
import os
import pickle
import zipfile

import numpy as np

import _hostile_cases as H
from _hostile_cases import D, Case, make, outputs, ref_outputs, nonfinite, compare

STREAM = ("countgrid.streaming.CSRChunks",)
ONLINE = ("countgrid.CountingGrid.partial_fit",)
SOURCE_ESTIMATORS = ("CountingGrid", "PLSA", "RAP")
PARTIAL = ("CountingGrid", "PLSA", "RAP")
FOLDER = "corpus.csr"
CHUNK_NAMES = ("X", "chunk")


def _cg():
    return H.cg


def _sp():
    return H.sp


def _st():
    import countgrid.streaming as st

    return st


# ============================================================================ outcomes
class SourceFailure(RuntimeError):
    """The error a hostile chunk source raises itself: it must reach the caller."""


class ModelDamaged(Exception):
    """Raised by a case when a failed call changed the model or left it unusable."""


def classify_scale(case, value, exc):
    """The engine's classification, plus: a :class:`SourceFailure` that reached the
    caller is a clear error (the user's own error, passed through), a
    :class:`ModelDamaged` is silent-wrong."""
    import _hostile_engine as E

    if isinstance(exc, ModelDamaged):
        return "silent-wrong", str(exc)[:400]
    if isinstance(exc, SourceFailure):
        if case.expect == "ok":
            return "unclear-error", f"the source failed: {exc}"
        return "clear-error", ""
    plain = copy.copy(case)
    plain.classify = None
    return E.classify(plain, value, exc)


def _case(entry, method, klass, variant, expect, run, names, oracle=None, needs=STREAM,
          **kw):
    kw.setdefault("classify", classify_scale)
    return Case(entry, method, klass, variant, expect, run, names, oracle, needs, **kw)


# ============================================================================ helpers
def _X():
    return D.Xs.copy()


def _chunks(*parts):
    return _st().CSRChunks(list(parts))


def _halves(X=None):
    X = _X() if X is None else X
    return [X[:16], X[16:]]


def _state(est):
    """Deep copy of the fitted attributes (public names ending in ``_``)."""
    return {k: copy.deepcopy(v) for k, v in vars(est).items()
            if k.endswith("_") and not k.startswith("_")}


def _diff(before, after):
    """Why two states differ (None when equal)."""
    if before.keys() != after.keys():
        return (f"attributes {sorted(before.keys() ^ after.keys())} appeared or "
                f"disappeared")
    for k in before:
        a, b = before[k], after[k]
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            a, b = np.asarray(a), np.asarray(b)
            if a.shape != b.shape or a.dtype != b.dtype or not np.array_equal(
                    a, b, equal_nan=a.dtype.kind in "fc"):
                return f"{k} changed"
        elif hasattr(a, "get_params"):
            p = _diff(_state(a), _state(b))
            if p:
                return f"{k}.{p}"
        else:
            try:
                same = bool(a == b) or (a != a and b != b)
            except Exception:  # noqa: BLE001 - exotic values: compare their text
                same = repr(a) == repr(b)
            if not same:
                return f"{k} changed from {a!r} to {b!r}"
    return None


def _unfitted_problem(est):
    left = sorted(k for k in vars(est) if k.endswith("_") and not k.startswith("_"))
    return f"the failed fit left fitted attributes {left}" if left else None


def _fit_oracle(name, cmp=False, rtol=1e-6):
    """Finite outputs; ``cmp``: those of the in-memory fit on the canonical matrix."""
    def oracle(value):
        p = nonfinite(value)
        if p:
            return p
        return compare(value, _source_reference(name), rtol) if cmp else None
    return oracle


def _source_reference(name):
    """The outputs of the in-memory fit on the canonical matrix that a fit on a chunk
    source of the same rows must reproduce.  PLSA's default ``tempered="auto"`` tempers an
    in-memory matrix only and fits plain EM on a chunk source (docs/topics.md, "Tempered
    EM"): its reference is the in-memory fit with ``tempered=False``, the same EM."""
    if name != "PLSA":
        return ref_outputs(name)
    return H._cached(("outputs", name, "tempered=False"),
                     lambda: outputs(name, H.fit(name, make(name, tempered=False))))


def _fit_keeping(name, source, params=None, query=True):
    """Fit a fresh estimator on ``source()``; on an error, the estimator must be left
    unfitted (a ModelDamaged says otherwise).  Returns the outputs on the canonical
    queries, or (``query=False``: a source of another width) the fitted arrays."""
    est = make(name, **(params or {}))
    try:
        est.fit(source())
    except BaseException as exc:
        p = _unfitted_problem(est)
        if p:
            raise ModelDamaged(f"{p} ({type(exc).__name__}: {exc})") from exc
        raise
    return outputs(name, est) if query else {H.FITTED: H.fitted_arrays(est)}


# ============================================================================ hostile sources
def _once(parts):
    """A function closing over ONE iterator: it yields the chunks in the first pass only
    (a common mistake: the source must give the same chunks at every pass)."""
    it = iter(parts)
    source = _st().CSRChunks(lambda: it)
    source._parts = list(parts)
    return source


def _failing(after_calls, parts):
    """A chunk function that raises SourceFailure from its ``after_calls``-th call on
    (0: at once)."""
    calls = [0]

    def make_chunks():
        calls[0] += 1
        if calls[0] > after_calls:
            raise SourceFailure(f"the source failed on pass {calls[0]}")
        return iter(parts)
    return _st().CSRChunks(make_chunks)


def _failing_midway(parts):
    """Yields the first chunk, then raises (inside the iteration, not at the call)."""
    def gen():
        yield parts[0]
        raise SourceFailure("the source failed after its first chunk")
    return _st().CSRChunks(gen)


class _LyingSource:
    """A ChunkSource (made when the case runs) whose ``n_features`` is not its chunks'."""

    @staticmethod
    def make(n_features, parts):
        class Lying(_st().ChunkSource):
            def chunks(self):
                return iter(parts)
        src = Lying()
        src.n_features = n_features
        return src


def _bad_chunk_sources():
    """(variant, expect, build source, extra names) of bad chunks inside a CSRChunks."""
    sp = _sp()
    out = []
    for kind in H.CORRUPT:
        out.append((f"chunk1-{kind}", "raise",
                    lambda kind=kind: _chunks(_X()[:16], H._corrupt(kind)(D.X[16:])), ()))
    for label, v in (("NaN", np.nan), ("inf", np.inf), ("negative", -1.0)):
        out.append((f"chunk1-{label}", "raise",
                    lambda v=v: _chunks(_X()[:16], H._set(3, 2, v)(D.X[16:])), ()))
        out.append((f"chunk1-sparse-{label}", "raise",
                    lambda v=v: _chunks(_X()[:16], H._set(3, None, v, sparse=True)(D.X[16:])),
                    ()))
    for label, build in (("complex", lambda M: np.asarray(M) + 1j),
                         ("str", lambda M: np.asarray(M).astype(np.int64).astype(str)),
                         ("object-with-None", H._object_with_none),
                         ("1-D", lambda M: np.asarray(M)[0]),
                         ("3-D", lambda M: np.asarray(M)[None]),
                         ("scalar", lambda M: 5.0), ("None", lambda M: None),
                         ("string", lambda M: "abc"),
                         ("ragged-list", lambda M: [[1.0, 2.0], [3.0]]),
                         ("dict", lambda M: {"a": 1})):
        out.append((f"chunk1-{label}", "raise",
                    lambda build=build: _chunks(_X()[:16], build(D.X[16:])), ()))
    feat = ("n_features", "features")
    out += [
        ("chunk1-11-columns", "raise", lambda: _chunks(_X()[:16], _X()[16:, :11]), feat),
        ("chunk1-13-columns", "raise",
         lambda: _chunks(_X()[:16], sp.hstack([_X()[16:], sp.csr_matrix((24, 1))])), feat),
        ("chunk1-dense-13-columns", "raise",
         lambda: _chunks(D.X[:16], H._wrong_features(D.X[16:])), feat),
        ("n_features-attribute-lies", "raise",
         lambda: _LyingSource.make(5, _halves()), feat),
        ("empty-list", "raise", lambda: _chunks(), ("rows", "documents")),
        ("empty-function", "raise", lambda: _st().CSRChunks(lambda: []),
         ("rows", "documents")),
        ("only-zero-row-chunks", "raise", lambda: _chunks(_X()[:0], _X()[:0]),
         ("rows", "documents")),
        ("all-chunks-all-zero", "raise-or-RAP",
         lambda: _chunks(sp.csr_matrix((16, 12)), sp.csr_matrix((24, 12))), ("counts",)),
        ("generator-object", "raise",
         lambda: _st().CSRChunks(c for c in _halves()), ("chunks",)),
        ("one-shot-iterator", "raise", lambda: _once(_halves()), ("pass", "chunks")),
        ("function-returns-None", "raise", lambda: _st().CSRChunks(lambda: None),
         ("chunks",)),
        ("function-returns-int", "raise", lambda: _st().CSRChunks(lambda: 5), ("chunks",)),
        ("function-raises", "raise", lambda: _failing(0, _halves()), ()),
        ("function-raises-on-pass-2", "raise", lambda: _failing(1, _halves()), ()),
        ("function-raises-on-pass-3", "raise", lambda: _failing(2, _halves()), ()),
        ("raises-inside-iteration", "raise", lambda: _failing_midway(_halves()), ()),
        ("chunks-not-list-or-function", "raise", lambda: _st().CSRChunks(_X()),
         ("chunks",)),
        ("chunks=None", "raise", lambda: _st().CSRChunks(None), ("chunks",)),
    ]
    return out


def _good_chunk_sources():
    """(variant, expect, build source, compare with the in-memory fit?)."""
    sp = _sp()
    X = lambda: _X()  # noqa: E731
    return [
        ("two-chunks", "ok", lambda: _chunks(*_halves()), True),
        ("tuple-of-chunks", "ok", lambda: _st().CSRChunks(tuple(_halves())), True),
        ("function", "ok", lambda: _st().CSRChunks(lambda: iter(_halves())), True),
        ("generator-function", "ok",
         lambda: _st().CSRChunks(lambda: (X()[i:i + 7] for i in range(0, 40, 7))), True),
        ("one-row-chunks", "ok", lambda: _chunks(*[X()[i:i + 1] for i in range(40)]), True),
        ("mixed-formats", "ok",
         lambda: _chunks(sp.coo_matrix(D.X[:10]), D.X[10:20], sp.csc_array(D.X[20:30]),
                         D.X[30:].tolist()), True),
        ("mixed-dtypes", "ok",
         lambda: _chunks(D.X[:10].astype(np.int8), sp.csr_matrix(D.X[10:25].astype(
             np.uint16)), D.X[25:]), True),
        ("zero-row-chunks-between", "either",
         lambda: _chunks(X()[:0], X()[:16], X()[16:16], X()[16:], X()[:0]), True),
        ("zero-by-zero-chunk-first", "either",
         lambda: _chunks(sp.csr_matrix((0, 0)), *_halves()), True),
        ("function-returns-a-matrix", "either", lambda: _st().CSRChunks(lambda: X()), True),
        ("empty-documents-in-a-chunk", "ok",
         lambda: _chunks(X()[:16], sp.vstack([sp.csr_matrix((5, 12)), X()[16:]])), False),
        ("3e9-columns", "either",
         lambda: _chunks(sp.csr_matrix((np.ones(4), np.arange(4) * 7, np.arange(5)),
                                       shape=(4, 3 * 10**9))), False),
    ]


def gen_chunk_sources():
    out = []
    for name in SOURCE_ESTIMATORS:
        needs = STREAM + (f"countgrid.{name}",)
        for variant, expect, build, extra in _bad_chunk_sources():
            if expect == "raise-or-RAP":        # RAP takes all-zero counts, as in memory
                expect = "either" if name == "RAP" else "raise"
            out.append(_case(name, "fit", "chunk-source", variant, expect,
                             lambda ctx, name=name, build=build: _fit_keeping(name, build),
                             CHUNK_NAMES + tuple(extra), _fit_oracle(name), needs, cost=2.0))
        for variant, expect, build, cmp in _good_chunk_sources():
            cmp = cmp and name != "RAP"      # RAP shuffles within chunks
            extra = ("n_features", "features", "words") if "columns" in variant else ()
            out.append(_case(name, "fit", "chunk-source", variant, expect,
                             lambda ctx, name=name, build=build: _fit_keeping(name, build),
                             CHUNK_NAMES + ("rows",) + extra, _fit_oracle(name, cmp),
                             needs, cost=2.0))
        # the sources on disk, written from the canonical matrix
        for variant, build in (
                ("MemmapCSR", lambda ctx: _st().write_memmap_csr(D.Xs, ctx.path(FOLDER),
                                                                 rows_per_chunk=16)),
                ("MemmapCSR-one-row-chunks", lambda ctx: _st().MemmapCSR(
                    _st().write_memmap_csr(D.Xs, ctx.path(FOLDER)).directory, 1)),
                ("NpzShards", lambda ctx: _st().write_npz_shards(D.Xs, ctx.path("shards"),
                                                                 rows_per_shard=16)),
                ("NpzShards-folder", lambda ctx: _st().NpzShards(
                    _st().write_npz_shards(D.Xs, ctx.path("shards"), 16) and
                    ctx.path("shards")))):
            out.append(_case(name, "fit", "chunk-source", variant, "ok",
                             lambda ctx, name=name, build=build: _fit_keeping(
                                 name, lambda: build(ctx)),
                             CHUNK_NAMES, _fit_oracle(name, name != "RAP"), needs,
                             files=True, cost=2.0))
    # what only some estimators refuse or take
    out.append(_case("PLSA", "fit", "chunk-source", "tempered", "raise",
                     lambda ctx: _fit_keeping("PLSA", lambda: _chunks(*_halves()),
                                              dict(tempered=True)),
                     ("tempered",), None, STREAM + ("countgrid.PLSA",)))
    for name in ("CountingGrid", "PLSA"):
        for variant, params in (("online", dict(learning_method="online", batch_size=10)),
                                ("online-batch-larger-than-chunks",
                                 dict(learning_method="online", batch_size=1000))):
            out.append(_case(name, "fit", "chunk-source", variant, "ok",
                             lambda ctx, name=name, params=params: _fit_keeping(
                                 name, lambda: _chunks(*_halves()), params),
                             CHUNK_NAMES, _fit_oracle(name), ONLINE, cost=2.0))
            out.append(_case(name, "fit", "chunk-source", f"{variant}-one-shot-iterator",
                             "raise",
                             lambda ctx, name=name, params=params: _fit_keeping(
                                 name, lambda: _once(_halves()), params),
                             CHUNK_NAMES + ("pass",), _fit_oracle(name), ONLINE, cost=2.0))
    out.append(_case("PLSA", "fit", "params", "learning_method='online'+tempered=True", "raise",
                     lambda ctx: _fit_keeping("PLSA", lambda: D.Xs,
                                              dict(tempered=True, learning_method="online")),
                     ("tempered", "learning_method"), None, ONLINE))
    for name in SOURCE_ESTIMATORS:
        for method in H.EST[name][2]:
            def run(ctx, name=name, method=method):
                return getattr(H.model(name), method)(_chunks(*_halves()))
            out.append(_case(name, method, "chunk-source", "a-CSRChunks", "raise", run,
                             ("X",), None, STREAM + (f"countgrid.{name}",)))
    out.append(_case("RAP", "fit", "chunk-source", "batch-larger-than-chunks", "ok",
                     lambda ctx: _fit_keeping("RAP", lambda: _chunks(*_halves()),
                                              dict(batch_size=1000)),
                     CHUNK_NAMES, _fit_oracle("RAP"), STREAM + ("countgrid.RAP",)))
    return out


# ============================================================================ partial_fit
def _steps(est):
    return getattr(est, "n_batch_iter_", getattr(est, "n_updates_", None))


def _continue(name, second, first=None, prepare=None):
    """A good first ``partial_fit``, then ``partial_fit(second())``.  On an error the
    model must be exactly as before, and a good call must still work afterwards."""
    def run(ctx):
        est = make(name)
        est.partial_fit(D.Xs if first is None else first())
        params = est.get_params(deep=False)
        if prepare is not None:
            est = prepare(est, ctx)
        before = _state(est)
        steps = _steps(est)
        dtype = _model_dtype(est)
        try:
            est.partial_fit(second())
        except BaseException as exc:
            p = _diff(before, _state(est))
            if p:
                raise ModelDamaged(f"the failed call ({type(exc).__name__}: {exc}) changed "
                                   f"the model: {p}") from exc
            try:
                est.set_params(**params)
                est.partial_fit(D.Xs)
                again = outputs(name, est)
            except Exception as exc2:  # noqa: BLE001
                raise ModelDamaged(f"after the failed call ({type(exc).__name__}), a good "
                                   f"partial_fit raises {type(exc2).__name__}: {exc2}") from exc
            p = nonfinite(again)
            if p:
                raise ModelDamaged(f"after the failed call, a good partial_fit gives {p}")
            raise
        return {"outputs": outputs(name, est), "steps": (steps, _steps(est)),
                "dtype": (dtype, _model_dtype(est))}
    return run


def _model_dtype(est):
    for k in ("pi_", "components_"):
        if hasattr(est, k):
            return np.asarray(getattr(est, k)).dtype.str
    return None


def _continue_oracle(value):
    p = nonfinite(value["outputs"])
    if p:
        return p
    (s0, s1), (d0, d1) = value["steps"], value["dtype"]
    if d0 != d1:
        return f"the fitted dtype changed from {d0} to {d1}"
    if s0 is not None and not s1 > s0:
        return f"the update count did not grow ({s0} -> {s1})"
    return None


def _save_load(est, ctx):
    path = ctx.path("model.npz")
    est.save(path)
    return _cg().load(path)


def _refit(est, ctx):
    return est.fit(D.Xs)


def _set(**params):
    return lambda est, ctx: est.set_params(**params)


def _continuation_variants(name):
    sp = _sp()
    feat = ("n_features", "features", "n_features_in_")
    v = [
        ("same-X", "ok", lambda: D.Xs, (), None),
        ("dense", "ok", lambda: D.X, (), None),
        ("float32", "ok", lambda: D.X.astype(np.float32), (), None),
        ("int8", "ok", lambda: D.X.astype(np.int8), (), None),
        ("sparse-bool", "either", lambda: H._sparse_astype(bool)(D.X), (), None),
        ("some-empty-documents", "ok", lambda: H._set(slice(0, 10), slice(None), 0.0)(D.X),
         (), None),
        ("all-empty-documents", "either", lambda: np.zeros_like(D.X), ("counts",), None),
        ("1-row", "either", lambda: D.X[:1], ("batch_size",), None),
        ("chunk-source", "ok", lambda: _chunks(*_halves()), (), None),
        ("0-rows", "either", lambda: D.X[:0], (), None),
        ("sparse-0-rows", "either", lambda: sp.csr_matrix(D.X[:0]), (), None),
        ("11-features", "raise", lambda: D.X[:, :11], feat, None),
        ("13-features", "raise", lambda: H._wrong_features(D.X), feat, None),
        ("sparse-13-features", "raise", lambda: sp.csr_matrix(H._wrong_features(D.X)), feat,
         None),
        ("0-columns", "raise", lambda: D.X[:, :0], feat, None),
        ("NaN", "raise", lambda: H._set(1, 1, np.nan)(D.X), (), None),
        ("inf", "raise", lambda: H._set(1, 1, np.inf)(D.X), (), None),
        ("negative", "raise", lambda: H._set(1, 1, -1.0)(D.X), (), None),
        ("complex", "raise", lambda: D.X + 0j, (), None),
        ("str", "raise", lambda: D.X.astype(np.int64).astype(str), (), None),
        ("None", "raise", lambda: None, (), None),
        ("1-D", "raise", lambda: D.X[0], (), None),
        ("csr:index-out-of-range", "raise", lambda: H._corrupt("csr:index-out-of-range")(D.X),
         (), None),
        ("csr:decreasing-indptr", "raise", lambda: H._corrupt("csr:decreasing-indptr")(D.X),
         (), None),
        ("coo:row-out-of-range", "raise", lambda: H._corrupt("coo:row-out-of-range")(D.X),
         (), None),
        ("source-bad-second-chunk", "raise",
         lambda: _chunks(_X()[:16], H._set(3, 2, np.nan)(D.X[16:])), CHUNK_NAMES, None),
        ("source-13-features-chunk", "raise",
         lambda: _chunks(_X()[:16], H._wrong_features(D.X[16:])), CHUNK_NAMES + feat, None),
        ("source-fails-at-once", "raise", lambda: _failing(0, _halves()), (), None),
        ("source-fails-on-pass-2", "raise", lambda: _failing(1, _halves()), (), None),
        ("source-fails-inside-iteration", "raise", lambda: _failing_midway(_halves()), (),
         None),
        ("source-one-shot-iterator", "raise", lambda: _once(_halves()), ("pass", "chunks"),
         None),
        ("after-save-and-load", "ok", lambda: D.Xs, (), _save_load),
        ("after-fit", "ok", lambda: D.Xs, (), _refit),
    ]
    if name == "CountingGrid":
        v += [("set_params-extent", "raise", lambda: D.Xs, ("extent",), _set(extent=(5, 5))),
              ("set_params-window", "either", lambda: D.Xs, ("window",), _set(window=(3, 3))),
              ("set_params-learning_decay=0.2", "raise", lambda: D.Xs, ("learning_decay",),
               _set(learning_decay=0.2)),
              ("set_params-batch_size=0", "raise", lambda: D.Xs, ("batch_size",),
               _set(batch_size=0))]
    else:
        v += [("set_params-n_components", "raise", lambda: D.Xs, ("n_components",),
               _set(n_components=4))]
    if name == "PLSA":
        v += [("set_params-learning_decay=0.2", "raise", lambda: D.Xs, ("learning_decay",),
               _set(learning_decay=0.2)),
              ("set_params-total_samples=0", "raise", lambda: D.Xs, ("total_samples",),
               _set(total_samples=0))]
    return v


def gen_partial_fit():
    out = []
    for name in PARTIAL:
        needs = (f"countgrid.{name}.partial_fit",)
        for variant, expect, second, extra, prepare in _continuation_variants(name):
            out.append(_case(name, "partial_fit", "partial-fit", f"second-call-{variant}",
                             expect, _continue(name, second, prepare=prepare),
                             ("X",) + tuple(extra), _continue_oracle, needs, files=True,
                             cost=2.0))
        # the first call on 3e9 columns: a MemoryError naming the sizes, before allocating
        out.append(_case(name, "partial_fit", "partial-fit", "first-call-3e9-columns-init-random",
                         "either", lambda ctx, name=name: outputs(name, make(
                             name, **({"init": "random"} if name == "PLSA" else {})).partial_fit(
                             H._huge_cols(D.X))), ("X", "features", "n_features", "words"),
                         _fit_oracle(name), needs, cost=2.0))
        # the first call in float32 (dtype=None follows X), the second in float64
        out.append(_case(name, "partial_fit", "partial-fit", "float32-then-float64", "ok",
                         _dtype_follow(name), ("X",), _continue_oracle, needs, cost=2.0))
    return out


def _dtype_follow(name):
    def run(ctx):
        est = make(name, dtype=None)
        est.partial_fit(D.X.astype(np.float32))
        steps, dtype = _steps(est), _model_dtype(est)
        est.partial_fit(D.X)
        return {"outputs": outputs(name, est), "steps": (steps, _steps(est)),
                "dtype": (dtype, _model_dtype(est))}
    return run


# ============================================================================ parameters
def _param_values(param, name):
    """(label, value, expect) of the new learning parameters."""
    if param == "learning_method":
        return [("'nope'", "nope", "raise"), ("None", None, "raise"), ("1", 1, "raise"),
                ("'ONLINE'", "ONLINE", "either"), ("b'online'", b"online", "raise"),
                ("'online'", "online", "ok")]
    if param == "batch_size":
        v = [("0", 0, "raise"), ("-1", -1, "raise"), ("2.7", 2.7, "raise"),
             ("'3'", "3", "raise"), ("True", True, "raise"), ("None", None, "raise"),
             ("numpy.int64(7)", np.int64(7), "ok"), ("1", 1, "ok"),
             ("10**12", 10**12, "either"), ("2**64", 2**64, "raise"),
             ("'nope'", "nope", "raise")]
        v.append(("'auto'", "auto", "ok" if name == "CountingGrid" else "raise"))
        return v
    if param == "learning_offset":
        return [("0", 0.0, "raise"), ("-1", -1.0, "raise"), ("nan", np.nan, "raise"),
                ("inf", np.inf, "either"), ("'10'", "10", "raise"), ("None", None, "raise"),
                ("numpy.float32(5)", np.float32(5), "ok"), ("1e-300", 1e-300, "either"),
                ("1e300", 1e300, "either"), ("True", True, "either")]
    if param == "learning_decay":
        return [("0.5", 0.5, "raise"), ("0.3", 0.3, "raise"), ("1.5", 1.5, "raise"),
                ("nan", np.nan, "raise"), ("inf", np.inf, "raise"), ("'0.7'", "0.7", "raise"),
                ("None", None, "raise"), ("1.0", 1.0, "ok"),
                ("numpy.float64(0.9)", np.float64(0.9), "ok"), ("0.5000001", 0.5000001, "ok")]
    if param == "total_samples":
        return [("0", 0, "raise"), ("-1", -1, "raise"), ("2.5", 2.5, "raise"),
                ("'1000'", "1000", "raise"), ("None", None, "raise"), ("True", True, "raise"),
                ("10**400", 10**400, "raise"), ("numpy.int64(100)", np.int64(100), "ok"),
                ("1", 1, "ok"), ("2**63-1", 2**63 - 1, "either")]
    raise AssertionError(param)


def gen_learning_params():
    out = []
    for name in ("CountingGrid", "PLSA"):
        needs = (f"countgrid.{name}.partial_fit",)
        for param in ("learning_method", "batch_size", "learning_offset", "learning_decay",
                      "total_samples"):
            for label, value, expect in _param_values(param, name):
                kw = {param: value}
                if param != "learning_method":
                    kw.setdefault("learning_method", "online")

                def run_fit(ctx, name=name, kw=kw):
                    return outputs(name, make(name, **kw).fit(D.Xs))

                out.append(_case(name, "fit", "params", f"{param}={label}", expect, run_fit,
                                 (param,), _fit_oracle(name), needs, cost=2.0))
                if param == "learning_method":
                    continue

                def run_partial(ctx, name=name, param=param, value=value):
                    est = make(name, **{param: value})
                    est.partial_fit(D.Xs)
                    return outputs(name, est.partial_fit(D.Xs))

                out.append(_case(name, "partial_fit", "params", f"{param}={label}", expect,
                                 run_partial, (param,), _fit_oracle(name), needs, cost=2.0))
    return out


# ============================================================================ MemmapCSR
def _write_good(ctx):
    return _st().write_memmap_csr(D.Xs, ctx.path(FOLDER), rows_per_chunk=16)


def _mm_path(ctx, name):
    return os.path.join(ctx.path(FOLDER), name)


def _rw(ctx, name, fn):
    path = _mm_path(ctx, name)
    with open(path, "rb") as fh:
        data = fh.read()
    with open(path, "wb") as fh:
        fh.write(fn(data))


def _meta_edit(fn):
    def damage(ctx):
        path = _mm_path(ctx, "csr.json")
        with open(path, encoding="utf-8") as fh:
            meta = json.load(fh)
        fn(meta)
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(meta, fh)
    return damage


def _meta_text(text):
    def damage(ctx):
        with open(_mm_path(ctx, "csr.json"), "wb") as fh:
            fh.write(text if isinstance(text, bytes) else text.encode("utf-8"))
    return damage


def _meta_set(key, value):
    return _meta_edit(lambda m: m.__setitem__(key, value))


def _array_edit(name, dtype, fn):
    def damage(ctx):
        path = _mm_path(ctx, name)
        a = np.fromfile(path, dtype=dtype)
        fn(a)
        a.tofile(path)
    return damage


def _set_at(i, v):
    def fn(a):
        a[i] = v
    return fn


def _remove(name):
    return lambda ctx: os.remove(_mm_path(ctx, name))


def _sparse_file(name, size):
    """Make ``name`` a sparse file of ``size`` bytes (no disk used)."""
    def damage(ctx):
        with open(_mm_path(ctx, name), "r+b") as fh:
            fh.truncate(size)
    return damage


def _memmap_damage():
    """(variant, expect, damage(ctx), extra names)."""
    nnz = D.Xs.nnz
    meta = "csr.json"
    out = [
        ("no-csr.json", "raise", _remove("csr.json"), (meta,)),
        ("no-indptr.bin", "raise", _remove("indptr.bin"), ("indptr.bin",)),
        ("no-indices.bin", "raise", _remove("indices.bin"), ("indices.bin",)),
        ("no-data.bin", "raise", _remove("data.bin"), ("data.bin",)),
        ("csr.json-is-a-folder", "raise",
         lambda ctx: (os.remove(_mm_path(ctx, meta)), os.mkdir(_mm_path(ctx, meta))), (meta,)),
        ("data.bin-is-a-folder", "raise",
         lambda ctx: (os.remove(_mm_path(ctx, "data.bin")),
                      os.mkdir(_mm_path(ctx, "data.bin"))), ("data.bin",)),
    ]
    for f in ("indptr.bin", "indices.bin", "data.bin"):
        out += [(f"{f}-truncated-8", "raise", lambda ctx, f=f: _rw(ctx, f, lambda d: d[:-8]),
                 (f,)),
                (f"{f}-truncated-3", "raise", lambda ctx, f=f: _rw(ctx, f, lambda d: d[:-3]),
                 (f,)),
                (f"{f}-empty", "raise", lambda ctx, f=f: _rw(ctx, f, lambda d: b""), (f,)),
                (f"{f}-extra-8", "raise", lambda ctx, f=f: _rw(ctx, f, lambda d: d + d[:8]),
                 (f,)),
                (f"{f}-extra-5", "raise", lambda ctx, f=f: _rw(ctx, f, lambda d: d + b"\0" * 5),
                 (f,)),
                (f"{f}-sparse-1TB", "raise", _sparse_file(f, 2**40), (f,))]
    ok_meta = {"format": "countgrid-memmap-csr", "version": 1, "shape": [40, 12],
               "index_dtype": "int64", "data_dtype": "float64"}
    out += [
        ("csr.json-empty", "raise", _meta_text(""), (meta,)),
        ("csr.json-not-json", "raise", _meta_text("shape: 40 x 12"), (meta,)),
        ("csr.json-binary", "raise", _meta_text(bytes(range(256))), (meta,)),
        ("csr.json-a-list", "raise", _meta_text("[40, 12]"), (meta,)),
        ("csr.json-deeply-nested", "raise", _meta_text("[" * 100000 + "]" * 100000), (meta,)),
        ("csr.json-huge-number", "raise",
         _meta_text(json.dumps(ok_meta).replace("[40, 12]", "[1" + "0" * 5000 + ", 12]")),
         (meta,)),
        ("format-other", "raise", _meta_set("format", "other"), (meta,)),
        ("version-2", "raise", _meta_set("version", 2), (meta,)),
        ("version-'x'", "raise", _meta_set("version", "x"), (meta,)),
        ("version-null", "raise", _meta_set("version", None), (meta,)),
        ("version-list", "raise", _meta_set("version", [1]), (meta,)),
        ("no-shape", "raise", _meta_edit(lambda m: m.pop("shape")), (meta,)),
        ("shape-null", "raise", _meta_set("shape", None), (meta,)),
        ("shape-1-D", "raise", _meta_set("shape", [40]), (meta,)),
        ("shape-3-D", "raise", _meta_set("shape", [40, 12, 1]), (meta,)),
        ("shape-negative-rows", "raise", _meta_set("shape", [-40, 12]), (meta,)),
        ("shape-negative-columns", "raise", _meta_set("shape", [40, -12]), (meta,)),
        ("shape-fewer-rows", "raise", _meta_set("shape", [39, 12]), (meta, "indptr.bin")),
        ("shape-fewer-columns", "raise", _meta_set("shape", [40, 11]), ()),
        ("shape-more-columns", "either", _meta_set("shape", [40, 13]), ()),
        ("shape-10**12-rows", "raise", _meta_set("shape", [10**12, 12]), (meta, "indptr.bin")),
        ("shape-2**63-rows", "raise", _meta_set("shape", [2**63, 12]), (meta, "indptr.bin")),
        ("shape-10**12-columns", "either", _meta_set("shape", [40, 10**12]),
         ("features", "n_features", "words")),
        ("shape-1e400", "raise",
         _meta_text(json.dumps(ok_meta).replace("[40, 12]", "[1e400, 12]")), (meta,)),
        ("shape-NaN", "raise", _meta_text(json.dumps(ok_meta).replace("[40, 12]",
                                                                      "[NaN, 12]")), (meta,)),
        ("shape-40.5", "raise", _meta_set("shape", [40.5, 12]), (meta,)),
        ("shape-strings", "raise", _meta_set("shape", ["40", "12"]), (meta,)),
        ("shape-true", "raise", _meta_set("shape", [True, 12]), (meta,)),
        ("shape-dict", "raise", _meta_set("shape", {"rows": 40, "cols": 12}), (meta,)),
        ("index_dtype-int16", "raise", _meta_set("index_dtype", "int16"), (meta,)),
        ("index_dtype-uint64", "raise", _meta_set("index_dtype", "uint64"), (meta,)),
        ("index_dtype-float64", "raise", _meta_set("index_dtype", "float64"), (meta,)),
        ("index_dtype-int32", "raise", _meta_set("index_dtype", "int32"), (meta, "indptr.bin")),
        ("index_dtype-big-endian", "either", _meta_set("index_dtype", ">i8"), (meta,)),
        ("index_dtype-nonsense", "raise", _meta_set("index_dtype", "nope"), (meta,)),
        ("index_dtype-null", "raise", _meta_set("index_dtype", None), (meta,)),
        ("index_dtype-structured", "raise", _meta_set("index_dtype", [["a", "<i8"]]), (meta,)),
        ("data_dtype-complex128", "raise", _meta_set("data_dtype", "complex128"), (meta,)),
        ("data_dtype-object", "raise", _meta_set("data_dtype", "object"), (meta,)),
        ("data_dtype-str", "raise", _meta_set("data_dtype", "U8"), (meta,)),
        ("data_dtype-datetime", "raise", _meta_set("data_dtype", "M8[D]"), (meta,)),
        ("data_dtype-float32", "raise", _meta_set("data_dtype", "float32"), (meta, "data.bin")),
        ("data_dtype-int64-lie", "either", _meta_set("data_dtype", "int64"), ()),
        ("data_dtype-nonsense", "raise", _meta_set("data_dtype", "nope"), (meta,)),
        ("data_dtype-dict", "raise", _meta_set("data_dtype", {"a": 1}), (meta,)),
        ("unknown-key", "ok", _meta_set("comment", "hello"), ()),
        ("indptr-not-from-0", "raise", _array_edit("indptr.bin", np.int64, _set_at(0, 1)),
         ("indptr.bin")),
        ("indptr-decreasing-inside-a-chunk", "raise",
         _array_edit("indptr.bin", np.int64, _set_at(5, 10**6)), ("indptr.bin")),
        ("indptr-decreasing-at-a-chunk-boundary", "raise",
         _array_edit("indptr.bin", np.int64, _set_at(16, nnz + 1)), ("indptr.bin")),
        ("indptr-negative-inside", "raise",
         _array_edit("indptr.bin", np.int64, _set_at(20, -5)), ("indptr.bin")),
        ("indptr-last-negative", "raise",
         _array_edit("indptr.bin", np.int64, _set_at(-1, -8)), ("indptr.bin")),
        ("indptr-last-2**62", "raise",
         _array_edit("indptr.bin", np.int64, _set_at(-1, 2**62)),
         ("indptr.bin", "indices.bin", "data.bin")),
        ("indices-out-of-range", "raise",
         _array_edit("indices.bin", np.int64, _set_at(7, 12)), ()),
        ("indices-negative", "raise", _array_edit("indices.bin", np.int64, _set_at(7, -1)),
         ()),
        ("indices-2**62", "raise", _array_edit("indices.bin", np.int64, _set_at(7, 2**62)),
         ()),
        ("data-NaN", "raise", _array_edit("data.bin", np.float64, _set_at(3, np.nan)), ()),
        ("data-inf", "raise", _array_edit("data.bin", np.float64, _set_at(3, np.inf)), ()),
        ("data-negative", "raise", _array_edit("data.bin", np.float64, _set_at(3, -2.0)), ()),
        ("data-all-zero", "raise", _array_edit("data.bin", np.float64, lambda a: a.fill(0)),
         ("counts",)),
    ]
    return out


def _memmap_names(extra):
    """A damaged folder must be named (the folder, the file, or the chunk read from it)."""
    return (FOLDER, "directory", "chunk") + tuple(extra)


def gen_memmap():
    out = []
    needs = ("countgrid.streaming.MemmapCSR",)
    for i, (variant, expect, damage, extra) in enumerate(_memmap_damage()):
        name = SOURCE_ESTIMATORS[i % 3]

        cmp = variant == "unknown-key" and name != "RAP"

        def run(ctx, damage=damage, name=name, cmp=cmp):
            _write_good(ctx)
            damage(ctx)
            return _fit_keeping(name, lambda: _st().MemmapCSR(ctx.path(FOLDER),
                                                              rows_per_chunk=16), query=cmp)

        out.append(_case("streaming.MemmapCSR", "", "memmap-folder", f"{variant}+{name}.fit",
                         expect, run, _memmap_names(extra), _fit_oracle(name, cmp), needs,
                         files=True, cost=2.0))
    # damage after the source was opened: the fit must not crash (SIGBUS) nor read stale data
    after = [
        ("data.bin-emptied-after-opening", lambda ctx: _rw(ctx, "data.bin", lambda d: b""),
         ("data.bin",)),
        ("indptr.bin-emptied-after-opening", lambda ctx: _rw(ctx, "indptr.bin", lambda d: b""),
         ("indptr.bin",)),
        ("indices.bin-removed-after-opening", _remove("indices.bin"), ("indices.bin",),
         "either"),
        ("rewritten-smaller-after-opening", lambda ctx: _st().write_memmap_csr(
            D.Xs[:10], ctx.path(FOLDER)), ("indptr.bin", "data.bin", "indices.bin")),
    ]
    for i, (variant, damage, extra, *expect) in enumerate(after):
        name = SOURCE_ESTIMATORS[i % 3]

        def run(ctx, damage=damage, name=name):
            big = _sp().random(3000, 12, density=0.5, format="csr", random_state=0,
                               data_rvs=lambda n: np.ones(n))
            source = _st().write_memmap_csr(big, ctx.path(FOLDER), rows_per_chunk=1000)
            damage(ctx)
            return _fit_keeping(name, lambda: source)

        out.append(_case("streaming.MemmapCSR", "", "memmap-folder", f"{variant}+{name}.fit",
                         expect[0] if expect else "raise", run, _memmap_names(extra),
                         _fit_oracle(name), needs, files=True, cost=3.0))
    # the constructor's own arguments
    for variant, expect, args, names in [
            ("directory-missing", "raise", lambda ctx: (ctx.path("nope"),), ("nope",)),
            ("directory-is-a-file", "raise",
             lambda ctx: (H._write(ctx.path("f.txt"), b"x"),), ("f.txt", "directory")),
            ("directory-None", "raise", lambda ctx: (None,), ("directory",)),
            ("directory-int", "raise", lambda ctx: (5,), ("directory",)),
            ("directory-bytes", "ok", lambda ctx: (os.fsencode(_write_good(ctx).directory),),
             ()),
            ("directory-of-npz-shards", "raise",
             lambda ctx: (_st().write_npz_shards(D.Xs, ctx.path("s")) and ctx.path("s"),),
             ("csr.json",)),
            ("rows_per_chunk=0", "raise", lambda ctx: (_write_good(ctx).directory, 0),
             ("rows_per_chunk",)),
            ("rows_per_chunk=-1", "raise", lambda ctx: (_write_good(ctx).directory, -1),
             ("rows_per_chunk",)),
            ("rows_per_chunk=2.5", "raise", lambda ctx: (_write_good(ctx).directory, 2.5),
             ("rows_per_chunk",)),
            ("rows_per_chunk='10'", "raise", lambda ctx: (_write_good(ctx).directory, "10"),
             ("rows_per_chunk",)),
            ("rows_per_chunk=True", "raise", lambda ctx: (_write_good(ctx).directory, True),
             ("rows_per_chunk",)),
            ("rows_per_chunk=None", "raise", lambda ctx: (_write_good(ctx).directory, None),
             ("rows_per_chunk",)),
            ("rows_per_chunk=numpy.int64(7)", "ok",
             lambda ctx: (_write_good(ctx).directory, np.int64(7)), ()),
            ("rows_per_chunk=10**30", "ok", lambda ctx: (_write_good(ctx).directory, 10**30),
             ())]:
        def run(ctx, args=args):
            source = _st().MemmapCSR(*args(ctx))
            return _stacked(source)
        out.append(_case("streaming.MemmapCSR", "", "memmap-folder", variant, expect, run,
                         names, _same_as_canonical, needs, files=True))
    return out


def _stacked(source):
    return _sp().vstack(list(source.chunks()), format="csr")


def _same_as_canonical(X):
    if X.shape != D.X.shape:
        return f"read a matrix of shape {X.shape}, wrote {D.X.shape}"
    if not np.array_equal(X.toarray(), D.X):
        return "read other values than were written"
    return None


# ============================================================================ NpzShards
def _shard_folder(ctx):
    return _st().write_npz_shards(D.Xs, ctx.path("shards"), rows_per_shard=16)


def _shard(ctx, i=1):
    return os.path.join(ctx.path("shards"), f"shard-{i:05d}.npz")


def _replace_shard(fn):
    def damage(ctx):
        path = _shard(ctx)
        with open(path, "rb") as fh:
            data = fh.read()
        new = fn(data, ctx, path)
        if new is not None:
            with open(path, "wb") as fh:
                fh.write(new)
    return damage


def _npz_bytes(**arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _shard_arrays(**over):
    X = D.Xs[16:32]
    parts = dict(indptr=X.indptr, indices=X.indices, data=X.data, shape=np.array(X.shape),
                 format=np.array("csr"))
    parts.update(over)
    return _npz_bytes(**{k: v for k, v in parts.items() if v is not None})


def _huge_header_npz():
    """A sparse .npz whose ``data`` member's header claims 10**12 float64 values."""
    X = D.Xs[16:32]
    header = {"descr": "<f8", "fortran_order": False, "shape": (10**12,)}
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    member = buf.getvalue() + X.data.tobytes()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for k, v in (("indptr", X.indptr), ("indices", X.indices),
                     ("shape", np.array(X.shape)), ("format", np.array("csr"))):
            b = io.BytesIO()
            np.lib.format.write_array(b, np.asarray(v))
            z.writestr(f"{k}.npy", b.getvalue())
        z.writestr("data.npy", member)
    return out.getvalue()


def _flip(frac):
    def fn(data, ctx, path):
        b = bytearray(data)
        b[int(len(b) * frac)] ^= 0xFF
        return bytes(b)
    return fn


def _compressed_flip(data, ctx, path):
    X = D.Xs[16:32]
    _sp().save_npz(path, X, compressed=True)
    with open(path, "rb") as fh:
        b = bytearray(fh.read())
    b[len(b) // 3] ^= 0x55
    return bytes(b)


def _shard_damage():
    S = "shard-00001.npz"
    X = D.Xs
    return [
        ("shard-text", "raise", _replace_shard(lambda d, c, p: b"hello, not an npz\n"), (S,)),
        ("shard-empty", "raise", _replace_shard(lambda d, c, p: b""), (S,)),
        ("shard-random-bytes", "raise",
         _replace_shard(lambda d, c, p: np.random.default_rng(0).bytes(3000)), (S,)),
        ("shard-is-npy", "raise", _replace_shard(lambda d, c, p: _npy_bytes(D.X[16:32])), (S,)),
        ("shard-pickle", "raise",
         _replace_shard(lambda d, c, p: pickle.dumps(D.Xs[16:32])), (S,)),
        ("shard-object-array", "raise",
         _replace_shard(lambda d, c, p: _shard_arrays(data=D.Xs[16:32].data.astype(object))),
         (S,)),
        ("shard-npz-of-a-pickle", "raise",
         _replace_shard(lambda d, c, p: _npz_bytes(x=np.array([{"a": 1}], dtype=object))),
         (S,)),
        ("shard-truncated-half", "raise", _replace_shard(lambda d, c, p: d[:len(d) // 2]),
         (S,)),
        ("shard-truncated-end", "raise", _replace_shard(lambda d, c, p: d[:-22]), (S,)),
        ("shard-flip-byte-30%", "either", _replace_shard(_flip(0.3)), (S,)),
        ("shard-flip-byte-60%", "either", _replace_shard(_flip(0.6)), (S,)),
        ("shard-compressed-flipped", "raise", _replace_shard(_compressed_flip), (S,)),
        ("shard-no-indptr", "raise", _replace_shard(lambda d, c, p: _shard_arrays(indptr=None)),
         (S, "indptr")),
        ("shard-format-coo-with-csr-keys", "raise",
         _replace_shard(lambda d, c, p: _shard_arrays(format=np.array("coo"))), (S, "format")),
        ("shard-format-unknown", "raise",
         _replace_shard(lambda d, c, p: _shard_arrays(format=np.array("xyz"))), (S, "format")),
        ("shard-format-int", "raise",
         _replace_shard(lambda d, c, p: _shard_arrays(format=np.array(5))), (S, "format")),
        ("shard-shape-3-D", "raise",
         _replace_shard(lambda d, c, p: _shard_arrays(shape=np.array([16, 12, 1]))),
         (S, "shape")),
        ("shard-shape-negative", "raise",
         _replace_shard(lambda d, c, p: _shard_arrays(shape=np.array([-16, 12]))), (S, "shape")),
        ("shard-shape-10**12-rows", "raise",
         _replace_shard(lambda d, c, p: _shard_arrays(shape=np.array([10**12, 12]))),
         (S, "shape", "indptr")),
        ("shard-shape-float", "raise",
         _replace_shard(lambda d, c, p: _shard_arrays(shape=np.array([16.5, 12]))),
         (S, "shape")),
        ("shard-header-claims-8TB", "raise", _replace_shard(lambda d, c, p: _huge_header_npz()),
         (S, "data")),
        ("shard-indices-out-of-range", "raise",
         _replace_shard(lambda d, c, p: _shard_arrays(indices=np.where(
             np.arange(X[16:32].nnz) == 3, 99, X[16:32].indices))), ("indices",)),
        ("shard-indptr-decreasing", "raise",
         _replace_shard(lambda d, c, p: _shard_arrays(
             indptr=H._corrupt("csr:decreasing-indptr")(D.X[16:32]).indptr)), ("indptr",)),
        ("shard-data-too-short", "raise",
         _replace_shard(lambda d, c, p: _shard_arrays(data=X[16:32].data[:-3])),
         (S, "data")),
        ("shard-data-NaN", "raise",
         _replace_shard(lambda d, c, p: _shard_arrays(data=np.r_[np.nan, X[16:32].data[1:]])),
         ()),
        ("shard-data-complex", "raise",
         _replace_shard(lambda d, c, p: _shard_arrays(data=X[16:32].data + 1j)), (S, "data")),
        ("shard-13-columns", "raise",
         _replace_shard(lambda d, c, p: _shard_arrays(shape=np.array([16, 13]))),
         ("features", "n_features")),
        ("shard-plain-arrays", "raise", _replace_shard(lambda d, c, p: _npz_bytes(
            arr_0=D.X[16:32])), (S,)),
        ("shard-a-folder", "raise",
         lambda ctx: (os.remove(_shard(ctx)), os.mkdir(_shard(ctx))), (S,)),
        ("shard-removed-after-opening", "raise", None, (S,)),
        ("shard-coo-format", "ok",
         _replace_shard(lambda d, c, p: _save_npz(p, _sp().coo_matrix(D.X[16:32]))), ()),
        ("shard-csc-format", "ok",
         _replace_shard(lambda d, c, p: _save_npz(p, _sp().csc_matrix(D.X[16:32]))), ()),
        ("shard-a-corpus-file", "ok",
         _replace_shard(lambda d, c, p: _cg().text.Corpus(D.X[16:32], D.words).save(p)), ()),
    ]


def _save_npz(path, M):
    _sp().save_npz(path, M)


def _npy_bytes(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def gen_npz():
    out = []
    needs = ("countgrid.streaming.NpzShards",)
    for i, (variant, expect, damage, extra) in enumerate(_shard_damage()):
        name = SOURCE_ESTIMATORS[i % 3]

        def run(ctx, damage=damage, name=name, variant=variant):
            _shard_folder(ctx)
            if damage is not None:
                damage(ctx)
                return _fit_keeping(name, lambda: _st().NpzShards(ctx.path("shards")))
            source = _st().NpzShards(ctx.path("shards"))
            os.remove(_shard(ctx))
            return _fit_keeping(name, lambda: source)

        cmp = expect == "ok" and name != "RAP"
        names = ("paths", "shards", "chunk") + tuple(
            e for e in extra if e.endswith(".npz") or "features" in e)
        out.append(_case("streaming.NpzShards", "", "npz-shards", f"{variant}+{name}.fit",
                         expect, run, names, _fit_oracle(name, cmp), needs, files=True,
                         cost=2.0))
    for variant, expect, args, names in [
            ("paths-None", "raise", lambda ctx: None, ("paths",)),
            ("paths-int", "raise", lambda ctx: 5, ("paths",)),
            ("paths-list-with-None", "raise", lambda ctx: [None], ("paths",)),
            ("paths-empty-list", "raise", lambda ctx: [], ("paths",)),
            ("paths-missing-file", "raise", lambda ctx: ctx.path("nope.npz"), ("nope.npz",)),
            ("paths-missing-folder-in-list", "raise", lambda ctx: [ctx.path("nope")],
             ("nope",)),
            ("paths-empty-folder", "raise",
             lambda ctx: (os.mkdir(ctx.path("e")), ctx.path("e"))[1], ("paths",)),
            ("paths-folder-in-a-list", "raise",
             lambda ctx: [_shard_folder(ctx) and ctx.path("shards")], ("shards", "paths")),
            ("paths-folder-with-a-subfolder-named-npz", "raise",
             lambda ctx: (_shard_folder(ctx), os.mkdir(ctx.path("shards/sub.npz")),
                          ctx.path("shards"))[2], ("sub.npz",)),
            ("paths-bytes-folder", "ok",
             lambda ctx: os.fsencode(_shard_folder(ctx) and ctx.path("shards")), ()),
            ("paths-generator-of-paths", "ok",
             lambda ctx: (p for p in _shard_folder(ctx).paths), ()),
            ("paths-a-string-of-a-file", "ok",
             lambda ctx: (_st().write_npz_shards(D.Xs, ctx.path("one")),
                          os.path.join(ctx.path("one"), "shard-00000.npz"))[1], ())]:
        def run(ctx, args=args):
            return _stacked(_st().NpzShards(args(ctx)))
        out.append(_case("streaming.NpzShards", "", "npz-shards", variant, expect, run, names,
                         _same_as_canonical, needs, files=True))
    return out


# ============================================================================ writers
def _roundtrip(value):
    """The writer's source reads back what was written."""
    X, source = value
    got = _stacked(source).toarray().astype(np.float64)
    want = np.asarray(_written(X), dtype=np.float64)
    if got.shape != want.shape:
        return f"read back shape {got.shape}, wrote {want.shape}"
    if not np.array_equal(got, want, equal_nan=True):
        return (f"read back other values than were written (largest difference "
                f"{np.nanmax(np.abs(got - want)):.6g})")
    return None


_DEFAULT = object()


def gen_writers():
    out = []
    sp = _sp()
    writers = (("write_memmap_csr", "rows_per_chunk", FOLDER),
               ("write_npz_shards", "rows_per_shard", "shards"))
    for wname, rows_arg, folder in writers:
        needs = (f"countgrid.streaming.{wname}",)
        entry = f"streaming.{wname}"

        def write(ctx, X, where=_DEFAULT, wname=wname, folder=folder, **kw):
            where = ctx.path(folder) if where is _DEFAULT else where
            return getattr(_st(), wname)(X, where, **kw)

        def add(variant, expect, run, names, oracle=None, entry=entry, needs=needs):
            out.append(_case(entry, "", "writer", variant, expect, run, names, oracle, needs,
                             files=True))

        # where to write
        add("folder-unwritable", "raise",
            lambda ctx, write=write: write(ctx, D.Xs, "/proc/countgrid-hostile-out"),
            ("countgrid-hostile-out", "directory"))
        add("folder-inside-a-file", "raise",
            lambda ctx, write=write: write(ctx, D.Xs, os.path.join(
                H._write(ctx.path("f.txt"), b"x"), "sub")), ("f.txt", "sub", "directory"))
        add("folder-is-a-file", "raise",
            lambda ctx, write=write: write(ctx, D.Xs, H._write(ctx.path("f.txt"), b"x")),
            ("f.txt", "directory"))
        add("folder-None", "raise", lambda ctx, write=write: write(ctx, D.Xs, None),
            ("directory",))
        add("folder-int", "raise", lambda ctx, write=write: write(ctx, D.Xs, 7),
            ("directory",))
        add("folder-empty-string", "raise", lambda ctx, write=write: write(ctx, D.Xs, ""),
            ("directory",))
        add("folder-bytes", "ok",
            lambda ctx, write=write, folder=folder: (D.Xs, write(ctx, D.Xs, os.fsencode(
                ctx.path(folder)))), ("directory",), _roundtrip)
        add("folder-exists", "ok",
            lambda ctx, write=write, folder=folder: (os.mkdir(ctx.path(folder)),
                                                     (D.Xs, write(ctx, D.Xs)))[1], (),
            _roundtrip)
        # rows per chunk / shard
        for label, v, expect in (("0", 0, "raise"), ("-1", -1, "raise"), ("2.5", 2.5, "raise"),
                                 ("'10'", "10", "raise"), ("True", True, "raise"),
                                 ("None", None, "raise"), ("numpy.int64(7)", np.int64(7), "ok"),
                                 ("1", 1, "ok"), ("10**30", 10**30, "ok")):
            add(f"{rows_arg}={label}", expect,
                lambda ctx, write=write, v=v, rows_arg=rows_arg: (
                    D.Xs, write(ctx, D.Xs, **{rows_arg: v})), (rows_arg,), _roundtrip)
        # what is written
        for label, expect, build, names in [
                ("dense", "ok", lambda: D.X, ()),
                ("list", "ok", lambda: D.X.tolist(), ()),
                ("coo", "ok", lambda: sp.coo_matrix(D.X), ()),
                ("int8", "ok", lambda: D.X.astype(np.int8), ()),
                ("bool", "ok", lambda: D.X > 1, ()),
                ("sparse-bool", "ok", lambda: sp.csr_matrix(D.X > 1), ()),
                ("float16", "ok", lambda: D.X.astype(np.float16), ()),
                ("uint64", "ok", lambda: D.X.astype(np.uint64), ()),
                ("source", "ok", lambda: _chunks(*_halves()), ()),
                ("source-of-mixed-dtypes-int8-then-fractions", "either",
                 lambda: _chunks(D.X[:16].astype(np.int8), D.X[16:] * 0.5 + 300.25),
                 ("chunk", "dtype")),
                ("source-of-mixed-dtypes-int8-then-int64", "either",
                 lambda: _chunks(D.X[:16].astype(np.int8), D.X[16:].astype(np.int64) * 1000),
                 ("chunk", "dtype")),
                ("source-11-then-12-columns", "raise",
                 lambda: _chunks(D.X[:16, :11], D.X[16:]), ("chunk", "columns", "features")),
                ("source-with-a-zero-row-chunk", "ok",
                 lambda: _chunks(D.X[:16], D.X[16:16], D.X[16:]), ()),
                ("source-one-shot-iterator", "either", lambda: _once(_halves()), ()),
                ("source-fails", "raise", lambda: _failing(0, _halves()), ()),
                ("source-fails-inside-iteration", "raise",
                 lambda: _failing_midway(_halves()), ()),
                ("empty-source", "raise", lambda: _chunks(), ("X",)),
                ("0-rows", "raise", lambda: D.X[:0], ("X",)),
                ("None", "raise", lambda: None, ("X",)),
                ("1-D", "raise", lambda: D.X[0], ("X",)),
                ("3-D", "raise", lambda: D.X[None], ("X",)),
                ("str", "raise", lambda: D.X.astype(int).astype(str), ("X",)),
                # values are the fit's to check: NaN is written, as from a float array
                ("object-with-None", "either", lambda: H._object_with_none(D.X), ("X",)),
                ("complex", "raise", lambda: D.X + 1j, ("X",)),
                ("sparse-complex", "raise", lambda: sp.csr_matrix(D.X + 1j), ("X",)),
                ("csr:index-out-of-range", "raise",
                 lambda: H._corrupt("csr:index-out-of-range")(D.X), ("X",)),
                ("csr:short-indptr", "raise", lambda: H._corrupt("csr:short-indptr")(D.X),
                 ("X",)),
                ("generator-object", "raise", lambda: (c for c in _halves()), ("X",)),
                ("NaN", "either", lambda: H._set(1, 1, np.nan)(D.X), ("X",)),
                ("negative", "either", lambda: H._set(1, 1, -1.0)(D.X), ("X",))]:
            add(f"X-{label}", expect,
                lambda ctx, write=write, build=build: _write_built(ctx, write, build),
                ("X",) + tuple(names), _roundtrip)
        # writing a folder onto itself, over an older write
        add("onto-its-own-source", "either",
            lambda ctx, write=write, wname=wname: (D.Xs, write(ctx, write(
                ctx, D.Xs, **{rows_arg_of(wname): 7}), **{rows_arg_of(wname): 5})),
            ("directory", "X"), _roundtrip)
        add("over-a-larger-older-write", "ok",
            lambda ctx, write=write, folder=folder, wname=wname: (
                write(ctx, _sp().vstack([D.Xs] * 3), **{rows_arg_of(wname): 16}),
                (D.Xs, _reopen(wname, ctx.path(folder), write(ctx, D.Xs, **{
                    rows_arg_of(wname): 16}))))[1], (), _roundtrip)
    return out


def _dense_rows(M):
    if _sp().issparse(M):
        return M.toarray()
    return np.asarray(M)


def _write_built(ctx, write, build):
    """(what was written, the source the writer returned); the oracle reads both."""
    X = build()
    return X, write(ctx, X)


def _written(X):
    """What a writer was given, as one dense matrix (read only after a write that
    returned: a corrupt structure never reaches here)."""
    if _st().is_chunk_source(X):
        parts = X._parts if hasattr(X, "_parts") else list(X.chunks())
        parts = [_dense_rows(c) for c in parts]
        return np.vstack([c for c in parts if c.shape[0]])
    return _dense_rows(X)


def rows_arg_of(wname):
    return "rows_per_chunk" if wname == "write_memmap_csr" else "rows_per_shard"


def _reopen(wname, folder, written):
    """The folder opened anew (NpzShards: every shard in the folder, not the list the
    writer returned)."""
    if wname == "write_memmap_csr":
        return _st().MemmapCSR(folder)
    return _st().NpzShards(folder)


#: Cases that fail because of code outside countgrid.streaming and countgrid.streaming._blocks (the
#: estimators), with the fix proposed; tests/hostile/test_hostile.py expects them to fail
#: until the fix lands (then the entry must go: a known failure that passes fails the test).
KNOWN_FAILURES = {}

GENERATORS = (gen_chunk_sources, gen_partial_fit, gen_learning_params, gen_memmap, gen_npz,
              gen_writers)
