"""Cases of the hostile suite for the map's statistics of issue 24 (the atlas):
``countgrid.grid.regions``, ``region_words``, ``compare_groups``, ``shares_by_period``,
``region_effects``, ``countgrid.maps.read_annotations`` and ``maps.write_html``'s
``time=``, ``period=``, ``versus=``, ``names=`` and ``annotations=``.

Classes of input added here:

``region-labels``
    a region per cell (``labels``) of the wrong shape (1-D, 3-D, 0-d, None), dtype
    (float, NaN, bool, str, object) or values (negative, a region skipped, one region
    only, a cell numbered ``10**12`` or ``2**63 + 5``).
``dates``
    the documents' dates (``dates``, ``time``): text that is no date, impossible days,
    bools, complex numbers, objects, 0-d and 2-D arrays, too few or too many, Unix
    timestamps beyond the calendar (``1e300``, ``2**70``, ``inf``), a 200,000-character
    string, bytes that are not ASCII, spans of 10,000 years, missing and all-missing dates
    (which must work); periods that do not exist.
``annotations``
    annotation files and dicts (``read_annotations``, ``write_html(annotations=)``): not
    JSON, empty, UTF-16, Latin-1, a BOM, nesting bombs 100,000 deep, a 50 MB (sparse) file,
    2 MB, ``/dev/zero``, a 5,000-digit number, other formats, extents and cells out of
    range or of the wrong type, names and notes that are not strings or 200,000
    characters long, more than 1,000 of them, a directory, a missing file, a broken
    symbolic link.  The file cases of a size or a depth also keep their memory bounded
    (as the ``bomb`` class, tracemalloc).

and cases of the classes ``params`` (every argument's type and value, the grid: not
fitted, None, a str, a fitted pLSA or classifier, 1-D, 3-D and float32 grids), ``shape``,
``values`` and ``corrupt-sparse`` (the documents ``X`` and the second corpus ``versus``),
``set-params`` (a grid whose ``window`` was changed after fit).  Valid calls are checked
by oracles: shapes, finite values, labels ``0 .. k - 1`` in contiguous regions that nest,
masses that sum to the documents, densities and shares that sum to 1, intervals that hold
their estimate, annotations that read back as themselves, pages that hold what was put
in.

Failures of library code are listed in :data:`KNOWN_FAILURES` (file, line, fix).
"""
import copy
import io
import itertools
import json
import os
import pathlib
import re
from collections import OrderedDict

import _hostile_cases as H
import _hostile_front_door as F
import _hostile_security as S
import numpy as np
from _hostile_cases import Case, D, make, model, nonfinite

E = (4, 4)               # the canonical grid's extent (_hostile_cases._CG)
Z = 12                   # its words
N = 40                   # its documents (D.X)


def _cg():
    return H.cg


def _sp():
    return H.sp


# ============================================================================ data
class Lazy:
    """An argument made when the case runs, from the grid the case calls with."""
    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn


def _private(args):
    """A copy of each argument (so that a function writing into its input cannot change
    the shared data), or the argument itself when it cannot be copied (a generator)."""
    out = {}
    for k, v in args.items():
        try:
            out[k] = copy.deepcopy(v)
        except TypeError:
            out[k] = v
    return out


def _fitted_grid(g):
    return g if isinstance(g, _cg().CountingGrid) and hasattr(g, "pi_") else F._grid()


def _lab(k=3):
    """``regions(grid, k)`` of the grid the case calls with (of the canonical grid when
    that one is not a fitted CountingGrid)."""
    return Lazy(lambda g: _cg().grid.regions(_fitted_grid(g), k))


def _lab_edit(fn, k=3):
    return Lazy(lambda g: fn(_cg().grid.regions(_fitted_grid(g), k)))


def _gap(lab):
    """Region 1 renumbered 5: regions 1, 3 and 4 are skipped."""
    out = lab.copy()
    out[out == 1] = 5
    return out


def _one_cell(value, dtype=np.int64):
    def fn(lab):
        out = lab.astype(dtype)
        out.flat[0] = value
        return out
    return fn


def _grid_1d():
    key = "CountingGrid:1d"
    if key not in H._MODELS:
        H._MODELS[key] = H._cached(("model", key), lambda: _cg().CountingGrid(
            (16,), (2,), n_iter=2, random_state=0, num_threads=1, dtype=np.float64).fit(D.Xs))
    return copy.deepcopy(H._MODELS[key])


def _grid_32():
    key = "CountingGrid:float32"
    if key not in H._MODELS:
        H._MODELS[key] = H._cached(("model", key), lambda: _cg().CountingGrid(
            E, (2, 2), n_iter=3, random_state=0, num_threads=1).fit(D.Xs))
    return copy.deepcopy(H._MODELS[key])


def _window_changed():
    g = F._grid()
    g.set_params(window=(3, 3))
    return g


#: (variant, expect, grid, names, extent of the result, error) of the grid argument
GRIDS = [
    ("grid-unfitted", "raise", lambda: make("CountingGrid"), ("grid", "CountingGrid", "fit"),
     None, ValueError),
    ("grid-None", "raise", lambda: None, ("grid",), None, None),
    ("grid-str", "raise", lambda: "model.npz", ("grid",), None, None),
    ("grid-PLSA", "raise", lambda: model("PLSA"), ("grid",), None, None),
    ("grid-classifier", "either", lambda: model("CountingGridClassifier"), ("grid",), E, None),
    ("grid-3-D", "ok", F._grid3d, ("grid",), (3, 3, 2), None),
    ("grid-1-D", "ok", _grid_1d, ("grid",), (16,), None),
    ("grid-float32", "ok", _grid_32, ("grid",), E, None),
]


def _days():
    """Four months, ten documents each (week periods by "auto": 12; months: 4)."""
    return np.repeat(["2024-01-15", "2024-02-15", "2024-03-15", "2024-04-02"], 10)


def _groups_str():
    return np.where(D.y == 1, "b", "a")


def _with(values, first):
    """``values`` with its first entry replaced (as objects when the types differ)."""
    out = np.asarray(values).astype(object)
    out[0] = first
    return out


def _timestamps(first=None):
    t = np.arange(N, dtype=np.float64) * 86400.0 * 3
    if first is not None:
        t[0] = first
    return t


def _X_variants(corrupt=True):
    """(klass, variant, expect, X, n rows for the other arguments, error, match)."""
    rows = [
        ("shape", "X-sparse", "ok", lambda: _sp().csr_matrix(D.X), N, None, None),
        ("shape", "X-list", "ok", lambda: D.X.tolist(), N, None, None),
        ("dtype", "X-float32", "ok", lambda: D.X.astype(np.float32), N, None, None),
        ("dtype", "X-int8", "ok", lambda: D.X.astype(np.int8), N, None, None),
        ("values", "X-all-zero", "ok", lambda: np.zeros_like(D.X), N, None, None),
        ("values", "X-NaN", "raise", lambda: H._set(1, 1, np.nan)(D.X), N, ValueError,
         "X contains NaN"),
        ("values", "X-inf", "raise", lambda: H._set(1, 1, np.inf)(D.X), N, ValueError,
         "X contains NaN or infinity"),
        ("values", "X-negative", "raise", lambda: H._set(1, 1, -1.0)(D.X), N, ValueError,
         "non-negative"),
        ("dtype", "X-complex", "raise", lambda: D.X.astype(complex), N, (ValueError, TypeError),
         "X"),
        ("shape", "X-wrong-n_features", "raise", lambda: H._wrong_features(D.X), N, ValueError,
         "X has 13 features"),
        ("shape", "X-1-D", "raise", lambda: D.X[0], N, ValueError, "X"),
        ("shape", "X-3-D", "raise", lambda: D.X[None], N, ValueError, "X"),
        ("shape", "X-None", "raise", lambda: None, N, (ValueError, TypeError), "X"),
        ("shape", "X-str", "raise", lambda: "abc", N, TypeError, "X"),
        ("shape", "X-0-rows", "raise", lambda: D.X[:0], 0, ValueError, "X is empty"),
    ]
    if corrupt:
        for kind in ("csr:index-out-of-range", "csr:decreasing-indptr", "csr:short-data",
                     "coo:row-out-of-range"):
            rows.append(("corrupt-sparse", f"X-{kind}", "raise",
                         lambda kind=kind: H._corrupt(kind)(D.X), N, ValueError,
                         "X is a corrupt sparse matrix"))
    return rows


# ============================================================================ oracles
def _torus_neighbours(flat, extent):
    idx = np.unravel_index(flat, extent)
    for axis, side in enumerate(extent):
        if side < 2:
            continue
        for step in (-1, 1):
            moved = list(idx)
            moved[axis] = (moved[axis] + step) % side
            yield int(np.ravel_multi_index(tuple(moved), extent))


def _contiguity_problem(lab):
    extent = lab.shape
    flat = lab.ravel()
    for r in np.unique(flat):
        cells = set(np.flatnonzero(flat == r).tolist())
        seen, todo = set(), [next(iter(cells))]
        while todo:
            c = todo.pop()
            if c in seen:
                continue
            seen.add(c)
            todo.extend(n for n in _torus_neighbours(c, extent) if n in cells and n not in seen)
        if seen != cells:
            return f"region {r} is not contiguous on the torus"
    return None


def regions_oracle(levels, extent=E):
    """An int array of shape ``extent`` (``(len(levels),) + extent``), each level's
    labels exactly ``0 .. k - 1``, every region contiguous, coarser levels unions of
    finer ones."""
    single = not isinstance(levels, (list, tuple))
    ks = [levels] if single else list(levels)

    def oracle(v):
        if not isinstance(v, np.ndarray) or v.dtype.kind not in "iu":
            return f"returned {type(v).__name__} {getattr(v, 'dtype', '')}, not an int array"
        want = tuple(extent) if single else (len(ks),) + tuple(extent)
        if v.shape != want:
            return f"labels of shape {v.shape}, expected {want}"
        parts = [v] if single else list(v)
        for k, lab in zip(ks, parts):
            if np.unique(lab).tolist() != list(range(k)):
                return f"{k} regions: labels {np.unique(lab).tolist()[:8]} are not 0 .. {k - 1}"
            p = _contiguity_problem(lab)
            if p:
                return f"{k} regions: {p}"
        first = {}
        for k, lab in zip(ks, parts):
            if k in first and not np.array_equal(first[k], lab):
                return f"two partitions into {k} regions differ"
            first.setdefault(k, lab)
        levels = sorted(first)
        for coarse_k, fine_k in itertools.pairwise(levels):
            fine, coarse = first[fine_k], first[coarse_k]
            for r in range(fine_k):
                if np.unique(coarse[fine == r]).size != 1:
                    return (f"the partitions do not nest: region {r} of {fine_k} lies in "
                            f"several of {coarse_k}")
        return None
    return oracle


