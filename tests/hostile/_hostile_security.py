"""Cases of the hostile suite for files and outputs a stranger controls (issue 30;
docs/security.md): what a model file, a corpus file, the text inside a corpus and the
names around an output may do to countgrid.

Classes of input added here:

``crafted-file``
    re-signed model files (the checksum recomputed, as an attacker does) of every saveable
    estimator whose header names a function as ``random_state``'s generator, a dtype
    parameter outside the table, parameters nested 100 deep or a JSON header nested
    100,000 deep, with undeclared members, members of object/record/void/datetime dtype,
    members named twice or not ``.npy``, each fitted attribute with a wrong dtype class,
    a wrong number of dimensions or a size that contradicts another array, scalars stored
    as arrays; re-signed corpus files with arrays of the wrong length or dtype, and the
    corpus inside a model file.  Loading must raise a ValueError naming the file (or the
    attribute) and neither touch NumPy's global generator nor create a file.
``bomb``
    model, corpus and sparse ``.npz`` files declaring 1.5 GB in 1.5 MB (consistent and
    inconsistent with their class), a zip member claiming more than deflate can give, a
    ``.npy`` header declaring 8 GB over 80 bytes, a 20 MB JSON header.  The error must be
    clear *and* the case's peak memory (tracemalloc, and the rise of the process's
    resident high-water mark) a few MB: under the workers' ``COUNTGRID_MAX_MEMORY=1G``
    and address-space limit an allocation of 1.5 GB would be a MemoryError, which the
    exception alone would not tell from a refusal.
``planted-output``
    every writer (``io.save``, ``CountingGrid.save``, ``Corpus.save``, ``write_html``,
    ``to_html``, ``write_memmap_csr``, ``write_npz_shards`` and the command line's ``fit``,
    ``vectorize``, ``transform``, ``top-words``, ``plot``, ``html``, ``demo --html``) whose
    output is a symbolic link to a victim file, has links or FIFOs planted at the fixed
    temporary names of 0.2.0.dev0 (``<out>.countgrid-partial.npz``,
    ``<out>.countgrid-partial``, ``<root>.countgrid-partial<ext>``, ``<out>.part``), is a
    FIFO, a device, a read-only file, or one of the command's inputs.  The victim, the
    planted names and the inputs must be unchanged, the output a complete regular file
    or the error clear, and no temporary file left.
``concurrent-writers``
    two writer processes (or threads) writing one output many times while the case reads
    it: every read succeeds and gives one of the two complete files.
``full-disk``
    every writer under a write limit (``RLIMIT_FSIZE`` with SIGXFSZ ignored, in a forked
    child): an OSError or a clear error, the previous file intact, no temporary file.
``formula-cells``
    ids and words starting with ``= + - @``, a tab or a carriage return: the command
    line's CSV/TSV tables (file and stdout) carry the leading apostrophe and leave numbers
    alone, ``--no-escape-formulas`` writes them raw, the map's data carry the flag.
``long-fields``
    200,000-character titles, ids, snippets, words, metadata names and values, and links
    ``javascript:``, ``data:``, ``file:``, `` \\tjavascript:``, ``//evil``: the map's data
    within the ``MAX_*_CHARS`` limits with only safe links, the page's size bounded.
``shared-estimator``
    several Python threads fitting one estimator at once (each call succeeds or raises
    the documented RuntimeError; the model is one whole fit, equal to a serial one), or
    running its inference methods (the results of a serial call).

A broken promise that no exception shows (a victim written, a temporary file left, 1.5 GB
allocated before the refusal, a mixed model) raises :class:`Violated` in the case:
:func:`classify_security` counts it as ``silent-wrong``.  The oracles implement the
promises of docs/security.md themselves (the link rule, the length limits, the formula
rule), so that the cases also run against a countgrid that predates them.
"""
import contextlib
import copy
import csv
import hashlib
import io
import json
import os
import re
import resource
import signal
import stat
import struct
import sys
import threading
import time
import tracemalloc
import traceback
import zlib

import numpy as np

import _hostile_cases as H
from _hostile_cases import D, EST, SAVEABLE, Case, make, model
import _hostile_front_door as F

TESTS = os.path.dirname(H.HERE)
MB = 2**20
#: What a refused bomb may take (tracemalloc peak; rise of the resident high-water mark).
BOMB_TRACED_LIMIT = 8 * MB
BOMB_RSS_LIMIT = 48 * MB
#: 1.5 GB, the size the bombs declare.
BOMB_BYTES = 1_500_000_000


def _cg():
    return H.cg


def _crafted():
    """tests/_crafted.py (re-signing model and corpus files, lying zip members)."""
    if TESTS not in sys.path:
        sys.path.insert(0, TESTS)
    import _crafted

    return _crafted


# ============================================================================ outcomes
class Violated(Exception):
    """A promise broken without an exception: a victim or an input written, a temporary
    file left, a file created, NumPy's global generator changed, memory taken by a refused
    file, a mixed model."""


def classify_security(case, value, exc):
    """The engine's classification (or the command line's), except that :class:`Violated`
    is ``silent-wrong``."""
    import _hostile_engine as E

    if isinstance(exc, Violated):
        return "silent-wrong", str(exc)[:400]
    if exc is None and isinstance(value, dict) and "skipped" in value:
        return "ok", value["skipped"]
    if case.id.startswith("cli") and (exc is not None or (isinstance(value, dict)
                                                          and "rc" in value)):
        return H.cli_classify(case, value, exc)
    plain = copy.copy(case)
    plain.classify = None
    return E.classify(plain, value, exc)


def classify_disk(case, value, exc):
    """A write under a full disk: any OSError is the right error (the kernel's message
    names no file), the rest as :func:`classify_security`."""
    if isinstance(exc, OSError) and not isinstance(exc, Violated):
        return "clear-error", ""
    if isinstance(value, dict) and "rc" in value and value["rc"] == 1 \
            and F._TRACEBACK not in value["err"] and "File too large" in value["err"]:
        return "clear-error", ""
    return classify_security(case, value, exc)


def readable(oracle):
    """``oracle`` whose own failure to read the result is the result's problem."""
    if oracle is None:
        return None

    def wrapped(value):
        try:
            return oracle(value)
        except Exception as exc:  # noqa: BLE001 - an output that cannot be read is wrong
            return f"the output cannot be read: {type(exc).__name__}: {str(exc)[:200]}"
    return wrapped


def _case(entry, method, klass, variant, expect, run, names, oracle=None, needs=(), **kw):
    kw.setdefault("classify", classify_security)
    kw.setdefault("files", True)
    return Case(entry, method, klass, variant, expect, run, names, readable(oracle), needs,
                **kw)


# ============================================================================ folders
def _sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(MB), b""):
            h.update(block)
    return h.hexdigest()


def _entry(path):
    """What is at ``path``, without following links or opening anything but regular
    files: ("link", target), ("file", sha256, mode bits), ("dir",), ("fifo",), ..."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        return ("link", os.readlink(path))
    if stat.S_ISREG(mode):
        return ("file", _sha(path), stat.S_IMODE(mode))
    if stat.S_ISDIR(mode):
        return ("dir",)
    if stat.S_ISFIFO(mode):
        return ("fifo",)
    if stat.S_ISCHR(mode):
        return ("char device", st.st_rdev)
    return ("special", stat.S_IFMT(mode))


def snapshot(root):
    """{relative path: _entry} of everything below ``root`` (not following links)."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            p = os.path.join(folder, name)
            out[os.path.relpath(p, root)] = _entry(p)
    return out


def changes(before, after, allowed=()):
    """Descriptions of what changed between two snapshots, except the paths ``allowed``
    (which may appear or change, but must then be regular files)."""
    found = []
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name), after.get(name)
        if name in allowed:
            if b is not None and b[0] != "file" and b != a:
                found.append(f"{name} is now a {b[0]}")
            continue
        if a == b:
            continue
        if a is None:
            found.append(f"{name} appeared ({b[0]})")
        elif b is None:
            found.append(f"{name} disappeared")
        elif a[0] == "file" and b[0] == "file":
            found.append(f"{name} was written")
        else:
            found.append(f"{name} changed from a {a[0]} to a {b[0]}")
    return found


