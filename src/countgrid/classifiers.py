"""The 0.1.0 module path of the counting-grid classifiers and regressor, kept so that code written for it
works; the code lives in :mod:`countgrid.grid`."""
from countgrid.grid._classifiers import (CountingGridClassifier,
                                         CountingGridRegressor,
                                         GenerativeCountingGridClassifier)

__all__ = ["CountingGridClassifier", "CountingGridRegressor",
           "GenerativeCountingGridClassifier"]
