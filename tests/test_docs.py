"""The documentation site (docs/, tools/build_docs.sh).

* Every public name of every public module is in the API reference (docs/api.rst).
* The docstrings' examples run (the doctests of every module of the installed package).
* The command-line reference covers every verb of the parser.
* With ``COUNTGRID_DOCS_BUILD`` pointing at a built site (.ci/run): no page loads a
  script or a stylesheet from the network, and the gallery and its map were built.
"""
import doctest
import importlib
import os
import pkgutil
import re
import sys
import warnings

import pytest

import countgrid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
API = os.path.join(DOCS, "api.rst")

#: Public modules without a reference section of their own, and why.
UNDOCUMENTED_MODULES = {
    # compiled; its C functions are described in docs/c_api.md
    "countgrid.cython_api",
    # ``python -m countgrid.cli``
    "countgrid.cli.__main__",
}
#: 0.1.0 module paths: one-line re-exports, listed in the reference's table.
LEGACY_MODULES = {"countgrid.counting_grid", "countgrid.classifiers",
                  "countgrid.label_embedding", "countgrid.plsa", "countgrid.itk_classifier",
                  "countgrid.zip_gtm", "countgrid.histogram_gmm"}


def _import(modname):
    """Import a module; the 0.1.0 paths without their FutureWarning (tested in
    tests/test_deprecated_paths.py)."""
    with warnings.catch_warnings():
        if modname in LEGACY_MODULES:
            warnings.simplefilter("ignore", FutureWarning)
        return importlib.import_module(modname)


