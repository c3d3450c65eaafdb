"""The record's checker: rerun the cheap rows of docs/results.md and compare (issue 23).

docs/results.md records experiment results, each table with the command that produces it
(experiments/README.md).  No test runs ``experiments/``, so its tables went stale when the
code changed.  This tool reruns a stated subset of rows, those whose command takes seconds
(about 3 minutes in all on 2 shared cores, one command at a time), and compares every
figure with the number written in docs/results.md.

The documented number is read from docs/results.md itself.  A checked figure carries an
HTML comment right after it (invisible on GitHub and in the documentation site)::

    | ZIP-GTM, random latent | 0.785 ± 0.025<!-- check: zip-gtm-random tol=0.0005 --> |

naming the figure (``CHECK`` or ``CHECK:FIGURE``) and its tolerance, an absolute
difference in the unit printed.  ``0.785 ± 0.025`` checks the mean and the spread.  Every
figure of ``CHECKS`` must have exactly one marker and every marker a figure of ``CHECKS``
(and a tolerance no smaller than half the last printed digit), so the document and the
checker cannot drift apart.

    python tools/results.py                 # every check (the CI subset)
    python tools/results.py --list          # checks, figures, documented values, budgets
    python tools/results.py --only rap-r8-k25,promoters-2d
    python tools/results.py --doc copy.md   # another copy of the record

Exit status: 0 every figure within its tolerance; 1 a figure moved (each named with its
row, the documented value, the measured one and the tolerance); 2 the document and the
checker disagree (a marker without a figure of ``CHECKS``, a figure without a marker, a
malformed marker), a command failed, or the options are wrong.

Every checked row is deterministic for a given build: counting grids, pLSA, ZIP-GTM and
RAP give bit-identical results for any number of threads (docs/counting_grids.md,
docs/topics.md, docs/zip_gtm.md, docs/rap.md), and the commands run with one thread, so
the tolerances are the printed precision.  A row computed on another CPU (another SIMD
path of the vectorised exp/log, another BLAS) could move by one document or sequence;
that is a change to record, with its reason, not noise to absorb.

Run from a checkout with the package importable (installed, or ``PYTHONPATH=src`` after
an in-place build): the commands run in subprocesses with this interpreter and
environment, from the repository root, with ``OMP_NUM_THREADS=1``.
"""
import argparse
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD = os.path.join(REPO, "docs", "results.md")
#: A command that runs past this many seconds is stopped (and the check fails).
TIMEOUT = 600