@contextlib.contextmanager
def in_folder(path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _global_state():
    key, pos = np.random.get_state()[1:3]
    return hashlib.sha256(key.tobytes()).hexdigest(), int(pos)


def guarded_load(ctx, load):
    """``load()`` run in the case's folder; afterwards NumPy's global generator must be as
    it was and no file may have appeared (a crafted file selected no code)."""
    state, before = _global_state(), snapshot(ctx.tmp)
    try:
        with in_folder(ctx.tmp):
            value = load()
    except BaseException:
        _after_load(ctx, state, before)
        raise
    _after_load(ctx, state, before)
    return value


def _after_load(ctx, state, before):
    if _global_state() != state:
        raise Violated("loading the file changed NumPy's global random state")
    changed = changes(before, snapshot(ctx.tmp))
    if changed:
        raise Violated("loading the file changed its folder: " + "; ".join(changed[:3]))


# ============================================================================ crafted-file
#: The fitted attributes of each saveable estimator's file, as countgrid 0.2 saves the
#: models of _hostile_cases.EST: ``name:kind:dtype class:axis`` (kind ``a`` array or ``s``
#: scalar; the dtype class of the schema; the axis whose size another attribute fixes, or
#: ``-``); children of meta-estimators by their key in the file.
ATTRS = {
    "CountingGrid": "pi_:a:float:2 log_likelihood_:a:float:- n_iter_:s:int converged_:s:bool "
                    "pseudocount_:s:real posterior_floor_:s:real n_features_in_:s:int "
                    "n_batch_iter_:s:int",
    "LayeredCountingGrid": "pi_:a:float:3 layer_prior_:a:float:2 log_likelihood_:a:float:- "
                           "n_iter_:s:int converged_:s:bool pseudocount_:s:real "
                           "posterior_floor_:s:real n_features_in_:s:int grid_n_iter_:s:int",
    "TimeSlicedCountingGrid": "pi_:a:float:3 period_labels_:a:str:0 n_documents_:a:int:0 "
                              "log_likelihood_:a:float:0 n_iter_:a:int:0 "
                              "anchor_weight_:a:float:0 period_:s:str pseudocount_:s:real "
                              "posterior_floor_:s:real n_features_in_:s:int",
    "CountingGridClassifier": "gamma_:a:float:2 classes_:a:label:0 n_features_in_:s:int "
                              "grid_/pi_:a:float:2",
    "CountingGridRegressor": "gamma_:a:float:0 n_features_in_:s:int grid_/pi_:a:float:2",
    "GenerativeCountingGridClassifier": "classes_:a:label:0 n_features_in_:s:int "
                                        "grids_.0/pi_:a:float:2",
    "PLSA": "components_:a:float:1 doc_topic_:a:float:1 log_likelihood_:a:float:- "
            "beta_:s:real n_iter_:s:int converged_:s:bool n_features_in_:s:int "
            "n_batch_iter_:s:int",
    "ZIPGTM": "latent_:a:float:0 basis_centers_:a:float:1 phi_:a:float:1 rate_coef_:a:float:1 "
              "zero_coef_:a:float:0 mixing_:a:float:0 log_likelihood_:a:float:0 "
              "objective_:a:float:0 n_iter_:s:int converged_:s:bool n_features_in_:s:int",
    "RAP": "components_:a:float:1 intercept_visible_:a:float:0 intercept_hidden_:a:float:0 "
           "n_trials_:a:float:0 auto_learning_rate_:s:real n_iter_:s:int n_updates_:s:int "
           "stream_seed_:s:int n_features_in_:s:int velocity_components_:a:float:0 "
           "velocity_visible_:a:float:0 velocity_hidden_:a:float:0",
    "LSI": "components_:a:float:1 singular_values_:a:float:0 idf_:a:float:0 "
           "n_features_in_:s:int",
    "MixtureOfTopics": "classes_:a:label:0 n_features_in_:s:int models_.0/components_:a:float:1",
    "FisherScore": "classes_:a:label:0 n_features_in_:s:int topic_prior_:a:float:0 "
                   "models_.0/components_:a:float:1",
    "TOPEmbedding": "classes_:a:label:0 n_features_in_:s:int log_priors_:a:float:1 "
                    "shift_:a:float:- models_.0/components_:a:float:1",
    "LLREmbedding": "classes_:a:label:0 n_features_in_:s:int log_priors_:a:float:1 "
                    "shift_:a:float:- models_.0/components_:a:float:1",
    "FreeEnergyScoreSpace": "classes_:a:label:0 n_features_in_:s:int "
                            "models_.0/components_:a:float:1",
    "PosteriorDivergence": "classes_:a:label:0 n_features_in_:s:int topic_mass_:a:float:0 "
                           "models_.0/components_:a:float:1",
    "CountingGridPosterior": "classes_:a:label:0 n_features_in_:s:int models_.0/pi_:a:float:2",
    "CountingGridFESS": "classes_:a:label:0 n_features_in_:s:int models_.0/pi_:a:float:2",
    "HistogramGMM": "means_:a:float:1 covariances_:a:float:2 weights_:a:float:0 "
                    "log_likelihood_:a:float:- n_iter_:s:int converged_:s:bool n_dims_:s:int",
}

#: What each schema dtype class is replaced by (a class the schema does not allow).
_WRONG_DTYPE = {"float": np.int64, "label": np.complex128, "int": np.float64,
                "bool": np.int8, "real": str, "str": np.bytes_}

#: Names a crafted ``random_state`` gives its "bit generator": functions and classes of
#: numpy.random (0.2.0.dev0 called ``getattr(numpy.random, name)()``).
GENERATOR_NAMES = ["seed", "test", "get_state", "set_state", "default_rng", "RandomState",
                   "bytes", "__class__", "random", "Generator", ""]

_SAVED = {}


def saved(name):
    """(header, arrays) of ``model(name)`` saved by countgrid (cached per worker)."""
    if name not in _SAVED:
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                            f"countgrid-hostile-{os.getpid()}-{name}.npz")
        try:
            model(name).save(path)
            _SAVED[name] = _crafted().read_model(path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
    header, arrays = _SAVED[name]
    return json.loads(json.dumps(header)), dict(arrays)


def _resign(header, arrays):
    from countgrid._utils.npz import digest

    header.pop("sha256", None)
    header["sha256"] = digest(header, arrays)


def _write_model(path, header, arrays, resign=True):
    if resign:
        _resign(header, arrays)
    np.savez_compressed(path, **arrays, __countgrid__=np.array(json.dumps(header)))
    return path


def _npy(arr, allow_pickle=False):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, allow_pickle=allow_pickle)
    return buf.getvalue()


def _raw_model(path, header, arrays, extra=(), replace=None, resign=True):
    """A model file written member by member (``extra``: more (name, bytes) members, after
    the others; ``replace``: {member name: bytes})."""
    import warnings
    import zipfile

    if resign:
        _resign(header, arrays)
    members = [(f"{k}.npy", _npy(v)) for k, v in arrays.items()]
    members.append(("__countgrid__.npy", _npy(np.array(json.dumps(header)))))
    if replace:
        members = [(n, replace.get(n, b)) for n, b in members]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")           # zipfile warns about duplicate names
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            for n, b in list(members) + list(extra):
                z.writestr(n, b)
    return path


def _params_key(header):
    params = header["model"]["params"]
    return "dtype" if "dtype" in params else "random_state"


def _first_param(header):
    params = header["model"]["params"]
    for key in ("extent", "grid_shape", "n_components", "kernel"):
        if key in params:
            return key
    return sorted(params)[0]


def _nested(value, depth):
    for _ in range(depth):
        value = {"__seq__": "tuple", "items": [value]}
    return value


def _generator(name):
    return {"__generator__": name, "state": {"bit_generator": name,
                                             "state": {"state": 1, "inc": 1},
                                             "has_uint32": 0, "uinteger": 0}}


def _crafted_load_case(name, variant, build, names=(), loader=None, needs=()):
    """Load the crafted file ``build(ctx, path)`` of estimator ``name`` (through
    ``countgrid.load`` or ``loader(path)``): a clear ValueError, nothing else changed."""
    def run(ctx):
        path = ctx.path("model.npz")
        build(ctx, path)
        return guarded_load(ctx, lambda: (loader or _cg().load)(path))

    return _case(name, "load", "crafted-file", variant, "raise", run,
                 ("model.npz",) + tuple(names), None, H._est_needs(name) + tuple(needs),
                 recycle=True, error=ValueError)


def _header_change(name, fn):
    def build(ctx, path):
        header, arrays = saved(name)
        fn(header, arrays)
        _write_model(path, header, arrays)
    return build


def _attr_change(name, key, how, dtype_class):
    def build(ctx, path):
        header, arrays = saved(name)
        a = arrays[key]
        if how == "dtype":
            wrong = _WRONG_DTYPE[dtype_class]
            arrays[key] = np.asarray(a.astype(str) if wrong is str else
                                     np.round(a).astype(wrong) if a.dtype.kind == "f"
                                     and wrong is np.int64 else a.astype(wrong))
        elif how == "ndim":
            arrays[key] = a[..., None].copy()
        elif how.startswith("shape"):
            axis = int(how.split("-")[1])
            arrays[key] = np.concatenate([a, np.take(a, [0], axis=axis)], axis=axis)
        elif how == "as-array":
            arrays[key] = np.asarray(a).reshape(1)
        _write_model(path, header, arrays)
    return build


def _member_change(name, how):
    def build(ctx, path):
        header, arrays = saved(name)
        first = next(k for k in arrays if arrays[k].ndim >= 1 and arrays[k].dtype.kind == "f")
        ctx.extra_names.append(first)
        if how == "undeclared":
            arrays["evil_"] = np.zeros(3)
            _write_model(path, header, arrays)
            return
        replace, extra = {}, []
        a = arrays[first]
        if how == "object":
            replace[f"{first}.npy"] = _npy(np.array([1, "a", None], dtype=object), True)
        elif how == "record":
            replace[f"{first}.npy"] = _npy(np.zeros(a.shape, dtype=[("a", "<f8"), ("b", "<i4")]))
        elif how == "void":
            replace[f"{first}.npy"] = _npy(np.zeros(a.shape, dtype="V8"))
        elif how == "datetime":
            replace[f"{first}.npy"] = _npy(np.zeros(a.shape, dtype="M8[s]"))
        elif how == "twice":
            extra.append((f"{first}.npy", _npy(np.zeros_like(a))))
        elif how == "not-npy":
            extra.append(("notes.txt", b"hello"))
        elif how == "dotdot":
            extra.append(("../evil.npy", _npy(np.zeros(3))))
        _raw_model(path, header, arrays, extra=extra, replace=replace)
    return build


def _deep_header(name):
    def build(ctx, path):
        header, arrays = saved(name)
        _resign(header, arrays)
        text = json.dumps(header)[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}"
        np.savez_compressed(path, **arrays, __countgrid__=np.array(text))
    return build


def gen_crafted_models():
    out = []
    for i, name in enumerate(SAVEABLE):
        v = []
        for j in range(3):
            g = GENERATOR_NAMES[(3 * i + j) % len(GENERATOR_NAMES)]
            v.append((f"random_state-{g or 'empty'}", _header_change(
                name, lambda h, a, g=g: h["model"]["params"].__setitem__(
                    "random_state", _generator(g))), ("random_state",)))
        for dt in ("O", "i4,f8", "M8[s]"):
            v.append((f"dtype-{dt}", _header_change(
                name, lambda h, a, dt=dt: h["model"]["params"].__setitem__(
                    _params_key(h), {"__dtype__": dt})), ("dtype",)))
        v.append(("params-nested-100", _header_change(
            name, lambda h, a: h["model"]["params"].__setitem__(
                _first_param(h), _nested(h["model"]["params"][_first_param(h)], 100))), ()))
        v.append(("header-nested-100000", _deep_header(name), ()))
        for how in ("undeclared", "object", "record", "void", "datetime", "twice", "not-npy",
                    "dotdot"):
            v.append((f"member-{how}", _member_change(name, how),
                      ("evil_", "notes.txt", "../evil.npy")))
        for spec in ATTRS[name].split():
            key, kind, dtype_class, axis = (spec.split(":") + ["-"])[:4]
            attr = key.rsplit("/", 1)[-1]
            hows = ["dtype", "as-array"] if kind == "s" else ["dtype", "ndim"]
            if kind == "a" and axis != "-":
                hows.append(f"shape-{axis}")
            for how in hows:
                v.append((f"{key}-{how}", _attr_change(name, key, how, dtype_class),
                          (attr, key)))
        for variant, build, names in v:
            out.append(_crafted_load_case(name, variant, build, names))
    # the same file through the class's own load and io.load_corpus
    out.append(_crafted_load_case("PLSA", "random_state-seed-via-PLSA.load",
                                  _header_change("PLSA", lambda h, a: h["model"]["params"]
                                                 .__setitem__("random_state",
                                                              _generator("seed"))),
                                  ("random_state",), loader=lambda p: _cg().PLSA.load(p),
                                  needs=("countgrid.PLSA.load",)))
    return out


# ---------------------------------------------------------------- corpus files
def _corpus_dict():
    return F.corpus(links=[f"https://example.org/{i}" for i in range(40)],
                    snippets=[f"snippet {i}" for i in range(40)]).to_dict()


def _corpus_change(fn):
    def build(ctx, path):
        arrays = _corpus_dict()
        fn(arrays)
        _crafted().resign_corpus_arrays(arrays)
        np.savez_compressed(path, **arrays)
    return build


