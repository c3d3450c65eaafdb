"""Fixtures of the map tests: a small fitted grid with documents, and a headless Chromium.

The browser tests drive the system's Chromium (Debian's ``chromium``; .ci/run installs it)
through Playwright pointed at that executable: Playwright's own browser download is not
used.  Without Chromium (or Playwright) they skip, except in CI (``CI=true``), where they
must run and fail with a clear message instead (docs/map.md)."""
import os
import shutil
import warnings

import numpy as np
import pytest

import countgrid

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium_path():
    explicit = os.environ.get("COUNTGRID_CHROMIUM")
    if explicit:
        return explicit if os.path.exists(explicit) else None
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def _missing(reason):
    if os.environ.get("CI") == "true":
        pytest.fail(f"the browser tests must run in CI: {reason} (.ci/run installs Chromium "
                    "with apt-get; Playwright comes with the 'test' extra)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser():
    exe = chromium_path()
    if exe is None:
        _missing("Chromium is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed (pip install 'countgrid[test]')")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, headless=True,
                              args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


class Page:
    """A loaded map with its console messages and page errors."""

    def __init__(self, browser, path, width=1200, height=760, timeout=30000):
        self.page = browser.new_page(viewport={"width": width, "height": height},
                                     accept_downloads=True)
        self.errors = []
        self.page.on("console", lambda m: self.errors.append(f"console.{m.type}: {m.text}")
                     if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on("request", lambda r: self.errors.append(f"network request: {r.url}")
                     if not r.url.startswith(("file:", "data:", "blob:")) else None)
        self.page.goto(path.as_uri())
        self.page.wait_for_function(
            "window.countgridMap && (countgridMap.ready || 'error' in countgridMap)",
            timeout=timeout, polling=50)
        ready = self.page.evaluate("countgridMap.ready")
        assert ready, self.page.evaluate("countgridMap.error")

    def __call__(self, expr, arg=None):
        return self.page.evaluate(expr, arg)

    def close(self):
        self.page.close()


@pytest.fixture
def open_map(browser):
    pages = []

    def opener(path, **kw):
        pg = Page(browser, path, **kw)
        pages.append(pg)
        return pg

    yield opener
    for pg in pages:
        pg.close()


def small_corpus(n=240, Z=36, seed=0):
    """Three topics of words over documents, with titles, snippets, links and metadata."""
    rng = np.random.default_rng(seed)
    topic = np.arange(n) % 3
    X = rng.poisson(0.4, size=(n, Z))
    for k in range(3):
        X[topic == k, 12 * k:12 * k + 12] += rng.poisson(2.5, size=((topic == k).sum(), 12))
    words = [f"w{k}_{j}" for k in range(3) for j in range(12)][:Z]
    meta = {"topic": np.array(["alpha", "beta", "gamma"])[topic],
            "length": X.sum(axis=1).astype(float)}
    titles = [f"Document {i}, topic {topic[i]}" for i in range(n)]
    snippets = [f'text of "{i}", with a comma\nand a new line' for i in range(n)]
    links = [f"https://example.org/doc/{i}" for i in range(n)]
    return X, words, meta, titles, snippets, links, topic


@pytest.fixture(scope="session")
def fitted():
    X, words, meta, titles, snippets, links, topic = small_corpus()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid = countgrid.CountingGrid((10, 13), (3, 4), n_iter=15, random_state=0).fit(X)
    return dict(grid=grid, X=X, words=words, meta=meta, titles=titles, snippets=snippets,
                links=links, topic=topic)


@pytest.fixture(scope="session")
def map_options(fitted):
    """The keyword arguments of the maps of ``fitted``: its words, titles, snippets, links
    and metadata."""
    return dict(feature_names=fitted["words"], titles=fitted["titles"],
                snippets=fitted["snippets"], links=fitted["links"], metadata=fitted["meta"])


def widget_lab_folder(tmp_path_factory):
    """A folder for a JupyterLab of the widget's tests (tests/maps/test_widget*_lab.py):
    ``grid.npz`` (a 10 x 13 grid fitted to :func:`small_corpus`) and ``corpus.npz`` (X,
    words, topic, titles); skips without JupyterLab, anywidget or ipykernel (fails in
    CI).  Returns a dict: root, grid, X, words."""
    for module in ("jupyterlab", "anywidget", "ipykernel"):
        try:
            __import__(module)
        except ImportError:
            _missing(f"{module} is not installed (pip install 'countgrid[test]')")
    root = tmp_path_factory.mktemp("lab")
    X, words, meta, titles, _, _, _ = small_corpus()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid = countgrid.CountingGrid((10, 13), (3, 4), n_iter=15, random_state=0).fit(X)
    grid.save(root / "grid.npz")
    np.savez(root / "corpus.npz", X=X, words=np.asarray(words), topic=meta["topic"],
             titles=np.asarray(titles))
    return dict(root=root, grid=grid, X=X, words=words)
