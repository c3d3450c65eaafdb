"""
A Gaussian mixture on a circular histogram
==========================================

:class:`~countgrid.mixture.HistogramGMM` fits a Gaussian mixture to weighted histogram
bins rather than to points (:doc:`../guide/mixture`).  On a circular domain (angles, time
of day) distances wrap around the period, so a mode that straddles the seam is one
component, not two halves.
"""
# %%
import matplotlib.pyplot as plt
import numpy as np

import countgrid

# %%
# Wind directions in degrees: a mode around north (straddling 0/360) and one around
# south-west, binned into 36 bins of 10 degrees.
rng = np.random.default_rng(0)
angles = np.r_[rng.normal(0, 20, 700), rng.normal(225, 25, 300)] % 360
edges = np.linspace(0, 360, 37)
counts, _ = np.histogram(angles, bins=edges)
centres = (edges[:-1] + edges[1:]) / 2

gmm = countgrid.HistogramGMM(2, domain="circular", period=360, random_state=0)
gmm.fit(counts, [centres])
for m, c, w in zip(gmm.means_[:, 0], gmm.covariances_[:, 0, 0], gmm.weights_):
    print(f"mean {m % 360:6.1f} deg, sd {np.sqrt(c):5.1f} deg, weight {w:.2f}")

# %%
# The fitted density against the histogram.
grid = np.linspace(0, 360, 361)
density = gmm.pdf(grid[:, None])
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.bar(centres, counts / counts.sum() / 10, width=10, alpha=0.4, label="histogram")
ax.plot(grid, density, color="k", label="HistogramGMM, circular")
ax.set_xlabel("direction (degrees)")
ax.set_ylabel("density")
ax.legend()
plt.show()
