#!/usr/bin/env python
"""Counting grids on news20_different, the easy subset of 20 Newsgroups (Jojic & Perina,
UAI 2011, Fig. 3c): label embedding with the package defaults on the official bydate split,
test accuracy, and the picture of the embedded labels (where the three classes live).

Vocabulary: the ``--words`` (2000) words of highest chi2 on the training split.  Classifier:
``CountingGridClassifier()`` with nothing set but the seed (4x4 window, grid sized by
``extent="auto"``: 40x40 for 1,670 posts, coarse-to-fine window schedule); baselines on the
same counts: multinomial naive Bayes and, as in the paper's Fig. 3, the generative
one-grid-per-class classifier.

    python experiments/news20_different_map.py --png docs/img/news20_different_labels.png
"""
import argparse
import os
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.feature_selection import SelectKBest, chi2
from sklearn.naive_bayes import MultinomialNB

import countgrid

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "data"))
from repo_data import data_path  # noqa: E402  (data/repo_data.py)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--words", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--png", default=None)
    a = p.parse_args(argv)
    path = data_path("news20_different.npz")
    z = np.load(path, allow_pickle=False)
    X, y, names = sp.load_npz(path).tocsr(), z["y"], z["label_names"]
    split = z["split_names"][z["split"]] if "split_names" in z else z["split"]
    tr, te = np.flatnonzero(split == "train"), np.flatnonzero(split == "test")
    sel = SelectKBest(chi2, k=a.words).fit(X[tr], y[tr])
    Xtr, Xte = sp.csr_matrix(sel.transform(X[tr])), sp.csr_matrix(sel.transform(X[te]))
    keep = np.asarray(Xtr.sum(axis=1)).ravel() > 0
    Xtr, ytr = Xtr[keep], y[tr][keep]
    rows = []
    for name, est in [
            ("CountingGridClassifier() (defaults)",
             countgrid.CountingGridClassifier(random_state=a.seed, num_threads=a.threads)),
            ("GenerativeCountingGridClassifier() (defaults)",
             countgrid.GenerativeCountingGridClassifier(random_state=a.seed,
                                                        num_threads=a.threads)),
            ("multinomial naive Bayes", MultinomialNB())]:
        t0 = time.perf_counter()
        est.fit(Xtr, ytr)
        acc = float(np.mean(est.predict(Xte) == y[te]))
        rows.append((name, acc, time.perf_counter() - t0, est))
        print(f"{name:48s} test accuracy {100 * acc:.2f} %  fit {rows[-1][2]:.0f} s",
              flush=True)
    clf = rows[0][3]
    print(f"news20_different: {len(tr)} training / {len(te)} test posts, {a.words} chi2 words; "
          f"label-embedding grid {clf.grid_.pi_.shape[:-1]}, window {clf.grid_.window}")
    if a.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from countgrid.plotting import plot_label_embedding
        fig, ax = plt.subplots(figsize=(5, 5))
        plot_label_embedding(clf, ax=ax, label_names=[str(n) for n in names])
        fig.savefig(a.png, dpi=110, bbox_inches="tight")
        print(f"wrote {a.png}")


if __name__ == "__main__":
    main()
