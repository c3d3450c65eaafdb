"""Which estimator each ``--model`` of the command line builds, and how its results are
written as tables (``transform``, ``top-words``)."""
import argparse
import inspect

import numpy as np

from countgrid.cli._args import (UsageError, check_grid_memory, check_window, fraction,
                                 grid_shape, grid_shape_or_auto, nonnegative_float,
                                 nonnegative_int, positive_int)
from countgrid._utils.dates import PERIODS, parse_dates
from countgrid.grid import (CountingGrid, LayeredCountingGrid, TimeSlicedCountingGrid,
                            auto_extent, auto_window_schedule)
from countgrid.grid._layers import spatial_view
from countgrid.grid._time_slices import periods_view
from countgrid.grid._schedule import STAGE_ITER
from countgrid.gtm import ZIPGTM
from countgrid.rap import RAP
from countgrid.topics import PLSA

MODELS = ("cg", "plsa", "rap", "zipgtm")
MODEL_HELP = ("cg: counting grid (default); plsa: probabilistic latent semantic analysis; "
              "rap: rate adapting Poisson harmonium; zipgtm: zero-inflated Poisson GTM map")
ESTIMATORS = {"cg": CountingGrid, "plsa": PLSA, "rap": RAP, "zipgtm": ZIPGTM}
#: --likelihood of a ZIP-GTM map: the ZIPGTM parameters each name sets (docs/zip_gtm.md)
LIKELIHOODS = {
    "zip": dict(zero_inflation=True, distribution="poisson"),
    "poisson": dict(zero_inflation=False, distribution="poisson"),
    "poisson-sf": dict(zero_inflation=False, distribution="poisson", size_factors=True),
    "nb": dict(zero_inflation=False, distribution="negative_binomial"),
    "zinb": dict(zero_inflation=True, distribution="negative_binomial"),
}


def default(cls, name):
    """The default of parameter ``name`` of ``cls``: the estimators' signatures are the one
    home of the defaults (docs/choosing.md, "Defaults"); the command line, the demo and
    ``evaluate`` read them from there."""
    return inspect.signature(cls).parameters[name].default


def _shape_text(value):
    return value if isinstance(value, str) else "x".join(map(str, value))


def coarse_to_fine(extent, window, stage_iter):
    """The package's coarse-to-fine window schedule (:func:`countgrid.grid.
    auto_window_schedule`) with ``stage_iter`` iterations per stage, for an explicit
    ``--coarse-iter``; None (no annealing) for 0."""
    if stage_iter <= 0:
        return None
    # --coarse-iter is what the user asked for: not shortened for a small --n-iter
    return auto_window_schedule(extent, window, None, stage_iter) or None


class _ShapeTokens(argparse.Action):
    """``--window 5x5`` or ``--window 5 5`` (the demo's form of 0.2.0.dev0)."""

    def __call__(self, parser, namespace, values, option_string=None):
        try:
            shape = grid_shape(values[0]) if len(values) == 1 else tuple(
                positive_int(v) for v in values)
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentError(self, str(exc)) from None
        setattr(namespace, self.dest, shape)


def add_grid_options(group, cls=CountingGrid, zipgtm=False, window_tokens="one"):
    """--grid, --window, --coarse-iter, --n-iter and --tol of a counting grid, with the
    defaults of ``cls`` (fit, evaluate and demo share them); ``window_tokens="many"`` also
    accepts ``--window 5 5`` (a verb without positional arguments)."""
    extent, window = default(cls, "extent"), default(cls, "window")
    group.add_argument("--grid", type=grid_shape_or_auto, default=None, metavar="EXTENT",
                       help="grid shape, e.g. 32x32 or 16x16x4, or auto (the grid sized to "
                            f"the documents: capacity clip(N/3, 16, 100) windows; default "
                            f"{_shape_text(extent)}"
                            + (f"; zipgtm: default {_shape_text(default(ZIPGTM, 'grid_shape'))}"
                               if zipgtm else "") + "); 16 alone means 16x16")
    shape = dict(type=grid_shape) if window_tokens == "one" else dict(nargs="+",
                                                                      action=_ShapeTokens)
    group.add_argument("--window", default=None, metavar="WINDOW", **shape,
                       help=f"window shape of the counting grid (default {_shape_text(window)})")
    group.add_argument("--coarse-iter", type=nonnegative_int, default=None,
                       help="iterations of each larger window run before the target window "
                            f"(coarse to fine; default {STAGE_ITER}, the package's "
                            "window_schedule='auto'; 0: none)")
    group.add_argument("--n-iter", type=positive_int, default=None,
                       help=f"maximum EM iterations (default {default(cls, 'n_iter')}"
                            + (f"; rap: epochs, default {default(RAP, 'n_epochs')}"
                               if zipgtm else "") + ")")
    group.add_argument("--tol", type=nonnegative_float, default=None,
                       help="stop when the log-likelihood's relative change is below this "
                            f"(default {default(cls, 'tol'):g}; 0: run every --n-iter "
                            "iteration)")