CORPUS_CHANGES = [
    ("titles-too-long", lambda a: a.__setitem__("titles", np.concatenate(
        [a["titles"], a["titles"][:1]])), ("titles",)),
    ("ids-too-short", lambda a: a.__setitem__("ids", a["ids"][:-1]), ("ids",)),
    ("snippets-2-D", lambda a: a.__setitem__("snippets", a["snippets"][:, None]), ("snippets",)),
    ("links-int", lambda a: a.__setitem__("links", np.arange(40)), ("links",)),
    ("vocabulary-float", lambda a: a.__setitem__("vocabulary", np.arange(12.0)),
     ("vocabulary",)),
    ("vocabulary-too-long", lambda a: a.__setitem__("vocabulary", np.array(
        [f"v{i}" for i in range(13)])), ("vocabulary",)),
    ("counts_data-str", lambda a: a.__setitem__("counts_data", a["counts_data"].astype(str)),
     ("counts_data",)),
    ("counts_data-too-long", lambda a: a.__setitem__("counts_data", np.concatenate(
        [a["counts_data"], a["counts_data"][:5]])), ("counts_data",)),
    ("counts_indices-float", lambda a: a.__setitem__("counts_indices",
                                                     a["counts_indices"] + 0.5),
     ("counts_indices",)),
    ("counts_indptr-too-short", lambda a: a.__setitem__("counts_indptr",
                                                        a["counts_indptr"][:-1]),
     ("counts_indptr",)),
    ("counts_shape-3", lambda a: a.__setitem__("counts_shape", np.array([40, 12, 1])),
     ("counts_shape",)),
    ("metadata-too-short", lambda a: a.__setitem__("metadata_0", a["metadata_0"][:-3]),
     ("metadata_0", "group")),
    ("metadata-object", None, ("metadata_0", "group")),
]


def _corpus_object_member(ctx, path):
    arrays = _corpus_dict()
    _crafted().resign_corpus_arrays(arrays)
    members = {f"{k}.npy": _npy(v) for k, v in arrays.items()}
    members["metadata_0.npy"] = _npy(np.array([{"a": 1}] * 40, dtype=object), True)
    _crafted().zip_members(path, members)


def _corpus_header(how):
    """A corpus file whose JSON header nests 100,000 deep, or declares 20 MB."""
    def build(ctx, path):
        arrays = _corpus_dict()
        header = json.loads(str(arrays["header"]))
        if how == "deep":
            text = json.dumps(header)[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}"
            arrays["header"] = np.array(text)
        else:
            header["padding"] = " " * (5 * MB)
            arrays["header"] = np.array(json.dumps(header))
            _crafted().resign_corpus_arrays(arrays)
        np.savez_compressed(path, **arrays)
        return path
    return build


def gen_crafted_corpora():
    out = []
    need = ("countgrid.text.Corpus",)
    for variant, fn, names in CORPUS_CHANGES + [("header-nested-100000", "deep", ("header",))]:
        build = (_corpus_object_member if fn is None else _corpus_header(fn)
                 if isinstance(fn, str) else _corpus_change(fn))

        def run(ctx, build=build):
            path = ctx.path("corpus.npz")
            build(ctx, path)
            return guarded_load(ctx, lambda: _cg().text.Corpus.load(path))
        out.append(_case("text.Corpus", "load", "crafted-file", variant, "raise", run,
                         ("corpus.npz",) + names, None, need, recycle=True))

    # the corpus inside a model file: its arrays changed, both checksums recomputed
    def in_model(fn):
        def build(ctx, path):
            _cg().io.save(model("CountingGrid"), path, corpus=F.corpus(
                links=[f"https://example.org/{i}" for i in range(40)]))
            header, arrays = _crafted().read_model(path)
            inner = {k[len("corpus:"):]: v for k, v in arrays.items() if k.startswith("corpus:")}
            if fn is not None:
                fn(inner)
            _crafted().resign_corpus_arrays(inner)
            arrays = {k: v for k, v in arrays.items() if not k.startswith("corpus:")}
            arrays.update({"corpus:" + k: v for k, v in inner.items()})
            header["corpus"] = sorted(inner)
            _write_model(path, header, arrays)
        return build

    loaders = [("load", "", lambda p: _cg().load(p), ("countgrid.load",)),
               ("io.load_corpus", "", lambda p: _cg().io.load_corpus(p),
                ("countgrid.io.load_corpus",)),
               ("load", "-return_corpus", lambda p: _cg().load(p, return_corpus=True),
                ("countgrid.load",))]
    for k, (variant, fn, names) in enumerate(CORPUS_CHANGES[:-1]):
        entry, suffix, loader, needs = loaders[k % len(loaders)]

        def run(ctx, fn=fn, loader=loader):
            path = ctx.path("model.npz")
            in_model(fn)(ctx, path)
            return guarded_load(ctx, lambda: loader(path))
        out.append(_case(entry, "", "crafted-file", f"corpus-in-model-{variant}{suffix}",
                         "raise", run, ("model.npz", "corpus") + names, None, needs,
                         recycle=True))
    return out


# ============================================================================ bomb
def _npy_header(descr, shape):
    """The bytes of a version 1.0 ``.npy`` header (data follow it)."""
    text = "{'descr': %r, 'fortran_order': False, 'shape': %r, }" % (descr, tuple(shape))
    pad = 64 - (10 + len(text) + 1) % 64
    text = text + " " * (pad % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin1")


def _gf2_times(mat, vec):
    s, i = 0, 0
    while vec:
        if vec & 1:
            s ^= mat[i]
        vec >>= 1
        i += 1
    return s


def _gf2_square(mat):
    return [_gf2_times(mat, mat[n]) for n in range(32)]


def crc32_zeros(crc, n):
    """``zlib.crc32(bytes(n), crc)`` in O(log n) (zlib's crc32_combine operator)."""
    reg = crc ^ 0xFFFFFFFF
    odd = [0xEDB88320] + [1 << k for k in range(31)]     # one zero bit
    even = _gf2_square(odd)                              # two
    odd = _gf2_square(even)                              # four
    while n:
        even = _gf2_square(odd)                          # eight: one byte, then 2^k bytes
        if n & 1:
            reg = _gf2_times(even, reg)
        n >>= 1
        if not n:
            break
        odd = _gf2_square(even)
        if n & 1:
            reg = _gf2_times(odd, reg)
        n >>= 1
    return reg ^ 0xFFFFFFFF


_ZERO_BLOCK = {}


def _deflated_zeros(n):
    """A raw deflate stream (not final) of ``n`` zero bytes, made of one compressed MiB of
    zeros repeated (each piece ends with a full flush: no reference crosses it)."""
    if "mib" not in _ZERO_BLOCK:
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        _ZERO_BLOCK["mib"] = c.compress(bytes(MB)) + c.flush(zlib.Z_FULL_FLUSH)
    q, r = divmod(n, MB)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return _ZERO_BLOCK["mib"] * q + c.compress(bytes(r)) + c.flush(zlib.Z_FULL_FLUSH)


class Member:
    """One zip member: deflated bytes, CRC and sizes (a bomb's data never exists whole)."""

    def __init__(self, name, data=None, header=None, zeros=0):
        self.name = name
        if data is not None:
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            self.comp = c.compress(data) + c.flush()
            self.crc, self.size = zlib.crc32(data), len(data)
        else:
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            head = c.compress(header) + c.flush(zlib.Z_FULL_FLUSH)
            end = zlib.compressobj(6, zlib.DEFLATED, -15).flush()       # final empty block
            self.comp = head + _deflated_zeros(zeros) + end
            self.crc = crc32_zeros(zlib.crc32(header), zeros)
            self.size = len(header) + zeros


def write_zip(path, members):
    """A zip archive of deflated ``members`` (no zip64: every size below 4 GiB)."""
    with open(path, "wb") as fh:
        central = []
        for m in members:
            name = m.name.encode()
            offset = fh.tell()
            fh.write(struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 8, 0, 0x21, m.crc,
                                 len(m.comp), m.size, len(name), 0) + name)
            fh.write(m.comp)
            central.append(struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, 8, 0,
                                       0x21, m.crc, len(m.comp), m.size, len(name), 0, 0, 0,
                                       0, 0, offset) + name)
        start = fh.tell()
        for c in central:
            fh.write(c)
        fh.write(struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(central), len(central),
                             fh.tell() - start, start, 0))
    return path


def _members_of(header, arrays, big=None):
    """Members of a model file; ``big``: {name: (descr, shape)} written as zeros."""
    out = []
    for k, v in arrays.items():
        if big and k in big:
            descr, shape = big[k]
            n = int(np.prod(shape)) * np.dtype(descr).itemsize
            out.append(Member(f"{k}.npy", header=_npy_header(descr, shape), zeros=n))
        else:
            out.append(Member(f"{k}.npy", data=_npy(v)))
    if header is not None:
        out.append(Member("__countgrid__.npy", data=_npy(np.array(json.dumps(header)))))
    return out


def _bomb_model(name, attr, axis, consistent):
    """A model file of ``name`` whose ``attr`` declares 1.5 GB of zeros (its size along
    ``axis`` grown); ``consistent``: n_features_in_ says so too (then only max_bytes or
    the memory budget can refuse it).  Its checksum is not recomputed: a loader can verify
    it only after reading everything."""
    def build(ctx, path):
        header, arrays = saved(name)
        shape = list(arrays[attr].shape)
        rest = int(np.prod(shape)) // shape[axis]
        shape[axis] = BOMB_BYTES // 8 // rest
        if consistent:
            arrays["n_features_in_"] = np.array(shape[axis])
        header["sha256"] = "0" * 64
        write_zip(path, _members_of(header, arrays, {attr: ("<f8", shape)}))
        return path
    return build


