"""
RAP harmonium for document retrieval
====================================

The Rate Adapting Poisson harmonium (:doc:`../guide/rap`) maps a document to a short
vector of hidden activations; documents of the same newsgroup get nearby codes.  The
retrieval curve asks: with a test post as the query, what fraction of the training posts
ranked first by cosine similarity share its newsgroup?
"""
# %%
import warnings

import matplotlib.pyplot as plt

import countgrid
from countgrid.datasets import load_news20_3class
from countgrid.metrics import precision_recall_curve_retrieval
from countgrid.retrieval import idf_weights

# Short fits keep the gallery fast; their "did not converge" warnings are expected.
warnings.filterwarnings("ignore", category=countgrid.ConvergenceWarning)

data = load_news20_3class()
train = data.extras["split"] == 0
X_train, y_train = data.X[train], data.y[train]
X_test, y_test = data.X[~train], data.y[~train]

# %%
# Twenty hidden units, a few epochs of contrastive divergence.
rap = countgrid.RAP(n_components=20, n_epochs=10, learning_rate=1e-3, random_state=0)
rap.fit(X_train)

# %%
# Precision against recall for the RAP codes and for tf-idf word vectors (the word
# weights of the training posts for both sides).
idf = idf_weights(X_train)
curves = {
    "RAP, 20 hidden units": precision_recall_curve_retrieval(
        rap.transform(X_test), rap.transform(X_train), y_test, y_train),
    "tf-idf, 2500 words": precision_recall_curve_retrieval(
        countgrid.tfidf(X_test, idf), countgrid.tfidf(X_train, idf), y_test, y_train),
}
fig, ax = plt.subplots(figsize=(6, 4.5))
for name, curve in curves.items():
    ax.plot(curve.recall, curve.precision, label=f"{name} (AUC {curve.auc:.2f})")
ax.set_xscale("log")
ax.set_xlabel("recall")
ax.set_ylabel("precision")
ax.legend()
plt.show()
