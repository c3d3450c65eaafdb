"""The plug-in point through which a layer above the models draws a counting grid.

``CountingGrid.to_html``, ``CountingGrid.widget`` and the notebook display of a grid call the
functions registered
here; countgrid.maps registers its own when it is imported (``import countgrid`` imports
it), so that the model layer imports nothing from the map layer (docs/architecture.md).
"""
import sys

_RENDERER = {}


def register_map(to_html, preview, widget=None):
    """Install the map layer's drawing functions (the last registration wins).

    Parameters
    ----------
    to_html : callable
        ``to_html(grid, path, X, **kwargs)``: writes the interactive map to ``path`` and
        returns the path, or returns the page as a str when ``path`` is None.
    preview : callable
        ``preview(grid)``: the static HTML preview of a fitted grid for notebooks, or
        None.
    widget : callable, optional
        ``widget(grid, X, **kwargs)``: the map as a notebook widget.
    """
    _RENDERER.update(to_html=to_html, preview=preview, widget=widget)


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


def widget(grid, X, **kwargs):
    """The registered ``widget`` of ``grid``; RuntimeError when no map layer is loaded."""
    if _RENDERER.get("widget") is None:
        raise RuntimeError("no map layer with a widget is registered: import countgrid.maps")
    return _RENDERER["widget"](grid, X, **kwargs)


def widget_bundle(grid):
    """The widget's mime bundle of a fitted 2-D ``grid`` when a Jupyter kernel runs and
    the widget can be made (anywidget installed), else None: the display falls back to
    the static preview (``_repr_html_``)."""
    if _RENDERER.get("widget") is None or not hasattr(grid, "pi_") or \
            "ipykernel" not in sys.modules:
        return None
    try:
        from IPython import get_ipython
        shell = get_ipython()
        if shell is None or getattr(shell, "kernel", None) is None:
            return None
        w = _RENDERER["widget"](grid, None)
    except (ImportError, TypeError, ValueError):
        # no anywidget, no IPython, or a grid the map cannot show (not 2-D): the preview
        return None
    bundle = w._repr_mimebundle_()
    bundle = dict(bundle[0] if isinstance(bundle, tuple) else bundle)
    bundle["text/plain"] = repr(grid)
    return bundle
