"""Pictures of fitted models beyond the word grid: a word's map, the label embedding,
document positions, log-likelihood curves, pLSA top words and the ZIP-GTM map.

Conventions (as the word grid): cell ``(i, j)`` of a 2-D grid is the square
``[j, j + 1] x [i, i + 1]`` of the axes, row ``i`` downwards, indices 0-based as in
``pi_``; matplotlib is imported inside the functions only.
"""
from numbers import Integral, Real

import numpy as np

from countgrid._utils.palette import MAX_LEVELS, OTHER, cell_colors, choose_levels, level_colors
from countgrid._utils.param_validation import Interval, Options, validate_call_params
from countgrid._utils.validation import check_is_fitted, check_random_state
from countgrid.exceptions import not_fitted_error
from countgrid.grid._classifiers import (CountingGridClassifier, CountingGridRegressor,
                                         GenerativeCountingGridClassifier)
from countgrid.grid._counting_grid import CountingGrid
from countgrid.grid._words import resolve_word, top_words as _top_words
from countgrid.gtm._zip_gtm import ZIPGTM
from countgrid.plotting._word_grid import (_INSTALL_HINT, _PALETTE, _import_pyplot,
                                           legend_outside, lump_gamma, plot_word_grid)
from countgrid.topics._plsa import PLSA

__all__ = ["plot_word_map", "plot_label_embedding", "plot_positions", "plot_log_likelihood",
           "plot_top_words", "plot_zip_gtm_map"]

_MARKERS = "o^sDvP*Xhp"


# ---------------------------------------------------------------- helpers
def _mpl():
    try:
        import matplotlib
        import matplotlib.colors  # noqa: F401
        from matplotlib.patches import Patch  # noqa: F401
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return matplotlib


def _axes(ax, figsize):
    """``ax`` checked, or new axes of a pyplot figure."""
    if ax is None:
        fig = _import_pyplot().figure(figsize=figsize)
        return fig.add_subplot()
    _mpl()
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes, got {type(ax).__name__}")
    return ax


def _fitted_grid(grid, name="grid"):
    """The fitted 2-D CountingGrid of ``grid`` (a CountingGrid or a classifier/regressor
    built on one)."""
    if isinstance(grid, GenerativeCountingGridClassifier):
        raise TypeError(f"{name} is a GenerativeCountingGridClassifier, which holds one grid "
                        f"per class: pass one of its grids_")
    if isinstance(grid, (CountingGridClassifier, CountingGridRegressor)):
        check_is_fitted(grid, "grid_")
        grid = grid.grid_
    if not isinstance(grid, CountingGrid):
        raise TypeError(f"{name} must be a CountingGrid, CountingGridClassifier or "
                        f"CountingGridRegressor, got {type(grid).__name__}")
    check_is_fitted(grid, "pi_")
    if grid.pi_.ndim != 3:
        raise ValueError(f"{name} has a {grid.pi_.ndim - 1}-D grid of extent "
                         f"{grid.pi_.shape[:-1]}; this picture needs a 2-D grid")
    return grid


def _grid_frame(ax, extent, xlabel=True):
    """Limits, ticks at cell centres labelled by 0-based cell index, axis labels."""
    E1, E2 = extent
    ax.set_xlim(0, E2)
    ax.set_ylim(E1, 0)
    for n, set_ticks, set_labels in ((E2, ax.set_xticks, ax.set_xticklabels),
                                     (E1, ax.set_yticks, ax.set_yticklabels)):
        step = max(1, int(np.ceil(n / 12)))
        idx = np.arange(0, n, step)
        set_ticks(idx + 0.5)
        set_labels([str(i) for i in idx], fontsize=8)
    ax.set_aspect("equal")
    if xlabel:
        ax.set_xlabel("grid column j")
        ax.set_ylabel("grid row i")


def _label_codes(labels, n, name="labels"):
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise ValueError(f"{name} must have one entry per document ({n}), got shape "
                         f"{labels.shape}: give one label per document")
    try:
        classes, codes = np.unique(labels, return_inverse=True)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in labels.ravel()})
        raise TypeError(f"{name} mix values that cannot be ordered ({', '.join(kinds)}); "
                        f"give labels of one type, e.g. {name}.astype(str)") from None
    return classes, codes.ravel()


def _colors(n, colors=None, lumped=False):
    from matplotlib.colors import to_rgb

    if colors is None:
        if n - lumped <= len(_PALETTE):
            return level_colors(n, lumped) / 255.0
        else:
            import matplotlib

            cmap = matplotlib.colormaps["turbo"]
            colors = [cmap((i + 0.5) / n) for i in range(n)]
    if isinstance(colors, str) or not hasattr(colors, "__len__"):
        raise TypeError(f"colors must be a sequence of matplotlib colours (one per class), "
                        f"got {colors!r}")
    if len(colors) < n:
        raise ValueError(f"colors has {len(colors)} entries for {n} classes")
    out = []
    for i, c in enumerate(list(colors)[:n]):
        try:
            out.append(to_rgb(c))
        except (TypeError, ValueError):
            raise ValueError(f"colors[{i}] = {c!r} is not a matplotlib colour (e.g. 'red', "
                             "'#1f77b4' or an RGB tuple)") from None
    return np.array(out)