def region_words_oracle(n_regions, n_words=10, vocabulary=None, extent=E):
    """(n_regions, min(n_words, Z)) words: feature indices in range, or str of the
    vocabulary; no word twice in a row."""
    def oracle(v):
        want = (n_regions, min(n_words, Z))
        if not isinstance(v, np.ndarray) or v.shape != want:
            return f"shape {getattr(v, 'shape', None)}, expected {want}"
        if vocabulary is None and v.dtype.kind in "iu":
            if v.size and (v.min() < 0 or v.max() >= Z):
                return "feature indices out of range"
        elif v.dtype.kind == "U":
            if vocabulary is not None and not set(v.ravel().tolist()) <= set(vocabulary):
                return "words not in the vocabulary"
        else:
            return f"words of dtype {v.dtype}"
        for row in v:
            if len(set(row.tolist())) != row.size:
                return "a word appears twice among a region's words"
        return None
    return oracle


def compare_oracle(shape=E, n_a=None, n_b=None):
    """``delta``, ``std``, ``low``, ``high`` finite of ``shape``, the intervals holding
    ``delta``, ``marked`` where they exclude 0, masses that sum to the groups' sizes."""
    def oracle(v):
        for key in ("delta", "std", "low", "high", "mass_a", "mass_b"):
            a = np.asarray(v[key])
            if a.shape != tuple(shape):
                return f"{key} of shape {a.shape}, expected {tuple(shape)}"
            p = nonfinite(a, key)
            if p:
                return p
        if not (np.asarray(v["std"]) > 0).all():
            return "std is not positive"
        lo, d, hi = (np.asarray(v[k]) for k in ("low", "delta", "high"))
        if (lo > d + 1e-9).any() or (d > hi + 1e-9).any():
            return "an interval does not hold delta"
        if not np.array_equal(np.asarray(v["marked"]), (lo > 0) | (hi < 0)):
            return "marked is not where the interval excludes 0"
        for key, n_key, want in (("mass_a", "n_a", n_a), ("mass_b", "n_b", n_b)):
            m = np.asarray(v[key])
            if (m < -1e-9).any():
                return f"{key} is negative"
            if want is not None and v[n_key] != want:
                return f"{n_key} = {v[n_key]}, expected {want}"
            if not np.isclose(m.sum(), v[n_key], rtol=1e-6):
                return f"{key} sums to {m.sum():.6g}, not the {v[n_key]} documents"
        return None
    return oracle


def shares_oracle(n_periods=None, n_regions=None, n_undated=0, n=N, extent=E, period=None):
    """Masses of shape ``(P,) + extent`` summing to each period's documents, densities
    and region shares summing to 1 (0 for a period without documents)."""
    def oracle(v):
        P = len(v["labels"])
        if n_periods is not None and P != n_periods:
            return f"{P} periods, expected {n_periods}"
        if period is not None and v["period"] != period:
            return f"period {v['period']!r}, expected {period!r}"
        if v["period"] not in ("day", "week", "month", "year"):
            return f"unknown period {v['period']!r}"
        if np.asarray(v["starts"]).shape != (P,):
            return "starts is not one per period"
        counts = np.asarray(v["n_documents"])
        if counts.shape != (P,) or counts.sum() + v["n_undated"] != n:
            return "n_documents and n_undated do not add up to the documents"
        if v["n_undated"] != n_undated:
            return f"n_undated = {v['n_undated']}, expected {n_undated}"
        for key in ("mass", "density"):
            a = np.asarray(v[key])
            if a.shape != (P,) + tuple(extent):
                return f"{key} of shape {a.shape}, expected {(P,) + tuple(extent)}"
            p = nonfinite(a, key)
            if p:
                return p
            if (a < -1e-9).any():
                return f"{key} is negative"
        L = int(np.prod(extent))
        mass = np.asarray(v["mass"]).reshape(P, L)
        dens = np.asarray(v["density"]).reshape(P, L)
        if not np.allclose(mass.sum(axis=1), counts, rtol=1e-6, atol=1e-9):
            return "a period's mass does not sum to its documents"
        if not np.allclose(dens.sum(axis=1), (counts > 0).astype(float), atol=1e-9):
            return "a period's density does not sum to 1 (0 without documents)"
        if n_regions is None:
            return "region_share without labels" if "region_share" in v else None
        share = np.asarray(v["region_share"])
        if share.shape != (P, n_regions):
            return f"region_share of shape {share.shape}, expected {(P, n_regions)}"
        p = nonfinite(share, "region_share")
        if p:
            return p
        if not np.allclose(share.sum(axis=1), (counts > 0).astype(float), atol=1e-9):
            return "region shares do not sum to 1 (0 without documents)"
        return None
    return oracle


def effects_oracle(n_regions=3, n_terms=2, n_draws=5):
    """``estimate``, ``std``, ``low``, ``high`` finite of shape (regions, terms), the
    draws (n_draws, regions, terms), ``low <= high``, the intercept first."""
    def oracle(v):
        want = (n_regions, n_terms)
        for key in ("estimate", "std", "low", "high"):
            a = np.asarray(v[key])
            if a.shape != want:
                return f"{key} of shape {a.shape}, expected {want}"
            p = nonfinite(a, key)
            if p:
                return p
        draws = np.asarray(v["draws"])
        if draws.shape != (n_draws,) + want:
            return f"draws of shape {draws.shape}, expected {(n_draws,) + want}"
        p = nonfinite(draws, "draws")
        if p:
            return p
        if (np.asarray(v["low"]) > np.asarray(v["high"]) + 1e-12).any():
            return "low > high"
        if (np.asarray(v["std"]) < 0).any():
            return "negative std"
        terms = list(v["terms"])
        if len(terms) != n_terms or terms[0] != "(intercept)":
            return f"terms {terms[:4]}: expected {n_terms} starting with '(intercept)'"
        return None
    return oracle


def annotations_oracle(n_regions=None, n_notes=None, check=None):
    """The checked annotations: exactly their keys, names at most 100 and notes at most
    1,000 characters with white space collapsed, and a valid input themselves (reading
    them again gives them back)."""
    def oracle(v):
        if not isinstance(v, dict) or set(v) != {"countgrid_annotations", "extent", "regions",
                                                 "notes"}:
            keys = sorted(map(str, v))[:6] if isinstance(v, dict) else ""
            return f"returned {type(v).__name__} {keys}"
        ext = v["extent"]
        if not (isinstance(ext, list) and len(ext) == 2 and all(type(e) is int for e in ext)):
            return f"extent {ext!r} is not two ints"
        if n_regions is not None and len(v["regions"]) != n_regions:
            return f"{len(v['regions'])} region names, expected {n_regions}"
        if n_notes is not None and len(v["notes"]) != n_notes:
            return f"{len(v['notes'])} notes, expected {n_notes}"
        for item in v["regions"]:
            if set(item) != {"n_regions", "anchor", "name"} or not isinstance(item["name"], str) \
                    or len(item["name"]) > 100 or item["name"] != " ".join(item["name"].split()):
                return f"region name {str(item)[:80]} not checked"
        for item in v["notes"]:
            if set(item) != {"cell", "text"} or not isinstance(item["text"], str) \
                    or len(item["text"]) > 1000 or item["text"] != " ".join(item["text"].split()):
                return f"note {str(item)[:80]} not checked"
            r, c = item["cell"]
            if not (0 <= r < ext[0] and 0 <= c < ext[1]):
                return "a note's cell is outside the grid"
        again = _cg().maps.read_annotations(copy.deepcopy(v))
        if again != v:
            return "the result does not read back as itself"
        return check(v) if check else None
    return oracle


def html_oracle(contains=(), absent=()):
    """A complete HTML page holding ``contains`` and none of ``absent``."""
    def oracle(value):
        p = F._html_oracle(value)
        if p:
            return p
        with open(str(value), encoding="utf-8") as fh:
            page = fh.read()
        if not page.rstrip().lower().endswith("</html>"):
            return "the page is not complete"
        for s in contains:
            if s not in page:
                return f"the page lacks {s!r}"
        for s in absent:
            if s in page:
                return f"the page holds {s[:40]!r}"
        return None
    return oracle


# ============================================================================ the statistics
def _stat_case(entry, klass, variant, expect, names, oracle=None, grid=None, error=None,
               match=None, cost=1.0, **kw):
    """A case of ``countgrid.grid.<entry>(grid(), **kw)`` (Lazy arguments made from the grid
    when the case runs)."""
    def run(ctx):
        g = (F._grid if grid is None else grid)()
        args = {k: (v.fn(g) if isinstance(v, Lazy) else v) for k, v in kw.items()}
        return getattr(_cg().grid, entry)(g, **_private(args))

    if expect == "ok":
        error = match = None
    return Case(f"grid.{entry}", "", klass, variant, expect, run, names, oracle,
                (f"countgrid.grid.{entry}",), error=error, match=match, cost=cost)


def _stat_adder(out, entry, defaults):
    """``add(klass, variant, expect, names, oracle=None, error=None, match=None, **kw)``,
    appending to ``out`` a :func:`_stat_case` of ``entry`` whose arguments not in ``kw``
    come from ``defaults()`` (called per case: no two cases share an argument)."""
    def add(klass, variant, expect, names, oracle=None, error=None, match=None, **kw):
        out.append(_stat_case(entry, klass, variant, expect, names, oracle, error=error,
                              match=match, **{**defaults(), **kw}))
    return add


def _set_params_case(entry, call, same):
    """The statistic of a grid whose ``window`` was set to (3, 3) after fit: the result of
    the grid as fitted, or an error naming ``window``."""
    def run(ctx):
        return call(_window_changed()), call(F._grid())

    def oracle(pair):
        got, ref = pair
        return same(got, ref)

    return Case(f"grid.{entry}", "", "set-params", "window-changed-after-fit", "either", run,
                ("window",), oracle, (f"countgrid.grid.{entry}",))


def _same_arrays(*keys):
    def same(got, ref):
        for k in keys:
            a = np.asarray(got[k] if k else got)
            b = np.asarray(ref[k] if k else ref)
            if a.shape != b.shape or not np.allclose(a, b, rtol=1e-9, atol=1e-12):
                return (f"{k or 'the result'} differs from the grid's as fitted: the window "
                        f"set after fit was used")
        return None
    return same


