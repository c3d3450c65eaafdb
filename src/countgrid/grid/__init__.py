"""Counting grids (Jojic & Perina, UAI 2011): the model, label embedding, the classifiers
and the regressor read out from a grid, the one-grid-per-class classifier and the
generative embeddings built on grids (docs/counting_grids.md); :func:`visit_posteriors` and
:func:`window_loglik` are what the layers above (the map, the command line, metrics) read
of a fitted grid."""
from countgrid.grid._align import GridAlignment, align
from countgrid.grid._capacity import auto_extent
from countgrid.grid._classifiers import (
                                         CountingGridClassifier,
                                         CountingGridRegressor,
                                         GenerativeCountingGridClassifier,
)
from countgrid.grid._counting_grid import CountingGrid
from countgrid.grid._effects import RegionEffects, region_effects
from countgrid.grid._embeddings import (
                                         CountingGridFESS,
                                         CountingGridPosterior,
                                         cg_fess_terms,
)
from countgrid.grid._groups import GroupComparison, compare_groups
from countgrid.grid._layers import LayeredCountingGrid
from countgrid.grid._label_embedding import (
                                         embed_labels,
                                         embedding_from_stats,
                                         readout_matrix,
)
from countgrid.grid._posteriors import visit_posteriors, window_loglik
from countgrid.grid._regions import region_words, regions
from countgrid.grid._schedule import auto_window_schedule
from countgrid.grid._stability import GridStability, stability
from countgrid.grid._time import PeriodShares, shares_by_period
from countgrid.grid._time_slices import TimeSlicedCountingGrid
from countgrid.grid._words import (
                                         RELEVANCE_LAMBDA,
                                         word_marginal,
                                         word_relevance,
                                         word_weights,
)

__all__ = ["CountingGrid", "LayeredCountingGrid", "TimeSlicedCountingGrid", "embed_labels", "embedding_from_stats", "readout_matrix",
           "CountingGridClassifier", "CountingGridRegressor",
           "GenerativeCountingGridClassifier", "CountingGridPosterior", "CountingGridFESS",
           "cg_fess_terms", "auto_extent", "auto_window_schedule", "word_relevance",
           "word_weights", "word_marginal", "RELEVANCE_LAMBDA", "visit_posteriors",
           "window_loglik", "regions", "region_words", "compare_groups",
           "GroupComparison", "shares_by_period", "PeriodShares", "region_effects",
           "RegionEffects", "align", "GridAlignment", "stability", "GridStability"]