def _cmap(cmap):
    """The Colormap of a name or Colormap; an unknown name is a ValueError naming cmap."""
    import matplotlib
    from matplotlib.colors import Colormap

    if isinstance(cmap, Colormap):
        return cmap
    if not isinstance(cmap, str):
        raise TypeError(f"cmap must be a colormap name or a matplotlib Colormap, got "
                        f"{type(cmap).__name__}")
    try:
        return matplotlib.colormaps[cmap]
    except KeyError:
        raise ValueError(f"cmap={cmap!r} is not a matplotlib colormap (e.g. 'viridis', "
                         "'coolwarm')") from None


def _legend(ax, handles=None, own=False, **kw):
    """A class legend: one row above the axes for up to three classes (returns the title
    pad that clears it), else columns right of the axes, as many as the entries need, the
    picture's own figure widened to hold them (returns the default pad)."""
    n = len(handles) if handles is not None else len(ax.get_legend_handles_labels()[0])
    extra = {} if handles is None else {"handles": handles}
    if n <= 3:
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=n, frameon=False,
                  fontsize=9, borderaxespad=0.3, handlelength=1.2, **extra, **kw)
        return 24
    legend_outside(ax, handles, own, fontsize=9, **kw)
    return 6


def _lump_codes(classes, codes, levels, colors):
    """(codes, names, lumped) of labels with at most MAX_LEVELS coloured levels (the most
    frequent) or the chosen ``levels``; the others become "other"."""
    names = [str(c) for c in classes]
    if levels is None and (len(classes) <= MAX_LEVELS or colors is not None):
        return codes, None, False
    keep, lump = choose_levels(names, np.bincount(codes, minlength=len(classes)), levels,
                               MAX_LEVELS, "levels")
    rank = np.full(len(classes), len(keep), dtype=np.intp)
    rank[keep] = np.arange(len(keep))
    shown = [names[k] for k in keep]
    if lump:
        shown.append(OTHER if OTHER not in shown else f"({OTHER})")
    return rank[codes], shown, lump


def _names(label_names, classes, name="label_names"):
    if label_names is None:
        return [str(c) for c in classes]
    label_names = [str(c) for c in label_names]
    if len(label_names) != len(classes):
        raise ValueError(f"{name} has {len(label_names)} entries for {len(classes)} classes")
    return label_names


# ------------------------------------------------------------------- word
@validate_call_params({"n_cells": [Interval(Integral, 0, None, closed="left")],
                       "colorbar": ["boolean"]})
def plot_word_map(grid, word, feature_names=None, ax=None, n_cells=5, cmap="viridis",
                  colorbar=True, title=None):
    """Heat map of where a word lives on a 2-D counting grid: ``pi_[..., w]``.

    Parameters
    ----------
    grid : CountingGrid, CountingGridClassifier or CountingGridRegressor
        A fitted estimator with a 2-D grid.
    word : int or str
        A feature index, or a word looked up in ``feature_names`` (an unknown word is a
        ValueError listing close matches).
    feature_names : sequence of str, optional
        The vocabulary (default: the grid's ``feature_names_in_``, if any).
    ax : matplotlib.axes.Axes, optional
    n_cells : int, default=5
        Mark and number the word's ``n_cells`` most probable cells
        (:meth:`CountingGrid.word_cells`); 0 marks none.
    cmap : str or Colormap, default="viridis"
    colorbar : bool, default=True
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        The image is ``ax.images[0]`` (its array is ``pi_[..., w]``).

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> from countgrid.plotting import plot_word_map
    >>> words = ["cat", "dog", "fish"]
    >>> X = np.random.default_rng(0).poisson(1.0, size=(40, len(words)))
    >>> cg = countgrid.CountingGrid((6, 6), (2, 2), n_iter=3, random_state=0).fit(X)
    >>> ax = plot_word_map(cg, "dog", words)
    >>> ax.images[0].get_array().shape
    (6, 6)
    """
    _mpl()
    g = _fitted_grid(grid)
    names = g._vocabulary(feature_names)
    w = resolve_word(word, names, g.pi_.shape[-1])
    cmap = _cmap(cmap)
    m = np.asarray(g.pi_[..., w], dtype=np.float64)
    E1, E2 = m.shape
    ax = _axes(ax, (6.4, 5.6 * E1 / max(E1, E2) + 0.6))
    im = ax.imshow(m, extent=(0, E2, E1, 0), cmap=cmap, interpolation="nearest")
    _grid_frame(ax, (E1, E2))
    label = names[w] if names is not None else f"feature {w}"
    if n_cells:
        cells, _ = g.word_cells(w, n_cells=n_cells)
        from matplotlib import patheffects

        halo = [patheffects.withStroke(linewidth=2.0, foreground="black")]
        for r, (i, j) in enumerate(cells):
            ax.plot(j + 0.5, i + 0.5, "o", ms=11, mfc="none", mec="white", mew=1.5,
                    path_effects=halo)
            ax.text(j + 0.5, i + 0.5, str(r + 1), ha="center", va="center", fontsize=7,
                    color="white", fontweight="bold", path_effects=halo)
    if colorbar:
        ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.03,
                           label=f"P({label} | cell) = pi")
    ax.set_title(title if title is not None else
                 f"where '{label}' lives" + (f" (top {len(cells)} cells numbered)"
                                             if n_cells else ""), fontsize=11)
    return ax


