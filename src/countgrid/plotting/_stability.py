"""The picture of :func:`countgrid.grid.stability`: how reproducible each cell of the map is
across restarts (docs/counting_grids.md, "Stability across restarts")."""
import numpy as np

from countgrid.grid._stability import GridStability
from countgrid.plotting._pictures import _axes, _grid_frame, _mpl


def plot_cell_stability(result, ax=None, cmap="viridis"):
    """Each cell of the reference grid coloured by its stability across restarts.

    A cell's stability is its mean Bhattacharyya coefficient with the cells of the other
    restarts aligned onto it (1: every restart has the same words there); the title gives
    the mean similarity against chance and the documents' placement agreement.

    Parameters
    ----------
    result : GridStability
        The result of :func:`countgrid.grid.stability` for a 2-D grid.
    ax : matplotlib.axes.Axes, optional
    cmap : str or Colormap, default="viridis"

    Returns
    -------
    matplotlib.axes.Axes
        One image, its array the cells' stability.

    Raises
    ------
    TypeError
        If ``result`` is not a ``GridStability``.
    ValueError
        If the grid is not 2-D.

    Examples
    --------
    >>> import numpy as np
    >>> from countgrid.grid import stability
    >>> from countgrid.plotting import plot_cell_stability
    >>> X = np.random.default_rng(0).poisson(1.0, size=(60, 15))
    >>> s = stability(X, 2, extent=(6, 6), window=(2, 2), n_iter=5)
    >>> ax = plot_cell_stability(s)
    >>> ax.images[0].get_array().shape
    (6, 6)
    """
    if not isinstance(result, GridStability):
        raise TypeError(f"result must be the GridStability of countgrid.grid.stability, got "
                        f"{type(result).__name__}")
    values = np.asarray(result["cell_stability"], dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"plot_cell_stability draws 2-D grids; this grid has "
                         f"{values.ndim} axes")
    _mpl()
    own_figure = ax is None
    ax = _axes(ax, (6.0, 5.2))
    image = ax.imshow(values, cmap=cmap, vmin=min(float(values.min()), 1.0), vmax=1.0,
                      extent=(0, values.shape[1], values.shape[0], 0), interpolation="nearest")
    _grid_frame(ax, values.shape)
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04,
                       label="cell stability (Bhattacharyya)")
    n = len(result["seeds"])
    ax.set_title(f"{n} restarts: similarity {result['mean_similarity']:.3f} "
                 f"({result['mean_adjusted_similarity']:.3f} over chance)\ndocuments "
                 f"placed alike {np.mean(result['placement_agreement']):.0%}", fontsize=9.5)
    if own_figure:
        ax.figure.tight_layout()
    return ax
