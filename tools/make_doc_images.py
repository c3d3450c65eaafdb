"""Write the example pictures of docs/img/ (docs/counting_grids.md, "Pictures").

One command, from the repository root, with countgrid and matplotlib installed:

    python tools/make_doc_images.py [--out docs/img] [--no-map] [--map-features] [--map-time]

It also writes the two pictures of the README, from the same pipeline as ``countgrid
demo``: ``demo_word_grid.png`` (the word grid) and ``demo_map.png``, a screenshot of the
interactive map in headless Chromium (Playwright pointed at Debian's ``chromium``, as the
map tests; ``--no-map`` skips it), and the screenshots of docs/map.md's features made on
the same map (``map_regions.png``, ``map_select.png``, ``map_compare.png``,
``map_filters.png``, ``map_search.png``, ``map_notes.png``, and ``map_versus.png`` on a map
of two corpora made of the demo's posts; ``--map-features`` writes only these).  ``--map-time``
writes only
the screenshots of the map of a dated corpus, Python's changelog
(``data/python_changelog.npz``, the model of ``examples/plot_09_time_and_groups.py``):
``map_time.png`` (the years 2020-2022 chosen on the time bar, the cells coloured by their
share of those years' entries, a sparkline per region) and ``map_groups.png`` (the
Security section against the rest).  ``--widget`` writes only ``widget_lab.png``: the
notebook widget of examples/plot_14_notebook_widget.py in a headless JupyterLab
(tools/lab_session.py), a lasso drawn in it and ``w.selection`` shown below.

Every other model is fitted on the bundled 20 Newsgroups subset (``load_news20_3class``);
every model with a fixed seed and one thread, and matplotlib's PNG metadata (software
version, date) is dropped, so that a rerun on the same machine writes the same bytes.  Each
image is checked to stay under 200 KB (the screenshots under 400 KB).
"""
import argparse
import json
import os
import sys
import warnings

import numpy as np

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import countgrid  # noqa: E402
import countgrid.cli  # noqa: E402
from countgrid.datasets import load_news20_3class  # noqa: E402
from countgrid.exceptions import ConvergenceWarning  # noqa: E402
from countgrid.plotting import (plot_label_embedding, plot_log_likelihood,  # noqa: E402
                                plot_positions, plot_top_words, plot_word_map,
                                plot_zip_gtm_map)

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
MAX_BYTES = 200_000
SEED = 0


