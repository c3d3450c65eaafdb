"""Write the model files of countgrid 0.1.0 that tests/io/test_fixtures_v010.py loads.

Run once, with countgrid 0.1.0 (commit 437cc1d) installed, from the repository root:

    COUNTGRID_SIMD=baseline python tools/make_v010_fixtures.py

For every saveable estimator of 0.1.0 (and a few variants: float32, learned prior,
plain Poisson GTM, FS with the topic-prior block) it fits a small model on the bundled
20 Newsgroups subset, saves it with ``estimator.save`` into
``tests/fixtures/v0_1_0/<name>.npz`` and stores, in ``<name>.expected.npz``, the
outputs of its inference methods on held-out documents, computed by 0.1.0 itself.
Later versions must load the files and reproduce those outputs bit for bit (on the
machine kind that wrote them; see the test).  Only 0.1.0 import paths are used, so the
script documents what 0.1.0 could do; it is not meant to be rerun by later versions.
"""
import json
import os
import platform
import sys

import numpy as np

import countgrid
from countgrid.datasets import load_news20_3class

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests",
                   "fixtures", "v0_1_0")


def corpus():
    data = load_news20_3class()
    X, y = data.X, data.y
    rng = np.random.default_rng(20261123)
    rows = np.concatenate([rng.choice(np.flatnonzero(y == c), 30, replace=False)
                           for c in range(3)])
    words = np.argsort(-np.asarray(X[rows].sum(axis=0)).ravel(), kind="stable")[:60]
    Xs = X[rows][:, np.sort(words)].tocsr()
    keep = np.asarray(Xs.sum(axis=1)).ravel() > 0
    Xs, ys = Xs[keep], y[rows][keep]
    perm = rng.permutation(Xs.shape[0])
    Xs, ys = Xs[perm], ys[perm]
    return Xs[:60], ys[:60], Xs[60:], ys[60:]


def histogram():
    rng = np.random.default_rng(3)
    s = np.r_[rng.normal(-1.5, 0.6, (400, 2)), rng.normal(1.5, 0.5, (400, 2))]
    edges = np.linspace(-4, 4, 17)
    W, _, _ = np.histogram2d(s[:, 0], s[:, 1], bins=[edges, edges])
    c = (edges[:-1] + edges[1:]) / 2
    return W, [c, c]


def outputs(est, X_test):
    out = {}
    for name in ("transform", "predict", "predict_proba", "score_samples",
                 "class_log_likelihoods", "positions", "expected_hidden"):
        method = getattr(est, name, None)
        if method is None:
            continue
        value = method(X_test)
        out[name] = value.toarray() if hasattr(value, "toarray") else np.asarray(value)
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    X, y, Xt, yt = corpus()
    grid = dict(extent=(5, 5), window=(2, 2), n_iter=8, random_state=0)
    plsa = dict(n_components=3, n_iter=15, random_state=0)
    cases = {
        "CountingGrid": (countgrid.CountingGrid(**grid), True),
        "CountingGrid_f32_prior": (countgrid.CountingGrid(dtype=np.float32, learn_prior=True,
                                                          window_schedule=[((3, 3), 3)],
                                                          **grid), True),
        "CountingGridClassifier": (countgrid.CountingGridClassifier(**grid), "y"),
        "CountingGridRegressor": (countgrid.CountingGridRegressor(**grid), "yreal"),
        "GenerativeCountingGridClassifier": (
            countgrid.GenerativeCountingGridClassifier(**grid), "y"),
        "PLSA": (countgrid.PLSA(**plsa), True),
        "PLSA_f32_tempered": (countgrid.PLSA(dtype=np.float32, tempered=True, **plsa), True),
        "ZIPGTM": (countgrid.ZIPGTM(grid_shape=(4, 5), n_basis=4, n_iter=5, random_state=0),
                   True),
        "ZIPGTM_poisson": (countgrid.ZIPGTM(grid_shape=(3, 3), n_basis=4, n_iter=5,
                                            zero_inflation=False, basis="rbf",
                                            random_state=0), True),
        "RAP": (countgrid.RAP(n_components=4, n_epochs=2, batch_size=16, random_state=0), True),
        "RAP_f32_mean_field": (countgrid.RAP(n_components=3, n_trials=[1, 2, 3], n_epochs=2,
                                             method="mean_field", dtype=np.float32,
                                             random_state=0), True),
        "LSI": (countgrid.LSI(n_components=4, random_state=0), True),
        "MixtureOfTopics": (countgrid.MixtureOfTopics(**plsa), "y"),
        "FisherScore": (countgrid.FisherScore(reduce="words", include_topic_prior=True,
                                              **plsa), "y"),
        "TOPEmbedding": (countgrid.TOPEmbedding(**plsa), "y"),
        "LLREmbedding": (countgrid.LLREmbedding(positivize="split", **plsa), "y"),
        "FreeEnergyScoreSpace": (countgrid.FreeEnergyScoreSpace(mode="whole_data",
                                                                reduce="topics", **plsa), True),
        "PosteriorDivergence": (countgrid.PosteriorDivergence(**plsa), "y"),
        "CountingGridPosterior": (countgrid.CountingGridPosterior(extent=(4, 4),
                                                                  window=(2, 2), n_iter=5,
                                                                  random_state=0), "y"),
        "CountingGridFESS": (countgrid.CountingGridFESS(extent=(4, 4), window=(2, 2),
                                                        reduce="features", n_iter=5,
                                                        random_state=0), "y"),
    }
    index = {}
    for name, (est, target) in cases.items():
        if target is True:
            est.fit(X)
        elif target == "yreal":
            est.fit(X, y.astype(np.float64) * 1.5 - 0.5)
        else:
            est.fit(X, y)
        est.save(os.path.join(OUT, f"{name}.npz"))
        out = outputs(est, Xt)
        np.savez_compressed(os.path.join(OUT, f"{name}.expected.npz"), X_test=Xt.toarray(),
                            **out)
        index[name] = {"class": type(est).__name__, "outputs": sorted(out)}
        print(f"{name}: {sorted(out)}")
    gmm = countgrid.HistogramGMM(2, random_state=0, n_iter=20).fit(*histogram())
    gmm.save(os.path.join(OUT, "HistogramGMM.npz"))
    points = np.stack(np.meshgrid(np.linspace(-3, 3, 7), np.linspace(-3, 3, 7)), -1)
    np.savez_compressed(os.path.join(OUT, "HistogramGMM.expected.npz"), X_test=points,
                        score_samples=gmm.score_samples(points),
                        predict_proba=gmm.predict_proba(points))
    index["HistogramGMM"] = {"class": "HistogramGMM",
                             "outputs": ["predict_proba", "score_samples"]}
    from numpy._core._multiarray_umath import __cpu_features__ as features

    meta = {"countgrid": countgrid.__version__,
            "machine": platform.machine(),
            "countgrid_simd": os.environ.get("COUNTGRID_SIMD", "native"),
            "numpy": np.__version__,
            "numpy_cpu_features": sorted(k for k, v in features.items() if v),
            "files": index}
    with open(os.path.join(OUT, "index.json"), "w") as fh:
        json.dump(meta, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    if countgrid.__version__ != "0.1.0":
        sys.exit("run this with countgrid 0.1.0 installed")
    main()