def _grid_cases(entry, oracle_of, **kw):
    out = []
    for variant, expect, grid, names, extent, error in GRIDS:
        out.append(_stat_case(entry, "params", variant, expect, names,
                              oracle_of(extent) if extent else None, grid=grid, error=error,
                              **kw))
    return out


def gen_regions():
    out = []

    def add(klass, variant, expect, levels, names=("n_regions",), error=None, match=None,
            extent=E, **kw):
        out.append(_stat_case("regions", klass, variant, expect, names,
                              regions_oracle(levels, extent) if levels is not None else None,
                              error=error, match=match, **kw))

    # n_regions
    add("params", "n_regions=3", "ok", 3, n_regions=3)
    add("params", "default", "ok", None)
    add("params", "n_regions=1", "ok", 1, n_regions=1)
    add("params", "n_regions=16-every-cell", "ok", 16, n_regions=16)
    add("params", "n_regions=[2,5,16]", "ok", [2, 5, 16], n_regions=[2, 5, 16])
    add("params", "n_regions=[5,2]", "ok", [5, 2], n_regions=[5, 2])
    add("params", "n_regions=(1,)", "ok", [1], n_regions=(1,))
    add("params", "n_regions=numpy.int64(3)", "ok", 3, n_regions=np.int64(3))
    add("params", "n_regions=array([2,3])", "ok", [2, 3], n_regions=np.array([2, 3]))
    add("params", "n_regions=range(1,4)", "ok", [1, 2, 3], n_regions=range(1, 4))
    add("params", "n_regions=generator", "ok", [2, 4],
        n_regions=Lazy(lambda g: (k for k in (2, 4))))
    add("params", "n_regions=[3]*1000", "ok", [3] * 1000, n_regions=[3] * 1000, cost=3.0)
    for variant, value, error, match in [
            ("0", 0, ValueError, "between 1 and"), ("17", 17, ValueError, "between 1 and"),
            ("-1", -1, ValueError, "between 1 and"),
            ("10**12", 10**12, ValueError, "between 1 and"),
            ("2**70", 2**70, ValueError, "between 1 and"),
            ("True", True, TypeError, "n_regions"), ("2.5", 2.5, TypeError, "n_regions"),
            ("3.0", 3.0, TypeError, "n_regions"), ("nan", float("nan"), TypeError, "n_regions"),
            ("'3'", "3", TypeError, "n_regions"), ("None", None, TypeError, "n_regions"),
            ("[]", [], ValueError, "n_regions is empty"),
            ("[3,'x']", [3, "x"], TypeError, "n_regions"),
            ("[3,True]", [3, True], TypeError, "n_regions"),
            ("[3,0]", [3, 0], ValueError, "between 1 and"),
            ("[3.0]", [3.0], TypeError, "n_regions"),
            ("[[2,3]]", [[2, 3]], TypeError, "n_regions"),
            ("0-d-array", np.array(3), TypeError, "n_regions"),
            ("2-D-array", np.array([[2, 3]]), TypeError, "n_regions"),
            ("numpy.float64(3)", np.float64(3.0), TypeError, "n_regions")]:
        add("params", f"n_regions={variant}", "raise", None, error=error, match=match,
            n_regions=value)
    # n_components
    for variant, value in [("1", 1), ("10**12", 10**12), ("numpy.int64(2)", np.int64(2))]:
        add("params", f"n_components={variant}", "ok", 3, ("n_components",), n_regions=3,
            n_components=value)
    for variant, value in [("0", 0), ("-1", -1), ("True", True), ("2.5", 2.5), ("'2'", "2"),
                           ("None", None), ("nan", float("nan"))]:
        add("params", f"n_components={variant}", "raise", None, ("n_components",),
            error=ValueError, match="n_components must be a positive int", n_regions=3,
            n_components=value)
    out += _grid_cases("regions", lambda extent: regions_oracle(3, extent), n_regions=3)
    out.append(_set_params_case("regions", lambda g: _cg().grid.regions(g, 3),
                                _same_arrays(None)))
    return out


def _bad_labels(kind):
    """(variant, expect, labels, error, match, known) of the region-label slot; ``known``:
    one of the library's failures (KNOWN_FAILURES)."""
    must = "labels must be non-negative ints" if kind == "check" else "labels"
    rows = [
        ("labels-wrong-shape", "raise", Lazy(lambda g: np.zeros((3, 3), int)), ValueError,
         "labels"),
        ("labels-1-D", "raise", _lab_edit(np.ravel), ValueError, "labels"),
        ("labels-3-D", "raise", _lab_edit(lambda a: a[None]), ValueError, "labels"),
        ("labels-0-d", "raise", Lazy(lambda g: np.array(0)), ValueError, "labels"),
        ("labels-float", "raise", _lab_edit(lambda a: a.astype(float)), ValueError, must),
        ("labels-NaN", "raise", _lab_edit(lambda a: np.where(a == 0, np.nan, a)), ValueError,
         must),
        ("labels-bool", "raise", _lab_edit(lambda a: a.astype(bool)), ValueError, must),
        ("labels-str", "raise", _lab_edit(lambda a: a.astype(str)), ValueError, must),
        ("labels-negative", "raise", _lab_edit(lambda a: a - 1), ValueError, must),
        ("labels-object-ints", "either", _lab_edit(lambda a: a.astype(object)), ValueError,
         "labels"),
        ("labels-list", "ok", _lab_edit(lambda a: a.tolist()), None, None),
        ("labels-uint8", "ok", _lab_edit(lambda a: a.astype(np.uint8)), None, None),
        ("labels-cell-10**12", "raise", _lab_edit(_one_cell(10**12)), (ValueError, MemoryError),
         "labels"),
        ("labels-cell-uint64-2**63+5", "raise", _lab_edit(_one_cell(2**63 + 5, np.uint64)),
         ValueError, "labels"),
    ]
    return rows


def gen_region_words():
    out = []
    words = [str(w) for w in D.words]

    add = _stat_adder(out, "region_words", lambda: {"labels": _lab(3)})

    add("params", "valid", "ok", ("labels",), region_words_oracle(3))
    add("params", "feature_names", "ok", ("feature_names",), region_words_oracle(3, 10, words),
        feature_names=D.words)
    add("params", "feature_names-ints", "ok", ("feature_names",), region_words_oracle(3, 10),
        feature_names=list(range(Z)))
    for variant, value, n in [("1", 1, 1), ("10**12", 10**12, 10**12),
                              ("numpy.int64(3)", np.int64(3), 3)]:
        add("params", f"n_words={variant}", "ok", ("n_words",), region_words_oracle(3, n),
            n_words=value)
    for variant, value, error, match in [
            ("0", 0, ValueError, "n_words must be >= 1"),
            ("-1", -1, ValueError, "n_words must be >= 1"),
            ("2.5", 2.5, TypeError, "n_words must be an int"),
            ("True", True, TypeError, "n_words must be an int"),
            ("'3'", "3", TypeError, "n_words must be an int"),
            ("None", None, TypeError, "n_words must be an int"),
            ("nan", float("nan"), TypeError, "n_words must be an int")]:
        add("params", f"n_words={variant}", "raise", ("n_words",), error=error, match=match,
            n_words=value)
    for variant, value in [("'probability'", "probability"), ("'lift'", "lift"),
                           ("ones", np.ones(Z)), ("list", [1.0] * Z)]:
        add("params", f"weighting={variant}", "ok", ("weighting",), region_words_oracle(3),
            weighting=value)
    add("params", "weighting='idf'-with-X", "ok", ("weighting", "X"), region_words_oracle(3),
        weighting="idf", X=D.Xs)
    for variant, value, match in [
            ("'nope'", "nope", "weighting must be one of"), ("None", None, "weighting"),
            ("short", np.ones(Z - 1), "weighting has shape"),
            ("NaN", np.r_[np.nan, np.ones(Z - 1)], "finite and non-negative"),
            ("inf", np.r_[np.inf, np.ones(Z - 1)], "finite and non-negative"),
            ("negative", -np.ones(Z), "finite and non-negative"),
            ("2-D", np.ones((Z, 1)), "weighting has shape")]:
        add("params", f"weighting={variant}", "raise", ("weighting",), error=ValueError,
            match=match, weighting=value)
    add("params", "weighting='idf'-without-X", "raise", ("X", "weighting"), error=ValueError,
        match="pass X", weighting="idf")
    for klass, variant, expect, X, _, error, match in _X_variants():
        if expect == "ok" or variant in ("X-0-rows",):
            continue
        add(klass, f"weighting='idf'-{variant}", "raise", ("X",), error=error, match=match,
            weighting="idf", X=X())
    add("values", "X-NaN-without-idf", "either", ("X",), region_words_oracle(3),
        X=H._set(1, 1, np.nan)(D.X))
    add("params", "feature_names-short", "raise", ("feature_names",), error=ValueError,
        match="feature_names has 11 entries", feature_names=D.words[:-1])
    add("params", "feature_names-single-str", "raise", ("feature_names",),
        error=(ValueError, TypeError), match="feature_names", feature_names="abc")
    # labels
    add("region-labels", "labels-one-region", "ok", ("labels",), region_words_oracle(1),
        labels=Lazy(lambda g: np.zeros(E, int)))
    add("region-labels", "labels-every-cell", "ok", ("labels",), region_words_oracle(16),
        labels=Lazy(lambda g: np.arange(16).reshape(E)))
    add("region-labels", "labels-skips-regions", "raise", ("labels",), error=ValueError,
        match="labels skips region 1", labels=_lab_edit(_gap))
    for variant, expect, labels, error, match in _bad_labels("words"):
        add("region-labels", variant, expect, ("labels",),
            region_words_oracle(3) if expect != "raise" else None,
            error=error, match=match, labels=labels)
    add("region-labels", "labels-None", "raise", ("labels",), error=ValueError,
        match="labels", labels=None)
    out += _grid_cases("region_words", lambda extent: region_words_oracle(3), labels=_lab(3))
    out.append(_set_params_case(
        "region_words", lambda g: _cg().grid.region_words(g, _cg().grid.regions(F._grid(), 3)),
        lambda got, ref: None if np.array_equal(got, ref) else "the words differ"))
    return out


