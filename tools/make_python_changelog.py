"""Build ``data/python_changelog.npz``: Python's changelog, one document per entry, dated.

The source is Debian's ``python3.11-doc`` package (3.11.2-6+deb12u9, bookworm): its
``usr/share/doc/python3.11/html/whatsnew/changelog.html.gz`` is CPython's ``Misc/NEWS``
rendered by Sphinx, 95 releases from 3.5.0 alpha 1 (2015-02-08) to 3.11.2 (2023-02-07),
each with a "Release date: YYYY-MM-DD" and sections (Security, Core and Builtins, Library,
Documentation, Tests, Build, Windows, macOS, IDLE, Tools/Demos, C API), each section a list
of entries.  Licence: the PSF License Agreement (version 2) of Python and its documentation,
as stated in the package's ``usr/share/doc/python3.11-doc/copyright`` (checked here).

What is done:

1. the ``.deb`` is read with the standard library alone (its ``ar`` archive by hand,
   ``data.tar.xz`` with :mod:`tarfile`, ``control.tar.xz`` for the version);
2. the page is parsed with :mod:`html.parser`: every top-level list item of a section of a
   release is an entry; its text is the item's text with the markup dropped, character
   references unescaped and whitespace collapsed; the leading ``gh-NNNNN:`` or
   ``bpo-NNNNN:`` goes to the entry's id, its link (the issue) to ``links``;
3. an entry listed in several releases with the same text (a fix backported to a
   maintenance release and listed again under a later feature release) is kept once, with
   the release, date and section of its earliest listing (ties: the first on the page);
4. documents are ordered by date, then as on the page; ``sample_ids`` are the issue ids
   (``gh-92173``, ``bpo-32782``), ``#2``, ``#3``, ... added to later entries of the same
   issue; an entry without an issue is ``RELEASE/SECTION/k`` (the k-th such entry of its
   section);
5. counts: ``countgrid.text.Corpus.from_texts`` (words of two or more characters starting
   with a letter, lowercased) of each text without its credits (``Patch by A.``,
   ``(Contributed by B.)``: names are not topics; the texts keep them), without
   scikit-learn's English stop words and ``CHANGELOG_WORDS`` (the verbs of every change,
   ``fix``, ``add``, ``remove``, ..., and ``python``, ``module``, ``patch``, ...), kept
   when found in at least ``--min-df`` (3) entries and at most ``--max-df`` (50 %) of
   them; entries left without a word are dropped.

The file is written with fixed zip timestamps: the same ``.deb`` gives the same bytes.

Usage (``dpkg`` is not needed)::

    python tools/make_python_changelog.py python3.11-doc_3.11.2-6+deb12u9_all.deb \
        [--output data/python_changelog.npz] [--min-df 3] [--max-df 0.5]

then update ``data/SHA256SUMS`` (``cd data && sha256sum python_changelog.npz``).
"""
import argparse
import gzip
import hashlib
import io
import os
import re
import sys
import tarfile
import warnings
import zipfile
from collections import Counter
from html.parser import HTMLParser

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUTPUT = os.path.normpath(os.path.join(HERE, os.pardir, "data",
                                               "python_changelog.npz"))
CHANGELOG = "usr/share/doc/python3.11/html/whatsnew/changelog.html.gz"
COPYRIGHT = "usr/share/doc/python3.11-doc/copyright"
SECTIONS = ("Security", "Core and Builtins", "Library", "Documentation", "Tests", "Build",
            "Windows", "macOS", "IDLE", "Tools/Demos", "C API")
#: Changelog boiler-plate removed with scikit-learn's English stop words: the verbs of
#: every kind of change and words found all over the changelog.
CHANGELOG_WORDS = (
    "add", "added", "adding", "adds", "allow", "allowed", "allows", "avoid", "bpo", "bug",
    "change", "changed", "changes", "contributed", "correctly", "don", "fix", "fixed",
    "fixes", "fixing", "gh", "improve", "improved", "improves", "initial", "instead",
    "issue", "issues", "like", "longer", "make", "makes", "module", "modules", "new", "non",
    "original", "patch", "patches", "possible", "prevent", "previously", "python",
    "remove", "removed", "removes", "removing", "support", "supported", "supports",
    "thanks", "update", "updated", "updates", "use", "used", "uses", "using")
