"""Deprecated 0.1.0 module path, kept so that code written for 0.1.0 works: importing it
warns (FutureWarning) and it goes in 0.4.0; its names live in :mod:`countgrid.mixture`."""
from countgrid._utils.deprecation import warn_moved_module
from countgrid.mixture._histogram_gmm import HistogramGMM

__all__ = ["HistogramGMM"]

warn_moved_module(__name__, "countgrid.mixture", __all__)
