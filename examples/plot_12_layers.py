"""
Layered counting grids: two word distributions in every cell
=============================================================

:class:`countgrid.LayeredCountingGrid` gives each cell of the map one word distribution
per layer and lets every document choose a layer, with a prior over the layers that
neighbouring places of the map share (:doc:`../counting_grids`, "Layered grids").
"""
# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np

import countgrid
from countgrid.datasets import load_news20_3class
from countgrid.plotting import plot_word_grid

# Short fits keep the gallery fast; their "did not converge" warnings are expected.
warnings.filterwarnings("ignore", category=countgrid.ConvergenceWarning)

data = load_news20_3class()
train = data.extras["split"] == 0
X, y = data.X[train], data.y[train]
lcg = countgrid.LayeredCountingGrid((24, 24), (4, 4), n_layers=2, n_iter=40,
                                    random_state=0).fit(X)
print(lcg.pi_.shape, "layers x rows x columns x words")

# %%
# Which layer each newsgroup's posts choose (the mean of their layer posteriors), and how
# the map shares itself between the layers: the prior probability of layer 0 at each
# window position, rho_k(0) (the window mean of the cells' layer weights).
layers = lcg.layer_posterior(X)
for c, name in enumerate(data.label_names):
    share = layers[y == c].mean(axis=0)
    print(f"{name:28s} layer 0: {share[0]:.2f}  layer 1: {share[1]:.2f}")
fig, ax = plt.subplots(figsize=(4, 3.6))
rho = lcg.prior_ / lcg.prior_.sum(axis=0)
im = ax.imshow(rho[0], cmap="coolwarm", vmin=0, vmax=1)
ax.set_title("prior of layer 0 at each window position", fontsize=9)
ax.set_xticks([])
ax.set_yticks([])
fig.colorbar(im, ax=ax, shrink=0.8)
plt.show()

# %%
# Each layer is a counting grid of its own (``layer_grid``): every tool that reads a plain
# grid reads it.  The same map in each layer (every third cell, summarising its 3x3
# block).
fig, axes = plt.subplots(1, 2, figsize=(12, 6))
for layer, ax in enumerate(axes):
    plot_word_grid(lcg.layer_grid(layer), data.feature_names, ax=ax, n_words=2, step=3)
    ax.set_title(f"layer {layer}", fontsize=10)
plt.show()
