"""Generative embeddings: documents as non-negative vectors from generative models, for the
information-theoretic kernels of :mod:`countgrid.kernels` (Bicego et al., Neurocomputing
2013).

On pLSA (:mod:`countgrid.topics`): :class:`MixtureOfTopics`, :class:`FisherScore`,
:class:`TOPEmbedding`, :class:`LLREmbedding`, :class:`FreeEnergyScoreSpace`,
:class:`PosteriorDivergence`, and the one-model functions :func:`fisher_score`,
:func:`fess_terms`, :func:`posterior_divergence`.  On counting grids
(:mod:`countgrid.grid`): :class:`CountingGridPosterior`, :class:`CountingGridFESS` and
:func:`cg_fess_terms`.  Each embedding fits one model per class (``mode="per_class"``, the
"-1" embeddings) or one on all documents (``mode="whole_data"``, "-2").
"""
from countgrid.grid._embeddings import CountingGridFESS, CountingGridPosterior, cg_fess_terms
from countgrid.topics._embeddings import (FisherScore, FreeEnergyScoreSpace, LLREmbedding,
                                          MixtureOfTopics, PosteriorDivergence, TOPEmbedding,
                                          fess_terms, fisher_score, posterior_divergence)

__all__ = ["MixtureOfTopics", "FisherScore", "TOPEmbedding", "LLREmbedding",
           "FreeEnergyScoreSpace", "PosteriorDivergence", "CountingGridPosterior",
           "CountingGridFESS", "fisher_score", "fess_terms", "posterior_divergence",
           "cg_fess_terms"]