def add_model_options(parser):
    group = parser.add_argument_group("model")
    group.add_argument("--model", choices=MODELS, default="cg", help=MODEL_HELP)
    add_grid_options(group, zipgtm=True)
    group.add_argument("--likelihood", choices=tuple(LIKELIHOODS), default=None,
                       help="count model of --model zipgtm: zero-inflated Poisson (zip, the "
                            "default), poisson, poisson-sf (with each document's total as "
                            "its size factor), nb (negative binomial, a dispersion per "
                            "word), zinb (zero-inflated nb)")
    group.add_argument("--layers", type=positive_int, default=1,
                       help="word distributions per cell of a counting grid: 2 or more fits "
                            "a layered grid (each document picks a layer; default 1)")
    group.add_argument("--n-components", "-k", type=positive_int, default=None,
                       help=f"topics (plsa, default {default(PLSA, 'n_components')}) or "
                            f"hidden units (rap, default {default(RAP, 'n_components')})")
    add_dtype_option(group)


def subsample_value(text):
    """--subsample: auto, a number of documents (an integer) or a fraction of them."""
    text = text.strip()
    if text == "auto":
        return text
    return positive_int(text) if text.isdigit() else fraction(text)


#: The options of add_large_corpus_options: flag -> (attribute, value when not given).
LARGE_CORPUS_FLAGS = {"--estep": ("estep", None), "--accelerate": ("accelerate", False),
                      "--subsample": ("subsample", None), "--track": ("track", False)}


def add_large_corpus_options(parser):
    group = parser.add_argument_group("large corpora (counting grids; docs/scale.md)")
    group.add_argument("--estep", choices=("exact", "coarse-to-fine"), default=None,
                       help="how each pass places the documents: exact (every window "
                            "position; the default) or coarse-to-fine (a lattice of "
                            "positions, then the boxes around the best: 2.2x faster passes "
                            "on a 64x64 grid, the same held-out fit)")
    group.add_argument("--accelerate", action="store_true",
                       help="extrapolated EM (SQUAREM): about half the passes in the target "
                            "window, the same fixed points")
    group.add_argument("--subsample", type=subsample_value, default=None, metavar="N",
                       help="progressive fitting: converge on N documents first (a count, a "
                            "fraction such as 0.1, or auto: max(50000, 25 x the cells) when "
                            "the corpus holds twice as many), then on all")
    group.add_argument("--track", action="store_true",
                       help="with --estep coarse-to-fine: score each document first around "
                            "its last position (a third of the positions; a path further "
                            "from the exact fit's; docs/scale.md, 'Tracking')")


def large_corpus_parameters(args, what):
    """The CountingGrid keyword arguments of --estep, --accelerate, --subsample and --track
    (UsageError when one is given for ``what``, a model without them, or --track without
    --estep coarse-to-fine)."""
    given = [flag for flag, (name, unset) in LARGE_CORPUS_FLAGS.items()
             if getattr(args, name, unset) != unset]
    if given and what is not None:
        raise UsageError(f"argument {given[0]}: it is an option of plain counting grids "
                         f"(--model cg), not of {what}")
    kwargs = {}
    if getattr(args, "estep", None) is not None:
        kwargs["estep"] = args.estep
    if getattr(args, "accelerate", False):
        kwargs["accelerate"] = True
    if getattr(args, "subsample", None) is not None:
        kwargs["subsample"] = args.subsample
    if getattr(args, "track", False):
        if kwargs.get("estep") != "coarse-to-fine":
            raise UsageError("argument --track: tracking is part of the coarse-to-fine "
                             "E-step: add --estep coarse-to-fine")
        kwargs["estep_params"] = {"track": True}
    return kwargs