def save(fig, path, dpi=80, max_bytes=MAX_BYTES):
    fig.savefig(path, dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    size = os.path.getsize(path)
    if size > max_bytes:
        raise SystemExit(f"{path} is {size} bytes, over {max_bytes}")
    print(f"wrote {os.path.relpath(path)} ({size // 1024} KB)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "img"))
    ap.add_argument("--no-map", action="store_true", help="skip the map screenshots")
    ap.add_argument("--map-features", action="store_true",
                    help="write only the README's map and docs/map.md's feature screenshots")
    ap.add_argument("--widget", action="store_true",
                    help="write only the notebook widget's picture (widget_lab.png): the "
                         "gallery's grid in a headless JupyterLab (tools/lab_session.py)")
    ap.add_argument("--map-time", action="store_true",
                    help="write only docs/map.md's time and group screenshots, on the map of "
                         "Python's changelog (data/python_changelog.npz)")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    out = lambda name: os.path.join(args.out, name)  # noqa: E731
    warnings.simplefilter("ignore", ConvergenceWarning)
    if args.map_features:
        readme_pictures(out, with_map=True, word_grid=False)
        return 0
    if args.map_time:
        time_pictures(out)
        return 0
    if args.widget:
        widget_picture(out)
        return 0

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

    readme_pictures(out, with_map=not args.no_map)
    return 0


#: docs/map.md's screenshots: (file, the page's script before the shot), each on a
#: fresh page of the demo map; (r, c) is sci.space's best cell, (rb, cb) baseball's
MAP_FEATURES = [
    ("map_regions.png", "countgridMap.colorBy(null); countgridMap.reset();"),
    ("map_select.png", "countgridMap.selectCells({r0}, {c0}, {r1}, {c1});"),
    ("map_compare.png", "countgridMap.compare('group', 'sci.space', null);"),
    ("map_filters.png", "countgridMap.setFilter('group', ['rec.sport.baseball']);"
                        "document.getElementById('cg-filters-box').open = true;"
                        "countgridMap.colorBy(null); countgridMap.pin({rb}, {cb});"),
    ("map_search.png", "countgridMap.searchDocuments('shuttle launch');"),
    ("map_notes.png", "countgridMap.renameRegion(countgridMap.regionOf({r} * {E2} + {c}, "
                      "countgridMap.regionLevels()[0]), 'space flight');"
                      "countgridMap.pin({r}, {c});"
                      "countgridMap.setNote({r}, {c}, 'launches, orbits and the shuttle');"),
]
#: docs/map.md's "Two corpora": the demo's sci.space and alt.atheism posts against its
#: rec.sport.baseball and alt.atheism posts, on the demo's grid
VERSUS_SHOT = "map_versus.png"


def _shrink(shot, max_bytes=400_000):
    """256 colours: a third of the bytes of the browser's PNG, no visible loss on text."""
    from PIL import Image
    Image.open(shot).convert("RGB").quantize(256).save(shot, optimize=True)
    size = os.path.getsize(shot)
    if size > max_bytes:
        raise SystemExit(f"{shot} is {size} bytes, over {max_bytes}")
    print(f"wrote {os.path.relpath(shot)} ({size // 1024} KB)")


def readme_pictures(out, with_map=True, word_grid=True):
    """The README's word grid and map screenshot, and docs/map.md's feature screenshots:
    ``countgrid demo``'s corpus and model."""
    from countgrid.cli import _demo
    from countgrid.plotting import _new_figure, plot_word_grid, word_grid_cells

    corpus, _ = _demo.demo_corpus()
    labels = corpus.metadata["group"]
    train, _ = countgrid.cli.stratified_split(labels, 0.2, SEED)
    # the demo's model: the package's defaults (docs/choosing.md, "Defaults")
    clf = countgrid.CountingGridClassifier(random_state=SEED, num_threads=1).fit(
        corpus.counts[train], labels[train])
    size = " x ".join(map(str, clf.grid_.pi_.shape[:-1]))
    shown = word_grid_cells(clf, corpus.vocabulary, n_words=1)["words"].shape[:2]
    if word_grid:
        fig, ax = _new_figure(shown, pyplot=True)
        plot_word_grid(clf, corpus.vocabulary, ax=ax, n_words=3,
                       title=f"countgrid demo: {size} counting grid of 20 Newsgroups posts")
        save(fig, out("demo_word_grid.png"), dpi=52, max_bytes=400_000)
    if not with_map:
        return
    from playwright.sync_api import sync_playwright

    page_path = out("demo_map.html")
    countgrid.maps.write_html(clf, page_path, corpus=corpus, color_by="group",
                              random_state=SEED,
                              title=f"20 Newsgroups (3 groups): {size} counting grid")
    shot = out("demo_map.png")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=os.environ.get(
                "COUNTGRID_CHROMIUM", "/usr/bin/chromium"), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 760})
            page.goto("file://" + os.path.abspath(page_path))
            page.wait_for_function("window.countgridMap && window.countgridMap.ready")
            row, col = np.unravel_index(np.argmax(clf.gamma_[..., 2]), clf.gamma_.shape[:2])
            page.evaluate(f"window.countgridMap.pin({int(row)}, {int(col)})")
            page.wait_for_timeout(300)
            page.screenshot(path=shot)
            r, c = int(row), int(col)
            rb, cb = np.unravel_index(np.argmax(clf.gamma_[..., 1]), clf.gamma_.shape[:2])
            where = dict(r=r, c=c, r0=r - 2, c0=c - 2, r1=r + 2, c1=c + 2, rb=int(rb),
                         cb=int(cb), E2=clf.grid_.pi_.shape[1])
            for name, script in MAP_FEATURES:
                page.goto("file://" + os.path.abspath(page_path))
                page.wait_for_function("window.countgridMap && window.countgridMap.ready")
                page.evaluate(script.format(**where))
                page.wait_for_timeout(300)
                page.screenshot(path=out(name))
            space = np.isin(labels, ["sci.space", "alt.atheism"])
            baseball = np.isin(labels, ["rec.sport.baseball", "alt.atheism"])
            countgrid.maps.write_html(
                clf, page_path, corpus=corpus.subset(np.flatnonzero(space)),
                versus=corpus.subset(np.flatnonzero(baseball)),
                names=("space + atheism", "baseball + atheism"), random_state=SEED,
                title=f"Two corpora on the demo's {size} counting grid")
            page.goto("file://" + os.path.abspath(page_path))
            page.wait_for_function("window.countgridMap && window.countgridMap.ready")
            page.wait_for_timeout(300)
            page.screenshot(path=out(VERSUS_SHOT))
            browser.close()
    finally:
        os.unlink(page_path)
    for name in ["demo_map.png"] + [m[0] for m in MAP_FEATURES] + [VERSUS_SHOT]:
        _shrink(out(name))


#: The years chosen on the time bar of ``map_time.png``.
TIME_RANGE = ("2020", "2022")


