"""
Label embedding and the counting-grid classifiers
=================================================

Where do the classes live on the grid?  :func:`countgrid.grid.embed_labels` spreads the
training labels over the cells through each document's posterior over windows; the
classifiers read a new document's class out of its position.  Two classifiers are
compared with the same folds: the discriminative read-out
(:class:`~countgrid.grid.CountingGridClassifier`, one grid for all classes) and the
generative one (:class:`~countgrid.grid.GenerativeCountingGridClassifier`, one grid
per class, Bayes' rule).
"""
# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np

import countgrid
from countgrid.datasets import load_news20_3class
from countgrid.plotting import plot_label_embedding

# Short fits keep the gallery fast; their "did not converge" warnings are expected.
warnings.filterwarnings("ignore", category=countgrid.ConvergenceWarning)

data = load_news20_3class(dtype=np.float32)
train = data.extras["split"] == 0
X_train, y_train = data.X[train], data.y[train]
X_test, y_test = data.X[~train], data.y[~train]
print(f"{X_train.shape[0]} training posts, {X_test.shape[0]} test posts")

# %%
# One grid for all classes; its label embedding ``gamma_`` gives every cell a class
# distribution, mixed here as RGB (one colour per newsgroup).
clf = countgrid.CountingGridClassifier((20, 20), (4, 4), n_iter=30, dtype=np.float32,
                                       random_state=0).fit(X_train, y_train)
print(f"CountingGridClassifier test accuracy: {clf.score(X_test, y_test):.3f}")
fig, ax = plt.subplots(figsize=(6, 6))
plot_label_embedding(clf, ax=ax, label_names=data.label_names)
plt.show()

# %%
# One smaller grid per class, compared by their likelihoods.
gen = countgrid.GenerativeCountingGridClassifier((12, 12), (3, 3), n_iter=20,
                                                 dtype=np.float32, random_state=0)
gen.fit(X_train, y_train)
print(f"GenerativeCountingGridClassifier test accuracy: {gen.score(X_test, y_test):.3f}")