# -------------------------------------------------------- label embedding
def _embedding(estimator, gamma, label_names):
    """(extent, gamma (E1, E2[, C]), names or None, kind) of a classifier/regressor or a
    grid with an explicit gamma."""
    if isinstance(estimator, GenerativeCountingGridClassifier):
        raise TypeError("estimator is a GenerativeCountingGridClassifier: it has no label "
                        "embedding (one grid per class)")
    if not isinstance(estimator, (CountingGrid, CountingGridClassifier, CountingGridRegressor)):
        raise TypeError(f"estimator must be a CountingGridClassifier, CountingGridRegressor "
                        f"or CountingGrid (with gamma=), got {type(estimator).__name__}")
    grid = _fitted_grid(estimator, "estimator")
    extent = grid.pi_.shape[:2]
    classes = None
    if gamma is None:
        if isinstance(estimator, CountingGrid):
            raise ValueError("estimator is a CountingGrid, which holds no labels: pass "
                             "gamma=countgrid.embed_labels(cg.transform(X), y, cg.pi_.shape[:-1], "
                             "cg.window) or a CountingGridClassifier")
        gamma = estimator.gamma_
        classes = getattr(estimator, "classes_", None)
    try:
        gamma = np.asarray(gamma, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"gamma must hold real numbers, got "
                        f"{np.asarray(gamma).dtype}") from None
    if gamma.shape[:2] != extent or gamma.ndim not in (2, 3):
        raise ValueError(f"gamma must have shape {extent} (continuous) or {extent} + "
                         f"(n_classes,) (discrete); got {gamma.shape}")
    if not np.isfinite(gamma).all():
        raise ValueError("gamma must be finite")
    if gamma.ndim == 3:
        if (gamma < 0).any():
            raise ValueError("a discrete gamma must be non-negative (class proportions)")
        names = _names(label_names, classes if classes is not None
                       else [f"class {i}" for i in range(gamma.shape[2])])
        return extent, gamma, names, "discrete"
    return extent, gamma, None, "continuous"


def label_embedding_rgb(gamma, colors=None):
    """The overlay colours of a discrete label embedding ``gamma`` (E1, E2, C).

    Three classes without ``colors``: red, green and blue channels equal to the class
    proportions ``gamma / gamma.sum(-1)`` (the paper's Fig. 3); two or three classes
    otherwise: the proportion-weighted mean of the class colours; more: the colour of the
    cell's dominant class, paler the less it dominates (countgrid._utils.palette.cell_colors, the
    map's rule: a mean of many colours is a muddy grey)."""
    p = gamma / np.maximum(gamma.sum(axis=2, keepdims=True), np.finfo(np.float64).tiny)
    if gamma.shape[2] == 3 and colors is None:
        return p, np.eye(3)
    cols = colors if isinstance(colors, np.ndarray) and colors.shape == (gamma.shape[2], 3) \
        else _colors(gamma.shape[2], colors)
    return cell_colors(p, cols), cols


@validate_call_params({"legend": ["boolean"],
                       "words": [Interval(Integral, 0, None, closed="left")]})
