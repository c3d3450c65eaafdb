"""Write the example pictures of docs/img/ (docs/counting_grids.md, "Pictures").

One command, from the repository root, with countgrid and matplotlib installed:

    python tools/make_doc_images.py [--out docs/img]

Every model is fitted on the bundled 20 Newsgroups subset (``load_news20_3class``) with a
fixed seed and one thread, and matplotlib's PNG metadata (software version, date) is
dropped, so that a rerun on the same machine writes the same bytes.  Each image is
checked to stay under 200 KB.
"""
import argparse
import os
import sys
import warnings

import numpy as np

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import countgrid  # noqa: E402
from countgrid.datasets import load_news20_3class  # noqa: E402
from countgrid.exceptions import ConvergenceWarning  # noqa: E402
from countgrid.plotting import (plot_label_embedding, plot_log_likelihood,  # noqa: E402
                                plot_positions, plot_top_words, plot_word_map,
                                plot_zip_gtm_map)

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
MAX_BYTES = 200_000
SEED = 0


def save(fig, path):
    fig.savefig(path, dpi=80, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    size = os.path.getsize(path)
    if size > MAX_BYTES:
        raise SystemExit(f"{path} is {size} bytes, over {MAX_BYTES}")
    print(f"wrote {os.path.relpath(path)} ({size // 1024} KB)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "img"))
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    out = lambda name: os.path.join(args.out, name)  # noqa: E731
    warnings.simplefilter("ignore", ConvergenceWarning)

    X, y, words, label_names = load_news20_3class()
    labels = label_names[y]
    common = dict(random_state=SEED, num_threads=1)

    clf = countgrid.CountingGridClassifier(
        (24, 24), (4, 4), n_iter=40, window_schedule=[((8, 8), 10)], **common).fit(X, labels)
    save(plot_label_embedding(clf).figure, out("label_embedding.png"))
    save(plot_positions(clf, X, labels, jitter=0.4).figure, out("positions.png"))
    save(plot_word_map(clf, "space", words).figure, out("word_map.png"))
    save(plot_log_likelihood(clf).figure, out("log_likelihood_grid.png"))

    plsa = countgrid.PLSA(6, n_iter=60, **common).fit(X)
    save(plot_top_words(plsa, words, n_words=8, ncols=3), out("top_words.png"))

    # ZIP-GTM on the 500 most frequent words (docs/zip_gtm.md works on a few hundred)
    top = np.sort(np.argsort(-np.asarray(X.sum(axis=0)).ravel(), kind="stable")[:500])
    Xs = X[:, top]
    keep = np.asarray(Xs.sum(axis=1)).ravel() > 0
    gtm = countgrid.ZIPGTM(grid_shape=(10, 10), n_basis=16, n_iter=30, **common).fit(Xs[keep])
    save(plot_zip_gtm_map(gtm, Xs[keep], labels[keep]).figure, out("zip_gtm_map.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