#: Credits ("Patch by A.", "Original patch by B.", "(Contributed by C.)"): kept in the
#: texts, not counted (names are not topics).
_CREDIT = re.compile(r"\(?\b(?:(?:[Oo]riginal|[Ii]nitial|[Bb]ased on)\s+)?(?:[Pp]atch(?:es)?|"
                     r"[Cc]ontributed|[Ww]ritten|[Rr]eported|[Ii]mplemented|[Ff]ixed)\s+"
                     r"(?:(?:initially|originally|mostly)\s+)?by\s+[^.()]*[.)]?\)?")
_ISSUE = re.compile(r"^(gh|bpo)-(\d+):\s*")
_RELEASE = re.compile(r"^Python (\d+\.\d+\.\d+)(?: (alpha|beta|release candidate|final)"
                      r"(?: (\d+))?)?$")
_DATE = re.compile(r"Release date:\s*(\d{4}-\d\d-\d\d)")
_STAGE = {"alpha": "a", "beta": "b", "release candidate": "rc"}


# ------------------------------------------------------------------------ the .deb
def read_deb(path):
    """``(members, control)``: the files of the package wanted here (name -> bytes) and
    its ``control`` file, read with the standard library (an ``ar`` archive of tarballs)."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:8] != b"!<arch>\n":
        raise SystemExit(f"{path} is not a .deb (no ar header)")
    pos, parts = 8, {}
    while pos + 60 <= len(raw):
        header = raw[pos:pos + 60]
        name = header[:16].decode("ascii").strip().rstrip("/")
        size = int(header[48:58].decode("ascii"))
        parts[name] = raw[pos + 60:pos + 60 + size]
        pos += 60 + size + (size % 2)
    wanted = {}
    data = next((v for k, v in parts.items() if k.startswith("data.tar")), None)
    control = next((v for k, v in parts.items() if k.startswith("control.tar")), None)
    if data is None or control is None:
        raise SystemExit(f"{path}: no data.tar.* or control.tar.* member")
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar:
            name = member.name.lstrip("./")
            if name in (CHANGELOG, COPYRIGHT):
                wanted[name] = tar.extractfile(member).read()
    with tarfile.open(fileobj=io.BytesIO(control)) as tar:
        ctrl = next(tar.extractfile(m).read().decode("utf-8") for m in tar
                    if m.name.lstrip("./") == "control")
    missing = {CHANGELOG, COPYRIGHT} - set(wanted)
    if missing:
        raise SystemExit(f"{path}: {sorted(missing)} not in the package")
    return wanted, dict(re.findall(r"^([\w-]+):\s*(.*)$", ctrl, flags=re.M))


# ------------------------------------------------------------------------ the page
class ChangelogParser(HTMLParser):
    """Entries of the changelog page: ``(heading, date, section, text, link, position)``.

    Releases are the ``<section>`` elements whose heading is an ``<h2>``, sections those
    with an ``<h3>`` inside a release; an entry is a top-level ``<li>`` of a section (a
    nested list stays in its item's text)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.kinds = []                   # per open <section>: "h2", "h3" or None
        self.release = self.date = self.section = None
        self.heading = None               # [tag, text parts] while in <h2>/<h3>
        self.item = None                  # text parts of the entry being read
        self.link = None
        self.depth = 0                    # <li> nesting inside a section
        self.entries, self.releases = [], []

    def handle_starttag(self, tag, attrs):
        if tag == "section":
            self.kinds.append(None)
        elif tag in ("h2", "h3"):
            self.heading = [tag, []]
        elif tag == "li" and self.section is not None:
            self.depth += 1
            if self.depth == 1:
                self.item, self.link = [], None
        elif tag == "a" and self.item is not None and self.link is None and self.depth == 1:
            href = dict(attrs).get("href") or ""
            if href.startswith(("https://github.com/python/cpython/issues/",
                                "https://bugs.python.org/")):
                self.link = href

    def handle_endtag(self, tag):
        if tag == "section":
            kind = self.kinds.pop() if self.kinds else None
            if kind == "h3":
                self.section = None
            elif kind == "h2":
                self.release = self.date = self.section = None
        elif self.heading is not None and tag == self.heading[0]:
            text = " ".join("".join(self.heading[1]).replace("\u00b6", "").split())
            if self.kinds:
                self.kinds[-1] = tag
            if tag == "h2":
                self.release, self.date, self.section = text, None, None
                self.releases.append(text)
            elif self.release is not None:
                if text not in SECTIONS:
                    raise SystemExit(f"unknown section {text!r} in {self.release}")
                self.section = text
            self.heading = None
        elif tag == "li" and self.depth:
            self.depth -= 1
            if self.depth == 0:
                if self.date is None:
                    raise SystemExit(f"{self.release}: an entry before the release date")
                text = " ".join("".join(self.item).split())
                self.entries.append((self.release, self.date, self.section, text,
                                     self.link, len(self.entries)))
                self.item = None

    def handle_data(self, data):
        if self.heading is not None:
            self.heading[1].append(data)
        if self.item is not None:
            self.item.append(data)
        elif self.release is not None and self.date is None:
            m = _DATE.search(data)
            if m:
                self.date = m.group(1)


def release_name(heading):
    """``"Python 3.11.0 release candidate 2"`` -> ``"3.11.0rc2"``; finals keep the
    version alone (``"3.11.2"``)."""
    m = _RELEASE.match(heading)
    if m is None:
        raise SystemExit(f"unexpected release heading {heading!r}")
    version, stage, number = m.groups()
    if stage in (None, "final"):
        return version
    return f"{version}{_STAGE[stage]}{number}"


def parse(page):
    """The unique entries, oldest first, and the number of releases and listed entries."""
    parser = ChangelogParser()
    parser.feed(page)
    parser.close()
    first = {}
    for heading, date, section, text, link, pos in parser.entries:
        if not text:
            continue
        seen = first.get(text)
        if seen is None or date < seen["date"]:
            first[text] = dict(release=release_name(heading), date=date, section=section,
                               text=text, link=link or "", pos=pos)
    entries = sorted(first.values(), key=lambda e: (e["date"], e["pos"]))
    return entries, len(parser.releases), len(parser.entries)


def split_ids(entries):
    """Each entry's text without its issue prefix, and a unique, stable id."""
    used, per_section, texts, ids = Counter(), Counter(), [], []
    for e in entries:
        m = _ISSUE.match(e["text"])
        if m:
            issue = f"{m.group(1)}-{m.group(2)}"
            used[issue] += 1
            ids.append(issue if used[issue] == 1 else f"{issue}#{used[issue]}")
            texts.append(e["text"][m.end():])
        else:
            key = (e["release"], e["section"])
            per_section[key] += 1
            ids.append(f"{e['release']}/{e['section']}/{per_section[key]}")
            texts.append(e["text"])
    if len(set(ids)) != len(ids):
        raise SystemExit("the ids are not unique")
    return texts, ids


# ------------------------------------------------------------------------ writing
def savez_reproducible(path, arrays):
    """``numpy.savez_compressed`` with a fixed timestamp on every member (same bytes from
    the same arrays); written to a temporary name, then renamed."""
    tmp = f"{path}.tmp"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key, value in arrays.items():
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.asanyarray(value), allow_pickle=False)
            zf.writestr(info, buf.getvalue(), compresslevel=9)
    os.replace(tmp, path)