def add_time_options(parser):
    group = parser.add_argument_group("time slices (a counting grid per period)")
    group.add_argument("--time-col", default=None, metavar="COL",
                       help="metadata column of dates (ISO 8601 or Unix timestamps): one "
                            "grid per period, each kept in place by the one before "
                            "(docs/counting_grids.md, 'Time-sliced grids')")
    group.add_argument("--period", default=None, choices=("auto",) + tuple(PERIODS),
                       help="the periods of --time-col (default auto: the finest giving at "
                            "most 12, years when none does)")
    group.add_argument("--smoothness", type=nonnegative_float, default=None,
                       help="weight of the previous period's grid against a period's "
                            f"documents (default "
                            f"{default(TimeSlicedCountingGrid, 'smoothness'):g}; 0: a plain "
                            "warm start)")
    group.add_argument("--span", type=positive_int, default=None,
                       help="each period's grid learns from its last SPAN periods (default "
                            f"{default(TimeSlicedCountingGrid, 'span')}: its own)")


def add_dtype_option(group):
    group.add_argument("--dtype", choices=["float32", "float64"], default=None,
                       help="working precision (cg, plsa, rap; default "
                            f"{np.dtype(default(CountingGrid, 'dtype')).name})")
    group.add_argument("--float64", action="store_const", const="float64", dest="dtype",
                       help="the same as --dtype float64")


def grid_parameters(args, n_docs=1, n_words=1, cls=CountingGrid, n_grids=1):
    """The keyword arguments of a counting grid (``cls``) for the options given; those
    not given keep the estimator's defaults.  Sizes are checked (UsageError), for one grid
    (``n_grids=None``: the estimator checks its own grids, e.g. one per class)."""
    kwargs = {}
    extent = args.grid if args.grid is not None else default(cls, "extent")
    window = args.window if args.window is not None else default(cls, "window")
    if extent != "auto":
        if args.window is None:                 # the default window, on a small grid
            window = tuple(min(w, e) for w, e in zip(window, extent)) \
                if len(window) == len(extent) else (min(window[0], min(extent)),) * len(extent)
        window = check_window(extent, window)
        if n_grids:
            check_grid_memory(extent, n_words, n_docs, getattr(args, "grid_option", "--grid"))
    elif len(window) != 2 and args.window is not None:
        window = tuple(window)
    if args.grid is not None:
        kwargs["extent"] = extent
    if args.window is not None or window != default(cls, "window"):
        kwargs["window"] = tuple(window)
    if args.coarse_iter == 0:
        kwargs["window_schedule"] = None
    elif args.coarse_iter is not None:
        # the stages depend on the grid: an auto extent is resolved for n_docs here
        concrete = extent if extent != "auto" else auto_extent(n_docs, window)
        kwargs["window_schedule"] = coarse_to_fine(concrete, tuple(window), args.coarse_iter)
        if extent == "auto":
            kwargs["extent"] = concrete
    if extent == "auto" and n_grids:
        resolved = kwargs.get("extent", "auto")
        # the grid was sized from the window: a smaller --window (or a --grid) is the fix
        name = "--window" if args.window is not None else "--grid"
        check_grid_memory(resolved if resolved != "auto" else auto_extent(n_docs, window),
                          n_words, n_docs, name)
    if args.n_iter is not None:
        kwargs["n_iter"] = args.n_iter
    if args.tol is not None:
        kwargs["tol"] = args.tol
    if getattr(args, "dtype", None) is not None:
        kwargs["dtype"] = np.dtype(args.dtype).type
    return kwargs


