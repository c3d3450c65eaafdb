#!/usr/bin/env python
"""Which words should a cell of a counting grid show? (issue 22, item 3)

A grid is fitted with the package defaults (``CountingGrid(random_state=seed)``: 4x4
window, ``extent="auto"``, the coarse-to-fine window schedule) on the training documents of
a labelled corpus, vectorised as ``countgrid fit`` does by default (English stop words
dropped, words in at least 2 documents and at most half of them), keeping the ``--words``
most frequent.  Every cell's top 5 words are then chosen by each rule, and measured on the
training documents only:

- ``idf``: mean ``log(N / df(w))`` of the words (specific words have a high idf);
- ``in-cell df``: mean fraction of the cell's documents that contain the word (does the
  word describe the documents there?), the documents weighted by their window coverage
  ``s_t(i)`` of the cell (countgrid.grid._browse);
- ``cell lift``: geometric mean of in-cell df / corpus df (how much more the cell's
  documents use the word than the corpus);
- ``class P`` / ``class R`` / ``class F1``: the word as a query for the category that
  dominates the cell (coverage-weighted class distribution, as the map's colouring):
  precision ``P(class | w)``, recall ``P(w | class)`` (document frequencies) and their
  harmonic mean.  F1 is high for words that are both specific to the cell's category and
  used by most of its documents;
- ``distinct``: distinct words among all cells' top 5 (boilerplate repeats everywhere).

Averages over cells are weighted by the cells' document mass ``sum_t s_t(i)``.

Rules: ``probability`` (``pi``), LDAvis relevance with lambda in 0..0.9
(``lambda log pi + (1 - lambda) log(pi / p(w))``, ``p`` the grid's average word
distribution; lambda = 0 is the lift ``pi / p``), ``idf`` (``pi * smooth idf``, the map's old
``idf=True``) and FREX (Bischof & Airoldi 2012, weight 1/2, as STM's ``labelTopics``).

``--holdout`` fits on a random half of the training documents and measures on the other
half (do the words describe new documents placed in the cell too?); the choice of lambda
(docs/results.md, "Which words a cell shows") is the rule with the highest held-out
``cell info`` averaged over the corpora, each relative to its best rule (``--summary``).

    PYTHONPATH=src python experiments/word_relevance.py --data news20_full --holdout \
        --cache /tmp/wr --json /tmp/wr/news20_full_half.json
    (the same for reuters_r8 and news20_different; without --holdout: in-sample)
    PYTHONPATH=src python experiments/word_relevance.py --summary /tmp/wr/*_half.json
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

import countgrid
from countgrid.grid import word_weights
from countgrid.grid._browse import window_coverage
from countgrid.grid._words import _top_k_rows

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "data"))
from repo_data import data_path  # noqa: E402  (data/repo_data.py)

LAMBDAS = (0.0, 0.2, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
TOP = 5


def load(name, n_words):
    """Training documents (all of a corpus without a split), the CLI's default vocabulary
    (no English stop words, 2 <= df <= N/2), the n_words most frequent of it."""
    path = data_path(name + ".npz")
    z = np.load(path, allow_pickle=False)
    X = sp.load_npz(path).tocsr()
    y, labels, words = z["y"], z["label_names"], z["feature_names"].astype(str)
    if "split" in z:
        split = z["split_names"][z["split"]] if "split_names" in z else z["split"]
        rows = np.flatnonzero(split == "train")
        X, y = X[rows], y[rows]
    cols = fit_vocabulary(X, words, n_words)
    X = X[:, cols]
    nonempty = np.asarray(X.sum(axis=1)).ravel() > 0
    return X[nonempty], y[nonempty], labels, words[cols]


def fit_vocabulary(X, words, n_words):
    """The columns of the CLI's default vocabulary of the documents ``X`` (CSR): no English
    stop words, 2 <= df <= N/2, the ``n_words`` most frequent of it, in column order."""
    df = np.bincount(X.indices, minlength=X.shape[1])
    keep = (df >= 2) & (df <= 0.5 * X.shape[0]) & np.array(
        [len(w) >= 2 and w not in ENGLISH_STOP_WORDS for w in words])
    cols = np.flatnonzero(keep)
    tf = np.asarray(X[:, cols].sum(axis=0)).ravel()
    return np.sort(cols[np.argsort(-tf, kind="stable")[:n_words]])


def frex_scores(pi, weight=0.5):
    """FREX of every word in every cell (STM's calcfrex): the weighted harmonic mean of
    the within-cell ECDF ranks of exclusivity ``pi / sum_cells pi`` and of frequency."""
    L, Z = pi.shape
    excl = pi / pi.sum(axis=0, keepdims=True)

    def ecdf(a):
        r = np.empty_like(a)
        r[np.arange(L)[:, None], np.argsort(a, axis=1, kind="stable")] = np.arange(1, Z + 1)
        return r / Z
    return 1.0 / (weight / ecdf(excl) + (1 - weight) / ecdf(pi))


def measure(top, stats):
    """The measures of the top words (L, k) of every cell."""
    w = stats["mass"] / stats["mass"].sum()
    rows = np.arange(top.shape[0])[:, None]
    F = stats["F"][rows, top]
    cdf = (stats["df"][top] + 1.0) / (stats["N"] + 1.0)     # a word no one used: 1 / (N + 1)
    c = stats["dominant"][:, None]
    P = stats["dfc"][c, top] / np.maximum(stats["df"][top], 1)
    R = stats["dfc"][c, top] / stats["Nc"][c]
    F1 = np.where(P + R > 0, 2 * P * R / np.maximum(P + R, 1e-300), 0.0)
    avg = lambda a: float(w @ a.mean(axis=1))  # noqa: E731
    return {"idf": avg(stats["idf"][top]), "in_cell_df": avg(F),
            "cell_lift": float(np.exp(avg(np.log(np.maximum(F, 1e-12) / cdf)))),
            "cell_info": avg(binary_kl(F, cdf)),
            "class_P": avg(P), "class_R": avg(R), "class_F1": avg(F1),
            "class_info": avg(binary_kl(R, cdf)),
            "distinct": int(np.unique(top).size)}


def binary_kl(f, q):
    """KL(Bernoulli(f) || Bernoulli(q)) in nats: what a word's presence in a document
    tells about it being one of the cell's (class's) documents, rate f, against the
    corpus rate q.  Boilerplate (f and q both high) and rare words (f and q both small)
    score low; words most of the cell's documents use and few others do score high."""
    f = np.clip(f, 1e-12, 1 - 1e-12)
    q = np.clip(q, 1e-12, 1 - 1e-12)
    return f * np.log(f / q) + (1 - f) * np.log((1 - f) / (1 - q))


