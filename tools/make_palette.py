#!/usr/bin/env python
"""Make the categorical palette of the map and the pictures (countgrid/_utils/palette.py).

Glasbey et al. (2007), "Colour displays for categorical images": colours are chosen one at
a time, each the candidate farthest (in a perceptual colour space) from all those chosen
so far, so that the first n of the list are well spread for every n and consecutive
levels differ strongly.  Here:

- the space is OKLab (Ottosson 2020), where Euclidean distance follows perceived
  difference well enough for this purpose;
- the list starts with the six colours of Okabe & Ito's colour-blind-safe palette that stay
  visible when tinted towards white (blue, vermillion, bluish green, reddish purple,
  orange, sky blue: the colours of the first six classes before 0.3); yellow is left out
  (invisible as a pale tint), black and greys too (grey is the level "other");
- candidates are the sRGB colours on a 4-step lattice with OKLab lightness in
  [0.45, 0.80] (dark text stays readable on their tints; a tint is still visible) and
  chroma between 0.08 (no greys) and 0.22 (no neon).

    python tools/make_palette.py          # prints the list written in countgrid/_utils/palette.py
"""
import numpy as np

START = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"]
N = 64
L_RANGE = (0.45, 0.80)
MIN_CHROMA = 0.08
MAX_CHROMA = 0.22


def srgb_to_oklab(rgb):
    """OKLab of sRGB colours in [0, 1] (Ottosson's matrices)."""
    rgb = np.asarray(rgb, dtype=np.float64)
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    m1 = np.array([[0.4122214708, 0.5363325363, 0.0514459929],
                   [0.2119034982, 0.6806995451, 0.1073969566],
                   [0.0883024619, 0.2817188376, 0.6299787005]])
    m2 = np.array([[0.2104542553, 0.7936177850, -0.0040720468],
                   [1.9779984951, -2.4285922050, 0.4505937099],
                   [0.0259040371, 0.7827717662, -0.8086757660]])
    return np.cbrt(lin @ m1.T) @ m2.T


def hex_rgb(h):
    return np.array([int(h[i:i + 2], 16) for i in (1, 3, 5)]) / 255.0


def make(n=N):
    axis = np.arange(0, 256, 4) / 255.0
    cand = np.stack(np.meshgrid(axis, axis, axis, indexing="ij"), -1).reshape(-1, 3)
    lab = srgb_to_oklab(cand)
    chroma = np.hypot(lab[:, 1], lab[:, 2])
    ok = ((lab[:, 0] >= L_RANGE[0]) & (lab[:, 0] <= L_RANGE[1]) & (chroma >= MIN_CHROMA)
          & (chroma <= MAX_CHROMA))
    cand, lab = cand[ok], lab[ok]
    chosen = [hex_rgb(h) for h in START]
    dist = np.min(np.linalg.norm(lab[:, None, :] - srgb_to_oklab(np.array(chosen))[None],
                                 axis=2), axis=1)
    while len(chosen) < n:
        k = int(np.argmax(dist))
        chosen.append(cand[k])
        dist = np.minimum(dist, np.linalg.norm(lab - lab[k], axis=1))
    return ["#%02X%02X%02X" % tuple(int(round(255 * v)) for v in c) for c in chosen]


if __name__ == "__main__":
    colours = make()
    print("PALETTE = (")
    for i in range(0, len(colours), 8):
        print("    " + ", ".join(f'"{c}"' for c in colours[i:i + 8]) + ",")
    print(")")
    lab = srgb_to_oklab(np.array([hex_rgb(c) for c in colours]))
    for n in (6, 10, 20, 42, 50, 64):
        d = np.linalg.norm(lab[:n, None] - lab[None, :n], axis=2)
        d[np.arange(n), np.arange(n)] = np.inf
        print(f"# first {n}: smallest OKLab distance {d.min():.3f}")
