"""``countgrid align``: the torus symmetry that maps one grid onto another, and the first
grid moved into the second's frame (countgrid.grid.align; docs/counting_grids.md,
"Aligning two grids")."""
import numpy as np

from countgrid.cli._args import UsageError, add_common, check_output, input_paths, printable
from countgrid.cli._inputs import add_load_options, load_model, model_vocabulary
from countgrid.cli._models import grid_of, model_kind
from countgrid.cli._output import write_file, wrote
from countgrid.grid import align
from countgrid.grid._counting_grid import fit_state, grid_view

EXAMPLE = """\
examples:
  countgrid fit posts/ -o again.npz --seed 2          # the same posts, another seed
  countgrid align model.npz again.npz                 # how alike the two fits are, aligned
  countgrid align model.npz again.npz -o moved.npz    # model.npz in again.npz's frame
"""

NAME = "align"
HELP = "align one counting grid onto another (translation, flips, swapped axes)"
DESCRIPTION = ("Find the symmetry of the torus (a translation, reversed axes, swapped axes of "
               "the same length) that best maps the grid of MODEL onto the grid of OTHER, "
               "comparing the word distributions of their windows over the words both "
               "vocabularies share, and report it with the similarity it reaches (mean "
               "Bhattacharyya coefficient of the paired windows, and that of two windows "
               "drawn at random).  With -o, write MODEL moved into OTHER's frame: its map "
               "then lays its themes where OTHER's are.")


def add_arguments(p):
    p.add_argument("model", metavar="MODEL", help="the counting grid to move (a model file "
                                                  "written by 'countgrid fit')")
    p.add_argument("other", metavar="OTHER", help="the counting grid whose frame is kept")
    p.add_argument("-o", "--output", default=None,
                   help="write MODEL moved into OTHER's frame (.npz, with MODEL's corpus)")
    p.add_argument("--no-flips", action="store_true",
                   help="translations only, and swapped axes unless --no-transpose")
    p.add_argument("--no-transpose", action="store_true",
                   help="never swap two axes of the same length")
    add_load_options(p)
    add_common(p, threads_option=False, seed=False)


def _grid(path, name):
    est, corpus = load_model(path, name=name)
    grid = grid_of(est)
    if grid is None:
        raise UsageError(f"argument {name}: {path} holds a {type(est).__name__}, not a "
                         "counting grid")
    return est, corpus, grid


def _restricted(grid, columns):
    """``grid`` over the words ``columns`` only (each cell renormalised)."""
    pi = np.asarray(grid.pi_, dtype=np.float64)[..., columns]
    sums = pi.sum(axis=-1, keepdims=True)
    pi = np.divide(pi, sums, out=np.full_like(pi, 1.0 / pi.shape[-1]), where=sums > 0)
    return grid_view(grid, pi, n_features_in_=len(columns))


def _moved(grid, r):
    """A copy of the fitted ``grid`` with its cells (and its learned prior over window
    positions, if any) moved by the alignment ``r``: the same model in the other frame."""
    pi = np.asarray(grid.pi_)
    extent = pi.shape[:-1]
    new = type(grid)(**grid.get_params())
    new.set_params(window=tuple(int(grid.window[d]) for d in r.axes))
    index = np.stack(np.unravel_index(np.arange(int(np.prod(extent))), extent), axis=1)
    moved = np.empty(tuple(r.extent) + pi.shape[-1:], dtype=pi.dtype)
    moved[tuple(r.cells(index).T)] = pi.reshape(-1, pi.shape[-1])
    new.pi_ = moved
    if getattr(grid, "prior_", None) is not None:    # over window positions: corners move
        prior = np.asarray(grid.prior_)
        new.prior_ = np.empty(tuple(r.extent), dtype=prior.dtype)
        new.prior_[tuple(r.positions(index, grid.window).T)] = prior.ravel()
    for name, value in fit_state(grid).items():
        setattr(new, name, value)
    new._defer_derived("h_")
    new._remember_inference_params()
    return new


def run(args, out):
    reads = input_paths(args) + [(f"OTHER {printable(args.other)}", args.other)]
    output = None if args.output is None else check_output(
        args.output, ["npz"], example="aligned", inputs=reads)
    est_a, corpus_a, a = _grid(args.model, "MODEL")
    _, corpus_b, b = _grid(args.other, "OTHER")
    words_a = model_vocabulary(a, corpus_a, args).astype(str)
    words_b = model_vocabulary(b, corpus_b, args).astype(str)
    shared = len(words_a)
    if not np.array_equal(words_a, words_b):
        # over the words both know (each cell renormalised over them)
        common, ia, ib = np.intersect1d(words_a, words_b, assume_unique=False,
                                        return_indices=True)
        if len(common) == 0:
            raise UsageError("argument OTHER: the two models share no word")
        order = np.argsort(ia)
        a, b = _restricted(a, ia[order]), _restricted(b, ib[order])
        shared = len(common)
    try:
        r = align(a, b, flips=not args.no_flips, transpose=not args.no_transpose)
    except ValueError as exc:
        raise UsageError(f"argument OTHER: {exc}") from None
    moves = [f"axes {r.axes}" if r.axes != tuple(range(len(r.axes))) else None,
             f"reversed {[d for d, f in enumerate(r.flips) if f]}" if any(r.flips) else None,
             f"shift {r.shift}"]
    print(f"{'; '.join(m for m in moves if m)}: similarity {r.similarity:.4f} (two windows "
          f"at random: {r.chance_similarity:.4f}) over {shared} shared words", file=out)
    if output is not None:
        if model_kind(est_a) != "cg":
            raise UsageError(f"argument -o/--output: only a plain counting grid is moved; "
                             f"{args.model} holds a {type(est_a).__name__}")
        new = _moved(est_a, r)
        write_file(output, lambda fh: new.save(fh, corpus=corpus_a))
        if not args.quiet:
            wrote(out, output)
    return 0
