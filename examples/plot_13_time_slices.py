"""
Time-sliced counting grids: one map per year, kept in place
===========================================================

Python's changelog (8,442 entries of 89 releases, 2015 to 2023;
:func:`countgrid.text.load_python_changelog`) cut into years.
:class:`countgrid.TimeSlicedCountingGrid` fits one grid per year, each started from the
year before and drawn toward it, so that a place on the map keeps its theme from year to
year and what moves is the drift (:doc:`../counting_grids`, "Time-sliced grids").

The corpus is one of the datasets of the repository's ``data/`` folder (not installed
with the package): run this example from a git checkout, or point
``COUNTGRID_DATA_DIR`` at a folder holding ``python_changelog.npz``.
"""
# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np

import countgrid
from countgrid.grid import region_words
from countgrid.text import load_python_changelog

# Short fits keep the gallery fast; their "did not converge" warnings are expected.
warnings.filterwarnings("ignore", category=countgrid.ConvergenceWarning)

corpus = load_python_changelog()
X = corpus.counts.astype(np.float32)
dates = corpus.metadata["date"]
tg = countgrid.TimeSlicedCountingGrid((20, 20), (4, 4), period="year", n_iter=30,
                                      random_state=0).fit(X, times=dates)
print(tg.period_labels_.tolist(), tg.n_documents_.tolist())

# %%
# How much the map's words move from one year to the next, against fitting every year
# on its own from the previous year's grid (a plain warm start, ``smoothness=0``).
warm = countgrid.TimeSlicedCountingGrid((20, 20), (4, 4), period="year", n_iter=30,
                                        smoothness=0.0, random_state=0).fit(X, times=dates)
fig, ax = plt.subplots(figsize=(6, 3))
years = tg.period_labels_[1:]
ax.plot(years, tg.drift().mean(axis=(1, 2)), "o-", label=f"smoothness {tg.smoothness}")
ax.plot(years, warm.drift().mean(axis=(1, 2)), "s--", label="warm start")
ax.set_ylabel("mean drift (1 - BC)")
ax.set_ylim(0, 1)
ax.legend()
plt.show()

# %%
# The first year's regions, followed through every year: their share of each year's
# entries (and the regions born or dying on the way).
changes = tg.region_changes(X, dates, n_regions=6)
words = region_words(tg.period_grid(0), changes.regions, n_words=3,
                     feature_names=corpus.vocabulary)
names = [" ".join(w) for w in words]
fig, ax = plt.subplots(figsize=(8, 3.4), layout="constrained")
ax.stackplot(changes.periods, changes.share.T, labels=names)
ax.set_ylabel("share of the year's entries")
ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1, 0.5))
plt.show()
print(changes.events or "no region was born or died")
