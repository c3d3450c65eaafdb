"""The 0.1.0 module path of :class:`countgrid.HistogramGMM`, kept so that code written for it
works; the code lives in :mod:`countgrid.mixture`."""
from countgrid.mixture._histogram_gmm import HistogramGMM

__all__ = ["HistogramGMM"]
