"""The 0.1.0 module path of :class:`countgrid.CountingGrid`, kept so that code written for it
works; the code lives in :mod:`countgrid.grid`."""
from countgrid.grid._counting_grid import CountingGrid

__all__ = ["CountingGrid"]
