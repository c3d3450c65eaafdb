"""
Is the map stable? Aligning grids and stability across restarts
================================================================

EM finds a local optimum, and two fits with other seeds can differ by a translation,
reversed or swapped axes of the torus.  :func:`countgrid.grid.align` finds that symmetry;
:func:`countgrid.grid.stability` fits several seeds, aligns them and says how
reproducible the words and the documents' places are (:doc:`../counting_grids`,
"Stability across restarts").
"""
# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np

import countgrid
from countgrid.datasets import load_news20_3class
from countgrid.grid import align, stability
from countgrid.plotting import plot_cell_stability

# Short fits keep the gallery fast; their "did not converge" warnings are expected.
warnings.filterwarnings("ignore", category=countgrid.ConvergenceWarning)

data = load_news20_3class()
X = data.X[data.extras["split"] == 0]
params = dict(extent=(24, 24), window=(4, 4), n_iter=40)

# %%
# Two fits with other seeds, aligned: the symmetry that maps the first onto the second,
# and how alike their windows are once aligned (raw, and against two windows drawn at
# random).
a = countgrid.CountingGrid(**params, random_state=1).fit(X)
b = countgrid.CountingGrid(**params, random_state=2).fit(X)
r = align(a, b)
print(r)
print(f"before alignment {align(a, b, flips=False, transpose=False).scores[0]:.3f} "
      f"(identity map, best shift); chance {r.chance_similarity:.3f}")

# %%
# Where a word lives in each fit, and in the first fit carried into the second's frame.
w = int(np.flatnonzero(data.feature_names == "space")[0])
fig, axes = plt.subplots(1, 3, figsize=(10, 3.4))
for ax, (title, pi) in zip(axes, [("fit 1", a.pi_), ("fit 2", b.pi_),
                                  ("fit 1 aligned onto fit 2", r.aligned)]):
    ax.imshow(pi[..., w], cmap="magma")
    ax.set_title(f"'space': {title}", fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])
plt.show()

# %%
# Three fits: pairwise similarity over chance, the documents placed alike, and the
# stability of each part of the map.
s = stability(X, 3, random_state=0, n_regions=6, **params)
print(f"similarity {s.mean_similarity:.3f}, over chance {s.mean_adjusted_similarity:.3f}; "
      f"documents placed alike {np.mean(s.placement_agreement):.0%}")
plot_cell_stability(s)
plt.show()
