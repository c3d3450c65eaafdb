"""What a notebook shows for a fitted grid (``CountingGrid._repr_html_``) and how the map
is embedded in a notebook's output (:func:`embed`): static HTML for the first, the map's
own page in a sandboxed ``srcdoc`` iframe for the second, so that neither the page's
styles nor its script can reach the notebook (docs/map.md, "In a notebook")."""
import html

import numpy as np

from countgrid.maps._data import map_data
from countgrid.maps._html import render_html

__all__ = ["MapEmbed", "embed", "preview_html"]

#: Cells along each axis of the preview table (the grid is sampled evenly).
PREVIEW_CELLS = 12


def preview_html(grid, feature_names=None, n_words=2, n_cells=PREVIEW_CELLS):
    """A static HTML preview of a fitted 2-D grid: its size and a table of up to
    ``n_cells x n_cells`` evenly spaced cells with their ``n_words`` most probable words.

    No script and no style outside the table's own ``style`` attributes; every word is
    escaped.

    Parameters
    ----------
    grid : CountingGrid
        Fitted.
    feature_names : sequence of str, optional
        The words (default: ``feature_names_in_`` if any, else ``w0, w1, ...``).
    n_words : int, default=2
    n_cells : int, default=12

    Returns
    -------
    str
    """
    pi = np.asarray(grid.pi_)
    extent, Z = pi.shape[:-1], pi.shape[-1]
    words = feature_names if feature_names is not None else getattr(
        grid, "feature_names_in_", None)
    words = np.asarray([f"w{j}" for j in range(Z)] if words is None else words).astype(str)
    head = (f"<b>{type(grid).__name__}</b> {'x'.join(map(str, extent))} grid, window "
            f"{'x'.join(map(str, grid.window))}, {Z} words, {grid.n_iter_} iterations "
            f"({'converged' if grid.converged_ else 'not converged'})")
    if len(extent) != 2:
        return f"<div>{head}</div>"
    rows = np.unique(np.linspace(0, extent[0] - 1, min(n_cells, extent[0])).round().astype(int))
    cols = np.unique(np.linspace(0, extent[1] - 1, min(n_cells, extent[1])).round().astype(int))
    cells = []
    for r in rows:
        tds = []
        for c in cols:
            top = np.argsort(-pi[r, c], kind="stable")[:n_words]
            text = "<br>".join(html.escape(words[j]) for j in top)
            tds.append(f'<td style="border:1px solid #ddd;padding:2px 4px;font-size:10px;'
                       f'line-height:1.2;text-align:center;vertical-align:middle">{text}</td>')
        cells.append("<tr>" + "".join(tds) + "</tr>")
    shown = "" if len(rows) == extent[0] and len(cols) == extent[1] else \
        f" (every {max(1, extent[0] // len(rows))}th cell shown)"
    return (f'<div><div style="margin-bottom:4px">{head}{shown}; '
            "<code>countgrid.maps.embed(grid, X)</code> shows the interactive map</div>"
            '<table style="border-collapse:collapse;font-family:sans-serif">'
            + "".join(cells) + "</table></div>")


class MapEmbed:
    """The interactive map as a notebook output: a sandboxed ``srcdoc`` iframe holding the
    page of :func:`countgrid.maps.write_html` (returned by :func:`embed`).

    Parameters
    ----------
    page : str
        The map's HTML page (what ``write_html`` would write).
    height : int
        The iframe's height in pixels.

    Attributes
    ----------
    page : str
        The page given.
    height : int
        The height given, as an int.
    """

    def __init__(self, page, height):
        self.page, self.height = page, int(height)

    def _repr_html_(self):
        return self.html

    @property
    def html(self):
        """The ``<iframe>`` element: ``sandbox="allow-scripts allow-downloads"`` (the map's
        script runs in its own origin: no access to the notebook, its cookies or its
        kernel) with the page in ``srcdoc``."""
        return (f'<iframe sandbox="allow-scripts allow-downloads" '
                f'style="width:100%;height:{self.height}px;border:1px solid #ddd" '
                f'srcdoc="{html.escape(self.page, quote=True)}"></iframe>')


def embed(grid, X=None, *, height=640, **kwargs):
    """The interactive map of a fitted 2-D grid for a notebook's output.

    Displays in Jupyter, JupyterLab, VS Code and Colab (its ``_repr_html_``) as an iframe
    whose page is the offline map itself, isolated from the notebook: its styles and its
    script cannot restyle or reach the host page, and the map keeps its size.

    Parameters
    ----------
    grid : CountingGrid or CountingGridClassifier
        Fitted, 2-D.
    X : {array-like, sparse matrix}, optional
        The documents listed when a cell is clicked.
    height : int, default=640
        The height of the map in pixels.
    **kwargs
        The keyword arguments of :func:`countgrid.maps.write_html` (``corpus``,
        ``feature_names``, ``titles``, ``metadata``, ``color_by``, ``title``, ...).

    Returns
    -------
    MapEmbed
    """
    if isinstance(height, bool) or not isinstance(height, (int, np.integer)) or height < 100:
        raise ValueError(f"height must be an int of at least 100 pixels, got {height!r}")
    data_format = kwargs.pop("data_format", "auto")
    return MapEmbed(render_html(map_data(grid, X, **kwargs), data_format), height)
