"""countgrid: latent models of count data with C/OpenMP kernels.

One subpackage per model family (docs/architecture.md):

* :mod:`countgrid.grid`: counting grids (:class:`CountingGrid`), label embedding
  (:func:`embed_labels`), the classifiers and the regressor read out from a grid, the
  one-grid-per-class classifier and the grid embeddings;
* :mod:`countgrid.topics`: pLSA (:class:`PLSA`) and its generative embeddings;
* :mod:`countgrid.kernels`: information-theoretic kernels and :class:`ITKernelClassifier`;
* :mod:`countgrid.rap`: the Rate Adapting Poisson harmonium (:class:`RAP`);
* :mod:`countgrid.gtm`: the zero-inflated Poisson GTM (:class:`ZIPGTM`);
* :mod:`countgrid.mixture`: Gaussian mixtures on weighted histograms (:class:`HistogramGMM`).

Around them: :mod:`countgrid.embeddings` (every generative embedding),
:mod:`countgrid.metrics`, :func:`tfidf` and :class:`LSI` (retrieval),
:mod:`countgrid.text`, :mod:`countgrid.datasets`, :mod:`countgrid.plotting`, :func:`load`
(model files), :func:`show_config`, and the C/Cython API (:func:`get_include`,
``countgrid.cython_api``).
"""
from countgrid._version import __version__
from countgrid._config import get_include, get_library_dir, get_link_args, show_config
from countgrid.exceptions import ConvergenceWarning, NotFittedError
from countgrid.io import load
from countgrid.grid import (CountingGrid, CountingGridClassifier, CountingGridFESS,
                            CountingGridPosterior, CountingGridRegressor,
                            GenerativeCountingGridClassifier, LayeredCountingGrid,
                            TimeSlicedCountingGrid, embed_labels)
from countgrid.topics import (PLSA, FisherScore, FreeEnergyScoreSpace, LLREmbedding,
                              MixtureOfTopics, PosteriorDivergence, TOPEmbedding,
                              select_n_components_bic)
from countgrid.kernels import ITKernelClassifier
from countgrid.rap import RAP
from countgrid.gtm import ZIPGTM
from countgrid.mixture import HistogramGMM
from countgrid.retrieval import LSI, tfidf
from countgrid import embeddings, kernels, metrics, text
from countgrid import maps  # noqa: F401 - registers what CountingGrid.to_html draws with
from countgrid.maps import widget
from countgrid import plotting  # noqa: F401 - registers what ZIPGTM.plot draws with

__all__ = [
    "__version__",
    "get_include",
    "get_library_dir",
    "get_link_args",
    "show_config",
    "widget",
    "CountingGrid",
    "LayeredCountingGrid",
    "TimeSlicedCountingGrid",
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
    "ConvergenceWarning",
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
