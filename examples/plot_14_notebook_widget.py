"""
The map in a notebook: a widget with two-way selection
======================================================

:func:`countgrid.widget` shows the interactive map of a grid in a notebook's output
(JupyterLab, Notebook 7, VS Code, Colab, marimo; the ``notebook`` extra: ``pip install
'countgrid[notebook]'``).  What is clicked, shift-dragged or lassoed in it is
``w.selection`` in Python, a table of its documents; ``w.highlight`` and ``w.color_by``
change the map from Python (:doc:`../map`, "The notebook widget").

.. image:: /img/widget_lab.png
   :alt: JupyterLab with the widget of the three-newsgroup grid coloured by newsgroup: a
         lasso drawn around the sci.space region, and below it the table of w.selection
         listing the posts centred there.

The picture above is JupyterLab running the code of this page
(``tools/make_doc_images.py --widget``).  A documentation page has no kernel to talk to,
so below the Python side runs alone: the table a selection gives is the one
``w.documents_at`` computes for the same cells.
"""
# %%
import warnings

import numpy as np

import countgrid
from countgrid.datasets import load_news20_3class_texts
from countgrid.text import Corpus

# Short fits keep the gallery fast; their "did not converge" warnings are expected.
warnings.filterwarnings("ignore", category=countgrid.ConvergenceWarning)

texts = load_news20_3class_texts()
newsgroup = np.asarray(texts.label_names)[texts.y]
corpus = Corpus.from_texts(list(texts.texts), metadata={"newsgroup": newsgroup},
                           min_df=5, max_df=0.5, stop_words="english", max_features=3000)
grid = countgrid.CountingGrid((24, 24), (5, 5), n_iter=30, dtype=np.float32,
                              random_state=0).fit(corpus.counts.astype(np.float32))

# %%
# The widget.  In a notebook, ``w`` as the last line of a cell shows the map; the data
# travel to it as two binary buffers.
w = countgrid.widget(grid, corpus=corpus, color_by="newsgroup")
print(type(w).__name__, "coloured by", repr(w.color_by), "height", w.height)

# %%
# A selection.  Here: the twelve cells where "orbit" is most probable, as a lasso around
# them would select.  The documents are those whose most probable window is centred in
# one of those cells; ``score`` is the posterior probability that it is.
cells, _ = grid.word_cells("orbit", n_cells=12, feature_names=corpus.vocabulary)
table = w.documents_at([tuple(c) for c in cells])
groups, counts = np.unique(np.asarray(table["newsgroup"]), return_counts=True)
print(f"{len(table['document'])} posts centred in those cells:",
      ", ".join(f"{g} {k}" for g, k in zip(groups, counts)))
for k in range(min(8, len(table["document"]))):
    print(f"  {table['score'][k]:.2f}  {table['title'][k][:70]}")

# %%
# A click on one cell lists every post whose window covers it, the cell most central
# first (the page's list; ``kind="cell"``).
table = w.documents_at([tuple(cells[0])], kind="cell")
print(f"cell {tuple(cells[0].tolist())}: {len(table['document'])} posts cover it; the first:")
for k in range(5):
    print(f"  {table['score'][k]:.2f}  {table['title'][k][:70]}")

# %%
# From Python to the map: words, documents (rows of X, or ids) and cells light up as a
# search does; ``w.color_by`` recolours (and follows the page's Colour menu).  In a
# notebook, ``w.on_select(callback)`` runs the callback with each new selection.
w.highlight = ["orbit", "shuttle"]
w.color_by = ""
w.on_select(lambda table: print(len(table["document"]), "documents selected"))
