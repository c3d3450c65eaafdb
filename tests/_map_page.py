"""Helpers of the map tests (tests/maps): the data block of a written map, decoded as the
page's loader reads it; hostile texts and links of a corpus from anyone (issue 30)."""
import base64
import gzip
import json
import re

import numpy as np

from countgrid.maps import MAX_LINK_CHARS

#: Links safe_link keeps, and how it spells them.
ALLOWED = {
    "https://ok.example/a?b": "https://ok.example/a?b",
    "http://ok.example": "http://ok.example",
    "HtTpS://ok.example/x": "HtTpS://ok.example/x",
    "rel/path.html": "rel/path.html",
    "../up.html": "../up.html",
    "/abs/path": "/abs/path",
    "?q=1": "?q=1",
    "#frag": "#frag",
    " \t https://ok.example/s \n": "https://ok.example/s",        # stripped as browsers do
    "\x00\x1fhttps://ok.example/c\x01": "https://ok.example/c",
    "https://ok.exa\tmple/\nt": "https://ok.example/t",            # tab/newline removed
    "1a:b": "1a:b",                 # no scheme (a scheme starts with a letter): relative
    "javascript :x": "javascript :x",                 # a space ends the scheme: relative
    "ja\u200bvascript:x": "ja\u200bvascript:x",        # so does a zero-width space
    "\u00a0javascript:x": "\u00a0javascript:x",        # NBSP is not stripped: relative
    "javascript&colon;x": "javascript&colon;x",        # no entity decoding in href
    "http:ok.example": "http:ok.example",
}
#: Links safe_link drops (the page then shows the title as plain text).
DROPPED = [
    "javascript:window.__pwned=1", "JaVaScRiPt:window.__pwned=1", "JAVASCRIPT:x",
    " \tjavascript:window.__pwned=1", "\x00javascript:x", "\x1f\x20javascript:x",
    "java\tscript:x", "java\nscript:x", "java\rscript:x", "jav\t\n\rascript:x",
    "javascript\t:x", "data:text/html,<script>window.__pwned=1</script>",
    "DATA:text/html;base64,PHNjcmlwdD4=", "file:///etc/passwd", "FILE:///etc/passwd",
    "vbscript:msgbox(1)", "blob:https://x/1", "about:blank", "mailto:a@b.example",
    "ftp://x.example", "ws://x.example", "chrome://settings", "x-custom+a.b-c:1",
    "//evil.example", "\\\\evil.example", "/\\evil.example", "\\/evil.example",
    " //evil.example", "/\t/evil.example", "https://x.example/\x7f", "rel\x00/x",
    "", " ", "\t\n", "https://ok.example/" + "a" * MAX_LINK_CHARS,
]

#: Texts that must be shown as text (markup, script ends, JavaScript line ends).
HOSTILE = ["<script>window.__pwned=1</script>", '<img src=x onerror="window.__pwned=1">',
           "</script><script>window.__pwned=1</script>", "a\u2028b\u2029c", "<!--<script>",
           "</SCRIPT >", "{{JS}}", "<\\/script>"]


def decode_block(page, element_id):
    """One data block of a page ("cg-data": the map part, "cg-documents": the documents
    part), arrays as lists."""
    m = re.search(rf'<script id="{element_id}" type="application/octet-stream" '
                  rf'data-format="(\w+)">(.*?)</script>', page, re.S)
    fmt, text = m.group(1), m.group(2)
    blob = None
    if fmt == "json":
        header = json.loads(text)
    else:
        raw = gzip.decompress(base64.b64decode(text))
        n = int.from_bytes(raw[:4], "little")
        header, blob = json.loads(raw[4:4 + n]), raw[4 + n:]
    types = {"Uint8Array": "<u1", "Uint16Array": "<u2", "Uint32Array": "<u4",
             "Int32Array": "<i4", "Float32Array": "<f4", "Float64Array": "<f8"}

    def resolve(node):
        if isinstance(node, dict) and "$a" in node:
            if blob is None:
                js, values = node["$a"]
                return np.array(values, dtype=types[js]).tolist()
            js, off, size = node["$a"]
            return np.frombuffer(blob, dtype=types[js], count=size, offset=off).tolist()
        if isinstance(node, dict):
            return {k: resolve(v) for k, v in node.items()}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node
    return resolve(header)


def decode(page):
    """The data of a page, as the page's loader reads them and joins its two parts (the
    map part before the script, the documents part after it; arrays as lists)."""
    data = decode_block(page, "cg-data")
    docs = decode_block(page, "cg-documents")
    for key, value in docs.items():
        if key == "colorings":
            for col, extra in zip(data["colorings"], value):
                col.update(extra)
        elif key == "time":
            data["time"].update(value)
        else:
            data[key] = value
    return data