def plot_label_embedding(estimator, ax=None, gamma=None, label_names=None, colors=None,
                         feature_names=None, words=0, legend=True, cmap="coolwarm",
                         title=None, levels=None):
    """The label embedding ``gamma`` of a counting grid as a colour overlay.

    With three classes the cell colour is the class proportions read as red, green and
    blue, as in Fig. 3 of the counting-grid paper (Jojic & Perina, UAI 2011): a pure
    class is a primary colour, a mixed cell a blend.  Other class counts blend a
    colour-blind friendly palette; a continuous embedding (regressor) uses ``cmap`` and
    a colour bar.

    Parameters
    ----------
    estimator : CountingGridClassifier, CountingGridRegressor or CountingGrid
        A fitted estimator with a 2-D grid; a bare CountingGrid needs ``gamma``.
    ax : matplotlib.axes.Axes, optional
    gamma : ndarray, optional
        ``(E1, E2, n_classes)`` or ``(E1, E2)``, e.g. from
        :func:`countgrid.embed_labels`; overrides the estimator's ``gamma_``.
    label_names : sequence of str, optional
        Legend names (default: ``classes_``).
    colors : sequence of matplotlib colours, optional
        One per class (default: RGB for three classes, else a palette).
    feature_names : sequence of str, optional
        With ``words > 0``: write each cell's ``words`` best words over it (the most
        relevant, :meth:`CountingGrid.top_words`).
    words : int, default=0
        Font sizes fit the cells: on a big grid, give a big ``ax`` (e.g.
        ``figsize=(14, 14)`` for 24 x 24 cells) or use :func:`plot_word_grid`.
    legend : bool, default=True
        A class legend (discrete) or a colour bar (continuous).
    cmap : str or Colormap, default="coolwarm"
        For a continuous embedding.
    title : str, optional
    levels : sequence of str, optional
        The classes that get a colour, in this order; the others are summed into "other"
        (grey).  Default: every class up to 50, else the 49 with the most mass and
        "other".

    Returns
    -------
    matplotlib.axes.Axes
        ``ax.images[0].get_array()`` holds the RGB of every cell.

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> from countgrid.plotting import plot_label_embedding
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.poisson(1.0, size=(60, 12)), np.arange(60) % 3
    >>> clf = countgrid.CountingGridClassifier((6, 6), (2, 2), n_iter=3,
    ...                                        random_state=0).fit(X, y)
    >>> ax = plot_label_embedding(clf)
    >>> ax.images[0].get_array().shape
    (6, 6, 3)
    """
    _mpl()
    from matplotlib.patches import Patch

    pad = 6
    extent, g, names, kind = _embedding(estimator, gamma, label_names)
    E1, E2 = extent
    own = ax is None
    ax = _axes(ax, (6.4, 5.6 * E1 / max(E1, E2) + 0.9))
    if kind == "discrete":
        lumped = False
        if colors is None and (levels is not None or g.shape[2] > MAX_LEVELS):
            g, names, lumped = lump_gamma(g, names, levels)
        elif levels is not None:
            raise ValueError("levels choose the coloured classes; give colors= or levels=, "
                             "not both")
        if lumped or (levels is not None and g.shape[2] != 3):
            cols = _colors(g.shape[2], None, lumped)
            rgb = cell_colors(g, cols, lumped=lumped)
        else:
            rgb, cols = label_embedding_rgb(g, colors)
        ax.imshow(rgb, extent=(0, E2, E1, 0), interpolation="nearest")
        if legend:
            pad = _legend(ax, [Patch(facecolor=c, edgecolor="0.3", label=n)
                               for c, n in zip(cols, names)], own)
        text_color = np.where(rgb.mean(axis=2, keepdims=True) < 0.45, 1.0, 0.0) * np.ones(3)
    else:
        cm = _cmap(cmap)
        im = ax.imshow(g, extent=(0, E2, E1, 0), interpolation="nearest", cmap=cm)
        if legend:
            ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.03, label="embedded target")
        text_color = np.zeros((E1, E2, 3))
    _grid_frame(ax, extent)
    if words:
        grid = _fitted_grid(estimator, "estimator")
        top = grid.top_words(words, feature_names)
        if top.dtype.kind != "U":
            raise ValueError("words > 0 needs feature_names (the vocabulary)")
        # font sizes that fit the cell (in points, from the axes' size on the figure)
        bbox = ax.get_window_extent().transformed(ax.figure.dpi_scale_trans.inverted())
        cell = 72.0 * min(bbox.width / E2, bbox.height / E1)
        for i in range(E1):
            for j in range(E2):
                longest = max(len(t) for t in top[i, j])
                fs = min(9.0, cell / (words + 0.5), cell / (0.62 * max(longest, 1)))
                ax.text(j + 0.5, i + 0.5, "\n".join(top[i, j]), ha="center", va="center",
                        fontsize=round(2 * fs) / 2, color=tuple(text_color[i, j]),
                        clip_on=True)
    if title is None:
        title = (f"label embedding on the {E1} x {E2} grid"
                 + (" (RGB = class proportions)" if kind == "discrete" and g.shape[2] == 3
                    and colors is None else ""))
    if title:
        ax.set_title(title, fontsize=11, pad=pad)
    return ax


