"""Deprecated 0.1.0 module path, kept so that code written for 0.1.0 works: importing it
warns (FutureWarning) and it goes in 0.4.0; its names live in :mod:`countgrid.kernels`."""
from countgrid._utils.deprecation import warn_moved_module
from countgrid.kernels._classifier import ITKernelClassifier

__all__ = ["ITKernelClassifier"]

warn_moved_module(__name__, "countgrid.kernels", __all__)
