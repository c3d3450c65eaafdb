"""A corpus from anyone (issue 30): texts cut at stated limits, links checked, the page's
script and data blocks unbreakable, in Python (the browser side: test_untrusted_browser)."""
import json
import re
import warnings
from importlib import resources

import numpy as np
import pytest

import countgrid
from countgrid.maps import (MAX_ID_CHARS, MAX_LABEL_CHARS, MAX_LINK_CHARS, MAX_NAME_CHARS,
                            MAX_SNIPPET_CHARS, MAX_TITLE_CHARS, MAX_WORD_CHARS, map_data,
                            safe_link, truncate_text, write_html)
from countgrid.maps._data import _truncate_all

from _map_page import ALLOWED, DROPPED, HOSTILE, decode

ELLIPSIS = "\u2026"


# ------------------------------------------------------------------ safe_link
def _short(url):
    return ascii(url)[:40]


@pytest.mark.parametrize("url", sorted(ALLOWED), ids=_short)
def test_safe_link_allows_http_https_and_relative(url):
    assert safe_link(url) == ALLOWED[url]


@pytest.mark.parametrize("url", DROPPED, ids=_short)
def test_safe_link_drops_everything_else(url):
    assert safe_link(url) is None


def test_safe_link_length_and_types():
    base = "https://ok.example/"
    at = base + "a" * (MAX_LINK_CHARS - len(base))
    assert safe_link(at) == at and safe_link(at + "a") is None
    assert safe_link(" " * 5000 + at) == at        # the limit is on the cleaned link
    assert safe_link("https://ok.example/\U0001F600" * 10) is not None
    for bad in (None, 5, b"https://x", ["https://x"]):
        assert safe_link(bad) is None


# ------------------------------------------------------------------ truncate_text
def test_truncate_text_keeps_short_texts_and_cuts_with_an_ellipsis():
    assert truncate_text("", 5) == "" and truncate_text("abcde", 5) == "abcde"
    assert truncate_text("abcdef", 5) == "abcd" + ELLIPSIS
    long = "x" * 200_000
    for limit in (1, 2, 50, 200):
        out = truncate_text(long, limit)
        assert len(out) == limit and out.endswith(ELLIPSIS)


@pytest.mark.parametrize("text, limit, expected", [
    ("cafe\u0301s", 5, "caf" + ELLIPSIS),                          # e + combining acute
    ("ab\u0915\u094d\u0937", 4, "ab" + ELLIPSIS),                  # Devanagari conjunct
    ("a\U0001F468\u200d\U0001F469\u200d\U0001F467bcd", 5, "a" + ELLIPSIS),   # ZWJ family
    ("a\U0001F44D\U0001F3FDbcd", 3, "a" + ELLIPSIS),              # emoji + skin tone
    ("a\u2764\ufe0fbcd", 3, "a" + ELLIPSIS),                      # variation selector
    ("ab" + "\U0001F1EB\U0001F1F7" * 3, 6, "ab\U0001F1EB\U0001F1F7" + ELLIPSIS),  # flags
    ("ab" + "\U0001F1EB\U0001F1F7" * 3, 5, "ab\U0001F1EB\U0001F1F7" + ELLIPSIS),
    ("a\U0001F1EB\U0001F1F7\U0001F1E9\U0001F1EA", 4, "a\U0001F1EB\U0001F1F7" + ELLIPSIS),
    ("ab\ud83d\ude00cd", 4, "ab" + ELLIPSIS),                     # a surrogate pair
    ("\u1100\u1161\u11a8xyz", 3, ELLIPSIS),                      # conjoining jamo
])
def test_truncate_text_keeps_characters_whole(text, limit, expected):
    assert truncate_text(text, limit) == expected


