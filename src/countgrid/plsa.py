"""Deprecated 0.1.0 module path, kept so that code written for 0.1.0 works: importing it
warns (FutureWarning) and it goes in 0.4.0; its names live in :mod:`countgrid.topics`."""
from countgrid._utils.deprecation import warn_moved_module
from countgrid.topics._plsa import PLSA, select_n_components_bic

__all__ = ["PLSA", "select_n_components_bic"]

warn_moved_module(__name__, "countgrid.topics", __all__)
