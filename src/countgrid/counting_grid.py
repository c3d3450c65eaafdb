"""Deprecated 0.1.0 module path, kept so that code written for 0.1.0 works: importing it
warns (FutureWarning) and it goes in 0.4.0; its names live in :mod:`countgrid.grid`."""
from countgrid._utils.deprecation import warn_moved_module
from countgrid.grid._counting_grid import CountingGrid

__all__ = ["CountingGrid"]

warn_moved_module(__name__, "countgrid.grid", __all__)
