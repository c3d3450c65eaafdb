#!/usr/bin/env python
"""Held-out perplexity by document completion: pLSA, scikit-learn's LDA and counting grids
(issue 22).

Every model is fitted on the fitting documents and scored with
``countgrid.metrics.completion_perplexity`` on the scoring documents: each scoring
document's tokens are split at random (``--completion-seed``) into an observed half,
which the model folds in, and a held-out half, scored under the predictive distribution
(docs/topics.md, "Held-out perplexity by document completion").  All models of a run are
scored on exactly the same split.

Splits (``--split``):

* ``validation``: a stratified 20 % of the TRAINING documents (``--seed``) is scored, the
  model is fitted on the other 80 %; the test documents are never read.  The pLSA defaults
  were chosen this way.
* ``test``: fitted on the official training split, scored on the official test split.

Corpora: ``news20_full`` and ``reuters_r8`` with the preprocessing of
``rap_retrieval.py`` (training documents only: words shorter than three letters and
English stop words removed; news20: the 10,000 words of highest mutual information with
the class; Reuters: words occurring at least twice and in at least two documents).

Models (``--models``, comma-separated; ``name:param=value;param=value`` sets
parameters, values read as Python literals):

* ``plsa``: ``countgrid.PLSA(n_components=K, random_state=seed)``, the package defaults
  (since issue 22: tempered EM, ``smoothing=0.03``); ``plsa-0.2``: the defaults before
  issue 22 (``tempered=False, smoothing=1e-10``); ``plsa-0.2:smoothing=0.03``,
  ``plsa:tempered=True;smoothing=0.1`` etc.;
* ``lda``: scikit-learn's ``LatentDirichletAllocation(n_components=K,
  random_state=seed)``, its defaults (``learning_method="batch"``, ``max_iter=10``,
  priors ``1/K``); ``lda:max_iter=50``, ``lda:learning_method="online"``;
* ``cg``: ``countgrid.CountingGrid(random_state=seed)``, the package defaults (the grid is
  sized to the fitting documents by ``extent="auto"``; ``--dims`` does not apply, it runs
  once); ``cg:extent=(32,32)``;
* ``rap``: ``countgrid.RAP(n_components=K, random_state=seed)``, the package defaults,
  scored by the plug-in predictive of docs/rap.md, "Held-out perplexity".

``--diagnostics`` adds, per model, the mean over its topics (the grid: ``--cg-regions``
regions, ``countgrid.grid.regions``) of the coherence of their 10 top words
(``countgrid.metrics``; docs/diagnostics.md): NPMI on the scored documents as boolean
documents (a reference the model was not fitted on; topics whose words it never holds are
left out and counted), UMass on the fitting documents, and MALLET's exclusivity and stm's
FREX (``topic_diagnostics`` on the fitting documents).

    PYTHONPATH=src python experiments/heldout_completion.py --dataset reuters_r8 \\
        --split validation --dims 20,50,100 --models plsa-0.2,plsa:tempered=True

Times are wall-clock seconds of ``fit`` on the machine of the run (``--threads`` OpenMP
threads for countgrid, ``n_jobs=--threads`` for LDA); the JSON file records the load
average and the git HEAD.
"""
import argparse
import ast
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "data"))
sys.path.insert(0, HERE)

import countgrid  # noqa: E402
from countgrid.exceptions import ConvergenceWarning  # noqa: E402
from countgrid.metrics import (completion_perplexity, topic_coherence,  # noqa: E402
                               topic_diagnostics)
from rap_retrieval import load, validation_split  # noqa: E402  (same preprocessing)

#: The pLSA parameters before issue 22 (the rows "pLSA, 0.2 defaults").
OLD_PLSA = {"tempered": False, "smoothing": 1e-10}


def parse_model(spec):
    name, _, rest = spec.partition(":")
    params = {}
    for item in filter(None, rest.split(";")):
        key, _, value = item.partition("=")
        params[key.strip()] = ast.literal_eval(value.strip())
    if name not in ("plsa", "plsa-0.2", "lda", "cg", "rap"):
        raise SystemExit(f"unknown model {name!r} (plsa, plsa-0.2, lda, cg, rap)")
    return name, params


def make(name, params, k, seed, threads):
    if name in ("plsa", "plsa-0.2"):
        base = dict(OLD_PLSA) if name == "plsa-0.2" else {}
        return countgrid.PLSA(**{**base, "n_components": k, "random_state": seed,
                                 "num_threads": threads, **params})
    if name == "lda":
        from sklearn.decomposition import LatentDirichletAllocation
        return LatentDirichletAllocation(**{"n_components": k, "random_state": seed,
                                            "n_jobs": threads, **params})
    if name == "rap":
        return countgrid.RAP(**{"n_components": k, "random_state": seed,
                                "num_threads": threads, **params})
    return countgrid.CountingGrid(**{"random_state": seed, "num_threads": threads, **params})


def describe(model):
    out = {}
    for attr in ("n_iter_", "beta_", "converged_"):
        if hasattr(model, attr):
            value = getattr(model, attr)
            out[attr] = value.item() if hasattr(value, "item") else value
    if hasattr(model, "pi_"):
        extent = tuple(int(e) for e in model.pi_.shape[:-1])
        window = tuple(int(w) for w in model.window)
        out["extent"] = extent
        out["window"] = window
        out["capacity"] = float(np.prod(extent) / np.prod(window))
    return out