def time_pictures(out):
    """docs/map.md's "Time" screenshots: the map of Python's changelog (the model of
    examples/plot_09_time_and_groups.py: the package's defaults), with a range of years
    chosen (``map_time.png``), and the Security section against the rest
    (``map_groups.png``)."""
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, os.path.join(REPO, "data"))
    from repo_data import data_path

    from countgrid.text import load_python_changelog

    corpus = load_python_changelog(data_path("python_changelog.npz"))
    X = corpus.counts.astype(np.float32)
    grid = countgrid.CountingGrid(random_state=SEED, num_threads=1).fit(X)
    size = " x ".join(map(str, grid.pi_.shape[:-1]))
    page_path = out("changelog_map.html")
    countgrid.maps.write_html(grid, page_path, X, corpus=corpus, color_by="section",
                              time="date", random_state=SEED,
                              title=f"Python's changelog, 2015-2023: {size} counting grid")
    shots = {"map_time.png": "countgridMap.setTime({p0}, {p1});",
             "map_groups.png": "countgridMap.compare('section', 'Security', null);"}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=os.environ.get(
                "COUNTGRID_CHROMIUM", "/usr/bin/chromium"), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 860})
            for name, script in shots.items():
                page.goto("file://" + os.path.abspath(page_path))
                page.wait_for_function("window.countgridMap && window.countgridMap.ready")
                years = page.evaluate("countgridMap.timeLabels()")
                p0, p1 = (years.index(y) for y in TIME_RANGE)
                page.evaluate(script.format(p0=p0, p1=p1))
                page.wait_for_timeout(300)
                page.screenshot(path=out(name))
            browser.close()
    finally:
        os.unlink(page_path)
    for name in shots:
        _shrink(out(name))



#: The notebook of ``widget_lab.png``: the grid of examples/plot_14_notebook_widget.py.
WIDGET_CELLS = [
    "import numpy as np, countgrid, warnings\n"
    "from countgrid.datasets import load_news20_3class_texts\n"
    "from countgrid.text import Corpus\n"
    "warnings.filterwarnings('ignore', category=countgrid.ConvergenceWarning)\n"
    "texts = load_news20_3class_texts()\n"
    "newsgroup = np.asarray(texts.label_names)[texts.y]\n"
    "corpus = Corpus.from_texts(list(texts.texts), metadata={'newsgroup': newsgroup},\n"
    "                           min_df=5, max_df=0.5, stop_words='english', "
    "max_features=3000)\n"
    "grid = countgrid.CountingGrid((24, 24), (5, 5), n_iter=30, dtype=np.float32,\n"
    "                              random_state=0).fit(corpus.counts.astype(np.float32))",
    "w = countgrid.widget(grid, corpus=corpus, color_by='newsgroup', height=470)\nw",
]


def widget_picture(out):
    """docs/map.md's and the gallery's picture of the notebook widget: JupyterLab with the
    widget of the gallery's grid, a lasso drawn around the cells where "orbit" is most
    probable, and the table of ``w.selection`` in the next cell's output."""
    import pathlib
    import tempfile

    from playwright.sync_api import sync_playwright
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from lab_session import LabSession

    shot = out("widget_lab.png")
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=os.environ.get(
            "COUNTGRID_CHROMIUM", "/usr/bin/chromium"), args=["--no-sandbox"])
        with LabSession(pathlib.Path(tmp), browser, width=1280, height=1000) as lab:
            lab.run_notebook(WIDGET_CELLS)
            frame = lab.map_frame(timeout=300)
            lab.page.evaluate("jupyterapp.commands.execute('application:toggle-left-area')")
            r, c = (int(v) for v in json.loads(lab.kernel(
                "import json; cells, _ = grid.word_cells('orbit', 1, corpus.vocabulary);"
                " print(json.dumps(cells[0].tolist()))")))
            frame.evaluate(f"countgridMap.reset(); countgridMap.pan({c + 0.5} - "
                           f"(countgridMap.view().ox + countgridMap.view().width / 2 / "
                           f"countgridMap.view().s), {r + 0.5} - (countgridMap.view().oy + "
                           f"countgridMap.view().height / 2 / countgridMap.view().s))")
            box = frame.locator("#cg-canvas").bounding_box()
            view = frame.evaluate("countgridMap.view()")
            cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
            radius = 2.6 * view["s"]
            lab.page.keyboard.down("Alt")
            lab.page.mouse.move(cx + radius, cy)
            lab.page.mouse.down()
            for a in np.linspace(0, 2 * np.pi, 40)[1:]:
                lab.page.mouse.move(cx + radius * np.cos(a), cy + 0.8 * radius * np.sin(a))
            lab.page.mouse.up()
            lab.page.keyboard.up("Alt")
            lab.page.wait_for_timeout(500)
            lab.page.evaluate(
                "() => { const nb = jupyterapp.shell.currentWidget;"
                " nb.content.activeCellIndex = 1;"
                " return jupyterapp.commands.execute('notebook:insert-cell-below'); }")
            lab.page.evaluate(
                "() => { const cell = jupyterapp.shell.currentWidget.content.activeCell;"
                " cell.model.sharedModel.setSource(\"w.selection[['title', 'newsgroup', "
                "'score']].head(5)\"); return jupyterapp.commands.execute("
                "'notebook:run-cell'); }")
            lab.page.wait_for_timeout(1500)
            lab.page.evaluate("() => { const nb = jupyterapp.shell.currentWidget.content;"
                              " nb.widgets[1].node.scrollIntoView(); }")
            lab.page.wait_for_timeout(500)
            lab.page.screenshot(path=shot)
        browser.close()
    _shrink(shot)


if __name__ == "__main__":
    sys.exit(main())