# --------------------------------------------------------------------------- extraction
def _script(name):
    """The module of ``experiments/<name>.py`` (its helpers, e.g. the pooled accuracy)."""
    path = os.path.join(REPO, "experiments", f"{name}.py")
    for folder in ("experiments", "data"):
        if os.path.join(REPO, folder) not in sys.path:
            sys.path.insert(0, os.path.join(REPO, folder))
    spec = importlib.util.spec_from_file_location(f"_results_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _zip(name):
    return lambda out: (out["results"][name]["acc"], out["results"][name]["acc_sd"])


def _itk(row, kernel=None, column="svm"):
    """Pooled accuracy of a row of it_kernels_embeddings.py, mean and std over repeats."""
    def get(out):
        res = out["results"][row if kernel is None else f"{row}|{kernel}"]
        vals = [r["acc" if kernel is None else column] for r in res]
        return _script("it_kernels_embeddings").pooled(vals, out["fold_sizes"],
                                                         out["repeat_of_fold"])
    return get


def _promoters(method):
    def get(out):
        acc = [r["acc"] for r in out["rows"] if r["method"] == method]
        return 100 * acc[0], None
    return get


def _rap(name, key):
    def get(out):
        return next(r[key] for r in out["results"] if r["name"] == name), None
    return get


def _heldout(key):
    return lambda out: (out["rows"][0][key], None)


def _n20diff(name):
    return lambda out: (100 * out["results"][name]["accuracy"], None)


def _count_model(data, model):
    return lambda out: (out["datasets"][data][model]["mean"],
                        out["datasets"][data][model]["sd"])


def _folds_mean_std(out):
    import numpy as np

    acc = np.array([r["acc"] for r in out])
    return float(acc.mean()), float(acc.std(ddof=1))


# --------------------------------------------------------------------------- the checks
@dataclass
class Check:
    """One command and the figures of docs/results.md it reproduces."""
    id: str
    rows: str                 # what it checks, for --list
    argv: list                # experiments/<script>.py and its options; "{json}": output
    figures: dict             # figure name ("" for the check's only figure) -> extractor
    budget: float             # seconds on the 2 shared cores of the reference machine
    why: str                  # why its tolerance is what it is
    jsonl: bool = False       # the script appends JSON lines instead of writing one object
    marker_ids: list = field(init=False)

    def __post_init__(self):
        self.marker_ids = [self.id if not f else f"{self.id}:{f}" for f in self.figures]


DETERMINISTIC = ("deterministic: seeded, one thread, and bit-identical for any thread count; "
                 "tolerance = the printed precision")

CHECKS = [
    Check("zip-gtm-random",
          "ZIP-GTM document maps, random latent points, 3 seeds: 5-NN accuracy (the row "
          "that went stale: 0.839 -> 0.785, other latent points since fded752; not bisected)",
          ["zip_gtm_news20.py", "--only", "ZIP-GTM (sinh, random latent)", "--no-timing",
           "--no-ugtm", "--png", "", "--json", "{json}"],
          {"": _zip("ZIP-GTM (sinh, random latent)")}, 30,
          DETERMINISTIC + " (ZIPGTM on sparse input, docs/zip_gtm.md)"),
    Check("zip-gtm-grid",
          "ZIP-GTM document maps: ZIP-GTM and Poisson-GTM on the grid, PCA of log counts",
          ["zip_gtm_news20.py", "--only",
           "ZIP-GTM (sinh, grid),Poisson-GTM (sinh, grid),PCA (log1p counts)",
           "--no-timing", "--no-ugtm", "--png", "", "--json", "{json}"],
          {"zip": _zip("ZIP-GTM (sinh, grid)"),
           "poisson": _zip("Poisson-GTM (sinh, grid)"),
           "pca": _zip("PCA (log1p counts)")}, 14,
          DETERMINISTIC + " (grid latent points and the PCA start)"),
    Check("promoters-2d",
          "E. coli promoters, 3-mer bags, 32x32/5x5 grid with the default schedule, the "
          "paper's protocol: label embedding and 1-NN on the grid, LOO %",
          ["promoters_loo.py", "--methods", "le-trans,nn-trans", "--grid3d", "none",
           "--schedule", "default", "--threads", "1", "--json", "{json}"],
          {"le-trans": _promoters("le-trans"), "nn-trans": _promoters("nn-trans")}, 4,
          DETERMINISTIC + " (one float64 grid; one sequence is 0.94 points)"),
    Check("heldout-r8-k20",
          "Held-out completion, Reuters R8 test documents, pLSA defaults K = 20: completion "
          "perplexity and in-sample PLSA.score perplexity; the mean NPMI of its topics' top "
          "10 words on the test documents and their exclusivity (Diagnostics against LDA)",
          ["heldout_completion.py", "--dataset", "reuters_r8", "--split", "test", "--dims",
           "20", "--models", "plsa", "--threads", "1", "--diagnostics", "--json", "{json}"],
          {"completion": _heldout("perplexity"), "in-sample": _heldout("score_perplexity"),
           "npmi": _heldout("npmi_scored"), "exclusivity": _heldout("exclusivity")},
          9, DETERMINISTIC + " (PLSA; the token split is seeded; coherence counts are "
          "integers)"),
    Check("rap-r8-k25",
          "RAP retrieval, Reuters R8, K = 25: RAP with its defaults, LSI, tf-idf (AUC of the "
          "recall-precision curve and precision at 1)",
          ["rap_retrieval.py", "--dataset", "reuters_r8", "--dims", "25", "--threads", "1",
           "--json", "{json}"],
          {"rap-auc": _rap("RAP 25", "auc"), "rap-p1": _rap("RAP 25", "p_at_1"),
           "lsi-auc": _rap("LSI 25", "auc"), "lsi-p1": _rap("LSI 25", "p_at_1"),
           "tfidf-auc": _rap("tf-idf", "auc")}, 38,
          DETERMINISTIC + " (RAP: one PCG64 stream per block of 8 rows, docs/rap.md)"),
    Check("itk-colon",
          "Generative embeddings x IT kernels, colon, stratified 10-fold x 3: MT-2 with the "
          "JS kernel (SVM, k-NN) and the generative counting-grid classifier",
          ["it_kernels_embeddings.py", "--dataset", "colon", "--repeats", "3", "--only",
           "MT-2,CG generative", "--kernels", "JS", "--threads", "1", "--json", "{json}"],
          {"mt2-js-svm": _itk("MT-2", "JS", "svm"), "mt2-js-knn": _itk("MT-2", "JS", "knn"),
           "cg-generative": _itk("CG generative")}, 50,
          DETERMINISTIC + " (pLSA, float64 grids, libsvm)"),
    Check("n20diff",
          "news20_different (Fig. 3c): CountingGridClassifier() with the defaults and "
          "multinomial naive Bayes, test accuracy %",
          ["news20_different_map.py", "--classifiers", "cg,mnb", "--threads", "1", "--json",
           "{json}"],
          {"cg": _n20diff("CountingGridClassifier() (defaults)"),
           "mnb": _n20diff("multinomial naive Bayes")}, 12,
          DETERMINISTIC + " (float32 grid, the default; one test post is 0.09 points)"),
    Check("count-models",
          "ZIP-GTM count models (ZIP, Poisson, Poisson + size factors, NB, ZINB) on "
          "twins_microbiome and pomeroy: held-out log-likelihood per count, 5 folds",
          ["zero_inflation_test.py", "--threads", "1", "--json", "{json}"],
          {f"{d}-{m}": _count_model(data, model)
           for d, data in (("twins", "twins_microbiome"), ("pomeroy", "pomeroy"))
           for m, model in (("zip", "ZIP"), ("poisson", "Poisson"),
                            ("sf", "Poisson + size factors"), ("nb", "NB"),
                            ("zinb", "ZINB"))}, 16,
          DETERMINISTIC + " (CSR input; the folds are seeded)"),
    Check("defaults-mnb",
          "Counting grids - defaults: multinomial naive Bayes on news20_same, 5 folds",
          ["grid_defaults.py", "--datasets", "news20_same", "--variants", "mnb", "--json",
           "{json}"],
          {"": _folds_mean_std}, 3, DETERMINISTIC, jsonl=True),
]


# --------------------------------------------------------------------------- the record
_NUM = r"[−-]?\d[\d,]*(?:\.\d+)?"
MARKER = re.compile(
    rf"(?P<num>{_NUM})(?:\s*±\s*(?P<sd>{_NUM}))?\s*%?\s*(?:\*{{1,2}})?\s*"
    r"<!--\s*check:\s*(?P<id>[A-Za-z0-9_.:+-]+)(?P<opts>[^>]*?)\s*-->")
ANY_MARKER = re.compile(r"<!--\s*check:")
CODE_SPAN = re.compile(r"`[^`]*`")


@dataclass
class Marker:
    """A checked figure as documented."""
    id: str
    value: float
    sd: float = None
    decimals: int = 0
    tol: float = None
    line: int = 0
    section: str = ""
    row: str = ""
    text: str = ""

    def where(self):
        return f"docs/results.md:{self.line} [{self.section}; row '{self.row}']"


class RecordError(ValueError):
    """docs/results.md and CHECKS disagree, or a marker is malformed."""


def _number(text):
    return float(text.replace(",", "").replace("−", "-"))


def _decimals(text):
    return len(text.split(".")[1]) if "." in text else 0


def parse_record(text):
    """Every checked figure of the record's text: a list of Marker (code spans and fenced
    code blocks are skipped).  Raises RecordError for a marker the pattern cannot read or
    one without a valid tolerance."""
    markers, section, fenced = [], "", False
    for n, raw in enumerate(text.splitlines(), start=1):
        if raw.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        if raw.startswith("#"):
            section = raw.lstrip("#").strip()
            continue
        line = CODE_SPAN.sub("``", raw)      # a marker quoted as code is no marker
        found = list(MARKER.finditer(line))
        if len(found) != len(ANY_MARKER.findall(line)):
            raise RecordError(f"docs/results.md:{n}: a check marker that does not follow a "
                              f"number (write '0.805<!-- check: ID tol=0.0005 -->'): {line}")
        row = raw.split("|")[1].strip() if raw.lstrip().startswith("|") else raw[:60]
        for m in found:
            opts = dict(o.split("=", 1) for o in m.group("opts").split() if "=" in o)
            if set(opts) - {"tol"} or "tol" not in opts:
                raise RecordError(f"docs/results.md:{n}: marker {m.group('id')!r} needs "
                                  f"exactly tol=..., got {m.group('opts').strip()!r}")
            tol = float(opts["tol"])
            dec = _decimals(m.group("num"))
            if m.group("sd") is not None:
                dec = max(dec, _decimals(m.group("sd")))
            if tol < 0.5 * 10.0 ** -dec * (1 - 1e-9):
                raise RecordError(f"docs/results.md:{n}: marker {m.group('id')!r}: tol={tol:g} "
                                  f"is below half the printed precision ({0.5 * 10.0 ** -dec:g})")
            markers.append(Marker(m.group("id"), _number(m.group("num")),
                                  None if m.group("sd") is None else _number(m.group("sd")),
                                  dec, tol, n, section, row, m.group(0)))
    return markers


def match_checks(markers, checks=CHECKS):
    """{marker id: Marker}, after checking that markers and figures correspond one to one."""
    seen = {}
    for m in markers:
        if m.id in seen:
            raise RecordError(f"{m.where()}: figure {m.id!r} is marked twice (also line "
                              f"{seen[m.id].line})")
        seen[m.id] = m
    wanted = {i for c in checks for i in c.marker_ids}
    unknown = sorted(set(seen) - wanted)
    missing = sorted(wanted - set(seen))
    problems = [f"{seen[i].where()}: marker {i!r} names no figure of tools/results.py CHECKS"
                for i in unknown]
    problems += [f"figure {i!r} of tools/results.py has no marker in docs/results.md"
                 for i in missing]
    if problems:
        raise RecordError("\n".join(problems))
    return seen


def compare(marker, value, sd=None):
    """None when the measured figure is within the marker's tolerance, else the message
    naming the row, the documented and measured values and the tolerance."""
    slack = 1e-9 * max(1.0, abs(marker.value))
    bad = not (math.isfinite(value) and abs(value - marker.value) <= marker.tol + slack)
    if marker.sd is not None:
        bad = bad or sd is None or not abs(sd - marker.sd) <= marker.tol + slack
    if not bad:
        return None
    doc = _fmt(marker.value, marker.sd, marker.decimals)
    got = _fmt(value, sd if marker.sd is not None else None, marker.decimals + 2)
    return (f"{marker.id}: {marker.where()}: documented {doc}, measured {got}, "
            f"tolerance ±{marker.tol:g}")


def _fmt(value, sd, decimals):
    s = f"{value:.{decimals}f}"
    return s if sd is None else f"{s} ± {sd:.{decimals}f}"


# --------------------------------------------------------------------------- running
def run_check(check, workdir):
    """Run the check's command; {figure name: (value, sd)}.  Raises RuntimeError when the
    command fails (its output's tail in the message)."""
    out_path = os.path.join(workdir, f"{check.id}.json{'l' if check.jsonl else ''}")
    script, *args = check.argv
    argv = [sys.executable, os.path.join(REPO, "experiments", script)]
    argv += [a.replace("{json}", out_path) for a in args]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONWARNINGS="ignore", MPLBACKEND="Agg")
    try:
        proc = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{check.id}: the command ran past {TIMEOUT} s") from None
    if proc.returncode != 0 or not os.path.exists(out_path):
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-15:])
        raise RuntimeError(f"{check.id}: the command failed (exit {proc.returncode}): "
                           f"{' '.join(argv)}\n{tail}")
    with open(out_path) as fh:
        out = [json.loads(line) for line in fh if line.strip()] if check.jsonl else json.load(fh)
    result = {}
    for name, get in check.figures.items():
        value, sd = get(out)
        result[name] = (float(value), None if sd is None else float(sd))
    return result


