"""Document retrieval with RAP, LSI and tf-idf (Gehler, Holub & Welling, ICML 2006, §3).

Each test document is a query; all training documents are ranked by the
cosine of their codes; recall and precision after 1, 2, 4, ... retrieved
documents are averaged over the queries (``countgrid.metrics``).  Latent
dimensionalities are swept as in the paper (a subset of 25..250).

    PYTHONPATH=src python experiments/rap_retrieval.py --dataset reuters_r8 --dims 25,50,100
    PYTHONPATH=src python experiments/rap_retrieval.py --dataset news20_full --dims 50,100 \
        --json /tmp/rap_news20.json --png docs/rap_rpc_news20.png

Preprocessing (paper §3.1, on the training split only): words shorter than
three letters and English stop words (scikit-learn's list) are removed (no
stemming: the stored vocabularies are unstemmed); for 20 Newsgroups the
10,000 words with the highest mutual information between word occurrence and
class are kept; for Reuters, words that occur only once in the training data
or in a single training document are removed.

Data: ``data/`` of the repository (data/README.md), or the directory in the
environment variable COUNTGRID_DATA_DIR.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
# the installed package (or PYTHONPATH=src after an in-place build), as the other
# experiments: putting src/ first would shadow the installed package with unbuilt sources
sys.path.insert(0, os.path.join(REPO, "data"))

import countgrid  # noqa: E402
import countgrid._utils.progress  # noqa: E402
from countgrid.metrics import precision_recall_curve_retrieval  # noqa: E402
from repo_data import data_path  # noqa: E402  (data/repo_data.py)


def mutual_information(Xtr, y):
    """I(word occurrence; class) per word, from training documents."""
    B = Xtr.copy()
    B.data[:] = 1.0
    classes, yi = np.unique(y, return_inverse=True)
    Y = sp.csr_matrix((np.ones(y.size), (yi, np.arange(y.size))), shape=(classes.size, y.size))
    n = float(y.size)
    n11 = np.asarray((Y @ B).todense())             # (C, V): docs of class c with word
    nc = np.bincount(yi).astype(float)[:, None]
    nw = n11.sum(axis=0, keepdims=True)
    mi = np.zeros(B.shape[1])
    for joint, pw in ((n11, nw), (nc - n11, n - nw)):
        with np.errstate(divide="ignore", invalid="ignore"):
            term = joint / n * np.log(joint * n / (pw * nc))
        mi += np.nansum(np.where(joint > 0, term, 0.0), axis=0)
    return mi


def load(name):
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    path = data_path(f"{name}.npz")
    X = sp.load_npz(path).tocsr().astype(np.float64)
    z = np.load(path, allow_pickle=False)
    y, split, words = z["y"], z["split"], z["feature_names"]
    train, test = split == 0, split == 1
    ok = np.array([len(w) >= 3 and w not in ENGLISH_STOP_WORDS for w in words.astype(str)])
    Xtr = X[train]
    if name == "news20_full":
        mi = np.where(ok, mutual_information(Xtr, y[train]), -np.inf)
        keep = np.sort(np.argsort(-mi, kind="stable")[:10000])
    else:
        df = np.bincount(Xtr.indices, minlength=X.shape[1])
        total = np.asarray(Xtr.sum(axis=0)).ravel()
        keep = np.flatnonzero(ok & (df >= 2) & (total >= 2))
    X = X[:, keep].tocsr()
    return X[train], y[train], X[test], y[test], words[keep]


def evaluate(name, codes_tr, codes_te, ytr, yte):
    t0 = time.perf_counter()
    c = precision_recall_curve_retrieval(codes_te, codes_tr, yte, ytr)
    return {"name": name, "auc": c.auc, "p_at_1": float(c.precision[0]),
            "precision": c.precision.tolist(), "recall": c.recall.tolist(),
            "n_retrieved": c.n_retrieved.tolist(), "eval_seconds": time.perf_counter() - t0}


def validation_split(ytr, fraction, seed):
    """Stratified split of the TRAINING documents: (corpus rows, query rows).  The
    calibration protocol (docs/rap.md, "Defaults") queries these held-out training
    documents against the rest of the training split; the test split is never read."""
    rng = np.random.default_rng(seed)
    held = np.zeros(ytr.size, dtype=bool)
    for c in np.unique(ytr):
        idx = np.flatnonzero(ytr == c)
        held[rng.choice(idx, int(round(fraction * idx.size)), replace=False)] = True
    return np.flatnonzero(~held), np.flatnonzero(held)


def _rate(text):
    return text if text == "auto" else float(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="reuters_r8", choices=["news20_full", "reuters_r8"])
    ap.add_argument("--dims", default="25,50,100", help="latent dimensionalities to sweep")
    ap.add_argument("--rap-epochs", default=None,
                    help="comma-separated epoch counts: one fit of the largest, evaluated "
                         "after each listed epoch (default: RAP's own n_epochs)")
    ap.add_argument("--learning-rate", default=None,
                    help="comma-separated rates (floats or 'auto'), one RAP per rate "
                         "(default: RAP's own default)")
    ap.add_argument("--momentum", type=float, default=None)
    ap.add_argument("--weight-decay", type=float, default=None)
    ap.add_argument("--rap-params", default=None,
                    help="JSON object of further RAP parameters, e.g. "
                         "'{\"early_stopping\": false}'")
    ap.add_argument("--split", default="test", choices=["test", "validation"],
                    help="'validation': queries are a stratified --validation-fraction of "
                         "the TRAINING split, the corpus the rest of it (calibration; the "
                         "test split is not used)")
    ap.add_argument("--validation-fraction", type=float, default=0.2)
    ap.add_argument("--count-scale", type=float, default=1.0,
                    help="multiply every count by this factor after preprocessing (to "
                         "calibrate how the learning-rate rule scales with the counts)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plsa-iter", type=int, default=0,
                    help="also evaluate pLSA (countgrid.PLSA, codes = folded-in P(z|d)) "
                         "with this many EM iterations; 0 skips it")
    ap.add_argument("--no-baselines", action="store_true", help="skip tf-idf and LSI")
    ap.add_argument("--json", default=None)
    ap.add_argument("--png", default=None)
    args = ap.parse_args()
    dims = [int(d) for d in args.dims.split(",") if d]
    epochs = (None if args.rap_epochs is None
              else sorted({int(e) for e in args.rap_epochs.split(",") if e}))
    rates = ([None] if args.learning_rate is None
             else [_rate(r) for r in args.learning_rate.split(",") if r])
    extra = json.loads(args.rap_params) if args.rap_params else {}
    for name, value in (("momentum", args.momentum), ("weight_decay", args.weight_decay)):
        if value is not None:
            extra[name] = value

    Xtr, ytr, Xte, yte, words = load(args.dataset)
    if args.count_scale != 1.0:
        Xtr, Xte = Xtr * args.count_scale, Xte * args.count_scale
    if args.split == "validation":
        fit_rows, query_rows = validation_split(ytr, args.validation_fraction, args.seed)
        Xtr, ytr, Xte, yte = Xtr[fit_rows], ytr[fit_rows], Xtr[query_rows], ytr[query_rows]
    print(f"{args.dataset} ({args.split}): corpus {Xtr.shape[0]}, queries {Xte.shape[0]}, "
          f"words {Xtr.shape[1]}, empty corpus/query docs {(Xtr.getnnz(1) == 0).sum()}/"
          f"{(Xte.getnnz(1) == 0).sum()}", flush=True)
    results = []

    def dump():
        if args.json:
            out = {"dataset": args.dataset, "args": vars(args), "n_train": int(Xtr.shape[0]),
                   "n_test": int(Xte.shape[0]), "n_words": int(Xtr.shape[1]),
                   "results": results}
            with open(args.json, "w") as fh:
                json.dump(out, fh, indent=1)

    if not args.no_baselines:
        idf = countgrid.retrieval.idf_weights(Xtr)
        r = evaluate("tf-idf", countgrid.tfidf(Xtr, idf), countgrid.tfidf(Xte, idf), ytr, yte)
        r.update(model="tf-idf", dim=Xtr.shape[1])
        results.append(r)
        print(f"tf-idf          AUC {r['auc']:.4f}  P@1 {r['p_at_1']:.4f}", flush=True)
    for k in dims:
        if not args.no_baselines:
            t0 = time.perf_counter()
            lsi = countgrid.LSI(n_components=k, random_state=args.seed).fit(Xtr)
            t_fit = time.perf_counter() - t0
            r = evaluate(f"LSI {k}", lsi.transform(Xtr), lsi.transform(Xte), ytr, yte)
            r.update(model="LSI", dim=k, fit_seconds=t_fit)
            results.append(r)
            print(f"LSI  K={k:<4d}     AUC {r['auc']:.4f}  P@1 {r['p_at_1']:.4f}  "
                  f"fit {t_fit:.1f}s", flush=True)
            dump()
        for rate in rates:
            params = dict(extra, n_components=k, num_threads=args.threads,
                          random_state=args.seed)
            if rate is not None:
                params["learning_rate"] = rate
            if epochs is not None:
                params["n_epochs"] = epochs[-1]
            rap = countgrid.RAP(**params)
            t0 = time.perf_counter()

            def record(model, fit_seconds, rate=rate, params=params):
                r = evaluate(f"RAP {k}", model.transform(Xtr), model.transform(Xte), ytr, yte)
                used = getattr(model, "learning_rate_", model.learning_rate)
                r.update(model="RAP", dim=k, fit_seconds=fit_seconds,
                         epochs=int(model.n_iter_), updates=int(model.n_updates_),
                         learning_rate=str("default" if rate is None else rate),
                         learning_rate_used=float(used),
                         params={p: v for p, v in params.items() if p != "num_threads"})
                results.append(r)
                print(f"RAP  K={k:<4d} lr={r['learning_rate']:<7s} ({float(used):.3g}) "
                      f"epoch {r['epochs']:<5d} updates {r['updates']:<7d} "
                      f"AUC {r['auc']:.4f}  P@1 {r['p_at_1']:.4f}  fit {fit_seconds:.1f}s",
                      flush=True)
                dump()

            def listener(event, rap=rap, t0=t0):
                if (event["owner"] == "RAP" and epochs is not None
                        and event["done"] in epochs[:-1]):
                    record(rap, time.perf_counter() - t0)

            try:
                with countgrid._utils.progress.listen(listener):
                    rap.fit(Xtr)
            except FloatingPointError as exc:
                print(f"RAP  K={k:<4d} lr={rate}: diverged ({exc})", flush=True)
                continue
            record(rap, time.perf_counter() - t0)
        if args.plsa_iter > 0:
            t0 = time.perf_counter()
            # plain EM with smoothing 1e-10, the pLSI of docs/results.md (PLSA's defaults
            # before issue 22; since then it tempers with smoothing 0.03)
            plsa = countgrid.PLSA(n_components=k, n_iter=args.plsa_iter, tol=1e-6,
                                  tempered=False, smoothing=1e-10,
                                  num_threads=args.threads, random_state=args.seed).fit(Xtr)
            t_fit = time.perf_counter() - t0
            r = evaluate(f"pLSA {k}", plsa.transform(Xtr), plsa.transform(Xte), ytr, yte)
            r.update(model="pLSA", dim=k, fit_seconds=t_fit, iterations=plsa.n_iter_)
            results.append(r)
            print(f"pLSA K={k:<4d}     AUC {r['auc']:.4f}  P@1 {r['p_at_1']:.4f}  "
                  f"fit {t_fit:.1f}s ({plsa.n_iter_} iterations)", flush=True)
            dump()
    dump()
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4.5))
        for model in ("RAP", "LSI", "pLSA", "tf-idf"):
            rs = [r for r in results if r["model"] == model]
            if not rs:
                continue
            best = max(rs, key=lambda r: r["p_at_1"])   # the paper's selection (P@1)
            ax.plot(best["recall"], best["precision"], marker="o", ms=3,
                    label=f"{best['name']} (AUC {best['auc']:.3f})")
        ax.set_xscale("log")
        ax.set_xlabel("recall")
        ax.set_ylabel("precision")
        ax.set_title(f"{args.dataset}: test queries vs training corpus")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.png, dpi=110)
    return results


if __name__ == "__main__":
    main()
