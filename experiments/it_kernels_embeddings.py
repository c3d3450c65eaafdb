"""Generative embeddings x information-theoretic kernels x {SVM, k-NN} (Bicego et al.,
Neurocomputing 2013; definitions in docs/topics.md and docs/kernels.md, protocol and results
in docs/results.md), with the counting-grid classifiers on the same folds.

Per outer fold (stratified k-fold, ``--repeats`` times with seeds seed, seed+1, ..., or
leave-one-out with ``--loo``; everything learned on the training fold only):

1. (news20_same) the ``--k`` (2000) words with the highest chi2 score on the training fold;
   (colon_alon1999) intensities -> counts ``round(x / --colon-scale)`` (default 10).
2. every embedding of ``countgrid.embeddings`` is fitted on the training documents and
   applied to training and test documents (folding-in);
3. for each kernel (linear; Jensen-Shannon; Jensen-Tsallis q = 0.5 and 1.5 on the
   L1-normalised embedding) the training and test Gram matrices are computed once,
   centred in feature space with the training mean and divided by the mean training
   variance (neither changes the SVM or the k-NN; the centring keeps libsvm from cycling
   on nearly constant Gram matrices, the scaling lets one C grid serve every kernel).  For the "-1"
   embeddings (one block per class model) the IT kernels are computed twice: on the
   concatenated vector, and as the sum of the kernels of the per-class blocks
   (docs/topics.md, "Block structure and per-block kernel sums"; rows marked "Σ";
   ``--combine``).  The linear kernel is the same either way;
4. SVM: ``SVC(kernel="precomputed")`` with C in {1e-2, ..., 1e4} (news20: {0.1, 1, 10,
   100}) picked by an inner
   stratified 3-fold CV on the training Gram matrix; k-NN on the kernel-induced distance
   ``d^2 = k(x,x) + k(y,y) - 2 k(x,y)`` with k in {1, 3, 5, 7} picked the same way.
   (This is what ``countgrid.ITKernelClassifier`` does, with the embedding and the Gram
   matrices shared between the kernel/classifier cells of the table.)
5. counting-grid classifiers on the same folds: ``GenerativeCountingGridClassifier`` (one
   grid per class, largest likelihood) and ``CountingGridClassifier`` (label embedding).

Table cells: accuracy pooled over the test documents of each repeat, mean ± std over the
repeats.

Usage (from the repository root)::

    PYTHONPATH=src python experiments/it_kernels_embeddings.py --dataset colon --json /tmp/itk/colon.json
    PYTHONPATH=src python experiments/it_kernels_embeddings.py --dataset colon --loo \
        --json /tmp/itk/colon_loo.json
    PYTHONPATH=src python experiments/it_kernels_embeddings.py --dataset news20 --max-folds 2 \\
        --json /tmp/itk/news20.json

Data: ``data/`` of the repository (data/README.md), or ``$COUNTGRID_DATA_DIR``.
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

from countgrid.grid import (
    CountingGridClassifier,
    CountingGridFESS,
    CountingGridPosterior,
    GenerativeCountingGridClassifier,
)
from countgrid.kernels import jensen_tsallis_kernel
from countgrid.topics import (
    FisherScore,
    FreeEnergyScoreSpace,
    LLREmbedding,
    MixtureOfTopics,
    PosteriorDivergence,
    TOPEmbedding,
)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "data"))
from repo_data import data_path  # data/repo_data.py

#: The kernels of the tables: name -> keyword arguments of jensen_tsallis_kernel (None:
#: linear).  ``--kernels`` replaces them (kernel_spec).
KERNELS = {"linear": None, "JS": {"q": 1.0}, "JT q=0.5": {"q": 0.5}, "JT q=1.5": {"q": 1.5}}
C_GRID = [1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3, 1e4]
K_GRID = [1, 3, 5, 7]
DEFAULT_Z = {"colon": 5, "news20": 10}


def kernel_spec(token):
    """One ``--kernels`` entry -> (table name, jensen_tsallis_kernel arguments or None).

    ``linear``; ``JS``; ``JT:q`` (Jensen-Tsallis on the L1-normalised embedding);
    ``JT-A:q`` and ``JT-B:q`` (the weighted kernels k^A_q and k^B_q on the unnormalised
    embedding, docs/kernels.md "Weighted kernels"); ``expJT:q:t`` and ``expJS:t`` (the
    exponentiated kernels exp(-t T_q), docs/kernels.md "Exponentiated kernels")."""
    parts = token.strip().split(":")
    kind, vals = parts[0], [float(v) for v in parts[1:]]
    if kind == "linear" and not vals:
        return "linear", None
    if kind == "JS" and not vals:
        return "JS", {"q": 1.0}
    if kind == "JT" and len(vals) == 1:
        return ("JS" if vals[0] == 1.0 else f"JT q={vals[0]:g}"), {"q": vals[0]}
    if kind in ("JT-A", "JT-B") and len(vals) == 1:
        return f"{kind} q={vals[0]:g}", {"q": vals[0], "weighted": kind[-1]}
    if kind == "expJT" and len(vals) == 2:
        return (f"exp JT q={vals[0]:g} t={vals[1]:g}",
                {"q": vals[0], "exponentiated": True, "t": vals[1]})
    if kind == "expJS" and len(vals) == 1:
        return f"exp JS t={vals[0]:g}", {"q": 1.0, "exponentiated": True, "t": vals[0]}
    raise ValueError(f"--kernels: cannot read {token!r} (linear, JS, JT:q, JT-A:q, JT-B:q, "
                     "expJT:q:t, expJS:t)")


def load(name):
    path = data_path(name + ".npz")
    X = sp.load_npz(path).tocsr().astype(np.float64)
    y = np.load(path, allow_pickle=False)["y"]
    return X, y


def embeddings(dataset, Z, seed, threads):
    kw = {"n_components": Z, "n_iter": 100, "random_state": seed, "num_threads": threads}
    # word-topic blocks are kept whole on colon (2000 genes); summed over words on news20
    red = "none" if dataset == "colon" else "topics"
    grid = {"extent": (10, 10), "window": (3, 3), "n_iter": 50, "random_state": seed,
                "num_threads": threads}
    return {
        "MT-1": MixtureOfTopics(mode="1", **kw), "MT-2": MixtureOfTopics(mode="2", **kw),
        "FS-1": FisherScore(mode="1", reduce=red, **kw),
        "FS-2": FisherScore(mode="2", reduce=red, **kw),
        "FS+P(z)-1": FisherScore(mode="1", reduce=red, include_topic_prior=True, **kw),
        "TOP-1": TOPEmbedding(mode="1", reduce="topics", **kw),
        "LLR-1": LLREmbedding(mode="1", reduce="topics", **kw),
        "FESS-1": FreeEnergyScoreSpace(mode="1", reduce=red, **kw),
        "FESS-2": FreeEnergyScoreSpace(mode="2", reduce=red, **kw),
        "PD-1": PosteriorDivergence(mode="1", **kw),
        "PD-2": PosteriorDivergence(mode="2", **kw),
        "CG posterior-1": CountingGridPosterior(mode="1", **grid),
        "CG posterior-2": CountingGridPosterior(mode="2", **grid),
        "CG FESS-1": CountingGridFESS(mode="1", reduce="features", **grid),
        "CG FESS-2": CountingGridFESS(mode="2", reduce="features", **grid),
    }


def dense_if_full(M):
    """Dense rows are much faster in the kernels when most entries are non-zero (colon)."""
    if sp.issparse(M) and M.nnz > 0.3 * M.shape[0] * M.shape[1]:
        return M.toarray()
    return M


def gram(A, B, kernel, threads, blocks=None):
    """Gram matrix; ``kernel``: jensen_tsallis_kernel arguments (None: linear);
    ``blocks``: the per-block kernel sum of docs/topics.md (None: one kernel)."""
    if kernel is None:  # linear: the block sum equals the kernel of the concatenation
        K = A @ (A if B is None else B).T
        K = np.asarray(K.toarray() if sp.issparse(K) else K, dtype=np.float64)
        return (K + K.T) / 2 if B is None else K
    return np.asarray(jensen_tsallis_kernel(A, B, **kernel, blocks=blocks,
                                            num_threads=threads), dtype=np.float64)


def knn_predict(D, ytr, k):
    k = min(k, D.shape[1])
    nn = np.argpartition(D, k - 1, axis=1)[:, :k] if k < D.shape[1] else \
        np.broadcast_to(np.arange(D.shape[1]), D.shape)
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
            svc = SVC(kernel="precomputed", C=C, max_iter=10_000_000).fit(Ktr[np.ix_(a, a)], ytr[a])
            svm_acc[C] += np.mean(svc.predict(Ktr[np.ix_(b, a)]) == ytr[b])
        for k in K_GRID:
            knn_acc[k] += np.mean(knn_predict(Dtr[np.ix_(b, a)], ytr[a], k) == ytr[b])
    return max(C_GRID, key=lambda C: (svm_acc[C], -abs(np.log10(C)))), \
        max(K_GRID, key=lambda k: (knn_acc[k], -k))


def evaluate(Etr, Ete, ytr, yte, kernel, threads, seed, blocks=None):
    Ktr = gram(Etr, None, kernel, threads, blocks)
    Kte = gram(Ete, Etr, kernel, threads, blocks)
    dte = np.diag(gram(Ete, None, kernel, threads, blocks))
    # centre in feature space with the training mean (SVM and kernel distances unchanged
    # in exact arithmetic; libsvm cycles on the nearly constant raw IT-kernel matrices of
    # some embeddings), then divide by the mean training variance so that one C grid
    # fits every kernel
    row = Ktr.mean(axis=0)
    mean = row.mean()
    te_row = Kte.mean(axis=1)
    Ktr = Ktr - row[None, :] - row[:, None] + mean
    Kte = Kte - te_row[:, None] - row[None, :] + mean
    dte = dte - 2 * te_row + mean
    scale = np.mean(np.diag(Ktr))
    scale = scale if scale > 0 else 1.0
    Ktr, Kte, dte = Ktr / scale, Kte / scale, dte / scale
    dtr = np.diag(Ktr).copy()
    C, k = inner_select(Ktr, ytr, dtr, seed)
    svm = np.mean(SVC(kernel="precomputed", C=C, max_iter=10_000_000).fit(Ktr, ytr).predict(Kte) == yte)
    Dte = np.sqrt(np.maximum(dte[:, None] + dtr[None, :] - 2 * Kte, 0))
    knn = np.mean(knn_predict(Dte, ytr, k) == yte)
    return float(svm), float(knn), C, k


def pooled(values, weights, repeat_of):
    """Pooled accuracy per repeat (fold-size weighted), then mean and std over repeats."""
    values, weights, repeat_of = map(np.asarray, (values, weights, repeat_of))
    per = [np.average(values[repeat_of == r], weights=weights[repeat_of == r])
           for r in np.unique(repeat_of)]
    return float(np.mean(per)), float(np.std(per))


def merge_runs(paths):
    """Union of the finished folds of several JSON files of the same split."""
    runs = []
    for path in paths:
        with open(path) as fh:
            runs.append(json.load(fh))
    out = runs[0]
    for other in runs[1:]:
        if other["fold_sizes"] != out["fold_sizes"] or other["dataset"] != out["dataset"]:
            raise ValueError(f"{paths[0]} and another file are not runs of the same split")
        for key, vals in other["results"].items():
            mine = out["results"].setdefault(key, [None] * len(vals))
            for k, v in enumerate(vals):
                if mine[k] is None:
                    mine[k] = v
    out["merged_from"] = [{"path": p, "git_head": r["git_head"], "args": r["args"]}
                          for p, r in zip(paths, runs)]
    return out


def print_table(out):
    """Markdown table of a (possibly partial) run: the folds finished by every row."""
    args = argparse.Namespace(**out["args"])
    w, rep = out["fold_sizes"], out["repeat_of_fold"]
    n_rep = len(set(rep))

    def cell(vals):
        m, sd = pooled(vals, [w[k] for k in done], [rep[k] for k in done])
        return f"{m:.3f} ± {sd:.3f}" if n_rep > 1 else f"{m:.3f}"

    split = "leave-one-out" if args.loo else f"{args.folds}-fold x {args.repeats}"
    done = [k for k in range(len(w)) if all(v[k] is not None for v in out["results"].values())]
    print(f"\n{args.dataset}: {len(done)} of {len(w)} folds complete ({split}), "
          f"Z = {out.get('n_components') or DEFAULT_Z[args.dataset]}\n")
    kernels = out.get("kernels", list(KERNELS))
    print("| embedding | " + " | ".join(f"{k} SVM | {k} k-NN" for k in kernels) + " |")
    print("|---" * (1 + 2 * len(kernels)) + "|")
    rows = dict.fromkeys(key.split("|")[0] for key in out["results"] if "|" in key)
    for row in rows:
        cells = []
        for kname in kernels:
            r = [out["results"][f"{row}|{kname}"][k] for k in done]
            cells += [cell([x[c] for x in r]) for c in ("svm", "knn")]
        print(f"| {row} | " + " | ".join(cells) + " |")
    for cname in ("CG generative", "CG label embedding"):
        if cname in out["results"]:
            r = [out["results"][cname][k]["acc"] for k in done]
            print(f"| {cname} | {cell(r)} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", choices=["colon", "news20"], required=True)
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--max-folds", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=1,
                    help="repeat the stratified k-fold split with seeds seed, seed+1, ...")
    ap.add_argument("--loo", action="store_true", help="leave-one-out instead of k-fold")
    ap.add_argument("--only-folds", default=None,
                    help="comma-separated fold indices to run (e.g. to split a run over "
                         "processes; merge the JSON files with --merge)")
    ap.add_argument("--merge", nargs="+", default=None, metavar="JSON",
                    help="merge the folds of runs of the same split into --json, print the table")
    ap.add_argument("--combine", choices=["concat", "sum", "both"], default="both",
                    help="IT kernel on the concatenated '-1' embedding, the per-class-block "
                         "kernel sum (docs/topics.md; rows marked 'Σ'), or both")
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
    ap.add_argument("--kernels", default=None,
                    help="comma-separated kernels (kernel_spec: linear, JS, JT:q, JT-A:q, "
                         "JT-B:q, expJT:q:t, expJS:t); default linear,JS,JT:0.5,JT:1.5")
    ap.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                    help="precision of the counting-grid classifiers (the embeddings' grids "
                         "are float64 whatever this says); float64, the grids' default "
                         "when the tables of docs/results.md were first made")
    ap.add_argument("--json", default=None)
    ap.add_argument("--table-from", default=None, metavar="JSON",
                    help="only print the table of an earlier (possibly unfinished) run")
    args = ap.parse_args(argv)
    if args.table_from:
        with open(args.table_from) as fh:
            out = json.load(fh)
        print_table(out)
        return out
    if args.merge:
        out = merge_runs(args.merge)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(out, fh, indent=1)
        print_table(out)
        return out

    if args.dataset == "colon":
        X, y = load("colon_alon1999")
        X.data = np.round(X.data / args.colon_scale)
        X.eliminate_zeros()
        Z = args.n_components or DEFAULT_Z["colon"]
    else:
        X, y = load("news20_same")
        Z = args.n_components or DEFAULT_Z["news20"]
    y = np.unique(y, return_inverse=True)[1]
    global C_GRID
    if args.c_grid:
        C_GRID = [float(c) for c in args.c_grid.split(",")]
    elif args.dataset == "news20":
        C_GRID = [0.1, 1.0, 10.0, 100.0]
    if args.loo:
        folds = [(np.delete(np.arange(len(y)), i), np.array([i])) for i in range(len(y))]
        repeat_of = [0] * len(folds)
    else:
        folds, repeat_of = [], []
        for r in range(args.repeats):
            skf = StratifiedKFold(args.folds, shuffle=True, random_state=args.seed + r)
            folds += list(skf.split(X, y))
            repeat_of += [r] * args.folds
    n_max = args.max_folds or len(folds)
    folds, repeat_of = folds[:n_max], repeat_of[:n_max]
    kernels = (dict(kernel_spec(t) for t in args.kernels.split(",")) if args.kernels
               else dict(KERNELS))
    names = list(embeddings(args.dataset, Z, 0, 1))
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    head = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True,
                          check=False,
                          text=True).stdout.strip()
    out = {"dataset": args.dataset, "args": vars(args), "git_head": head, "n_folds_run": len(folds),
           "loadavg": os.getloadavg(), "results": {}, "fold_sizes": [len(te) for _, te in folds],
           "repeat_of_fold": repeat_of, "seconds": {}, "n_components": Z,
           "kernels": list(kernels)}

    def record(key, fold, value):
        out["results"].setdefault(key, [None] * len(folds))[fold] = value
        if args.json:
            os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
            with open(args.json, "w") as fh:
                json.dump(out, fh, indent=1)

    wanted = set(range(len(folds))) if args.only_folds is None else \
        {int(v) for v in args.only_folds.split(",")}
    for f, (tr, te) in enumerate(folds):
        if f not in wanted:
            continue
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
            blocks = emb.block_sizes_ if len(emb.block_sizes_) > 1 else None
            variants = []
            if args.combine in ("concat", "both") or blocks is None:
                variants.append((name, None))
            if args.combine in ("sum", "both") and blocks is not None:
                variants.append((name + " Σ", blocks))
            for row, blk in variants:
                t1 = time.perf_counter()
                for kname, kern in kernels.items():
                    if kern is None and blk is not None and (name, None) in variants:
                        res = out["results"][f"{name}|{kname}"][f]  # linear: identical
                    else:
                        svm, knn, C, k = evaluate(Etr, Ete, ytr, yte, kern, args.threads,
                                                  seed, blk)
                        res = {"svm": svm, "knn": knn, "C": C, "k": k}
                    record(f"{row}|{kname}", f, res)
                out["seconds"].setdefault(row, []).append(t_emb + time.perf_counter() - t1)
                print(f"fold {f} {row:17s} dims {Etr.shape[1]:6d} embed {t_emb:6.1f}s  " +
                      "  ".join(f"{kn}: {out['results'][f'{row}|{kn}'][f]['svm']:.3f}/"
                                f"{out['results'][f'{row}|{kn}'][f]['knn']:.3f}"
                                for kn in kernels), flush=True)
        for cname, cls in (("CG generative", GenerativeCountingGridClassifier),
                           ("CG label embedding", CountingGridClassifier)):
            if args.only and cname not in args.only.split(","):
                continue
            clf = cls((10, 10), (3, 3), n_iter=50, random_state=seed, num_threads=args.threads,
                      dtype=np.dtype(args.dtype).type)
            acc = float(np.mean(clf.fit(Xtr, ytr).predict(Xte) == yte))
            record(cname, f, {"acc": acc})
            print(f"fold {f} {cname}: {acc:.3f}", flush=True)

    print_table(out)
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