def gen_compare_groups():
    out = []

    add = _stat_adder(out, "compare_groups", lambda: {"X": D.Xs, "groups": D.y, "a": 0, "b": 1})

    ok = compare_oracle(E, 20, 20)
    add("params", "valid", "ok", ("groups",), ok)
    add("params", "b=None", "ok", ("b",), compare_oracle(E, 20, 20), b=None)
    add("params", "groups-str", "ok", ("groups",), ok, groups=_groups_str(), a="a", b="b")
    add("params", "groups-list", "ok", ("groups",), ok, groups=D.y.tolist())
    add("params", "groups-object-with-None", "ok", ("groups",), ok,
        groups=np.array([None, 1] * 20, dtype=object), a=None, b=1)
    add("params", "groups-three-levels-b=None", "ok", ("groups",), compare_oracle(E, 14, 26),
        groups=np.arange(N) % 3, a=0, b=None)
    add("params", "a=True-on-ints", "either", ("a",), compare_oracle(E), a=True, b=None)
    add("params", "labels", "ok", ("labels",), compare_oracle((3,), 20, 20), labels=_lab(3))
    add("region-labels", "labels-every-cell", "ok", ("labels",), compare_oracle((16,), 20, 20),
        labels=Lazy(lambda g: np.arange(16).reshape(E)))
    for variant, value in [("1e-300", 1e-300), ("1-1e-16", 1 - 1e-16),
                           ("numpy.float32(0.9)", np.float32(0.9)), ("0.5", 0.5)]:
        add("params", f"level={variant}", "ok", ("level",), ok, level=value)
    for variant, value in [("1e300", 1e300), ("1e-300", 1e-300), ("5e-324", 5e-324),
                           ("numpy.float32(2)", np.float32(2.0)), ("3", 3)]:
        add("params", f"prior_weight={variant}", "ok", ("prior_weight",), ok,
            prior_weight=value)
    add("params", "prior_weight=10**30", "either", ("prior_weight",), ok, prior_weight=10**30)
    # groups
    for variant, value in [("too-short", D.y[:-1]), ("too-long", np.r_[D.y, 0]),
                           ("0-d", np.array(1)), ("column", D.y[:, None]), ("None", None),
                           ("str", "ab"), ("empty", []),
                           ("sparse-row", Lazy(lambda g: _sp().csr_matrix(D.y)))]:
        add("shape", f"groups-{variant}", "raise", ("groups",), error=ValueError,
            match="groups must hold one label per document", groups=value)
    # a and b
    for variant, kw, error, match in [
            ("a-not-a-label", {"a": 5}, ValueError, "a=5 is not a label of groups"),
            ("a-str-on-ints", {"a": "0"}, ValueError, "a='0' is not a label"),
            ("a=None-on-ints", {"a": None}, ValueError, "a=None is not a label"),
            ("a=dict", {"a": {}, "b": None}, ValueError, "is not a label"),
            ("a=nan", {"groups": np.r_[np.nan, D.y_real[1:]], "a": np.nan, "b": None}, ValueError,
             "a=nan is not a label"),
            ("a-equals-b", {"b": 0}, ValueError, "a and b are the same group"),
            ("b-not-a-label", {"b": 7}, ValueError, "b=7 is not a label of groups"),
            ("every-document-in-a", {"groups": np.zeros(N, int), "b": None}, ValueError,
             "nothing to compare"),
            ("a-list", {"a": [0, 1], "b": None}, (ValueError, TypeError), "a"),
            ("b-list", {"b": [1, 2]}, (ValueError, TypeError), "b")]:
        add("params", variant, "raise", ("a", "b", "groups"), error=error, match=match, **kw)
    for variant, value in [("0", 0), ("1", 1), ("-0.5", -0.5), ("nan", float("nan")),
                           ("inf", float("inf")), ("True", True), ("'0.9'", "0.9"),
                           ("None", None)]:
        add("params", f"level={variant}", "raise", ("level",), error=ValueError,
            match="level must be a number in", level=value)
    for variant, value in [("0", 0), ("-1", -1), ("nan", float("nan")), ("inf", float("inf")),
                           ("True", True), ("'1'", "1")]:
        add("params", f"prior_weight={variant}", "raise", ("prior_weight",), error=ValueError,
            match="prior_weight must be a positive number", prior_weight=value)
    # X
    for klass, variant, expect, X, n, error, match in _X_variants():
        add(klass, variant, expect, ("X", "n_features", "features"),
            ok if expect == "ok" else None, error=error, match=match, X=X(),
            groups=D.y[:n])
    add("shape", "X-3-rows", "raise", ("groups",), error=ValueError,
        match=r"groups must hold one label per document \(3\)", X=D.X[:3])
    # labels
    add("region-labels", "labels-skips-regions", "either", ("labels",), compare_oracle((6,)),
        error=ValueError, match="labels", labels=_lab_edit(_gap))
    add("region-labels", "labels-one-region", "either", ("labels",), compare_oracle((1,)),
        error=ValueError, match="labels", labels=Lazy(lambda g: np.zeros(E, int)))
    for variant, expect, labels, error, match in _bad_labels("check"):
        add("region-labels", variant, expect, ("labels",),
            compare_oracle((3,), 20, 20) if expect != "raise" else None,
            error=error, match=match, labels=labels)
    out += _grid_cases("compare_groups", lambda extent: compare_oracle(extent, 20, 20),
                       X=D.Xs, groups=D.y, a=0, b=1)
    out.append(_set_params_case(
        "compare_groups", lambda g: _cg().grid.compare_groups(g, D.Xs, D.y, 0, 1),
        _same_arrays("delta", "mass_a")))
    return out


def gen_shares_by_period():
    import datetime as dt

    out = []

    add = _stat_adder(out, "shares_by_period", lambda: {"X": D.Xs, "dates": _days()})

    add("dates", "valid", "ok", ("dates",), shares_oracle(12, period="week"))
    for period, n in [("month", 4), ("week", 12), ("day", 79), ("year", 1)]:
        add("dates", f"period='{period}'", "ok", ("period",), shares_oracle(n, period=period),
            period=period)
    add("dates", "labels", "ok", ("labels",), shares_oracle(4, 3), period="month",
        labels=_lab(3))
    days = _days()
    utc5 = dt.timezone(dt.timedelta(hours=5))
    for variant, value, n_undated in [
            ("datetime64[D]", days.astype("datetime64[D]"), 0),
            ("datetime64[ns]", days.astype("datetime64[ns]"), 0),
            ("list", list(days), 0), ("bytes", [d.encode() for d in days], 0),
            ("year-and-month-strings", np.r_[["2024", "2024-02"], days[2:]], 0),
            ("times-Z-and-offsets", np.r_[["2024-01-15T23:00:00+05:00", "2024-01-15T01:00:00Z",
                                           "2024-01-15T01:00:00.123456"], days[3:]], 0),
            ("datetime-objects", [dt.datetime(2024, 1 + i % 4, 1 + i % 28) for i in range(N)],
             0),
            ("date-objects", [dt.date(2024, 1 + i % 4, 1 + i % 28) for i in range(N)], 0),
            ("aware-datetimes", [dt.datetime(2024, 1 + i % 4, 3, tzinfo=utc5)
                                 for i in range(N)], 0),
            ("unix-seconds-int", (np.arange(N) * 86400 * 3).astype(np.int64), 0),
            ("unix-seconds-float", _timestamps(), 0),
            ("unix-seconds-negative", _timestamps() - 3e8, 0),
            ("some-missing", _with(_with(days, None), ""), 1),
            ("missing-kinds", np.array(["", None, float("nan"), np.datetime64("NaT"), "  "]
                                       + list(days[5:]), dtype=object), 5),
            ("float-NaN-missing", _timestamps(np.nan), 1)]:
        add("dates", f"dates-{variant}", "ok", ("dates",),
            shares_oracle(n_undated=n_undated, n_periods=None), period="month", dates=value)
    for variant, value in [("empty-strings", np.array([""] * N)), ("None", [None] * N),
                           ("NaT", np.full(N, np.datetime64("NaT"))),
                           ("NaN", np.full(N, np.nan))]:
        add("dates", f"dates-all-missing-{variant}", "ok", ("dates",),
            shares_oracle(0, n_undated=N), dates=value)
    add("dates", "dates-all-missing-with-labels", "ok", ("dates",),
        shares_oracle(0, 3, n_undated=N), dates=[None] * N, labels=_lab(3))
    bad = [  # (variant, dates, error, match)
        ("'soon'", _with(days, "soon"), ValueError, r"dates\[0\] = 'soon' is not a date"),
        ("'2021-13-45'", _with(days, "2021-13-45"), ValueError, r"dates\[0\] = '2021-13-45'"),
        ("'2021-02-30'", _with(days, "2021-02-30"), ValueError, r"dates\[0\] = '2021-02-30'"),
        ("'24:00'", _with(days, "2024-01-01T25:00"), ValueError, r"dates\[0\]"),
        ("bool", np.ones(N, bool), ValueError, r"dates\[0\] = True is not a date"),
        ("complex", np.ones(N, complex), ValueError, r"dates\[0\]"),
        ("objects", Lazy(lambda g: [object()] * N), ValueError, r"dates\[0\]"),
        ("lists", [[2024]] * N, ValueError, "dates must be 1-D"),
        ("2-D", days.reshape(20, 2), ValueError, "dates must be 1-D"),
        ("0-d-str", "2024-01-15", ValueError, "dates must be 1-D"),
        ("None", None, ValueError, "dates must be 1-D"),
        ("int", 5, ValueError, "dates must be 1-D"),
        ("dict", {"a": 1}, ValueError, "dates must be 1-D"),
        ("too-short", days[:-1], ValueError, r"dates must hold one date per document \(40\)"),
        ("too-long", np.r_[days, days[:1]], ValueError, "dates must hold one date per"),
        ("empty", [], ValueError, "dates must hold one date per document"),
        ("1e300", _timestamps(1e300), ValueError, "not a Unix timestamp"),
        ("2**70", _with(_timestamps(), 2**70), ValueError, "not a Unix timestamp"),
        ("int64-2**62", np.r_[np.int64(2**62), np.arange(N - 1)], ValueError,
         "not a Unix timestamp"),
        ("uint64-max", np.r_[np.uint64(2**64 - 1), np.arange(N - 1, dtype=np.uint64)],
         ValueError, "not a Unix timestamp"),
        ("inf-in-a-list", _with(_timestamps(), float("inf")), ValueError,
         "not a Unix timestamp"),
        ("inf-in-a-float-array", _timestamps(np.inf), ValueError, r"dates\[0\]"),
        ("-inf-in-a-float-array", _timestamps(-np.inf), ValueError, r"dates\[0\]"),
        ("200000-characters", _with(days, "2024" + "x" * 200000), ValueError,
         "too long for a date"),
        ("bytes-not-ASCII", [b"\xff\xfe"] + [d.encode() for d in days[1:]], ValueError,
         "not ASCII"),
        ("span-0001-9999", np.r_[["0001-01-01", "9999-12-31"], days[2:]], ValueError,
         "more than 1000"),
    ]
    for variant, value, error, match in bad:
        add("dates", f"dates-{variant}", "raise", ("dates",), error=error, match=match,
            dates=value)
    add("dates", "period='day'-over-25-years", "raise", ("period", "dates"), error=ValueError,
        match=r"period='day' cuts the dates .* more than 1000: choose 'month'",
        dates=np.r_[["2000-01-01", "2024-12-31"], days[2:]], period="day")
    for variant, value in [("'decade'", "decade"), ("None", None), ("5", 5),
                           ("'Month'", "Month"), ("['month']", ["month"]), ("''", ""),
                           ("' month'", " month")]:
        add("dates", f"period={variant}", "raise", ("period",), error=ValueError,
            match="period must be one of", period=value)
    # labels
    add("region-labels", "labels-skips-regions", "either", ("labels",), shares_oracle(4, 6),
        period="month", labels=_lab_edit(_gap))
    add("region-labels", "labels-one-region", "ok", ("labels",), shares_oracle(4, 1),
        period="month", labels=Lazy(lambda g: np.zeros(E, int)))
    for variant, expect, labels, error, match in _bad_labels("check"):
        add("region-labels", variant, expect, ("labels",),
            shares_oracle(4, 3) if expect != "raise" else None, error=error, match=match,
            period="month", labels=labels)
    for klass, variant, expect, X, n, error, match in _X_variants():
        add(klass, variant, expect, ("X", "n_features", "features"),
            shares_oracle(4) if expect == "ok" else None, error=error, match=match, X=X(),
            dates=_days()[:n], period="month")
    out += _grid_cases("shares_by_period",
                       lambda extent: shares_oracle(4, extent=extent, period="month"),
                       X=D.Xs, dates=_days(), period="month")
    out.append(_set_params_case(
        "shares_by_period",
        lambda g: _cg().grid.shares_by_period(g, D.Xs, _days(), "month",
                                              _cg().grid.regions(F._grid(), 3)),
        _same_arrays("mass", "region_share")))
    return out