def test_truncate_text_bounds_the_backoff():
    # more than 30 combining marks in a row (stream-safe text's bound): cut where it stands
    zalgo = "a" + "\u0301" * 100
    assert truncate_text(zalgo, 50) == zalgo[:49] + ELLIPSIS
    few = "ab" + "\u0301" * 20
    assert truncate_text(few, 10) == "a" + ELLIPSIS


def test_truncate_all_never_merges_distinct_values():
    long_a, long_b = "p" * 300 + "A", "p" * 300 + "B"
    out = _truncate_all([long_a, "short", long_b, long_a, "p" * 99 + ELLIPSIS], 100,
                        distinct=True)
    assert out[1] == "short" and out[4] == "p" * 99 + ELLIPSIS    # uncut values are kept
    assert out[0] == out[3] != out[2]                   # equal values stay equal
    assert out[0].endswith(ELLIPSIS + " (1)") and out[2].endswith(ELLIPSIS + " (2)")
    assert all(len(v) <= 100 for v in out)
    # hostile: many values sharing a long prefix, and values that look like the suffixes
    rng = np.random.default_rng(0)
    values = ["q" * 120 + str(i) for i in range(30)] + ["q" * 44 + ELLIPSIS + f" ({k})"
                                                         for k in range(1, 5)]
    values += ["".join(rng.choice(list("ab\u0301"), size=rng.integers(40, 60)))
               for _ in range(200)]
    out = _truncate_all(values, 50, distinct=True)
    assert all(len(v) <= 50 for v in out)
    assert len(set(out)) == len(set(values))
    assert [o for v, o in zip(values, out) if len(v) <= 50] == [v for v in values
                                                                 if len(v) <= 50]
    assert _truncate_all(["x" * 60, "x" * 61], 50) == ["x" * 49 + ELLIPSIS] * 2   # titles


# ------------------------------------------------------------------ map_data
@pytest.fixture(scope="module")
def tiny():
    X = np.random.default_rng(0).poisson(1.0, size=(40, 12))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid = countgrid.CountingGrid((4, 5), (4, 5), n_iter=3, random_state=0).fit(X)
    return grid, X


def test_map_data_cuts_every_shown_text(tiny, tmp_path):
    grid, X = tiny
    n = len(X)
    big = "x" * 200_000
    words = [f"w{j}" + big for j in range(12)]
    level = np.array([f"{'ab'[i % 2]}" + big for i in range(n)])      # two levels
    ids = [f"{i}" + big for i in range(n)]
    d = map_data(grid, X, feature_names=words, titles=[big] * n, ids=ids,
                 snippets=[big] * n, links=["https://ok.example/" + big] * n,
                 metadata={"c" + big: level, "v" + big: np.arange(n) * 1.0},
                 title="T" + big, color_by="c" + big)
    assert d["title"] == truncate_text("T" + big, MAX_TITLE_CHARS)
    assert d["titles"] == [truncate_text(big, MAX_TITLE_CHARS)] * n
    assert d["snippets"] == [truncate_text(big, MAX_SNIPPET_CHARS)] * n
    assert d["ids"] == [truncate_text(i, MAX_ID_CHARS) for i in ids]
    assert d["vocabulary"] == [truncate_text(w, MAX_WORD_CHARS) for w in words]
    assert d["links"] == [""] * n                                    # too long: dropped
    cat, num = d["colorings"]
    assert cat["name"] == truncate_text("c" + big, MAX_NAME_CHARS) == d["color_by"]
    assert num["name"] == truncate_text("v" + big, MAX_NAME_CHARS)
    assert cat["levels"] == [truncate_text("a" + big, MAX_LABEL_CHARS),
                             truncate_text("b" + big, MAX_LABEL_CHARS)]
    assert all(len(s) <= MAX_WORD_CHARS for s in d["vocabulary"])
    # the file stays small: about the limits per document, not 200,000 characters
    path = write_html(grid, tmp_path / "m.html", X, feature_names=words,
                      titles=[big] * n, ids=[big] * n, snippets=[big] * n,
                      metadata={"c" + big: level}, title=big, data_format="json")
    assert path.stat().st_size < 200_000


