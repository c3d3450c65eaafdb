"""Which estimator each ``--model`` of the command line builds, and how its results are
written as tables (``transform``, ``top-words``)."""
import numpy as np

from countgrid.cli._args import (UsageError, check_grid_memory, check_window, grid_shape,
                                 nonnegative_int, positive_int)
from countgrid.grid import CountingGrid, auto_window_schedule
from countgrid.grid._schedule import STAGE_ITER
from countgrid.gtm import ZIPGTM
from countgrid.rap import RAP
from countgrid.topics import PLSA

MODELS = ("cg", "plsa", "rap", "zipgtm")
MODEL_HELP = ("cg: counting grid (default); plsa: probabilistic latent semantic analysis; "
              "rap: rate adapting Poisson harmonium; zipgtm: zero-inflated Poisson GTM map")
DEFAULT_GRID = (32, 32)
DEFAULT_WINDOW = (5, 5)
COARSE_ITER = STAGE_ITER


def coarse_to_fine(extent, window, stage_iter=COARSE_ITER):
    """The package's coarse-to-fine window schedule (``window_schedule="auto"``,
    :func:`countgrid.grid.auto_window_schedule`) with ``stage_iter`` iterations per
    stage; None (no annealing) for 0."""
    if stage_iter <= 0:
        return None
    # --coarse-iter is what the user asked for: not shortened for a small --n-iter
    return auto_window_schedule(extent, window, None, stage_iter) or None


def add_model_options(parser):
    group = parser.add_argument_group("model")
    group.add_argument("--model", choices=MODELS, default="cg", help=MODEL_HELP)
    group.add_argument("--grid", type=grid_shape, default=None, metavar="EXTENT",
                       help="grid shape, e.g. 32x32 or 16x16x4 (cg, default 32x32; "
                            "zipgtm, default 15x18); 16 alone means 16x16")
    group.add_argument("--window", type=grid_shape, default=None, metavar="WINDOW",
                       help="window shape of the counting grid (default 5x5)")
    group.add_argument("--coarse-iter", type=nonnegative_int, default=COARSE_ITER,
                       help="iterations of each larger window run before the target "
                            f"window (cg, coarse to fine; default {COARSE_ITER}, 0: none)")
    group.add_argument("--n-components", "-k", type=positive_int, default=None,
                       help="topics (plsa, default 20) or hidden units (rap, default 50)")
    group.add_argument("--n-iter", type=positive_int, default=None,
                       help="maximum EM iterations (cg, plsa, zipgtm: default 100) or epochs "
                            "(rap: default 20)")
    group.add_argument("--float64", action="store_true",
                       help="work in double precision (cg, plsa, rap; default single: half "
                            "the memory and the model file, and faster)")


def make_estimator(args, num_threads, n_words=1, n_docs=1):
    """The estimator of ``args.model`` with the options given (checked, UsageError)."""
    dtype = np.float64 if args.float64 else np.float32
    seed = args.seed
    if args.model == "cg":
        extent = args.grid or DEFAULT_GRID
        window = check_window(extent, args.window or tuple(min(DEFAULT_WINDOW[0], e)
                                                           for e in extent))
        check_grid_memory(extent, n_words, n_docs)
        return CountingGrid(extent, window, n_iter=args.n_iter or 100,
                            window_schedule=coarse_to_fine(extent, window, args.coarse_iter),
                            dtype=dtype, num_threads=num_threads, random_state=seed)
    if args.window is not None:
        raise UsageError(f"argument --window: only counting grids (--model cg) have a window, "
                         f"not --model {args.model}")
    if args.model == "plsa":
        return PLSA(n_components=args.n_components or 20, n_iter=args.n_iter or 100,
                    dtype=dtype, num_threads=num_threads, random_state=seed)
    if args.model == "rap":
        return RAP(n_components=args.n_components or 50, n_epochs=args.n_iter or 20,
                   dtype=dtype, num_threads=num_threads, random_state=seed)
    grid = args.grid or (15, 18)
    if len(grid) != 2:
        raise UsageError(f"argument --grid: the ZIP-GTM map is two-dimensional, got "
                         f"{'x'.join(map(str, grid))}")
    return ZIPGTM(grid_shape=grid, n_iter=args.n_iter or 100, num_threads=num_threads,
                  random_state=seed)


def model_kind(est):
    """``cg``, ``cg-classifier``, ``plsa``, ``rap`` or ``zipgtm`` of a fitted estimator."""
    name = type(est).__name__
    return {"CountingGrid": "cg", "CountingGridClassifier": "cg-classifier",
            "PLSA": "plsa", "RAP": "rap", "ZIPGTM": "zipgtm"}.get(name)


def grid_of(est):
    """The CountingGrid inside ``est`` (itself, or a classifier's grid_), or None."""
    if type(est).__name__ == "CountingGrid":
        return est
    return getattr(est, "grid_", None)


def describe(est):
    """One line about a fitted estimator."""
    kind = model_kind(est)
    grid = grid_of(est)
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
        return f"ZIP-GTM map of {'x'.join(map(str, est.grid_shape))} nodes"
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


def transform_table(est, X, anchor="center"):
    """(header, columns) of what ``transform`` writes for each document."""
    grid = grid_of(est)
    kind = model_kind(est)
    if grid is not None:
        pos = grid.positions(X, anchor=anchor)
        D = pos.shape[1]
        names = ["row", "col"] if D == 2 else [f"dim{d}" for d in range(D)]
        ll = grid.score_samples(X)
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

