"""The 0.1.0 module path of :class:`countgrid.ITKernelClassifier`, kept so that code written for it
works; the code lives in :mod:`countgrid.kernels`."""
from countgrid.kernels._classifier import ITKernelClassifier

__all__ = ["ITKernelClassifier"]