def test_cut_categories_and_names_stay_distinct(tiny):
    grid, X = tiny
    n = len(X)
    stem = "s" * 150
    labels = np.array([stem + "A", stem + "B", "plain"])[np.arange(n) % 3]
    d = map_data(grid, X, metadata={stem + "1": labels, stem + "2": labels},
                 ids=[stem + str(i % 20) for i in range(n)], color_by=stem + "2")
    a, b = d["colorings"]
    assert a["name"] != b["name"] and d["color_by"] == b["name"]
    assert len(a["name"]) <= MAX_NAME_CHARS and a["name"].endswith(ELLIPSIS + " (1)")
    assert len(set(a["levels"])) == 3
    assert a["levels"][0] == "plain" and a["counts"].tolist() == [13, 14, 13]   # not merged
    assert all(len(v) <= MAX_LABEL_CHARS for v in a["levels"])
    assert len(set(d["ids"])) == 20 and d["ids"][0] == d["ids"][20]
    # the shown name works too, and an unknown one is still an error
    assert map_data(grid, X, metadata={stem + "1": labels}, color_by=truncate_text(
        stem + "1", MAX_NAME_CHARS))["color_by"] == truncate_text(stem + "1", MAX_NAME_CHARS)
    with pytest.raises(ValueError, match="color_by"):
        map_data(grid, X, metadata={stem + "1": labels}, color_by=stem)


def test_links_are_checked_and_escape_formulas_is_carried(tiny):
    grid, X = tiny
    n = len(X)
    raw = (DROPPED + sorted(ALLOWED) + ["https://ok.example"] * n)[:n]
    d = map_data(grid, X, links=raw)
    assert d["links"] == [safe_link(v) or "" for v in raw]
    assert d["escape_formulas"] is True
    assert map_data(grid, X, escape_formulas=False)["escape_formulas"] is False
    with pytest.raises(TypeError, match="escape_formulas"):
        map_data(grid, X, escape_formulas="no")


def test_the_page_limit_on_links_is_pythons():
    js = resources.files("countgrid.maps").joinpath("assets", "map.js").read_text("utf-8")
    assert re.search(r"const MAX_LINK_CHARS = (\d+);", js).group(1) == str(MAX_LINK_CHARS)


@pytest.mark.parametrize("data_format", ["json", "gzip"])
def test_no_text_can_close_the_script_or_title(tiny, tmp_path, data_format):
    grid, X = tiny
    n = len(X)
    texts = (HOSTILE * n)[:n]
    words = HOSTILE + [f"w{j}" for j in range(12 - len(HOSTILE))]
    kw = dict(titles=texts, ids=[f"{i}{t}" for i, t in enumerate(texts)], snippets=texts,
              feature_names=words, metadata={HOSTILE[2]: np.array(texts)},
              title=" ".join(HOSTILE))
    path = write_html(grid, tmp_path / "m.html", X, data_format=data_format, **kw)
    page = path.read_text("utf-8")
    # the two data blocks' and the code's
    assert page.lower().count("</script") == 3
    scripts = re.findall(r"<script[^>]*>(.*?)</script>", page, re.S)
    assert len(scripts) == 3
    for text in scripts:
        for bad in ("</", "<!--", "\u2028", "\u2029"):
            assert bad not in text
    head = page[:page.index("<style>")]
    assert "<script" not in head.lower() and "<img" not in head.lower()
    got = decode(page)
    d = map_data(grid, X, **kw)
    for key in ("titles", "ids", "snippets", "vocabulary", "title"):
        assert got[key] == d[key]
    assert got["colorings"][0]["name"] == HOSTILE[2]
    assert got["colorings"][0]["levels"] == sorted(set(texts))
    if data_format == "json":
        json.loads(re.search(r'<script id="cg-data"[^>]*>(.*?)</script>', page,
                             re.S).group(1))
