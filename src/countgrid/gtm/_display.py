"""The plug-in point through which a layer above the models draws a ZIP-GTM map.

``ZIPGTM.plot`` calls the function registered here; countgrid.plotting registers its own
when it is imported (``import countgrid`` imports it), so that the model imports nothing
from the plotting layer and the map is drawn in one place (docs/architecture.md; the
counting grid's ``to_html`` goes through countgrid.grid._display the same way).
"""

_DRAWER = {}


def register_map(draw):
    """Install the plotting layer's map of a fitted ZIPGTM (the last registration wins).

    Parameters
    ----------
    draw : callable
        ``draw(zipgtm, X, labels=None, ax=None, label_names=None, *, show_latent, legend,
        labels_name, **scatter_kw)``, with the parameters of
        :func:`countgrid.plotting.plot_zip_gtm_map`; returns the matplotlib Axes.
    """
    _DRAWER["map"] = draw


def draw_map(zipgtm, X, **kwargs):
    """The registered map of ``zipgtm``; RuntimeError when no plotting layer is loaded."""
    if "map" not in _DRAWER:
        raise RuntimeError("no plotting layer is registered: import countgrid.plotting")
    return _DRAWER["map"](zipgtm, X, **kwargs)
