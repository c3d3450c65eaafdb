"""
Counts beyond text: samples on a grid through AnnData
=====================================================

Gut microbiomes of twins and their mothers (Turnbaugh et al., Nature 2009): 278 samples,
16S reads per genus for 130 genera, each sample lean, overweight or obese.  Read counts
are counts, so a sample is a document and a genus a word.  The data go into an
``AnnData`` (as single-cell users hold theirs), :func:`countgrid.external.anndata.counting_grid`
fits a grid and writes each sample's place to ``obsm``, and the grid's regions are named
by their most specific genera (:doc:`../text`, "Cells and genes").

The corpus is one of the datasets of the repository's ``data/`` folder (not installed
with the package): run this example from a git checkout, or point
``COUNTGRID_DATA_DIR`` at a folder holding ``twins_microbiome.npz``.
"""
# %%
import os
import warnings

import anndata
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import countgrid
from countgrid.external import anndata as cga
from countgrid.grid import region_words, regions
from countgrid.text import read_corpus

# Short fits keep the gallery fast; their "did not converge" warnings are expected.
warnings.filterwarnings("ignore", category=countgrid.ConvergenceWarning)

data_dir = os.environ.get("COUNTGRID_DATA_DIR") or os.path.join(os.pardir, "data")
corpus = read_corpus(os.path.join(data_dir, "twins_microbiome.npz"))
adata = anndata.AnnData(X=corpus.counts,
                        obs=pd.DataFrame({"bmi": corpus.metadata["label"]},
                                         index=list(corpus.ids)),
                        var=pd.DataFrame(index=list(corpus.vocabulary)))
print(adata)

# %%
# The grid: 12 x 12 cells, each sample a 3 x 3 window.  ``obsm["X_countgrid"]`` is the
# centre of each sample's most probable window; ``varm["countgrid"]`` the genera's
# distribution over the grid's cells.
grid = cga.counting_grid(adata, extent=(12, 12), window=(3, 3), n_iter=60, random_state=0)
print(adata)
print("first samples' places:", adata.obsm["X_countgrid"][:3].tolist(),
      "; log-likelihood", round(adata.uns["countgrid"]["log_likelihood"]))

# %%
# The samples on the grid, coloured by their BMI group (jittered within their cell), over
# the grid's five regions named by their genera.
labels = regions(grid, n_regions=5)
names = region_words(grid, labels, n_words=2, feature_names=corpus.vocabulary)
fig, ax = plt.subplots(figsize=(7.5, 6))
ax.imshow(labels, cmap="Pastel1", origin="upper")
for k, words in enumerate(names):
    r, c = np.argwhere(labels == k).mean(axis=0)
    ax.text(c, r, "\n".join(words), ha="center", va="center", fontsize=8, color="#333")
rng = np.random.default_rng(0)
pos = adata.obsm["X_countgrid"] + rng.uniform(-0.3, 0.3, adata.obsm["X_countgrid"].shape)
for group, colour in (("lean", "#0072B2"), ("overweight", "#E69F00"), ("obese", "#D55E00")):
    m = adata.obs["bmi"].to_numpy() == group
    ax.scatter(pos[m, 1], pos[m, 0], s=14, color=colour, label=f"{group} ({m.sum()})",
               edgecolor="white", linewidth=0.4)
ax.set_xticks([])
ax.set_yticks([])
ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=3, frameon=False)
ax.set_title("Twins' gut microbiomes on a 12 x 12 counting grid")
fig.tight_layout()

# %%
# Where the groups sit: the share of each group's samples in each region (a region that
# holds no sample's window centre is left out).
region_of = labels[adata.obsm["X_countgrid"][:, 0], adata.obsm["X_countgrid"][:, 1]]
table = pd.crosstab(region_of, adata.obs["bmi"].to_numpy(), normalize="columns").round(2)
table.index = [" ".join(names[k]) for k in table.index]
table.columns.name = None
print(table.to_string())