def select(only):
    """The checks named by ``--only`` (check or figure ids); None for an unknown name."""
    if not only:
        return list(CHECKS)
    names = [n.strip() for n in only.split(",") if n.strip()]
    by_id = {c.id: c for c in CHECKS}
    by_figure = {i: c for c in CHECKS for i in c.marker_ids}
    chosen = []
    for n in names:
        c = by_id.get(n) or by_figure.get(n)
        if c is None:
            return None
        if c not in chosen:
            chosen.append(c)
    return chosen


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--list", action="store_true",
                    help="list the checks, their figures and budgets; run nothing")
    ap.add_argument("--only", default=None, help="comma-separated check or figure ids")
    ap.add_argument("--doc", default=RECORD, help="the record (default docs/results.md)")
    args = ap.parse_args(argv)
    checks = select(args.only)
    if checks is None:
        ap.error(f"--only {args.only!r}: no such check or figure (see --list)")
    try:
        with open(args.doc, encoding="utf-8") as fh:
            markers = match_checks(parse_record(fh.read()))
    except OSError as exc:
        print(f"cannot read the record: {exc}", file=sys.stderr)
        return 2
    except RecordError as exc:
        print(f"docs/results.md and tools/results.py disagree:\n{exc}", file=sys.stderr)
        return 2
    if args.list:
        total = sum(c.budget for c in checks)
        print(f"{len(checks)} checks, {sum(len(c.figures) for c in checks)} figures, "
              f"budget about {total:.0f} s on 2 shared cores (one job at a time)\n")
        for c in checks:
            print(f"{c.id}  (~{c.budget:g} s)  {c.rows}")
            print(f"    tolerance: {c.why}")
            print(f"    command: python experiments/{c.argv[0]} "
                  + " ".join(repr(a) if " " in a or not a else a
                             for a in c.argv[1:]).replace("{json}", "OUT"))
            for i in c.marker_ids:
                m = markers[i]
                print(f"    {i:28s} {_fmt(m.value, m.sd, m.decimals):>16s}  tol {m.tol:g}  "
                      f"line {m.line} ({m.row[:48]})")
        return 0
    failures, errors, t_all = [], [], time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="countgrid-results-") as work:
        for c in checks:
            t0 = time.perf_counter()
            try:
                got = run_check(c, work)
            except (RuntimeError, KeyError, IndexError, StopIteration, OSError,
                    ValueError) as exc:
                errors.append(str(exc) if isinstance(exc, RuntimeError)
                              else f"{c.id}: could not read its figures: {exc!r}")
                print(f"ERROR {c.id}", flush=True)
                continue
            secs = time.perf_counter() - t0
            for name, (value, sd) in got.items():
                m = markers[c.id if not name else f"{c.id}:{name}"]
                msg = compare(m, value, sd)
                state = "ok  " if msg is None else "FAIL"
                print(f"{state} {m.id:28s} documented {_fmt(m.value, m.sd, m.decimals):>16s}"
                      f"  measured {_fmt(value, sd if m.sd is not None else None, m.decimals + 2)}"
                      f"  (tol {m.tol:g})", flush=True)
                if msg:
                    failures.append(msg)
            slow = "  (over twice its budget)" if secs > 2 * c.budget else ""
            print(f"     {c.id}: {secs:.1f} s, budget {c.budget:g} s{slow}", flush=True)
    wall = time.perf_counter() - t_all
    for msg in failures:
        print(f"\nFAIL {msg}", file=sys.stderr)
    for msg in errors:
        print(f"\nERROR {msg}", file=sys.stderr)
    n_fig = sum(len(c.figures) for c in checks)
    print(f"\n{len(checks)} checks, {n_fig} figures: {len(failures)} moved beyond their "
          f"tolerance, {len(errors)} errors; wall {wall:.0f} s")
    if failures and not errors:
        print("A figure moved: rerun the section's command (docs/results.md), update the "
              "figure and say what changed, or fix the regression.", file=sys.stderr)
    return 2 if errors else (1 if failures else 0)


if __name__ == "__main__":
    sys.exit(main())
