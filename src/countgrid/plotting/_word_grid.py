"""Pictures of counting grids: the "word grid" of the counting-grid papers.

Every shown cell of a 2-D grid carries the words that describe it best (by default
the most relevant, :func:`countgrid.grid.word_relevance`), with the font size
growing with their probability ``pi``; cells can be tinted by a label embedding
``gamma`` (one colour per class, countgrid._utils.palette).

matplotlib is optional (``pip install countgrid[plot]``) and only imported
inside :func:`plot_word_grid`; :func:`text_word_grid` needs numpy only.
"""
import math
from numbers import Integral, Real

import numpy as np

from countgrid._utils.palette import (MAX_LEVELS, OTHER, PALETTE, cell_colors, choose_levels,
                                level_colors)
from countgrid._utils.param_validation import Interval, Options, validate_call_params
from countgrid.exceptions import not_fitted_error
from countgrid.grid._words import top_words, word_weights

__all__ = ["plot_word_grid", "text_word_grid", "word_grid_cells"]

_INSTALL_HINT = ("countgrid.plotting needs matplotlib, which is not installed; "
                 "install it with: pip install countgrid[plot]")

# The categorical palette of the map and the pictures (countgrid._utils.palette: Okabe & Ito's
# colour-blind-safe colours first, then a Glasbey-style extension to 64 colours).
_PALETTE = PALETTE


def _import_pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return plt


# ---------------------------------------------------------------- helpers
def _resolve(grid, gamma, label_names):
    """(pi, gamma, label_names) from a fitted estimator or arrays."""
    classes = None
    if hasattr(grid, "grids_") and not hasattr(grid, "grid_"):
        raise TypeError("a GenerativeCountingGridClassifier holds one grid per class; "
                        "plot one of its grids_ instead")
    if hasattr(grid, "grid_"):  # CountingGridClassifier / CountingGridRegressor
        if gamma is None:
            gamma = getattr(grid, "gamma_", None)
            classes = getattr(grid, "classes_", None)
        grid = grid.grid_
    if hasattr(grid, "pi_"):
        pi = grid.pi_
    elif hasattr(grid, "get_params"):
        if "extent" not in grid.get_params():
            raise TypeError(f"grid must be a counting grid (CountingGrid, CountingGridClassifier, "
                            f"CountingGridRegressor) or an array pi; got {type(grid).__name__}")
        raise not_fitted_error(f"This {type(grid).__name__} instance is not fitted yet; "
                               "call 'fit' first.")
    else:
        pi = grid
    pi = np.asarray(pi)
    if pi.dtype not in (np.float32, np.float64):    # float32 stays: no copy of the grid
        pi = pi.astype(np.float64)
    if pi.ndim != 3:
        raise ValueError(f"word grids need a 2-D grid, i.e. pi of shape (E1, E2, n_features); "
                         f"got pi of shape {pi.shape}")
    if gamma is not None:
        gamma = np.asarray(gamma, dtype=np.float64)
        if gamma.shape[:2] != pi.shape[:2] or gamma.ndim not in (2, 3):
            raise ValueError(f"gamma must have shape {pi.shape[:2]} (continuous) or "
                             f"{pi.shape[:2]} + (n_classes,) (discrete); got {gamma.shape}")
    if label_names is None and classes is not None:
        label_names = [str(c) for c in classes]
    if label_names is not None:
        label_names = [str(c) for c in label_names]
        if gamma is not None and gamma.ndim == 3 and len(label_names) != gamma.shape[2]:
            raise ValueError(f"{len(label_names)} label_names for {gamma.shape[2]} classes")
    return pi, gamma, label_names


_WORD_GRID_CONSTRAINTS = {
    "n_words": [Interval(Integral, 1, None, closed="left")],
    "step": [None, Interval(Integral, 1, None, closed="left")],
    "max_cells": [Interval(Integral, 1, None, closed="left")],
    "weighting": [Options("relevance", "probability", "pi", "lift", "idf"), "array-like"],
}


def _auto_step(extent, max_cells):
    return max(1, math.ceil(max(extent) / max_cells))


#: Entries of ``a`` gathered at once by _block_mean (its scratch: 8 MB of float64).
_BLOCK_MEAN_ELEMENTS = 1 << 20