def gen_region_effects():
    out = []

    add = _stat_adder(out, "region_effects", lambda: {
        "X": D.Xs, "covariates": {"g": _groups_str()}, "labels": _lab(3), "n_draws": 5})

    ok = effects_oracle()
    rng = np.random.default_rng(5)
    add("params", "valid", "ok", ("covariates",), ok)
    for variant, cov, terms in [
            ("numeric", {"x": D.y_real}, 2),
            ("numeric-and-label", {"x": np.arange(N, dtype=float), "g": _groups_str()}, 3),
            ("bool", {"b": D.y == 1}, 2), ("int-key", {5: _groups_str()}, 2),
            ("tuple-key", {("a", 1): _groups_str()}, 2),
            ("object-with-None", {"g": np.array([None, "x"] * 20, dtype=object)}, 2),
            ("object-mixed", {"g": np.array([1, "a"] * 20, dtype=object)}, 2),
            ("int-beyond-int64", {"g": [2**70] * 20 + [0] * 20}, 2),
            ("three-levels", {"g": np.array(["a", "b", "c"] * 13 + ["a"])}, 3),
            ("38-numeric", {f"c{i}": rng.normal(size=N) for i in range(38)}, 39),
            ("numeric-list", {"x": D.y_real.tolist()}, 2),
            ("timestamps", {"t": 1.7e9 + np.arange(N) * 86400.0}, 2)]:
        add("params", f"covariates-{variant}", "ok", ("covariates",),
            effects_oracle(3, terms), covariates=cov)
    for variant, value, draws in [("1", 1, 1), ("numpy.int64(3)", np.int64(3), 3),
                                  ("10000", 10000, 10000)]:
        add("params", f"n_draws={variant}", "ok", ("n_draws",), effects_oracle(3, 2, draws),
            n_draws=value, cost=2.0 if draws > 100 else 1.0)
    add("params", "level=1e-300", "ok", ("level",), ok, level=1e-300)
    for variant, value in [("None", None), ("2**70", 2**70), ("numpy.int64(1)", np.int64(1)),
                           ("Generator", Lazy(lambda g: np.random.default_rng(1))),
                           ("RandomState", Lazy(lambda g: np.random.RandomState(1)))]:
        add("params", f"random_state={variant}", "ok", ("random_state",), ok,
            random_state=value)
    add("region-labels", "labels-one-region", "ok", ("labels",), effects_oracle(1),
        labels=Lazy(lambda g: np.zeros(E, int)))
    add("region-labels", "labels-every-cell", "ok", ("labels",), effects_oracle(16),
        labels=Lazy(lambda g: np.arange(16).reshape(E)))
    add("region-labels", "labels-skips-regions", "either", ("labels",), effects_oracle(6),
        labels=_lab_edit(_gap))
    # refusals
    for variant, cov, error, match in [
            ("{}", {}, TypeError, "covariates must be a non-empty dict"),
            ("list", [_groups_str()], TypeError, "covariates must be a non-empty dict"),
            ("None", None, TypeError, "covariates must be a non-empty dict"),
            ("too-short", {"g": _groups_str()[:-1]}, ValueError,
             r"covariates\['g'\] must be 1-D with 40"),
            ("2-D", {"g": D.X}, ValueError, r"covariates\['g'\] must be 1-D"),
            ("0-d", {"g": 5}, ValueError, r"covariates\['g'\] must be 1-D"),
            ("NaN", {"x": np.r_[np.nan, D.y_real[1:]]}, ValueError, "missing or infinite"),
            ("inf", {"x": np.r_[np.inf, D.y_real[1:]]}, ValueError, "missing or infinite"),
            ("complex", {"x": np.ones(N, complex)}, TypeError, "must hold numbers or labels"),
            ("datetime", {"x": np.arange(N).astype("datetime64[D]")}, TypeError,
             "must hold numbers or labels"),
            ("single-level", {"g": np.array(["a"] * N)}, ValueError, "single level"),
            ("constant", {"x": np.ones(N)}, ValueError, "collinear"),
            ("collinear", {"x": np.arange(N, dtype=float), "y": 2.0 * np.arange(N)},
             ValueError, "collinear"),
            ("as-many-terms-as-documents", {f"c{i}": rng.normal(size=N) for i in range(39)},
             ValueError, "covariates|X")]:
        add("params", f"covariates-{variant}", "raise", ("covariates",), error=error,
            match=match, covariates=cov)
    add("params", "covariates-120-levels", "raise", ("covariates",), error=ValueError,
        match=r"covariates\['g'\] has 120 levels", X=np.vstack([D.X] * 3),
        covariates={"g": np.arange(3 * N).astype(str)})
    add("params", "covariates-x1e200", "either", ("covariates",), ok,
        covariates={"x": np.arange(N) * 1e200})
    add("shape", "X-2-rows", "raise", ("X", "covariates"), error=ValueError, match="X|covariates",
        X=D.X[:2], covariates={"x": np.array([0.0, 1.0])})
    for variant, value in [("0", 0), ("-1", -1), ("10001", 10001), ("10**12", 10**12),
                           ("True", True), ("2.5", 2.5), ("'5'", "5"), ("None", None)]:
        add("params", f"n_draws={variant}", "raise", ("n_draws",), error=ValueError,
            match=r"n_draws must be an int in \[1, 10000\]", n_draws=value)
    for variant, value in [("0", 0), ("1", 1), ("nan", float("nan")), ("True", True),
                           ("'0.9'", "0.9")]:
        add("params", f"level={variant}", "raise", ("level",), error=ValueError,
            match="level must be a number in", level=value)
    for variant, value, error in [("-1", -1, ValueError), ("'seed'", "seed", TypeError),
                                  ("1.5", 1.5, TypeError)]:
        add("params", f"random_state={variant}", "raise", ("random_state",), error=error,
            match="random_state must be", random_state=value)
    for variant, expect, labels, error, match in _bad_labels("check"):
        add("region-labels", variant, expect, ("labels",),
            ok if expect != "raise" else None, error=error, match=match, labels=labels)
    for klass, variant, expect, X, n, error, match in _X_variants():
        if n != N:
            continue
        add(klass, variant, expect, ("X", "n_features", "features"),
            ok if expect == "ok" else None, error=error, match=match, X=X())
    add("region-labels", "labels-None", "raise", ("labels",), error=ValueError,
        match="labels must be non-negative ints", labels=None)
    out += _grid_cases("region_effects", lambda extent: effects_oracle(), X=D.Xs,
                       covariates={"g": _groups_str()}, labels=_lab(3), n_draws=5)
    out.append(_set_params_case(
        "region_effects",
        lambda g: _cg().grid.region_effects(g, D.Xs, {"g": _groups_str()},
                                            _cg().grid.regions(F._grid(), 3), n_draws=5),
        _same_arrays("estimate", "draws")))
    return out


# ============================================================================ annotations
def _doc(**over):
    d = {"countgrid_annotations": 1, "extent": [4, 4],
         "regions": [{"n_regions": 2, "anchor": [0, 0], "name": "packaging"}],
         "notes": [{"cell": [1, 2], "text": "check these"}]}
    d.update(over)
    return d


def _region(**over):
    r = {"n_regions": 2, "anchor": [0, 0], "name": "a"}
    r.update(over)
    return r


def _note(**over):
    n = {"cell": [0, 0], "text": "a"}
    n.update(over)
    return n


def _file(name, data):
    """A function of the case's folder writing ``data`` (bytes, str or a dict as JSON) to
    ``name`` and returning its path."""
    def build(ctx):
        content = data(ctx) if callable(data) else data
        if isinstance(content, dict):
            content = json.dumps(content)
        if isinstance(content, str):
            content = content.encode("utf-8")
        return F._write(ctx.path(name), content)
    return build


def _sparse_file(name, size, head=b""):
    """A file of ``size`` bytes, ``head`` then a hole (no disk used)."""
    def build(ctx):
        path = F._write(ctx.path(name), head)
        os.truncate(path, size)
        return path
    return build


def _symlink(name, target):
    def build(ctx):
        path = ctx.path(name)
        os.symlink(target(ctx) if callable(target) else ctx.path(target), path)
        return path
    return build


def _folder(ctx):
    path = ctx.path("notes.json")
    os.mkdir(path)
    return path


def _short(value):
    """A JSON value as a case id's variant (no spaces)."""
    return json.dumps(value, separators=(",", ":"))


