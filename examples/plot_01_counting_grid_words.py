"""
A counting grid on text and its word map
========================================

A counting grid (:doc:`../guide/grid`) places every word on a torus of cells so that
each document is well explained by the words under one window.  Fitted on 2,780 posts of
three newsgroups, it gathers the words of each topic in regions, with smooth transitions
between them.
"""
# %%
# The bundled data: 2,780 posts x 2,500 words, three newsgroups.
import warnings

import matplotlib.pyplot as plt
import numpy as np

import countgrid
from countgrid.datasets import load_news20_3class
from countgrid.plotting import plot_word_grid, plot_word_map

# Short fits keep the gallery fast; their "did not converge" warnings are expected.
warnings.filterwarnings("ignore", category=countgrid.ConvergenceWarning)

data = load_news20_3class(dtype=np.float32)
print(data.X.shape, list(data.label_names))

# %%
# A 24 x 24 grid with a 5 x 5 window: capacity kappa = 576 / 25 = 23, enough for three
# topics and their mixtures (the guide's "How big a grid" section).  Single precision
# halves memory and time.
grid = countgrid.CountingGrid((24, 24), (5, 5), n_iter=40, dtype=np.float32,
                              random_state=0).fit(data.X)
print(f"{grid.n_iter_} iterations, log-likelihood per token "
      f"{grid.log_likelihood_[-1] / data.X.sum():.3f}")

# %%
# The word grid: the most relevant words of every other cell (frequent in the cell and
# specific to it; ``weighting="probability"`` shows the most probable).  Neighbouring
# cells share words: a document's window averages 25 of them.
fig, ax = plt.subplots(figsize=(11, 11))
plot_word_grid(grid, data.feature_names, ax=ax, n_words=3, step=2, legend=False)
plt.show()

# %%
# Where one word lives: ``pi[:, :, word]`` over the grid.  "space" and "baseball" occupy
# different regions; the torus wraps around, so a region can leave one edge and come
# back on the other.
fig, axes = plt.subplots(1, 2, figsize=(10, 4.5))
for ax, word in zip(axes, ["space", "baseball"]):
    plot_word_map(grid, word, feature_names=data.feature_names, ax=ax)
plt.show()
