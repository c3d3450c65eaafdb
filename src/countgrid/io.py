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
import json

import os

import numpy as np

from countgrid._npz import digest, read_arrays
from countgrid._version import __version__

FORMAT_NAME = "countgrid-model"
FORMAT_VERSION = 3
_HEADER_KEY = "__countgrid__"
_CORPUS_PREFIX = "corpus:"


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


def _decode(value):
    if isinstance(value, dict):
        if "__float__" in value:
            return float.fromhex(value["__float__"])
        if "__seq__" in value:
            items = [_decode(v) for v in value["items"]]
            return tuple(items) if value["__seq__"] == "tuple" else items
        if "__ndarray__" in value:
            dtype = np.dtype(value["dtype"])
            if value.get("hex") is not None:
                flat = np.array([float.fromhex(h) for h in value["hex"]], dtype=dtype)
                return flat.reshape(value["shape"])
            return np.array(value["__ndarray__"], dtype=dtype).reshape(value["shape"])
        if "__dtype__" in value:
            return np.dtype(value["__dtype__"]).type
        if "__generator__" in value:
            bitgen = getattr(np.random, value["__generator__"])()
            bitgen.state = value["state"]
            return np.random.Generator(bitgen)
        raise ValueError(f"unknown encoded parameter {value!r}")
    return value


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


def _restore(meta, prefix, arrays, used, version=FORMAT_VERSION):
    if not isinstance(meta, dict):
        raise _Corrupt(f"the model entry {prefix or '/'} is not an object")
    name = meta.get("class")
    cls = _REGISTRY.get(name) if isinstance(name, str) else None
    if cls is None:
        hint = " (import the module that defines it first)" if "." in str(name) else ""
        raise ValueError(f"unknown estimator class {name!r} in the file{hint}")
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
    undeclared = (set(array_kinds) - set(cls._fitted_arrays)) | (
        set(children) - set(cls._fitted_estimators))
    if undeclared:
        raise _Corrupt(f"{name} has no fitted attributes {sorted(undeclared)}")
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
    for attr in derived:
        try:
            setattr(est, attr, est._derive_array(attr))
        except (TypeError, ValueError, AttributeError, IndexError) as exc:
            raise _Corrupt(f"cannot recompute {attr} of {name}: {exc}") from exc
    for attr, child in children.items():
        if isinstance(child, list):
            value = [_restore(c, f"{prefix}{attr}.{i}/", arrays, used, version)
                     for i, c in enumerate(child)]
        else:
            value = _restore(child, f"{prefix}{attr}/", arrays, used, version)
        setattr(est, attr, value)
    if array_kinds or children:
        est._remember_inference_params()
    check = getattr(est, "_check_fitted_state", None)
    if check is not None and (array_kinds or children):
        try:
            check()
        except (TypeError, ValueError, AttributeError, IndexError) as exc:
            raise _Corrupt(f"inconsistent fitted state of {name}: {exc}") from exc
    return est


_digest = digest   # the name the tests and countgrid 0.2 files' tools use


def save(estimator, path, corpus=None):
    """Save a countgrid estimator to ``path`` (a ``.npz`` file, no pickle).

    Parameters
    ----------
    estimator : a fitted or unfitted countgrid estimator
    path : str, path-like or binary file object
    corpus : countgrid.text.Corpus, optional
        The corpus the model was fitted with, stored alongside (its counts too, so that
        ``countgrid html model.npz`` can draw the documents); read it back with
        :func:`load_corpus`.
    """
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
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **arrays)


def _read(path):
    """(header, arrays) of a model file, its checksum verified."""
    if not (isinstance(path, (str, bytes, os.PathLike))
            or (hasattr(path, "read") and hasattr(path, "seek"))):
        raise TypeError(f"path must be a file name (str or os.PathLike) or a binary file "
                        f"object, got {type(path).__name__}")
    arrays = read_arrays(path, f"{path!s}", "countgrid model file")
    if _HEADER_KEY not in arrays:
        raise ValueError(f"{path!s} is not a countgrid model file")
    try:
        header = json.loads(str(arrays.pop(_HEADER_KEY)))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path!s} has a corrupt countgrid header") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        raise ValueError(f"{path!s} is not a countgrid model file")
    version = header.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION or version < 1:
        raise ValueError(f"{path!s} has format version {version!r}; this countgrid reads "
                         f"versions 1 to {FORMAT_VERSION}")
    if version >= 2 and header.get("sha256") != _digest(header, arrays):
        raise ValueError(f"{path!s} is damaged: its SHA-256 checksum does not match its "
                         "content")
    return header, arrays


def load(path, return_corpus=False):
    """Load an estimator saved with ``save`` (``numpy.load(allow_pickle=False)``).

    Every file written by countgrid 0.1.0 or later loads.  Nothing in the file is trusted:
    see the module docstring.

    Parameters
    ----------
    path : str, path-like or binary file object
        The model file.
    return_corpus : bool, default=False
        Also return the corpus saved with the model (as :func:`load_corpus` does), from
        the same single read of the file.

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
        is inconsistent (undeclared or mis-shaped attributes, invalid parameters), or
        was written by a newer format version.
    TypeError
        If ``path`` is neither a file name nor a binary file object.
    """
    header, arrays = _read(path)
    corpus = _corpus(path, header, arrays) if return_corpus else None
    for key in _corpus_keys(path, header, arrays):
        del arrays[key]
    used = set()
    try:
        est = _restore(header.get("model"), "", arrays, used, header["format_version"])
    except _Corrupt as exc:
        raise ValueError(f"{path!s} is not a consistent countgrid model file: {exc}") from None
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"{path!s} has a corrupt countgrid header: {exc}") from exc
    extra = set(arrays) - used
    if extra:
        raise ValueError(f"{path!s} is not a consistent countgrid model file: it holds arrays "
                         f"no attribute declares: {sorted(extra)[:5]}")
    return (est, corpus) if return_corpus else est


def _corpus_keys(path, header, arrays):
    names = header.get("corpus")
    if names is None:
        return []
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        raise ValueError(f"{path!s} is not a consistent countgrid model file: malformed "
                         "corpus entry")
    keys = [_CORPUS_PREFIX + n for n in names]
    missing = [k for k in keys if k not in arrays]
    if missing:
        raise ValueError(f"{path!s} is not a consistent countgrid model file: it lacks "
                         f"the corpus arrays {missing[:5]}")
    return keys


def load_corpus(path):
    """The corpus saved with a model (``save(est, path, corpus=...)``), or None.

    Parameters
    ----------
    path : str, path-like or binary file object
        The model file.

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
    header, arrays = _read(path)
    return _corpus(path, header, arrays)


def _corpus(path, header, arrays):
    """The Corpus of the file's ``corpus:`` arrays, or None."""
    keys = _corpus_keys(path, header, arrays)
    if not keys:
        return None
    parts = {k[len(_CORPUS_PREFIX):]: arrays[k] for k in keys}
    try:
        return _CORPUS_TYPE[0].from_dict(parts)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path!s} holds a corpus that does not load: {exc}") from exc