def _label(value):
    """Any value as a case id's variant: its repr, spaces out, cut at 60 characters."""
    return repr(value).replace(" ", "")[:60]


A_NAMES = ("annotations", "source")
MB = 2**20


def _measured(fn):
    """``fn()`` within the memory of a refused bomb (_hostile_security.BOMB_*_LIMIT)."""
    value, exc, peak, rise = S.measured(fn)
    if peak > S.BOMB_TRACED_LIMIT or (rise is not None and rise > S.BOMB_RSS_LIMIT):
        raise S.Violated(f"took {peak / MB:.0f} MB (traced), resident high-water mark up "
                         f"{(rise or 0) / MB:.0f} MB, before "
                         f"{type(exc).__name__ if exc else 'returning'}")
    if exc is not None:
        raise exc
    return value


def gen_read_annotations():
    out = []
    need = ("countgrid.maps.read_annotations",)

    def add(variant, expect, source, oracle=None, error=None, match=None, names=A_NAMES,
            extra=None, bounded=False):
        """``source``: a dict (given as it is) or a function of the case's context giving
        the argument (a path)."""
        def run(ctx, source=source):
            arg = source(ctx) if callable(source) else copy.deepcopy(source)
            if extra is not None:
                ctx.extra_names.append(extra(arg))
            call = lambda: _cg().maps.read_annotations(arg)
            return _measured(call) if bounded else call()

        if expect == "ok":
            error = match = None
        out.append(Case("maps.read_annotations", "", "annotations", variant, expect, run,
                        names, oracle, need, files=True, error=error, match=match,
                        classify=S.classify_security if bounded else None,
                        recycle=bounded, cost=2.0 if bounded else 1.0))

    # valid
    add("dict", "ok", _doc(), annotations_oracle(1, 1, lambda v: None if v == _doc() else
                                                 "the valid dict did not come back as it was"))
    add("file", "ok", _file("notes.json", _doc()), annotations_oracle(1, 1))
    add("pathlib", "ok", lambda ctx: pathlib.Path(_file("notes.json", _doc())(ctx)),
        annotations_oracle(1, 1))
    add("bytes-path", "ok", lambda ctx: os.fsencode(_file("notes.json", _doc())(ctx)),
        annotations_oracle(1, 1))
    add("symlink-to-a-file", "ok",
        lambda ctx: (_file("real.json", _doc())(ctx), _symlink("notes.json", "real.json")(ctx))[1],
        annotations_oracle(1, 1))
    add("exactly-1-MB", "ok", _file("notes.json", lambda ctx: json.dumps(_doc()).ljust(MB)),
        annotations_oracle(1, 1))
    add("OrderedDict", "ok", OrderedDict(_doc()), annotations_oracle(1, 1))
    add("extra-keys", "ok", _doc(evil="<script>", __proto__={"polluted": 1}, version=99),
        annotations_oracle(1, 1))
    add("non-str-keys", "ok", {**_doc(), 1: 2, None: 3}, annotations_oracle(1, 1))
    add("no-regions-no-notes", "ok", {"countgrid_annotations": 1, "extent": [4, 4]},
        annotations_oracle(0, 0))
    add("extent-65536x65536", "ok", _doc(extent=[65536, 65536]), annotations_oracle(1, 1))
    add("extent-1x1", "ok", _doc(extent=[1, 1], notes=[_note(cell=[0, 0])],
                                 regions=[_region(n_regions=1)]), annotations_oracle(1, 1))
    add("1000-regions", "ok", _doc(regions=[_region()] * 1000), annotations_oracle(1000, 1))
    add("1000-notes", "ok", _doc(notes=[_note()] * 1000), annotations_oracle(1, 1000))
    add("name-200000-characters", "ok", _doc(regions=[_region(name="x" * 200000)]),
        annotations_oracle(1, 1, lambda v: None if len(v["regions"][0]["name"]) <= 100
                           else "the name was not cut"))
    add("note-10**6-characters", "ok", _doc(notes=[_note(text="y" * 10**6)]),
        annotations_oracle(1, 1))
    add("white-space", "ok", _doc(notes=[_note(text=" a \n\t b\r\n ")]),
        annotations_oracle(1, 1, lambda v: None if v["notes"][0]["text"] == "a b"
                           else f"white space kept: {v['notes'][0]['text']!r}"))
    for variant, text in [("empty", ""), ("control-characters", "\x00\x1b[31m\u202e"),
                          ("script", "</script><script>alert(1)</script>"),
                          ("lone-surrogate", "x\ud800y"), ("emoji", "\U0001f600" * 50)]:
        add(f"name-{variant}", "ok", _doc(regions=[_region(name=text)]),
            annotations_oracle(1, 1))
    add("format-true", "either", _doc(countgrid_annotations=True), annotations_oracle(1, 1),
        error=ValueError, match="countgrid annotations")
    add("utf8-bom", "either", _file("notes.json", b"\xef\xbb\xbf" + json.dumps(_doc()).encode()),
        annotations_oracle(1, 1), error=ValueError, match="not a JSON file")
    # files that are not annotations
    for variant, data, match in [
            ("garbage", F._garbage(4000), "not a JSON file"),
            ("empty", b"", "not a JSON file"),
            ("utf-16", json.dumps(_doc()).encode("utf-16"), "not a JSON file"),
            ("latin-1", json.dumps(_doc(notes=[_note(text="caf\u00e9")]),
                                   ensure_ascii=False).encode("latin-1"), "not a JSON file"),
            ("truncated", json.dumps(_doc()).encode()[:-3], "not a JSON file"),
            ("two-documents", (json.dumps(_doc()) * 2).encode(), "not a JSON file"),
            ("a-list", b"[1, 2]", "not a countgrid annotations file"),
            ("a-number", b"1", "not a countgrid annotations file"),
            ("null", b"null", "not a countgrid annotations file"),
            ("a-string", b'"countgrid_annotations"', "not a countgrid annotations file"),
            ("NaN-extent", b'{"countgrid_annotations": 1, "extent": [NaN, 4]}',
             "extent must be"),
            ("1e400-extent", b'{"countgrid_annotations": 1, "extent": [1e400, 4]}',
             "extent must be"),
            ("5000-digit-number", b'{"countgrid_annotations": 1, "extent": [' + b"9" * 5000
             + b', 4]}', "annotations"),
            ("a-model-file", lambda ctx: pathlib.Path(F._model_file(ctx.path("m.npz")))
             .read_bytes(),
             "not a JSON file|larger than")]:
        add(f"file-{variant}", "raise", _file("notes.json", data), error=ValueError,
            match=match)
    # bombs: a size or a depth, in bounded memory
    for variant, build, match in [
            ("50-MB-sparse", _sparse_file("notes.json", 50 * MB, json.dumps(_doc())[:-2].encode()
                                          + b', "notes": ['), "larger than 1048576 bytes"),
            ("2-MB", _file("notes.json", lambda ctx: json.dumps(
                _doc(notes=[_note(text="z" * 1000)] * 2000))), "larger than 1048576 bytes"),
            ("nested-lists-100000", _file("notes.json", "[" * 100000 + "]" * 100000),
             "not a JSON file"),
            ("nested-objects-100000", _file("notes.json", '{"a":' * 100000 + "1"
                                            + "}" * 100000), "not a JSON file"),
            ("nested-in-notes-100000", _file("notes.json", '{"countgrid_annotations": 1, '
                                             '"extent": [4, 4], "notes": ' + "[" * 100000
                                             + "]" * 100000 + "}"), "not a JSON file"),
            ("dev-zero", lambda ctx: "/dev/zero", "larger than 1048576 bytes")]:
        add(f"file-{variant}", "raise", build, error=ValueError, match=match, bounded=True)
    # paths that are no file
    add("path-directory", "raise", _folder, error=OSError, match="notes.json",
        names=("notes.json",))
    add("path-missing", "raise", lambda ctx: ctx.path("missing.json"),
        error=FileNotFoundError, match="missing.json", names=("missing.json",))
    add("path-broken-symlink", "raise", _symlink("notes.json", "nowhere.json"),
        error=FileNotFoundError, match="notes.json", names=("notes.json",))
    add("path-empty-string", "raise", lambda ctx: "", error=(ValueError, OSError),
        match="annotations|source")
    for variant, value in [("None", None), ("int", 3), ("list", [_doc()]),
                           ("StringIO", io.StringIO(json.dumps(_doc()))),
                           ("bytearray", bytearray(b"notes.json")), ("float", 1.5)]:
        add(f"source-{variant}", "raise", lambda ctx, value=value: value, error=TypeError,
            match="annotations must be a file name or a dict")
    # fields
    for variant, doc, match in [
            ("format-2", _doc(countgrid_annotations=2), "not a countgrid annotations file"),
            ("format-'1'", _doc(countgrid_annotations="1"), "not a countgrid annotations file"),
            ("format-missing", {"extent": [4, 4]}, "not a countgrid annotations file"),
            ("extent-missing", {"countgrid_annotations": 1}, "extent must be"),
            ("extent-[10]", _doc(extent=[10]), "extent must be"),
            ("extent-[4,4,4]", _doc(extent=[4, 4, 4]), "extent must be"),
            ("extent-[0,4]", _doc(extent=[0, 4]), "extent must be"),
            ("extent-[-1,4]", _doc(extent=[-1, 4]), "extent must be"),
            ("extent-[4.0,4]", _doc(extent=[4.0, 4]), "extent must be"),
            ("extent-[true,4]", _doc(extent=[True, 4]), "extent must be"),
            ("extent-str", _doc(extent=["4", "4"]), "extent must be"),
            ("extent-[2**70,4]", _doc(extent=[2**70, 4]), "extent must be"),
            ("extent-[65537,4]", _doc(extent=[65537, 4]), "extent must be"),
            ("extent-null", _doc(extent=None), "extent must be"),
            ("extent-int", _doc(extent=4), "extent must be"),
            ("extent-NaN", _doc(extent=[float("nan"), 4]), "extent must be"),
            ("regions-object", _doc(regions={}), "regions must be a list"),
            ("regions-null", _doc(regions=None), "regions must be a list"),
            ("regions-1001", _doc(regions=[_region()] * 1001), "more than 1000 regions"),
            ("regions[0]-str", _doc(regions=["a"]), r"regions\[0\] must be an object"),
            ("notes-object", _doc(notes={}), "notes must be a list"),
            ("notes-str", _doc(notes="a"), "notes must be a list"),
            ("notes-1001", _doc(notes=[_note()] * 1001), "more than 1000 notes"),
            ("notes[0]-list", _doc(notes=[[0, 0, "a"]]), r"notes\[0\] must be an object")]:
        add(f"field-{variant}", "raise", doc, error=ValueError, match=match)
    for value in [0, True, 2.5, 17, None, "3", -1, 2**70]:
        add(f"field-n_regions={value!r}", "raise", _doc(regions=[_region(n_regions=value)]),
            error=ValueError, match=r"regions\[0\]\.n_regions must be")
    for where, key, make_item in (("regions[0].anchor", "regions", lambda c: _region(anchor=c)),
                                  ("notes[0].cell", "notes", lambda c: _note(cell=c))):
        for value, match in [([4, 0], "is outside the 4 x 4 grid"),
                             ([0, 4], "is outside the 4 x 4 grid"),
                             ([0, -1], "is outside the 4 x 4 grid"),
                             ([2**70, 0], "is outside the 4 x 4 grid"),
                             ([1], "must be a cell"), ([1, 2, 3], "must be a cell"),
                             (["1", "2"], "must be a cell"), ([True, 0], "must be a cell"),
                             ([1.0, 2.0], "must be a cell"), (None, "must be a cell"),
                             ([float("nan"), 0], "must be a cell"), ({"r": 1}, "must be a cell"),
                             (5, "must be a cell")]:
            add(f"field-{where}={_short(value)}", "raise", _doc(**{key: [make_item(value)]}),
                error=ValueError, match=re.escape(where) + ".*" + match)
    for where, key, make_item in (("regions[0].name", "regions", lambda t: _region(name=t)),
                                  ("notes[0].text", "notes", lambda t: _note(text=t))):
        for value in [5, None, ["a"], {"a": 1}, True]:
            add(f"field-{where}={_short(value)}", "raise", _doc(**{key: [make_item(value)]}),
                error=ValueError, match=re.escape(where) + " must be a string")
    return out