def make_estimator(args, num_threads, n_words=1, n_docs=1):
    """The estimator of ``args.model`` with the options given (checked, UsageError); every
    option not given keeps the estimator's default."""
    common = dict(num_threads=num_threads, random_state=args.seed)
    layers = getattr(args, "layers", 1)
    time_col = getattr(args, "time_col", None)
    likelihood = getattr(args, "likelihood", None)
    if likelihood is not None and args.model != "zipgtm":
        raise UsageError(f"argument --likelihood: it chooses the count model of ZIP-GTM maps "
                         f"(--model zipgtm), not of --model {args.model}")
    for flag in ("period", "smoothness", "span"):
        if time_col is None and getattr(args, flag, None) is not None:
            raise UsageError(f"argument --{flag}: it sets the time slices of --time-col")
    plain = args.model == "cg" and layers == 1 and time_col is None
    large = large_corpus_parameters(
        args, None if plain else ("time slices (--time-col)" if time_col is not None
                                  else "--layers" if args.model == "cg"
                                  else f"--model {args.model}"))
    if time_col is not None:
        if args.model != "cg" or layers > 1:
            what = "--layers" if layers > 1 else f"--model {args.model}"
            raise UsageError(f"argument --time-col: time slices are of plain counting grids "
                             f"(--model cg), not {what}")
        kwargs = {k: getattr(args, k) for k in ("period", "smoothness", "span")
                  if getattr(args, k) is not None}
        return TimeSlicedCountingGrid(**grid_parameters(args, n_docs, n_words,
                                                        cls=TimeSlicedCountingGrid),
                                      **kwargs, **common)
    if args.model == "cg" and layers > 1:
        return LayeredCountingGrid(**grid_parameters(args, n_docs, n_words,
                                                     cls=LayeredCountingGrid),
                                   n_layers=layers, **common)
    if args.model == "cg":
        return CountingGrid(**grid_parameters(args, n_docs, n_words), **large, **common)
    if layers > 1:
        raise UsageError(f"argument --layers: only counting grids (--model cg) have layers, "
                         f"not --model {args.model}")
    if args.window is not None:
        raise UsageError(f"argument --window: only counting grids (--model cg) have a window, "
                         f"not --model {args.model}")
    if args.coarse_iter is not None:
        raise UsageError(f"argument --coarse-iter: only counting grids (--model cg) have a "
                         f"window schedule, not --model {args.model}")
    kwargs = {}
    if args.n_components is not None and args.model in ("plsa", "rap"):
        kwargs["n_components"] = args.n_components
    if args.dtype is not None and args.model in ("plsa", "rap"):
        kwargs["dtype"] = np.dtype(args.dtype).type
    if args.model == "plsa":
        if args.n_iter is not None:
            kwargs["n_iter"] = args.n_iter
        if args.tol is not None:
            kwargs["tol"] = args.tol
        return PLSA(**kwargs, **common)
    if args.model == "rap":
        if args.tol is not None:
            raise UsageError("argument --tol: RAP runs a fixed number of epochs (--n-iter)")
        if args.n_iter is not None:
            kwargs["n_epochs"] = args.n_iter
        return RAP(**kwargs, **common)
    grid = args.grid if args.grid is not None else default(ZIPGTM, "grid_shape")
    if grid == "auto" or len(grid) != 2:
        raise UsageError(f"argument --grid: the ZIP-GTM map is a two-dimensional grid such as "
                         f"15x18, got {_shape_text(grid)}")
    if args.dtype is not None:
        raise UsageError("argument --dtype: ZIP-GTM works in float64")
    if args.n_iter is not None:
        kwargs["n_iter"] = args.n_iter
    if args.tol is not None:
        kwargs["tol"] = args.tol
    kwargs.update(LIKELIHOODS.get(likelihood, {}))
    return ZIPGTM(grid_shape=tuple(grid), **kwargs, **common)


def check_region_count(n_regions, n_cells):
    """--regions N of a grid of ``n_cells`` cells: at most one region per cell (the verbs
    that group cells into regions check it before any work)."""
    if n_regions is not None and n_regions > n_cells:
        raise UsageError(f"argument --regions: the grid has {n_cells} cells; ask for at "
                         f"most {n_cells} regions")


