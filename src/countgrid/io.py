"""Saving and loading estimators as versioned ``.npz`` files, without pickle.

A file holds a JSON header (key ``__countgrid__``) with the class name, the
format version, the constructor parameters and the names of the fitted
attributes, and one array per fitted attribute.  Arrays are stored bit for
bit, so a loaded model computes exactly what the saved one did.

Loading trusts nothing in the file (docs/architecture.md, "Model files"):

* format 2 (written since 0.2.0) stores a SHA-256 checksum of the header and of every
  array, so a truncated or damaged file is named as damaged; format 1 (0.1.0) files have
  none and still load;
* only the class's declared fitted attributes (``_fitted_arrays``,
  ``_fitted_estimators``) and constructor parameters are accepted, arrays must hold
  numbers (or strings, for class labels), and the parameters must pass the estimator's
  constraints;
* an estimator that defines ``_check_fitted_state()`` checks its restored attributes
  against each other (shapes, dtypes, ranges), so a crafted file cannot hand a kernel
  inconsistent sizes.

Files store what cannot be recomputed (format 3, since 0.2.0): a fitted array an estimator
declares derivable (``_derived_arrays``, e.g. a counting grid's window histograms ``h_``,
a function of ``pi_``) is left out when recomputing it gives the same bits, and is
recomputed by ``_derive_array`` at load time.  A file may also carry the corpus the model
was fitted with (``save(est, path, corpus=...)``, read back by :func:`load_corpus`): its
vocabulary, document ids, titles and metadata, under the same checksum.

This module imports no estimator: every saveable estimator class registers itself when it
is defined (``BaseEstimator.__init_subclass__``), and ``load`` looks the class of a file up
in that registry.  Importing ``countgrid`` defines them all.
"""
import io as _io
import json
import os

import numpy as np

from countgrid._utils.atomic import atomic_write
from countgrid._utils.fitted import check_declared
from countgrid._utils.npz import DEFAULT_MAX_BYTES  # noqa: F401 - countgrid.io.DEFAULT_MAX_BYTES
from countgrid._utils.npz import digest, open_archive, parse_json, resolve_max_bytes
from countgrid._version import __version__

FORMAT_NAME = "countgrid-model"
FORMAT_VERSION = 3
_HEADER_KEY = "__countgrid__"
_CORPUS_PREFIX = "corpus:"
#: The largest JSON header a model file may declare (its parameters and the names of its
#: arrays: a few kilobytes in practice).
HEADER_MAX_BYTES = 16 * 2**20
#: A scalar attribute is a number or a bool: a few bytes.
_SCALAR_MAX_BYTES = 64
#: How deep encoded parameters may nest (tuples of tuples...).
_MAX_PARAM_DEPTH = 16
#: The bit generators a saved ``random_state`` may name (a fixed table: a file never
#: selects a callable by name).
_BIT_GENERATORS = {cls.__name__: cls for cls in (np.random.PCG64, np.random.PCG64DXSM,
                                                  np.random.MT19937, np.random.Philox,
                                                  np.random.SFC64)}
#: The dtypes a parameter may name (``dtype=numpy.float32`` and friends).
_PARAM_DTYPES = {np.dtype(t).name: np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, np.float32, np.float64, np.longdouble)}


# name in the file -> class; filled by BaseEstimator.__init_subclass__ (countgrid._base).
_REGISTRY = {}


# ``cls`` is described in the summary, not under Parameters: numpydoc's validation takes a
# first argument named ``cls`` for a class method's and reports it as unknown (PR02).
def registry_name(cls):
    """The class name a model file stores for the saveable estimator class ``cls``.

    Returns
    -------
    str
        The bare class name for countgrid's own estimators (the 0.1.0 files hold
        those), ``module.qualname`` for a subclass defined elsewhere.
    """
    module = cls.__module__
    if module == "countgrid" or module.startswith("countgrid."):
        return cls.__name__
    return f"{module}.{cls.__qualname__}"


