"""Pictures of fitted models (matplotlib, optional: ``pip install countgrid[plot]``).

* the word grid of a 2-D counting grid (:func:`plot_word_grid`; :func:`text_word_grid`
  needs numpy only, :func:`word_grid_cells` gives what both show);
* where a word lives (:func:`plot_word_map`), the label embedding as a colour overlay
  (:func:`plot_label_embedding`, RGB for three classes as Fig. 3 of the counting-grid
  paper), document positions over the grid (:func:`plot_positions`);
* the log-likelihood curve of any EM estimator (:func:`plot_log_likelihood`), the top
  words per pLSA topic (:func:`plot_top_words`) and the ZIP-GTM map
  (:func:`plot_zip_gtm_map`);
* the diagnostics of any topic model, coherence against exclusivity per topic
  (:func:`plot_topic_quality`), and the stability of a grid's cells across restarts
  (:func:`plot_cell_stability`).

Every function draws on ``ax`` when given (a new figure otherwise) and returns what it
drew on.  Cell ``(i, j)`` of a grid is the square ``[j, j + 1] x [i, i + 1]`` of the axes
(row ``i`` downwards): the 0-based indices of ``pi_``.  matplotlib is imported only when a
picture is drawn (docs/counting_grids.md, "Pictures").

Importing this package registers the drawing of ``ZIPGTM.plot`` (countgrid.gtm._display):
the plotting layer sits above the models, which import nothing from it.
"""
from countgrid.gtm._display import register_map
from countgrid.plotting._diagnostics import plot_topic_quality
from countgrid.plotting._stability import plot_cell_stability
from countgrid.plotting._pictures import (_zip_gtm_map, plot_label_embedding,
                                          plot_log_likelihood, plot_positions, plot_top_words,
                                          plot_word_map, plot_zip_gtm_map)
from countgrid.plotting._word_grid import (_INSTALL_HINT, _PALETTE, _import_pyplot,  # noqa: F401
                                           _new_figure, _resolve, plot_word_grid,
                                           text_word_grid, word_grid_cells)

register_map(_zip_gtm_map)

__all__ = ["plot_word_grid", "text_word_grid", "word_grid_cells", "plot_word_map",
           "plot_label_embedding", "plot_positions", "plot_log_likelihood",
           "plot_top_words", "plot_zip_gtm_map", "plot_topic_quality",
           "plot_cell_stability"]
