"""The colours of categorical levels, shared by the map (countgrid.maps) and the pictures
(countgrid.plotting), and the rule that chooses which levels get one.

:data:`PALETTE` is a Glasbey-style list (Glasbey et al. 2007, made by
``tools/make_palette.py``): it starts with the six Okabe & Ito colour-blind-safe colours
that stay visible as pale tints, and each further colour is the one farthest in OKLab from
all before it, so the first ``n`` colours are well spread for every ``n`` and consecutive
levels differ strongly (smallest OKLab distance 0.156 among the first 10, 0.097 among the
first 42, 0.089 among 50).  Lightness 0.45-0.80 and chroma 0.08-0.22 (OKLab): no greys
(:data:`OTHER_COLOR`, grey, is the level "other"), nothing too dark for dark text on its
tint or too light to see.

A categorical column gets one colour per level up to :data:`MAX_LEVELS` levels; with more,
the ``MAX_LEVELS - 1`` most frequent keep theirs and the rest are lumped into "other"; or
the caller names the levels to colour (:func:`choose_levels`).
"""
import difflib
import re

import numpy as np

__all__ = ["PALETTE", "OTHER_COLOR", "OTHER", "MAX_LEVELS", "MIX_LEVELS", "level_colors",
           "choose_levels", "cell_colors"]

#: The categorical palette, in order of use (64 colours, "#RRGGBB").
PALETTE = (
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#900084", "#48E058",
    "#685400", "#9054EC", "#A80014", "#4834C8", "#D41C74", "#885C84", "#FC8CFC", "#90BC8C",
    "#908000", "#007800", "#FCA09C", "#A88CFC", "#3C88FC", "#30B400", "#046860", "#CC48C8",
    "#FC5068", "#C8B0E8", "#C0C800", "#00D8D4", "#8084BC", "#9C5838", "#504C8C", "#C48C6C",
    "#0098B4", "#FC5CC0", "#8028C0", "#A4A400", "#2860EC", "#D81820", "#883458", "#FC7840",
    "#547C50", "#6C60BC", "#C05C6C", "#A040A4", "#00B8AC", "#389408", "#D86CF8", "#00C87C",
    "#A468C4", "#D8B880", "#809C68", "#0C8088", "#B00058", "#0050B0", "#F888C0", "#883C08",
    "#84C000", "#9C9CD4", "#C08800", "#DC509C", "#045C84", "#8078E8", "#783C94", "#AC7444",
)
#: The colour of the level "other" (the lumped rest): grey, which no level has.
OTHER_COLOR = "#969696"
#: The name of the lumped rest.
OTHER = "other"
#: Levels that get a colour of their own when the caller chooses none: with more, the
#: MAX_LEVELS - 1 most frequent and "other".
MAX_LEVELS = 50
#: Up to this many levels a cell's colour mixes the level colours by its distribution (the
#: RGB maps of the counting-grid papers); with more, mixtures are muddy greys, and the cell
#: takes the colour of its dominant level (as the map does).
MIX_LEVELS = 3


def _rgb(h):
    return tuple(int(h[i:i + 2], 16) for i in (1, 3, 5))


def level_colors(n, lumped=False):
    """The colours of ``n`` levels as an ``(n, 3)`` uint8 array of RGB: the first ``n``
    of :data:`PALETTE`, the last one :data:`OTHER_COLOR` when ``lumped`` (the last level is
    "other").

    Parameters
    ----------
    n : int
        At most ``len(PALETTE)`` coloured levels (plus "other").
    lumped : bool, default=False

    Returns
    -------
    ndarray of shape (n, 3), uint8
    """
    k = n - 1 if lumped else n
    if k > len(PALETTE):
        raise ValueError(f"{k} levels: at most {len(PALETTE)} get a colour of their own "
                         "(choose fewer levels; the rest are shown as 'other')")
    out = [_rgb(c) for c in PALETTE[:k]] + ([_rgb(OTHER_COLOR)] if lumped else [])
    return np.array(out, dtype=np.uint8).reshape(n, 3)


def natural_key(text):
    """Sort key of a level name that orders the numbers in it by value: "3.5.0b1" before
    "3.10.0a1", "group 2" before "group 10" (text parts compare as text)."""
    parts = re.split(r"(\d+)", str(text))
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts))