def register(cls):
    """Make ``cls`` saveable and loadable (called for every saveable estimator class)."""
    name = registry_name(cls)
    known = _REGISTRY.get(name)
    if known is not None and known is not cls and known.__module__.startswith("countgrid"):
        raise TypeError(f"two countgrid estimators are named {name}: {known} and {cls}")
    _REGISTRY[name] = cls


# The corpus class (countgrid.text.Corpus registers itself: this module imports no other
# part of countgrid, docs/architecture.md).
_CORPUS_TYPE = [None]


def register_corpus_type(cls):
    """Let :func:`load_corpus` rebuild corpora as ``cls.from_dict(arrays)``."""
    _CORPUS_TYPE[0] = cls


def corpus_type():
    """The registered corpus class, or None.

    ``countgrid.text.Corpus`` registers itself (:func:`register_corpus_type`) when
    ``countgrid.text`` is imported, which ``import countgrid`` does; modules below the
    text layer (:func:`load_corpus`, ``countgrid.streaming.NpzShards``) reach corpora
    through this registration instead of importing it.

    Returns
    -------
    type or None
    """
    return _CORPUS_TYPE[0]


def registered():
    """The saveable estimator classes defined so far.

    Returns
    -------
    dict of str -> type
        ``{name: class}`` with the names of :func:`registry_name` (a copy: changing it
        does not change the registry).
    """
    return dict(_REGISTRY)


