"""
Topics over time and between groups
===================================

Python's changelog, one document per entry (8,442 entries of 89 releases, February 2015
to February 2023; :func:`countgrid.text.load_python_changelog`), each with its
release date and its section (Library, Core and Builtins, Security, ...).  A counting grid
maps the entries; its regions are the changelog's topics, and three functions read the
dates and the sections off the fitted grid: :func:`countgrid.grid.shares_by_period` (how
much of each year's entries each region holds), :func:`countgrid.grid.compare_groups`
(where one section sits apart from the others) and :func:`countgrid.grid.region_effects`
(a trend per year and a group effect per region, with intervals).  The map written at
the end has a time slider over the years and is coloured by section (:doc:`../map`,
"Time").

The corpus is one of the datasets of the repository's ``data/`` folder (not installed
with the package): run this example from a git checkout, or point
``COUNTGRID_DATA_DIR`` at a folder holding ``python_changelog.npz``.
"""
# %%
import os
import warnings

import matplotlib.pyplot as plt
import numpy as np

import countgrid
from countgrid.grid import compare_groups, region_effects, region_words, regions, \
    shares_by_period
from countgrid.text import load_python_changelog

warnings.filterwarnings("ignore", category=countgrid.ConvergenceWarning)

corpus = load_python_changelog()
X = corpus.counts.astype(np.float32)
date, section = corpus.metadata["date"], corpus.metadata["section"]
print(corpus)
print("from", date[0], "to", date[-1], "|", dict(zip(*np.unique(section, return_counts=True))))

# %%
# The package's defaults (:doc:`../choosing`): a 40 x 40 grid for this many documents, a
# 4 x 4 window, a few passes with larger windows first.
grid = countgrid.CountingGrid(random_state=0).fit(X)

# %%
# Sixteen regions of cells that use the same words, each named by its three most
# relevant words.
labels = regions(grid, 16)
names = [" ".join(w) for w in region_words(grid, labels, 3, corpus.vocabulary)]
for r, name in enumerate(names):
    print(f"{r:2d}  {np.count_nonzero(labels == r):3d} cells  {name}")

# %%
# Over time: each entry spreads one unit of mass over the cells its posterior reaches;
# a year's share of a region is the part of that year's mass in the region's cells
# (rows sum to 1).  2023 holds the 66 entries of one release (3.11.2).
shares = shares_by_period(grid, X, date, period="year", labels=labels)
table = shares.table(names)
print("year  entries  " + "  ".join(f"{r:>5d}" for r in range(len(names))))
for p, year in enumerate(table["period"]):
    print(f"{year}  {table['n_documents'][p]:7d}  "
          + "  ".join(f"{100 * shares.region_share[p, r]:5.1f}" for r in range(len(names))))

# %%
# The figure: each region's share of each full year's entries (2015-2022), in percent,
# coloured against the region's mean share over those years (blue above, red below).
# Three trends stand out, and :func:`~countgrid.grid.region_effects` below puts a number
# on each: the C API (region 5, "api function macro", then "deprecated limited") holds
# 4.4 % of the entries of 2015 and 10.4 % of those of 2020; region 6, whose words go on
# with "opcode tracing instructions cache" (the interpreter's internals: bytecode, inline
# caches, frames, the work that made Python 3.11 faster), climbs from 4.7 % in 2015 to
# 11.3 % in 2022; IDLE (region 14) falls from 7.7 % in 2017 to 1.3 % in 2022.
years = slice(0, 8)
share = 100 * shares.region_share[years]
fig, ax = plt.subplots(figsize=(9, 6.4))
image = ax.imshow((share - share.mean(axis=0)).T, cmap="RdBu", vmin=-5, vmax=5,
                  aspect="auto")
for (p, r), v in np.ndenumerate(share):
    ax.text(p, r, f"{v:.1f}", ha="center", va="center", fontsize=7.5)
ax.set_xticks(range(share.shape[0]), [f"{y}\n{n}" for y, n in zip(
    shares.labels[years], shares.n_documents[years])], fontsize=8)
ax.set_xlabel("year (entries)")
ax.set_yticks(range(len(names)), [f"{r}: {n}" for r, n in enumerate(names)], fontsize=8)
ax.set_title("Share of each year's changelog entries per region (%)")
fig.colorbar(image, ax=ax, label="share minus the region's 2015-2022 mean (points)")
fig.tight_layout()
plt.show()

# %%
# Between groups: where the Security section's 105 entries sit apart from the other
# entries, region by region (log-odds ratio of the two groups' mass with an informative
# prior; ``*`` when the 95 % interval excludes 0).  They gather in region 3 ("http random
# urllib", then "request email header server": the CVE fixes of http.server, smtplib,
# expat, ...), log-odds ratio about +1.9, and stay away from the C API, typing and
# asyncio/unittest regions.
diff = compare_groups(grid, X, section, "Security", labels=labels)
order = np.argsort(-diff.delta)
print(f"Security ({diff.n_a}) vs the rest ({diff.n_b}): log-odds ratio [95 % interval]")
for r in order:
    print(f"{diff.delta[r]:+5.2f} [{diff.low[r]:+5.2f}, {diff.high[r]:+5.2f}]"
          f"{' *' if diff.marked[r] else '  '} {names[r]}")

# %%
# Both at once, as the structural topic model's ``estimateEffect``: each region's use by
# an entry regressed on the year (a trend per year) and on being a Security entry, the
# uncertainty of where the entries sit carried into the intervals.  The C API and
# region 6 gain about 0.6-0.7 points a year, IDLE loses 0.6; a Security entry uses
# region 3 about 30 points more than another entry of the same year.
year = np.array([int(d[:4]) for d in date], dtype=np.float64) - 2015
effects = region_effects(grid, X, {"year": year, "security": section == "Security"},
                         labels)
print("region  trend per year (points)            Security effect (points)")
for r in range(len(names)):
    t, s = effects.estimate[r, 1:] * 100
    (tl, sl), (th, sh) = effects.low[r, 1:] * 100, effects.high[r, 1:] * 100
    print(f"{r:6d}  {t:+5.2f} [{tl:+5.2f}, {th:+5.2f}]   {s:+6.2f} [{sl:+6.2f}, {sh:+6.2f}]"
          f"  {names[r]}")

# %%
# The interactive map: a slider over the years (the cells coloured by their share of the
# chosen years' entries, a sparkline per region), coloured by section otherwise.  When
# the documentation is built the file goes into the site's output folder
# (``COUNTGRID_DOCS_EXTRA``); run on its own, this script writes it here.
out_dir = os.environ.get("COUNTGRID_DOCS_EXTRA", ".")
path = countgrid.maps.write_html(grid, os.path.join(out_dir, "python_changelog_map.html"),
                                 X, corpus=corpus, color_by="section", time="date",
                                 title="Python's changelog, 2015-2023")
print(f"{os.path.basename(path)}: {os.path.getsize(path) / 1e6:.1f} MB, no external resource")


# %%
# The page, embedded (drag the "from" and "to" sliders, or press play):
class Embed:
    def _repr_html_(self):
        return ('<iframe src="../python_changelog_map.html" title="countgrid map" '
                'style="width:100%; height:640px; border:1px solid #ccc"></iframe>'
                '<p><a href="../python_changelog_map.html">Open the map on its own page</a>'
                '</p>')


Embed()