def public_modules():
    names = ["countgrid"]
    for info in pkgutil.walk_packages(countgrid.__path__, "countgrid."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            names.append(info.name)
    return sorted(set(names) - UNDOCUMENTED_MODULES)


def public_names(module):
    """``__all__``, or for a module without one the classes, functions and upper-case
    constants it defines."""
    if hasattr(module, "__all__"):
        return list(module.__all__)
    names = []
    for name, obj in vars(module).items():
        if name.startswith("_"):
            continue
        if getattr(obj, "__module__", None) == module.__name__ and callable(obj):
            names.append(name)
        elif name.isupper() and isinstance(obj, (int, float, str, tuple)):
            names.append(name)
    return names


def documented():
    """Qualified names the reference documents: autosummary entries, ``py:data``
    directives and ``automodule`` sections."""
    names, modules = set(), set()
    current = None
    in_summary = False
    with open(API, encoding="utf-8") as f:
        for line in f:
            stripped = line.strip()
            if stripped.startswith(".. currentmodule::"):
                current = stripped.split("::", 1)[1].strip()
            elif stripped.startswith(".. automodule::"):
                modules.add(stripped.split("::", 1)[1].strip())
            elif stripped.startswith(".. autosummary::"):
                in_summary = True
            elif stripped.startswith(".. py:data::"):
                names.add(f"{current}.{stripped.split('::', 1)[1].strip()}")
            elif in_summary:
                if line.startswith("   ") and stripped and not stripped.startswith(":"):
                    names.add(f"{current}.{stripped}")
                elif stripped and not line.startswith("   "):
                    in_summary = False
    return names, modules


def resolve(qualname):
    parts = qualname.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = _import(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(qualname)


def test_api_reference_lists_every_public_name():
    names, modules = documented()
    objects = {id(resolve(n)) for n in names
               if not isinstance(resolve(n), (int, float, str, tuple, bool))}
    missing = []
    for modname in public_modules():
        module = _import(modname)
        for name in public_names(module):
            obj = getattr(module, name)
            if f"{modname}.{name}" in names:
                continue
            if isinstance(obj, type(os)) and obj.__name__ in modules:
                continue            # a public module (``countgrid.text``): its own section
            if not isinstance(obj, (int, float, str, tuple, bool)) and id(obj) in objects:
                continue            # a re-export of a documented object
            missing.append(f"{modname}.{name}")
    assert not missing, f"not in docs/api.rst: {missing}"


def test_api_reference_has_every_public_module():
    _, modules = documented()
    with open(API, encoding="utf-8") as f:
        text = f.read()
    absent = [m for m in public_modules()
              if m not in modules and not (m in LEGACY_MODULES and f"``{m}``" in text)]
    assert not absent, f"modules without a section or a row in docs/api.rst: {absent}"


def test_api_reference_names_resolve():
    names, modules = documented()
    for name in sorted(names | modules):
        resolve(name)


def _doctest_modules():
    found = []
    for modname in ["countgrid"] + [
            m.name for m in pkgutil.walk_packages(countgrid.__path__, "countgrid.")]:
        if modname.endswith("__main__"):
            continue
        module = _import(modname)
        if any(t.examples for t in doctest.DocTestFinder().find(module, modname)):
            found.append(modname)
    return found


@pytest.mark.parametrize("modname", _doctest_modules())
def test_doctests(modname):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")       # the plotting examples draw (no display needed)
    module = _import(modname)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # short doctest fits warn that EM stopped early
        for test in doctest.DocTestFinder().find(module, modname):
            runner.run(test, out=lambda text: sys.stdout.write(text))
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"
    assert result.attempted > 0


def test_doctests_exist():
    # the families' faces all have examples: a refactoring that drops them shows here
    assert len(_doctest_modules()) >= 10


def test_cli_reference_covers_every_verb():
    pytest.importorskip("sphinx")
    sys.path.insert(0, os.path.join(DOCS, "_ext"))
    try:
        cli_reference = importlib.import_module("cli_reference")
    finally:
        sys.path.pop(0)
    from countgrid.cli._main import VERBS

    sections = list(cli_reference.cli_sections())
    titles = [title for title, _, _ in sections]
    assert titles[0] == "countgrid"
    assert len(titles) == len(VERBS) + 1
    for verb in ("fit", "html", "vectorize", "transform", "top-words", "plot", "demo"):
        assert f"countgrid {verb}" in titles
    fit_help = dict((t, h) for t, _, h in sections)["countgrid fit"]
    assert "--grid" in fit_help and "--window" in fit_help


BUILD = os.environ.get("COUNTGRID_DOCS_BUILD")
built = pytest.mark.skipif(not BUILD, reason="set COUNTGRID_DOCS_BUILD to a built site "
                                             "(tools/build_docs.sh; .ci/run does)")

_REMOTE = re.compile(r"<(script|link|img|iframe)\b[^>]*\b(src|href)=[\"'](https?:)?//",
                     re.IGNORECASE)


def _pages():
    for folder, _, files in os.walk(BUILD):
        for name in files:
            if name.endswith(".html"):
                yield os.path.join(folder, name)


@built
def test_built_site_loads_nothing_from_the_network():
    offenders = []
    for path in _pages():
        with open(path, encoding="utf-8") as f:
            for match in _REMOTE.finditer(f.read()):
                tag = match.group(0)
                if match.group(1).lower() == "link" and "stylesheet" not in tag and \
                        "preload" not in tag and "icon" not in tag:
                    continue                # a <link rel="next"> etc. is not loaded
                offenders.append(f"{os.path.relpath(path, BUILD)}: {tag}")
    assert not offenders, offenders
    assert len(list(_pages())) > 50


@built
def test_built_site_has_gallery_map_and_reference():
    gallery = os.path.join(BUILD, "gallery")
    examples = {n[:-5] for n in os.listdir(gallery)
                if n.startswith("plot_") and n.endswith(".html")}
    scripts = {n[:-3] for n in os.listdir(os.path.join(ROOT, "examples"))
               if n.startswith("plot_") and n.endswith(".py")}
    assert len(scripts) >= 6 and examples == scripts
    with open(os.path.join(gallery, "plot_03_html_map.html"), encoding="utf-8") as f:
        assert 'src="../news20_map.html"' in f.read()
    assert os.path.getsize(os.path.join(BUILD, "news20_map.html")) > 10_000
    # the dated corpus's map (plot_09: time slider, coloured by section)
    with open(os.path.join(gallery, "plot_09_time_and_groups.html"), encoding="utf-8") as f:
        assert 'src="../python_changelog_map.html"' in f.read()
    assert os.path.getsize(os.path.join(BUILD, "python_changelog_map.html")) > 10_000
    names, _ = documented()
    pages = set(os.listdir(os.path.join(BUILD, "generated")))
    for name in names:
        if isinstance(resolve(name), (int, float, str, tuple, bool)):
            continue
        assert f"{name}.html" in pages, name
    for page in ("quickstart", "choosing", "cli_reference", "changelog", "results", "c_api"):
        assert os.path.exists(os.path.join(BUILD, f"{page}.html")), page