# -------------------------------------------------------------- positions
def jittered_positions(centres, extent, jitter, random_state):
    """Plot coordinates ``(x, y)`` of documents at window centres ``(row, col)``: the
    cell centre plus a uniform offset in ``[-jitter, jitter]`` along each axis, wrapped
    around the torus into ``[0, E)``."""
    rng = check_random_state(random_state)
    centres = np.asarray(centres, dtype=np.float64)
    noise = rng.uniform(-jitter, jitter, size=centres.shape) if jitter > 0 else 0.0
    yx = np.mod(centres + 0.5 + noise, np.asarray(extent, dtype=np.float64))
    return yx[:, 1], yx[:, 0]


@validate_call_params({"jitter": [Interval(Real, 0, None, closed="left")],
                       "background": [Options("labels", "words", "none")],
                       "size": [Interval(Real, 0, None, closed="neither")],
                       "legend": ["boolean"]})
def plot_positions(grid, X, labels=None, ax=None, background="labels", feature_names=None,
                   label_names=None, colors=None, jitter=0.35, random_state=0, size=12.0,
                   legend=True, title=None, levels=None):
    """Documents drawn at their positions on a 2-D counting grid.

    Each document sits at the centre of its MAP window,
    ``grid.positions(X, anchor="center")``, plus a small random offset (``jitter``
    cells, wrapped around the torus) so that documents of one cell do not hide each
    other; colours follow ``labels``.

    Parameters
    ----------
    grid : CountingGrid, CountingGridClassifier or CountingGridRegressor
        A fitted estimator with a 2-D grid.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Counts of the documents to place.
    labels : array-like of shape (n_samples,), optional
        One colour (and marker) per distinct label, with a legend.
    ax : matplotlib.axes.Axes, optional
    background : {"labels", "words", "none"}, default="labels"
        Under the documents: a pale label embedding when ``grid`` is a classifier
        whose ``classes_`` are the distinct ``labels`` (in the same colours) or a
        regressor (nothing otherwise), the word grid (:func:`plot_word_grid`, needs
        ``feature_names``), or nothing.
    feature_names : sequence of str, optional
    label_names : sequence of str, optional
        Legend names for the sorted distinct labels.
    colors : sequence of matplotlib colours, optional
    jitter : float, default=0.35
        Half-width of the uniform offset, in cells (below 0.5 a document stays inside
        its cell; larger offsets wrap around the torus).
    random_state : None, int or numpy.random.Generator, default=0
        Seeds the jitter.
    size : float, default=12
        Marker area (points^2).
    legend : bool, default=True
        Up to three labels in a row above the grid, more in columns right of it (the
        picture's own figure is widened to hold them).
    title : str, optional
    levels : sequence, optional
        The labels that get a colour of their own, in this order; the other documents are
        drawn grey as "other".  Default: every label up to 50, else the 49 most frequent
        and "other".

    Returns
    -------
    matplotlib.axes.Axes
        One scatter collection per label, in the order of the sorted labels (or of
        ``levels``, then "other").

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> from countgrid.plotting import plot_positions
    >>> X = np.random.default_rng(0).poisson(1.0, size=(40, 12))
    >>> labels = np.repeat(["news", "sport"], 20)
    >>> cg = countgrid.CountingGrid((6, 6), (2, 2), n_iter=3, random_state=0).fit(X)
    >>> ax = plot_positions(cg, X, labels)
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['news', 'sport']
    """
    _mpl()
    g = _fitted_grid(grid)
    extent = g.pi_.shape[:2]
    E1, E2 = extent
    centres = g.positions(X, anchor="center")
    n = centres.shape[0]
    classes, codes = (np.array(["documents"]), np.zeros(n, dtype=np.intp)) \
        if labels is None else _label_codes(labels, n)
    names = _names(label_names, classes) if labels is not None else ["documents"]
    own_figure = ax is None
    lumped, kept = False, None
    if labels is not None:
        if levels is not None and colors is not None:
            raise ValueError("levels choose the coloured labels; give colors= or levels=, "
                             "not both")
        codes, shown, lumped = _lump_codes(classes, codes, levels, colors)
        if shown is not None:       # lumped or chosen: names of the shown levels
            by_class = dict(zip([str(c) for c in classes], names))
            kept = shown[:-1] if lumped else shown
            names = [by_class[v] for v in kept] + ([shown[-1]] if lumped else [])
            classes = np.array(shown, dtype=object)
    elif levels is not None:
        raise ValueError("levels choose the coloured labels: pass labels too")
    cols = _colors(len(classes), colors, lumped) if labels is not None else \
        np.array([[0.1] * 3])
    if background == "words":
        if g._vocabulary(feature_names) is None:
            raise ValueError("background='words' needs feature_names (the vocabulary)")
        ax = plot_word_grid(g, g._vocabulary(feature_names), ax=ax, n_words=2, step=1,
                            max_cells=max(extent), legend=False, title="",
                            cell_inches=max(0.35, 9.0 / max(extent)))
    else:
        ax = _axes(ax, (6.4, 5.6 * E1 / max(E1, E2) + 0.9))
        cls = np.array(kept if kept is not None else classes).astype(str)
        own = isinstance(grid, CountingGridRegressor) or (
            isinstance(grid, CountingGridClassifier) and labels is not None
            and (kept is not None or len(cls) == len(grid.classes_))
            and (np.isin(cls, np.asarray(grid.classes_).astype(str)).all() if kept is not None
                 else np.array_equal(cls, np.asarray(grid.classes_).astype(str))))
        if background == "labels" and own:
            _, gm, gnames, kind = _embedding(grid, None, None)
            if kind == "discrete":
                # the palette of the scatter (not Fig. 3's RGB), so that a document and
                # the region of its class share a colour
                if kept is not None:
                    gm, _, _ = lump_gamma(gm, gnames, kept)
                rgb, _ = label_embedding_rgb(gm, cols if colors is None else
                                             _colors(gm.shape[2], colors))
                ax.imshow(1.0 - 0.35 * (1.0 - rgb), extent=(0, E2, E1, 0),
                          interpolation="nearest")
            else:
                ax.imshow(gm, extent=(0, E2, E1, 0), interpolation="nearest",
                          cmap="coolwarm", alpha=0.35)
    x, y = jittered_positions(centres, extent, jitter, random_state)
    for c in range(len(classes)):
        m = codes == c
        ax.scatter(x[m], y[m], s=size, color=cols[c], marker=_MARKERS[c % len(_MARKERS)],
                   edgecolors="white", linewidths=0.3, label=names[c], alpha=0.85, zorder=3)
    _grid_frame(ax, extent)
    pad = 6
    if legend and labels is not None:
        pad = _legend(ax, None, own_figure, markerscale=1.5)
    if title is None:
        title = f"{n} documents at their window centres ({E1} x {E2} grid)"
    if title:
        ax.set_title(title, fontsize=11, pad=pad)
    return ax


