"""The default coarse-to-fine window schedule of counting grids (``window_schedule="auto"``).

The authors always learn a grid coarse-to-fine: their browser driver script runs a 10x10
window for 15 iterations, then 6x6 for 15, then the target window (5x5 on 32x32, 4x4 on
40x40; docs/counting_grids.md, "Code conventions").  Large windows first lay the
themes out smoothly over the whole torus; the target window then refines them.  The rule
below gives those windows for the authors' grids and scales them to other grids.
"""
import math

__all__ = ["STAGE_ITER", "auto_window_schedule"]

#: Iterations of each coarse stage (the authors' driver script).
STAGE_ITER = 15


def auto_window_schedule(extent, window, n_iter=100, stage_iter=STAGE_ITER):
    """Coarse stages ``[(window, iterations), ...]`` run before the target ``window``.

    Along each dimension the first stage's window is ``2.5 W`` capped at ``E / 3`` (never
    below ``W``), the second the geometric mean of the first and ``W`` (rounded): on 40x40
    with a 4x4 window, 10x10 then 6x6; on 32x32 with 5x5, 10x10 then 7x7.  Stages equal to
    the target window are dropped.

    Parameters
    ----------
    extent, window : tuple of int
        Validated grid and target window (``countgrid.grid._torus.check_grid``).
    n_iter : int or None, default=100
        Iterations allowed for the target window: each stage runs
        ``min(stage_iter, n_iter // 4)`` iterations, so a short fit stays short (no
        stage when ``n_iter < 4``); None runs ``stage_iter`` whatever the fit's length.
    stage_iter : int, default=15
        Iterations of a stage when ``n_iter`` allows.

    Returns
    -------
    list of (tuple of int, int)
        The stages, coarse first; empty when the window cannot grow.
    """
    iters = int(stage_iter) if n_iter is None else min(int(stage_iter), int(n_iter) // 4)
    if iters < 1:
        return []
    first = tuple(max(w, min(int(2.5 * w), e // 3)) for w, e in zip(window, extent))
    second = tuple(max(w, min(f, int(round(math.sqrt(f * w))))) for f, w in zip(first, window))
    stages = []
    for stage in (first, second):
        if stage != tuple(window) and (not stages or stages[-1][0] != stage):
            stages.append((stage, iters))
    return stages
