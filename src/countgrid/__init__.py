"""countgrid: latent models of count data with C/OpenMP kernels.

Counting grids (:class:`CountingGrid`), label embedding and the classifiers
and regressors read out from a grid; the Rate Adapting Poisson harmonium
(:class:`RAP`).
"""
from countgrid._version import __version__
from countgrid._config import get_include, show_config
from countgrid.counting_grid import CountingGrid
from countgrid.label_embedding import embed_labels
from countgrid.classifiers import (CountingGridClassifier, CountingGridRegressor,
                                   GenerativeCountingGridClassifier)
from countgrid.io import load
from countgrid.rap import RAP
from countgrid.retrieval import LSI, tfidf
from countgrid import metrics
from countgrid.exceptions import NotFittedError

__all__ = [
    "__version__",
    "get_include",
    "show_config",
    "CountingGrid",
    "embed_labels",
    "CountingGridClassifier",
    "CountingGridRegressor",
    "GenerativeCountingGridClassifier",
    "load",
    "RAP",
    "LSI",
    "tfidf",
    "metrics",
    "NotFittedError",
]
