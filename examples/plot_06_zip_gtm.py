"""
A ZIP-GTM map of documents
==========================

The zero-inflated Poisson GTM (:doc:`../guide/gtm`) places every document at a point
of a 2-D latent square, through a smooth map to Poisson rates with extra zeros, which
suits short documents with many absent words.  The newsgroups separate on the map.
"""
# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np

import countgrid
from countgrid.datasets import load_news20_3class
from countgrid.plotting import plot_zip_gtm_map

# Short fits keep the gallery fast; their "did not converge" warnings are expected.
warnings.filterwarnings("ignore", category=countgrid.ConvergenceWarning)

data = load_news20_3class()
rng = np.random.default_rng(0)
rows = np.sort(rng.choice(data.X.shape[0], 600, replace=False))
X, y = data.X[rows], data.y[rows]

# %%
# The 300 most frequent words keep the fit small.
columns = np.argsort(-np.asarray(X.sum(axis=0)).ravel())[:300]
X = X[:, np.sort(columns)]
gtm = countgrid.ZIPGTM(grid_shape=(10, 10), n_basis=16, n_iter=20, random_state=0).fit(X)

# %%
# Each post at its posterior-mean latent point, coloured by newsgroup.
fig, ax = plt.subplots(figsize=(6, 6))
plot_zip_gtm_map(gtm, X, labels=y, label_names=data.label_names, ax=ax)
plt.show()