def _bomb_corpus(consistent, key="titles"):
    """A corpus file whose ``titles`` (fixed-width strings: one long title makes them all
    that wide) or ``counts_data`` declare 1.5 GB."""
    def build(ctx, path):
        arrays = _corpus_dict()
        n = len(arrays["ids"])
        if key == "titles":
            rows = n if consistent else n + 1
            big = {key: (f"<U{BOMB_BYTES // 4 // rows}", (rows,))}
        else:
            big = {key: ("<i4", (BOMB_BYTES // 4,))}
        write_zip(path, _members_of(None, arrays, big))
        return path
    return build


def _corpus_in_model_bomb(ctx, path):
    """The titles of the corpus inside a model file declare 1.5 GB."""
    header, arrays = saved("CountingGrid")
    inner = _corpus_dict()
    header["corpus"] = sorted(inner)
    header["sha256"] = "0" * 64
    arrays.update({"corpus:" + k: v for k, v in inner.items()})
    big = {"corpus:titles": (f"<U{BOMB_BYTES // 4 // 40}", (40,))}
    write_zip(path, _members_of(header, arrays, big))
    return path


def _bomb_scipy(consistent):
    """A scipy.sparse .npz whose data (and indices) declare 1.5 GB."""
    def build(ctx, path):
        nnz = BOMB_BYTES // 12
        members = [Member("format.npy", data=_npy(np.array("csr"))),
                   Member("shape.npy", data=_npy(np.array([1, nnz if consistent else 12])))]
        members.append(Member("data.npy", header=_npy_header("<f8", (nnz,)), zeros=8 * nnz))
        members.append(Member("indices.npy", header=_npy_header("<i4", (nnz,)), zeros=4 * nnz))
        members.append(Member("indptr.npy", data=_npy(np.array([0, nnz], dtype=np.int32))))
        write_zip(path, members)
        return path
    return build


def _lying_member(kind):
    def build(ctx, path):
        if kind == "model":
            model("CountingGrid").save(path)
            member = "pi_.npy"
        else:
            F.corpus().save(path)
            member = "counts_data.npy"
        _crafted().lie_about_size(path, member, 2**31)
        return path
    return build


def _npy_header_lies(ctx, path):
    """pi_.npy's header declares 10**9 float64 (8 GB); the member holds 80 bytes and the
    zip sizes agree with them."""
    header, arrays = saved("CountingGrid")
    members = [Member(f"{k}.npy", data=_npy(v)) for k, v in arrays.items() if k != "pi_"]
    members.append(Member("pi_.npy", data=_npy_header("<f8", (10**9,)) + bytes(80)))
    members.append(Member("__countgrid__.npy", data=_npy(np.array(json.dumps(header)))))
    write_zip(path, members)
    return path


def _fat_header(ctx, path):
    """A JSON header of 20 MB (5 million characters, UTF-32 in the file)."""
    header, arrays = saved("CountingGrid")
    header["padding"] = " " * (5 * MB)
    _write_model(path, header, arrays)
    return path


def _status_kb(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return None


def _reset_high_water_mark():
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def measured(fn):
    """(value, exception, tracemalloc peak, rise of the resident high-water mark or None)
    of ``fn()``."""
    fresh = _reset_high_water_mark()
    rss = _status_kb("VmRSS") if fresh else None
    tracemalloc.start()
    value = exc = None
    try:
        try:
            value = fn()
        except Exception as e:  # noqa: BLE001 - returned to the case
            exc = e
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    rise = _status_kb("VmHWM") - rss if fresh and rss is not None else None
    return value, exc, peak, rise


def _bomb_case(entry, method, variant, build, load, names, needs, env=None, name="bomb.npz"):
    """Load the bomb ``build`` makes: a clear error, within BOMB_*_LIMIT of memory."""
    def run(ctx):
        path = ctx.path(name)
        build(ctx, path)
        saved_env = {k: os.environ.get(k) for k in (env or {})}
        os.environ.update(env or {})
        try:
            value, exc, peak, rise = measured(lambda: guarded_load(ctx, lambda: load(path)))
        finally:
            for k, v in saved_env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        what = (f"{type(exc).__name__}" if exc is not None else "returning")
        if peak > BOMB_TRACED_LIMIT or (rise is not None and rise > BOMB_RSS_LIMIT):
            raise Violated(f"took {peak / MB:.0f} MB (traced), resident high-water mark up "
                           f"{(rise or 0) / MB:.0f} MB, before {what}; "
                           f"{str(exc)[:120] if exc else ''}")
        if isinstance(exc, Violated) or exc is not None:
            raise exc
        return value

    return _case(entry, method, "bomb", variant, "raise", run, (name,) + tuple(names), None,
                 needs, timeout=60.0, recycle=True, cost=5.0)


def _cli_bomb_case(verb, variant, build, args, names):
    def run(ctx):
        build(ctx, ctx.path("bomb.npz"))
        value, exc, peak, rise = measured(lambda: F.cli_run(args, ctx))
        if peak > BOMB_TRACED_LIMIT or (rise is not None and rise > BOMB_RSS_LIMIT):
            raise Violated(f"took {peak / MB:.0f} MB (traced), resident high-water mark up "
                           f"{(rise or 0) / MB:.0f} MB; exit status "
                           f"{value['rc'] if value else '?'}")
        if exc is not None:
            raise exc
        return value

    return _case("cli", verb, "bomb", variant, "raise", run, ("bomb.npz", "MODEL") + names,
                 None, ("countgrid.cli.main",), timeout=60.0, recycle=True, cost=5.0)


def gen_bombs():
    out = []
    load = ("countgrid.load",)
    cl = ("countgrid.text.Corpus",)
    for name, attr, axis in (("CountingGrid", "pi_", 2), ("PLSA", "components_", 1)):
        out.append(_bomb_case("load", "", f"{name}-{attr}-inconsistent",
                              _bomb_model(name, attr, axis, False), lambda p: _cg().load(p),
                              (attr,), load))
        out.append(_bomb_case("load", "", f"{name}-{attr}-consistent",
                              _bomb_model(name, attr, axis, True), lambda p: _cg().load(p),
                              (attr, "max_bytes"), load))
        out.append(_bomb_case("load", "", f"{name}-{attr}-consistent-max_bytes=1G",
                              _bomb_model(name, attr, axis, True),
                              lambda p: _cg().load(p, max_bytes="1G"), ("max_bytes",), load))
    out.append(_bomb_case("load", "", "CountingGrid-pi_-consistent-COUNTGRID_MAX_LOAD_BYTES=1G",
                          _bomb_model("CountingGrid", "pi_", 2, True), lambda p: _cg().load(p),
                          ("max_bytes",), load, env={"COUNTGRID_MAX_LOAD_BYTES": "1G"}))
    out.append(_bomb_case("CountingGrid", "load", "pi_-consistent",
                          _bomb_model("CountingGrid", "pi_", 2, True),
                          lambda p: _cg().CountingGrid.load(p), ("pi_", "max_bytes"),
                          ("countgrid.CountingGrid.load",)))
    out.append(_bomb_case("load", "", "member-claims-more-than-deflate-gives",
                          _lying_member("model"), lambda p: _cg().load(p), ("pi_.npy",), load))
    out.append(_bomb_case("load", "", "npy-header-declares-8GB", _npy_header_lies,
                          lambda p: _cg().load(p), ("pi_.npy", "pi_"), load))
    out.append(_bomb_case("load", "", "header-20MB", _fat_header, lambda p: _cg().load(p),
                          ("__countgrid__",), load))
    # corpora
    for variant, build, kw, names in [
            ("titles-consistent", _bomb_corpus(True), {}, ("titles", "max_bytes")),
            ("titles-consistent-max_bytes=1G", _bomb_corpus(True), {"max_bytes": "1G"},
             ("max_bytes",)),
            ("titles-inconsistent", _bomb_corpus(False), {}, ("titles",)),
            ("counts_data-inconsistent", _bomb_corpus(False, "counts_data"), {},
             ("counts_data",)),
            ("member-claims-more-than-deflate-gives", _lying_member("corpus"), {},
             ("counts_data.npy",)),
            ("header-20MB", _corpus_header("fat"), {}, ("header",))]:
        out.append(_bomb_case("text.Corpus", "load", variant, build,
                              lambda p, kw=kw: _cg().text.Corpus.load(p, **kw), names, cl))
    out.append(_bomb_case("io.load_corpus", "", "corpus-titles-consistent",
                          _corpus_in_model_bomb, lambda p: _cg().io.load_corpus(p),
                          ("titles", "corpus", "max_bytes"), ("countgrid.io.load_corpus",)))
    out.append(_bomb_case("load", "", "corpus-titles-consistent", _corpus_in_model_bomb,
                          lambda p: _cg().load(p), ("titles", "corpus", "max_bytes"), load))
    # sparse .npz read by the other readers
    for entry, load_fn, needs in [
            ("text.read_corpus", lambda p: _cg().text.read_corpus(p),
             ("countgrid.text.read_corpus",)),
            ("streaming.NpzShards", lambda p: list(
                __import__("countgrid.streaming").streaming.NpzShards([p]).chunks()),
             ("countgrid.streaming.NpzShards",)),
            ("datasets.load_npz_corpus", lambda p: _cg().datasets.load_npz_corpus(p),
             ("countgrid.datasets.load_npz_corpus",))]:
        for consistent in (True, False):
            kind = "consistent" if consistent else "inconsistent"
            out.append(_bomb_case(entry, "", f"scipy-npz-{kind}", _bomb_scipy(consistent),
                                  load_fn,
                                  ("data", "indices", "shape", "max_bytes"), needs))
    # the command line
    out.append(_cli_bomb_case("transform", "model-consistent",
                              _bomb_model("CountingGrid", "pi_", 2, True),
                              ["transform", "bomb.npz", "-o", "p.csv"], ("--max-bytes",)))
    out.append(_cli_bomb_case("html", "corpus-in-model", _corpus_in_model_bomb,
                              ["html", "bomb.npz", "-o", "m.html"], ("--max-bytes",)))
    out.append(_cli_bomb_case("top-words", "model-consistent-max-bytes=1G",
                              _bomb_model("CountingGrid", "pi_", 2, True),
                              ["top-words", "bomb.npz", "--max-bytes", "1G", "-o", "t.tsv"],
                              ("--max-bytes", "max_bytes")))
    return out


# ============================================================================ outputs
VICTIM = "victim.txt"
PRECIOUS = "precious: must never be written\n"
OUT = "out"


def partial_names(target):
    """The fixed temporary names 0.2.0.dev0 wrote through, beside ``target``."""
    root, ext = os.path.splitext(target)
    names = [target + ".countgrid-partial.npz", target + ".countgrid-partial",
             root + ".countgrid-partial" + ext, target + ".part"]
    return list(dict.fromkeys(names))


def _st():
    import countgrid.streaming as st

    return st


def _check_model(cls_name):
    def check(path):
        est = _cg().load(path)
        if type(est).__name__ != cls_name:
            return f"the output holds a {type(est).__name__}, not a {cls_name}"
        return None
    return check


def _differing_array(est, ref):
    """The first fitted attribute of ``ref`` that ``est`` lacks or holds differently."""
    got = H.fitted_arrays(est)
    for key, value in H.fitted_arrays(ref).items():
        if got.get(key) is None or not np.array_equal(got[key], value):
            return key
    return None


def _check_model_equal(name):
    def check(path):
        key = _differing_array(_cg().load(path), model(name))
        return None if key is None else f"the output's {key} differs from the model saved"
    return check


def _check_corpus(n=40):
    def check(path):
        c = _cg().text.Corpus.load(path)
        if len(c) != n:
            return f"the output holds {len(c)} documents, expected {n}"
        return None
    return check


def _check_html(path):
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if not text.startswith("<!DOCTYPE html>") or not text.rstrip().endswith("</html>"):
        return f"the output is not a complete page ({len(text)} characters)"
    return None


def _check_table(delimiter, rows=None):
    def check(path):
        with open(path, encoding="utf-8", newline="") as fh:
            got = list(csv.reader(fh, delimiter=delimiter))
        if not got or (rows is not None and len(got) != rows + 1):
            return f"the table has {len(got)} lines, expected {rows + 1 if rows else 'some'}"
        if len({len(r) for r in got}) != 1:
            return "the table's rows have different lengths"
        return None
    return check


def _check_png(path):
    with open(path, "rb") as fh:
        data = fh.read()
    if not data.startswith(b"\x89PNG\r\n\x1a\n") or not data.endswith(b"IEND\xaeB`\x82"):
        return f"the output is not a complete PNG ({len(data)} bytes)"
    return None


def _check_rows(reader):
    def check(folder):
        src = reader(folder)
        parts = [c.toarray() if hasattr(c, "toarray") else np.asarray(c) for c in src.chunks()]
        got = np.vstack(parts) if parts else np.zeros((0, 12))
        if got.shape != D.X.shape or not np.array_equal(got, D.X):
            return f"the folder reads back {got.shape}, not the {D.X.shape} written"
        return None
    return check


def _written_shards(folder):
    """The shards write_npz_shards writes (``NpzShards(folder)`` would also read the
    ``.npz`` files planted beside them)."""
    return _st().NpzShards(sorted(os.path.join(folder, f) for f in os.listdir(folder)
                                  if re.fullmatch(r"shard-\d{5}\.npz", f)))


class Writer:
    """A writer of the package: ``write(ctx, target)`` writes ``target`` (a file, or a
    folder of ``members``), ``check(target)`` reads it back (a problem or None)."""

    def __init__(self, entry, method, name, write, check, needs, members=()):
        self.entry, self.method, self.name = entry, method, name
        self.write, self.check, self.needs, self.members = write, check, needs, members


def library_writers():
    cg = _cg
    return [
        Writer("io.save", "", "m.npz",
               lambda ctx, t: cg().io.save(model("CountingGrid"), t),
               _check_model_equal("CountingGrid"), ("countgrid.io.save",)),
        Writer("CountingGrid", "save", "m.npz", lambda ctx, t: model("CountingGrid").save(t),
               _check_model_equal("CountingGrid"), ("countgrid.CountingGrid.save",)),
        Writer("text.Corpus", "save", "c.npz", lambda ctx, t: F.corpus().save(t),
               _check_corpus(), ("countgrid.text.Corpus.save",)),
        Writer("maps.write_html", "", "map.html",
               lambda ctx, t: cg().maps.write_html(model("CountingGrid"), t, D.X),
               _check_html, ("countgrid.maps.write_html",)),
        Writer("CountingGrid", "to_html", "map.html",
               lambda ctx, t: model("CountingGrid").to_html(t, D.X), _check_html,
               ("countgrid.CountingGrid.to_html",)),
        Writer("streaming.write_memmap_csr", "", "corpus.csr",
               lambda ctx, t: _st().write_memmap_csr(D.Xs, t, rows_per_chunk=16),
               _check_rows(lambda f: _st().MemmapCSR(f)),
               ("countgrid.streaming.write_memmap_csr",),
               members=("indptr.bin", "indices.bin", "data.bin", "csr.json")),
        Writer("streaming.write_npz_shards", "", "shards",
               lambda ctx, t: _st().write_npz_shards(D.Xs, t, rows_per_shard=16),
               _check_rows(_written_shards), ("countgrid.streaming.write_npz_shards",),
               members=("shard-00000.npz", "shard-00001.npz", "shard-00002.npz")),
    ]


#: The command line's writers: (verb, output name, arguments with {out}, fixtures, check,
#: (argument names with {in}, fixtures, the input file) for "the output is an input").
def cli_writers():
    cp = ("corpusfile",)
    return [
        ("fit", "m.npz", ["fit", "posts", "-o", "{out}"] + F.FIT + F.DF, ("posts",),
         _check_model("CountingGrid"),
         (["fit", "corpus.npz", "-o", "{in}"] + F.FIT, cp, "corpus.npz")),
        ("vectorize", "c.npz", ["vectorize", "posts", "-o", "{out}", "-q"] + F.DF, ("posts",),
         _check_corpus(),
         (["vectorize", "corpus.npz", "-o", "{in}", "-q"] + F.DF, cp, "corpus.npz")),
        ("transform", "p.csv", ["transform", "model.npz", "-o", "{out}"], ("model",),
         _check_table(",", 40),
         (["transform", "model.npz", "w.csv", "--text-col", "text", "-o", "{in}"],
          ("model", "wcsv"), "w.csv")),
        ("top-words", "t.tsv", ["top-words", "model.npz", "-o", "{out}"], ("model",),
         _check_table("\t"), (["top-words", "m.txt", "-o", "{in}"], ("model",), "m.txt")),
        ("plot", "p.png", ["plot", "model.npz", "-o", "{out}", "--dpi", "30"], ("model",),
         _check_png, (["plot", "m.png", "-o", "{in}", "--dpi", "30"], ("model",), "m.png")),
        ("html", "m.html", ["html", "model.npz", "-o", "{out}"], ("model",), _check_html,
         (["html", "m.html", "-o", "{in}"], ("model",), "m.html")),
        ("demo", "d.html", H.QUICK + ["-o", "g.txt", "--html", "{out}"], (), _check_html, None),
    ]


def _device(path):
    """A character device at ``path`` (a copy of /dev/null: replacing it would harm
    nothing), or /dev/null itself where this process may not make one and is not root
    (it cannot replace /dev/null then); None when neither is safe."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        return path
    except (OSError, AttributeError):
        return "/dev/null" if os.geteuid() != 0 else None


SKIPPED = {"skipped": "no device node can be made safely here"}


def _plant(ctx, variant, targets):
    """Set up ``variant`` at the ``targets`` (absolute paths); returns the targets to
    write (a device may be elsewhere) or None (skipped)."""
    victim = ctx.path(VICTIM)
    out = list(targets)
    for i, t in enumerate(targets):
        if variant == "symlink-to-victim":
            os.symlink(victim, t)
        elif variant == "planted-temp-links":
            for p in partial_names(t):
                os.symlink(victim, p)
        elif variant == "planted-temp-fifos":
            for p in partial_names(t):
                os.mkfifo(p)
        elif variant == "fifo" and i == 0:
            os.mkfifo(t)
        elif variant == "device" and i == 0:
            dev = _device(t)
            if dev is None:
                return None
            out[0] = dev
        elif variant == "read-only":
            with open(t, "w") as fh:
                fh.write("the previous content\n")
            os.chmod(t, 0o444)
    return out


PLANTED = [("symlink-to-victim", "ok"), ("planted-temp-links", "ok"),
           ("planted-temp-fifos", "ok"), ("fifo", "raise"), ("device", "raise"),
           ("read-only", "either")]


def _verdict(ctx, before, allowed_if_ok, returned, check, target):
    """After a writer ran: everything outside the output unchanged; the output a complete
    regular file (returned) or untouched (raised)."""
    after = snapshot(ctx.tmp)
    if after.get(VICTIM) != before.get(VICTIM):
        raise Violated("the victim file the planted link points to was written")
    changed = changes(before, after, allowed_if_ok if returned else ())
    if changed:
        raise Violated("; ".join(changed[:4]))
    if returned:
        problem = readable(check)(target)
        if problem:
            raise Violated(problem)


def _library_planted_case(w, variant, expect):
    def run(ctx):
        with open(ctx.path(VICTIM), "w") as fh:
            fh.write(PRECIOUS)
        os.makedirs(ctx.path(OUT))
        base = ctx.path(os.path.join(OUT, w.name))
        if w.members:
            os.makedirs(base)
            targets = [os.path.join(base, m) for m in w.members]
        else:
            targets = [base]
        planted = _plant(ctx, variant, targets)
        if planted is None:
            return SKIPPED
        target = base if w.members else planted[0]
        allowed = {os.path.relpath(t, ctx.tmp) for t in targets}
        before = snapshot(ctx.tmp)
        try:
            value = w.write(ctx, target)
        except Violated:
            raise
        except BaseException:
            _verdict(ctx, before, allowed, False, w.check, target)
            raise
        _verdict(ctx, before, allowed, True, w.check, target)
        return value

    names = ("path", "directory", w.name) + tuple(w.members)
    return _case(w.entry, w.method, "planted-output", variant, expect, run, names, None,
                 w.needs, timeout=10.0 if variant == "fifo" else 30.0, recycle=True)


def _cli_case(verb, klass, variant, expect, run, names, timeout=60.0, classify=None,
              cost=3.0):
    return _case("cli", verb, klass, variant, expect, run, names, None,
                 ("countgrid.cli.main",), timeout=timeout, cost=cost,
                 classify=classify or classify_security)


def _cli_planted_case(verb, name, args, fixtures, check, variant, expect):
    def run(ctx):
        F._fixtures(ctx, fixtures)
        with open(ctx.path(VICTIM), "w") as fh:
            fh.write(PRECIOUS)
        os.makedirs(ctx.path(OUT))
        target = ctx.path(os.path.join(OUT, name))
        planted = _plant(ctx, variant, [target])
        if planted is None:
            return dict(SKIPPED, rc=0, out="", err="", tmp=ctx.tmp)
        arg = planted[0] if planted[0] != target else os.path.join(OUT, name)
        before = snapshot(ctx.tmp)
        value = F.cli_run([a.replace("{out}", arg) for a in args], ctx)
        allowed = {os.path.join(OUT, name), "g.txt"}
        _verdict(ctx, before, allowed, value["rc"] == 0, check, target)
        return value

    opt = "--html" if verb == "demo" else "--output"
    return _cli_case(verb, "planted-output", variant, expect, run,
                     (opt, "-o", name), timeout=15.0 if variant == "fifo" else 60.0,
                     cost=10.0 if verb == "demo" else 3.0)


def _cli_input_case(verb, args, fixtures, input_name, how):
    def run(ctx):
        F._fixtures(ctx, fixtures)
        src = ctx.path(input_name)
        if not os.path.exists(src):              # the model under another name
            with open(ctx.path("model.npz"), "rb") as a, open(src, "wb") as b:
                b.write(a.read())
        if how == "same":
            arg = input_name
        else:
            os.makedirs(ctx.path(OUT))
            arg = os.path.join(OUT, input_name)
            if how == "hardlink":
                os.link(src, ctx.path(arg))
            else:
                os.symlink(src, ctx.path(arg))
        before = snapshot(ctx.tmp)
        value = F.cli_run([a.replace("{in}", arg) for a in args], ctx)
        _verdict(ctx, before, (), False, None, None)
        return value

    return _cli_case(verb, "planted-output", f"output-is-input-{how}", "raise", run,
                     ("INPUT", "MODEL", "--output", "-o"))


def gen_planted_outputs():
    out = []
    for w in library_writers():
        for variant, expect in PLANTED:
            out.append(_library_planted_case(w, variant, expect))
    for verb, name, args, fixtures, check, inputs in cli_writers():
        for variant, expect in PLANTED:
            if verb == "demo" and variant not in ("planted-temp-links", "fifo"):
                continue
            out.append(_cli_planted_case(verb, name, args, fixtures, check, variant, expect))
        if inputs is not None:
            for how in ("same", "hardlink", "symlink"):
                out.append(_cli_input_case(verb, inputs[0], inputs[1], inputs[2], how))
    return out


# ============================================================================ processes
def forked(fn, timeout=60.0, quiet=True):
    """Start ``fn()`` in a forked child; returns a handle for :func:`reap` (the child's
    report: {"ok": value} or {"error": ...}, through a pipe, as JSON)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                     # the child: never returns
        try:
            os.close(r)
            if quiet:
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 1)
                os.dup2(null, 2)
            try:
                report = {"ok": fn()}
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                report = {"error": type(exc).__name__, "errno": getattr(exc, "errno", None),
                          "strerror": getattr(exc, "strerror", None),
                          "filename": str(getattr(exc, "filename", "") or ""),
                          "message": str(exc)[:2000],
                          "where": traceback.format_exc()[-1500:]}
            data = json.dumps(report, default=str).encode()
            while data:
                data = data[os.write(w, data):]
        finally:
            os._exit(0)
    os.close(w)
    return {"pid": pid, "fd": r, "deadline": time.monotonic() + timeout, "buf": b""}


def alive(handle):
    if "status" in handle:
        return False
    pid, status = os.waitpid(handle["pid"], os.WNOHANG)
    if pid == 0:
        return True
    handle["status"] = status
    return False


def reap(handle):
    """The child's report (waits; kills it past its deadline: {"hang": True})."""
    import select

    while True:
        left = handle["deadline"] - time.monotonic()
        if left <= 0:
            with contextlib.suppress(ProcessLookupError):
                os.kill(handle["pid"], signal.SIGKILL)
            os.waitpid(handle["pid"], 0)
            os.close(handle["fd"])
            return {"hang": True}
        ready, _, _ = select.select([handle["fd"]], [], [], min(left, 0.5))
        if ready:
            chunk = os.read(handle["fd"], 65536)
            if not chunk:
                break
            handle["buf"] += chunk
    os.close(handle["fd"])
    if "status" not in handle:
        handle["status"] = os.waitpid(handle["pid"], 0)[1]
    if not handle["buf"]:
        return {"error": "died", "message": f"wait status {handle['status']}"}
    return json.loads(handle["buf"])


def reraise(report):
    """The exception a child reported, rebuilt (an OSError keeps its errno)."""
    import builtins

    if report.get("hang"):
        raise TimeoutError("the writer did not finish (blocked?)")
    kind = getattr(builtins, report["error"], None)
    if isinstance(kind, type) and issubclass(kind, OSError) and report.get("errno"):
        raise kind(report["errno"], report.get("strerror") or report["message"],
                   report.get("filename") or None)
    if isinstance(kind, type) and issubclass(kind, Exception):
        raise kind(report["message"])
    raise RuntimeError(f"{report['error']}: {report['message']}")


# ============================================================================ concurrent-writers
def _other_corpus():
    return F.corpus(titles=[f"other {i}" for i in range(40)])


def _concurrent_case(entry, method, variant, write_a, write_b, read, needs, n=15,
                     threads=False, fixtures=(), target="out/x", allowed=()):
    """Two writers (forked processes, or threads) write ``target`` ``n`` times each while
    this process reads it: every read must give one of the two complete results."""
    def run(ctx):
        F._fixtures(ctx, fixtures)
        os.makedirs(ctx.path(OUT), exist_ok=True)
        path = ctx.path(target)
        with in_folder(ctx.tmp):
            write_a(ctx, path)
            problem = read(ctx, path)
        if problem:
            raise RuntimeError(f"harness: the first file does not read back: {problem}")
        before = snapshot(ctx.tmp)
        writers = [write_a, write_b]
        reads, problems = 0, []

        def loop(write):
            with in_folder(ctx.tmp):
                for _ in range(n):
                    write(ctx, path)
            return "done"

        if threads:
            errors = []

            def body(write):
                try:
                    loop(write)
                except BaseException as exc:  # noqa: BLE001 - collected
                    errors.append(exc)
            ts = [threading.Thread(target=body, args=(w,)) for w in writers]
            for t in ts:
                t.start()
            running = lambda: any(t.is_alive() for t in ts)  # noqa: E731
        else:
            hs = [forked(lambda w=w: loop(w), timeout=60.0) for w in writers]
            running = lambda: any(alive(h) for h in hs)  # noqa: E731
        deadline = time.monotonic() + 60
        while True:
            going = running()
            problem = readable(lambda p: read(ctx, p))(path)
            reads += 1
            if problem:
                problems.append(problem)
            if not going or time.monotonic() > deadline:
                break
        if threads:
            for t in ts:
                t.join(30)
            failures = [f"{type(e).__name__}: {e}" for e in errors]
        else:
            reports = [reap(h) for h in hs]
            failures = [f"{r.get('error', 'hang')}: {r.get('message', '')[:200]}"
                        for r in reports if "ok" not in r]
        if failures:
            raise Violated("a writer failed: " + failures[0])
        if problems:
            raise Violated(f"{len(problems)} of {reads} reads failed while two writers "
                           f"wrote: {problems[0]}")
        final = readable(lambda p: read(ctx, p))(path)
        if final:
            raise Violated(f"the final file: {final}")
        changed = changes(before, snapshot(ctx.tmp), {target} | set(allowed))
        if changed:
            raise Violated("; ".join(changed[:4]))
        return {"reads": reads}

    return _case(entry, method, "concurrent-writers", variant, "ok", run, ("path",), None,
                 needs, timeout=90.0, cost=10.0, recycle=True)


def _read_model_ab(ctx, path):
    est = _cg().load(path)
    name = type(est).__name__
    if name not in ("CountingGrid", "PLSA"):
        return f"read a {name}"
    key = _differing_array(est, model(name))
    return None if key is None else f"read a {name} whose {key} is neither writer's"


def _read_corpus_ab(ctx, path):
    c = _cg().text.Corpus.load(path)
    if len(c) != 40 or c.titles[0] not in ("title 0", "other 0") or \
            c.titles[-1] != c.titles[0].split()[0] + " 39":
        return f"read a corpus of {len(c)} documents titled {c.titles[0]!r}...{c.titles[-1]!r}"
    return None


_PAGES = {}


def _page(title):
    def write(ctx, path):
        _cg().maps.write_html(model("CountingGrid"), path, D.X, title=title)
    return write


def _read_page_ab(ctx, path):
    if not _PAGES:
        for t in ("map A", "map B"):
            p = ctx.path(f"ref-{t[-1]}.html")
            _page(t)(ctx, p)
            with open(p, encoding="utf-8") as fh:
                _PAGES[t] = fh.read()
            os.unlink(p)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if text not in _PAGES.values():
        return f"read a page of {len(text)} characters that is neither writer's"
    return None


def _cli_fit(seed):
    def write(ctx, path):
        args = ["fit", "posts", "-o", path, "--seed", str(seed)] + F.FIT + F.DF
        res = F.cli_run(args, ctx)
        if res["rc"] != 0:
            raise RuntimeError(f"fit failed: {res['err'][-300:]}")
    return write


def _read_cli_model(ctx, path):
    est = _cg().load(path)
    if type(est).__name__ != "CountingGrid" or not np.isfinite(est.pi_).all():
        return f"read a {type(est).__name__}"
    return None


def _cli_transform(anchor):
    def write(ctx, path):
        res = F.cli_run(["transform", "model.npz", "-o", path, "--anchor", anchor, "-q"], ctx)
        if res["rc"] != 0:
            raise RuntimeError(f"transform failed: {res['err'][-300:]}")
    return write


def _read_table(ctx, path):
    return _check_table(",", 40)(path)


def gen_concurrent():
    cg = _cg
    save_a = lambda ctx, p: cg().io.save(model("CountingGrid"), p)  # noqa: E731
    save_b = lambda ctx, p: cg().io.save(model("PLSA"), p)  # noqa: E731
    return [
        _concurrent_case("io.save", "", "two-processes", save_a, save_b, _read_model_ab,
                         ("countgrid.io.save",), target="out/m.npz"),
        _concurrent_case("CountingGrid", "save", "two-threads",
                         lambda ctx, p: model("CountingGrid").save(p),
                         lambda ctx, p: model("PLSA").save(p), _read_model_ab,
                         ("countgrid.CountingGrid.save",), threads=True, target="out/m.npz"),
        _concurrent_case("text.Corpus", "save", "two-processes",
                         lambda ctx, p: F.corpus().save(p),
                         lambda ctx, p: _other_corpus().save(p), _read_corpus_ab,
                         ("countgrid.text.Corpus.save",), target="out/c.npz"),
        _concurrent_case("maps.write_html", "", "two-processes", _page("map A"),
                         _page("map B"), _read_page_ab, ("countgrid.maps.write_html",), n=8,
                         target="out/map.html"),
        _concurrent_case("cli", "fit", "two-processes", _cli_fit(0), _cli_fit(1),
                         _read_cli_model, ("countgrid.cli.main",), n=3, fixtures=("posts",),
                         target="out/m.npz"),
        _concurrent_case("cli", "transform", "two-processes", _cli_transform("center"),
                         _cli_transform("corner"), _read_table, ("countgrid.cli.main",), n=6,
                         fixtures=("model",), target="out/p.csv"),
    ]


# ============================================================================ full-disk
#: The write limit (bytes) under which every writer's output is too large.
DISK_LIMIT = 128


def _limited(fn, limit):
    def child():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
        return fn()
    return child


def _full_disk_library_case(w, variant="previous-file", limit=None, data=None):
    """The writer under a write limit, over a complete previous output: an error, the
    previous output intact, nothing left behind."""
    def run(ctx):
        os.makedirs(ctx.path(OUT))
        target = ctx.path(os.path.join(OUT, w.name))
        if data is None:
            w.write(ctx, target)
            write = w.write
            cap = limit or DISK_LIMIT
        else:
            previous, new, rows = data()
            _write_shards(previous, target, rows)
            cap = _first_shard_size(ctx, new, rows) + 16
            write = lambda ctx, t: _write_shards(new, t, rows)  # noqa: E731
        before = snapshot(ctx.tmp)
        report = reap(forked(_limited(lambda: (write(ctx, target), "written")[1], cap), 60.0))
        _verdict(ctx, before, (), False, None, None)
        if "ok" in report:
            raise Violated("the writer returned as if it had written, under the write limit")
        reraise(report)

    return _case(w.entry, w.method, "full-disk", variant, "raise", run,
                 ("path", "directory", w.name), None, w.needs, timeout=90.0,
                 classify=classify_disk, cost=3.0)


def _write_shards(X, folder, rows):
    return _st().write_npz_shards(X, folder, rows_per_shard=rows)


def _first_shard_size(ctx, X, rows):
    scratch = ctx.path("scratch")
    _write_shards(X[:rows], scratch, rows)
    size = os.path.getsize(os.path.join(scratch, "shard-00000.npz"))
    import shutil

    shutil.rmtree(scratch)
    return size


def _shards_then_full():
    """Previous shards, and new data whose first shard fits the limit but not its second."""
    X = D.X.copy()
    sparse_first = np.zeros_like(X)
    sparse_first[:20, 0] = 1.0
    sparse_first[20:] = X[20:] + 1.0
    return H.sp.csr_matrix(X), H.sp.csr_matrix(sparse_first), 20


def _full_disk_cli_case(verb, name, args, fixtures):
    def run(ctx):
        F._fixtures(ctx, fixtures)
        os.makedirs(ctx.path(OUT))
        arg = os.path.join(OUT, name)
        first = F.cli_run([a.replace("{out}", arg) for a in args], ctx)
        if first["rc"] != 0:
            raise RuntimeError(f"harness: the first {verb} failed: {first['err'][-200:]}")
        before = snapshot(ctx.tmp)
        report = reap(forked(_limited(lambda: F.cli_run(
            [a.replace("{out}", arg) for a in args], ctx), DISK_LIMIT), 90.0))
        _verdict(ctx, before, (), False, None, None)
        if "ok" not in report:
            reraise(report)
        value = report["ok"]
        if value["rc"] == 0:
            raise Violated(f"{verb} exited 0 under the write limit")
        return value

    return _cli_case(verb, "full-disk", "previous-file", "raise", run,
                     ("--output", "-o", name), timeout=120.0, classify=classify_disk,
                     cost=4.0)


def gen_full_disk():
    out = [_full_disk_library_case(w) for w in library_writers()]
    shards = next(w for w in library_writers() if w.entry == "streaming.write_npz_shards")
    out.append(_full_disk_library_case(shards, "fails-at-the-second-shard",
                                       data=_shards_then_full))
    for verb, name, args, fixtures, _, _ in cli_writers():
        if verb != "demo":          # its writers are those of plot and html
            out.append(_full_disk_cli_case(verb, name, args, fixtures))
    return out


# ============================================================================ formula-cells

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: A cell that is a number (docs/security.md: numbers, "-0.5" written as text included,
#: are left alone).
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|nan)")
FORMULA_WORDS = ["=cmd", "+w", "-w", "@w", "\tw", "\rw", "-0.5", "+3", "ok", "fine",
                 '=HYPERLINK("http://e")', "-1+2"]
FORMULA_IDS = ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\rx", "-1.5", "+3e5", "plain",
               "'=quoted"]


def expected_cell(text, escape=True):
    """A text cell as the tables must hold it (the rule of docs/security.md, "Exports")."""
    if escape and text.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(text):
        text = "'" + text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def formula_ids(n=40):
    return [p if i < len(FORMULA_IDS) else f"{p}_{i}" for i, p in
            ((i, FORMULA_IDS[i % len(FORMULA_IDS)]) for i in range(n))]


def formula_corpus(n=40):
    return _cg().text.Corpus(D.X[:n], FORMULA_WORDS, ids=formula_ids(n),
                             titles=[f"=title{i}" for i in range(n)])


def _formula_model(ctx, name="CountingGrid"):
    path = ctx.path("f.npz")
    _cg().io.save(model(name), path, corpus=formula_corpus())
    return path


def _rows(text, delimiter):
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))