def statistics(grid, X, y, n_classes):
    """What measure() needs, from the documents X (labels y) placed on the grid."""
    extent, window = grid.pi_.shape[:-1], tuple(grid.window)
    N = X.shape[0]
    S = window_coverage(grid.transform(X), extent, window)             # (N, L)
    B = (X > 0).astype(np.float64).tocsr()
    Y = sp.csr_matrix((np.ones(N), (np.arange(N), y)), shape=(N, n_classes))
    mass = S.sum(axis=0)
    df = np.asarray(B.sum(axis=0)).ravel()
    cls = np.asarray((Y.T @ S).T)                                        # (L, C)
    return {"mass": mass, "F": np.asarray((B.T @ S).T) / mass[:, None], "df": df, "N": N,
            "idf": np.log(N / np.maximum(df, 1)), "dominant": np.argmax(cls, axis=1),
            "dfc": np.asarray((Y.T @ B).todense()),
            "Nc": np.maximum(np.bincount(y, minlength=n_classes), 1),
            "purity": float((cls.max(axis=1) / cls.sum(axis=1)) @ (mass / mass.sum()))}


def summary(paths):
    """Mean over corpora of each rule's cell info and class P relative to the corpus's
    best rule, and its mean idf and in-cell df relative to the probability ranking."""
    runs = []
    for path in paths:
        with open(path) as fh:
            runs.append(json.load(fh))
    rules = list(runs[0]["results"])
    names = ", ".join(r["data"] for r in runs)
    print(f"relative to each corpus's best rule (cell info, class P) or to probability "
          f"(idf, in-cell df), averaged over {names}:")
    print("| rule | cell info | class P | idf | in-cell df |")
    print("|---|---|---|---|---|")
    for rule in rules:
        rel = {}
        for key in ("cell_info", "class_P"):
            rel[key] = np.mean([r["results"][rule][key] / max(v[key] for v in
                                                              r["results"].values())
                                for r in runs])
        for key in ("idf", "in_cell_df"):
            rel[key] = np.mean([r["results"][rule][key] / r["results"]["probability"][key]
                                for r in runs])
        print(f"| {rule} | {100 * rel['cell_info']:.1f} % | {100 * rel['class_P']:.1f} % | "
              f"{100 * rel['idf']:.0f} % | {100 * rel['in_cell_df']:.0f} % |")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default="reuters_r8")
    p.add_argument("--words", type=int, default=5000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--holdout", action="store_true",
                   help="fit on a random half of the training documents and measure on the "
                        "other half (words that describe new documents too)")
    p.add_argument("--cache", default=None, help="folder for the fitted grid (reused)")
    p.add_argument("--json", default=None)
    p.add_argument("--summary", nargs="+", default=None, metavar="JSON",
                   help="print each rule's measures relative to the best rule of each "
                        "corpus, averaged over these result files, and stop")
    a = p.parse_args(argv)
    if a.summary:
        return summary(a.summary)
    X, y, labels, words = load(a.data, a.words)
    Xm, ym = X, y
    if a.holdout:
        perm = np.random.default_rng(a.seed).permutation(X.shape[0])
        fit_rows, eval_rows = np.sort(perm[:len(perm) // 2]), np.sort(perm[len(perm) // 2:])
        X, y, Xm, ym = X[fit_rows], y[fit_rows], X[eval_rows], y[eval_rows]
    N, Z = X.shape
    t0 = time.perf_counter()
    tag = "_half" if a.holdout else ""
    cache = os.path.join(a.cache, f"{a.data}_{a.words}_{a.seed}{tag}.npz") if a.cache else None
    if cache and os.path.exists(cache):
        grid = countgrid.load(cache)
    else:
        grid = countgrid.CountingGrid(random_state=a.seed, num_threads=a.threads).fit(X)
        if cache:
            os.makedirs(a.cache, exist_ok=True)
            grid.save(cache)
    fit_s = time.perf_counter() - t0
    extent, window = grid.pi_.shape[:-1], tuple(grid.window)
    L = int(np.prod(extent))
    print(f"{a.data}: fitted on {N} training documents, measured on {Xm.shape[0]} "
          f"({'the other half' if a.holdout else 'the same'}); {Z} words, {len(labels)} "
          f"classes; grid {extent} window {window} ({fit_s:.0f} s)", flush=True)
    stats = statistics(grid, Xm, ym, len(labels))
    purity, mass = stats["purity"], stats["mass"]

    pi = np.asarray(grid.pi_, dtype=np.float64).reshape(L, Z)
    rules = {"probability": pi}
    for lam in LAMBDAS:
        rules[f"relevance {lam:g}"] = pi * word_weights(grid.pi_, "relevance",
                                                        relevance_lambda=lam)
    rules["idf"] = pi * word_weights(grid.pi_, "idf", X=X)
    rules["FREX"] = frex_scores(pi)
    results = {}
    print("| rule | idf | in-cell df | cell lift | cell info | class P | class R | class F1 "
          "| class info | distinct |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    examples = {}
    big = np.argsort(-mass)[:3]
    for name, score in rules.items():
        top = _top_k_rows(score, TOP)
        m = results[name] = measure(top, stats)
        examples[name] = [" ".join(words[top[i]]) for i in big]
        print(f"| {name} | {m['idf']:.2f} | {m['in_cell_df']:.3f} | {m['cell_lift']:.2f} | "
              f"{m['cell_info']:.3f} | {m['class_P']:.3f} | {m['class_R']:.3f} | "
              f"{m['class_F1']:.3f} | {m['class_info']:.3f} | {m['distinct']} |", flush=True)
    for name in ("probability", "relevance 0.7", "idf", "FREX", "relevance 0"):
        print(f"{name:>14}: " + " / ".join(examples[name]))
    if a.json:
        os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
        with open(a.json, "w") as fh:
            json.dump({"data": a.data, "n_documents": N, "n_words": Z, "seed": a.seed,
                       "holdout": a.holdout, "n_measured": int(Xm.shape[0]),
                       "extent": list(extent), "window": list(window), "fit_s": fit_s,
                       "purity": purity, "results": results, "examples": examples},
                      fh, indent=1)


if __name__ == "__main__":
    main()