# ============================================================================ write_html
def gen_write_html():
    out = []
    need = ("countgrid.maps.write_html",)

    def add(klass, variant, expect, case_names, contains=(), absent=(), error=None,
            match=None, grid=None, X="canon", files=False, **kw):
        def run(ctx, kw=kw):
            args = {k: (v.fn(ctx) if isinstance(v, Lazy) else v) for k, v in kw.items()}
            before = set(os.listdir(ctx.tmp))
            target = ctx.path("m.html")
            try:
                Xv = D.Xs if isinstance(X, str) and X == "canon" else X
                return _cg().maps.write_html((F._grid if grid is None else grid)(), target,
                                             Xv, **args)
            except Exception:
                left = sorted(set(os.listdir(ctx.tmp)) - before)
                if left:
                    raise S.Violated(f"a refused call left {left} in the folder") from None
                raise

        if expect == "ok":
            error = match = None
        out.append(Case("maps.write_html", "", klass, variant, expect, run, case_names,
                        html_oracle(contains, absent), need, files=files, error=error,
                        match=match, classify=S.classify_security))

    days = _days()
    J = {"data_format": "json"}
    # time= and period=
    add("dates", "time=dates", "ok", ("time",), ("2024-03",), time=days, **J)
    add("dates", "time=metadata-column", "ok", ("time",), ("2024-03",), time="when",
        metadata={"when": days}, **J)
    add("dates", "time=numeric-metadata-column", "ok", ("time",), time="ts",
        metadata={"ts": _timestamps()}, **J)
    add("dates", "time=corpus-column", "ok", ("time",), ("2024-03",), X=None,
        corpus=Lazy(lambda ctx: F.corpus(metadata={"when": _days()})), time="when", **J)
    add("dates", "time=list", "ok", ("time",), ("2024-03",), time=list(days), **J)
    add("dates", "time=datetime64", "ok", ("time",), ("2024-03",),
        time=days.astype("datetime64[D]"), **J)
    add("dates", "time=some-missing", "ok", ("time",), ("2024-03",),
        time=_with(_with(days, None), ""), **J)
    add("dates", "time=all-missing", "ok", ("time",), time=[None] * N)
    add("dates", "time=all-NaN", "ok", ("time",), time=np.full(N, np.nan))
    add("dates", "time=dates-period=month", "ok", ("period",), ('"2024-04"',), time=days,
        period="month", **J)
    add("dates", "time=dates-period=year", "ok", ("period",), time=days, period="year")
    add("dates", "time=dates-max_docs=5", "ok", ("time",), time=days, max_docs=5)
    for variant, kw, error, match in [
            ("time=unknown-column", {"time": "nope", "metadata": {"when": days}}, ValueError,
             "time='nope' is not a metadata column"),
            ("time=column-without-metadata", {"time": "when"}, ValueError,
             "is not a metadata column"),
            ("time=200000-character-column", {"time": "x" * 200000, "metadata": {"when": days}},
             ValueError, "is not a metadata column"),
            ("time='soon'", {"time": _with(days, "soon")}, ValueError,
             r"time\[0\] = 'soon' is not a date"),
            ("time=too-short", {"time": days[:-1]}, ValueError,
             "time must hold one date per document"),
            ("time=2-D", {"time": days.reshape(20, 2)}, ValueError, "time must be 1-D"),
            ("time=int", {"time": 5}, ValueError, "time"),
            ("time=dict", {"time": {"a": 1}}, ValueError, "time"),
            ("time=bool", {"time": np.ones(N, bool)}, ValueError, r"time\[0\]"),
            ("time=inf-in-a-float-array", {"time": _timestamps(np.inf)}, ValueError,
             r"time\[0\]"),
            ("time=1e300", {"time": _timestamps(1e300)}, ValueError, "not a Unix timestamp"),
            ("time=span-0001-9999", {"time": np.r_[["0001-01-01", "9999-12-31"], days[2:]]},
             ValueError, "more than 1000"),
            ("time=without-X", {"X": None, "time": days}, ValueError, "time"),
            ("period=day-over-25-years", {"time": np.r_[["2000-01-01", "2024-12-31"],
                                                         days[2:]], "period": "day"},
             ValueError, "period='day'"),
            ("period=without-time", {"period": "month"}, ValueError, "pass time too"),
            ("period='decade'", {"time": days, "period": "decade"}, ValueError,
             "period must be one of"),
            ("period=None", {"time": days, "period": None}, ValueError, "period must be one of")]:
        names = ("period",) if variant.startswith("period") else \
            ("time", "period") if "span" in variant else ("time",)
        add("dates", variant, "raise", names, error=error, match=match, **kw)
    add("params", "time=dates-grid-1-D", "raise", ("grid", "extent"), error=ValueError,
        match="2-D", grid=_grid_1d, time=days)
    # versus= and names=
    add("params", "versus=matrix", "ok", ("versus",), ("this corpus", "the other corpus"),
        versus=D.X[::-1], **J)
    add("params", "versus=sparse-7-rows", "ok", ("versus",), versus=_sp().csr_matrix(D.X[:7]))
    add("params", "versus=list", "ok", ("versus",), versus=D.X.tolist())
    add("params", "versus=float32", "ok", ("versus",), versus=D.X.astype(np.float32))
    add("params", "versus=Corpus", "ok", ("versus",), versus=Lazy(lambda ctx: F.corpus()))
    add("params", "versus=Corpus-with-corpus=", "ok", ("versus",), X=None,
        corpus=Lazy(lambda ctx: F.corpus()), versus=Lazy(lambda ctx: F.corpus()))
    add("params", "versus=matrix-names=(left,right)", "ok", ("names",), ("left", "right"),
        versus=D.X, names=("left", "right"), **J)
    add("params", "versus=matrix-names-200000-characters", "ok", ("names",),
        versus=D.X, names=("a" * 200000, "a" * 200001))
    add("params", "versus=matrix-time=80-dates", "ok", ("versus", "time"), ("2024-03",),
        versus=D.X, time=np.r_[days, days], **J)
    add("params", "versus=matrix-max_docs=5", "ok", ("versus",), versus=D.X, max_docs=5)
    add("params", "names=same-without-versus", "ok", ("names",), names=("a", "a"))
    for klass, variant, value, error, match in [
            ("shape", "fewer-words", D.X[:, :5], ValueError, "versus"),
            ("shape", "more-words", H._wrong_features(D.X), ValueError, "versus"),
            ("values", "NaN", H._set(1, 1, np.nan)(D.X), ValueError, "versus"),
            ("corrupt-sparse", "csr:index-out-of-range",
             H._corrupt("csr:index-out-of-range")(D.X), ValueError, "versus"),
            ("shape", "0-rows", D.X[:0], ValueError, "versus"),
            ("shape", "str", "other.csv", TypeError, "versus must be a countgrid.text.Corpus"),
            ("shape", "1-D", D.X[0], TypeError, "versus must be a countgrid.text.Corpus"),
            ("shape", "3-D", D.X[None], TypeError, "versus must be a countgrid.text.Corpus"),
            ("shape", "int", 5, TypeError, "versus must be a countgrid.text.Corpus"),
            ("shape", "dict", {"counts": D.X}, TypeError,
             "versus must be a countgrid.text.Corpus")]:
        add(klass, f"versus={variant}", "raise", ("versus",), error=error, match=match,
            versus=value)
    add("params", "versus=Corpus-of-other-words", "raise", ("versus", "vocabulary"),
        error=ValueError, match="versus|vocabulary", X=None, corpus=Lazy(lambda ctx: F.corpus()),
        versus=Lazy(lambda ctx: _cg().text.Corpus(D.X, D.words[::-1])))
    add("params", "versus=matrix-without-X", "raise", ("versus", "X"), error=ValueError,
        match="versus compares two corpora", X=None, versus=D.X)
    add("params", "versus=matrix-metadata-corpus", "raise", ("versus", "corpus"),
        error=ValueError, match="names the two corpora", versus=D.X,
        metadata={"corpus": D.y})
    add("params", "versus=matrix-time=40-dates", "raise", ("time",), error=ValueError,
        match=r"time must hold one date per document \(80\)", versus=D.X, time=days)
    for variant, value in [("same", ("a", "a")), ("one", ("a",)), ("None", None),
                           ("ints", (1, 2)), ("empty", ("", "b")), ("str", "ab"),
                           ("three", ("a", "b", "c"))]:
        add("params", f"names={variant}-versus=matrix", "raise", ("names",), error=ValueError,
            match="names must be two different", versus=D.X, names=value)
    # annotations=
    named = _doc(regions=[_region(name="NAMEDREGION")], notes=[_note(text="NOTEHERE")])
    add("annotations", "annotations=dict", "ok", ("annotations",), ("NAMEDREGION", "NOTEHERE"),
        annotations=named, **J)
    add("annotations", "annotations=file", "ok", ("annotations",), ("NAMEDREGION", "NOTEHERE"),
        annotations=Lazy(_file("notes.json", named)), files=True, **J)
    add("annotations", "annotations=pathlib", "ok", ("annotations",), ("NOTEHERE",),
        annotations=Lazy(lambda ctx: pathlib.Path(_file("notes.json", named)(ctx))),
        files=True, **J)
    add("annotations", "annotations=a-level-the-map-lacks", "ok", ("annotations",),
        absent=("NAMEDREGION",), annotations=_doc(regions=[_region(n_regions=5,
                                                                   name="NAMEDREGION")]), **J)
    add("annotations", "annotations=script-note", "ok", ("annotations",),
        absent=("</script><script>alert(1)",),
        annotations=_doc(notes=[_note(text="</script><script>alert(1)</script>")]), **J)
    add("annotations", "annotations=lone-surrogate", "ok", ("annotations",),
        annotations=_doc(notes=[_note(text="x\ud800y")], regions=[_region(name="\udcff")]))
    add("annotations", "annotations=with-time-and-versus", "ok",
        ("annotations", "time", "versus"), ("NAMEDREGION", "2024-03", "the other corpus"),
        annotations=named, versus=D.X, time=np.r_[days, days], **J)
    for variant, value, error, match, files in [
            ("wrong-extent", _doc(extent=[5, 5]), ValueError, "written for a 5 x 5 grid",
             False),
            ("int", 3, TypeError, "annotations must be a file name or a dict", False),
            ("cell-out-of-range", _doc(notes=[_note(cell=[4, 0])]), ValueError,
             r"notes\[0\]\.cell \[4, 0\] is outside", False),
            ("not-JSON", Lazy(_file("notes.json", F._garbage(4000))), ValueError,
             "not a JSON file", True),
            ("nested-100000", Lazy(_file("notes.json", "[" * 100000 + "]" * 100000)),
             ValueError, "not a JSON file", True),
            ("50-MB-sparse", Lazy(_sparse_file("notes.json", 50 * MB)), ValueError,
             "larger than", True),
            ("missing-file", Lazy(lambda ctx: ctx.path("missing.json")), FileNotFoundError,
             "missing.json", True)]:
        names = ("annotations", "missing.json") if files else ("annotations",)
        add("annotations", f"annotations={variant}", "raise", names, error=error, match=match,
            files=files, annotations=value)
    return out


