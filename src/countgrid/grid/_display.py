"""The plug-in point through which a layer above the models draws a counting grid.

``CountingGrid.to_html`` and ``CountingGrid._repr_html_`` call the functions registered
here; countgrid.maps registers its own when it is imported (``import countgrid`` imports
it), so that the model layer imports nothing from the map layer (docs/architecture.md).
"""

_RENDERER = {}


def register_map(to_html, preview):
    """Install the map layer's drawing functions (the last registration wins).

    Parameters
    ----------
    to_html : callable
        ``to_html(grid, path, X, **kwargs)``: writes the interactive map to ``path`` and
        returns the path, or returns the page as a str when ``path`` is None.
    preview : callable
        ``preview(grid)``: the static HTML preview of a fitted grid for notebooks, or
        None.
    """
    _RENDERER.update(to_html=to_html, preview=preview)


def to_html(grid, path, X, **kwargs):
    """The registered ``to_html`` of ``grid``; RuntimeError when no map layer is loaded."""
    if "to_html" not in _RENDERER:
        raise RuntimeError("no map layer is registered: import countgrid.maps")
    return _RENDERER["to_html"](grid, path, X, **kwargs)


def preview(grid):
    """The registered preview of ``grid``; None (the plain repr) without a map layer."""
    if "preview" not in _RENDERER:
        return None
    return _RENDERER["preview"](grid)
