"""Cases of the hostile suite (issue 13): every public estimator, function and the command
line, against every class of bad input, generated combinatorially (the front door of issue
11: _hostile_front_door.py; the scale API of issue 14: _hostile_scale.py; files and outputs
a stranger controls, issue 30: _hostile_security.py; the map's statistics of issue 24:
_hostile_atlas.py).

Each :class:`Case` states what it expects: ``"ok"`` (must succeed; its ``oracle`` checks the
result), ``"raise"`` (must raise a clear error naming one of ``names``) or ``"either"``
(a clear error naming one of ``names``, or a result that passes the oracle).  A case may
also pin the error down: ``error`` (its class, or a tuple of classes) and ``match`` (a
regular expression its message must contain, as ``pytest.raises(match=)``); ``quiet``: a
warning on the way fails the case.  See _hostile_engine.py for the classification.

The ids are ``<entry>.<method>/<class>/<variant>``; the module builds the same list in the
runner and in the workers (nothing here computes with countgrid until a case runs).
"""
import copy
import importlib
import io
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
import zipfile

import numpy as np

cg = None     # countgrid, set by preload() in the zygote
sp = None     # scipy.sparse

HERE = os.path.dirname(os.path.abspath(__file__))


# ============================================================================ the record
class Case:
    __slots__ = ("id", "entry", "method", "klass", "expect", "run", "names", "oracle", "needs",
                 "timeout", "canary", "recycle", "files", "classify", "cost", "error", "match",
                 "quiet")

    def __init__(self, entry, method, klass, variant, expect, run, names=(), oracle=None,
                 needs=(), timeout=20.0, canary=True, recycle=False, files=False,
                 classify=None, cost=1.0, error=None, match=None, quiet=False):
        assert expect in ("ok", "raise", "either"), expect
        assert expect != "ok" or (error is None and match is None), "an ok case raises nothing"
        self.id = f"{entry}.{method}/{klass}/{variant}" if method else f"{entry}/{klass}/{variant}"
        self.entry, self.method, self.klass, self.expect = entry, method, klass, expect
        self.run, self.names, self.oracle = run, tuple(names), oracle
        self.needs, self.timeout, self.canary = tuple(needs), timeout, canary
        self.recycle, self.files, self.classify, self.cost = recycle, files, classify, cost
        self.error, self.match, self.quiet = error, match, quiet


