"""
The interactive map
===================

:func:`countgrid.maps.write_html` turns a fitted grid into one self-contained HTML file
(:doc:`../map`): zoom and pan on the torus, search words, click a cell to list the posts
whose windows cover it, colour the cells by a metadata column.  The page below is that
file, written when this documentation was built; it works offline.
"""
# %%
import os
import warnings

import numpy as np

import countgrid
from countgrid.datasets import load_news20_3class_texts
from countgrid.text import Corpus

# Short fits keep the gallery fast; their "did not converge" warnings are expected.
warnings.filterwarnings("ignore", category=countgrid.ConvergenceWarning)

texts = load_news20_3class_texts()
newsgroup = np.asarray(texts.label_names)[texts.y]

# %%
# Raw text -> counts (scikit-learn's CountVectorizer through the corpus object), then a
# grid.  The corpus keeps titles and snippets for the map's document list.
corpus = Corpus.from_texts(list(texts.texts), metadata={"newsgroup": newsgroup},
                           min_df=5, max_df=0.5, stop_words="english", max_features=3000)
X = corpus.counts.astype(np.float32)
grid = countgrid.CountingGrid((24, 24), (5, 5), n_iter=30, dtype=np.float32,
                              random_state=0).fit(X)

# %%
# Write the page.  When the documentation is built the file goes into the site's output
# folder (``COUNTGRID_DOCS_EXTRA``); run on its own, this script writes it here.
out_dir = os.environ.get("COUNTGRID_DOCS_EXTRA", ".")
path = countgrid.maps.write_html(grid, os.path.join(out_dir, "news20_map.html"), X,
                                 corpus=corpus, color_by="newsgroup",
                                 title="20 Newsgroups: three groups")
print(f"{os.path.basename(path)}: {os.path.getsize(path) / 1e6:.1f} MB, no external resource")


# %%
# The page, embedded (try searching "orbit" or clicking a cell):
class Embed:
    def _repr_html_(self):
        return ('<iframe src="../news20_map.html" title="countgrid map" '
                'style="width:100%; height:640px; border:1px solid #ccc"></iframe>'
                '<p><a href="../news20_map.html">Open the map on its own page</a></p>')


Embed()