def _block_mean(a, step):
    """Mean of ``a`` (E1, E2, ...) over the step x step blocks anchored at
    every step-th cell (toroidal wrap for a partial last block), in float64; ``a``
    itself for ``step == 1``.  A 3-D ``a`` is averaged a block of its last axis at a
    time (the means of 400 cells of 38,559 words took two float64 copies of the grid)."""
    if step == 1:
        return a
    E1, E2 = a.shape[:2]
    r = (np.arange(0, E1, step)[:, None] + np.arange(step)) % E1   # (n1, step)
    c = (np.arange(0, E2, step)[:, None] + np.arange(step)) % E2   # (n2, step)
    if a.ndim != 3:
        blocks = a[r[:, :, None, None], c[None, None, :, :]]        # (n1, s, n2, s, ...)
        return np.asarray(blocks, dtype=np.float64).mean(axis=(1, 3))
    Z = a.shape[2]
    out = np.empty((r.shape[0], c.shape[0], Z), dtype=np.float64)
    width = max(2, _BLOCK_MEAN_ELEMENTS // (E1 * E2))
    starts = list(range(0, Z, width))
    if len(starts) > 1 and Z - starts[-1] == 1:
        starts.pop()        # no last block of one column: the mean's order stays the same
    for w0, w1 in zip(starts, starts[1:] + [Z]):
        blocks = a[:, :, w0:w1][r[:, :, None, None], c[None, None, :, :]]
        out[:, :, w0:w1] = np.asarray(blocks, dtype=np.float64).mean(axis=(1, 3))
    return out


def _marginal_source(grid):
    """(prior, window) of a fitted grid for p(w) (a learned prior), else (None, None)."""
    g = getattr(grid, "grid_", grid)
    prior = getattr(g, "prior_", None)
    if prior is None or not hasattr(g, "window"):
        return None, None
    return prior, tuple(int(w) for w in g._fitted_grid()[1])


def lump_gamma(gamma, names, levels=None):
    """A discrete label embedding with at most ``countgrid._utils.palette.MAX_LEVELS``
    classes: the most massive (or the chosen ``levels``) kept in order, the rest summed
    into "other".  Returns ``(gamma, names, lumped)``."""
    C = gamma.shape[-1]
    names = [str(v) for v in names] if names is not None else [f"class {i}" for i in range(C)]
    keep, lump = choose_levels(names, gamma.reshape(-1, C).sum(axis=0), levels, MAX_LEVELS,
                               "levels")
    if not lump and keep == list(range(C)):
        return gamma, names, False
    parts = [gamma[..., keep]]
    if lump:
        rest = np.setdiff1d(np.arange(C), keep)
        parts.append(gamma[..., rest].sum(axis=-1, keepdims=True))
    shown = [names[k] for k in keep]
    if lump:
        shown.append(OTHER if OTHER not in shown else f"({OTHER})")
    return np.concatenate(parts, axis=-1), shown, lump


@validate_call_params(_WORD_GRID_CONSTRAINTS)
def word_grid_cells(grid, feature_names, n_words=3, step=None, max_cells=24, gamma=None,
                    label_names=None, weighting="relevance"):
    """The words, probabilities and labels shown by the word-grid pictures.

    Parameters
    ----------
    grid : CountingGrid, CountingGridClassifier, CountingGridRegressor or ndarray
        A fitted estimator or a grid ``pi`` of shape ``(E1, E2, n_features)``.
        With a classifier (regressor), its ``gamma_`` is used unless
        ``gamma`` is given.
    feature_names : sequence of str, length n_features
    n_words : int, default=3
        Words per shown cell.
    step : int, optional
        Show every ``step``-th cell along each axis; each shown cell then
        summarises the ``step x step`` block it anchors (mean of ``pi`` and
        ``gamma`` over the block).  Default: the smallest step that shows at
        most ``max_cells`` cells per side.
    max_cells : int, default=24
    gamma : ndarray, optional
        Label embedding of shape ``(E1, E2, n_classes)`` (discrete, e.g.
        :func:`countgrid.embed_labels`) or ``(E1, E2)`` (continuous).
    label_names : sequence of str, optional
        Class names (default: the classifier's ``classes_``).
    weighting : {"relevance", "probability", "lift"} or array-like, default="relevance"
        How a shown cell ranks its words: by ``pi * f`` with the per-word
        factor ``f`` of :func:`countgrid.grid.word_weights` ("relevance":
        LDAvis' relevance with lambda = :data:`countgrid.grid.RELEVANCE_LAMBDA`,
        words frequent in the cell and specific to it; "probability" (or
        "pi"): the most probable words, the default until 0.2.0.dev0; "lift": ``pi``
        divided by the word's mean over the grid, rare words win), or one
        factor per word, e.g. ``word_weights(cg.pi_, "idf", X=X)``.  ``p(w)``
        is the whole grid's, also for block means.  Sizes always follow
        ``pi``.

    Returns
    -------
    dict
        ``words`` (n1, n2, n_words) str, ``probs`` (n1, n2, n_words),
        ``gamma`` (n1, n2[, n_classes]) or None, ``label_names``, ``step``,
        ``extent``.
    """
    pi, gamma, label_names = _resolve(grid, gamma, label_names)
    names = np.asarray(feature_names).astype(str)
    if names.ndim != 1 or names.shape[0] != pi.shape[2]:
        raise ValueError(f"feature_names has {names.size} entries; the grid has "
                         f"{pi.shape[2]} features")
    if int(n_words) < 1:
        raise ValueError(f"n_words must be >= 1, got {n_words}")
    n_words = min(int(n_words), pi.shape[2])
    step = _auto_step(pi.shape[:2], max_cells) if step is None else int(step)
    if step < 1:
        raise ValueError(f"step must be >= 1, got {step}")
    P = _block_mean(pi, step)
    if isinstance(weighting, str) and weighting == "idf":
        raise ValueError("weighting='idf' needs the documents: pass "
                         "weighting=countgrid.grid.word_weights(grid.pi_, 'idf', X=X)")
    prior, window = _marginal_source(grid)
    f = word_weights(pi, weighting, prior=prior, window=window)
    # a block of cells at a time (a whole-table sort of 400 cells x 38,559 words took
    # 0.5 GB); descending pi * f, ties by lower word
    top = top_words(P, n_words, weighting="probability" if f is None else f)
    probs = np.take_along_axis(P, top, axis=2).astype(np.float64)
    return {
        "words": names[top],
        "probs": probs,
        "gamma": None if gamma is None else _block_mean(gamma, step),
        "label_names": label_names,
        "step": step,
        "extent": pi.shape[:2],
    }


def _class_colors(n, colors, lumped=False):
    from matplotlib.colors import to_rgb

    if colors is None:
        if n - lumped <= len(_PALETTE):
            return level_colors(n, lumped) / 255.0
        import matplotlib

        cmap = matplotlib.colormaps["hsv"]
        colors = [cmap(i / n) for i in range(n)]
    if len(colors) < n:
        raise ValueError(f"{len(colors)} colors for {n} classes")
    return np.array([to_rgb(c) for c in colors[:n]])


# ----------------------------------------------------------------- figure
#: Up to this many classes the word grid's legend is a few rows above the grid; more go
#: in columns right of it.
_LEGEND_ABOVE = 10


def legend_outside(ax, handles=None, own=False, fontsize=9, **kw):
    """A legend in as many columns as its entries need, right of the axes, top-aligned.

    The columns hold as many rows as the axes are tall (at least 8).  When the figure is
    the picture's own (``own``), it is widened so that the legend fits beside the axes,
    which keep their size: a legend of 42 entries is never clipped.  Returns the legend.
    """
    fig = ax.figure
    if handles is None:
        handles, _ = ax.get_legend_handles_labels()
    n = len(handles)
    height_pt = ax.get_position().height * fig.get_figheight() * 72.0
    rows = max(8, int(height_pt // (fontsize * 1.75)))
    ncol = max(1, -(-n // rows))
    leg = ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), ncol=ncol,
                    frameon=False, fontsize=fontsize, borderaxespad=0.0, handlelength=1.2,
                    columnspacing=1.0, **kw)
    if own:
        fig.draw_without_rendering()
        W, H = fig.get_size_inches()
        box = ax.get_position()
        right = leg.get_window_extent().x1 / fig.dpi + 0.15     # inches
        if right > W:
            scale = W / right
            fig.set_size_inches(right, H)
            ax.set_position([box.x0 * scale, box.y0, box.width * scale, box.height])
            for other in fig.axes:            # a colour bar beside the axes, if any
                if other is not ax:
                    b = other.get_position()
                    other.set_position([b.x0 * scale, b.y0, b.width * scale, b.height])
    return leg


def _new_figure(shown_shape, cell_inches=0.62, legend=True, pyplot=True):
    """A figure and axes sized for a word grid of ``shown_shape`` cells.

    ``pyplot=False`` builds a bare :class:`matplotlib.figure.Figure` (no
    backend or GUI involved; ``savefig`` still works), for scripts and the
    command line.
    """
    n1, n2 = shown_shape
    size = cell_inches * max(n1, n2)
    scale = 20.0 / size if size > 20 else 1.0
    figsize = (cell_inches * n2 * scale + 0.4, cell_inches * n1 * scale + (1.1 if legend else 0.6))
    if pyplot:
        fig = _import_pyplot().figure(figsize=figsize)
    else:
        try:
            from matplotlib.figure import Figure
        except ImportError as exc:
            raise ImportError(_INSTALL_HINT) from exc
        fig = Figure(figsize=figsize)
    ax = fig.add_subplot()
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.01,
                        top=1.0 - (1.0 if legend else 0.5) / figsize[1])
    return fig, ax


@validate_call_params({**_WORD_GRID_CONSTRAINTS,
                       "tint": [Interval(Real, 0, 1, closed="both")],
                       "cell_inches": [Interval(Real, 0, None, closed="neither")],
                       "max_fontsize": [None, Interval(Real, 0, None, closed="neither")],
                       "min_fontsize": [None, Interval(Real, 0, None, closed="neither")],
                       "legend": ["boolean"]})
def plot_word_grid(grid, feature_names, ax=None, n_words=3, step=None, max_cells=24,
                   gamma=None, label_names=None, colors=None, weighting="relevance",
                   max_fontsize=None, min_fontsize=None, tint=0.35, cmap="coolwarm",
                   legend=True, title=None, cell_inches=0.62, levels=None):
    """Draw the word grid of a 2-D counting grid with matplotlib.

    Each shown cell carries the ``n_words`` words that describe it best (by
    default the most relevant: frequent in the cell and specific to it,
    :func:`countgrid.grid.word_relevance`), best first; font sizes grow with
    the probability (square-root scale) and shrink for long words so that
    they stay inside the cell.  With a label embedding the cells are tinted
    by the mixture of class colours given by ``gamma`` and the words take
    the colour of the most probable class (continuous ``gamma``: tint from
    ``cmap``).  Up to 50 classes get a colour each (countgrid._utils.palette);
    with more, the 49 with the most mass and "other" (grey), or the chosen
    ``levels``.

    Parameters
    ----------
    grid : CountingGrid, CountingGridClassifier, CountingGridRegressor or ndarray
        Fitted estimator, or ``pi`` of shape ``(E1, E2, n_features)``.  A
        classifier brings its label embedding ``gamma_`` and ``classes_``.
    feature_names : sequence of str, length n_features
        The vocabulary.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new figure sized to the grid
        (``cell_inches`` per shown cell, at most about 20 inches).
    n_words : int, default=3
        Words per shown cell.
    step : int, optional
        Show every ``step``-th cell, each summarising its ``step x step``
        block; default keeps at most ``max_cells`` cells per side so that big
        grids stay legible.
    max_cells : int, default=24
    gamma : ndarray, optional
        ``(E1, E2, n_classes)`` discrete or ``(E1, E2)`` continuous label
        embedding (e.g. from :func:`countgrid.embed_labels`); overrides the
        classifier's ``gamma_``.
    label_names : sequence of str, optional
        Names of the classes for the legend.
    colors : sequence of matplotlib colours, optional
        One colour per class (default: the categorical palette, Okabe & Ito's
        colour-blind friendly colours first).
    weighting : {"relevance", "probability", "lift"} or array-like, default="relevance"
        How words are ranked in a cell (see :func:`word_grid_cells`).
    max_fontsize, min_fontsize : float, optional
        Font sizes (points) of the most and least probable shown words;
        default from the cell size.
    tint : float, default=0.35
        Strength of the background tint (0 = white cells).
    cmap : str or Colormap, default="coolwarm"
        Colormap for a continuous ``gamma``.
    legend : bool, default=True
        Add a class legend (discrete) or a colour bar (continuous).
    title : str, optional
    cell_inches : float, default=0.62
        Size of a shown cell when a new figure is created.
    levels : sequence of str, optional
        The classes of a discrete ``gamma`` that get a colour, in this order;
        the others are summed into "other" (grey).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on; ``ax.figure`` is the figure.

    Raises
    ------
    ImportError
        If matplotlib is not installed (``pip install countgrid[plot]``).
    ValueError
        If the grid is not 2-D or the names do not match.

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> from countgrid.plotting import plot_word_grid
    >>> words = [f"w{i}" for i in range(12)]
    >>> X = np.random.default_rng(0).poisson(1.0, size=(40, len(words)))
    >>> cg = countgrid.CountingGrid((6, 6), (2, 2), n_iter=3, random_state=0).fit(X)
    >>> ax = plot_word_grid(cg, words, n_words=2)
    >>> ax.figure.savefig("grid.png")  # doctest: +SKIP
    """
    try:
        import matplotlib
        from matplotlib.patches import Patch
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc

    cells = word_grid_cells(grid, feature_names, n_words=n_words, step=step,
                            max_cells=max_cells, gamma=gamma, label_names=label_names,
                            weighting=weighting)
    words, probs, g = cells["words"], cells["probs"], cells["gamma"]
    names, step = cells["label_names"], cells["step"]
    n1, n2, k = words.shape
    lumped = False
    if g is not None and g.ndim == 3 and colors is None and (
            levels is not None or g.shape[2] > MAX_LEVELS):
        g, names, lumped = lump_gamma(g, names, levels)
    elif levels is not None:
        raise ValueError("levels choose the coloured classes of a discrete gamma (and "
                         "colors= is not given)")
    many = g is not None and g.ndim == 3 and g.shape[2] > _LEGEND_ABOVE

    own = ax is None
    if ax is None:
        fig, ax = _new_figure((n1, n2), cell_inches, legend and not many, pyplot=True)
    elif not (hasattr(ax, "figure") and hasattr(ax, "text")):
        raise TypeError(f"ax must be a matplotlib Axes, got {type(ax).__name__}")
    fig = ax.figure

    # Background: class-colour mixture (discrete) or colormap (continuous).
    rgb = np.ones((n1, n2, 3))
    text_rgb = np.zeros((n1, n2, 3)) + 0.1
    handles = None
    if g is not None and g.ndim == 3:
        cols = _class_colors(g.shape[2], colors, lumped)
        mix = cell_colors(g, cols, lumped=lumped)    # up to 3 classes mixed, else the dominant
        rgb = 1.0 - tint * (1.0 - mix)
        text_rgb = 0.62 * cols[np.argmax(g, axis=2)]
        labels = names if names is not None else [f"class {i}" for i in range(g.shape[2])]
        handles = [Patch(facecolor=1.0 - 0.6 * (1.0 - c), edgecolor=0.62 * c, label=lab)
                   for c, lab in zip(cols, labels)]
    elif g is not None:
        cm = matplotlib.colormaps[cmap] if isinstance(cmap, str) else cmap
        lo, hi = float(np.min(g)), float(np.max(g))
        norm = matplotlib.colors.Normalize(lo, hi if hi > lo else lo + 1.0)
        rgb = 1.0 - tint * (1.0 - cm(norm(g))[..., :3])
    ax.imshow(rgb, extent=(0, n2, n1, 0), interpolation="nearest", aspect="auto")
    ax.set_xlim(0, n2)
    ax.set_ylim(n1, 0)
    for i in range(1, n1):
        ax.axhline(i, color="0.82", lw=0.4)
    for j in range(1, n2):
        ax.axvline(j, color="0.82", lw=0.4)
    ax.set_xticks([])
    ax.set_yticks([])

    # Font sizes from the cell size in points.
    bbox = ax.get_window_extent().transformed(fig.dpi_scale_trans.inverted())
    cell_w, cell_h = 72.0 * bbox.width / n2, 72.0 * bbox.height / n1
    if max_fontsize is None:
        max_fontsize = max(3.0, min(cell_h / (k + 0.6), cell_w / (0.6 * 8)))
    if min_fontsize is None:
        min_fontsize = max(2.5, 0.5 * max_fontsize)
    pmax = float(probs.max()) if probs.size else 1.0
    rel = np.sqrt(probs / pmax) if pmax > 0 else np.ones_like(probs)
    sizes = min_fontsize + (max_fontsize - min_fontsize) * rel
    line = 1.0 / (k + 0.4)
    for i in range(n1):
        for j in range(n2):
            color = tuple(text_rgb[i, j])
            for r in range(k):
                w = words[i, j, r]
                fs = min(sizes[i, j, r], cell_w / (0.62 * max(len(w), 1)))
                # Half-point steps: matplotlib caches font look-ups per size,
                # so a few distinct sizes keep big grids fast to render.
                fs = max(0.5, round(2.0 * fs) / 2.0)
                ax.text(j + 0.5, i + (r + 0.7) * line, w, ha="center", va="center",
                        fontsize=fs, color=color, clip_on=True,
                        fontweight="bold" if r == 0 else "normal")

    if legend and handles is not None and not many:
        ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0),
                  ncol=min(len(handles), 5), frameon=False, fontsize=10,
                  borderaxespad=0.2, handlelength=1.2)
    elif legend and handles is not None:
        legend_outside(ax, handles, own, fontsize=9)
    elif legend and g is not None:
        sm = matplotlib.cm.ScalarMappable(norm=norm, cmap=cm)
        fig.colorbar(sm, ax=ax, fraction=0.03, pad=0.01)
    if title is None:
        E1, E2 = cells["extent"]
        # a layered grid's spatial view (countgrid.grid._layers.spatial_view)
        layered = getattr(getattr(grid, "grid_", grid), "_layered", None)
        # or a time-sliced grid's periods (countgrid.grid._time_slices.periods_view)
        sliced = getattr(grid, "_sliced", None)
        title = f"{E1} x {E2} counting grid" + (
            f" of {np.shape(layered.pi_)[0]} layers, each cell their mixture"
            if layered is not None else "") + (
            f" per {sliced.period_}, {sliced.period_labels_[0]} to "
            f"{sliced.period_labels_[-1]}: their average" if sliced is not None else "") + (
            f" (one cell shown per {step}x{step} block)" if step > 1 else "")
    if title:
        if legend and handles is not None and not many:
            fig.suptitle(title, fontsize=11, y=0.995, va="top")
        else:
            ax.set_title(title, fontsize=11)
    return ax