def _encode(value):
    """JSON-able form of a constructor parameter."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return {"__float__": float(value).hex()}
    if isinstance(value, (tuple, list)):
        return {"__seq__": type(value).__name__, "items": [_encode(v) for v in value]}
    if isinstance(value, dict):     # settings such as CountingGrid's estep_params
        if not all(isinstance(k, str) for k in value):
            raise TypeError(f"cannot save a dict parameter whose keys are not all str: "
                            f"{value!r}")
        return {"__dict__": {k: _encode(v) for k, v in value.items()}}
    if isinstance(value, type) and issubclass(value, np.generic) or isinstance(value, np.dtype):
        return {"__dtype__": np.dtype(value).name}
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return {"__ndarray__": value.tolist(), "dtype": value.dtype.str,
                "hex": [float(v).hex() for v in value.ravel()] if value.dtype.kind == "f" else None,
                "shape": list(value.shape)}
    if isinstance(value, np.random.Generator):
        return {"__generator__": type(value.bit_generator).__name__,
                "state": json.loads(json.dumps(value.bit_generator.state, default=int))}
    raise TypeError(f"cannot save a parameter of type {type(value).__name__}: {value!r}")


def _param_dtype(name):
    """The numpy dtype a parameter names (``"float32"``, ``"<f8"``), from a fixed table."""
    try:
        dtype = np.dtype(name) if isinstance(name, str) and len(name) < 32 else None
    except (TypeError, ValueError):
        dtype = None
    if dtype is None or _PARAM_DTYPES.get(dtype.name) != dtype.newbyteorder("="):
        raise ValueError(f"the dtype {str(name)[:40]!r} is not one a parameter may hold")
    return dtype


def _decode(value, depth=0):
    """A constructor parameter from its JSON form.  Only plain values are rebuilt: nothing
    in the file names a function, a class or an attribute that is then looked up."""
    if depth > _MAX_PARAM_DEPTH:
        raise ValueError("a parameter is nested too deeply")
    if not isinstance(value, dict):
        return value
    if "__float__" in value:
        return float.fromhex(value["__float__"])
    if "__seq__" in value:
        kind, items = value["__seq__"], value.get("items")
        if kind not in ("tuple", "list") or not isinstance(items, list):
            raise ValueError(f"malformed encoded sequence {str(value)[:80]!r}")
        items = [_decode(v, depth + 1) for v in items]
        return tuple(items) if kind == "tuple" else items
    if "__dict__" in value:
        items = value["__dict__"]
        if not isinstance(items, dict) or len(value) != 1:
            raise ValueError(f"malformed encoded dict {str(value)[:80]!r}")
        return {str(k): _decode(v, depth + 1) for k, v in items.items()}
    if "__ndarray__" in value:
        dtype, shape = _param_dtype(value.get("dtype")), value.get("shape")
        if not (isinstance(shape, list) and all(isinstance(d, int) and d >= 0
                                                for d in shape)):
            raise ValueError(f"malformed encoded array shape {str(shape)[:80]!r}")
        hexes = value.get("hex")
        if hexes is not None:
            if not (isinstance(hexes, list) and all(isinstance(h, str) for h in hexes)):
                raise ValueError("malformed encoded float array")
            flat = np.array([float.fromhex(h) for h in hexes], dtype=dtype)
            return flat.reshape(shape)
        items = value["__ndarray__"]
        if not isinstance(items, (list, int, float, bool)):
            raise ValueError("malformed encoded array")
        return np.array(items, dtype=dtype).reshape(shape)
    if "__dtype__" in value:
        return _param_dtype(value["__dtype__"]).type
    if "__generator__" in value:
        bitgen_class = _BIT_GENERATORS.get(value["__generator__"]) \
            if isinstance(value["__generator__"], str) else None
        state = value.get("state")
        if bitgen_class is None or not isinstance(state, dict) \
                or state.get("bit_generator") != value["__generator__"]:
            raise ValueError(f"random_state names the bit generator "
                             f"{str(value['__generator__'])[:80]!r}; a file may hold "
                             f"{', '.join(sorted(_BIT_GENERATORS))}")
        bitgen = bitgen_class(0)
        try:
            bitgen.state = state
        except (TypeError, ValueError, KeyError, OverflowError, IndexError) as exc:
            raise ValueError(f"random_state holds an invalid {value['__generator__']} "
                             f"state: {exc}") from None
        return np.random.Generator(bitgen)
    raise ValueError(f"unknown encoded parameter {str(value)[:80]!r}")


def _dump(est, prefix, arrays):
    if _REGISTRY.get(registry_name(type(est))) is not type(est):
        raise TypeError(f"cannot save objects of type {type(est).__name__}: it is not a "
                        "saveable countgrid estimator")
    meta = {"class": registry_name(type(est)),
            "params": {k: _encode(v) for k, v in est.get_params(deep=False).items()},
            "arrays": {}, "children": {}}
    for name in est._fitted_arrays:
        if not hasattr(est, name):
            continue
        value = getattr(est, name)
        if name in est._derived_arrays and _rederives(est, name, value):
            meta.setdefault("derived", []).append(name)
            continue
        arr = np.asarray(value)
        if arr.dtype.kind == "O":
            raise TypeError(f"cannot save the object array {name}")
        arrays[prefix + name] = arr
        meta["arrays"][name] = "scalar" if np.ndim(value) == 0 and not isinstance(value, np.ndarray) else "array"
    for name in est._fitted_estimators:
        if not hasattr(est, name):
            continue
        value = getattr(est, name)
        if isinstance(value, list):
            meta["children"][name] = [_dump(c, f"{prefix}{name}.{i}/", arrays)
                                      for i, c in enumerate(value)]
        else:
            meta["children"][name] = _dump(value, f"{prefix}{name}/", arrays)
    return meta


def _rederives(est, name, value):
    """Whether ``est._derive_array(name)`` gives ``value`` bit for bit (then the file need
    not store it)."""
    if not isinstance(value, np.ndarray):
        return False
    try:
        again = est._derive_array(name)
    except (ValueError, TypeError, MemoryError):
        return False
    return (again.dtype == value.dtype and again.shape == value.shape
            and np.array_equal(again.view(np.uint8), np.ascontiguousarray(value).view(np.uint8)))


def _legacy_value(cls, name, value):
    """A parameter as the version that wrote it meant it: a constraint may say so with a
    ``legacy_value`` method (e.g. an int extent, a 1-D grid before 0.2.0 refused ints)."""
    for constraint in getattr(cls, "_parameter_constraints", {}).get(name, ()):
        upgrade = getattr(constraint, "legacy_value", None)
        if upgrade is not None:
            value = upgrade(value)
    return value


class _Corrupt(ValueError):
    """A model file whose content contradicts itself or its class (named by ``load``)."""


def _entry_class(meta, prefix):
    """``(name, class)`` of the model entry ``meta`` at ``prefix`` of a file's header, the
    class looked up in the registry of saveable classes."""
    if not isinstance(meta, dict):
        raise _Corrupt(f"the model entry {prefix or '/'} is not an object")
    name = meta.get("class")
    cls = _REGISTRY.get(name) if isinstance(name, str) else None
    if cls is None:
        hint = " (import the module that defines it first)" if "." in str(name) else ""
        raise ValueError(f"unknown estimator class {str(name)[:80]!r} in the file{hint}")
    return name, cls


def _check_declared(name, cls, array_kinds, children):
    """The arrays and children of an entry must be fitted attributes its class declares."""
    undeclared = (set(array_kinds) - set(cls._fitted_arrays)) | (
        set(children) - set(cls._fitted_estimators))
    if undeclared:
        raise _Corrupt(f"{name} has no fitted attributes {sorted(undeclared)[:5]}")


def _restore(meta, prefix, arrays, used, version=FORMAT_VERSION, defer=False):
    name, cls = _entry_class(meta, prefix)
    params, array_kinds, children = meta.get("params"), meta.get("arrays"), meta.get("children")
    if not (isinstance(params, dict) and isinstance(array_kinds, dict)
            and isinstance(children, dict)):
        raise _Corrupt(f"the entry of {name} lacks its params, arrays or children")
    unknown = set(params) - set(cls._get_param_names())
    if unknown:
        raise _Corrupt(f"{name} has no parameters {sorted(unknown)}")
    # files of format 1 and 2 (before int extents were refused) keep their old meaning
    upgrade = _legacy_value if version < 3 else (lambda cls, name, value: value)
    est = cls(**{k: upgrade(cls, k, _decode(v)) for k, v in params.items()})
    try:
        est._validate_params()
    except (TypeError, ValueError) as exc:
        raise _Corrupt(f"invalid parameters of {name}: {exc}") from exc
    _check_declared(name, cls, array_kinds, children)
    for attr, kind in array_kinds.items():
        key = prefix + attr
        if key not in arrays:
            raise _Corrupt(f"the file lacks the array {key!r}")
        arr = arrays[key]
        used.add(key)
        if arr.dtype.kind not in "biufU":
            raise _Corrupt(f"{key} has the unsupported dtype {arr.dtype}")
        if kind == "scalar":
            if arr.ndim != 0:
                raise _Corrupt(f"{key} should be a scalar, got shape {arr.shape}")
            setattr(est, attr, arr.item())
        elif kind == "array":
            setattr(est, attr, arr)
        else:
            raise _Corrupt(f"unknown kind {kind!r} of {key}")
    derived = meta.get("derived", [])
    if not (isinstance(derived, list) and all(isinstance(d, str) for d in derived)):
        raise _Corrupt(f"the entry of {name} has a malformed list of derived arrays")
    unknown = set(derived) - set(cls._derived_arrays)
    if unknown or set(derived) & set(array_kinds):
        raise _Corrupt(f"{name} cannot recompute {sorted(unknown or set(derived))}")
    for attr, child in children.items():
        if isinstance(child, list):
            value = [_restore(c, f"{prefix}{attr}.{i}/", arrays, used, version, defer)
                     for i, c in enumerate(child)]
        else:
            value = _restore(child, f"{prefix}{attr}/", arrays, used, version, defer)
        setattr(est, attr, value)
    if array_kinds or children:
        est._remember_inference_params()
    check = getattr(est, "_check_fitted_state", None)
    if check is not None and (array_kinds or children):
        try:
            check()
        except (TypeError, ValueError, AttributeError, IndexError) as exc:
            raise _Corrupt(f"inconsistent fitted state of {name}: {exc}") from exc
    # derived arrays are computed from checked values only: a file whose stored arrays
    # are refused costs no more memory than reading them (docs/security.md)
    for attr in derived:
        try:
            if defer:
                est._defer_derived(attr)
            else:
                setattr(est, attr, est._derive_array(attr))
        except (TypeError, ValueError, AttributeError, IndexError) as exc:
            raise _Corrupt(f"cannot recompute {attr} of {name}: {exc}") from exc
    return est


_digest = digest   # the name the tests and countgrid 0.2 files' tools use


def save(estimator, path, corpus=None):
    """Save a countgrid estimator to ``path`` (a ``.npz`` file, no pickle).

    A file name is written atomically (docs/security.md, "Writing"): a new temporary file
    beside it is filled, synced and renamed onto it, so a failure (a full disk, Ctrl-C)
    leaves the previous file intact and a symbolic link or FIFO planted at the name is
    replaced, never written through.

    Parameters
    ----------
    estimator : a fitted or unfitted countgrid estimator
    path : str, path-like or binary file object
        A file object is written as given (the caller owns atomicity).
    corpus : countgrid.text.Corpus, optional
        The corpus the model was fitted with, stored alongside (its counts too, so that
        ``countgrid html model.npz`` can draw the documents); read it back with
        :func:`load_corpus`.

    Raises
    ------
    TypeError
        If the estimator is not saveable, or ``path`` is neither a file name nor a
        writable binary file object.
    ValueError
        If ``path`` is empty, a folder or a special file (FIFO, device), or the corpus
        does not match the model.
    """
    if not isinstance(path, (str, bytes, os.PathLike)) and (
            not hasattr(path, "write") or isinstance(path, _io.TextIOBase)):
        raise TypeError(f"path must be a file name (str or os.PathLike) or a binary file "
                        f"object, got {type(path).__name__}")
    arrays = {}
    meta = _dump(estimator, "", arrays)
    header = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION,
              "countgrid_version": __version__, "model": meta}
    if corpus is not None:
        corpus_type = _CORPUS_TYPE[0]
        if not (isinstance(corpus, corpus_type) if corpus_type is not None
                else callable(getattr(corpus, "to_dict", None))):
            raise TypeError(f"corpus must be a countgrid.text.Corpus, got "
                            f"{type(corpus).__name__}")
        n_features = getattr(estimator, "n_features_in_", None)
        if n_features is not None and corpus.n_terms != n_features:
            raise ValueError(f"corpus has {corpus.n_terms} terms but the model was fitted "
                             f"on {n_features} features")
        parts = corpus.to_dict()
        header["corpus"] = sorted(parts)
        for key, value in parts.items():
            arrays[_CORPUS_PREFIX + key] = np.asarray(value)
    if _HEADER_KEY in arrays:
        raise ValueError(f"reserved key {_HEADER_KEY}")
    header["sha256"] = _digest(header, arrays)
    arrays[_HEADER_KEY] = np.array(json.dumps(header))
    if isinstance(path, (str, bytes, os.PathLike)):
        with atomic_write(path, "wb") as fh:
            np.savez_compressed(fh, **arrays)
    else:
        np.savez_compressed(path, **arrays)     # the caller's file object


def _label(path):
    if isinstance(path, (str, bytes, os.PathLike)):
        return os.fsdecode(os.fspath(path))
    return str(getattr(path, "name", "the file"))


def _check_source(path):
    if not (isinstance(path, (str, bytes, os.PathLike))
            or (hasattr(path, "read") and hasattr(path, "seek")
                and not isinstance(path, _io.TextIOBase))):
        raise TypeError(f"path must be a file name (str or os.PathLike) or a binary file "
                        f"object, got {type(path).__name__}")


def _read_header(archive, label):
    """The JSON header of a model file, read (size-capped) before any array."""
    member = archive.members.get(_HEADER_KEY)
    if member is None:
        raise ValueError(f"{label} is not a countgrid model file")
    if member.dtype.kind != "U" or member.shape != ():
        raise ValueError(f"{label} has a corrupt countgrid header")
    header = parse_json(str(archive.read_small(_HEADER_KEY, HEADER_MAX_BYTES)), label,
                        "countgrid header")
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        raise ValueError(f"{label} is not a countgrid model file")
    version = header.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or \
            version > FORMAT_VERSION or version < 1:
        raise ValueError(f"{label} has format version {version!r}; this countgrid reads "
                         f"versions 1 to {FORMAT_VERSION}")
    return header


def _plan_model(meta, prefix, archive, planned):
    """Check one model entry of the header against its class's schema, from the ``.npy``
    headers alone (scalars are read: a few bytes each); add its members to ``planned``."""
    name, cls = _entry_class(meta, prefix)
    array_kinds, children = meta.get("arrays"), meta.get("children")
    if not (isinstance(array_kinds, dict) and isinstance(children, dict)):
        raise _Corrupt(f"the entry of {name} lacks its arrays or children")
    _check_declared(name, cls, array_kinds, children)
    schema = getattr(cls, "_fitted_schema", {})
    declared, values = {}, {}
    for attr, kind in array_kinds.items():
        key = prefix + attr
        member = archive.members.get(key)
        if member is None:
            raise _Corrupt(f"the file lacks the array {key!r}")
        if kind not in ("scalar", "array"):
            raise _Corrupt(f"unknown kind {str(kind)[:20]!r} of {key}")
        if member.dtype.kind not in "biufU":
            raise _Corrupt(f"{key} has the unsupported dtype {member.dtype}")
        if kind == "scalar":
            if member.shape != ():
                raise _Corrupt(f"{key} should be a scalar, got shape {member.shape}")
            values[attr] = archive.read_small(key, _SCALAR_MAX_BYTES).item()
        declared[attr] = (kind, member.dtype, member.shape)
        planned.add(key)
    try:
        check_declared(schema, declared, values, name)
    except ValueError as exc:
        raise _Corrupt(str(exc)) from None
    for attr, child in children.items():
        if isinstance(child, list):
            for i, c in enumerate(child):
                _plan_model(c, f"{prefix}{attr}.{i}/", archive, planned)
        else:
            _plan_model(child, f"{prefix}{attr}/", archive, planned)


def _read(path, max_bytes, with_model=True):
    """(header, arrays) of a model file: the header and every array's declared dtype and
    shape checked against the file's classes (and the corpus format) and the total against
    ``max_bytes`` before anything is decompressed; then the checksum verified."""
    _check_source(path)
    limit = resolve_max_bytes(max_bytes)
    label = _label(path)
    with open_archive(path, label, "countgrid model file") as archive:
        header = _read_header(archive, label)
        planned = {_HEADER_KEY}
        corpus_keys = _corpus_keys(label, header, archive.members)
        planned.update(corpus_keys)
        if corpus_keys:
            _plan_corpus(label, corpus_keys, archive)
        try:
            _plan_model(header.get("model"), "", archive, planned)
        except _Corrupt as exc:
            raise ValueError(f"{label} is not a consistent countgrid model file: "
                             f"{exc}") from None
        extra = set(archive.members) - planned
        if extra:
            raise ValueError(f"{label} is not a consistent countgrid model file: it holds "
                             f"arrays no attribute declares: {sorted(extra)[:5]}")
        names = [n for n in archive.members if n != _HEADER_KEY]
        archive.check_budget(names, limit)
        arrays = {n: archive.read(n) for n in names}
    if header["format_version"] >= 2 and header.get("sha256") != _digest(header, arrays):
        raise ValueError(f"{label} is damaged: its SHA-256 checksum does not match its "
                         "content")
    return header, arrays


def load(path, return_corpus=False, max_bytes=None):
    """Load an estimator saved with ``save``.

    Every file written by countgrid 0.1.0 or later loads.  Nothing in the file is trusted
    (docs/security.md): loading runs no code the file selects (no pickle, no class outside
    countgrid's registry, no callable or attribute named by the file), reads the zip
    directory and every array's header first and refuses names, dtypes and shapes the
    estimator's class does not declare before decompressing anything, and uses at most
    four times the declared array bytes, which may not exceed ``max_bytes``.

    Parameters
    ----------
    path : str, path-like or binary file object
        The model file.
    return_corpus : bool, default=False
        Also return the corpus saved with the model (as :func:`load_corpus` does), from
        the same single read of the file.
    max_bytes : int or str, optional
        The most bytes of arrays (decompressed) the file may declare, e.g. ``2**33`` or
        ``"8G"``.  Default: the environment variable ``COUNTGRID_MAX_LOAD_BYTES`` when
        set, else 2 GiB (``countgrid.io.DEFAULT_MAX_BYTES``).

    Returns
    -------
    estimator
        A fitted estimator of the class the file names (which must be registered:
        importing ``countgrid`` registers countgrid's own, a subclass defined elsewhere
        must be imported first), with the saved parameters and fitted attributes.
    corpus : countgrid.text.Corpus or None
        Only with ``return_corpus=True``: the corpus saved with the model, or None.

    Raises
    ------
    ValueError
        If the file is not a countgrid model, is damaged (checksum mismatch, truncated),
        is inconsistent (undeclared or mis-shaped attributes, invalid parameters), was
        written by a newer format version, or declares more than ``max_bytes``.
    MemoryError
        If its declared arrays exceed the memory this process can get.
    TypeError
        If ``path`` is neither a file name nor a binary file object.
    """
    return _load(path, return_corpus, max_bytes)


def _load(path, return_corpus=False, max_bytes=None, defer_derived=False):
    """:func:`load`; with ``defer_derived``, the arrays the file leaves out are checked
    but may be derived only when first read (``BaseEstimator._defer_derived``: a
    counting grid's ``h_``, which inference and the map then read from ``pi_`` a block
    at a time).  The command line loads so (docs/cli.md)."""
    header, arrays = _read(path, max_bytes)
    label = _label(path)
    corpus = _corpus(label, header, arrays) if return_corpus else None
    for key in _corpus_keys(label, header, arrays):
        del arrays[key]
    used = set()
    try:
        est = _restore(header.get("model"), "", arrays, used, header["format_version"],
                       defer_derived)
    except _Corrupt as exc:
        raise ValueError(f"{label} is not a consistent countgrid model file: {exc}") from None
    except (KeyError, TypeError, AttributeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{label} has a corrupt countgrid header: {exc}") from exc
    return (est, corpus) if return_corpus else est


def _corpus_keys(label, header, members):
    names = header.get("corpus")
    if names is None:
        return []
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        raise ValueError(f"{label} is not a consistent countgrid model file: malformed "
                         "corpus entry")
    keys = [_CORPUS_PREFIX + n for n in names]
    missing = [k for k in keys if k not in members]
    if missing:
        raise ValueError(f"{label} is not a consistent countgrid model file: it lacks "
                         f"the corpus arrays {missing[:5]}")
    return keys


def _plan_corpus(label, keys, archive):
    """The corpus format's own check of its members' headers (countgrid.text)."""
    corpus_type = _CORPUS_TYPE[0]
    members = {k[len(_CORPUS_PREFIX):]: archive.members[k] for k in keys}
    try:
        corpus_type._check_members(
            members, lambda name, limit: archive.read_small(_CORPUS_PREFIX + name, limit))
    except ValueError as exc:
        raise ValueError(f"{label} holds a corpus that does not load: {exc}") from None


def load_corpus(path, max_bytes=None):
    """The corpus saved with a model (``save(est, path, corpus=...)``), or None.

    Parameters
    ----------
    path : str, path-like or binary file object
        The model file.
    max_bytes : int or str, optional
        As for :func:`load`.

    Returns
    -------
    countgrid.text.Corpus or None
        The corpus (vocabulary, document ids, titles and metadata, as saved), or None
        when the file holds no corpus.

    Raises
    ------
    ValueError
        If the file is not a countgrid model, is damaged, or holds corpus arrays that do
        not form a corpus.
    TypeError
        If ``path`` is neither a file name nor a binary file object.
    """
    header, arrays = _read(path, max_bytes)
    return _corpus(_label(path), header, arrays)


def _corpus(label, header, arrays):
    """The Corpus of the file's ``corpus:`` arrays, or None."""
    keys = _corpus_keys(label, header, arrays)
    if not keys:
        return None
    parts = {k[len(_CORPUS_PREFIX):]: arrays[k] for k in keys}
    try:
        return _CORPUS_TYPE[0].from_dict(parts)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{label} holds a corpus that does not load: {exc}") from exc
