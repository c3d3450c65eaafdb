"""
Diagnostics: coherence, exclusivity and held-out perplexity
===========================================================

Which topics are good, and which model predicts documents best?  The diagnostics table
(:doc:`../diagnostics`) gives MALLET's per-topic numbers and stm's FREX for any model;
document completion scores every model on the same held-out tokens.  Here a pLSA, a
counting grid (its regions) and scikit-learn's LDA are fitted on the bundled training
posts and measured on them and on the test posts.
"""
# %%
import warnings

import matplotlib.pyplot as plt
from sklearn.decomposition import LatentDirichletAllocation

import countgrid
from countgrid.datasets import load_news20_3class
from countgrid.metrics import completion_perplexity, topic_coherence, topic_diagnostics
from countgrid.plotting import plot_topic_quality

# Short fits keep the gallery fast; their "did not converge" warnings are expected.
warnings.filterwarnings("ignore", category=countgrid.ConvergenceWarning)

data = load_news20_3class()
train = data.extras["split"] == 0
X_train, X_test = data.X[train], data.X[~train]
words = data.feature_names

# %%
# Eight pLSA topics, and their diagnostics on the training posts: one row per topic.
plsa = countgrid.PLSA(n_components=8, random_state=0).fit(X_train)
d = topic_diagnostics(plsa, X_train)
table = d.table(words)
for k in range(len(table["topic"])):
    print(f"topic {k}: share {table['share'][k]:.2f}  exclusivity "
          f"{table['exclusivity'][k]:.2f}  UMass {table['coherence'][k]:6.2f}  "
          f"{' '.join(table['top_words'][k].split()[:5])}")

# %%
# Coherence against exclusivity: topics up and to the right are both coherent and
# distinct; the area of a point is its share of the tokens.
plot_topic_quality(d, words)
plt.show()

# %%
# A counting grid (the defaults: sized to the corpus) and its regions as topics; the
# same table and picture apply.
grid = countgrid.CountingGrid(random_state=0).fit(X_train)
regions = topic_diagnostics(grid, X_train, regions=8)
plot_topic_quality(regions, words)
plt.show()

# %%
# Held-out perplexity by document completion: half of each test post's tokens are
# predicted from the other half, every model on the same tokens (lower is better);
# and the NPMI coherence of each model's topics on the test posts, a reference none
# was fitted on (higher is better).  pLSA predicts best here: a grid's document is a
# posterior over window positions, not free topic proportions, and it pays for its map
# in held-out perplexity (:doc:`../counting_grids`, "Held-out completion").
lda = LatentDirichletAllocation(n_components=8, random_state=0).fit(X_train)
for name, model, top in [
        ("pLSA", plsa, d.top_words),
        ("counting grid", grid, regions.top_words),
        ("LDA (scikit-learn)", lda, topic_diagnostics(lda, X_train).top_words)]:
    ppl = completion_perplexity(model, X_test, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # words absent from the test posts
        npmi = topic_coherence(top, X_test, measure="c_npmi").mean
    print(f"{name:20s} held-out perplexity {ppl:8.1f}   NPMI on test posts {npmi:.3f}")
