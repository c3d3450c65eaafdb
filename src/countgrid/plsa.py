"""The 0.1.0 module path of :class:`countgrid.PLSA`, kept so that code written for it
works; the code lives in :mod:`countgrid.topics`."""
from countgrid.topics._plsa import PLSA, select_n_components_bic

__all__ = ["PLSA", "select_n_components_bic"]