# --------------------------------------------------------- log-likelihood
def _curves(estimator):
    """[(name, x, y)] of the log-likelihood curves an estimator recorded."""
    def one(est, name):
        ll = np.asarray(est.log_likelihood_, dtype=np.float64)
        # ZIPGTM and HistogramGMM record the start too (n_iter_ + 1 values)
        start = 0 if ll.shape[0] == int(getattr(est, "n_iter_", -1)) + 1 else 1
        return name, np.arange(start, start + ll.shape[0]), ll

    if type(estimator).__name__ == "RAP":
        raise TypeError("estimator is a RAP harmonium, trained by contrastive divergence: "
                        "it records no log-likelihood curve")
    if isinstance(estimator, GenerativeCountingGridClassifier):
        check_is_fitted(estimator, "grids_")
        return [one(g, f"class {c}") for g, c in zip(estimator.grids_, estimator.classes_)]
    if isinstance(estimator, (CountingGridClassifier, CountingGridRegressor)):
        check_is_fitted(estimator, "grid_")
        estimator = estimator.grid_
    if not hasattr(type(estimator), "_fitted_arrays") or \
            "log_likelihood_" not in type(estimator)._fitted_arrays:
        raise TypeError(f"estimator must be a countgrid estimator fitted by EM "
                        f"(CountingGrid, its classifiers, PLSA, ZIPGTM, HistogramGMM), got "
                        f"{type(estimator).__name__}")
    if not hasattr(estimator, "log_likelihood_"):
        raise not_fitted_error(f"This {type(estimator).__name__} instance is not fitted yet; "
                               "call 'fit' first.")
    return [one(estimator, type(estimator).__name__)]


def plot_log_likelihood(estimator, ax=None, title=None):
    """The log-likelihood of the training data over the EM iterations.

    Parameters
    ----------
    estimator : fitted CountingGrid, CountingGridClassifier, CountingGridRegressor, \
GenerativeCountingGridClassifier (one curve per class), PLSA, ZIPGTM or HistogramGMM
        Any countgrid estimator that records ``log_likelihood_``.  Iteration 0 is the
        start when the estimator records it (ZIPGTM, HistogramGMM).  A counting grid
        records the iterations of its target window only (not a ``window_schedule``).
    ax : matplotlib.axes.Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        One line per curve; its y data is ``log_likelihood_``.

    Raises
    ------
    TypeError
        For an estimator that records no curve (e.g. RAP, trained by contrastive
        divergence).

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> from countgrid.plotting import plot_log_likelihood
    >>> X = np.random.default_rng(0).poisson(1.0, size=(40, 12))
    >>> plsa = countgrid.PLSA(3, n_iter=10, tol=0, random_state=0).fit(X)
    >>> ax = plot_log_likelihood(plsa)
    >>> bool(np.array_equal(ax.lines[0].get_ydata(), plsa.log_likelihood_))
    True
    """
    _mpl()
    curves = _curves(estimator)
    own_figure = ax is None
    ax = _axes(ax, (6.4, 4.0))
    for name, x, y in curves:
        ax.plot(x, y, marker="o" if len(x) <= 40 else None, ms=3, lw=1.4, label=name)
    ax.set_xlabel("EM iteration")
    ax.set_ylabel("log-likelihood of the training data")
    ax.grid(True, color="0.9")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if len(curves) > 1:
        ax.legend(fontsize=9)
    if title is None:
        title = f"{type(estimator).__name__}: log-likelihood per EM iteration"
    if title:
        ax.set_title(title, fontsize=11)
    if own_figure:   # room for long tick labels (-70000) beside the axis label
        ax.figure.tight_layout()
    return ax