# ------------------------------------------------------------------- text
@validate_call_params({key: _WORD_GRID_CONSTRAINTS[key] for key in ("n_words", "step",
                                                                      "weighting")}
                      | {"max_width": [Interval(Integral, 1, None, closed="left")],
                         "cell_width": [Interval(Integral, 3, None, closed="left")]})
def text_word_grid(grid, feature_names, n_words=1, step=None, max_width=120, cell_width=10,
                   gamma=None, label_names=None, weighting="relevance"):
    """A plain-text word grid (no matplotlib needed).

    Each shown cell becomes a column of width ``cell_width`` holding its
    ``n_words`` best words (by ``weighting``: the most relevant by default),
    one per line (truncated to fit).  With
    a discrete label embedding every word is prefixed by the letter of the
    most probable class of its cell (``A``, ``B``, ...), explained in a
    legend below the grid.

    Parameters
    ----------
    grid : CountingGrid, CountingGridClassifier, CountingGridRegressor or ndarray
        As for :func:`plot_word_grid`.
    feature_names : sequence of str
    n_words : int, default=1
        Words (text lines) per shown cell.
    step : int, optional
        Show every ``step``-th cell (each summarising its block); default
        keeps the text within ``max_width`` characters.
    max_width : int, default=120
    cell_width : int, default=10
        Characters per cell, separators included.
    gamma, label_names, weighting
        As for :func:`plot_word_grid`.

    Returns
    -------
    str
        The rendering, lines separated by ``"\\n"``.
    """
    if cell_width < 3:
        raise ValueError(f"cell_width must be >= 3, got {cell_width}")
    pi_extent = _resolve(grid, gamma, label_names)[0].shape[:2]
    if step is None:
        per_row = max(1, max_width // cell_width)
        step = max(1, math.ceil(pi_extent[1] / per_row))
    cells = word_grid_cells(grid, feature_names, n_words=n_words, step=step, gamma=gamma,
                            label_names=label_names, weighting=weighting)
    words, g, names = cells["words"], cells["gamma"], cells["label_names"]
    n1, n2, k = words.shape
    marks = None
    if g is not None and g.ndim == 3:
        letters = [chr(ord("A") + i) if i < 26 else "?" for i in range(g.shape[2])]
        marks = np.array(letters)[np.argmax(g, axis=2)]
    width = cell_width - 1
    rule = "+" + "+".join(["-" * width] * n2) + "+"
    out = [rule]
    for i in range(n1):
        for r in range(k):
            row = []
            for j in range(n2):
                w = str(words[i, j, r])
                if marks is not None:
                    w = f"{marks[i, j]}:{w}"
                row.append(w[:width].ljust(width))
            out.append("|" + "|".join(row) + "|")
        out.append(rule)
    E1, E2 = cells["extent"]
    note = f"{E1} x {E2} counting grid"
    if cells["step"] > 1:
        note += f", one cell shown per {cells['step']}x{cells['step']} block (block means)"
    out.append(note)
    if marks is not None:
        labels = names if names is not None else [f"class {i}" for i in range(g.shape[2])]
        out.append("classes: " + ", ".join(f"{chr(ord('A') + i)} = {lab}"
                                           for i, lab in enumerate(labels)))
    return "\n".join(out)