def _read_output(value, name):
    if name is None:
        return value["out"]
    with open(os.path.join(value["tmp"], name), encoding="utf-8", newline="") as fh:
        return fh.read()


def _transform_oracle(name, escape, ids):
    def oracle(value):
        rows = _rows(_read_output(value, name), ",")
        if not rows or rows[0][0] != "id":
            return f"the table starts {rows[:1]!r}"
        got = [r[0] for r in rows[1:]]
        want = [expected_cell(i, escape) for i in ids]
        if got != want:
            bad = next(k for k, (g, w) in enumerate(zip(got + [None] * len(want), want))
                       if g != w)
            return f"id {bad} is written {got[bad] if bad < len(got) else None!r}, " \
                   f"expected {want[bad]!r}"
        for r in rows[1:]:
            for cell in r[1:]:
                try:
                    float(cell)
                except ValueError:
                    return f"the number cell {cell!r} was changed"
        return None
    return oracle


def _rule_oracle(name, escape, delimiter="\t"):
    """Every cell follows the rule: an apostrophe before a formula start (escape) or the
    cells raw (one at least starts like a formula)."""
    def oracle(value):
        rows = _rows(_read_output(value, name), delimiter)
        cells = [c for r in rows for c in r]
        if len(rows) < 2:
            return "the table is empty"
        if any("\r" in c for c in cells):
            return "a cell holds a carriage return"
        hostile = [c for c in cells if c.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(c)]
        if escape:
            if hostile:
                return f"the cell {hostile[0]!r} starts a formula"
            if not any(c.startswith("'") for c in cells):
                return "no cell was escaped (the words start formulas)"
            for c in cells:
                if c.startswith("'") and not c[1:].startswith(FORMULA_STARTS + ("\n",)):
                    return f"the cell {c!r} was escaped without reason"
        else:
            if any(c.startswith("'") and c[1:2] in "=+-@\t\n" for c in cells):
                return "a cell was escaped with --no-escape-formulas"
            if not hostile:
                return "no cell starts like a formula with --no-escape-formulas"
        return None
    return oracle


