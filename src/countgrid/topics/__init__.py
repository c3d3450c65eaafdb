"""Topic models of counts: pLSA (Hofmann, UAI 1999) with tempered EM, folding-in and BIC,
and the generative embeddings built on it (Bicego et al., Neurocomputing 2013)."""
from countgrid.topics._embeddings import (FisherScore, FreeEnergyScoreSpace, LLREmbedding,
                                          MixtureOfTopics, PosteriorDivergence, TOPEmbedding,
                                          fess_terms, fisher_score, posterior_divergence)
from countgrid.topics._plsa import MAX_DOCUMENT_LENGTH, PLSA, select_n_components_bic

__all__ = ["PLSA", "select_n_components_bic", "MixtureOfTopics", "FisherScore", "TOPEmbedding",
           "LLREmbedding", "FreeEnergyScoreSpace", "PosteriorDivergence", "fisher_score",
           "fess_terms", "posterior_divergence", "MAX_DOCUMENT_LENGTH"]
