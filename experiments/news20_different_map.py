"""Counting grids on news20_different, the easy subset of 20 Newsgroups (Jojic & Perina,
UAI 2011, Fig. 3c): label embedding with the package defaults on the official bydate split,
test accuracy, and the picture of the embedded labels (where the three classes live).
Vocabulary: the ``--words`` (2000) words of highest chi2 on the training split.  Classifier:
``CountingGridClassifier()`` with nothing set but the seed (4x4 window, grid sized by
``extent="auto"``: 40x40 for 1,670 posts, coarse-to-fine window schedule); baselines on the
same counts: multinomial naive Bayes and, as in the paper's Fig. 3, the generative
one-grid-per-class classifier.

    python experiments/news20_different_map.py --png docs/img/news20_different_labels.png

The label maps of the paper's Fig. 3b (news20_same; 1-D, 2-D and 3-D grids): ``--data``
another corpus of ``data/`` with an official split, ``--grids`` one label-embedding grid
per ``E/W`` spec (``400/4``, ``40x40/4x4``, ``12x12x12/3x3x2``) instead of the defaults'
grid, ``--schedule none`` and ``--dtype float64`` the protocol of docs/results.md's
news20_same tables; the picture then shows every grid (1-D: a strip; 3-D: its slices)::

    python experiments/news20_different_map.py --data news20_same --classifiers cg,mnb \\
        --grids 400/4,1600/16,40x40/4x4,12x12x12/3x3x2 --schedule none --dtype float64 \\
        --png docs/img/news20_same_label_maps.png --json /tmp/n20/label_maps.json
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.feature_selection import SelectKBest, chi2
from sklearn.naive_bayes import MultinomialNB

from countgrid.grid import CountingGridClassifier, GenerativeCountingGridClassifier

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "data"))
from repo_data import data_path  # data/repo_data.py


def parse_grid(spec):
    """'400/4' -> ((400,), (4,)); '40x40/4x4' -> ((40, 40), (4, 4))."""
    e, w = spec.split("/")
    return tuple(int(v) for v in e.split("x")), tuple(int(v) for v in w.split("x"))


def grid_label(extent, window):
    return "x".join(map(str, extent)) + " / " + "x".join(map(str, window))


def label_rgb(gamma):
    """Class proportions of a 3-class label embedding as RGB (the paper's Fig. 3)."""
    g = np.asarray(gamma, dtype=np.float64)
    return g / np.maximum(g.sum(axis=-1, keepdims=True), np.finfo(np.float64).tiny)


def draw_maps(clfs, names, path):
    """One panel per grid: a 1-D grid as a strip, 2-D as an image, 3-D as its slices."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    # inches per panel: a strip (1-D), an image (2-D), a row of slices (3-D)
    heights = [{2: 1.3, 3: 3.4}.get(len(c.grid_.pi_.shape), 1.7) for _, c, _ in clfs]
    fig = plt.figure(figsize=(11, sum(heights) + 0.5), layout="constrained")
    subs = fig.subfigures(len(clfs), 1, height_ratios=heights)
    for sub, (label, clf, acc) in zip(np.atleast_1d(subs), clfs):
        rgb = label_rgb(clf.gamma_)
        title = f"{label}: test accuracy {100 * acc:.2f} %"
        if rgb.ndim == 2:                       # 1-D grid: (E, 3)
            ax = sub.subplots()
            ax.imshow(rgb[None, :, :], aspect="auto", interpolation="nearest")
            ax.set_yticks([])
            ax.set_xlabel("cell (1-D torus)")
        elif rgb.ndim == 3:                     # 2-D grid
            ax = sub.subplots()
            ax.imshow(rgb, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
        else:                                   # 3-D grid: one panel per slice of the last axis
            n = rgb.shape[2]
            axes = sub.subplots(1, n)
            for k, ax in enumerate(np.atleast_1d(axes)):
                ax.imshow(rgb[:, :, k], interpolation="nearest")
                ax.set_xticks([])
                ax.set_yticks([])
                ax.set_title(f"slice {k}", fontsize=7)
        sub.suptitle(title, fontsize=9)
    handles = [Patch(color=c, label=str(n)) for c, n in zip("rgb", names)]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    fig.savefig(path, dpi=72)
    print(f"wrote {path}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default="news20_different",
                   help="corpus of data/ with an official split (default news20_different)")
    p.add_argument("--words", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--classifiers", default="cg,generative,mnb",
                   help="comma list of cg (label embedding), generative, mnb")
    p.add_argument("--grids", default=None,
                   help="comma list of E/W specs for the label-embedding grid (default: "
                        "the package default, extent='auto' and a 4x4 window)")
    p.add_argument("--schedule", choices=["default", "none"], default="default",
                   help="window schedule of the label-embedding grids")
    p.add_argument("--dtype", choices=["default", "float64", "float32"], default="default",
                   help="precision of the grids (default: the package default, float32)")
    p.add_argument("--json", default=None)
    p.add_argument("--png", default=None)
    a = p.parse_args(argv)
    wanted = set(a.classifiers.split(","))
    path = data_path(f"{a.data}.npz")
    z = np.load(path, allow_pickle=False)
    X, y, names = sp.load_npz(path).tocsr(), z["y"], z["label_names"]
    split = z["split_names"][z["split"]] if "split_names" in z else z["split"]
    tr, te = np.flatnonzero(split == "train"), np.flatnonzero(split == "test")
    sel = SelectKBest(chi2, k=a.words).fit(X[tr], y[tr])
    Xtr, Xte = sp.csr_matrix(sel.transform(X[tr])), sp.csr_matrix(sel.transform(X[te]))
    keep = np.asarray(Xtr.sum(axis=1)).ravel() > 0
    Xtr, ytr = Xtr[keep], y[tr][keep]

    kw = {"random_state": a.seed, "num_threads": a.threads}
    if a.dtype != "default":
        kw["dtype"] = np.dtype(a.dtype).type
    grid_kw = dict(kw)
    if a.schedule == "none":
        grid_kw["window_schedule"] = None
    models = []
    if "cg" in wanted:
        if a.grids:
            for spec in a.grids.split(","):
                extent, window = parse_grid(spec)
                models.append((f"CountingGridClassifier {grid_label(extent, window)}",
                               CountingGridClassifier(extent, window, **grid_kw)))
        else:
            models.append(("CountingGridClassifier() (defaults)",
                           CountingGridClassifier(**grid_kw)))
    if "generative" in wanted:
        models.append(("GenerativeCountingGridClassifier() (defaults)",
                       GenerativeCountingGridClassifier(**grid_kw)))
    if "mnb" in wanted:
        models.append(("multinomial naive Bayes", MultinomialNB()))
    rows = []
    for name, est in models:
        t0 = time.perf_counter()
        est.fit(Xtr, ytr)
        acc = float(np.mean(est.predict(Xte) == y[te]))
        rows.append((name, acc, time.perf_counter() - t0, est))
        print(f"{name:48s} test accuracy {100 * acc:.2f} %  fit {rows[-1][2]:.0f} s",
              flush=True)
    grids = [(n, e, acc) for n, acc, _, e in rows if isinstance(e, CountingGridClassifier)]
    print(f"{a.data}: {len(tr)} training / {len(te)} test posts, {a.words} chi2 words; "
          + "; ".join(f"{n}: grid {e.grid_.pi_.shape[:-1]}, window {e.grid_.window}"
                      for n, e, _ in grids))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"args": vars(a), "n_train": len(tr), "n_test": len(te),
                       "results": {n: {"accuracy": acc, "fit_seconds": s}
                                   for n, acc, s, _ in rows}}, fh, indent=1)
    if a.png and grids:
        if len(grids) == 1 and grids[0][1].grid_.pi_.ndim == 3 and not a.grids:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            from countgrid.plotting import plot_label_embedding

            fig, ax = plt.subplots(figsize=(5, 5))
            plot_label_embedding(grids[0][1], ax=ax, label_names=[str(n) for n in names])
            fig.savefig(a.png, dpi=110, bbox_inches="tight")
            print(f"wrote {a.png}")
        else:
            draw_maps([(n.replace("CountingGridClassifier ", "CG "), e, acc)
                       for n, e, acc in grids], [str(n) for n in names], a.png)


if __name__ == "__main__":
    main()
