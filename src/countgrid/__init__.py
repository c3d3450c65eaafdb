"""countgrid: latent models of count data with C/OpenMP kernels.

Counting grids (:class:`CountingGrid`), label embedding and the classifiers
and regressors read out from a grid; pLSA (:class:`PLSA`); information-theoretic
kernels (:mod:`countgrid.kernels`); the Rate Adapting Poisson harmonium
(:class:`RAP`) with retrieval tools (:mod:`countgrid.metrics`, :func:`tfidf`,
:class:`LSI`); EM for Gaussian mixtures on weighted histograms
(:class:`HistogramGMM`); the zero-inflated Poisson GTM (:class:`ZIPGTM`) and term
selection (:mod:`countgrid.text`); generative embeddings on pLSA and counting grids
(:mod:`countgrid.embeddings`) and the :class:`ITKernelClassifier` that classifies them
with IT kernels.
"""
from countgrid._version import __version__
from countgrid._config import get_include, get_library_dir, get_link_args, show_config
from countgrid.counting_grid import CountingGrid
from countgrid.label_embedding import embed_labels
from countgrid.classifiers import (CountingGridClassifier, CountingGridRegressor,
                                   GenerativeCountingGridClassifier)
from countgrid.plsa import PLSA, select_n_components_bic
from countgrid.histogram_gmm import HistogramGMM
from countgrid.zip_gtm import ZIPGTM
from countgrid import text
from countgrid.io import load
from countgrid import kernels
from countgrid.rap import RAP
from countgrid.retrieval import LSI, tfidf
from countgrid import metrics
from countgrid.exceptions import NotFittedError
from countgrid import embeddings
from countgrid.embeddings import (MixtureOfTopics, FisherScore, TOPEmbedding, LLREmbedding,
                                  FreeEnergyScoreSpace, PosteriorDivergence,
                                  CountingGridPosterior, CountingGridFESS)
from countgrid.itk_classifier import ITKernelClassifier

__all__ = [
    "__version__",
    "get_include",
    "get_library_dir",
    "get_link_args",
    "show_config",
    "CountingGrid",
    "embed_labels",
    "CountingGridClassifier",
    "CountingGridRegressor",
    "GenerativeCountingGridClassifier",
    "PLSA",
    "select_n_components_bic",
    "HistogramGMM",
    "ZIPGTM",
    "text",
    "load",
    "kernels",
    "RAP",
    "LSI",
    "tfidf",
    "metrics",
    "NotFittedError",
    "embeddings",
    "MixtureOfTopics",
    "FisherScore",
    "TOPEmbedding",
    "LLREmbedding",
    "FreeEnergyScoreSpace",
    "PosteriorDivergence",
    "CountingGridPosterior",
    "CountingGridFESS",
    "ITKernelClassifier",
]