def model_kind(est):
    """``cg``, ``cg-layers``, ``cg-time``, ``cg-classifier``, ``plsa``, ``rap`` or ``zipgtm``
    of a fitted estimator (a layered grid's spatial view, :func:`grid_of`, is a ``cg``)."""
    if isinstance(est, LayeredCountingGrid):
        return "cg-layers"
    if isinstance(est, TimeSlicedCountingGrid):
        return "cg-time"
    if isinstance(est, CountingGrid):
        return "cg"
    name = type(est).__name__
    return {"CountingGrid": "cg", "CountingGridClassifier": "cg-classifier",
            "PLSA": "plsa", "RAP": "rap", "ZIPGTM": "zipgtm"}.get(name)


def grid_of(est):
    """The CountingGrid inside ``est`` (itself, or a classifier's grid_), or None; for a
    layered grid its spatial view (cells: their layers' mixture; documents: their
    posteriors summed over the layers, ``countgrid.grid._layers.spatial_view``); for a
    time-sliced grid the average of its periods' grids (weighted by their documents)."""
    if isinstance(est, LayeredCountingGrid):
        return spatial_view(est)
    if isinstance(est, TimeSlicedCountingGrid):
        return periods_view(est, np.zeros(0, dtype=np.int64))
    if type(est).__name__ == "CountingGrid":
        return est
    return getattr(est, "grid_", None)


def describe(est):
    """One line about a fitted estimator."""
    kind = model_kind(est)
    grid = grid_of(est)
    if kind == "cg-layers":
        extent = "x".join(map(str, np.shape(est.pi_)[1:-1]))
        return (f"{extent} counting grid of {np.shape(est.pi_)[0]} layers, window "
                f"{'x'.join(map(str, est.window))}, {est.n_features_in_} words, "
                f"{est.grid_n_iter_} + {est.n_iter_} iterations "
                f"({'converged' if est.converged_ else 'not converged'})")
    if kind == "cg-time":
        extent = "x".join(map(str, np.shape(est.pi_)[1:-1]))
        labels = [str(v) for v in est.period_labels_]
        span = f" ({labels[0]} to {labels[-1]})" if len(labels) > 1 else ""
        return (f"{extent} counting grid per {est.period_}: {len(labels)} periods{span}, "
                f"window {'x'.join(map(str, est.window))}, {est.n_features_in_} words, "
                f"{int(np.sum(est.n_iter_))} iterations after the layout's")
    if grid is not None:
        extent = "x".join(map(str, np.shape(grid.pi_)[:-1]))
        window = "x".join(map(str, grid.window))
        return (f"{extent} counting grid, window {window}, {grid.n_features_in_} words, "
                f"{grid.n_iter_} iterations "
                f"({'converged' if grid.converged_ else 'not converged'})")
    if kind == "plsa":
        return f"pLSA with {est.n_components} topics over {est.n_features_in_} words"
    if kind == "rap":
        return (f"RAP harmonium with {est.n_components} hidden units over "
                f"{est.n_features_in_} words")
    if kind == "zipgtm":
        params = est.get_params()
        name = next((k for k, v in LIKELIHOODS.items()
                     if all(params[p] == x for p, x in {"size_factors": False, **v}.items())),
                    "zip")
        return (f"ZIP-GTM map of {'x'.join(map(str, est.grid_shape))} nodes"
                + ("" if name == "zip" else f" ({name})"))
    return type(est).__name__


def _top(weights, n):
    """Indices of the n largest entries of each row, largest first (ties: lower index)."""
    n = min(n, weights.shape[1])
    order = np.argsort(-weights, axis=1, kind="stable")
    return order[:, :n]