def diagnostics(model, Xfit, Xscore, cg_regions):
    """Mean coherence, exclusivity and FREX of the model's topics (module docstring)."""
    grid = isinstance(model, countgrid.CountingGrid)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # words absent from a reference
        d = topic_diagnostics(model, Xfit, n_words=10,
                              regions=cg_regions if grid else None)
        npmi = topic_coherence(d.top_words, Xscore, measure="c_npmi")
    return {"n_topics": int(d.tokens.size), "npmi_scored": npmi.mean,
            "npmi_undefined": int(npmi.undefined.sum()),
            "umass_fit": float(np.nanmean(d.coherence)),
            "exclusivity": float(d.exclusivity.mean()), "frex": float(d.frex.mean())}


def git_head():
    try:
        return subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="reuters_r8", choices=["news20_full", "reuters_r8"])
    ap.add_argument("--split", default="validation", choices=["validation", "test"])
    ap.add_argument("--validation-fraction", type=float, default=0.2)
    ap.add_argument("--dims", default="20,50,100", help="numbers of topics")
    ap.add_argument("--models", default="plsa,plsa-0.2",
                    help="comma-separated model specs (module docstring)")
    ap.add_argument("--seed", type=int, default=0, help="validation split and model seeds")
    ap.add_argument("--completion-seed", type=int, default=0, help="the token split")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", default=None, help="rewritten after every row")
    ap.add_argument("--diagnostics", action="store_true",
                    help="add coherence (NPMI on the scored documents, UMass on the fitting "
                         "ones), exclusivity and FREX of the top 10 words")
    ap.add_argument("--cg-regions", type=int, default=20,
                    help="--diagnostics: the grid's topics are this many regions")
    args = ap.parse_args()
    dims = [int(d) for d in args.dims.split(",") if d]
    specs = [parse_model(s) for s in args.models.split(",") if s]

    Xtr, ytr, Xte, _, _ = load(args.dataset)
    if args.split == "validation":
        fit_rows, score_rows = validation_split(ytr, args.validation_fraction, args.seed)
        Xfit, Xscore = Xtr[fit_rows], Xtr[score_rows]
    else:
        Xfit, Xscore = Xtr, Xte
    n_held = int(np.floor(np.asarray(Xscore.sum(axis=1)).ravel() / 2).sum())
    print(f"{args.dataset} ({args.split}): fit {Xfit.shape[0]} documents, score "
          f"{Xscore.shape[0]} ({n_held} held-out tokens), {Xfit.shape[1]} words", flush=True)
    header = {"dataset": args.dataset, "args": vars(args), "git_head": git_head(),
              "n_fit": int(Xfit.shape[0]), "n_score": int(Xscore.shape[0]),
              "n_words": int(Xfit.shape[1]), "n_heldout_tokens": n_held, "rows": []}

    def dump():
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(header, fh, indent=1)

    for name, params in specs:
        for k in ([None] if name == "cg" else dims):
            model = make(name, params, k, args.seed, args.threads)
            load_before = os.getloadavg()[0]
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                t0 = time.perf_counter()
                model.fit(Xfit)
                fit_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            ppl = completion_perplexity(model, Xscore, random_state=args.completion_seed)
            diag = {}
            score_s = time.perf_counter() - t0
            if isinstance(model, countgrid.PLSA):
                # PLSA.score folds in the tokens it scores: the optimistic in-sample value
                in_sample = float(np.exp(-model.score(Xscore) / Xscore.sum()))
            else:
                in_sample = None
            if args.diagnostics:
                diag.update(diagnostics(model, Xfit, Xscore, args.cg_regions))
            label = name + (":" + ";".join(f"{a}={b!r}" for a, b in params.items())
                            if params else "")
            row = {"model": label, "K": k, "perplexity": ppl, "score_perplexity": in_sample,
                   "fit_seconds": fit_s,
                   "score_seconds": score_s, "load_average": [load_before,
                                                              os.getloadavg()[0]],
                   "convergence_warning": any(issubclass(w.category, ConvergenceWarning)
                                              for w in caught), **describe(model), **diag}
            header["rows"].append(row)
            dump()
            extra = "".join(f"  {a} {row[a]}" for a in ("beta_", "n_iter_", "extent")
                            if a in row)
            if in_sample is not None:
                extra += f"  (PLSA.score: {in_sample:.1f})"
            if diag:
                extra += (f"  NPMI {diag['npmi_scored']:.4f}  UMass {diag['umass_fit']:.3f}"
                          f"  excl {diag['exclusivity']:.3f}  FREX {diag['frex']:.3f}")
            print(f"{label:40s} K={str(k):4s} perplexity {ppl:10.1f}  fit {fit_s:7.1f} s"
                  f"{extra}", flush=True)

    more = " NPMI (scored) | UMass (fitted) | exclusivity | FREX |" if args.diagnostics else ""
    print(f"\n| model | K | completion perplexity | in-sample (PLSA.score) | fit s |{more}\n"
          "|---|---|---|---|---|" + "---|---|---|---|" * bool(more))
    for r in header["rows"]:
        ins = "" if r["score_perplexity"] is None else f"{r['score_perplexity']:.0f}"
        cells = (f" {r['npmi_scored']:.4f} | {r['umass_fit']:.3f} | {r['exclusivity']:.3f} |"
                 f" {r['frex']:.3f} |") if more else ""
        print(f"| {r['model']} | {r['K'] or '-'} | {r['perplexity']:.0f} | {ins} | "
              f"{r['fit_seconds']:.1f} |{cells}")


if __name__ == "__main__":
    main()