# ============================================================================ the worker side
def preload():
    """Import everything a case may use (in the zygote: no computation, no OpenMP)."""
    global cg, sp
    import scipy.sparse as _sp
    import scipy.sparse.linalg  # noqa: F401
    import scipy.special  # noqa: F401

    sp = _sp
    import countgrid as _cg

    cg = _cg
    for name in ("countgrid.kernels", "countgrid.embeddings", "countgrid.metrics",
                 "countgrid.text", "countgrid.datasets", "countgrid.retrieval", "countgrid.io",
                 "countgrid.cli", "countgrid.maps"):
        importlib.import_module(name)
    for name in ("sklearn.svm", "sklearn.neighbors", "sklearn.base"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401

        importlib.import_module("countgrid.plotting")
    except ImportError:
        pass
    try:
        importlib.import_module("_reference.itk")
    except ImportError:
        pass
    D.build()


def available(name):
    """Does the dotted name exist in this environment (module attribute chain)?"""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


class Context:
    """What a running case gets: a private temporary folder."""

    def __init__(self, tmp, case):
        self.tmp, self.case = tmp, case
        self.extra_names = []

    def path(self, name):
        return os.path.join(self.tmp, name)


def cleanup():
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


def canary():
    """A small computation whose result must not change after any case (heap check)."""
    junk = [np.full(int(n), float(n)) for n in np.arange(1, 60) * 37]
    s = float(sum(a.sum() for a in junk))
    del junk
    A = np.array([[1.0, 2, 0, 3], [0, 1, 1, 1], [4, 0, 0, 1]])
    K = cg.kernels.jensen_shannon_kernel(A, num_threads=1)
    Ks = cg.kernels.jensen_shannon_kernel(sp.csr_matrix(A), num_threads=1)
    return (round(s, 3), [round(float(v), 12) for v in np.ravel(K)],
            [round(float(v), 12) for v in np.ravel(Ks)])


class D:
    """Shared data (built once in the zygote, inherited by the workers)."""

    @classmethod
    def build(cls):
        rng = np.random.default_rng(0)
        rates = np.r_[np.full(6, 3.0), np.full(6, 0.3)]
        X = np.vstack([rng.poisson(rates, (20, 12)), rng.poisson(rates[::-1], (20, 12))])
        cls.X = X.astype(np.float64)
        cls.Xs = sp.csr_matrix(cls.X)
        cls.y = np.repeat([0, 1], 20)
        cls.y_real = cls.y * 1.5 + 0.25
        q = [0, 1, 2, 20, 21, 22, 39]
        cls.Xq = cls.X[q]
        cls.yq = cls.y[q]
        cls.A = cls.Xq
        cls.B = cls.X[[5, 25, 30, 10, 35]]
        s = np.r_[rng.normal(-1, 0.5, (300, 2)), rng.normal(1, 0.5, (300, 2))]
        edges = np.linspace(-3, 3, 13)
        cls.W = np.histogram2d(s[:, 0], s[:, 1], bins=[edges, edges])[0]
        cls.centres = (edges[:-1] + edges[1:]) / 2
        cls.points = np.array([[0.0, 0.0], [1.0, -1.0], [-1.0, -1.0]])
        P = rng.dirichlet(np.ones(16), size=40)
        cls.P = P
        cls.words = np.array([f"w{i}" for i in range(12)])


# ------------------------------------------------------------------ fitted models (cached)
_MODELS = {}
_REFS = {}


def _cached(key, build):
    if key not in _REFS:
        try:
            _REFS[key] = ("ok", build())
        except Exception as exc:  # noqa: BLE001 - the case that needs it reports it
            _REFS[key] = ("error", exc)
    status, value = _REFS[key]
    if status == "error":
        raise RuntimeError(f"the reference {key} could not be computed: "
                           f"{type(value).__name__}: {value}")
    return value


# ============================================================================ estimators
_PLSA = dict(n_components=2, n_iter=5, random_state=0, num_threads=1)
# float64 grids: every input form is compared with the canonical one at 1e-6 to 1e-9; the
# default float32 grids agree to their own precision (tests/grid) and the dtype slot's
# float32 cases run them here
_CG = dict(extent=(4, 4), window=(2, 2), n_iter=3, random_state=0, num_threads=1,
           dtype=np.float64)
_CGE = dict(extent=(3, 3), window=(2, 2), n_iter=3, random_state=0, num_threads=1)
_CGG = dict(_CGE, dtype=np.float64)

# name -> (what fit takes besides X, constructor parameters, inference methods)
EST = {
    "CountingGrid": (None, _CG, ("transform", "score_samples")),
    "LayeredCountingGrid": (None, dict(_CG, n_layers=2), ("transform", "score_samples")),
    "TimeSlicedCountingGrid": (None, _CG, ("transform", "score_samples")),
    "CountingGridClassifier": ("classes", _CG, ("predict", "predict_proba")),
    "CountingGridRegressor": ("real", _CG, ("predict",)),
    "GenerativeCountingGridClassifier": ("classes", dict(_CGG), ("predict", "predict_proba")),
    "PLSA": (None, _PLSA, ("transform", "score_samples")),
    "ZIPGTM": (None, dict(grid_shape=(3, 3), n_basis=4, n_iter=3, random_state=0, num_threads=1),
               ("transform", "predict_proba", "score_samples")),
    "RAP": (None, dict(n_components=3, n_epochs=1, random_state=0, num_threads=1),
            ("transform", "score_samples")),
    "LSI": (None, dict(n_components=1, random_state=0), ("transform",)),
    "MixtureOfTopics": ("classes", _PLSA, ("transform",)),
    "FisherScore": ("classes", _PLSA, ("transform",)),
    "TOPEmbedding": ("classes", _PLSA, ("transform",)),
    "LLREmbedding": ("classes", _PLSA, ("transform",)),
    "FreeEnergyScoreSpace": ("classes", _PLSA, ("transform",)),
    "PosteriorDivergence": ("classes", _PLSA, ("transform",)),
    "CountingGridPosterior": ("classes", _CGE, ("transform",)),
    "CountingGridFESS": ("classes", _CGE, ("transform",)),
    "HistogramGMM": ("histogram", dict(n_components=2, n_iter=5, random_state=0),
                     ("predict_proba", "score_samples")),
    "ITKernelClassifier": ("classes", dict(kernel="js", classifier="knn", num_threads=1),
                           ("predict",)),
}
SUPERVISED = [n for n, (k, _, _) in EST.items() if k == "classes"]
CLASSIFIERS = ["CountingGridClassifier", "GenerativeCountingGridClassifier", "ITKernelClassifier"]
SAVEABLE = [n for n in EST if n != "ITKernelClassifier"]
THREADED = [n for n, (_, p, _) in EST.items() if "num_threads" in p]


def make(name, **kw):
    params = dict(EST[name][1])
    params.update(kw)
    return getattr(cg, name)(**params)


def labels_for(name, n):
    """Labels for a fit on n rows: the canonical ones for 40 rows (or an X without rows),
    else alternating classes (both present from 2 rows on)."""
    kind = EST[name][0]
    if n is None or n == 40:
        return D.y if kind == "classes" else D.y_real if kind == "real" else None
    y = np.resize(D.y[[0, 20]], n)
    return y if kind == "classes" else y * 1.5 + 0.25 if kind == "real" else None


_CANON = object()


def fit(name, est, X=_CANON, y="default"):
    kind = EST[name][0]
    if kind == "histogram":
        return est.fit(D.W, [D.centres, D.centres]) if X is _CANON else est.fit(*X)
    X = D.Xs if X is _CANON else X
    if kind is None:
        return est.fit(X)
    if isinstance(y, str) and y == "default":
        y = labels_for(name, _rows_or_none(X))
    return est.fit(X, y)


def query(name):
    if EST[name][0] == "histogram":
        return D.points
    return sp.csr_matrix(D.Xq) if name == "ITKernelClassifier" else D.Xq


FITTED = "fitted attributes"


def fitted_arrays(est, prefix=""):
    """Every float array among the fitted attributes (``name_``) of ``est`` and of the
    estimators it holds: a fit that returns must leave them finite, not only its outputs."""
    found = {}
    for key, value in vars(est).items():
        if not key.endswith("_") or key.startswith("_"):
            continue
        many = isinstance(value, (list, tuple))
        for i, item in enumerate(value if many else [value]):
            label = f"{prefix}{key}" + (f"[{i}]" if many else "")
            if isinstance(item, np.ndarray) and item.dtype.kind == "f":
                found[label] = item
            elif hasattr(item, "get_params") and hasattr(item, "__dict__"):
                found.update(fitted_arrays(item, label + "."))
    return found


def outputs(name, est, Q=None):
    Q = query(name) if Q is None else Q
    out = {m: _dense(getattr(est, m)(Q)) for m in EST[name][2]}
    out[FITTED] = fitted_arrays(est)
    return out


def model(name):
    """A private copy of the estimator fitted on the canonical data (``name:dense``: on
    the dense rows)."""
    if name not in _MODELS:
        base, _, kind = name.partition(":")
        X = D.X if kind == "dense" else _CANON
        _MODELS[name] = _cached(("model", name), lambda: fit(base, make(base), X))
    return copy.deepcopy(_MODELS[name])


def ref_outputs(name):
    return _cached(("outputs", name), lambda: outputs(name, model(name)))


# ============================================================================ oracles
def _n_rows(M):
    if isinstance(M, (list, tuple)):
        return len(M)
    return M.shape[0] if getattr(M, "ndim", 0) else 1


def _rows_or_none(M):
    if getattr(M, "ndim", 2) != 2:
        return None
    try:
        n = _n_rows(M)
    except (AttributeError, TypeError, IndexError):
        return None
    return n if isinstance(n, (int, np.integer)) else None


def _dense(v):
    if sp is not None and sp.issparse(v):
        return v.toarray()
    return v


def _as_array(v):
    v = _dense(v)
    return v if isinstance(v, np.ndarray) else np.asarray(v)


def nonfinite(value, path="result", allow_neg_inf=False):
    """Description of the first NaN/inf in a (nested) result, or None."""
    if isinstance(value, dict):
        for k, v in value.items():
            p = nonfinite(v, f"{path}[{k!r}]", allow_neg_inf)
            if p:
                return p
        return None
    if isinstance(value, (tuple, list)) and not (value and isinstance(value[0], (int, float))):
        for i, v in enumerate(value):
            p = nonfinite(v, f"{path}[{i}]", allow_neg_inf)
            if p:
                return p
        return None
    if sp is not None and sp.issparse(value):
        value = value.data
    if isinstance(value, (float, int, np.number, list, tuple, np.ndarray)):
        a = np.asarray(value)
        if a.dtype.kind in "fc":
            bad = ~np.isfinite(a)
            if allow_neg_inf:
                bad &= ~(np.isneginf(a) if a.dtype.kind == "f" else False)
            if bad.any():
                return f"{path} has {int(bad.sum())} NaN/inf value(s)"
    return None


def close(a, b, rtol, atol=1e-12, what="result"):
    """Problem string if arrays a and b differ (relative to the scale of b)."""
    a, b = _as_array(a), _as_array(b)
    if a.shape != b.shape:
        return f"{what} has shape {a.shape}, the reference {b.shape}"
    if a.dtype.kind in "OUSb" or b.dtype.kind in "OUSb" or (
            a.dtype.kind in "iu" and b.dtype.kind in "iu"):
        if not (a == b).all() if a.size else False:
            return f"{what} differs from the reference ({int((a != b).sum())} entries)"
        if a.dtype.kind == "O" or b.dtype.kind == "O":
            ta = {type(v) for v in a.ravel()}
            tb = {type(v) for v in b.ravel()}
            if a.size and ta != tb:
                return f"{what} has elements of type {sorted(t.__name__ for t in ta)}, " \
                       f"expected {sorted(t.__name__ for t in tb)}"
        return None
    if a.size == 0:
        return None
    if (a.dtype.kind == "c") != (b.dtype.kind == "c"):
        return f"{what} has dtype {a.dtype}, the reference {b.dtype}"
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    both = np.isfinite(a64) & np.isfinite(b64)
    if not np.array_equal(np.isfinite(a64), np.isfinite(b64)):
        return f"{what}: NaN/inf where the reference has none (or the reverse)"
    scale = float(np.max(np.abs(b64[both]))) if both.any() else 0.0
    err = float(np.max(np.abs(a64[both] - b64[both]))) if both.any() else 0.0
    if err > atol + rtol * scale:
        return f"{what} differs from the reference by {err:.3g} (scale {scale:.3g}, rtol {rtol:g})"
    return None


def allclose(a, b, rtol, atol=0.0, what="result"):
    """Problem string unless ``|a - b| <= atol + rtol |b|`` entry by entry (as
    numpy.testing.assert_allclose)."""
    try:
        np.testing.assert_allclose(_as_array(a), _as_array(b), rtol=rtol, atol=atol)
    except AssertionError as exc:
        return f"{what} differs from the reference: " + " ".join(str(exc).split())[:200]
    return None


def compare(out, ref, rtol=1e-6, atol=1e-12):
    if isinstance(ref, dict):
        if not isinstance(out, dict) or set(out) != set(ref):
            return "the outputs are not those of the reference"
        for k in ref:
            if k == FITTED:     # checked for NaN/inf only: refits may differ in the last bits
                continue
            p = close(out[k], ref[k], rtol, atol, k)
            if p:
                return p
        return None
    if isinstance(ref, tuple) and hasattr(ref, "_fields"):      # RetrievalCurve
        for f in ref._fields:
            p = close(getattr(out, f), getattr(ref, f), rtol, atol, f)
            if p:
                return p
        return None
    if isinstance(ref, tuple):
        if not isinstance(out, tuple) or len(out) != len(ref):
            return "the result is not a tuple like the reference"
        for i, (o, r) in enumerate(zip(out, ref)):
            p = compare(o, r, rtol, atol)
            if p:
                return f"[{i}] {p}"
        return None
    return close(out, ref, rtol, atol)


def oracle_finite(rows=None, ref=None, rtol=1e-6, allow_neg_inf=False, first=None):
    """Finite result; first dimension ``rows`` (or ``first(result)`` for nested ones);
    equal to ``ref()`` within ``rtol`` if given."""
    def oracle(value):
        p = nonfinite(value, allow_neg_inf=allow_neg_inf)
        if p:
            return p
        if rows is not None:
            arr = first(value) if first else value
            n = _n_rows(_dense(arr)) if hasattr(arr, "shape") or isinstance(arr, list) else None
            if n != rows:
                return f"result has {n} rows, expected {rows}"
        if ref is not None:
            return compare(value, ref(), rtol)
        return None
    return oracle


# ============================================================================ slots
class Slot:
    """One place a matrix goes in: ``call(M)`` runs the entry point with M there."""

    def __init__(self, entry, method, arg, kind, canon, call, reference, needs, rows,
                 features=True, cost=1.0, first=None, model_needs=None):
        self.entry, self.method, self.arg, self.kind = entry, method, arg, kind
        self.canon, self.call, self.reference = canon, call, reference
        self.needs, self.rows, self.features, self.cost = needs, rows, features, cost
        self.first = first
        # parameters a message may rightly blame for a matrix with too few rows/columns
        self.size_names = ()


def _est_needs(name):
    return (f"countgrid.{name}",)


def _fit_slot(name):
    def call(M, y="default"):
        return outputs(name, fit(name, make(name), M, y))

    s = Slot(name, "fit", "X", "fit", lambda: D.X, call, lambda: ref_outputs(name),
             _est_needs(name), rows=None, cost=3.0)
    s.size_names = _SIZE_NAMES
    return s


_SIZE_NAMES = ("y", "n_samples", "n_components", "extent", "window", "grid_shape", "n_basis",
               "batch_size")


def _partial_fit_slot(name="RAP"):
    """The first ``partial_fit`` of a fresh estimator (the continuation: _hostile_scale)."""
    def call(M):
        return outputs(name, make(name).partial_fit(M))

    def reference():
        return _cached(("partial", name), lambda: call(D.Xs))

    s = Slot(name, "partial_fit", "X", "fit", lambda: D.X, call, reference,
             (f"countgrid.{name}.partial_fit",), rows=None, cost=3.0)
    s.size_names = _SIZE_NAMES
    return s


def _like(M, dense):
    """``dense`` in the kind of M (CSR when M is sparse): the other operand of a pair
    follows the tested one, so that a corrupt structure reaches the sparse kernels (mixed
    pairs have their own class)."""
    return sp.csr_matrix(dense) if sp is not None and sp.issparse(M) else dense


def _infer_slot(name, method):
    def call(M):
        if name == "ITKernelClassifier" and not sp.issparse(M):
            est = model("ITKernelClassifier:dense")  # dense queries: fitted on dense rows
        else:
            est = model(name)
        return _dense(getattr(est, method)(M))

    return Slot(name, method, "X", "infer", lambda: D.Xq, call,
                lambda: ref_outputs(name)[method], _est_needs(name), rows=lambda n: n)


def _func_slot(entry, method, arg, needs, canon, call, rows, features=True, cost=1.0,
               first=None):
    key = ("func", entry, method)

    def reference():
        return _cached(key, lambda: call(canon()))

    return Slot(entry, method, arg, "func", canon, call, reference, needs, rows, features,
                cost, first)


def _k(name):
    return getattr(cg.kernels, name)


def function_slots():
    jt, js = "countgrid.kernels.jensen_tsallis_kernel", "countgrid.kernels.jensen_shannon_kernel"
    S = [
        _func_slot("kernels.jensen_tsallis_kernel", "A", "A", (jt,), lambda: D.A,
                   lambda M: _k("jensen_tsallis_kernel")(M, _like(M, D.B), q=1.5, num_threads=1),
                   lambda n: n),
        _func_slot("kernels.jensen_tsallis_kernel", "B", "B", (jt,), lambda: D.B,
                   lambda M: _k("jensen_tsallis_kernel")(_like(M, D.A), M, q=0.7, num_threads=1),
                   lambda n: 7, first=None),
        # with B, so that A's column count is fixed by B's (the Gram of A alone takes any)
        _func_slot("kernels.jensen_shannon_kernel", "A", "A", (js,), lambda: D.A,
                   lambda M: _k("jensen_shannon_kernel")(M, _like(M, D.B), num_threads=1),
                   lambda n: n),
        _func_slot("kernels.jensen_shannon_kernel", "B", "B", (js,), lambda: D.B,
                   lambda M: _k("jensen_shannon_kernel")(_like(M, D.A), M, num_threads=1),
                   lambda n: 7),
        _func_slot("tfidf", "X", "X", ("countgrid.tfidf",), lambda: D.Xq,
                   lambda M: _dense(cg.tfidf(M)), lambda n: n),
        _func_slot("retrieval.idf_weights", "X", "X", ("countgrid.retrieval.idf_weights",),
                   lambda: D.X, lambda M: cg.retrieval.idf_weights(M), None),
        _func_slot("metrics.cosine_similarity", "A", "A",
                   ("countgrid.metrics.cosine_similarity",), lambda: D.A,
                   lambda M: cg.metrics.cosine_similarity(M, _like(M, D.B)), lambda n: n),
        _func_slot("metrics.cosine_similarity", "B", "B",
                   ("countgrid.metrics.cosine_similarity",), lambda: D.B,
                   lambda M: cg.metrics.cosine_similarity(_like(M, D.A), M), lambda n: 7),
        _func_slot("metrics.precision_recall_curve_retrieval", "query_codes", "query_codes",
                   ("countgrid.metrics.precision_recall_curve_retrieval",), lambda: D.Xq,
                   lambda M: cg.metrics.precision_recall_curve_retrieval(
                       M, _like(M, D.X), np.resize(D.yq, _n_rows(M)), D.y), None),
        _func_slot("metrics.precision_recall_curve_retrieval", "corpus_codes", "corpus_codes",
                   ("countgrid.metrics.precision_recall_curve_retrieval",), lambda: D.X,
                   lambda M: cg.metrics.precision_recall_curve_retrieval(
                       _like(M, D.Xq), M, D.yq, np.resize(D.y, _n_rows(M))), None),
        _func_slot("text.select_by_resolving_power", "X", "X",
                   ("countgrid.text.select_by_resolving_power",), lambda: D.X,
                   lambda M: cg.text.select_by_resolving_power(M, 2, 0.9), None),
        _func_slot("select_n_components_bic", "X", "X", ("countgrid.select_n_components_bic",),
                   lambda: D.X,
                   lambda M: cg.select_n_components_bic(M, [1, 2], n_iter=3, random_state=0,
                                                        num_threads=1)[1], None, cost=3.0),
        _func_slot("embeddings.fisher_score", "X", "X", ("countgrid.embeddings.fisher_score",),
                   lambda: D.Xq, lambda M: _dense(cg.embeddings.fisher_score(model("PLSA"), M)),
                   lambda n: n),
        _func_slot("embeddings.fess_terms", "X", "X", ("countgrid.embeddings.fess_terms",),
                   lambda: D.Xq,
                   lambda M: tuple(_dense(t) for t in cg.embeddings.fess_terms(model("PLSA"), M)),
                   lambda n: n, first=lambda v: v[0]),
        _func_slot("embeddings.posterior_divergence", "X", "X",
                   ("countgrid.embeddings.posterior_divergence",), lambda: D.Xq,
                   lambda M: cg.embeddings.posterior_divergence(model("PLSA"), M,
                                                               np.full(2, 50.0)), lambda n: n),
        _func_slot("embeddings.cg_fess_terms", "X", "X",
                   ("countgrid.embeddings.cg_fess_terms",), lambda: D.Xq,
                   lambda M: cg.embeddings.cg_fess_terms(model("CountingGrid"), M), lambda n: n),
    ]
    for s in S:
        if s.entry == "text.select_by_resolving_power":
            s.size_names = ("low", "high")
        elif s.entry == "select_n_components_bic":
            s.size_names = ("n_components", "candidates")
    return S


def all_slots():
    S = []
    for name, (kind, _, methods) in EST.items():
        if kind == "histogram":
            continue
        S.append(_fit_slot(name))
        for m in methods:
            S.append(_infer_slot(name, m))
        if name == "RAP":
            S.append(_partial_fit_slot())
    # the partial_fit of issue 14 last, so that the variants the slots above get do not move
    return (S + function_slots() + [_partial_fit_slot("CountingGrid"), _partial_fit_slot("PLSA")]
            + completion_slots() + diagnostics_slots())


def completion_slots():
    """Document completion (issue 22), after every other slot so that the variants the
    slots above get do not move."""
    cp, cs = ("countgrid.metrics.completion_perplexity",), ("countgrid.metrics.completion_split",)
    return [
        _func_slot("metrics.completion_perplexity", "X", "X", cp, lambda: D.Xq,
                   lambda M: cg.metrics.completion_perplexity(model("PLSA"), M), None),
        _func_slot("metrics.completion_perplexity", "X-grid", "X", cp, lambda: D.Xq,
                   lambda M: cg.metrics.completion_perplexity(model("CountingGrid"), M), None),
        _func_slot("metrics.completion_split", "X", "X", cs, lambda: D.Xq,
                   lambda M: tuple(_dense(t) for t in cg.metrics.completion_split(M)),
                   lambda n: n, first=lambda v: v[0]),
    ]


def diagnostics_slots():
    """Coherence, the diagnostics table and RAP's completion (issue 27), last of all so
    that the variants the slots above get do not move."""
    tc, td = ("countgrid.metrics.topic_coherence",), ("countgrid.metrics.topic_diagnostics",)
    cp = ("countgrid.metrics.completion_perplexity",)
    return [
        _func_slot("metrics.topic_coherence", "X", "X", tc, lambda: D.Xq,
                   lambda M: cg.metrics.topic_coherence(model("PLSA"), M, n_words=3,
                                                        measure="u_mass").per_topic, None),
        _func_slot("metrics.topic_diagnostics", "X", "X", td, lambda: D.Xq,
                   lambda M: cg.metrics.topic_diagnostics(model("PLSA"), M, n_words=3).tokens,
                   None),
        _func_slot("metrics.topic_diagnostics", "X-grid", "X", td, lambda: D.Xq,
                   lambda M: cg.metrics.topic_diagnostics(model("CountingGrid"), M,
                                                          n_words=3, regions=2).tokens, None),
        _func_slot("metrics.completion_perplexity", "X-rap", "X", cp, lambda: D.Xq,
                   lambda M: cg.metrics.completion_perplexity(model("RAP"), M), None),
    ]


def slot_case(slot, klass, variant, expect, build, names=None, cmp=False, rtol=1e-6,
              rows="same", content=None, extra_names=(), **kw):
    """A case that puts ``build(canon)`` into ``slot``.

    The oracle: finite result; ``rows`` rows where the slot's output follows its input
    ("same": as many as the built matrix); ``cmp``: equal to the reference (the slot's
    result on the canonical matrix, or on ``content(canon)`` when given) within ``rtol``.
    """
    names = tuple(names or (slot.arg,)) + tuple(extra_names)

    def run(ctx):
        return slot.call(build(slot.canon()))

    def oracle(value):
        p = nonfinite(value)
        if p:
            return p
        if slot.rows is not None and rows is not None:
            n_in = _n_rows(build(slot.canon())) if rows == "same" else rows
            want = slot.rows(n_in)
            arr = slot.first(value) if slot.first else value
            got = _n_rows(_as_array(arr))
            if got != want:
                return f"result has {got} rows, expected {want}"
        if cmp:
            ref = slot.call(content(slot.canon())) if content else slot.reference()
            return compare(value, ref, rtol)
        return None

    return Case(slot.entry, slot.method, klass, variant, expect, run, names, oracle,
                slot.needs, cost=slot.cost, **kw)


KERNEL_LIKE = ("kernels.jensen_tsallis_kernel", "kernels.jensen_shannon_kernel",
               "metrics.cosine_similarity")


def pick(variants, slot, i, n_fit, n_infer, n_func, kernels_all=True):
    """The variants a slot gets: all of them for the kernels (the C kernels that trusted
    their input in 0.1.0), else a share that rotates with the slot index ``i``."""
    if kernels_all and slot.entry in KERNEL_LIKE:
        return list(variants)
    n = {"fit": n_fit, "infer": n_infer, "func": n_func}[slot.kind]
    return rotate(variants, n, 7 * i)


def rotate(items, k, offset):
    """k of ``items`` starting at ``offset`` (wrapping): spreads variants over slots."""
    if k >= len(items):
        return list(items)
    return [items[(offset + j) % len(items)] for j in range(k)]


# ============================================================================ matrices
SPARSE_FORMATS = ["csr_matrix", "csc_matrix", "coo_matrix", "bsr_matrix", "dia_matrix",
                  "lil_matrix", "dok_matrix", "csr_array", "csc_array", "coo_array", "bsr_array",
                  "dia_array", "lil_array", "dok_array"]


def _fmt(name):
    return lambda M: getattr(sp, name)(np.asarray(M))


def _readonly(M):
    M = np.array(M)
    M.flags.writeable = False
    return M


ARRAY_LIKES = [
    ("list", lambda M: np.asarray(M).tolist()),
    ("np.matrix", lambda M: np.matrix(M)),
    ("fortran-order", lambda M: np.asfortranarray(M)),
    ("non-contiguous", lambda M: np.repeat(np.asarray(M), 2, axis=1)[:, ::2]),
    ("read-only", _readonly),
    ("tuple-of-rows", lambda M: tuple(tuple(r) for r in np.asarray(M).tolist())),
]


def gen_formats():
    out = []
    slots = all_slots()
    for i, s in enumerate(slots):
        for f in pick(SPARSE_FORMATS, s, i, 8, 3, 6):
            out.append(slot_case(s, "sparse-format", f, "ok", _fmt(f), cmp=True))
        likes = pick(ARRAY_LIKES, s, i, 2, 1, 3, kernels_all=False)
        for name, build in likes:
            out.append(slot_case(s, "array-like", name, "ok", build, cmp=True))
    return out


def _corrupt(kind):
    fmt, what = kind.split(":")

    def build(M):
        cls = {"csr": "csr_matrix", "csc": "csc_matrix", "coo": "coo_matrix",
               "csr_array": "csr_array"}[fmt]
        X = getattr(sp, cls)(np.asarray(M))
        if fmt == "coo":
            k = X.nnz // 2
            if what == "row-out-of-range":
                X.row[k] = X.shape[0]
            elif what == "negative-col":
                X.col[k] = -1
            elif what == "short-data":
                X.data = X.data[:-2].copy()
            return X
        k = X.nnz // 2
        n_minor = X.shape[1] if fmt != "csc" else X.shape[0]
        i = len(X.indptr) // 2
        if what == "index-out-of-range":
            X.indices[k] = n_minor
        elif what == "huge-index":
            X.indices[k] = np.iinfo(X.indices.dtype).max
        elif what == "negative-index":
            X.indices[k] = -1
        elif what == "decreasing-indptr":
            X.indptr[i] = X.indptr[i + 1] + 1
        elif what == "short-indptr":
            X.indptr = X.indptr[:-1].copy()
        elif what == "short-data":
            X.data = X.data[:-3].copy()
        elif what == "short-indices":
            X.indices = X.indices[:-3].copy()
        elif what == "indptr-not-from-0":
            X.indptr[0] = 1
        elif what == "indptr-beyond-nnz":
            X.indptr[-1] = X.indptr[-1] + 5
        else:  # pragma: no cover
            raise AssertionError(what)
        return X

    return build


CORRUPT = ["csr:index-out-of-range", "csr:huge-index", "csr:negative-index",
           "csr:decreasing-indptr", "csr:short-indptr", "csr:short-data", "csr:short-indices",
           "csr:indptr-not-from-0", "csr:indptr-beyond-nnz", "csc:index-out-of-range",
           "csc:negative-index", "csc:decreasing-indptr", "coo:row-out-of-range",
           "coo:negative-col", "csr_array:index-out-of-range"]


def _duplicates(M):
    X = sp.csr_matrix(np.asarray(M))
    return sp.csr_matrix((np.repeat(X.data / 2, 2), np.repeat(X.indices, 2), X.indptr * 2),
                         shape=X.shape)


def _unsorted(M):
    X = sp.csr_matrix(np.asarray(M))
    for r in range(X.shape[0]):
        a, b = X.indptr[r], X.indptr[r + 1]
        X.indices[a:b] = X.indices[a:b][::-1].copy()
        X.data[a:b] = X.data[a:b][::-1].copy()
    X.has_sorted_indices = False
    return X


def _explicit_zeros(M):
    M = np.asarray(M, dtype=np.float64)
    X = sp.csr_matrix(np.ones_like(M))
    X.data = M.ravel().copy()
    return X


def _int64_indices(M):
    X = sp.csr_matrix(np.asarray(M))
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    return X


def _coo_duplicates(M):
    X = sp.coo_matrix(np.asarray(M))
    return sp.coo_matrix((np.repeat(X.data / 2, 2), (np.repeat(X.row, 2), np.repeat(X.col, 2))),
                         shape=X.shape)


VALID_UNUSUAL = [("csr:duplicate-entries", _duplicates), ("csr:unsorted-indices", _unsorted),
                 ("csr:explicit-zeros", _explicit_zeros), ("csr:int64-indices", _int64_indices),
                 ("coo:duplicate-entries", _coo_duplicates)]


def gen_corrupt():
    """A share of the corrupt structures for each slot, and for every slot the decreasing
    ``indptr`` (it corrupted the heap in 0.1.0): a ValueError saying ``<arg> is a corrupt
    sparse matrix``."""
    out = []
    for i, s in enumerate(all_slots()):
        bad = pick(CORRUPT, s, i, 6, 3, 8)
        if "csr:decreasing-indptr" not in bad:
            bad = bad + ["csr:decreasing-indptr"]
        good = pick(VALID_UNUSUAL, s, i, 1, 1, 2)
        for kind in bad:
            out.append(slot_case(s, "corrupt-sparse", kind, "raise", _corrupt(kind),
                                 recycle=True, error=ValueError,
                                 match=rf"\b{re.escape(s.arg)} is a corrupt sparse matrix"))
        for kind, build in good:
            out.append(slot_case(s, "corrupt-sparse", kind, "ok", build, cmp=True, rtol=1e-9,
                                 recycle=True))
    return out


def _astype(dtype):
    return lambda M: np.asarray(M).astype(dtype)


def _object_with_none(M):
    M = np.asarray(M).astype(object)
    M[1, 1] = None
    return M


def _sparse_astype(dtype):
    def build(M):
        X = sp.csr_matrix(np.asarray(M))
        X.data = X.data.astype(dtype)
        return X
    return build


def _bool_content(M):
    return (np.asarray(M) > 0).astype(np.float64)


# (name, build, expect, compare with the reference?, content for the reference)
DTYPES = [
    ("bool", _astype(bool), "either", True, _bool_content),
    ("int8", _astype(np.int8), "ok", True, None),
    ("int16", _astype(np.int16), "ok", True, None),
    ("int32", _astype(np.int32), "ok", True, None),
    ("int64", _astype(np.int64), "ok", True, None),
    ("uint8", _astype(np.uint8), "ok", True, None),
    ("uint16", _astype(np.uint16), "ok", True, None),
    ("uint32", _astype(np.uint32), "ok", True, None),
    ("uint64", _astype(np.uint64), "ok", True, None),
    ("float16", _astype(np.float16), "either", False, None),
    ("float32", _astype(np.float32), "ok", "loose", None),
    ("longdouble", _astype(np.longdouble), "either", True, None),
    ("complex64", _astype(np.complex64), "raise", False, None),
    ("complex128", _astype(np.complex128), "raise", False, None),
    ("object-ints", lambda M: np.asarray(M).astype(np.int64).astype(object), "either", True,
     None),
    ("object-with-None", _object_with_none, "raise", False, None),
    ("str", lambda M: np.asarray(M).astype(np.int64).astype(str), "raise", False, None),
    ("bytes", lambda M: np.asarray(M).astype(np.int64).astype("S"), "raise", False, None),
    ("datetime64", lambda M: np.asarray(M).astype(np.int64).astype("datetime64[D]"), "raise",
     False, None),
    ("sparse-bool", _sparse_astype(bool), "either", True, _bool_content),
    ("sparse-int8", _sparse_astype(np.int8), "ok", True, None),
    ("sparse-uint64", _sparse_astype(np.uint64), "ok", True, None),
    ("sparse-float16", _sparse_astype(np.float16), "either", False, None),
    ("sparse-float32", _sparse_astype(np.float32), "ok", "loose", None),
    ("sparse-complex128", _sparse_astype(np.complex128), "raise", False, None),
    ("sparse-object", _sparse_astype(object), "either", True, None),
]


def gen_dtypes():
    out = []
    for i, s in enumerate(all_slots()):
        dts = pick(DTYPES, s, i, 7, 3, 10, kernels_all=False)
        for name, build, expect, cmp, content in dts:
            rtol = 1e-6
            if cmp == "loose":                  # float32 arithmetic: not bit-equal to float64
                cmp, rtol = s.kind != "fit", 1e-3
            out.append(slot_case(s, "dtype", name, expect, build, cmp=cmp, rtol=rtol,
                                 content=content))
    return out


def _set(i, j, v, sparse=False):
    def build(M):
        M = np.array(M, dtype=np.float64)
        if sparse:
            X = sp.csr_matrix(M)
            X.data[i] = v
            return X
        M[i, j] = v
        return M
    return build


def _huge_cols(M):
    n = _n_rows(M)
    return sp.csr_matrix((np.ones(n), np.arange(n) * 7, np.arange(n + 1)), shape=(n, 3 * 10**9))


def _huge_rows(M):
    M = np.asarray(M)
    X = sp.coo_matrix(M)
    return sp.coo_matrix((X.data, (X.row, X.col)), shape=(3 * 10**9, M.shape[1]))


def _wrong_features(M):
    M = np.asarray(M)
    return np.hstack([M, np.ones((M.shape[0], 1))])


# slots whose number of features is fixed by a model or by the other matrix
def _fixed_features(s):
    return s.kind == "infer" or s.entry.startswith("embeddings.") or s.method in (
        "A", "B", "query_codes", "corpus_codes") or s.entry == "metrics.completion_perplexity"


def _other(s):
    return {"A": ("B",), "B": ("A",), "query_codes": ("corpus_codes",),
            "corpus_codes": ("query_codes",)}.get(s.method, ())


_JUNK = [("1-D", lambda M: np.asarray(M)[0]), ("3-D", lambda M: np.asarray(M)[None]),
         ("scalar", lambda M: 5.0), ("empty-list", lambda M: []),
         ("ragged-list", lambda M: [[1.0, 2.0], [3.0]]), ("string", lambda M: "abc"),
         ("None", lambda M: None)]


def gen_shapes():
    out = []
    feat_names = ("n_features", "features", "n_features_in_")
    for i, s in enumerate(all_slots()):
        # a fit, or a function whose other arguments depend on the number of rows
        fit_like = s.kind == "fit" or bool(s.size_names)
        add = out.append
        for name, build in pick(_JUNK, s, i, 3, 1, 3, kernels_all=False):
            if name == "None" and s.method == "B":
                continue                        # B=None is the symmetric kernel
            add(slot_case(s, "shape", name, "raise", build))
        add(slot_case(s, "shape", "0-rows", "raise" if fit_like else "either",
                      lambda M: np.asarray(M)[:0], extra_names=s.size_names))
        if s.kind != "infer" or i % 2:
            add(slot_case(s, "shape", "sparse-0-rows", "raise" if fit_like else "either",
                          lambda M: sp.csr_matrix(np.asarray(M)[:0]),
                          extra_names=s.size_names))
        if s.kind != "infer" or i % 2:
            add(slot_case(s, "shape", "0-columns",
                          "raise" if s.kind in ("fit", "infer") else "either",
                          lambda M: np.asarray(M)[:, :0], extra_names=feat_names + _other(s)))
        add(slot_case(s, "shape", "1-row", "either" if fit_like else "ok",
                      lambda M: np.asarray(M)[:1], extra_names=s.size_names))
        add(slot_case(s, "shape", "1-column", "raise" if _fixed_features(s) else "either",
                      lambda M: np.asarray(M)[:, :1],
                      extra_names=feat_names + _other(s) + s.size_names))
        if _fixed_features(s):
            add(slot_case(s, "shape", "wrong-n_features", "raise", _wrong_features,
                          extra_names=feat_names + _other(s)))
            if s.kind != "infer" or not i % 2:
                add(slot_case(s, "shape", "sparse-wrong-n_features", "raise",
                              lambda M: sp.csr_matrix(_wrong_features(M)),
                              extra_names=feat_names + _other(s)))
        if s.kind == "fit":
            add(slot_case(s, "shape", "3e9-columns", "either", _huge_cols,
                          extra_names=feat_names + ("words",), rows=None))
        elif i % 3 == 0 and s.method != "corpus_codes":
            add(slot_case(s, "shape", "3e9-rows", "either", _huge_rows,
                          extra_names=("rows", "samples", "n_samples"), rows=None))
    return out + pinned_shapes()


def pinned_shapes():
    """Shapes and types refused in words scikit-learn's users know (the class of the error
    and the message), beside the slots' share of them above."""
    out = []
    jt, prc, cos = (("countgrid.kernels.jensen_tsallis_kernel",),
                    ("countgrid.metrics.precision_recall_curve_retrieval",),
                    ("countgrid.metrics.cosine_similarity",))
    ragged = [[1.0, 2.0], [3.0]]
    # the Gram matrix of A alone (B=None)
    for klass, variant, A, error, match in [
            ("shape", "1-D", lambda: np.ones(3), ValueError, "Expected a 2-D array for A"),
            ("shape", "3-D", lambda: np.ones((2, 2, 2)), ValueError,
             "Expected a 2-D array for A"),
            ("dtype", "complex-ones", lambda: np.ones((2, 2), dtype=complex), ValueError,
             "Complex data not supported: A"),
            ("dtype", "object-with-None", lambda: np.array([[None, 1]]), ValueError,
             "A contains NaN"),
            ("dtype", "object-with-dict", lambda: np.array([[{}, 1]]), TypeError,
             "real numbers"),
            ("dtype", "string", lambda: "abc", TypeError, "real numbers"),
            ("shape", "ragged-list", lambda: ragged, TypeError, "A could not be converted")]:
        out.append(Case("kernels.jensen_tsallis_kernel", "A-alone", klass, variant, "raise",
                        lambda ctx, A=A: _k("jensen_tsallis_kernel")(A(), num_threads=1),
                        ("A",), None, jt, error=error, match=match))
    for entry, method, variant, run, names, error, match, need in [
            ("metrics.precision_recall_curve_retrieval", "query_codes", "0-rows-0-labels",
             lambda: cg.metrics.precision_recall_curve_retrieval(D.Xq[:0], D.X, D.yq[:0], D.y),
             ("query_codes",), ValueError, "at least one document", prc),
            ("metrics.precision_recall_curve_retrieval", "query_codes", "1-D-one-label",
             lambda: cg.metrics.precision_recall_curve_retrieval(D.Xq[0], D.X, D.yq[:1], D.y),
             ("query_codes",), ValueError, "Expected a 2-D array for query_codes", prc),
            ("metrics.precision_recall_curve_retrieval", "query_codes", "ragged-list-2-labels",
             lambda: cg.metrics.precision_recall_curve_retrieval(ragged, D.X, D.yq[:2], D.y),
             ("query_codes",), TypeError, "query_codes could not be converted", prc),
            ("metrics.cosine_similarity", "B", "ragged-list-of-2",
             lambda: cg.metrics.cosine_similarity(D.X, ragged), ("B",), TypeError,
             "B could not be converted", cos),
            ("metrics.cosine_similarity", "B", "6-of-12-columns",
             lambda: cg.metrics.cosine_similarity(D.X, D.X[:, :6]), ("A", "B"), ValueError,
             "A has 12 columns and B has 6", cos),
            ("LSI", "fit", "0-rows-of-12",
             lambda: make("LSI").fit(D.X[:0]), ("X",), ValueError,
             r"Found array with 0 sample\(s\)", _est_needs("LSI")),
            ("LSI", "transform", "3-of-12-columns",
             lambda: model("LSI").transform(D.X[:, :3]), ("X",), ValueError, "features",
             _est_needs("LSI"))]:
        out.append(Case(entry, method, "shape", variant, "raise", lambda ctx, run=run: run(),
                        names, None, need, error=error, match=match))
    # one query row against the whole corpus: one row of similarities
    out.append(Case("metrics.cosine_similarity", "A", "shape", "1-row-against-40", "ok",
                    lambda ctx: cg.metrics.cosine_similarity(D.X[:1], D.X), ("A",),
                    lambda S: None if np.shape(S) == (1, 40) else f"shape {np.shape(S)}",
                    cos))
    return out


_SCALE_INVARIANT = KERNEL_LIKE


def _one_nonzero(M):
    Z = np.zeros(np.shape(M))
    Z[0, 0] = 1.0
    return Z


def _int64_huge(M):
    M = np.asarray(M).astype(np.int64)
    M[1, 1] = 2**62
    return M


def gen_values():
    out = []
    for i, s in enumerate(all_slots()):
        inv = s.entry in _SCALE_INVARIANT
        bad = [(f"{pre}{name}", _set(3, None, v, sparse=True) if pre else _set(1, 1, v))
               for name, v in (("NaN", np.nan), ("inf", np.inf), ("-inf", -np.inf),
                               ("negative", -1.0)) for pre in ("", "sparse-")]
        # codes, not counts (document completion splits counts; coherence and the
        # diagnostics table read them)
        real_valued = s.entry.startswith("metrics.") and not any(
            k in s.entry for k in ("completion", "topic_"))
        for name, build in pick(bad, s, i, 4, 2, 4):
            if real_valued and name.endswith("negative"):
                out.append(slot_case(s, "values", name, "ok", build))
            else:
                what = "must be non-negative" if name.endswith("negative") \
                    else "contains NaN or infinity"
                out.append(slot_case(s, "values", name, "raise", build, error=ValueError,
                                     match=rf"\b{re.escape(s.arg)} {what}"))
        extreme = [
            ("all-x1e300", lambda M: np.asarray(M) * 1e300, 1e-6),
            ("all-x1e307-row-sums-overflow", lambda M: np.asarray(M) * 1e307, 1e-6),
            ("all-x1e-320", lambda M: np.asarray(M) * 1e-320, 1e-2),
            ("float32-near-max", lambda M: (np.asarray(M) * 3e37).astype(np.float32), 1e-3)]
        for name, build, rtol in pick(extreme, s, i, 2, 1, 2):
            out.append(slot_case(s, "values", name, "ok" if inv else "either", build, cmp=inv,
                                 rtol=rtol))
        edge = [("one-entry-1e300", _set(1, 1, 1e300)),
                ("fractional", lambda M: np.asarray(M) + 0.5),
                ("all-zero", lambda M: np.zeros_like(M)),
                ("sparse-all-zero", lambda M: sp.csr_matrix(np.shape(M))),
                ("zero-row", _set(0, slice(None), 0.0)),
                ("zero-column", _set(slice(None), 0, 0.0)),
                ("one-nonzero", _one_nonzero), ("int64-2**62", _int64_huge)]
        for name, build in pick(edge, s, i, 4, 2, 3):
            out.append(slot_case(s, "values", name, "either", build))
    return out + pinned_values()


def pinned_values():
    """Values refused (the class of the error and the message), or computed exactly,
    beside the slots' share of them above."""
    lsi, prc = _est_needs("LSI"), ("countgrid.metrics.precision_recall_curve_retrieval",)
    out = [
        Case("LSI", "fit", "values", "NaN-above-2", "raise",
             lambda ctx: make("LSI").fit(np.where(D.X > 2, np.nan, D.X)), ("X",), None, lsi,
             error=ValueError, match="X contains NaN"),
        Case("LSI", "fit", "values", "all-negative", "raise",
             lambda ctx: make("LSI").fit(-D.X), ("X",), None, lsi, error=ValueError,
             match="non-negative"),
        Case("metrics.precision_recall_curve_retrieval", "query_codes", "values",
             "inf-above-2", "raise",
             lambda ctx: cg.metrics.precision_recall_curve_retrieval(
                 np.where(D.X > 2, np.inf, D.X), D.X, D.y, D.y), ("query_codes",), None, prc,
             error=ValueError, match="query_codes contains NaN"),
    ]

    def unscaled(T):      # LSI's tf-idf normalises the lengths: the scale is gone
        return nonfinite(T) or allclose(T, model("LSI").transform(D.Xq), 1e-12)

    out.append(Case("LSI", "transform", "values", "all-x1e300-as-unscaled", "ok",
                    lambda ctx: model("LSI").transform(D.Xq * 1e300), ("X",), unscaled, lsi))
    return out


# ============================================================================ threads
# (label, value, expect, the class of the error where it must raise)
THREAD_VALUES = [("10**6", 10**6, "either", None), ("2**40", 2**40, "either", None),
                 ("2**63", 2**63, "either", None), ("0", 0, "raise", ValueError),
                 ("-1", -1, "ok", None), ("-10**6", -10**6, "either", None),
                 ("1.5", 1.5, "raise", TypeError), ("'2'", "2", "raise", TypeError),
                 ("None", None, "ok", None), ("True", True, "raise", TypeError),
                 ("numpy.int64(2)", "np2", "ok", None), ("7", 7, "ok", None)]


def _thread_value(v):
    return np.int64(2) if isinstance(v, str) and v == "np2" else v


def gen_threads():
    out = []
    for name in THREADED:
        for label, v, expect, error in THREAD_VALUES:
            def run(ctx, name=name, v=v):
                return outputs(name, fit(name, make(name, num_threads=_thread_value(v))))
            out.append(Case(name, "fit", "threads", f"num_threads={label}", expect, run,
                            ("num_threads",),
                            oracle_finite(ref=lambda name=name: ref_outputs(name), rtol=1e-9),
                            _est_needs(name), cost=3.0, error=error))
    funcs = [
        ("kernels.jensen_tsallis_kernel", "countgrid.kernels.jensen_tsallis_kernel",
         lambda nt: _k("jensen_tsallis_kernel")(D.A, D.B, q=1.5, num_threads=nt)),
        ("kernels.jensen_shannon_kernel", "countgrid.kernels.jensen_shannon_kernel",
         lambda nt: _k("jensen_shannon_kernel")(sp.csr_matrix(D.X), num_threads=nt)),
        ("embed_labels", "countgrid.embed_labels",
         lambda nt: cg.embed_labels(D.P, D.y, (4, 4), (2, 2), num_threads=nt)),
        ("select_n_components_bic", "countgrid.select_n_components_bic",
         lambda nt: cg.select_n_components_bic(D.Xs, [1, 2], n_iter=3, random_state=0,
                                               num_threads=nt)[1]),
    ]
    for entry, need, f in funcs:
        for label, v, expect, error in THREAD_VALUES:
            out.append(Case(entry, "", "threads", f"num_threads={label}", expect,
                            lambda ctx, f=f, v=v: f(_thread_value(v)), ("num_threads",),
                            oracle_finite(ref=lambda f=f: _cached(("threads", id(f)),
                                                                   lambda: f(1)), rtol=1e-9),
                            (need,), error=error))
    return out


# ============================================================================ mixed pairs
PAIRS = [("dense", "csr_matrix"), ("csr_matrix", "dense"), ("csr_matrix", "csc_matrix"),
         ("coo_matrix", "dense"), ("dense", "coo_array"), ("list", "csr_array"),
         ("csr-float32", "dense-float64"), ("dense-int64", "csr-float64"),
         ("bsr_matrix", "dia_matrix")]


def _conv(kind):
    if kind == "dense":
        return lambda M: np.asarray(M)
    if kind == "list":
        return lambda M: np.asarray(M).tolist()
    if kind.startswith("dense-"):
        return _astype(kind.split("-")[1])
    if kind.startswith("csr-"):
        return lambda M: sp.csr_matrix(np.asarray(M).astype(kind.split("-")[1]))
    return _fmt(kind)


def gen_mixed():
    out = []
    pair_funcs = [
        ("kernels.jensen_tsallis_kernel", "countgrid.kernels.jensen_tsallis_kernel",
         lambda a, b: _k("jensen_tsallis_kernel")(a, b, q=1.5, num_threads=1)),
        ("kernels.jensen_shannon_kernel", "countgrid.kernels.jensen_shannon_kernel",
         lambda a, b: _k("jensen_shannon_kernel")(a, b, num_threads=1)),
        ("metrics.cosine_similarity", "countgrid.metrics.cosine_similarity",
         lambda a, b: cg.metrics.cosine_similarity(a, b)),
        ("metrics.precision_recall_curve_retrieval",
         "countgrid.metrics.precision_recall_curve_retrieval",
         lambda a, b: cg.metrics.precision_recall_curve_retrieval(a, b, D.yq, D.y[5:30])),
    ]
    for entry, need, f in pair_funcs:
        B = (lambda: D.X[5:30]) if "precision" in entry else (lambda: D.B)
        pairs = PAIRS if "precision" not in entry else PAIRS[:4]
        for ka, kb in pairs:
            def run(ctx, f=f, ka=ka, kb=kb, B=B):
                return f(_conv(ka)(D.A), _conv(kb)(B()))
            rtol = 1e-4 if "float32" in ka + kb else 1e-9
            out.append(Case(entry, "", "mixed-pairs", f"{ka}+{kb}", "ok", run, ("A", "B"),
                            oracle_finite(ref=lambda f=f, B=B: f(D.A, B()), rtol=rtol),
                            (need,)))
    for name, (kind, _, methods) in EST.items():
        if kind == "histogram":
            continue
        for ka, kb in (("dense", "csr_matrix"), ("coo_matrix", "csc_array")):
            def run(ctx, name=name, ka=ka, kb=kb):
                est = fit(name, make(name), _conv(ka)(D.X))
                return outputs(name, est, _conv(kb)(D.Xq))
            out.append(Case(name, "fit+predict", "mixed-pairs", f"fit-{ka}+predict-{kb}", "ok",
                            run, ("X",),
                            oracle_finite(ref=lambda name=name: ref_outputs(name), rtol=1e-6),
                            _est_needs(name), cost=3.0))
    return out


# ============================================================================ labels
def _classifier_label_case(name, variant, expect, y, mapping, names=("y",)):
    """Fit with labels ``y()``; predictions must be ``mapping`` of the int predictions."""
    def run(ctx):
        est = fit(name, make(name), D.Xs, y())
        pred = est.predict(D.Xq)
        res = {"predict": pred}
        if hasattr(est, "predict_proba"):
            res["predict_proba"] = est.predict_proba(D.Xq)
        yq = mapping(D.yq) if mapping else None
        if yq is not None:
            res["score"] = est.score(D.Xq, yq)
        return res

    def oracle(res):
        p = nonfinite({k: v for k, v in res.items() if k != "predict"})
        if p:
            return p
        if "predict_proba" in res:
            P = np.asarray(res["predict_proba"])
            if P.shape[0] != 7 or not np.allclose(P.sum(axis=1), 1.0):
                return f"predict_proba has shape {P.shape} or rows that do not sum to 1"
        if mapping is None:
            return None
        ref = ref_outputs(name)["predict"]
        want = mapping(np.asarray(ref))
        p = close(np.asarray(res["predict"], dtype=object), np.asarray(want, dtype=object), 0,
                  what="predict")
        if p:
            return p
        want_score = float(np.mean(np.asarray(ref) == D.yq))
        if abs(res["score"] - want_score) > 1e-12:
            return f"score is {res['score']!r}, expected {want_score!r} (labels compared as " \
                   "the wrong type?)"
        return None

    return Case(name, "fit", "labels", variant, expect, run, names, oracle, _est_needs(name),
                cost=3.0)


def _label_variants():
    y = lambda: D.y  # noqa: E731
    names_ab = np.array(["neg", "pos"])
    return [
        ("object-ints", "ok", lambda: D.y.astype(object), lambda p: np.asarray(p).astype(object)),
        ("str", "ok", lambda: names_ab[D.y], lambda p: names_ab[np.asarray(p).astype(int)]),
        ("object-str", "ok", lambda: names_ab.astype(object)[D.y],
         lambda p: names_ab.astype(object)[np.asarray(p).astype(int)]),
        ("float", "ok", lambda: D.y.astype(float), lambda p: np.asarray(p).astype(float)),
        ("bool", "ok", lambda: D.y.astype(bool), lambda p: np.asarray(p).astype(bool)),
        ("negative-ints", "ok", lambda: np.where(D.y, 7, -3),
         lambda p: np.where(np.asarray(p).astype(int), 7, -3)),
        ("huge-ints", "ok", lambda: np.where(D.y, 2**62, -2**62),
         lambda p: np.where(np.asarray(p).astype(int), 2**62, -2**62)),
        ("list", "ok", lambda: D.y.tolist(), lambda p: np.asarray(p)),
        ("column-vector", "either", lambda: D.y[:, None], lambda p: np.asarray(p)),
        ("mixed-types", "either",
         lambda: np.array([0 if v == 0 else "b" for v in D.y], dtype=object), None),
        ("one-class", "either", lambda: np.zeros(40, dtype=int), None),
        ("three-classes-one-sample", "either", lambda: np.r_[D.y[:-1], 2], None),
        ("None", "raise", lambda: None, None),
        ("too-short", "raise", lambda: D.y[:-1], None),
        ("two-columns", "raise", lambda: np.c_[D.y, D.y], None),
        ("NaN", "raise", lambda: np.r_[D.y[:-1].astype(float), np.nan], None),
        ("string-scalar", "raise", lambda: "abc", None),
        ("sparse", "either", lambda: sp.csr_matrix(D.y[:, None]), lambda p: np.asarray(p)),
    ]


def gen_labels():
    out = []
    for name in CLASSIFIERS:
        for variant, expect, y, mapping in _label_variants():
            names = ("y", "X") if variant == "too-short" else ("y",)
            out.append(_classifier_label_case(name, variant, expect, y, mapping, names))
    for name in SUPERVISED:
        if name in CLASSIFIERS:
            continue
        for variant, expect, y, mapping in _label_variants():
            def run(ctx, name=name, y=y):
                return outputs(name, fit(name, make(name), D.Xs, y()))
            cmp = expect == "ok" or variant == "column-vector"
            out.append(Case(name, "fit", "labels", variant, expect, run,
                            ("y", "X") if variant == "too-short" else ("y",),
                            oracle_finite(ref=(lambda name=name: ref_outputs(name)) if cmp
                                          else None), _est_needs(name), cost=3.0))
    # the regressor: real targets
    reg = [("object-floats", "ok", lambda: D.y_real.astype(object), True),
           ("list", "ok", lambda: D.y_real.tolist(), True),
           ("float32", "ok", lambda: D.y_real.astype(np.float32), True),
           ("ints", "either", lambda: D.y * 2, False),
           ("bool", "either", lambda: D.y.astype(bool), False),
           ("numeric-strings", "raise", lambda: D.y_real.astype(str), False),
           ("NaN", "raise", lambda: np.r_[D.y_real[:-1], np.nan], False),
           ("inf", "raise", lambda: np.r_[D.y_real[:-1], np.inf], False),
           ("None", "raise", lambda: None, False),
           ("too-short", "raise", lambda: D.y_real[:-1], False),
           ("column-vector", "either", lambda: D.y_real[:, None], True),
           ("two-columns", "either", lambda: np.c_[D.y_real, D.y_real], False),
           ("complex", "raise", lambda: D.y_real.astype(complex), False),
           ("constant", "either", lambda: np.full(40, 2.5), False)]
    for variant, expect, y, cmp in reg:
        def run(ctx, y=y):
            return outputs("CountingGridRegressor",
                           fit("CountingGridRegressor", make("CountingGridRegressor"), D.Xs, y()))
        out.append(Case("CountingGridRegressor", "fit", "labels", variant, expect, run,
                        ("y", "X") if variant == "too-short" else ("y",),
                        oracle_finite(ref=(lambda: ref_outputs("CountingGridRegressor"))
                                      if cmp else None),
                        _est_needs("CountingGridRegressor"), cost=3.0))
    # embed_labels
    el = ("countgrid.embed_labels",)
    ab = np.array(["neg", "pos"])

    def embed(y, **kw):
        return lambda ctx: cg.embed_labels(D.P, y() if callable(y) else y, (4, 4), (2, 2),
                                           num_threads=1, **kw)

    ref = lambda: _cached("embed_ref", lambda: cg.embed_labels(D.P, D.y, (4, 4), (2, 2),  # noqa
                                                               num_threads=1))
    for variant, expect, f, oracle, names in [
            ("object-ints", "ok", embed(lambda: D.y.astype(object)), oracle_finite(ref=ref),
             ("y",)),
            ("str", "ok", embed(lambda: ab[D.y]), oracle_finite(ref=ref), ("y",)),
            ("None", "raise", embed(None), None, ("y",)),
            ("too-short", "raise", embed(lambda: D.y[:-1]), None, ("y", "posteriors")),
            ("two-columns-discrete", "raise", embed(lambda: np.c_[D.y, D.y]), None, ("y",)),
            ("classes-missing-a-label", "raise", embed(lambda: D.y, classes=[0]), None,
             ("y", "classes")),
            ("classes-duplicated", "raise", embed(lambda: D.y, classes=[0, 0, 1]), None,
             ("classes",)),
            ("continuous-strings", "raise", embed(lambda: ab[D.y], kind="continuous"), None,
             ("y",)),
            ("continuous-NaN", "raise", embed(lambda: np.r_[D.y_real[:-1], np.nan],
                                               kind="continuous"), None, ("y",)),
            ("continuous-1e308", "either", embed(lambda: D.y * 1e308, kind="continuous"),
             oracle_finite(), ("y",)),
            ("continuous-mixed-1e308", "either",
             embed(lambda: np.where(D.y, 1e308, -1e308), kind="continuous"), oracle_finite(),
             ("y",)),
            ("one-class", "either", embed(lambda: np.zeros(40, int)), oracle_finite(), ("y",)),
            ("mixed-types", "either",
             embed(lambda: np.array([0 if v == 0 else "b" for v in D.y], dtype=object)),
             oracle_finite(), ("y",))]:
        out.append(Case("embed_labels", "", "labels", variant, expect, f, names, oracle, el))
    # retrieval labels
    prc = ("countgrid.metrics.precision_recall_curve_retrieval",)

    def curve(yq, yc):
        return lambda ctx: cg.metrics.precision_recall_curve_retrieval(D.Xq, D.X, yq(), yc())

    pref = lambda: _cached("prc_ref", lambda: cg.metrics.precision_recall_curve_retrieval(  # noqa
        D.Xq, D.X, D.yq, D.y))
    for variant, expect, yq, yc, names, oracle in [
            ("object-ints", "ok", lambda: D.yq.astype(object), lambda: D.y.astype(object),
             ("query_labels",), oracle_finite(ref=pref)),
            ("str", "ok", lambda: ab[D.yq], lambda: ab[D.y], ("query_labels",),
             oracle_finite(ref=pref)),
            ("query-None", "raise", lambda: None, lambda: D.y, ("query_labels",), None),
            ("corpus-too-short", "raise", lambda: D.yq, lambda: D.y[:-1], ("corpus_labels",),
             None),
            ("query-two-columns", "raise", lambda: np.c_[D.yq, D.yq], lambda: D.y,
             ("query_labels",), None),
            ("no-relevant-document", "raise", lambda: D.yq + 5, lambda: D.y,
             ("query_labels", "corpus_labels"), None),
            ("mixed-types", "either", lambda: D.yq.astype(object),
             lambda: np.array([0 if v == 0 else "b" for v in D.y], dtype=object),
             ("query_labels", "corpus_labels"), oracle_finite()),
            ("NaN-labels", "either", lambda: D.yq.astype(float),
             lambda: np.r_[D.y[:-1].astype(float), np.nan], ("corpus_labels",),
             oracle_finite())]:
        out.append(Case("metrics.precision_recall_curve_retrieval", "", "labels", variant,
                        expect, curve(yq, yc), names, oracle, prc))
    # labels that cannot be compared, a column vector of query labels (a classifier ravels
    # it, a retrieval curve does not)
    for variant, yq, yc, error, match in [
            ("None-and-str", lambda: np.array([None] * 7, dtype=object),
             lambda: np.array(["a"] * 40, dtype=object), TypeError, "comparable labels"),
            ("query-column-vector", lambda: D.yq[:, None], lambda: D.y, ValueError,
             "query_labels")]:
        out.append(Case("metrics.precision_recall_curve_retrieval", "", "labels", variant,
                        "raise", curve(yq, yc), ("query_labels", "corpus_labels"), None, prc,
                        error=error, match=match))
    # cli.stratified_split
    ss = ("countgrid.cli.stratified_split",)

    def split_oracle(value):
        train, test = value
        if np.intersect1d(train, test).size or train.size + test.size != 40:
            return "train and test overlap or miss samples"
        return None

    for variant, expect, f, names in [
            ("object-ints", "ok", lambda: D.y.astype(object), ("y",)),
            ("str", "ok", lambda: ab[D.y], ("y",)),
            ("mixed-types", "either",
             lambda: np.array([0 if v == 0 else "b" for v in D.y], dtype=object), ("y",))]:
        out.append(Case("cli.stratified_split", "", "labels", variant, expect,
                        lambda ctx, f=f: cg.cli.stratified_split(f(), 0.2, 0), names,
                        split_oracle, ss))
    for variant, y in [("empty", lambda: np.array([], dtype=int)),
                       ("two-columns", lambda: np.c_[D.y, D.y]), ("None", lambda: None)]:
        out.append(Case("cli.stratified_split", "", "labels", variant, "raise",
                        lambda ctx, y=y: cg.cli.stratified_split(y(), 0.2, 0), ("y",), None, ss))
    return out


# ============================================================================ parameters
class V:
    """A parameter value built when the case runs (fresh random states etc.)."""

    def __init__(self, make_value, label):
        self.make_value, self.label = make_value, label

    def get(self):
        return self.make_value()


def _val(v):
    return v.get() if isinstance(v, V) else v


_GRID_P = {"extent": ("grid", (5, 5)), "window": ("window", (3, 3)), "n_iter": (("int", 1), 4),
           "tol": (("float", 0, None), 1e-3), "pseudocount": (("auto", 0, None), 0.5),
           "posterior_floor": (("auto", 0, 1), 0.01),
           "window_schedule": ("schedule", [((3, 3), 1)]), "learn_prior": ("bool", True),
           "min_iter": (("int", 0), 1), "dtype": ("dtype", np.float32),
           "random_state": ("rs", 1), "verbose": ("verbose", 1)}
_EMB_P = {"mode": (("opt", "per_class", "whole_data"), "whole_data"),
          "n_components": (("size", 1), 3), "n_iter": (("int", 1), 4),
          "tol": (("float", 0, None), 1e-3), "random_state": ("rs", 1)}
_CGE_P = {"extent": ("grid", (4, 4)), "window": ("window", (3, 3)),
          "mode": (("opt", "per_class", "whole_data"), "whole_data"),
          "n_iter": (("int", 1), 4), "posterior_floor": (("auto", 0, 1), 0.01),
          "random_state": ("rs", 1)}
_REDUCE = (("opt", "none", "words", "topics"), "words")
PARAMS = {
    "CountingGrid": dict(_GRID_P, estep=(("opt", "exact", "coarse-to-fine"),
                                         "coarse-to-fine"),
                         subsample=("subsample", 3), accelerate=("bool", True)),
    "CountingGridClassifier": _GRID_P, "CountingGridRegressor": _GRID_P,
    "GenerativeCountingGridClassifier": dict(_GRID_P, max_features=(("optint", 1), 3)),
    "LayeredCountingGrid": dict({k: v for k, v in _GRID_P.items() if k != "learn_prior"},
                                n_layers=(("int", 1), 3),
                                layer_pseudocount=(("float", 0, None), 0.5)),
    "TimeSlicedCountingGrid": dict({k: v for k, v in _GRID_P.items() if k != "learn_prior"},
                                   period=(("opt", "auto", "day", "week", "month", "year"),
                                           "month"),
                                   span=(("int", 1), 2),
                                   smoothness=(("float", 0, None), 0.5)),
    "PLSA": {"n_components": (("size", 1), 3), "tempered": ("bool", True),
             "beta_min": (("float", 0, 1), 0.6), "beta_step": (("float", 0, 1), 0.8),
             "holdout": (("float", 0, 1), 0.2), "n_iter": (("int", 1), 4),
             "tol": (("float", 0, None), 1e-3), "init": (("opt", "docs", "random"), "random"),
             "smoothing": (("float", 0, None), 1e-3), "fold_in_iter": (("int", 0), 3),
             "fold_in_tol": (("float", 0, None), 1e-3), "dtype": ("dtype", np.float32),
             "random_state": ("rs", 1), "verbose": ("verbose", 1)},
    "ZIPGTM": {"grid_shape": ("grid", (4, 4)), "n_basis": (("size", 1), 5),
               "basis": (("opt", "sinh", "rbf"), "rbf"), "latent": (("opt", "grid", "random"),
                                                                    "random"),
               "zero_inflation": ("bool", False), "alpha": (("float", 0, None), 0.1),
               "distribution": (("opt", "poisson", "negative_binomial"), "negative_binomial"),
               "n_iter": (("int", 1), 4), "tol": (("float", 0, None), 1e-3),
               "n_irls": (("int", 1), 3), "init": (("opt", "pca", "random"), "random"),
               "random_state": ("rs", 1), "verbose": ("verbose", 1)},
    "RAP": {"n_components": (("size", 1), 4), "n_trials": (("int", 1), 2),
            "learning_rate": (("float", 0, None), 1e-2), "momentum": (("float", 0, 1), 0.5),
            "weight_decay": (("float", 0, None), 1e-3), "batch_size": (("int", 1), 10),
            "n_epochs": (("int", 1), 2), "method": (("opt", "cd", "mean_field"), "mean_field"),
            "cd_steps": (("int", 1), 2), "dtype": ("dtype", np.float32),
            "random_state": ("rs", 1), "verbose": ("verbose", 1)},
    "LSI": {"n_components": (("size", 1), 2), "random_state": ("rs", 1)},
    "MixtureOfTopics": _EMB_P,
    "FisherScore": dict(_EMB_P, reduce=_REDUCE, normalize_length=("bool", True),
                        include_topic_prior=("bool", True)),
    "TOPEmbedding": dict(_EMB_P, reduce=(_REDUCE[0], "none"),
                         positivize=(("opt", "shift", "split"), "split")),
    "LLREmbedding": dict(_EMB_P, reduce=(_REDUCE[0], "none"),
                         positivize=(("opt", "shift", "split"), "split")),
    "FreeEnergyScoreSpace": dict(_EMB_P, reduce=_REDUCE),
    "PosteriorDivergence": _EMB_P,
    "CountingGridPosterior": _CGE_P,
    "CountingGridFESS": dict(_CGE_P, reduce=(("opt", "positions", "features"), "features")),
    "HistogramGMM": {"n_components": (("size", 1), 3),
                     "domain": (("opt", "euclidean", "symmetric", "circular"), "circular"),
                     "period": (("float", 0, None), 3.0), "n_iter": (("int", 1), 4),
                     "tol": (("float", 0, None), 1e-3), "reg_covar": (("float", 0, None), 1e-3),
                     "random_state": ("rs", 1)},
    "ITKernelClassifier": {"embedding": ("embedding", V(lambda: cg.MixtureOfTopics(**_PLSA),
                                                        "MixtureOfTopics")),
                           "kernel": (("opt", "linear", "js", "jt"), "jt"),
                           "q": (("float", 0, 2), 1.2),
                           "weighted": (("opt", "A", "B"), "A"),
                           "exponentiated": ("bool", True), "t": (("float", 0, None), 2.0),
                           "combine": (("opt", "sum", "concat"), "concat"),
                           "block_weights": ("block_weights", None),
                           "classifier": (("opt", "svm", "knn"), "svm"),
                           "C": (("float", 0, None), 2.0), "n_neighbors": (("int", 1), 3)},
}
for _name in THREADED:
    PARAMS[_name] = dict(PARAMS[_name], num_threads=("threads", 2))


def bad_values(kind, base):
    """(label, value, expect, extra names) of the bad (and tricky valid) values of a kind."""
    k = kind[0] if isinstance(kind, tuple) else kind
    out = []
    if k in ("int", "size", "optint"):             # optint: an int, or None
        lo = kind[1]
        out += [("2.7", 2.7, "raise"), (str(lo - 1), lo - 1, "raise"), ("'3'", "3", "raise"),
                ("True", True, "raise"), ("None", None, "ok" if k == "optint" else "raise"),
                ("numpy.int64(2)", np.int64(max(lo, 2)), "ok")]
        if k == "size":
            out.append(("10**12", 10**12, "raise"))
    elif k in ("float", "auto"):
        lo, hi = kind[1], kind[2]
        out += [("nan", np.nan, "raise"), ("inf", np.inf, "either"), ("'0.5'", "0.5", "raise"),
                ("None", None, "raise")]
        if lo is not None:
            out.append((str(lo - 1.0), lo - 1.0, "raise"))
        if hi is not None:
            out.append((str(hi + 1.0), hi + 1.0, "raise"))
        good = base if isinstance(base, float) else (lo + hi) / 2 if hi is not None else lo + .25
        out.append((f"numpy.float32({good:g})", np.float32(good), "ok"))
        if k == "auto":
            out.append(("'nope'", "nope", "raise"))
    elif k == "bool":
        out += [("'no'", "no", "raise"), ("'yes'", "yes", "raise"), ("2", 2, "raise"),
                ("None", None, "raise"), ("numpy.bool_(True)", np.bool_(True), "ok")]
    elif k == "opt":
        out += [("'nope'", "nope", "raise"), ("None", None, "raise"), ("1", 1, "raise"),
                (repr(kind[1].upper()), kind[1].upper(), "either")]
    elif k == "grid":
        out += [("(2**40,2**40)", (2**40, 2**40), "raise"), ("(0,0)", (0, 0), "raise"),
                ("(-3,3)", (-3, 3), "raise"), ("(3.5,3)", (3.5, 3), "raise"),
                ("'33'", "33", "raise"), ("(10**5,10**5)", (10**5, 10**5), "raise"),
                ("list", list(base), "ok"),
                ("numpy-ints", tuple(np.int64(v) for v in base), "ok")]
    elif k == "window":
        out += [("(9,9)-larger-than-extent", (9, 9), "raise", ("extent",)),
                ("(0,0)", (0, 0), "raise"), ("(2.5,2)", (2.5, 2), "raise"),
                ("(-2,2)", (-2, 2), "raise"), ("(2,2,2)", (2, 2, 2), "raise", ("extent",))]
    elif k == "schedule":
        out += [("5", 5, "raise"), ("zero-window", [((0, 0), 1)], "raise"),
                ("negative-iterations", [((3, 3), -1)], "raise"),
                ("float-iterations", [((3, 3), 2.5)], "raise"),
                ("window-larger-than-extent", [((9, 9), 1)], "raise", ("extent",))]
    elif k == "rs":
        out += [("-1", -1, "raise"), ("1.5", 1.5, "raise"), ("'seed'", "seed", "raise"),
                ("2**70", 2**70, "either"),
                ("RandomState(0)", V(lambda: np.random.RandomState(0), ""), "either"),
                ("default_rng(0)", V(lambda: np.random.default_rng(0), ""), "ok")]
    elif k == "dtype":
        out += [("int32", np.int32, "raise"), ("'float32'", "float32", "either"),
                ("float16", np.float16, "either"), ("complex128", np.complex128, "raise"),
                ("'nope'", "nope", "raise")]
    elif k == "verbose":
        out += [("'no'", "no", "raise"), ("-1", -1, "raise")]
    elif k == "embedding":
        out += [("'pca'", "pca", "raise"), ("object()", V(object, ""), "raise"),
                ("the-class-PLSA", V(lambda: cg.PLSA, ""), "raise")]
    elif k == "block_weights":
        out += [("[nan]", [np.nan], "raise"), ("[-1.0]", [-1.0], "raise"),
                ("'abc'", "abc", "raise")]
    elif k == "subsample":                      # None, "auto", an int >= 1 or a fraction
        out += [("0", 0, "raise"), ("1.0", 1.0, "raise"), ("-0.5", -0.5, "raise"),
                ("nan", np.nan, "raise"), ("'nope'", "nope", "raise"), ("True", True, "raise"),
                ("None", None, "ok"), ("'auto'", "auto", "ok"), ("0.5", 0.5, "ok"),
                ("numpy.int64(2)", np.int64(2), "ok"), ("numpy.float32(0.5)", np.float32(0.5),
                                                        "ok")]
    elif k == "threads":
        pass                                    # the threads class
    return [o if len(o) == 4 else o + ((),) for o in out]


# parameters that also accept None, or ints among their options
_NONE_OK = {("ITKernelClassifier", "weighted"), ("TOPEmbedding", "positivize"),
            ("LLREmbedding", "positivize")}


def _fix_values(name, param, values):
    out = []
    for label, value, expect, extra in values:
        if (name, param) in _NONE_OK and value is None:
            continue
        if param == "mode" and label == "1":
            label, value = "3", 3
        if (name, param) == ("ZIPGTM", "n_basis") and label == "numpy.int64(2)":
            label, value = "numpy.int64(4)", np.int64(4)     # a valid one is a square
        out.append((label, value, expect, extra))
    return out


def gen_params():
    out = []
    # the values issue 13 names are always there; of the others, a share that rotates
    core = {"2.7", "10**12", "'no'", "nan", "(2**40,2**40)", "(10**5,10**5)", "'nope'",
            "(9,9)-larger-than-extent", "-1", "window-larger-than-extent"}
    full = {"CountingGrid", "PLSA", "ZIPGTM", "RAP", "LSI", "HistogramGMM", "ITKernelClassifier"}
    for i, (name, table) in enumerate(PARAMS.items()):
        for j, (param, (kind, alt)) in enumerate(table.items()):
            base = EST[name][1].get(param, alt)
            values = _fix_values(name, param, bad_values(kind, base))
            keep = [v for v in values if v[0] in core]
            rest = [v for v in values if v[0] not in core]
            values = keep + rotate(rest, 3 if name in full else 1, 3 * i + j)
            for label, value, expect, extra in values:
                def run(ctx, name=name, param=param, value=value):
                    return outputs(name, fit(name, make(name, **{param: _val(value)})))
                out.append(Case(name, "fit", "params", f"{param}={label}", expect, run,
                                (param,) + tuple(extra), oracle_finite(), _est_needs(name),
                                cost=3.0))
    return out


def gen_set_params():
    """set_params on a fitted model, then predict: an error naming the parameter (or asking
    for a refit), or exactly the predictions of before."""
    out = []
    for name, table in PARAMS.items():
        for param, (kind, alt) in table.items():
            if param == "block_weights":
                continue

            def run(ctx, name=name, param=param, alt=alt):
                est = model(name)
                est.set_params(**{param: _val(alt)})
                return outputs(name, est)
            def oracle(value, name=name, param=param, alt=alt):
                p = nonfinite(value)
                if p:
                    return p
                if compare(value, ref_outputs(name), 1e-9) is None:
                    return None                 # ignored until the next fit
                try:
                    refit = outputs(name, fit(name, make(name, **{param: _val(alt)})))
                except Exception as exc:  # noqa: BLE001
                    return f"the outputs changed, and a refit with {param}={alt!r} raises " \
                           f"{type(exc).__name__}: {exc}"
                p = compare(value, refit, 1e-9)
                if p is None:
                    return None                 # a predict-time parameter, applied consistently
                return "the outputs match neither the fitted model nor a refit: " + p
            out.append(Case(name, "set_params+predict", "set-params", f"{param}",
                            "either", run, (param, "fit", "refit"), oracle,
                            _est_needs(name)))
    return out


# ============================================================================ model files
def _read_model(path):
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    header = json.loads(str(arrays.pop("__countgrid__")))
    return header, arrays


def _write_model(path, header, arrays):
    with open(path, "wb") as fh:
        np.savez_compressed(fh, __countgrid__=np.array(json.dumps(header)), **arrays)


def _walk_arrays(meta, prefix=""):
    """(key in the file, attribute name, "array"/"scalar", owning meta) of every array."""
    out = [(prefix + n, n, kind, meta) for n, kind in meta["arrays"].items()]
    for name, child in meta["children"].items():
        if isinstance(child, list):
            for i, c in enumerate(child):
                out += _walk_arrays(c, f"{prefix}{name}.{i}/")
        else:
            out += _walk_arrays(child, f"{prefix}{name}/")
    return out


def _float_arrays(header, arrays):
    return [w for w in _walk_arrays(header["model"])
            if w[2] == "array" and arrays[w[0]].dtype.kind == "f" and arrays[w[0]].ndim >= 1]


def _edit(fn):
    def mutate(path, ctx):
        header, arrays = _read_model(path)
        fn(header, arrays, ctx)
        _write_model(path, header, arrays)
    return mutate


def _bytes(fn):
    def mutate(path, ctx):
        with open(path, "rb") as fh:
            data = bytearray(fh.read())
        with open(path, "wb") as fh:
            fh.write(bytes(fn(data, path)))
    return mutate


def _flip_at(frac):
    def fn(data, path):
        i = min(len(data) - 1, int(len(data) * frac))
        data[i] ^= 0xFF
        return data
    return fn


def _flip_header(data, path):
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        info = z.getinfo("__countgrid__.npy")
    off = info.header_offset
    n_name = int.from_bytes(data[off + 26:off + 28], "little")
    n_extra = int.from_bytes(data[off + 28:off + 30], "little")
    start = off + 30 + n_name + n_extra
    data[start + min(info.compress_size - 1, 40)] ^= 0x55
    return data


def _extra_attr(attr):
    def fn(header, arrays, ctx):
        header["model"]["arrays"][attr] = "array"
        arrays[attr] = np.zeros(3)
    return fn


def _change_array(index, how):
    def fn(header, arrays, ctx):
        cands = _float_arrays(header, arrays)
        key, attr, _, _ = cands[index % len(cands)]
        ctx.extra_names += [attr, key]
        a = arrays[key]
        if how == "grow":
            arrays[key] = np.concatenate([a, a[:1]], axis=0)
        elif how == "dtype":
            arrays[key] = a.astype(np.complex128)
        elif how == "transpose":
            arrays[key] = a.T.copy() if a.ndim == 2 and a.shape[0] != a.shape[1] else a.ravel()[:-1]
        elif how == "nan":
            arrays[key] = np.full_like(a, np.nan)
    return fn


def _scalar(value):
    def fn(header, arrays, ctx):
        meta = header["model"]
        attr = "n_features_in_" if "n_features_in_" in meta["arrays"] else "n_dims_"
        ctx.extra_names += [attr]
        arrays[attr] = np.asarray(value)
    return fn


def _header(fn_meta, names=()):
    def fn(header, arrays, ctx):
        ctx.extra_names += list(names)
        fn_meta(header)
    return fn


def _other_class(name):
    i = SAVEABLE.index(name)
    return SAVEABLE[(i + 5) % len(SAVEABLE)]


def _first_param(name):
    return {"CountingGrid": "extent", "CountingGridClassifier": "extent",
            "CountingGridRegressor": "extent", "GenerativeCountingGridClassifier": "extent",
            "ZIPGTM": "grid_shape", "CountingGridPosterior": "extent",
            "CountingGridFESS": "extent"}.get(name, "n_components")


def _check_loaded(name, est):
    """Attributes a loaded estimator must not have: shadowed methods, undeclared state."""
    import inspect

    cls = type(est)
    params = set(inspect.signature(cls.__init__).parameters) - {"self"}
    declared = set(getattr(cls, "_fitted_arrays", ())) | set(getattr(cls, "_fitted_estimators", ()))
    bad = []
    for k in vars(est):
        if k in params or k in declared:
            continue
        if callable(getattr(cls, k, None)) or k.startswith("__"):
            bad.append(f"{k} (shadows a method)")
        elif not k.startswith("_"):
            bad.append(f"{k} (not a declared attribute)")
    return bad


def _file_case(name, variant, mutate, expect, names=(), loader=None, needs=()):
    def run(ctx):
        est = model(name)
        path = ctx.path("model.npz")
        est.save(path)
        mutate(path, ctx)
        loaded = loader(name, path) if loader else cg.load(path)
        return {"outputs": outputs(name, loaded), "bad": _check_loaded(name, loaded)}

    def oracle(value):
        if value["bad"]:
            return "the loaded estimator has " + ", ".join(value["bad"])
        p = nonfinite(value["outputs"])
        return p or compare(value["outputs"], ref_outputs(name), 1e-12)

    return Case(name, "load", "model-file", variant, expect, run, ("model.npz",) + tuple(names),
                oracle, _est_needs(name) + tuple(needs), files=True, recycle=True)


def gen_model_files():
    out = []
    for name in SAVEABLE:
        method = EST[name][2][0]
        other = _other_class(name)
        v = [
            ("truncated-half", _bytes(lambda d, p: d[:len(d) // 2]), "raise"),
            ("truncated-end", _bytes(lambda d, p: d[:-22]), "raise"),
            ("empty", _bytes(lambda d, p: b""), "raise"),
            ("flip-byte-25%", _bytes(_flip_at(0.25)), "either"),
            ("flip-byte-75%", _bytes(_flip_at(0.75)), "either"),
            ("flip-header-byte", _bytes(_flip_header), "either"),
            (f"extra-array-named-{method}", _edit(_extra_attr(method)), "either", (method,)),
            ("extra-array-named-get_params", _edit(_extra_attr("get_params")), "either",
             ("get_params",)),
            ("extra-array-named-__dict__", _edit(_extra_attr("__dict__")), "either",
             ("__dict__",)),
            ("extra-array-undeclared", _edit(_extra_attr("evil_")), "either", ("evil_",)),
            ("class-swapped", _edit(_header(lambda h, o=other: h["model"].__setitem__(
                "class", o))), "raise", (name, other)),
            ("class-unknown", _edit(_header(lambda h: h["model"].__setitem__(
                "class", "os.system"))), "raise", ("os.system",)),
            ("format-version-999", _edit(_header(lambda h: h.__setitem__("format_version",
                                                                          999))), "raise"),
            ("unknown-parameter", _edit(_header(lambda h: h["model"]["params"].__setitem__(
                "evil", 1))), "raise", ("evil",)),
            ("bad-parameter-value", _edit(_header(
                lambda h, p=_first_param(name): h["model"]["params"].__setitem__(p, -5))),
             "either", (_first_param(name),)),
            # a feature count that contradicts the arrays, or is no count: refused at load
            ("n_features-10**9", _edit(_scalar(10**9)), "raise"),
            ("n_features--1", _edit(_scalar(-1)), "raise"),
            ("array0-nan", _edit(_change_array(0, "nan")), "either"),
        ]
        for k, how in ((0, "grow"), (0, "dtype"), (0, "transpose"), (1, "grow")):
            v.append((f"array{k}-{how}", _edit(_change_array(k, how)), "either"))
        for item in v:
            variant, mutate, expect = item[:3]
            out.append(_file_case(name, variant, mutate, expect, item[3] if len(item) > 3
                                  else ()))
            if variant.startswith("n_features"):
                out[-1].error = ValueError
        out.append(_file_case(name, f"{other}.load", lambda p, c: None, "raise",
                              (name, other),
                              loader=lambda n, p, o=other: getattr(cg, o).load(p),
                              needs=(f"countgrid.{other}.load",)))
    # files that are no model at all, through countgrid.load and a class's load
    for loader_name, loader, needs in (("load", lambda p: cg.load(p), ("countgrid.load",)),
                                       ("CountingGrid.load", lambda p: cg.CountingGrid.load(p),
                                        ("countgrid.CountingGrid.load",))):
        def files():
            return [
                ("empty-file", lambda ctx: _write(ctx.path("m.npz"), b""), "m.npz"),
                ("text-file", lambda ctx: _write(ctx.path("m.npz"), b"not a model\n"), "m.npz"),
                ("directory", lambda ctx: ctx.tmp, os.path.basename),
                ("missing-file", lambda ctx: ctx.path("nope.npz"), "nope.npz"),
                ("npz-without-header", lambda ctx: _npz(ctx.path("m.npz"), a=np.ones(3)),
                 "m.npz"),
                ("npz-with-object-array", lambda ctx: _npz(ctx.path("m.npz"), allow=True,
                                                           __countgrid__=np.array([{}], object)),
                 "m.npz"),
                ("zip-of-text", lambda ctx: _zip_text(ctx.path("m.npz")), "m.npz"),
                ("header-not-json", lambda ctx: _npz(ctx.path("m.npz"),
                                                     __countgrid__=np.array("{nope")), "m.npz"),
                ("header-json-list", lambda ctx: _npz(ctx.path("m.npz"),
                                                      __countgrid__=np.array("[1, 2]")), "m.npz"),
                ("path-None", lambda ctx: None, "path"),
                ("path-int", lambda ctx: 12345, "path"),
            ]
        for variant, make_path, nm in files():
            def run(ctx, make_path=make_path, nm=nm, loader=loader):
                p = make_path(ctx)
                if callable(nm):
                    ctx.extra_names.append(nm(p))
                return loader(p)
            out.append(Case(loader_name, "", "model-file", variant, "raise", run,
                            (nm,) if isinstance(nm, str) else ("path",), None, needs,
                            files=True))
    return out


def _write(path, data):
    with open(path, "wb") as fh:
        fh.write(data)
    return path


def _npz(path, allow=False, **arrays):
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)
    return path


def _zip_text(path):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("readme.txt", "hello")
    return path


# ============================================================================ numerical range
def _jt_reference(A, B, q, weighted):
    try:
        from _reference.itk import kernel_ref
    except ImportError:  # pragma: no cover - the tests folder is not on the path
        return None
    return kernel_ref(np.asarray(A, np.float64), np.asarray(B, np.float64), q, weighted)


def _expm1_log_q(x, q):
    x = np.asarray(x, dtype=np.float64)
    d = 1.0 - q
    if d == 0:
        return np.log(x)
    return np.expm1(d * np.log(x)) / d


def gen_numeric():
    out = []
    jt = ("countgrid.kernels.jensen_tsallis_kernel",)
    # float32 kernels with q near 1, against a float64 reference at the same q
    for delta in (1e-3, 1e-4, 1e-6, 1e-7):
        for sign in (-1, 1):
            q = 1.0 + sign * delta
            for fmt in ("dense", "csr"):
                for weighted in (None, "B"):
                    def run(ctx, q=q, fmt=fmt, weighted=weighted):
                        A = D.A.astype(np.float32)
                        B = D.B.astype(np.float32)
                        if fmt == "csr":
                            A, B = sp.csr_matrix(A), sp.csr_matrix(B)
                        return _k("jensen_tsallis_kernel")(A, B, q=q, weighted=weighted,
                                                           num_threads=1)

                    def oracle(K, q=q, weighted=weighted):
                        ref = _jt_reference(D.A, D.B, q, weighted)
                        if np.asarray(K).dtype != np.float32:
                            return f"a float32 input gave a {np.asarray(K).dtype} kernel"
                        return close(K, ref, 1e-4, 1e-6, "K")
                    out.append(Case("kernels.jensen_tsallis_kernel", "", "numeric-range",
                                    f"float32-{fmt}-q=1{sign * delta:+g}-weighted={weighted}",
                                    "ok", run, ("q",), oracle, jt))
    for q in (1 - 1e-9, 1 + 1e-9, 1 + 1e-12, 1 - 1e-15):
        def run(ctx, q=q):
            return _k("jensen_tsallis_kernel")(D.A, D.B, q=q, num_threads=1)
        out.append(Case("kernels.jensen_tsallis_kernel", "", "numeric-range",
                        f"float64-q=1{q - 1:+g}", "ok", run, ("q",),
                        lambda K, q=q: close(K, _jt_reference(D.A, D.B, 1.0, None), 1e-7),
                        jt))
    for label, scale, weighted in (("weighted-B-x1e300", 1e300, "B"),
                                   ("weighted-A-x1e300", 1e300, "A"),
                                   ("exponentiated-x1e-320", 1e-320, None)):
        def run(ctx, scale=scale, weighted=weighted):
            return _k("jensen_tsallis_kernel")(D.A * scale, D.B, q=1.5, weighted=weighted,
                                               exponentiated=weighted is None, num_threads=1)
        out.append(Case("kernels.jensen_tsallis_kernel", "", "numeric-range", label, "either",
                        run, ("A",), oracle_finite(), jt))
    # log_q near q = 1 against expm1(d ln x) / d
    lq = ("countgrid.kernels.log_q",)
    x = np.array([0.5, 2.0, 10.0, 1e-3])
    for d in (1e-7, -1e-7, 1e-10, -1e-10, 1e-15, 3e-9):
        q = 1.0 + d
        out.append(Case("kernels.log_q", "", "numeric-range", f"q=1{d:+g}", "ok",
                        lambda ctx, q=q: cg.kernels.log_q(x, q), ("q",),
                        lambda v, q=q: close(v, _expm1_log_q(x, q), 1e-7), lq))
    for label, xv, qv, expect, names, error, match in (
            ("x=-1", -1.0, 1.5, "raise", ("x",), ValueError, "non-negative"),
            ("x=-1,q=0.5", -1.0, 0.5, "raise", ("x",), ValueError, "non-negative"),
            ("x=NaN", np.nan, 1.5, "raise", ("x",), ValueError, "non-negative"),
            ("x=[1,NaN]", [1.0, np.nan], 0.5, "raise", ("x",), ValueError, "non-negative"),
            ("q=NaN", 2.0, np.nan, "raise", ("q",), ValueError, "q must be finite"),
            ("q=inf", 2.0, np.inf, "raise", ("q",), ValueError, "q must be finite"),
            ("q='1.5'", 2.0, "1.5", "raise", ("q",), TypeError, "q must be a real"),
            ("q='1'", 2.0, "1", "raise", ("q",), TypeError, "q must be a real"),
            ("q=None", 2.0, None, "raise", ("q",), TypeError, "q must be a real"),
            ("x='2'", "2", 1.5, "either", ("x",), None, None),
            ("x=0,q=0.5", 0.0, 0.5, "either", ("x",), None, None),
            ("x=1e308,q=-1", 1e308, -1.0, "either", ("x", "q"), None, None)):
        # beyond the float range (x=1e308, q=-1: 5e615) an infinity is the rounded value
        out.append(Case("kernels.log_q", "", "numeric-range", label, expect,
                        lambda ctx, xv=xv, qv=qv: cg.kernels.log_q(xv, qv), names,
                        lambda v: "NaN" if np.isnan(np.asarray(v, dtype=float)).any() else None,
                        lq, error=error, match=match))
    # ZIP-GTM on tiny latent grids
    for shape in ((1, 1), (1, 5), (2, 1)):
        out.append(Case("ZIPGTM", "fit", "numeric-range", f"grid_shape={shape}", "either",
                        lambda ctx, shape=shape: outputs("ZIPGTM", fit("ZIPGTM", make(
                            "ZIPGTM", grid_shape=shape))), ("grid_shape",), oracle_finite(),
                        _est_needs("ZIPGTM")))
    # regression targets at the end of the float range: predictions stay within the targets
    for label, y in (("y=1e308", lambda: D.y * 1e308 + 1.0),
                     ("y=+-1e308", lambda: np.where(D.y, 1e308, -1e308)),
                     ("y=+-1.7e308", lambda: np.where(D.y, 1.7e308, -1.7e308)),
                     ("y=1e-320", lambda: D.y * 1e-320)):
        def run(ctx, y=y):
            est = fit("CountingGridRegressor", make("CountingGridRegressor"), D.Xs, y())
            return est.predict(D.Xq)

        def oracle(pred, y=y):
            p = nonfinite(pred)
            if p:
                return p
            lo, hi = y().min(), y().max()
            if np.any(pred < lo - 1e-9 * abs(lo)) or np.any(pred > hi + 1e-9 * abs(hi)):
                return f"predictions leave the range of the targets [{lo:g}, {hi:g}]"
            return None
        out.append(Case("CountingGridRegressor", "fit", "numeric-range", label, "either", run,
                        ("y",), oracle, _est_needs("CountingGridRegressor")))
    # histogram mixtures: far and non-finite points, scaled weights
    gm = _est_needs("HistogramGMM")

    def proba_ok(P):
        p = nonfinite(P)
        if p:
            return p
        if not np.allclose(np.asarray(P).sum(axis=1), 1.0):
            return "predict_proba rows do not sum to 1"
        return None

    for label, pts in (("far-1e200", [[1e200, 1e200]]), ("far-mixed", [[-1e200, 0.0]]),
                       ("far-1e10", [[1e10, 0.0]]), ("far-1e154", [[1e154, -1e154]]),
                       ("subnormal", [[1e-320, -1e-320]])):
        out.append(Case("HistogramGMM", "predict_proba", "numeric-range", label, "ok",
                        lambda ctx, pts=pts: model("HistogramGMM").predict_proba(np.array(pts)),
                        ("points",), proba_ok, gm))
        out.append(Case("HistogramGMM", "score_samples", "numeric-range", label, "ok",
                        lambda ctx, pts=pts: model("HistogramGMM").score_samples(np.array(pts)),
                        ("points",), oracle_finite(allow_neg_inf=True), gm))
    for label, pts in (("NaN", [[np.nan, 0.0]]), ("inf", [[np.inf, 0.0]]),
                       ("-inf+inf", [[-np.inf, np.inf]]),
                       ("NaN-second", [[0.0, 1.0], [np.nan, 0.0]]),
                       ("inf-second", [[0.0, 1.0], [np.inf, 0.0]]),
                       ("-inf-second", [[0.0, 1.0], [-np.inf, 0.0]])):
        for method in ("predict_proba", "score_samples", "pdf", "predict"):
            out.append(Case("HistogramGMM", method, "numeric-range", label, "raise",
                            lambda ctx, pts=pts, method=method: getattr(
                                model("HistogramGMM"), method)(np.array(pts)),
                            ("points", "X"), None, gm, error=ValueError,
                            match="points contains NaN or infinity"))
    for label, scale, rtol in (("weights-x1e300", 1e300, 1e-9), ("weights-x1e-320", 1e-320, 1e-2),
                               ("weights-max-1e308", "max", 1e-9)):
        out.append(Case("HistogramGMM", "fit", "numeric-range", label, "ok",
                        lambda ctx, scale=scale: outputs("HistogramGMM", make(
                            "HistogramGMM").fit(D.W / D.W.max() * 1e308 if scale == "max"
                                                else D.W * scale, [D.centres, D.centres])),
                        ("weights",), oracle_finite(ref=lambda: ref_outputs("HistogramGMM"),
                                                    rtol=rtol), gm))
    for label, centres in (("centres-x1e200", lambda: [D.centres * 1e200] * 2),
                           ("centres-1e-320-apart", lambda: [D.centres * 1e-320] * 2)):
        def run(ctx, centres=centres):
            est = make("HistogramGMM").fit(D.W, centres())
            return outputs("HistogramGMM", est, centres()[0][:3, None].repeat(2, axis=1))
        out.append(Case("HistogramGMM", "fit", "numeric-range", label, "either", run,
                        ("bin_centers",), oracle_finite(allow_neg_inf=True), gm))
    # the kernel classifier's own paths (fit, predict, kernel_distances, and
    # decision_function of the SVM): NaN / inf / negative entries and corrupt sparse
    # matrices must not reach any kernel (the linear k-NN path accepted NaN)
    itk = _est_needs("ITKernelClassifier")

    def corrupt_index(M):
        S = sp.csr_matrix(np.asarray(M))
        S.indices[1] = S.shape[1] + 3
        return S

    nonfinite_x = "X contains NaN or infinity"
    for kernel, kw in (("linear", {}), ("js", {}), ("jt", {}), ("jt-q=0.7", dict(q=0.7)),
                       ("jt-q=1.5-weighted=B", dict(q=1.5, weighted="B"))):
        for clf in ("knn", "svm"):
            paths = [("fit", "NaN", _set(1, 1, np.nan), nonfinite_x),
                     ("fit", "inf", _set(1, 1, np.inf), nonfinite_x),
                     ("fit", "corrupt", corrupt_index, "X is a corrupt sparse matrix")]
            for method in ("predict", "kernel_distances") + (
                    ("decision_function",) if clf == "svm" else ()):
                paths += [(method, "inf", _set(1, 1, np.inf), nonfinite_x),
                          (method, "corrupt", corrupt_index, "X is a corrupt sparse matrix")]
            paths += [("predict", "NaN", _set(1, 1, np.nan), nonfinite_x),
                      ("predict", "negative", _set(1, 1, -1.0), "X must be non-negative")]
            for where, label, build, match in paths:
                def run(ctx, kernel=kernel, kw=kw, clf=clf, where=where, build=build):
                    est = cg.ITKernelClassifier(kernel=kernel.split("-")[0], classifier=clf,
                                                num_threads=1, **kw)
                    if where == "fit":
                        return est.fit(build(D.X), D.y).predict(D.Xq)
                    return getattr(est.fit(D.Xs, D.y), where)(build(D.Xq))
                # negative entries are fine for the linear kernel, not for the IT kernels
                linear_neg = kernel == "linear" and label == "negative"
                out.append(Case("ITKernelClassifier", where,
                                "corrupt-sparse" if label == "corrupt" else "values",
                                f"kernel={kernel}-classifier={clf}-{label}",
                                "either" if linear_neg else "raise", run, ("X",),
                                oracle_finite() if linear_neg else None, itk,
                                error=None if linear_neg else ValueError,
                                match=None if linear_neg else match))
    return out


def gen_histogram_inputs():
    """HistogramGMM takes a histogram (weights, bin_centers) and points, not counts."""
    out = []
    gm = _est_needs("HistogramGMM")

    def fit_case(klass, variant, expect, w, c, names):
        def run(ctx):
            est = make("HistogramGMM").fit(w(), c())
            dims = int(getattr(est, "n_dims_", 2))
            return outputs("HistogramGMM", est, np.zeros((3, dims)))
        out.append(Case("HistogramGMM", "fit", klass, variant, expect, run, names,
                        oracle_finite(), gm))

    W, C = (lambda: D.W), (lambda: [D.centres, D.centres])
    for klass, variant, expect, w, c, names in [
            ("values", "weights-NaN", "raise", lambda: _set(1, 1, np.nan)(D.W), C,
             ("weights",)),
            ("values", "weights-inf", "raise", lambda: _set(1, 1, np.inf)(D.W), C, ("weights",)),
            ("values", "weights-negative", "raise", lambda: _set(1, 1, -1.0)(D.W), C,
             ("weights",)),
            ("values", "weights-all-zero", "raise", lambda: np.zeros_like(D.W), C, ("weights",)),
            ("values", "centres-NaN", "raise", W, lambda: [np.r_[np.nan, D.centres[1:]],
                                                           D.centres], ("bin_centers",)),
            ("values", "centres-decreasing", "either", W, lambda: [D.centres[::-1], D.centres],
             ("bin_centers",)),
            ("values", "centres-repeated", "either", W, lambda: [np.zeros(12), D.centres],
             ("bin_centers",)),
            ("dtype", "weights-complex", "raise", lambda: D.W.astype(complex), C, ("weights",)),
            ("dtype", "weights-str", "raise", lambda: D.W.astype(int).astype(str), C,
             ("weights",)),
            ("dtype", "weights-int", "ok", lambda: D.W.astype(np.int64), C, ("weights",)),
            ("dtype", "weights-float32", "ok", lambda: D.W.astype(np.float32), C, ("weights",)),
            ("dtype", "weights-bool", "either", lambda: D.W > 0, C, ("weights",)),
            ("dtype", "centres-str", "raise", W, lambda: [D.centres.astype(str)] * 2,
             ("bin_centers",)),
            ("shape", "weights-1-D", "raise", lambda: D.W[0], C, ("weights", "bin_centers")),
            ("shape", "weights-empty", "raise", lambda: np.zeros((0, 12)), C,
             ("weights", "bin_centers")),
            ("shape", "centres-one-axis", "raise", W, lambda: [D.centres], ("bin_centers",)),
            ("shape", "centres-wrong-length", "raise", W, lambda: [D.centres[:-1], D.centres],
             ("bin_centers",)),
            ("shape", "centres-None", "raise", W, lambda: None, ("bin_centers",)),
            ("shape", "centres-grid-array", "ok", W, lambda: np.stack(
                np.meshgrid(D.centres, D.centres, indexing="ij"), axis=-1), ("bin_centers",)),
            ("shape", "weights-sparse", "either", lambda: sp.csr_matrix(D.W), C, ("weights",)),
            ("shape", "weights-list", "ok", lambda: D.W.tolist(), C, ("weights",)),
            ("shape", "weights-1-bin", "either", lambda: np.ones((1, 1)),
             lambda: [np.zeros(1), np.zeros(1)], ("weights",)),
            ("shape", "weights-3-D", "either", lambda: np.ones((3, 3, 3)),
             lambda: [np.arange(3.0)] * 3, ("weights",))]:
        fit_case(klass, variant, expect, w, c, names)

    def pts_case(klass, variant, expect, pts, rows, same=False):
        for method in ("predict_proba", "score_samples"):
            def oracle(value, method=method):
                p = oracle_finite(rows=rows)(value)
                want = getattr(model("HistogramGMM"), method)(D.points)
                if p or not same or np.array_equal(value, want):
                    return p
                return "the result differs from that of the float64 points"
            out.append(Case("HistogramGMM", method, klass, variant, expect,
                            lambda ctx, method=method: getattr(model("HistogramGMM"), method)(
                                pts()), ("points", "X"), oracle, gm))

    for klass, variant, expect, pts, rows in [
            ("shape", "points-1-D", "either", lambda: np.array([0.0, 1.0]), None),
            ("shape", "points-3-D", "either", lambda: D.points[None], None),
            ("shape", "points-wrong-dims", "raise", lambda: np.ones((3, 3)), None),
            ("shape", "points-0-rows", "either", lambda: np.zeros((0, 2)), 0),
            ("shape", "points-list", "ok", lambda: D.points.tolist(), 3),
            ("shape", "points-sparse", "either", lambda: sp.csr_matrix(D.points), 3),
            ("shape", "points-None", "raise", lambda: None, None),
            ("dtype", "points-int", "ok", lambda: D.points.astype(int), 3),
            ("dtype", "points-float32", "ok", lambda: D.points.astype(np.float32), 3),
            ("dtype", "points-complex", "raise", lambda: D.points.astype(complex), None),
            ("dtype", "points-str", "raise", lambda: D.points.astype(str), None),
            ("dtype", "points-object", "ok", lambda: D.points.astype(object), 3)]:
        pts_case(klass, variant, expect, pts, rows, same=variant == "points-object")

    # refused points and histograms: the policy's class and the words of the message
    def points(klass, variant, pts, error, match):
        out.append(Case("HistogramGMM", "predict_proba", klass, variant, "raise",
                        lambda ctx: model("HistogramGMM").predict_proba(pts()), ("points",),
                        None, gm, error=error, match=match))

    points("dtype", "points-'ab'", lambda: "ab", TypeError, "points")
    points("shape", "points-3-columns", lambda: np.ones((2, 3)), ValueError, "points")
    points("shape", "points-0-D", lambda: np.array(1.0), ValueError, "points")
    points("dtype", "points-complex-ones", lambda: np.ones((2, 2), dtype=complex), ValueError,
           "points")
    points("shape", "points-ragged", lambda: [[1.0, 2.0], [3.0]], TypeError, "points")

    def histogram(klass, variant, w, c, error, match, names):
        out.append(Case("HistogramGMM", "fit", klass, variant, "raise",
                        lambda ctx: make("HistogramGMM", random_state=0).fit(
                            w(), [np.arange(3.0), np.arange(3.0)] if c is None else c()),
                        names, None, gm, error=error, match=match))

    W3 = lambda: np.ones((3, 3))  # noqa: E731
    for klass, variant, w, c, error, match, names in [
            ("values", "3x3-all-zero", lambda: np.zeros((3, 3)), None, ValueError,
             "positive sum", ("weights",)),
            ("values", "3x3-negative", lambda: -np.ones((3, 3)), None, ValueError,
             "non-negative", ("weights",)),
            ("values", "3x3-NaN", lambda: np.full((3, 3), np.nan), None, ValueError, "NaN",
             ("weights",)),
            ("values", "3x3-inf", lambda: np.full((3, 3), np.inf), None, ValueError, "NaN",
             ("weights",)),
            ("shape", "centres-axis-1-too-short", W3, lambda: [np.arange(3.0), np.arange(2.0)],
             ValueError, r"bin_centers\[1\]", ("bin_centers",)),
            ("values", "centres-axis-1-NaN", W3, lambda: [np.arange(3.0), [0, np.nan, 1]],
             ValueError, "bin_centers contains", ("bin_centers",)),
            ("values", "centres-spread-1e300", W3,
             lambda: [np.arange(3.0) * 1e300, np.arange(3.0)], ValueError,
             "bin_centers spread .* reg_covar", ("bin_centers",)),
            ("shape", "centres-0-dims", W3, lambda: np.zeros((3, 3, 0)), ValueError,
             "bin_centers", ("bin_centers",)),
            ("shape", "weights-0-D", lambda: np.ones(()), lambda: [np.zeros(1)], ValueError,
             "weights", ("weights",)),
            ("dtype", "weights-'abc'", lambda: "abc", None, TypeError, "weights",
             ("weights",)),
            ("shape", "weights-ragged", lambda: [[1.0, 2.0], [3.0]], None, TypeError,
             "weights could not be converted", ("weights",)),
            ("shape", "centres-axis-1-ragged", W3, lambda: [np.arange(3.0), [[0, 1], [2]]],
             TypeError, r"bin_centers\[1\] could not", ("bin_centers",))]:
        histogram(klass, variant, w, c, error, match, names)
    return out


# ============================================================================ function params
def gen_function_params():
    out = []

    def add(entry, variant, expect, f, names, need, oracle=None, **kw):
        out.append(Case(entry, "", "params", variant, expect, lambda ctx, f=f: f(), names,
                        oracle or oracle_finite(), (need,), **kw))

    jt_e, jt_n = "kernels.jensen_tsallis_kernel", "countgrid.kernels.jensen_tsallis_kernel"
    js_e, js_n = "kernels.jensen_shannon_kernel", "countgrid.kernels.jensen_shannon_kernel"

    def jt(**kw):
        return lambda: _k("jensen_tsallis_kernel")(D.A, D.B, **dict(dict(num_threads=1), **kw))

    # a refused parameter of the kernels: the policy's class, before any warning
    V_, T_ = dict(expect="raise", error=ValueError, quiet=True), \
        dict(expect="raise", error=TypeError, quiet=True)
    OK_ = dict(expect="ok")
    for v, how in ((-0.5, V_), (2.5, V_), (np.nan, V_), (np.inf, V_), ("1.5", T_), ("1", T_),
                   (True, T_), (None, T_), (np.float32(1.5), OK_), (1, OK_), (0, OK_),
                   (2, OK_), (np.float64(0.5), OK_)):
        add(jt_e, f"q={v!r}", f=jt(q=v), names=("q",), need=jt_n, **how)
    for v, how in (("nope", V_), ("C", V_), (1, T_), (True, T_), ("b", V_)):
        add(jt_e, f"weighted={v!r}", f=jt(weighted=v), names=("weighted",), need=jt_n, **how)
    add(jt_e, "exponentiated='no'", f=jt(exponentiated="no"), names=("exponentiated",),
        need=jt_n, **T_)
    add(jt_e, "exponentiated+weighted", f=jt(exponentiated=True, weighted="A"),
        names=("exponentiated", "weighted"), need=jt_n, **V_)
    for v, how in ((0.0, V_), (-1.0, V_), (np.nan, V_), (np.inf, V_), ("1", T_), (None, T_)):
        add(jt_e, f"t={v!r}", f=jt(exponentiated=True, t=v), names=("t",), need=jt_n, **how)
    # t is checked whether or not the kernel is exponentiated
    for v, how in ((-1.0, V_), (np.inf, V_), ("1", T_)):
        add(jt_e, f"t={v!r}-not-exponentiated", f=jt(t=v), names=("t",), need=jt_n, **how)
    for v, how in (([5, 5], V_), ([0, 12], V_), ([2.5, 9.5], T_), ("abc", T_), ([-1, 13], V_),
                   ([10**12], V_), ([], V_), ([12], OK_), ([6, 6], OK_),
                   ((np.int64(4), 8), OK_)):
        for entry, need, f in ((jt_e, jt_n, lambda b: jt(blocks=b)()),
                               (js_e, js_n, lambda b: _k("jensen_shannon_kernel")(
                                   D.A, D.B, blocks=b, num_threads=1))):
            add(entry, f"blocks={v!r}", f=lambda f=f, v=v: f(v), names=("blocks",),
                need=need, **how)
    for v, how in (([np.nan, 1.0], V_), ([-1.0, 1.0], V_), ([1.0], V_), ("ab", T_),
                   ([np.inf, 1.0], V_)):
        add(jt_e, f"block_weights={v!r}", f=jt(blocks=[6, 6], block_weights=v),
            names=("block_weights",), need=jt_n, **how)
    add(jt_e, "block_weights-without-blocks", f=jt(block_weights=[1.0]),
        names=("block_weights", "blocks"), need=jt_n, **V_)
    add(js_e, "block_weights-without-blocks",
        f=lambda: _k("jensen_shannon_kernel")(D.A, block_weights=[1.0], num_threads=1),
        names=("block_weights", "blocks"), need=js_n, **V_)
    add(jt_e, "A-10**6-empty-rows-symmetric", "either",
        lambda: _k("jensen_tsallis_kernel")(sp.csr_matrix((10**6, 12)), num_threads=1),
        ("A", "samples", "rows"), jt_n)
    # embed_labels
    el_e, el_n = "embed_labels", "countgrid.embed_labels"

    def el(P=None, y=None, extent=(4, 4), window=(2, 2), **kw):
        return lambda: cg.embed_labels(D.P if P is None else P(), D.y if y is None else y,
                                       extent, window, num_threads=1, **kw)
    for variant, expect, f, names in [
            ("extent=(0,0)", "raise", el(extent=(0, 0)), ("extent",)),
            ("extent=(2**40,2**40)", "raise", el(extent=(2**40, 2**40)),
             ("extent", "posteriors")),
            ("extent=(3.5,4)", "raise", el(extent=(3.5, 4)), ("extent",)),
            ("extent='44'", "raise", el(extent="44"), ("extent",)),
            ("window=(9,9)", "raise", el(window=(9, 9)), ("window", "extent")),
            ("window=(0,0)", "raise", el(window=(0, 0)), ("window",)),
            ("kind='nope'", "raise", el(kind="nope"), ("kind",)),
            ("kind=None", "raise", el(kind=None), ("kind",)),
            ("posteriors-wrong-L", "raise", el(P=lambda: D.P[:, :9]), ("posteriors", "extent")),
            ("posteriors-NaN", "raise", el(P=lambda: _set(1, 1, np.nan)(D.P)), ("posteriors",)),
            ("posteriors-negative", "raise", el(P=lambda: _set(1, 1, -0.5)(D.P)),
             ("posteriors",)),
            ("posteriors-1-D", "raise", el(P=lambda: D.P[0]), ("posteriors",)),
            ("posteriors-int", "either", el(P=lambda: (D.P > 0.1).astype(int)), ("posteriors",)),
            ("posteriors-list", "ok", el(P=lambda: D.P.tolist()), ("posteriors",)),
            ("posteriors-sparse", "either", el(P=lambda: sp.csr_matrix(D.P)), ("posteriors",)),
            ("posteriors-float32", "ok", el(P=lambda: D.P.astype(np.float32)), ("posteriors",)),
            ("posteriors-all-zero", "either", el(P=lambda: np.zeros_like(D.P)), ("posteriors",)),
            ("posteriors-1e300", "either", el(P=lambda: D.P * 1e300), ("posteriors",))]:
        add(el_e, variant, expect, f, names, el_n)
    # select_n_components_bic
    bic_e, bic_n = "select_n_components_bic", "countgrid.select_n_components_bic"

    def bic(candidates, **kw):
        return lambda: cg.select_n_components_bic(D.Xs, candidates, **dict(
            dict(n_iter=3, random_state=0, num_threads=1), **kw))[1]
    for v, expect in (([2.7], "raise"), ([], "raise"), ([0], "raise"), ([-1], "raise"),
                      (["2"], "raise"), ([10**9], "raise"), (None, "raise"), (3, "raise"),
                      ([True], "raise"), ([np.int64(2)], "ok"), ((1, 2), "ok"),
                      (range(1, 3), "ok"), ([2, 2], "either")):
        add(bic_e, f"candidates={v!r}", expect, bic(v), ("candidates", "n_components"), bic_n)
    add(bic_e, "n_obs='nope'", "raise", bic([1], n_obs="nope"), ("n_obs",), bic_n)
    add(bic_e, "n_obs='documents'", "ok", bic([1], n_obs="documents"), ("n_obs",), bic_n)
    add(bic_e, "unknown-parameter", "raise", bic([1], foo=1), ("foo",), bic_n)
    add(bic_e, "n_components-in-params", "raise", bic([1], n_components=3),
        ("n_components",), bic_n)
    # tfidf / idf
    tf_e, tf_n = "tfidf", "countgrid.tfidf"

    def term_frequencies(value):       # idf = 1: the counts divided by the document lengths
        return allclose(value, D.Xq / D.Xq.sum(axis=1, keepdims=True), 1e-7)

    for variant, expect, idf, error, match in [
            ("idf-wrong-length", "raise", lambda: np.ones(11), ValueError, "idf has shape"),
            ("idf-NaN", "raise", lambda: np.r_[np.nan, np.ones(11)], ValueError,
             "idf contains NaN"),
            ("idf-all-NaN", "raise", lambda: np.full(12, np.nan), ValueError,
             "idf contains NaN"),
            ("idf-negative", "either", lambda: -np.ones(12), None, None),
            ("idf-2-D", "raise", lambda: np.ones((1, 12)), ValueError, "idf has shape"),
            ("idf-column", "raise", lambda: np.ones((12, 1)), ValueError, "idf has shape"),
            ("idf-str", "raise", lambda: "abc", TypeError, "idf"),
            ("idf-str-array", "raise", lambda: np.array(["a"] * 12), TypeError, "idf"),
            ("idf-inf", "raise", lambda: np.r_[np.inf, np.ones(11)], ValueError,
             "idf contains NaN"),
            ("idf-list", "ok", lambda: [1.0] * 12, None, None),
            ("idf-int", "ok", lambda: np.ones(12, dtype=int), None, None)]:
        out.append(Case(tf_e, "", "params", variant, expect,
                        lambda ctx, idf=idf: _dense(cg.tfidf(D.Xq, idf=idf())), ("idf",),
                        term_frequencies if variant == "idf-int" else oracle_finite(),
                        (tf_n,), error=error, match=match))
    # retrieval curve parameters
    pr_e, pr_n = "metrics.precision_recall_curve_retrieval", \
        "countgrid.metrics.precision_recall_curve_retrieval"

    def prc(**kw):
        return lambda: cg.metrics.precision_recall_curve_retrieval(D.Xq, D.X, D.yq, D.y, **kw)
    def same_curve(curve):      # a batch beyond the queries: the curve of the default batch
        want = _cached("prc_ref", lambda: cg.metrics.precision_recall_curve_retrieval(
            D.Xq, D.X, D.yq, D.y))
        if not (np.array_equal(curve.precision, want.precision)
                and np.array_equal(curve.recall, want.recall) and curve.auc == want.auc):
            return "the curve differs from the one in the default batches"
        return None

    for variant, expect, kw, names, error in [
            ("metric='nope'", "raise", dict(metric="nope"), ("metric",), ValueError),
            ("metric='l2'", "raise", dict(metric="l2"), ("metric",), ValueError),
            ("metric=None", "raise", dict(metric=None), ("metric",), ValueError),
            ("metric=3", "raise", dict(metric=3), ("metric",), ValueError),
            ("metric='dot'", "ok", dict(metric="dot"), ("metric",), None),
            ("batch_size=0", "raise", dict(batch_size=0), ("batch_size",), ValueError),
            ("batch_size=-1", "raise", dict(batch_size=-1), ("batch_size",), ValueError),
            ("batch_size=2.7", "raise", dict(batch_size=2.7), ("batch_size",), TypeError),
            ("batch_size=2.0", "raise", dict(batch_size=2.0), ("batch_size",), TypeError),
            ("batch_size=True", "raise", dict(batch_size=True), ("batch_size",), TypeError),
            ("batch_size='2'", "raise", dict(batch_size="2"), ("batch_size",), TypeError),
            ("batch_size=10**12", "ok", dict(batch_size=10**12), ("batch_size",), None),
            ("batch_size=2**62", "ok", dict(batch_size=2**62), ("batch_size",), None),
            ("batch_size=1", "ok", dict(batch_size=1), ("batch_size",), None),
            ("batch_size=numpy.int64(3)", "ok", dict(batch_size=np.int64(3)), ("batch_size",),
             None)]:
        oracle = same_curve if variant in ("batch_size=10**12", "batch_size=2**62") else None
        out.append(Case(pr_e, "", "params", variant, expect, lambda ctx, kw=kw: prc(**kw)(),
                        names, oracle or oracle_finite(), (pr_n,), error=error,
                        match=names[0] if error else None))
    # term selection
    sb_e, sb_n = "text.select_by_resolving_power", "countgrid.text.select_by_resolving_power"
    for variant, expect, args, names in [
            ("low>high", "raise", (10, 2), ("low", "high")), ("low=-1", "raise", (-1, 5), ("low",)),
            ("high=1.5", "raise", (1, 1.5), ("high",)), ("low='a'", "raise", ("a", 5), ("low",)),
            ("low=True", "raise", (True, 5), ("low",)), ("low=NaN", "raise", (np.nan, 5),
                                                         ("low",)),
            ("high=None", "raise", (1, None), ("high",)),
            ("low=10**18", "ok", (10**18, 10**19), ("low",)),
            ("low=numpy.int64(1)", "ok", (np.int64(1), 0.9), ("low",))]:
        add(sb_e, variant, expect, lambda args=args: cg.text.select_by_resolving_power(
            D.X, *args), names, sb_n)
    for v in ("nope", None, 1):
        add(sb_e, f"by={v!r}", "raise", lambda v=v: cg.text.select_by_resolving_power(
            D.X, 1, 0.9, by=v), ("by",), sb_n)
    # functions of a fitted model
    for entry, fname, extra in (("embeddings.fisher_score", "fisher_score", ()),
                                ("embeddings.fess_terms", "fess_terms", ()),
                                ("embeddings.posterior_divergence", "posterior_divergence",
                                 (np.full(2, 50.0),))):
        need = f"countgrid.embeddings.{fname}"

        def call(m, X=None, *rest, fname=fname, extra=extra, **kw):
            return getattr(cg.embeddings, fname)(m, D.Xq if X is None else X,
                                                 *(rest or extra), **kw)
        add(entry, "model-unfitted", "raise", lambda call=call: call(make("PLSA")),
            ("model", "PLSA"), need)
        add(entry, "model-None", "raise", lambda call=call: call(None), ("model",), need)
        add(entry, "model-RAP", "raise", lambda call=call: call(model("RAP")), ("model",), need)
        add(entry, "model-CountingGrid", "raise", lambda call=call: call(model("CountingGrid")),
            ("model",), need)
        if fname != "posterior_divergence":
            add(entry, "reduce='nope'", "raise", lambda call=call: call(model("PLSA"),
                                                                         reduce="nope"),
                ("reduce",), need)
    fs = "countgrid.embeddings.fisher_score"
    add("embeddings.fisher_score", "normalize_length='no'", "raise",
        lambda: cg.embeddings.fisher_score(model("PLSA"), D.Xq, normalize_length="no"),
        ("normalize_length",), fs)
    pd = "countgrid.embeddings.posterior_divergence"
    for variant, tm in (("topic_mass-wrong-length", np.ones(3)),
                        ("topic_mass-NaN", np.array([np.nan, 1.0])),
                        ("topic_mass-negative", np.array([-1.0, 1.0])),
                        ("topic_mass-None", None), ("topic_mass-str", "ab"),
                        ("topic_mass-zero", np.zeros(2))):
        add("embeddings.posterior_divergence", variant,
            "either" if variant.endswith("zero") else "raise",
            lambda tm=tm: cg.embeddings.posterior_divergence(model("PLSA"), D.Xq, tm),
            ("topic_mass",), pd)
    cf = "countgrid.embeddings.cg_fess_terms"
    for variant, f in (("grid-unfitted", lambda: cg.embeddings.cg_fess_terms(
                            make("CountingGrid"), D.Xq)),
                       ("grid-PLSA", lambda: cg.embeddings.cg_fess_terms(model("PLSA"), D.Xq)),
                       ("grid-None", lambda: cg.embeddings.cg_fess_terms(None, D.Xq))):
        add("embeddings.cg_fess_terms", variant, "raise", f,
            ("grid", "CountingGrid") if variant == "grid-unfitted" else ("grid",), cf)
    add("embeddings.cg_fess_terms", "reduce='nope'", "raise",
        lambda: cg.embeddings.cg_fess_terms(model("CountingGrid"), D.Xq, reduce="nope"),
        ("reduce",), cf)
    # the Poisson IRLS of ZIP-GTM's M-step, a public function of countgrid.gtm
    ir_e, ir_n = "gtm.irls_poisson", "countgrid.gtm.irls_poisson"

    def irls(phi=None, r=None, s=None, **kw):
        def call():
            Phi = np.c_[np.random.default_rng(0).normal(size=(10, 2)), np.ones(10)]
            R, S = np.ones((10, 3)), np.ones((10, 3))
            return cg.gtm.irls_poisson(Phi if phi is None else phi(Phi), R if r is None
                                       else r(R), S if s is None else s(S), **kw)
        return call

    for variant, f, names, error, match in [
            ("R-9-rows", irls(r=lambda R: np.ones((9, 3))), ("R", "S"), ValueError, "R and S"),
            ("S-2-columns", irls(s=lambda S: np.ones((10, 2))), ("R", "S"), ValueError,
             "R and S"),
            ("S-NaN", irls(s=lambda S: S * np.nan), ("S",), ValueError, "S contains NaN"),
            ("S-negative", irls(s=lambda S: -S), ("S",), ValueError,
             "S must be non-negative"),
            ("R-negative", irls(r=lambda R: -R), ("R",), ValueError,
             "R must be non-negative"),
            ("alpha=-1.0", irls(alpha=-1.0), ("alpha",), ValueError, "alpha"),
            ("n_steps=0", irls(n_steps=0), ("n_steps",), ValueError, "n_steps"),
            ("n_steps=2.5", irls(n_steps=2.5), ("n_steps",), TypeError, "n_steps"),
            ("coef-2-rows", irls(coef=np.zeros((2, 3))), ("coef",), ValueError, "coef"),
            ("Phi-1-D", irls(phi=lambda P: np.ones(10)), ("Phi",), ValueError, "Phi"),
            ("Phi-'abc'", irls(phi=lambda P: "abc"), ("Phi",), TypeError, "Phi")]:
        add(ir_e, variant, f=f, names=names, need=ir_n, expect="raise", error=error,
            match=match)
    add(ir_e, "lists", f=irls(phi=lambda P: P.tolist(), r=lambda R: R.tolist(),
                              s=lambda S: S.tolist(), n_steps=5),
        names=("Phi",), need=ir_n, expect="ok",
        oracle=lambda C: nonfinite(C) or (None if np.shape(C) == (3, 3)
                                          else f"coef has shape {np.shape(C)}, not (3, 3)"))
    # cli.stratified_split
    ss = "countgrid.cli.stratified_split"
    for v in (0, 1, -0.1, np.nan, "0.2", True, None, 1.5):
        add("cli.stratified_split", f"test_size={v!r}", "raise",
            lambda v=v: cg.cli.stratified_split(D.y, v, 0), ("test_size",), ss)
    for v, expect in ((-1, "raise"), ("seed", "raise"), (2**70, "either")):
        add("cli.stratified_split", f"random_state={v!r}", expect,
            lambda v=v: cg.cli.stratified_split(D.y, 0.2, v), ("random_state",), ss)
    return out


# ============================================================================ plotting, datasets
def gen_plotting():
    out = []
    for fname in ("plot_word_grid", "text_word_grid", "word_grid_cells"):
        needs = (f"countgrid.plotting.{fname}",) + (("matplotlib",) if fname == "plot_word_grid"
                                                    else ())

        def call(grid=None, words=None, fname=fname, **kw):
            g = model("CountingGridClassifier") if grid is None else grid()
            f = getattr(cg.plotting, fname)
            res = f(g, D.words if words is None else words(), **kw)
            return None if fname == "plot_word_grid" else res

        def add(variant, expect, f, names, oracle=None):
            out.append(Case(f"plotting.{fname}", "", "params", variant, expect,
                            lambda ctx, f=f: f(), names, oracle, needs))
        add("valid", "ok", call, ("grid",))
        add("valid-CountingGrid", "ok", lambda call=call: call(lambda: model("CountingGrid")),
            ("grid",))
        add("grid-unfitted", "raise", lambda call=call: call(lambda: make("CountingGrid")),
            ("grid", "CountingGrid"))
        add("grid-PLSA", "raise", lambda call=call: call(lambda: model("PLSA")), ("grid",))
        add("grid-None", "raise", lambda call=call: call(lambda: None), ("grid",))
        add("feature_names-too-short", "raise", lambda call=call: call(
            words=lambda: D.words[:-1]), ("feature_names",))
        add("feature_names-None", "raise", lambda call=call: call(words=lambda: None),
            ("feature_names",))
        add("feature_names-ints", "either", lambda call=call: call(words=lambda: np.arange(12)),
            ("feature_names",))
        for v, expect in ((0, "raise"), (-1, "raise"), (2.7, "raise"), ("3", "raise"),
                          (10**9, "either")):
            add(f"n_words={v!r}", expect, lambda call=call, v=v: call(n_words=v), ("n_words",))
        for v in (0, -1, 2.5):
            add(f"step={v!r}", "raise", lambda call=call, v=v: call(step=v), ("step",))
        add("weighting='nope'", "raise", lambda call=call: call(weighting="nope"),
            ("weighting",))
        add("label_names-too-short", "raise", lambda call=call: call(label_names=["a"]),
            ("label_names",))
        add("gamma-wrong-shape", "raise", lambda call=call: call(gamma=np.ones((2, 2, 2))),
            ("gamma",))
        if fname != "text_word_grid":
            for v in (0, -1):
                add(f"max_cells={v!r}", "raise", lambda call=call, v=v: call(max_cells=v),
                    ("max_cells",))
        else:
            for p in ("max_width", "cell_width"):
                add(f"{p}=0", "raise", lambda call=call, p=p: call(**{p: 0}), (p,))
        if fname == "plot_word_grid":
            add("ax='ax'", "raise", lambda call=call: call(ax="ax"), ("ax",))
            add("cell_inches=-1", "raise", lambda call=call: call(cell_inches=-1.0),
                ("cell_inches",))
    return out


def gen_datasets():
    out = []
    need = ("countgrid.datasets.load_npz_corpus",)

    def good(ctx, **over):
        X = sp.csr_matrix(D.X)
        parts = dict(data=X.data, indices=X.indices, indptr=X.indptr, shape=np.array(X.shape),
                     format=np.array("csr"), y=D.y)
        parts.update(over)
        parts = {k: v for k, v in parts.items() if v is not None}
        path = ctx.path("corpus.npz")
        with open(path, "wb") as fh:
            np.savez(fh, **parts)
        return path

    def corpus_ok(ds):
        X = ds.X if hasattr(ds, "X") else ds[0]
        if not sp.issparse(X):
            return "X is not sparse"
        try:
            sp.csr_matrix(X).check_format(full_check=True)
        except ValueError as exc:
            return f"the returned X is corrupt: {exc}"
        p = nonfinite(X)
        if p:
            return p
        y = ds.y if hasattr(ds, "y") else ds[1]
        if y is not None and len(y) != X.shape[0]:
            return f"y has {len(y)} entries for {X.shape[0]} rows"
        if X.shape == D.X.shape and not np.array_equal(X.toarray(), D.X):
            return "X differs from the saved matrix"
        return None

    X = None
    for variant, expect, make_path, names, kw in [
            ("valid", "ok", good, ("path",), {}),
            ("valid-dtype-None", "ok", good, ("dtype",), dict(dtype=None)),
            ("valid-file-object", "ok", lambda ctx: io.BytesIO(open(good(ctx), "rb").read()),
             ("path",), {}),
            ("missing-file", "raise", lambda ctx: ctx.path("nope.npz"), ("nope.npz",), {}),
            ("directory", "raise", lambda ctx: ctx.tmp, ("path",), {}),
            ("empty-file", "raise", lambda ctx: _write(ctx.path("c.npz"), b""), ("c.npz",), {}),
            ("text-file", "raise", lambda ctx: _write(ctx.path("c.npz"), b"hello\n"), ("c.npz",),
             {}),
            ("missing-indptr", "raise", lambda ctx: good(ctx, indptr=None), ("corpus.npz",
                                                                            "indptr"), {}),
            ("format-coo", "raise", lambda ctx: good(ctx, format=np.array("coo")),
             ("corpus.npz", "format"), {}),
            ("shape-3-D", "raise", lambda ctx: good(ctx, shape=np.array([40, 12, 1])),
             ("corpus.npz", "shape"), {}),
            ("shape-negative", "raise", lambda ctx: good(ctx, shape=np.array([-40, 12])),
             ("corpus.npz", "shape"), {}),
            ("shape-10**12", "raise", lambda ctx: good(ctx, shape=np.array([10**12, 12])),
             ("corpus.npz", "shape", "indptr"), {}),
            ("index-out-of-range", "raise",
             lambda ctx: good(ctx, indices=np.where(np.arange(D.Xs.nnz) == 5, 99,
                                                     D.Xs.indices)), ("corpus.npz", "indices"), {}),
            ("decreasing-indptr", "raise",
             lambda ctx: good(ctx, indptr=_corrupt("csr:decreasing-indptr")(D.X).indptr),
             ("corpus.npz", "indptr"), {}),
            ("data-too-short", "raise", lambda ctx: good(ctx, data=D.Xs.data[:-3]),
             ("corpus.npz", "data"), {}),
            ("data-NaN", "raise", lambda ctx: good(ctx, data=np.r_[np.nan, D.Xs.data[1:]]),
             ("corpus.npz", "data"), {}),
            # signed values are data (the microarray files of data/ hold them)
            ("data-negative", "ok", lambda ctx: good(ctx, data=np.r_[-1.0, D.Xs.data[1:]]),
             ("corpus.npz", "data"), {}),
            ("y-wrong-length", "raise", lambda ctx: good(ctx, y=D.y[:-1]), ("corpus.npz", "y"),
             {}),
            ("object-array", "raise",
             lambda ctx: good(ctx, data=D.Xs.data.astype(object)), ("corpus.npz", "data"), {}),
            ("dtype-complex", "raise", good, ("dtype",), dict(dtype=np.complex128)),
            ("dtype-'nope'", "raise", good, ("dtype",), dict(dtype="nope")),
            ("dtype-str", "raise", good, ("dtype",), dict(dtype=str)),
            ("path-None", "raise", lambda ctx: None, ("path",), {}),
            ("path-int", "raise", lambda ctx: 12345, ("path",), {})]:
        def run(ctx, make_path=make_path, kw=kw):
            return cg.datasets.load_npz_corpus(make_path(ctx), **kw)
        oracle = corpus_ok
        if variant == "data-negative":
            def oracle(ds):
                X = ds.X
                signed = D.Xs.copy()
                signed.data[0] = -1.0
                return None if (X != signed).nnz == 0 else "the signed values were not kept"
        out.append(Case("datasets.load_npz_corpus", "", "model-file", variant, expect, run,
                        names, oracle, need, files=True))
    return out


# ============================================================================ command line
QUICK = ["demo", "--extent", "6", "6", "--window", "2", "2", "--coarse-iter", "0", "--n-iter",
         "1", "--threads", "1", "-q"]
_TRACEBACK = "Traceback (most recent call last)"


def _cli(args, ctx, timeout=45):
    env = dict(os.environ)
    env.pop("COUNTGRID_DEBUG", None)
    args = [a.replace("{tmp}", ctx.tmp) for a in args]
    r = subprocess.run([sys.executable, "-m", "countgrid.cli"] + args, capture_output=True,
                       text=True, timeout=timeout, cwd=ctx.tmp, env=env,
                       stdin=subprocess.DEVNULL)
    return {"rc": r.returncode, "out": r.stdout, "err": r.stderr, "tmp": ctx.tmp, "args": args}


def _last_line(text):
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def cli_classify(case, value, exc):
    from _hostile_engine import names_in

    if exc is not None:
        if isinstance(exc, subprocess.TimeoutExpired):
            return "hang", f"the command did not finish in {exc.timeout} s"
        return "unclear-error", f"harness: {type(exc).__name__}: {exc}"
    rc, err = value["rc"], value["err"]
    if rc < 0 or (rc >= 128 and rc != 130):
        sig = -rc if rc < 0 else rc - 128
        return "crash", f"exit status {rc} (signal {sig}): {_last_line(err)}"
    if rc == 0:
        if case.expect == "raise":
            return "silent-wrong", f"exit status 0 instead of an error naming {list(case.names)}"
        problem = case.oracle(value) if case.oracle else None
        return ("silent-wrong", problem) if problem else ("ok", "")
    if _TRACEBACK in err:
        return "unclear-error", f"exit status {rc} with a traceback: {_last_line(err)}"
    message = "\n".join(ln for ln in err.splitlines() if not ln.startswith(("usage:", " ")))
    clear = rc in (1, 2) and names_in(message, case.names)
    why = f"exit status {rc}: {_last_line(err)!r}"
    if case.expect == "ok":
        return ("refused" if clear else "unclear-error"), why
    return ("clear-error", "") if clear else ("unclear-error", why)


def _wrote(*names):
    def oracle(value):
        if "nan" in value["out"].lower().split():
            return "the output reports NaN"
        for n in names:
            if os.path.exists(n.replace("{tmp}", value["tmp"])):
                return None
        return f"exit status 0 but none of {names} was written"
    return oracle


def _interrupt_run(ctx):
    env = dict(os.environ)
    env.pop("COUNTGRID_DEBUG", None)
    proc = subprocess.Popen([sys.executable, "-m", "countgrid.cli", "demo", "--extent", "16", "16",
                             "--window", "3", "3", "--coarse-iter", "0", "--n-iter", "500",
                             "--threads", "1", "-o", ctx.path("g.txt")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=ctx.tmp, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 40
    seen = False
    try:
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            if "iteration" in line and "iterations" not in line:
                seen = True
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return {"rc": proc.returncode, "out": out, "err": err, "seen": seen}


def _interrupt_classify(case, value, exc):
    if exc is not None:
        if isinstance(exc, subprocess.TimeoutExpired):
            return "hang", "Ctrl-C did not stop the command within 20 s"
        return "unclear-error", f"harness: {type(exc).__name__}: {exc}"
    if not value["seen"]:
        return "unclear-error", "harness: no EM iteration line before the interrupt"
    rc, err = value["rc"], value["err"]
    lines = [ln for ln in err.splitlines() if ln.strip()
             and "Warning" not in ln and not ln.startswith("  ")]
    if _TRACEBACK in err or rc != 130:
        return "unclear-error", f"exit status {rc}, {'a traceback' if _TRACEBACK in err else ''}" \
                                f" {_last_line(err)!r}"
    if len(lines) != 1:
        return "unclear-error", f"{len(lines)} lines on stderr, expected one"
    return "ok", ""


def gen_cli():
    out = []
    need = ("countgrid.cli.main",)
    O = ("--output", "-o")

    def add(variant, expect, args, names=O, oracle=None, needs=()):
        out.append(Case("cli", "", "cli", variant, expect,
                        lambda ctx, args=args: _cli(args, ctx), names, oracle, need + needs,
                        timeout=60.0, classify=cli_classify, cost=30.0))

    txt = ["-o", "{tmp}/g.txt"]
    add("info", "ok", ["info"], ("info",), lambda v: None if "OpenMP" in v["out"] else
        "info does not mention OpenMP")
    add("--version", "ok", ["--version"], ("version",))
    add("demo-txt", "ok", QUICK + txt, oracle=_wrote("{tmp}/g.txt"))
    for ext in ("png", "svg", "pdf"):
        add(f"demo-{ext}", "ok", QUICK + ["-o", f"{{tmp}}/g.{ext}"],
            oracle=_wrote(f"{{tmp}}/g.{ext}"), needs=("matplotlib",))
    add("output-missing-folder", "raise", QUICK + ["-o", "{tmp}/no/such/dir/g.png"],
        O + ("g.png", "dir"))
    add("output-missing-folder-txt", "raise", QUICK + ["-o", "{tmp}/no/g.txt"], O + ("g.txt",))
    add("output-is-a-directory", "raise", QUICK + ["-o", "{tmp}"])
    add("output-unknown-extension", "raise", QUICK + ["-o", "{tmp}/g.xyz"], O + ("g.xyz",))
    add("output-read-only-place", "raise", QUICK + ["-o", "/proc/countgrid-hostile.png"],
        O + ("countgrid-hostile.png",))
    add("output-empty-string", "raise", QUICK + ["-o", ""])
    add("output-without-extension", "either", QUICK + ["-o", "{tmp}/grid"],
        oracle=_wrote("{tmp}/grid", "{tmp}/grid.png"))
    add("output-missing-value", "raise", QUICK + ["-o"])
    quick_nothreads = QUICK[:QUICK.index("--threads")] + QUICK[QUICK.index("--threads") + 2:]
    for v, expect in (("1000000", "either"), (str(2**40), "either"), ("-1", "ok"),
                      ("-1000000", "either"), ("0", "raise"), ("abc", "raise"),
                      ("1.5", "raise")):
        add(f"--threads={v}", expect, quick_nothreads + ["--threads", v] + txt, ("--threads",),
            _wrote("{tmp}/g.txt"))
    for v, expect in (("-1", "either"), (str(2**70), "either"), ("abc", "raise"),
                      ("1.5", "raise")):
        add(f"--seed={v}", expect, QUICK + ["--seed", v] + txt, ("--seed",),
            _wrote("{tmp}/g.txt"))
    for v, expect in (("0", "raise"), ("1", "raise"), ("-0.5", "raise"), ("nan", "raise"),
                      ("inf", "raise"), ("abc", "raise"), ("1e-9", "either"),
                      ("0.999", "either")):
        add(f"--test-size={v}", expect, QUICK + ["--test-size", v] + txt, ("--test-size",),
            _wrote("{tmp}/g.txt"))
    quick_noiter = QUICK[:QUICK.index("--n-iter")] + QUICK[QUICK.index("--n-iter") + 2:]
    for v in ("0", "-1", "1.5"):
        add(f"--n-iter={v}", "raise", quick_noiter + ["--n-iter", v] + txt, ("--n-iter",))
    quick_noext = QUICK[:QUICK.index("--extent")] + QUICK[QUICK.index("--extent") + 3:]
    for v in (("2**40",) * 2, ("100000", "100000"), ("0", "4"), ("a", "b")):
        vv = [str(2**40) if x == "2**40" else x for x in v]
        add(f"--extent={'x'.join(v)}", "raise", quick_noext + ["--extent"] + vv + txt,
            ("--extent", "extent"))
    quick_nowin = QUICK[:QUICK.index("--window")] + QUICK[QUICK.index("--window") + 3:]
    for v in (("30", "30"), ("0", "0")):
        add(f"--window={'x'.join(v)}", "raise", quick_nowin + ["--window", *v] + txt,
            ("--window", "window"))
    add("--coarse-window=0x0", "raise", QUICK + ["--coarse-window", "0", "0"] + txt,
        ("--coarse-window",))
    add("--coarse-iter=-1", "raise", QUICK + ["--coarse-iter", "-1"] + txt, ("--coarse-iter",))
    add("unknown-option", "raise", QUICK + ["--nope"] + txt, ("--nope",))
    add("unknown-command", "raise", ["nope"], ("nope",))
    add("no-command", "raise", [], ("COMMAND", "command"))
    add("extra-positional", "raise", QUICK + ["extra"] + txt, ("extra",))
    out.append(Case("cli", "", "cli", "ctrl-c-during-em", "ok", _interrupt_run, (), None, need,
                    timeout=90.0, classify=_interrupt_classify, cost=60.0))
    return out


# ============================================================================ the suite
GENERATORS = (gen_threads, gen_formats, gen_corrupt, gen_mixed, gen_dtypes, gen_shapes,
              gen_values, gen_labels, gen_params, gen_function_params, gen_set_params,
              gen_model_files, gen_datasets, gen_numeric, gen_histogram_inputs, gen_plotting,
              gen_cli)
_BUILT = None

import _hostile_front_door  # noqa: E402 - its cases use the helpers above

GENERATORS = GENERATORS + _hostile_front_door.GENERATORS

import _hostile_scale  # noqa: E402 - the scale API of issue 14, on the helpers above

GENERATORS = GENERATORS + tuple(_hostile_front_door._with_data(g)
                                for g in _hostile_scale.GENERATORS)

import _hostile_security  # noqa: E402 - files and outputs a stranger controls (issue 30)

GENERATORS = GENERATORS + tuple(_hostile_front_door._with_data(g)
                                for g in _hostile_security.GENERATORS)

import _hostile_atlas  # the map's statistics of issue 24 (the atlas)

GENERATORS = GENERATORS + tuple(_hostile_front_door._with_data(g)
                                for g in _hostile_atlas.GENERATORS)
KNOWN_FAILURES = {**_hostile_scale.KNOWN_FAILURES, **_hostile_security.KNOWN_FAILURES,
                  **_hostile_atlas.KNOWN_FAILURES}


def build_cases():
    """Every case, in a fixed order (the same in the runner and in the workers)."""
    global _BUILT
    if _BUILT is None:
        cases = []
        for gen in GENERATORS:
            cases.extend(gen())
        ids = [c.id for c in cases]
        dup = {i for i in ids if ids.count(i) > 1} if len(set(ids)) != len(ids) else set()
        if dup:
            raise AssertionError(f"duplicate case ids: {sorted(dup)[:5]}")
        _BUILT = cases
    return _BUILT
