"""The verbs of the command line on real text (bundled 20 Newsgroups posts written as a
folder of files and as a CSV), each through the real entry point in a subprocess, with
what they write checked against the Python API."""
import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import countgrid
from countgrid.datasets import load_news20_3class_texts
from countgrid.metrics import DIAGNOSTIC_COLUMNS, topic_diagnostics

from _expected_warnings import FEW_ITERATIONS

TRACEBACK = "Traceback (most recent call last)"
N_PER_GROUP = 60
SMALL_GRID = ["--grid", "8x8", "--window", "3x3", "--n-iter", "4", "--coarse-iter", "2",
              "--threads", "1", "--min-df", "3"]


def run(args, cwd, timeout=300, env=None):
    full_env = dict(os.environ, MPLBACKEND="Agg")
    full_env.pop("COUNTGRID_DEBUG", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "countgrid.cli", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd, env=full_env,
                          stdin=subprocess.DEVNULL)


def write_news_csv(path, per_group):
    """docs.csv (columns body, group) of the first ``per_group`` posts of each of the three
    bundled newsgroups, in ``path``; returns ``path``."""
    data = load_news20_3class_texts()
    with open(path / "docs.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["body", "group"])
        for g in range(3):
            for i in np.flatnonzero(data.y == g)[:per_group]:
                w.writerow([data.texts[i], data.label_names[g]])
    return path


def ok(res):
    assert res.returncode == 0, res.stderr
    assert TRACEBACK not in res.stderr
    return res


def one_line_error(res, status, *names):
    assert res.returncode == status, (res.returncode, res.stdout, res.stderr)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip() and "warning:" not in ln]
    assert len(lines) == 1 and TRACEBACK not in res.stderr, res.stderr
    for name in names:
        assert name in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def posts(tmp_path_factory):
    """180 posts, 60 per group, as posts/<group>/<n>.txt and as posts.csv."""
    root = tmp_path_factory.mktemp("posts")
    data = load_news20_3class_texts()
    rows = []
    for g, name in enumerate(data.label_names):
        idx = np.flatnonzero(data.y == g)[:N_PER_GROUP]
        folder = root / "posts" / str(name)
        folder.mkdir(parents=True)
        for i in idx:
            (folder / f"{i:04d}.txt").write_text(data.texts[i], encoding="utf-8")
            rows.append({"id": f"p{i}", "title": " ".join(data.texts[i].split()[:6]),
                         "group": str(name), "length": len(data.texts[i]),
                         "body": data.texts[i]})
    with open(root / "posts.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return root


@pytest.fixture(scope="module")
def model(posts):
    res = ok(run(["fit", "posts", "-o", "model.npz", "--seed", "3", *SMALL_GRID], posts))
    assert "wrote model.npz" in res.stdout
    return posts / "model.npz"


def test_coarse_iter_sets_the_stages_of_the_package_schedule():
    from countgrid.cli._models import coarse_to_fine
    assert coarse_to_fine((32, 32), (5, 5), 2) == [((10, 10), 2), ((7, 7), 2)]
    assert coarse_to_fine((40, 40), (4, 4), 15) == countgrid.grid.auto_window_schedule(
        (40, 40), (4, 4))
    assert coarse_to_fine((32, 32), (5, 5), 0) is None
    assert coarse_to_fine((8, 8), (3, 3), 2) is None


@FEW_ITERATIONS
def test_fit_raw_folder_saves_model_with_its_corpus(posts, model):
    est = countgrid.load(model)
    corpus = countgrid.io.load_corpus(model)
    assert type(est).__name__ == "CountingGrid" and est.pi_.shape[:2] == (8, 8)
    assert len(corpus) == 3 * N_PER_GROUP and corpus.n_terms == est.n_features_in_
    # the package's schedule has no stage for a 3x3 window on 8x8 (first window <= E/3)
    assert est.window == (3, 3) and est.window_schedule is None
    # the saved counts are those the model was fitted on: refitting them gives the model
    assert est.pi_.dtype == np.float32                # the command line's default
    again = countgrid.CountingGrid((8, 8), (3, 3), n_iter=4, window_schedule=None,
                                   dtype=np.float32, random_state=3,
                                   num_threads=1).fit(corpus.counts.astype(np.float32))
    assert np.array_equal(again.pi_, est.pi_)
    # stop words are gone, ids are the relative paths, sorted
    assert "the" not in set(corpus.vocabulary)
    assert list(corpus.ids) == sorted(corpus.ids)
    with np.load(model, allow_pickle=False) as f:
        assert "h_" not in f.files               # recomputed at load (format 3)


def test_fit_is_deterministic_across_thread_counts(posts, model):
    two_threads = [a if a != "1" or SMALL_GRID[i - 1] != "--threads" else "2"
                   for i, a in enumerate(SMALL_GRID)]
    ok(run(["fit", "posts", "-o", "model2.npz", "--seed", "3", *two_threads], posts))
    a, b = countgrid.load(model), countgrid.load(posts / "model2.npz")
    assert np.array_equal(a.pi_, b.pi_)


def test_transform_writes_window_centres_and_log_likelihoods(posts, model):
    ok(run(["transform", "model.npz", "-o", "pos.csv"], posts))
    with open(posts / "pos.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    est, corpus = countgrid.load(model), countgrid.io.load_corpus(model)
    assert [r["id"] for r in rows] == list(corpus.ids)
    corner = est.positions(corpus.counts)
    centre = (corner + 1) % 8                     # window 3x3: centre = corner + 1
    assert np.array_equal([[int(r["row"]), int(r["col"])] for r in rows], centre)
    np.testing.assert_allclose([float(r["log_likelihood"]) for r in rows],
                               est.score_samples(corpus.counts), rtol=1e-7)
    # new documents in raw text are mapped onto the model's vocabulary
    res = ok(run(["transform", "model.npz", "posts/sci.space", "--anchor", "corner"], posts))
    lines = res.stdout.splitlines()
    assert lines[0] == "id,row,col,log_likelihood" and len(lines) == 1 + N_PER_GROUP


def test_top_words_are_the_cells_most_probable_words(posts, model):
    # --weighting probability: the most probable words (the default until 0.2.0.dev0)
    res = ok(run(["top-words", "model.npz", "-n", "4", "--weighting", "probability"], posts))
    lines = res.stdout.splitlines()
    assert lines[0] == "row\tcol\twords" and len(lines) == 1 + 64
    est, corpus = countgrid.load(model), countgrid.io.load_corpus(model)
    row, col, words = lines[1 + 8 * 2 + 5].split("\t")
    assert (row, col) == ("2", "5")
    best = np.argsort(-est.pi_[2, 5], kind="stable")[:4]
    assert words.split() == list(corpus.vocabulary[best])


@pytest.mark.parametrize("flags, weighting", [([], "relevance"), (["--weighting", "lift"], "lift"),
                                              (["--idf"], "idf")])
def test_top_words_are_the_most_relevant_by_default(posts, model, flags, weighting):
    res = ok(run(["top-words", "model.npz", "-n", "3", *flags], posts))
    est, corpus = countgrid.load(model), countgrid.io.load_corpus(model)
    want = est.top_words(3, corpus.vocabulary, weighting=weighting, X=corpus.counts)
    rows = [ln.split("\t") for ln in res.stdout.splitlines()[1:]]
    assert [r[2].split() for r in rows] == want.reshape(-1, 3).tolist()


def test_plot_color_by_is_honoured_or_refused(posts, model):
    """--color-by tints the word grid, embeds labels, colours positions; the kinds that
    draw no colours by a column refuse it (it was silently ignored by the word grid)."""
    pytest.importorskip("matplotlib")
    for kind in ("words", "labels", "positions"):
        ok(run(["plot", "model.npz", "-o", f"c_{kind}.png", "--kind", kind, "--color-by",
                "folder", "--levels", "sci.space,alt.atheism"], posts))
        assert (posts / f"c_{kind}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    word = str(countgrid.io.load_corpus(model).vocabulary[0])
    for argv, flag in ((["--kind", "word", "--word", word, "--color-by", "folder"], "--color-by"),
                       (["--kind", "likelihood", "--color-by", "folder"], "--color-by"),
                       (["--kind", "positions", "--weighting", "lift"], "--weighting"),
                       (["--kind", "likelihood", "--levels", "a"], "--levels"),
                       (["--kind", "positions", "--color-by", "folder", "--levels", "nope"],
                        "--levels")):
        one_line_error(run(["plot", "model.npz", "-o", "refused.png", *argv], posts), 2, flag)
    assert not (posts / "refused.png").exists()


def test_vectorize_then_fit_equals_fit_on_raw_text(posts, model):
    ok(run(["vectorize", "posts", "-o", "corpus.npz", "--min-df", "3"], posts))
    ok(run(["fit", "corpus.npz", "-o", "from_corpus.npz", "--seed", "3", *SMALL_GRID],
           posts))
    assert np.array_equal(countgrid.load(posts / "from_corpus.npz").pi_,
                          countgrid.load(model).pi_)


def test_csv_input_with_columns_and_metadata(posts):
    ok(run(["fit", "posts.csv", "--text-col", "body", "--id-col", "id", "--title-col",
            "title", "--meta-cols", "group,length", "-o", "csv_model.npz", *SMALL_GRID],
           posts))
    corpus = countgrid.io.load_corpus(posts / "csv_model.npz")
    assert corpus.ids[0] == "p" + str(int(corpus.ids[0][1:]))
    assert set(corpus.metadata) >= {"group", "length"}
    assert corpus.metadata["length"].dtype.kind == "f"
    assert sorted(set(corpus.metadata["group"])) == [
        "alt.atheism", "rec.sport.baseball", "sci.space"]


@pytest.mark.parametrize("name, extra, head", [
    ("plsa", ["--model", "plsa", "-k", "5", "--n-iter", "5"], "topic\twords"),
    ("rap", ["--model", "rap", "-k", "8", "--n-iter", "2"], "unit\twords"),
    ("zipgtm", ["--model", "zipgtm", "--grid", "4x5", "--n-iter", "3"], "node\tx\ty\twords"),
])
def test_other_models_fit_transform_and_top_words(posts, name, extra, head):
    ok(run(["fit", "posts", "-o", f"{name}.npz", "--threads", "1", "--min-df", "3", *extra],
           posts))
    est = countgrid.load(posts / f"{name}.npz")
    assert type(est).__name__ == {"plsa": "PLSA", "rap": "RAP", "zipgtm": "ZIPGTM"}[name]
    res = ok(run(["top-words", f"{name}.npz"], posts))
    assert res.stdout.splitlines()[0] == head
    res = ok(run(["transform", f"{name}.npz"], posts))
    lines = res.stdout.splitlines()
    assert len(lines) == 1 + 3 * N_PER_GROUP


@pytest.mark.parametrize("likelihood, params", [
    ("nb", dict(zero_inflation=False, distribution="negative_binomial", size_factors=False)),
    ("zinb", dict(zero_inflation=True, distribution="negative_binomial", size_factors=False)),
    ("poisson-sf", dict(zero_inflation=False, distribution="poisson", size_factors=True)),
])
def test_zipgtm_likelihoods(posts, likelihood, params):
    res = ok(run(["fit", "posts", "-o", "lk.npz", "--threads", "1", "--min-df", "3",
                  "--model", "zipgtm", "--grid", "4x4", "--n-iter", "3",
                  "--likelihood", likelihood], posts))
    assert f"nodes ({likelihood})" in res.stdout
    est = countgrid.load(posts / "lk.npz")
    assert {k: est.get_params()[k] for k in params} == params
    assert hasattr(est, "dispersion_") == (params["distribution"] == "negative_binomial")
    res = run(["fit", "posts", "-o", "no.npz", "--likelihood", "nb"], posts)
    assert res.returncode == 2 and "argument --likelihood" in res.stderr
    assert "--model cg" in res.stderr and TRACEBACK not in res.stderr


def test_evaluate_reports_cross_validated_accuracy_and_baseline(posts):
    res = ok(run(["evaluate", "posts.csv", "--text-col", "body", "--label-col", "group",
                  "--folds", "3", "--grid", "8x8", "--window", "3x3", "--n-iter", "5",
                  "--coarse-iter", "0", "--threads", "1", "--min-df", "3"], posts))
    out = res.stdout
    # one result line per fold, and a progress line inside each (on stderr or stdout)
    assert sum(1 for line in out.splitlines()
               if line.startswith("fold ") and "naive Bayes" in line) == 3, out
    assert (out + res.stderr).count("fitting on") >= 3, out + res.stderr
    acc = float(out.split("accuracy ")[1].split()[0])
    nb = float(out.split("accuracy ")[2].split()[0])
    assert 0.5 < acc <= 1.0 and 0.5 < nb <= 1.0      # three groups: chance is 1/3
    # each fold's grid scored on its test documents, and the means
    folds = [ln for ln in out.splitlines() if ln.startswith("fold ") and "naive" in ln]
    assert all("held-out perplexity" in ln and "NPMI" in ln for ln in folds), out
    ppl = float(out.split("held-out perplexity ")[-1].split()[0])
    npmi = float(out.split("\ncoherence ")[1].split()[0])
    assert 1.0 < ppl < 5000 and -1.0 <= npmi <= 1.0, out
    res = ok(run(["evaluate", "posts.csv", "--text-col", "body", "--label-col", "group",
                  "--folds", "2", "--grid", "8x8", "--window", "3x3", "--n-iter", "2",
                  "--coarse-iter", "0", "--threads", "1", "--min-df", "3",
                  "--no-diagnostics"], posts))
    assert "perplexity" not in res.stdout and "coherence" not in res.stdout


@FEW_ITERATIONS
def test_evaluate_fold_diagnostics_are_the_metrics():
    from countgrid.cli._evaluate import fold_diagnostics
    from countgrid.metrics import completion_perplexity, topic_coherence, topic_top_words

    rng = np.random.default_rng(0)
    X = rng.poisson(0.6, size=(90, 40))
    grid = countgrid.CountingGrid((10, 10), (3, 3), n_iter=3, window_schedule=None,
                                  random_state=0).fit(X[:60])
    ppl, npmi, n_regions = fold_diagnostics(grid, X[60:], 4)
    assert n_regions == 2                               # about one per 50 cells
    assert ppl == completion_perplexity(grid, X[60:], random_state=4)
    top = topic_top_words(grid, 10, regions=countgrid.grid.regions(grid, 2))
    assert npmi == topic_coherence(top, X[60:], measure="c_npmi").mean
    # counts that are not integers: no perplexity, the coherence still
    ppl, npmi2, _ = fold_diagnostics(grid, X[60:] + 0.5, 4)
    assert ppl is None and np.isfinite(npmi2)


def test_html_map_of_the_saved_corpus(posts, model):
    res = ok(run(["html", "model.npz", "-o", "map.html", "--color-by", "folder"], posts))
    assert "wrote map.html" in res.stdout
    page = (posts / "map.html").read_text(encoding="utf-8")
    assert page.lstrip().lower().startswith("<!doctype html")
    assert "<script src=" not in page and "cdn." not in page    # offline: nothing fetched


def test_html_weighting_and_levels(posts, model):
    from _map_page import decode

    ok(run(["html", "model.npz", "-o", "map_levels.html", "--color-by", "folder", "--levels",
            "sci.space", "--weighting", "probability"], posts))
    data = decode((posts / "map_levels.html").read_text(encoding="utf-8"))
    assert data["weighting"] == "probability"
    col = data["colorings"][0]
    assert col["levels"] == ["sci.space", "other"] and col["lumped"]
    ok(run(["html", "model.npz", "-o", "map_idf.html", "--idf"], posts))
    assert decode((posts / "map_idf.html").read_text(encoding="utf-8"))["weighting"] == "idf"
    for argv, flag in ((["--levels", "sci.space"], "--levels"),
                       (["--color-by", "folder", "--levels", "nope"], "--levels"),
                       (["--idf", "--weighting", "lift"], "--idf")):
        one_line_error(run(["html", "model.npz", "-o", "no.html", *argv], posts), 2, flag)


@pytest.mark.parametrize("kind", ["words", "positions", "word", "likelihood"])
def test_plot_kinds_write_pictures(posts, model, kind):
    pytest.importorskip("matplotlib")
    extra = ["--word", str(countgrid.io.load_corpus(model).vocabulary[0])] if kind == "word" \
        else []
    ok(run(["plot", "model.npz", "-o", f"{kind}.png", "--kind", kind, *extra], posts))
    assert (posts / f"{kind}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@FEW_ITERATIONS
def test_layered_grid_fit_and_the_verbs_that_read_it(posts):
    """--layers 2 fits a LayeredCountingGrid; transform adds each document's layer, the map
    and top-words read its spatial grid."""
    ok(run(["fit", "posts", "-o", "layers.npz", "--seed", "3", "--layers", "2", *SMALL_GRID],
           posts))
    est, corpus = countgrid.load(posts / "layers.npz"), countgrid.io.load_corpus(
        posts / "layers.npz")
    assert type(est).__name__ == "LayeredCountingGrid" and est.pi_.shape[:3] == (2, 8, 8)
    again = countgrid.LayeredCountingGrid((8, 8), (3, 3), n_layers=2, n_iter=4,
                                          window_schedule=None, dtype=np.float32,
                                          random_state=3, num_threads=1).fit(
        corpus.counts.astype(np.float32))
    assert np.array_equal(again.pi_, est.pi_)
    ok(run(["transform", "layers.npz", "-o", "layers.csv"], posts))
    with open(posts / "layers.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    X = corpus.counts
    assert list(rows[0]) == ["id", "row", "col", "layer", "log_likelihood"]
    assert [int(r["layer"]) for r in rows] == np.argmax(est.layer_posterior(X), 1).tolist()
    q = est.transform(X).reshape(len(rows), 2, -1).sum(axis=1)
    corner = np.stack(np.unravel_index(np.argmax(q, axis=1), (8, 8)), axis=1)
    assert np.array_equal([[int(r["row"]), int(r["col"])] for r in rows], (corner + 1) % 8)
    np.testing.assert_allclose([float(r["log_likelihood"]) for r in rows],
                               est.score_samples(X), rtol=1e-7)
    res = ok(run(["html", "layers.npz", "-o", "layers.html"], posts))
    assert "wrote layers.html" in res.stdout
    page = (posts / "layers.html").read_text(encoding="utf-8")
    assert 'id="cg-layers"' in page
    ok(run(["top-words", "layers.npz", "-o", "layers.tsv", "--regions", "3"], posts))
    assert len((posts / "layers.tsv").read_text().splitlines()) == 4


# ---------------------------------------------------------------- errors
@FEW_ITERATIONS
@pytest.mark.parametrize("argv, status, names", [
    (["fit", "nowhere", "-o", "m.npz"], 2, ["INPUT", "nowhere"]),
    (["fit", "posts", "-o", "m.txt"], 2, ["--output", ".npz"]),
    (["fit", "posts", "-o", "m.npz", "--grid", "8x8", "--window", "9x9"], 2, ["--window"]),
    (["fit", "posts", "-o", "m.npz", "--grid", "axb"], 2, ["--grid"]),
    (["fit", "posts", "-o", "m.npz", "--model", "plsa", "--window", "3x3"], 2, ["--window"]),
    (["fit", "posts.csv", "-o", "m.npz", "--text-col", "nope"], 1, ["nope", "posts.csv"]),
    (["fit", "posts.csv", "-o", "m.npz"], 1, ["text"]),
    (["transform", "nowhere.npz"], 2, ["MODEL"]),
    (["transform", "posts.csv"], 1, ["posts.csv"]),
    (["html", "plsa_err.npz", "-o", "x.html"], 2, ["MODEL"]),
    (["html", "model.npz", "-o", "x.html", "--color-by", "nope"], 2, ["--color-by", "nope"]),
    (["top-words", "model.npz", "-o", "folder_out"], 2, ["--output"]),
    (["fit", "posts", "-o", "m.npz", "--model", "plsa", "--layers", "2"], 2, ["--layers"]),
    (["fit", "posts", "-o", "m.npz", "--layers", "0"], 2, ["--layers"]),
])
def test_errors_are_one_line(posts, model, argv, status, names):
    (posts / "folder_out").mkdir(exist_ok=True)
    if "plsa_err.npz" in argv and not (posts / "plsa_err.npz").exists():
        countgrid.PLSA(2, n_iter=2, random_state=0).fit(
            np.random.default_rng(0).poisson(1, (20, 10))).save(posts / "plsa_err.npz")
    one_line_error(run(argv, posts), status, *names)
    assert not (posts / "m.npz").exists() and not (posts / "x.html").exists()


def test_every_verb_has_an_example_in_its_help(tmp_path):
    from countgrid.cli._main import VERBS, build_parser

    parser = build_parser()
    names = [a for a in parser._subparsers._group_actions[0].choices]
    assert len(names) == len(VERBS)
    choices = parser._subparsers._group_actions[0].choices
    for name in names:
        text = choices[name].format_help()
        assert "example" in text and f"countgrid {name}" in text.split("example")[-1], name
    res = ok(run(["fit", "--help"], tmp_path))          # and through the real entry point
    assert "examples:" in res.stdout


def test_bad_text_input_is_one_line_naming_the_file(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "a.txt").write_text("a fine post about space and rockets\n", encoding="utf-8")
    (bad / "b.txt").write_bytes(b"caf\xe9 latin-1 text \xff\xfe")
    # skipped with a warning by default (tests/text/test_messy_folders.py); --on-error fail
    line = one_line_error(run(["fit", "bad", "-o", "m.npz", "--on-error", "fail"], tmp_path),
                          1, "b.txt")
    assert "--encoding" in line
    (tmp_path / "empty").mkdir()
    one_line_error(run(["fit", "empty", "-o", "m.npz"], tmp_path), 1, "empty")
    (tmp_path / "rows.csv").write_text("text,group\nhello world,a\n", encoding="utf-8")
    one_line_error(run(["evaluate", "rows.csv", "--text-col", "text", "--label-col", "nope"],
                       tmp_path), 1, "nope")
    assert not (tmp_path / "m.npz").exists()




# ---------------------------------------------------------------- countgrid diagnostics
@pytest.fixture(scope="module")
def diag_models(posts):
    ok(run(["fit", "posts", "-o", "grid.npz", "--seed", "1", *SMALL_GRID], posts))
    ok(run(["fit", "posts", "-o", "plsa.npz", "--model", "plsa", "-k", "4", "--n-iter", "5",
            "--threads", "1", "--min-df", "3"], posts))
    return posts


def _read_tsv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def test_the_table_is_topic_diagnostics_of_the_saved_corpus(diag_models):
    res = ok(run(["diagnostics", "plsa.npz", "-o", "plsa.tsv", "--picture", "q.png"], diag_models))
    assert "wrote plsa.tsv (4 topics)" in res.stdout and "wrote q.png" in res.stdout
    assert (diag_models / "q.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = _read_tsv(diag_models / "plsa.tsv")
    est, corpus = countgrid.load(diag_models / "plsa.npz"), countgrid.io.load_corpus(
        diag_models / "plsa.npz")
    want = topic_diagnostics(est, corpus.counts).table(corpus.vocabulary)
    assert list(rows[0]) == ["topic", *DIAGNOSTIC_COLUMNS, "top_words"]
    assert [r["top_words"] for r in rows] == want["top_words"]
    for c in DIAGNOSTIC_COLUMNS:
        np.testing.assert_allclose([float(r[c]) for r in rows], want[c], rtol=1e-5)
    # stdout holds the table alone
    res = ok(run(["diagnostics", "plsa.npz", "-n", "3"], diag_models))
    assert res.stdout.splitlines()[0].startswith("topic\ttokens\t")
    assert len(res.stdout.splitlines()) == 5


def test_grid_regions_as_json(diag_models):
    ok(run(["diagnostics", "grid.npz", "--regions", "5", "-o", "r.json", "--coherence",
            "c_npmi", "--frex-weight", "0.5"], diag_models))
    payload = json.loads((diag_models / "r.json").read_text(encoding="utf-8"))
    assert payload["topics"] == "region" and payload["model"] == "CountingGrid"
    assert payload["coherence_measure"] == "c_npmi" and payload["frex_weight"] == 0.5
    assert len(payload["rows"]) == 5 and payload["n_documents"] == 3 * N_PER_GROUP
    grid, corpus = countgrid.load(diag_models / "grid.npz"), countgrid.io.load_corpus(
        diag_models / "grid.npz")
    want = topic_diagnostics(grid, corpus.counts, regions=5, coherence="c_npmi",
                             frex_weight=0.5)
    np.testing.assert_allclose([r["tokens"] for r in payload["rows"]], want.tokens,
                               rtol=1e-10)
    assert payload["rows"][0]["top_words"] == [
        corpus.vocabulary[i] for i in want.top_words[0]]
    # cells, on other documents
    ok(run(["diagnostics", "grid.npz", "posts/sci.space", "-o", "cells.tsv"], diag_models))
    rows = _read_tsv(diag_models / "cells.tsv")
    assert len(rows) == 64 and list(rows[0])[0] == "cell"
    assert sum(int(r["rank1_documents"]) for r in rows) == N_PER_GROUP


@pytest.mark.parametrize("argv, names", [
    (["diagnostics", "plsa.npz", "--regions", "3"], ["--regions", "PLSA"]),
    (["diagnostics", "grid.npz", "--regions", "65"], ["--regions", "64 cells"]),
    (["diagnostics", "plsa.npz", "-n", "1"], ["--n-words"]),
    (["diagnostics", "plsa.npz", "--frex-weight", "1"], ["--frex-weight"]),
    (["diagnostics", "plsa.npz", "-o", "d.csv"], ["--output", ".tsv"]),
    (["diagnostics", "plsa.npz", "--picture", "q.nope"], ["--picture"]),
    (["diagnostics", "plsa.npz", "--picture", "-"], ["--picture"]),
    (["diagnostics", "nowhere.npz"], ["MODEL"]),
])
def test_diagnostics_errors_are_one_line(diag_models, argv, names):
    one_line_error(run(argv, diag_models), 2, *names)


# ---------------------------------------------------------------- countgrid stability
STABILITY = ["--grid", "8x8", "--window", "3x3", "--n-iter", "4", "--coarse-iter", "0",
             "--threads", "1", "--min-df", "3"]


def test_stability_summary_table_and_picture(posts):
    res = ok(run(["stability", "posts", "--restarts", "2", "--regions", "3", "-o", "s.tsv",
                  "--picture", "s.png", *STABILITY], posts))
    lines = res.stdout.splitlines()
    sim = float(next(ln for ln in lines if ln.startswith("similarity ")).split()[1])
    assert 0.0 < sim <= 1.0
    placed = next(ln for ln in lines if ln.startswith("documents placed alike: "))
    assert placed.endswith("within half a window)")
    assert "wrote s.tsv (3 rows)" in res.stdout and "wrote s.png" in res.stdout
    rows = _read_tsv(posts / "s.tsv")
    assert list(rows[0]) == ["region", "cells", "stability", "document_agreement", "words"]
    assert sum(int(r["cells"]) for r in rows) == 64
    assert all(0.0 < float(r["stability"]) <= 1.0 + 1e-9 for r in rows)
    assert (posts / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the same seed, the same numbers; per cell without --regions
    again = ok(run(["stability", "posts", "--restarts", "2", "-o", "c.tsv", *STABILITY],
                   posts))
    assert again.stdout.splitlines()[1] == lines[1]
    assert len(_read_tsv(posts / "c.tsv")) == 64


@pytest.mark.parametrize("argv, names", [
    (["--restarts", "1"], ["--restarts"]),
    (["--picture", "-"], ["--picture"]),
    (["-o", "-"], ["--output"]),
    (["-o", "s.csv"], ["--output", ".tsv"]),
    (["--grid", "8x8", "--window", "9x9"], ["--window"]),
])
def test_stability_errors_are_one_line(posts, argv, names):
    one_line_error(run(["stability", "posts", *argv], posts), 2, *names)


@FEW_ITERATIONS
def test_diagnostics_json_keeps_words_with_spaces(tmp_path):
    """Top words are listed from the vocabulary, not split from the TSV's joined text: a
    phrase ("new york", from an n-gram vectoriser) stays one word."""
    rng = np.random.default_rng(0)
    X = rng.poisson(2.0, size=(40, 6))
    vocabulary = ["new york", "space", "orbit", "=sum", "god", "team"]
    model = countgrid.PLSA(2, n_iter=5, random_state=0).fit(X)
    countgrid.io.save(model, tmp_path / "p.npz",
                      corpus=countgrid.text.Corpus(X, vocabulary))
    ok(run(["diagnostics", "p.npz", "-n", "6", "-o", "d.json"], tmp_path))
    payload = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    want = topic_diagnostics(model, X, n_words=6).top_words
    assert [r["top_words"] for r in payload["rows"]] == [
        [vocabulary[i] for i in row] for row in want]