def _formula_cli_case(verb, variant, args, oracle, name="CountingGrid", setup=None):
    def run(ctx):
        _formula_model(ctx, name)
        if setup:
            setup(ctx)
        return F.cli_run(args, ctx)

    return _case("cli", verb, "formula-cells", variant, "ok", run, ("--output", "-o"), oracle,
                 ("countgrid.cli.main",), timeout=60.0, cost=3.0, classify=classify_security)


def _new_docs(ctx):
    ids = ["=evil()", "+1+1", "-0.25", "@SUM(A1)", "\tt", "\rr", "fine"]
    with open(ctx.path("new.csv"), "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "text"])
        for i in ids:
            w.writerow([i, "ok fine ok"])


def gen_formula_cells():
    ids = formula_ids()
    new_ids = ["=evil()", "+1+1", "-0.25", "@SUM(A1)", "\tt", "\rr", "fine"]
    out = [
        _formula_cli_case("transform", "file", ["transform", "f.npz", "-o", "p.csv", "-q"],
                          _transform_oracle("p.csv", True, ids)),
        _formula_cli_case("transform", "stdout", ["transform", "f.npz"],
                          _transform_oracle(None, True, ids)),
        _formula_cli_case("transform", "no-escape-formulas",
                          ["transform", "f.npz", "-o", "p.csv", "--no-escape-formulas"],
                          _transform_oracle("p.csv", False, ids)),
        _formula_cli_case("transform", "new-documents",
                          ["transform", "f.npz", "new.csv", "--text-col", "text", "--id-col",
                           "id", "-o", "p.txt"],
                          _transform_oracle("p.txt", True, new_ids), setup=_new_docs),
        _formula_cli_case("top-words", "file", ["top-words", "f.npz", "-o", "t.tsv"],
                          _rule_oracle("t.tsv", True)),
        _formula_cli_case("top-words", "stdout", ["top-words", "f.npz", "-n", "12"],
                          _rule_oracle(None, True)),
        _formula_cli_case("top-words", "no-escape-formulas",
                          ["top-words", "f.npz", "-o", "t.txt", "--no-escape-formulas"],
                          _rule_oracle("t.txt", False)),
        _formula_cli_case("top-words", "plsa", ["top-words", "f.npz", "-n", "12"],
                          _rule_oracle(None, True), name="PLSA"),
    ]

    def flag(escape):
        def run(ctx):
            kw = {} if escape is None else {"escape_formulas": escape}
            return _cg().maps.map_data(model("CountingGrid"), corpus=formula_corpus(), **kw)

        def oracle(data):
            want = True if escape is None else escape
            if data.get("escape_formulas") is not want:
                return f"escape_formulas is {data.get('escape_formulas')!r}, expected {want}"
            if list(data["ids"]) != formula_ids():
                return "the ids were changed in the data (the page escapes its export)"
            return None
        return run, oracle

    for variant, escape in (("default", None), ("escape_formulas=False", False)):
        run, oracle = flag(escape)
        out.append(_case("maps.map_data", "", "formula-cells", variant, "ok", run,
                         ("escape_formulas",), oracle, ("countgrid.maps.map_data",),
                         files=False))

    def page(ctx):
        path = ctx.path("map.html")
        _cg().maps.write_html(model("CountingGrid"), path, corpus=formula_corpus(),
                              escape_formulas=False)
        return path
    out.append(_case("maps.write_html", "", "formula-cells", "escape_formulas=False", "ok",
                     page, ("escape_formulas",), _check_html, ("countgrid.maps.write_html",)))
    return out


# ============================================================================ long-fields
LONG = 200_000
LIMITS = {"title": 200, "id": 100, "snippet": 1000, "label": 100, "name": 100, "word": 50,
          "link": 2048}
ELLIPSIS = "\u2026"
HOSTILE_LINKS = ["javascript:alert(1)", "data:text/html,<script>alert(1)</script>",
                 "file:///etc/passwd", " \tjavascript:alert(1)", "//evil.example/x",
                 "JaVa\nScRiPt:alert(1)", "\\\\evil.example\\share", "vbscript:msgbox(1)",
                 "https://ok.example/" + "a" * LONG, "notes/ok.html", "HTTPS://ok.example/b?c=1",
                 "  https://ok.example/c  "]
PAGE_LIMIT = MB // 2


def expected_link(url):
    """The link the map keeps (docs/map.md, "Untrusted corpora"), or "": cleaned as
    browsers parse URLs, then http(s) or relative, not protocol-relative, at most 2048
    characters, no control character."""
    url = re.sub(r"[\t\n\r]", "", re.sub(r"^[\x00-\x20]+|[\x00-\x20]+$", "", url))
    if not url or len(url) > LIMITS["link"] or re.search(r"[\x00-\x1f\x7f]", url):
        return ""
    scheme = re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", url)
    if scheme:
        return url if scheme.group(0).lower() in ("http:", "https:") else ""
    if len(url) >= 2 and url[0] in "/\\" and url[1] in "/\\":
        return ""
    return url


def _random_text(n, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(97, 123, size=n, dtype=np.uint8).tobytes().decode("ascii")


def long_fields(n=len(HOSTILE_LINKS)):
    """The per-document fields of a corpus whose every text is 200,000 characters (random
    letters: they do not compress away)."""
    if not hasattr(D, "long_fields"):
        D.long_fields = {
            "titles": [_random_text(LONG, 10 + i) for i in range(n)],
            "ids": [_random_text(LONG, 100 + i) for i in range(n)],
            "snippets": [_random_text(LONG, 200 + i) for i in range(n)],
            "words": [_random_text(LONG, 300 + i) for i in range(12)],
            "level": [_random_text(LONG, 400 + i % 3) for i in range(n)],
            "name": _random_text(LONG, 500),
        }
    return D.long_fields


def long_corpus(n=len(HOSTILE_LINKS), long_words=True):
    """A corpus of ``n`` documents whose texts are all 200,000 characters long (the words
    too, or those of the canonical data: a file of it is then smaller and quicker)."""
    f = long_fields()
    return _cg().text.Corpus(D.X[:n], f["words"] if long_words else D.words, ids=f["ids"][:n],
                             titles=f["titles"][:n], snippets=f["snippets"][:n],
                             links=HOSTILE_LINKS[:n],
                             metadata={f["name"]: f["level"][:n],
                                       "score": np.arange(n, dtype=float)})


def _cut_ok(shown, original, limit, distinct=False):
    if len(shown) > limit:
        return f"{len(shown)} characters (limit {limit})"
    if shown == original:
        return None
    base = re.sub(r" \(\d+\)$", "", shown) if distinct else shown
    if not base.endswith(ELLIPSIS) or not original.startswith(base[:-1]):
        return f"{shown[:40]!r}... is not a cut of the original"
    return None


def map_data_problem(data, title=None, n=len(HOSTILE_LINKS), long_words=True):
    f = long_fields()
    checks = [("titles", f["titles"][:n], "title", False), ("ids", f["ids"][:n], "id", True),
              ("snippets", f["snippets"][:n], "snippet", False),
              ("vocabulary", f["words"] if long_words else list(D.words), "word", True)]
    for key, originals, limit, distinct in checks:
        shown = list(data[key])
        if len(shown) != len(originals):
            return f"{key} has {len(shown)} entries, expected {len(originals)}"
        for s, o in zip(shown, originals):
            p = _cut_ok(str(s), o, LIMITS[limit], distinct)
            if p:
                return f"{key}: {p}"
        if distinct and len(set(shown)) != len(shown):
            return f"{key} are no longer distinct"
    for c in data["colorings"]:
        if len(c["name"]) > LIMITS["name"]:
            return f"a colouring's name has {len(c['name'])} characters"
        for level in c.get("levels", []):
            if len(level) > LIMITS["label"]:
                return f"a level of {c['name'][:20]!r} has {len(level)} characters"
    links = list(data["links"]) if data.get("links") is not None else [""] * n
    want = [expected_link(u) for u in HOSTILE_LINKS[:n]]
    if links != want:
        bad = next(k for k in range(n) if links[k] != want[k])
        return f"the link {HOSTILE_LINKS[bad][:40]!r} is written {links[bad][:40]!r}, " \
               f"expected {want[bad][:40]!r}"
    if title is not None and _cut_ok(data["title"], title, LIMITS["title"]):
        return "title: " + _cut_ok(data["title"], title, LIMITS["title"])
    return None


def _page_oracle(path_of):
    def oracle(value):
        path = path_of(value)
        size = os.path.getsize(path)
        if size > PAGE_LIMIT:
            return f"the page takes {size / MB:.1f} MB (at most {PAGE_LIMIT / MB:.1f} MB once " \
                   f"the fields are cut)"
        return _check_html(path)
    return oracle


def gen_long_fields():
    out = []
    md = ("countgrid.maps.map_data",)
    title = _random_text(LONG, 600)

    def corpus_run(ctx):
        return _cg().maps.map_data(model("CountingGrid"), corpus=long_corpus(), title=title)

    def args_run(ctx):
        f = long_fields()
        n = len(HOSTILE_LINKS)
        return _cg().maps.map_data(model("CountingGrid"), D.X[:n], feature_names=f["words"],
                                   titles=f["titles"], ids=f["ids"], snippets=f["snippets"],
                                   links=HOSTILE_LINKS, metadata={f["name"]: f["level"]},
                                   title=title)

    def sampled_run(ctx):
        return _cg().maps.map_data(model("CountingGrid"), corpus=long_corpus(), max_docs=40)

    for variant, run in (("corpus", corpus_run), ("arguments", args_run),
                         ("max_docs", sampled_run)):
        out.append(_case("maps.map_data", "", "long-fields", variant, "ok", run,
                         ("titles", "ids", "links"),
                         lambda d, v=variant: map_data_problem(d, None if v == "max_docs"
                                                               else title),
                         md, files=False, timeout=60.0, cost=3.0))

    def html_run(ctx):
        path = ctx.path("map.html")
        _cg().maps.write_html(model("CountingGrid"), path, corpus=long_corpus(), title=title)
        return path

    def to_html_run(ctx):
        path = ctx.path("map.html")
        model("CountingGrid").to_html(path, corpus=long_corpus())
        return path

    out.append(_case("maps.write_html", "", "long-fields", "corpus", "ok", html_run,
                     ("path",), _page_oracle(lambda p: p), ("countgrid.maps.write_html",),
                     timeout=60.0, cost=3.0))
    out.append(_case("CountingGrid", "to_html", "long-fields", "corpus", "ok", to_html_run,
                     ("path",), _page_oracle(lambda p: p), ("countgrid.CountingGrid.to_html",),
                     timeout=60.0, cost=3.0))

    def cli_html(ctx):
        _cg().io.save(model("CountingGrid"), ctx.path("long.npz"),
                      corpus=long_corpus(3, long_words=False))
        return F.cli_run(["html", "long.npz", "-o", "m.html", "--title", title], ctx)
    out.append(_cli_case("html", "long-fields", "saved-corpus", "ok", cli_html,
                         ("--output", "-o")))
    out[-1].oracle = readable(_page_oracle(lambda v: os.path.join(v["tmp"], "m.html")))

    def round_trip(ctx):
        path = ctx.path("c.npz")
        long_corpus(2, long_words=False).save(path)
        return _cg().text.Corpus.load(path)

    def same(c):
        f = long_fields()
        for key in ("titles", "ids", "snippets"):
            if list(getattr(c, key)) != f[key][:2]:
                return f"{key} did not round-trip (long fields are data)"
        if list(c.links) != HOSTILE_LINKS[:2] or list(c.metadata[f["name"]]) != f["level"][:2]:
            return "the links or the metadata did not round-trip"
        return None
    out.append(_case("text.Corpus", "save", "long-fields", "round-trip", "ok", round_trip,
                     ("path",), same, ("countgrid.text.Corpus.save",), timeout=60.0,
                     cost=3.0))
    return out


# ============================================================================ shared-estimator
THREADS = 4
CALLS = 2
REFUSAL = "another thread is fitting this same estimator"


def state_problem(a, b, path="estimator"):
    """Where two estimators' fitted states differ (exactly), or None."""
    def public(est):
        return {k: v for k, v in vars(est).items() if k.endswith("_") and not k.startswith("_")}
    sa, sb = public(a), public(b)
    if sa.keys() != sb.keys():
        return f"{path} has the attributes {sorted(sa.keys() ^ sb.keys())} on one side only"
    for k in sa:
        x, y = sa[k], sb[k]
        p = _value_problem(x, y, f"{path}.{k}")
        if p:
            return p
    return None


def _value_problem(x, y, path):
    if isinstance(x, (list, tuple)):
        if not isinstance(y, (list, tuple)) or len(x) != len(y):
            return f"{path} differs in length"
        for i, (u, v) in enumerate(zip(x, y)):
            p = _value_problem(u, v, f"{path}[{i}]")
            if p:
                return p
        return None
    if hasattr(x, "get_params") and hasattr(x, "__dict__"):
        return state_problem(x, y, path)
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray) or H.sp.issparse(x):
        x, y = H._dense(x), H._dense(y)
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape or x.dtype != y.dtype:
            return f"{path}: {x.dtype}{x.shape} against {y.dtype}{y.shape}"
        if not np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
            return f"{path} differs from a serial fit"
        return None
    try:
        same = x == y or (isinstance(x, float) and isinstance(y, float)
                          and np.isnan(x) and np.isnan(y))
    except Exception:  # noqa: BLE001 - objects without equality: compared by type
        same = type(x) is type(y)
    return None if bool(same) else f"{path} is {x!r}, a serial fit gives {y!r}"


def _in_threads(work):
    """Run ``work(i)`` in THREADS threads started together; returns the exceptions."""
    start = threading.Barrier(THREADS)
    errors = [None] * THREADS

    def body(i):
        try:
            start.wait(10)
            work(i)
        except BaseException as exc:  # noqa: BLE001 - collected
            errors[i] = exc
    ts = [threading.Thread(target=body, args=(i,)) for i in range(THREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    return [e for e in errors if e is not None]


def _fit_call(name, method):
    if method == "fit":
        return lambda est: H.fit(name, est)
    return lambda est: est.partial_fit(D.Xs)


def _shared_fit_case(name, method="fit"):
    def run(ctx):
        call = _fit_call(name, method)
        est = make(name)
        done = []
        lock = threading.Lock()

        def work(i):
            for _ in range(CALLS):
                try:
                    call(est)
                except RuntimeError as exc:
                    if REFUSAL not in str(exc):
                        raise
                    with lock:
                        done.append("refused")
                else:
                    with lock:
                        done.append("ok")
        errors = _in_threads(work)
        if errors:
            raise errors[0]
        n_ok = done.count("ok")
        if n_ok == 0:
            raise Violated("every call was refused")
        serial = make(name)
        for _ in range(n_ok if method == "partial_fit" else 1):
            call(serial)
        problem = state_problem(est, serial)
        if problem:
            raise Violated(f"after {n_ok} fits and {done.count('refused')} refusals: "
                           f"{problem}")
        return {"ok": n_ok, "refused": done.count("refused")}

    return _case(name, method, "shared-estimator", f"{THREADS}-threads", "ok", run, (),
                 None, H._est_needs(name), timeout=90.0, cost=4.0, files=False, recycle=True)


def _shared_inference_case(name):
    def run(ctx):
        est = model(name)
        Q = H.query(name)
        methods = EST[name][2]
        want = {m: H._dense(getattr(est, m)(Q)) for m in methods}
        got = []
        lock = threading.Lock()

        def work(i):
            for _ in range(CALLS):
                for m in methods:
                    r = H._dense(getattr(est, m)(Q))
                    with lock:
                        got.append((m, r))
        errors = _in_threads(work)
        if errors:
            raise errors[0]
        for m, r in got:
            p = _value_problem(np.asarray(r), np.asarray(want[m]), m)
            if p:
                raise Violated(f"{p} (a call from one of {THREADS} threads)")
        return {"calls": len(got)}

    return _case(name, "inference", "shared-estimator", f"{THREADS}-threads", "ok", run,
                 (), None, H._est_needs(name), timeout=90.0, cost=3.0, files=False)


def gen_shared_estimators():
    out = []
    for name in EST:
        out.append(_shared_fit_case(name))
        out.append(_shared_inference_case(name))
    for name in ("CountingGrid", "PLSA", "RAP"):
        out.append(_shared_fit_case(name, "partial_fit"))
    return out


#: Cases of this module that fail because of code the suite cannot fix (with the fix
#: proposed); tests/hostile/test_hostile.py expects them to fail until the fix lands.
KNOWN_FAILURES = {}

GENERATORS = (gen_crafted_models, gen_crafted_corpora, gen_bombs, gen_planted_outputs,
              gen_concurrent, gen_full_disk, gen_formula_cells, gen_long_fields,
              gen_shared_estimators)