# -------------------------------------------------------------- top words
@validate_call_params({"n_words": [Interval(Integral, 1, None, closed="left")],
                       "ncols": [None, Interval(Integral, 1, None, closed="left")]})
def plot_top_words(plsa, feature_names, n_words=10, topics=None, ax=None, ncols=None,
                   title=None):
    """The top words of pLSA topics: one bar panel per topic, bars ``P(w | z)``.

    Parameters
    ----------
    plsa : PLSA
        A fitted pLSA (its ``components_`` are ``P(w | z)``).
    feature_names : sequence of str, length n_features
    n_words : int, default=10
        Bars per panel, most probable on top.
    topics : sequence of int, optional
        The topics to show (default: all).
    ax : sequence of matplotlib.axes.Axes, optional
        One axes per shown topic (default: a new figure with a grid of panels).
    ncols : int, optional
        Panels per row of a new figure (default: up to 5).
    title : str, optional
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
        Its panels are ``fig.axes[:n_topics]``; panel ``t`` has ``n_words`` bars whose
        widths are the top ``components_`` of that topic.

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> from countgrid.plotting import plot_top_words
    >>> X = np.random.default_rng(0).poisson(1.0, size=(40, 12))
    >>> plsa = countgrid.PLSA(3, n_iter=5, random_state=0).fit(X)
    >>> fig = plot_top_words(plsa, [f"w{i}" for i in range(12)], n_words=4)
    >>> len(fig.axes)
    3
    """
    _mpl()
    if not isinstance(plsa, PLSA):
        raise TypeError(f"plsa must be a fitted PLSA, got {type(plsa).__name__}")
    check_is_fitted(plsa, "components_")
    P = np.asarray(plsa.components_, dtype=np.float64)
    K, Z = P.shape
    names = np.asarray(feature_names).astype(str)
    if names.ndim != 1 or names.shape[0] != Z:
        raise ValueError(f"feature_names has {names.size} entries; the model has {Z} "
                         "features")
    if topics is None:
        topics = list(range(K))
    topics = _topic_indices(topics)
    bad = [t for t in topics if not 0 <= t < K]
    if bad or not topics:
        raise ValueError(f"topics must be indices in [0, {K}), got {bad or topics}")
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    k = min(n_words, Z)
    order = _top_words(P[topics], k)                       # (n_topics, k), ties by index
    if ax is None:
        nc = ncols or min(5, len(topics))
        nr = -(-len(topics) // nc)
        fig = _import_pyplot().figure(figsize=(2.6 * nc + 0.4, (0.22 * k + 0.9) * nr + 0.4),
                                      layout="constrained")
        axes = fig.subplots(nr, nc, squeeze=False).ravel()
        for a in axes[len(topics):]:
            a.remove()
        axes = axes[:len(topics)]
    else:
        from matplotlib.axes import Axes

        axes = np.ravel(np.asarray(ax, dtype=object))
        if len(axes) < len(topics) or not all(isinstance(a, Axes) for a in axes):
            raise ValueError(f"ax must hold one matplotlib Axes per shown topic "
                             f"({len(topics)}), got {len(axes)}")
        fig = axes[0].figure
    cols = _colors(min(len(topics), 10))
    for r, (a, t) in enumerate(zip(axes, topics)):
        vals = P[t, order[r]]
        a.barh(np.arange(k), vals, color=cols[r % len(cols)], height=0.75)
        a.set_yticks(np.arange(k))
        a.set_yticklabels(names[order[r]], fontsize=8)
        a.invert_yaxis()
        a.set_title(f"topic {t}", fontsize=10)
        a.tick_params(axis="x", labelsize=7)
        a.xaxis.set_major_locator(MaxNLocator(2))
        a.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.2g}"))
        a.set_xlabel("P(w | z)", fontsize=8)
        a.set_xlim(0, float(vals.max()) * 1.1 if vals.max() > 0 else 1.0)
    if title is None:
        title = f"pLSA: top {k} words of {len(topics)} topics"
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