# ============================================================================ widget
def gen_widget():
    """The notebook widget (``countgrid.widget``): its arguments, the traits a user sets
    (``height``, ``color_by``, ``highlight``), ``documents_at``, and the messages its frame
    sends (``_selection_state``: checked as any input, a malformed one changes nothing)."""
    out = []
    need = ("countgrid.maps.widget", "anywidget")
    meta = {"g": np.array(["a", "b"] * (N // 2))}

    def make_widget(**kw):
        return _cg().widget(F._grid(), D.Xs, metadata=meta, **kw)

    def add(klass, variant, expect, names, run, oracle=None, error=None, match=None):
        if expect == "ok":
            error = match = None
        out.append(Case("maps.widget", "", klass, variant, expect, run, names, oracle, need,
                        error=error, match=match))

    def widget_oracle(value):
        if type(value).__name__ != "MapWidget":
            return f"not a MapWidget: {type(value).__name__}"
        value.wait(60)          # a large corpus's documents are placed in a thread
        if not (len(value._map_part) > 4 and len(value._documents_part) > 4):
            return "empty data parts"
        return None

    # widget()'s arguments
    add("params", "defaults", "ok", (), lambda ctx: make_widget(), widget_oracle)
    add("params", "height=100", "ok", ("height",), lambda ctx: make_widget(height=100),
        widget_oracle)
    for value in (99, 0, -5, 20_001, 10**30, 2.5, "640", True, None, [640]):
        add("params", f"height={_label(value)}", "raise", ("height",),
            lambda ctx, v=value: make_widget(height=v), error=ValueError,
            match=r"height must be an int in \[100, 20000\]")
    add("params", "data_format=json", "raise", ("data_format",),
        lambda ctx: make_widget(data_format="json"), error=TypeError, match="data_format")
    for value in (True, False):
        add("params", f"background={value}", "ok", ("background",),
            lambda ctx, v=value: make_widget(background=v), widget_oracle)
    for value in ("yes", 1, 0.0, [True]):
        add("params", f"background={_label(value)}", "raise", ("background",),
            lambda ctx, v=value: make_widget(background=v), error=TypeError,
            match="background must be True, False or None")
    add("params", "color_by=unknown", "raise", ("color_by",),
        lambda ctx: make_widget(color_by="nope"), error=ValueError, match="color_by")
    add("params", "grid-1-D", "raise", ("grid", "extent"),
        lambda ctx: _cg().widget(_grid_1d(), D.Xs), error=ValueError, match="2-D")
    add("shape", "X-wrong-words", "raise", ("X",),
        lambda ctx: _cg().widget(F._grid(), D.Xs[:, :-1]), error=ValueError, match="X")
    add("params", "titles-too-short", "raise", ("titles",),
        lambda ctx: _cg().widget(F._grid(), D.Xs, titles=["a"]), error=ValueError,
        match="titles")

    # traits set by the user: refused with the trait named, the old value kept
    def set_trait(name, value, check):
        def run(ctx):
            w = make_widget()
            before = (w.height, w.color_by, dict(w._highlight_state))
            try:
                setattr(w, name, value)
            except (TypeError, ValueError):
                if (w.height, w.color_by, dict(w._highlight_state)) != before:
                    raise S.Violated(f"a refused {name} changed the widget") from None
                raise
            return check(w)
        return run

    bad = [("height", v, TypeError if not isinstance(v, int) or isinstance(v, bool) else
            ValueError, "height must be") for v in (50, 10**9, "640", 2.5, None, True, [1])]
    bad += [("color_by", v, TypeError if not isinstance(v, str) else ValueError, "color_by")
            for v in (5, b"g", ["g"], "nope", "x" * 200_000)]
    bad += [("highlight", v, e, m) for v, e, m in (
        (["no such word"], ValueError, "highlight"), ([10**20], ValueError, "highlight"),
        ([-1], ValueError, "highlight"), ([(E[0], 0)], ValueError, "highlight cell"),
        ([(0, 0, 0)], TypeError, "highlight"), ([float("nan")], TypeError, "highlight"),
        ([None], TypeError, "highlight"), ([b"w"], TypeError, "highlight"),
        ("w0", TypeError, "highlight must be a list"), (5, TypeError, "highlight"),
        ({"rows": [1]}, ValueError, "unknown keys"), ({"cells": [(1.5, 2)]}, TypeError,
                                                      "highlight cell"),
        ({"words": "w0"}, TypeError, "highlight .words. must be a list"),
        ([(True, 0)], TypeError, "highlight cell"))]
    for name, value, error, match in bad:
        add("traits", f"{name}={_label(value)}", "raise", (name,),
            set_trait(name, value, lambda w: w), error=error, match=match)
    add("traits", "highlight=100000-cells", "ok", ("highlight",),
        set_trait("highlight", [(r % E[0], r % E[1]) for r in range(100_000)],
                  lambda w: w._highlight_state),
        lambda v: None if v["cells"] == list(range(E[0] * E[1]))[::E[1] + 1][:E[0]] or
        len(v["cells"]) <= E[0] * E[1] else "more cells than the grid has")
    add("traits", "highlight=None", "ok", ("highlight",),
        set_trait("highlight", None, lambda w: w._highlight_state["cells"]),
        lambda v: None if v == [] else f"None lit {v}")

    # messages of the frame: checked, a malformed one ignored
    messages = [
        {"kind": "cells", "cells": [10**12]}, {"kind": "cells", "cells": [-1]},
        {"kind": "cells", "cells": ["1"]}, {"kind": "cells", "cells": [1.5]},
        {"kind": "cells", "cells": "all"}, {"kind": "cell", "cells": []},
        {"kind": "cell", "cells": [1, 2]}, {"kind": "lasso", "cells": [1]},
        {"kind": "cells", "cells": [1], "kept": "all"},
        {"kind": "cells", "cells": [1], "kept": [1.5]},
        {"kind": ["cells"], "cells": [1]}, {}, {"kind": "cells"},
        {"kind": "cells", "cells": list(range(10**5))},
    ]
    for k, msg in enumerate(messages):
        def run(ctx, msg=msg):
            w = make_widget()
            w._selection_state = {"kind": "cells", "cells": [3], "kept": None}
            before = (w.selection.copy() if hasattr(w.selection, "copy") else
                      dict(w.selection), list(w.selected_cells))
            w._selection_state = msg
            return before, (w.selection, list(w.selected_cells))

        def unchanged(value):
            (b_table, b_cells), (a_table, a_cells) = value
            same = b_table.equals(a_table) if hasattr(b_table, "equals") else \
                all(np.array_equal(b_table[c], a_table[c]) for c in b_table)
            return None if same and b_cells == a_cells else "a malformed message changed " \
                "the selection"
        add("frame", f"message-{k}-{_label(msg)}", "ok", ("selection",), run, unchanged)
    add("frame", "kept=rows-outside-the-map", "ok", ("selection",),
        lambda ctx: (lambda w: (setattr(w, "_selection_state", {
            "kind": "cells", "cells": list(range(E[0] * E[1])), "kept": [10**9, -5]}),
            len(w.selection["document"]))[1])(make_widget()),
        lambda v: None if v == 0 else f"{v} documents kept")

    # documents_at
    for value, error, match in (([(E[0], 0)], ValueError, "out of range"),
                                ([(0,)], ValueError, "coordinates"), ("0", TypeError,
                                                                     "cells must be a list"),
                                ([None], TypeError, "cells"), ([10**20], ValueError,
                                                                "out of range")):
        add("params", f"documents_at={_label(value)}", "raise", ("cells",),
            lambda ctx, v=value: make_widget().documents_at(v), error=error, match=match)
    return out


#: Cases of this module that fail because of library code the suite cannot change (file,
#: line, the fix proposed); tests/hostile/test_hostile.py expects them to fail until the
#: fix lands (then the entry must go).
KNOWN_FAILURES = {}

GENERATORS = (gen_regions, gen_region_words, gen_compare_groups, gen_shares_by_period,
              gen_region_effects, gen_read_annotations, gen_write_html, gen_widget)
