#!/usr/bin/env python
"""Generative embeddings x information-theoretic kernels x {SVM, k-NN} (Bicego et al.,
Neurocomputing 2013; spec generative_embeddings.md §5), with the counting-grid classifiers
on the same folds.

Per outer fold (stratified k-fold, everything learned on the training fold only):

1. (news20_same) the ``--k`` (2000) words with the highest chi2 score on the training fold;
   (colon_alon1999) intensities -> counts ``round(x / --colon-scale)`` (default 10).
2. every embedding of ``countgrid.embeddings`` is fitted on the training documents and
   applied to training and test documents (folding-in);
3. for each kernel (linear; Jensen-Shannon; Jensen-Tsallis q = 0.5 and 1.5 on the
   L1-normalised embedding) the training and test Gram matrices are computed once and
   divided by the mean training self-similarity (a rescaling of C only);
4. SVM: ``SVC(kernel="precomputed")`` with C in {1e-2, ..., 1e4} (news20: {0.1, 1, 10,
   100}) picked by an inner
   stratified 3-fold CV on the training Gram matrix; k-NN on the kernel-induced distance
   ``d^2 = k(x,x) + k(y,y) - 2 k(x,y)`` with k in {1, 3, 5, 7} picked the same way.
   (This is what ``countgrid.ITKernelClassifier`` does, with the embedding and the Gram
   matrices shared between the kernel/classifier cells of the table.)
5. counting-grid classifiers on the same folds: ``GenerativeCountingGridClassifier`` (one
   grid per class, largest likelihood) and ``CountingGridClassifier`` (label embedding).

Usage (from the repository root)::

    PYTHONPATH=src python experiments/it_kernels_embeddings.py --dataset colon --json /tmp/itk/colon.json
    PYTHONPATH=src python experiments/it_kernels_embeddings.py --dataset news20 --max-folds 2 \\
        --json /tmp/itk/news20.json

Data: ``$COUNTGRID_DATA_DIR`` or ``<repo>/../shared/data``.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.feature_selection import SelectKBest, chi2
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC

import countgrid
from countgrid.kernels import jensen_tsallis_kernel

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA_DIR = os.environ.get("COUNTGRID_DATA_DIR", os.path.join(REPO, "..", "shared", "data"))
KERNELS = {"linear": None, "JS": 1.0, "JT q=0.5": 0.5, "JT q=1.5": 1.5}
C_GRID = [1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3, 1e4]
K_GRID = [1, 3, 5, 7]


def load(name):
    path = os.path.join(DATA_DIR, name + ".npz")
    X = sp.load_npz(path).tocsr().astype(np.float64)
    y = np.load(path, allow_pickle=False)["y"]
    return X, y


def embeddings(dataset, Z, seed, threads):
    kw = dict(n_components=Z, n_iter=100, random_state=seed, num_threads=threads)
    # word-topic blocks are kept whole on colon (2000 genes); summed over words on news20
    red = "none" if dataset == "colon" else "topics"
    grid = dict(extent=(10, 10), window=(3, 3), n_iter=50, random_state=seed,
                num_threads=threads)
    E = countgrid
    return {
        "MT-1": E.MixtureOfTopics(mode="1", **kw), "MT-2": E.MixtureOfTopics(mode="2", **kw),
        "FS-1": E.FisherScore(mode="1", reduce=red, **kw),
        "FS-2": E.FisherScore(mode="2", reduce=red, **kw),
        "TOP-1": E.TOPEmbedding(mode="1", reduce="topics", **kw),
        "LLR-1": E.LLREmbedding(mode="1", reduce="topics", **kw),
        "FESS-1": E.FreeEnergyScoreSpace(mode="1", reduce=red, **kw),
        "FESS-2": E.FreeEnergyScoreSpace(mode="2", reduce=red, **kw),
        "PD-1": E.PosteriorDivergence(mode="1", **kw),
        "PD-2": E.PosteriorDivergence(mode="2", **kw),
        "CG posterior-1": E.CountingGridPosterior(mode="1", **grid),
        "CG posterior-2": E.CountingGridPosterior(mode="2", **grid),
        "CG FESS-1": E.CountingGridFESS(mode="1", reduce="features", **grid),
        "CG FESS-2": E.CountingGridFESS(mode="2", reduce="features", **grid),
    }


def dense_if_full(M):
    """Dense rows are much faster in the kernels when most entries are non-zero (colon)."""
    if sp.issparse(M) and M.nnz > 0.3 * M.shape[0] * M.shape[1]:
        return M.toarray()
    return M


def gram(A, B, q, threads):
    if q is None:
        K = A @ B.T
        return np.asarray(K.toarray() if sp.issparse(K) else K, dtype=np.float64)
    return np.asarray(jensen_tsallis_kernel(A, B, q=q, num_threads=threads), dtype=np.float64)


def self_kernel(A, q, threads):
    if q is None:
        return np.asarray((A.multiply(A)).sum(axis=1)).ravel() if sp.issparse(A) else \
            np.einsum("ij,ij->i", A, A)
    # k_JT,q(p, p) = 2^-q (2^q - 2) / (q - 1) sum_i p_i^q on the L1-normalised row
    # (ln 2 at q = 1); 0 for a zero row
    mass = np.asarray(A.sum(axis=1)).ravel()
    P = A.multiply(1.0 / np.where(mass > 0, mass, 1.0)[:, None]).tocsr() if sp.issparse(A) \
        else A / np.where(mass > 0, mass, 1.0)[:, None]
    if q == 1.0:
        val = np.full(A.shape[0], np.log(2.0))
    else:
        Pq = P.power(q) if sp.issparse(P) else np.power(P, q)
        val = 2.0 ** -q * (2.0 ** q - 2.0) / (q - 1.0) * np.asarray(Pq.sum(axis=1)).ravel()
    return np.where(mass > 0, val, 0.0)


def knn_predict(D, ytr, k):
    nn = np.argsort(D, axis=1, kind="stable")[:, :k]
    lab = ytr[nn]
    n_cls = int(ytr.max()) + 1
    votes = np.zeros((D.shape[0], n_cls))
    dsum = np.zeros((D.shape[0], n_cls))
    rows = np.repeat(np.arange(D.shape[0]), k)
    np.add.at(votes, (rows, lab.ravel()), 1.0)
    np.add.at(dsum, (rows, lab.ravel()), np.take_along_axis(D, nn, axis=1).ravel())
    return np.argmax(votes - 0.5 * dsum / (dsum.max() + 1.0), axis=1)


def inner_select(Ktr, ytr, dtr, seed):
    """Pick C (SVM) and k (k-NN) by inner stratified 3-fold CV on the training Gram matrix."""
    inner = list(StratifiedKFold(3, shuffle=True, random_state=seed).split(Ktr, ytr))
    Dtr = np.sqrt(np.maximum(dtr[:, None] + dtr[None, :] - 2 * Ktr, 0))
    svm_acc = {C: 0.0 for C in C_GRID}
    knn_acc = {k: 0.0 for k in K_GRID}
    for a, b in inner:
        for C in C_GRID:
            svc = SVC(kernel="precomputed", C=C).fit(Ktr[np.ix_(a, a)], ytr[a])
            svm_acc[C] += np.mean(svc.predict(Ktr[np.ix_(b, a)]) == ytr[b])
        for k in K_GRID:
            knn_acc[k] += np.mean(knn_predict(Dtr[np.ix_(b, a)], ytr[a], k) == ytr[b])
    return max(C_GRID, key=lambda C: (svm_acc[C], -abs(np.log10(C)))), \
        max(K_GRID, key=lambda k: (knn_acc[k], -k))


def evaluate(Etr, Ete, ytr, yte, q, threads, seed):
    Ktr = gram(Etr, Etr, q, threads)
    Ktr = (Ktr + Ktr.T) / 2
    Kte = gram(Ete, Etr, q, threads)
    scale = np.mean(np.diag(Ktr))
    scale = scale if scale > 0 else 1.0
    Ktr, Kte = Ktr / scale, Kte / scale
    dtr = np.diag(Ktr).copy()
    dte = self_kernel(Ete, q, threads) / scale
    C, k = inner_select(Ktr, ytr, dtr, seed)
    svm = np.mean(SVC(kernel="precomputed", C=C).fit(Ktr, ytr).predict(Kte) == yte)
    Dte = np.sqrt(np.maximum(dte[:, None] + dtr[None, :] - 2 * Kte, 0))
    knn = np.mean(knn_predict(Dte, ytr, k) == yte)
    return float(svm), float(knn), C, k


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", choices=["colon", "news20"], required=True)
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--max-folds", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-components", type=int, default=None,
                    help="pLSA topics Z (default 5 on colon, 10 on news20)")
    ap.add_argument("--k", type=int, default=2000, help="chi2 words per fold (news20)")
    ap.add_argument("--colon-scale", type=float, default=10.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default=None, help="comma-separated embedding names")
    ap.add_argument("--c-grid", default=None,
                    help="comma-separated SVM C values (default 1e-2..1e4 on colon, "
                         "0.1,1,10,100 on news20: libsvm is slow at large C on 2,600 documents)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)

    if args.dataset == "colon":
        X, y = load("colon_alon1999")
        X.data = np.round(X.data / args.colon_scale)
        X.eliminate_zeros()
        Z = args.n_components or 5
    else:
        X, y = load("news20_same")
        Z = args.n_components or 10
    y = np.unique(y, return_inverse=True)[1]
    global C_GRID
    if args.c_grid:
        C_GRID = [float(c) for c in args.c_grid.split(",")]
    elif args.dataset == "news20":
        C_GRID = [0.1, 1.0, 10.0, 100.0]
    folds = list(StratifiedKFold(args.folds, shuffle=True, random_state=args.seed).split(X, y))
    folds = folds[:args.max_folds] if args.max_folds else folds
    names = list(embeddings(args.dataset, Z, 0, 1))
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    head = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    out = {"dataset": args.dataset, "args": vars(args), "git_head": head, "n_folds_run": len(folds),
           "loadavg": os.getloadavg(), "results": {}, "fold_sizes": [len(te) for _, te in folds]}

    def record(key, fold, value):
        out["results"].setdefault(key, [None] * len(folds))[fold] = value
        if args.json:
            os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
            with open(args.json, "w") as fh:
                json.dump(out, fh, indent=1)

    for f, (tr, te) in enumerate(folds):
        Xtr, Xte = X[tr], X[te]
        if args.dataset == "news20":
            sel = SelectKBest(chi2, k=args.k).fit(Xtr, y[tr])
            Xtr, Xte = sel.transform(Xtr), sel.transform(Xte)
            keep = np.asarray(Xtr.sum(axis=1)).ravel() > 0  # drop empty training documents
            Xtr, ytr = Xtr[keep], y[tr][keep]
        else:
            ytr = y[tr]
        yte = y[te]
        seed = args.seed * 1000 + f
        embs = embeddings(args.dataset, Z, seed, args.threads)
        for name in names:
            t0 = time.perf_counter()
            emb = embs[name].fit(Xtr, ytr)
            Etr, Ete = dense_if_full(emb.transform(Xtr)), dense_if_full(emb.transform(Xte))
            t_emb = time.perf_counter() - t0
            for kname, q in KERNELS.items():
                svm, knn, C, k = evaluate(Etr, Ete, ytr, yte, q, args.threads, seed)
                record(f"{name}|{kname}", f, {"svm": svm, "knn": knn, "C": C, "k": k})
            print(f"fold {f} {name:15s} dims {Etr.shape[1]:6d} embed {t_emb:6.1f}s  " + "  ".join(
                f"{kn}: {out['results'][f'{name}|{kn}'][f]['svm']:.3f}/"
                f"{out['results'][f'{name}|{kn}'][f]['knn']:.3f}" for kn in KERNELS), flush=True)
        for cname, cls in (("CG generative", countgrid.GenerativeCountingGridClassifier),
                           ("CG label embedding", countgrid.CountingGridClassifier)):
            if args.only and cname not in args.only.split(","):
                continue
            clf = cls((10, 10), (3, 3), n_iter=50, random_state=seed, num_threads=args.threads)
            acc = float(np.mean(clf.fit(Xtr, ytr).predict(Xte) == yte))
            record(cname, f, {"acc": acc})
            print(f"fold {f} {cname}: {acc:.3f}", flush=True)

    # table: fold-size-weighted mean accuracy (= pooled accuracy over the test documents)
    w = np.array(out["fold_sizes"], dtype=np.float64)
    print(f"\n{args.dataset}: {len(folds)} of {args.folds} folds, Z = {Z}\n")
    print("| embedding | " + " | ".join(f"{k} SVM | {k} k-NN" for k in KERNELS) + " |")
    print("|---" * (1 + 2 * len(KERNELS)) + "|")
    for name in names:
        cells = []
        for kname in KERNELS:
            r = out["results"][f"{name}|{kname}"]
            for c in ("svm", "knn"):
                cells.append(f"{np.average([x[c] for x in r], weights=w):.3f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    for cname in ("CG generative", "CG label embedding"):
        if cname in out["results"]:
            print(f"| {cname} | {np.average([x['acc'] for x in out['results'][cname]], weights=w):.3f} |")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