def _topic_indices(topics):
    """``topics`` as a non-empty list of ints (a single int is one topic)."""
    items = np.ravel(np.asarray(topics, dtype=object)).tolist()
    for t in items:
        if not isinstance(t, (Integral, np.integer)) or isinstance(t, (bool, np.bool_)):
            raise TypeError(f"topics must be topic indices (ints), got {t!r}")
    if not items:
        raise ValueError("topics is empty: give at least one topic index (or None for all)")
    return [int(t) for t in items]


# ----------------------------------------------------------------- ZIP-GTM
@validate_call_params({"legend": ["boolean"], "show_latent": ["boolean"],
                       "size": [Interval(Real, 0, None, closed="neither")]})
def plot_zip_gtm_map(zipgtm, X, labels=None, ax=None, label_names=None, colors=None,
                     show_latent=True, size=12.0, legend=True, title=None):
    """The ZIP-GTM map: documents at their posterior-mean latent coordinates.

    Each document is drawn at ``zipgtm.transform(X) = sum_k theta_nk x_k``
    (docs/zip_gtm.md), coloured by label; the latent points ``x_k`` are drawn under
    them, their area proportional to the mixing weights ``mixing_``.

    Parameters
    ----------
    zipgtm : ZIPGTM
        A fitted ZIP-GTM.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    labels : array-like of shape (n_samples,), optional
    ax : matplotlib.axes.Axes, optional
    label_names : sequence of str, optional
        Legend names for the sorted distinct labels.
    colors : sequence of matplotlib colours, optional
    show_latent : bool, default=True
    size : float, default=12
        Marker area of a document (points^2).
    legend : bool, default=True
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        With ``show_latent``, ``ax.collections[0]`` holds the latent points; then one
        collection per label (sorted), whose offsets are ``transform(X)`` of its
        documents.

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> from countgrid.plotting import plot_zip_gtm_map
    >>> X = np.random.default_rng(0).poisson(0.5, size=(60, 30))
    >>> gtm = countgrid.ZIPGTM(grid_shape=(5, 5), n_basis=9, n_iter=5, random_state=0).fit(X)
    >>> ax = plot_zip_gtm_map(gtm, X, labels=np.arange(60) % 2)
    >>> len(ax.collections)
    3
    """
    return _zip_gtm_map(zipgtm, X, labels, ax, label_names, colors, show_latent, size, legend,
                        title)


def _zip_gtm_map(zipgtm, X, labels=None, ax=None, label_names=None, colors=None,
                 show_latent=True, size=12.0, legend=True, title=None, labels_name="labels",
                 **scatter_kw):
    """The drawing of :func:`plot_zip_gtm_map`, also ``ZIPGTM.plot``'s (registered with
    countgrid.gtm._display): ``labels_name`` is the argument that gave the labels, for the
    messages; ``scatter_kw`` go to the documents' ``ax.scatter`` calls."""
    _mpl()
    if not isinstance(zipgtm, ZIPGTM):
        raise TypeError(f"zipgtm must be a fitted ZIPGTM, got {type(zipgtm).__name__}")
    check_is_fitted(zipgtm, "latent_")
    Zc = zipgtm.transform(X)
    n = Zc.shape[0]
    if labels is None:
        classes, codes = np.array(["documents"]), np.zeros(n, dtype=np.intp)
        names, cols = ["documents"], np.array([[0.1, 0.3, 0.6]])
    else:
        classes, codes = _label_codes(labels, n, labels_name)
        names, cols = _names(label_names, classes), _colors(len(classes), colors)
    own = ax is None
    ax = _axes(ax, (6.4, 6.0))
    if show_latent:
        lat = np.asarray(zipgtm.latent_)
        w = np.asarray(zipgtm.mixing_, dtype=np.float64)
        ax.scatter(lat[:, 0], lat[:, 1], s=4.0 + 200.0 * w / max(w.max(), 1e-300),
                   color="0.75", marker="s", linewidths=0, zorder=1,
                   label="latent points (area = mixing weight)")
    for c in range(len(classes)):
        m = codes == c
        kw = {"s": size, "color": cols[c], "alpha": 0.75, "zorder": 3, "edgecolors": "white",
              "marker": _MARKERS[c % len(_MARKERS)], "linewidths": 0.3, "label": names[c]}
        if "c" in scatter_kw:       # the caller's colours replace the label's
            del kw["color"]
        ax.scatter(Zc[m, 0], Zc[m, 1], **{**kw, **scatter_kw})
    ax.set_xlabel("latent coordinate 1")
    ax.set_ylabel("latent coordinate 2")
    ax.set_aspect("equal", adjustable="datalim")
    if legend:      # columns right of the map, as many as the labels need
        legend_outside(ax, None, own, fontsize=8, markerscale=1.3)
    if title is None:
        title = (f"ZIP-GTM map: {n} documents, {zipgtm.latent_.shape[0]} latent points")
    if title:
        ax.set_title(title, fontsize=11)
    return ax