def top_words_table(est, vocabulary, n_words):
    """(header, rows) of the top-words TSV of a fitted model."""
    vocabulary = np.asarray(vocabulary)
    grid = grid_of(est)
    kind = model_kind(est)
    if grid is not None:
        pi = np.asarray(grid.pi_, dtype=np.float64)
        extent = pi.shape[:-1]
        flat = pi.reshape(-1, pi.shape[-1])
        top = _top(flat, n_words)
        cells = np.stack(np.unravel_index(np.arange(flat.shape[0]), extent), axis=1)
        header = [f"dim{d}" for d in range(len(extent))] if len(extent) != 2 else ["row", "col"]
        rows = [[*map(str, cells[i]), " ".join(vocabulary[top[i]])] for i in range(len(top))]
        return header + ["words"], rows
    if kind == "plsa":
        W = np.asarray(est.components_, dtype=np.float64)
        header = ["topic"]
    elif kind == "rap":
        W = np.asarray(est.components_, dtype=np.float64)
        header = ["unit"]
    elif kind == "zipgtm":
        rates = np.exp(np.asarray(est.phi_, dtype=np.float64) @ np.asarray(est.rate_coef_))
        top = _top(rates, n_words)
        rows = [[str(k), *(f"{v:.6g}" for v in est.latent_[k]), " ".join(vocabulary[top[k]])]
                for k in range(len(top))]
        return ["node", "x", "y", "words"], rows
    else:
        raise UsageError(f"argument MODEL: top words of a {type(est).__name__} are not defined")
    top = _top(W, n_words)
    return header + ["words"], [[str(k), " ".join(vocabulary[top[k]])] for k in range(len(top))]


def time_column(est, docs, given=None, flag="--time-col"):
    """The metadata column of ``docs`` holding the dates of a time-sliced grid: ``given``
    (checked), else the one column whose values are dates in the model's periods (every
    dated document in a fitted period); UsageError when there is none or several."""
    have = [] if docs is None else [str(k) for k in docs.metadata]
    if given is not None:
        if given not in have:
            raise UsageError(f"argument {flag}: the documents have no column {given!r} "
                             f"(they have: {', '.join(have) or 'none'})")
        return given
    fits = []
    for name in have:
        try:
            dates = parse_dates(docs.metadata[name], name)
        except (TypeError, ValueError):
            continue
        dated = ~np.isnat(dates)
        if dated.any() and (est.periods(dates)[dated] >= 0).all():
            fits.append(name)
    if len(fits) == 1:
        return fits[0]
    found = (f"candidates: {', '.join(fits)}" if fits else
             f"none of {', '.join(have) or 'no column'} holds dates of its periods")
    raise UsageError(f"argument {flag}: the model has one grid per {est.period_}; name the "
                     f"column of the documents' dates ({found})")


def transform_table(est, X, anchor="center", times=None):
    """(header, columns) of what ``transform`` writes for each document (``times``: the
    documents' dates, for a time-sliced grid)."""
    grid = grid_of(est)
    kind = model_kind(est)
    if kind == "cg-time":       # each document under its period's grid
        codes = est.periods(times)
        pos = np.full((len(codes), np.ndim(est.pi_) - 2), np.nan)    # NaN: written empty
        ll = np.full(len(codes), np.nan)
        dated = np.flatnonzero(codes >= 0)
        if dated.size:
            pos[dated] = est.positions(X[dated], times=np.asarray(times)[dated],
                                       anchor=anchor)
            ll[dated] = est.score_samples(X[dated], times=np.asarray(times)[dated])
        labels = np.array([str(v) for v in est.period_labels_] + [""])
        D = pos.shape[1]
        names = ["row", "col"] if D == 2 else [f"dim{d}" for d in range(D)]
        return (["period"] + names + ["log_likelihood"],
                [labels[codes]] + [pos[:, d] for d in range(D)] + [ll])
    if grid is not None:
        pos = grid.positions(X, anchor=anchor)
        D = pos.shape[1]
        names = ["row", "col"] if D == 2 else [f"dim{d}" for d in range(D)]
        ll = grid.score_samples(X)
        if kind == "cg-layers":        # the documents' most probable layer, too
            layer = np.argmax(est.layer_posterior(X), axis=1)
            return (names + ["layer", "log_likelihood"],
                    [pos[:, d] for d in range(D)] + [layer, ll])
        return names + ["log_likelihood"], [pos[:, d] for d in range(D)] + [ll]
    if kind == "plsa":
        T = est.transform(X)
        return [f"topic{k}" for k in range(T.shape[1])], list(T.T)
    if kind == "rap":
        H = est.transform(X)
        return [f"h{k}" for k in range(H.shape[1])], list(H.T)
    if kind == "zipgtm":
        Z = est.transform(X)
        return ["x", "y"], list(Z.T)
    raise UsageError(f"argument MODEL: cannot transform with a {type(est).__name__}")

