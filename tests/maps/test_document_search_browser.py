"""Searching the documents' titles and snippets on the map (docs/map.md, "Search"), in a
real headless Chromium, against a NumPy/Python reference of the same rule."""
import re

import numpy as np
import pytest

from countgrid.maps import map_data, write_html


def tokens(text):
    return re.findall(r"[^\W_]+", str(text).lower())


def reference(titles, snippets, query):
    """Documents holding every term (the last also as a prefix); titles first, then index."""
    terms = tokens(query)
    out = []
    for t, (title, snippet) in enumerate(zip(titles, snippets)):
        words = set(tokens(title)) | set(tokens(snippet))
        ok = all(w in words for w in terms[:-1]) and any(x.startswith(terms[-1]) for x in words)
        if ok:
            tt = tokens(title)
            in_title = sum(any((x.startswith(w) if j == len(terms) - 1 else x == w) for x in tt)
                           for j, w in enumerate(terms))
            out.append((-in_title, t))
    return [t for _, t in sorted(out)]


@pytest.fixture(scope="module")
def search_map(fitted, tmp_path_factory):
    n = fitted["X"].shape[0]
    titles = [f"Report {i} on {'apples' if i % 3 == 0 else 'pears'} and Ünïcode" for i in range(n)]
    snippets = [f"Snippet {i}: {'apple pie' if i % 5 == 0 else 'plain text'}, orchard-{i % 7}"
                for i in range(n)]
    path = write_html(fitted["grid"], tmp_path_factory.mktemp("docsearch") / "map.html",
                      fitted["X"], titles=titles, snippets=snippets)
    return path, titles, snippets


@pytest.mark.parametrize("query", ["apples", "APPLE", "apple pie", "orchard 3", "ünïc",
                                   "report 12", "pears orch", "nothing-here", "  "])
def test_document_search_matches_the_reference(open_map, fitted, search_map, query):
    path, titles, snippets = search_map
    pg = open_map(path)
    got = pg("q => countgridMap.searchDocuments(q)", query)
    expected = reference(titles, snippets, query) if tokens(query) else []
    assert got == expected
    data = map_data(fitted["grid"], fitted["X"])
    corners = np.unravel_index(data["doc_map"], (10, 13))
    centres = np.ravel_multi_index([(corners[0] + 1) % 10, (corners[1] + 2) % 13], (10, 13))
    assert pg("countgridMap.highlightedCells()") == sorted(set(centres[expected].tolist()))
    listed = pg.page.locator("#cg-docs li")
    assert listed.count() == min(len(expected), 100)
    if expected:
        assert listed.nth(0).locator(".cg-doc-title").inner_text() == titles[expected[0]]
        listed.nth(0).click()
        assert pg("countgridMap.outlinedWindow()") is not None
    assert pg.errors == []


def test_the_search_mode_is_part_of_a_shared_view(browser, search_map):
    path, titles, snippets = search_map
    page = browser.new_page(viewport={"width": 1100, "height": 700})
    page.goto(path.as_uri() + "#q=apple%20pie&m=documents")
    page.wait_for_function("window.countgridMap && countgridMap.ready", timeout=30000, polling=50)
    assert page.evaluate("countgridMap.documentResults()") == reference(titles, snippets,
                                                                       "apple pie")
    page.close()