def build(deb, output, min_df=3, max_df=0.5, verbose=True):
    """Build the corpus from the ``.deb`` and write it to ``output``; returns the arrays."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from countgrid.text import Corpus

    with open(deb, "rb") as f:
        deb_sha = hashlib.sha256(f.read()).hexdigest()
    members, control = read_deb(deb)
    licence = members[COPYRIGHT].decode("utf-8", "replace")
    if "PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2" not in licence:
        raise SystemExit(f"{COPYRIGHT} does not hold the PSF License Agreement")
    page = gzip.decompress(members[CHANGELOG]).decode("utf-8")
    entries, n_releases, n_listed = parse(page)
    n_unique = len(entries)
    texts, ids = split_ids(entries)
    stop = sorted(set(ENGLISH_STOP_WORDS) | set(CHANGELOG_WORDS))
    with warnings.catch_warnings():
        # an entry left without a kept word is dropped below (counted in the description)
        warnings.filterwarnings("ignore", message=".*have no word")
        corpus = Corpus.from_texts([_CREDIT.sub(" ", t) for t in texts], ids=ids,
                                   stop_words=stop, min_df=min_df, max_df=max_df)
    X = corpus.counts.tocsr()
    keep = np.flatnonzero(np.diff(X.indptr) > 0)
    X = X[keep].tocsr()
    X.sort_indices()
    entries = [entries[i] for i in keep]
    texts = [texts[i] for i in keep]
    ids = [ids[i] for i in keep]
    sections = sorted({e["section"] for e in entries})
    y = np.array([sections.index(e["section"]) for e in entries], dtype=np.int64)
    dates = [e["date"] for e in entries]
    releases = [e["release"] for e in entries]
    n_rel_kept = len(set(releases))
    encoded = [t.encode("utf-8") for t in texts]
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in encoded])]).astype(np.int64)
    version = control.get("Version", "?")
    description = (
        f"Python's changelog (CPython Misc/NEWS as rendered in the documentation, "
        f"whatsnew/changelog.html), one document per entry: {X.shape[0]} entries x "
        f"{X.shape[1]} words, {n_rel_kept} releases from {dates[0]} to {dates[-1]} (3.5.0a1 "
        f"to 3.11.2). Source: Debian package {control.get('Package', '?')} {version} "
        f"(python3.11-doc_{version}_all.deb, SHA-256 {deb_sha}), {CHANGELOG}. Licence: PSF "
        f"License Agreement version 2 (Python and its documentation, Copyright (c) 2001-2023 "
        f"Python Software Foundation; {COPYRIGHT}). Made by tools/make_python_changelog.py: "
        f"entries are the list items of each release's sections, HTML stripped, character "
        f"references unescaped, whitespace collapsed, the leading gh-N:/bpo-N: moved to "
        f"sample_ids (#2, #3 for later entries of one issue; RELEASE/SECTION/k without an "
        f"issue) and its link to links; the {n_listed} listed entries hold {n_unique} "
        f"distinct texts: an entry listed several times with the same text (a backport "
        f"listed again) is kept once, at the release, date and section of its earliest "
        f"listing; ordered by date. y indexes label_names "
        f"(the section); dates (ISO YYYY-MM-DD) and releases (3.11.0rc2, 3.11.2, ...) per "
        f"row. Counts: countgrid.text.Corpus.from_texts of each text without its credits "
        f"(Patch by A., (Contributed by B.): kept in the texts, not counted), words of 2+ "
        f"characters starting with a letter, lowercased, scikit-learn's English stop words "
        f"and {', '.join(CHANGELOG_WORDS)} removed, kept in >= {min_df} entries and <= "
        f"{max_df:.0%} of them; {len(corpus) - X.shape[0]} entries left empty dropped.")
    if X.data.max() > np.iinfo(np.int32).max:
        raise SystemExit("a count does not fit in int32")
    out = {
        "data": X.data.astype(np.int32),
        "indices": X.indices.astype(np.int32),
        "indptr": X.indptr.astype(np.int64),
        "shape": np.asarray(X.shape, dtype=np.int64),
        "format": np.asarray(b"csr"),          # scipy.sparse.load_npz reads it too
        "y": y,
        "label_names": np.array(sections),
        "feature_names": np.asarray(corpus.vocabulary).astype(str),
        "description": np.asarray(description),
        "texts_utf8": np.frombuffer(b"".join(encoded), dtype=np.uint8),
        "texts_offsets": offsets,
        "sample_ids": np.array(ids),
        "dates": np.array(dates),
        "releases": np.array(releases),
        "links": np.array([e["link"] for e in entries]),
    }
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    savez_reproducible(output, out)
    if verbose:
        print(description)
        print(f"wrote {output}: {os.path.getsize(output) / 1e6:.2f} MB, nnz={X.nnz}, "
              f"{int(X.sum())} words, {n_releases} releases on the page, sections "
              f"{dict(zip(sections, np.bincount(y).tolist()))}")
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("deb", help="python3.11-doc_3.11.2-6+deb12u9_all.deb")
    p.add_argument("--output", default=DEFAULT_OUTPUT)
    p.add_argument("--min-df", type=int, default=3)
    p.add_argument("--max-df", type=float, default=0.5)
    args = p.parse_args(argv)
    build(args.deb, args.output, args.min_df, args.max_df)
    return 0


if __name__ == "__main__":
    sys.exit(main())