def choose_levels(names, counts, levels=None, max_levels=MAX_LEVELS, what="levels"):
    """Which levels get a colour of their own, in the order shown.

    Parameters
    ----------
    names : sequence of str
        The distinct levels, in their natural (sorted) order.
    counts : sequence of int
        How often each occurs (documents, or mass).
    levels : sequence of str, optional
        The levels to colour, in this order; every other level is "other".  Default: all
        of them when there are at most ``max_levels``, else the ``max_levels - 1`` most
        frequent (ties by order) in their natural order, and "other".
    max_levels : int, default=MAX_LEVELS
    what : str
        Names the argument in messages.

    Returns
    -------
    keep : list of int
        Indices into ``names`` of the coloured levels, in the order shown: as given in
        ``levels``, else in natural order (numbers in the names by value,
        :func:`natural_key`).
    lumped : bool
        Whether some level is left for "other".

    Raises
    ------
    ValueError
        For a chosen level that is not one of ``names`` (with close matches), a level
        chosen twice, no level, or more than ``len(PALETTE)`` levels.
    """
    names = [str(v) for v in names]
    counts = np.asarray(counts)
    if levels is None:
        natural = lambda k: (natural_key(names[k]), k)  # noqa: E731
        if len(names) <= max_levels:
            return sorted(range(len(names)), key=natural), False
        order = sorted(range(len(names)), key=lambda k: (-counts[k], k))
        return sorted(order[:max_levels - 1], key=natural), True
    if isinstance(levels, (str, bytes)) or not hasattr(levels, "__iter__"):
        raise TypeError(f"{what} must be a sequence of level names, got "
                        f"{type(levels).__name__}")
    wanted = [str(v) for v in levels]
    if not wanted:
        raise ValueError(f"{what} is empty: name at least one level to colour")
    index = {v: k for k, v in enumerate(names)}
    keep = []
    for v in wanted:
        if v not in index:
            close = difflib.get_close_matches(v, names, n=3)
            hint = f"; close matches: {', '.join(map(repr, close))}" if close else ""
            raise ValueError(f"{what}: {v!r} is not a level of the column{hint}")
        if index[v] in keep:
            raise ValueError(f"{what}: {v!r} is given twice")
        keep.append(index[v])
    if len(keep) > len(PALETTE):
        raise ValueError(f"{what} names {len(keep)} levels: at most {len(PALETTE)} get a "
                         "colour of their own")
    return keep, len(keep) < len(names)


def cell_colors(P, colors, floor=0.25, lumped=False):
    """The colour of cells with level distributions ``P`` (..., C), in [0, 1] RGB.

    Up to :data:`MIX_LEVELS` levels, the mixture ``P @ colors``; with more, the colour of
    the dominant level mixed with white, the more it dominates the stronger:
    ``1 - w (1 - colors[argmax P])`` with ``w = floor + (1 - floor) s`` and
    ``s = (max P - 1/C) / (1 - 1/C)`` clipped to [0, 1] (the map's rule; a cell of one
    level shows its full colour, a cell of evenly mixed levels a pale tint).  With
    ``lumped`` the last level is "other": cells it dominates keep the pale tint ``floor``.

    Parameters
    ----------
    P : ndarray of shape (..., C)
        Non-negative; normalised here along the last axis.
    colors : ndarray of shape (C, 3)
        Level colours in [0, 1].
    floor : float, default=0.25
    lumped : bool, default=False

    Returns
    -------
    ndarray of shape (..., 3)
    """
    P = np.asarray(P, dtype=np.float64)
    P = P / np.maximum(P.sum(axis=-1, keepdims=True), np.finfo(np.float64).tiny)
    colors = np.asarray(colors, dtype=np.float64)
    C = P.shape[-1]
    if C <= MIX_LEVELS:
        return P @ colors
    best = np.argmax(P, axis=-1)
    s = np.clip((np.max(P, axis=-1) - 1.0 / C) / (1.0 - 1.0 / C), 0.0, 1.0)
    w = floor + (1.0 - floor) * s
    if lumped:
        w = np.where(best == C - 1, floor, w)
    w = w[..., None]
    return 1.0 - w * (1.0 - colors[best])
