#!/usr/bin/env python
"""Time-sliced grids on a corpus they were not tuned on: the Debian changelogs of this
machine (issue 25).

Every entry of ``/usr/share/doc/*/changelog.Debian.gz`` (its text and the date of its
signature line; entries of fewer than 5 words left out) is a document; the vocabulary is
the 10,000 most frequent words (``Corpus.from_texts(max_features=10000)``).  A
``TimeSlicedCountingGrid`` with the defaults (no argument but the dates) is fitted and,
per period, reported: its documents, the cells that are dead (the most probable word of
the cell below 5 times the uniform probability: a cell faded to the uniform
distribution), the drift from the period before, and the fit's time.

    PYTHONPATH=src python experiments/time_slices_debian.py --json /tmp/slices/debian.json

The corpus differs from machine to machine (the packages installed); the figures of
docs/results.md ("A stranger's corpus") are this machine's.
"""
import argparse
import email.utils
import glob
import gzip
import json
import re
import time
import warnings

import numpy as np

import countgrid
from countgrid.text import Corpus

SIGNATURE = re.compile(r"^ -- .*?>\s+(.*)$")


def changelog_entries(pattern="/usr/share/doc/*/changelog.Debian.gz"):
    """(texts, dates): one entry per signature line of every Debian changelog."""
    texts, dates = [], []
    for path in sorted(glob.glob(pattern)):
        try:
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
        except (OSError, EOFError):
            continue
        body = []
        for line in lines:
            m = SIGNATURE.match(line)
            if m:
                try:
                    day = email.utils.parsedate_to_datetime(m.group(1).strip()).date()
                except (TypeError, ValueError):
                    day = None
                if day is not None and len(" ".join(body).split()) >= 5:
                    texts.append(" ".join(body))
                    dates.append(day.isoformat())
                body = []
            elif line.startswith("  "):
                body.append(line.strip(" *-"))
    return texts, np.array(dates)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--words", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    texts, dates = changelog_entries()
    corpus = Corpus.from_texts(texts, max_features=args.words)
    X = corpus.counts
    keep = np.asarray(X.sum(axis=1)).ravel() > 0
    X, dates = X[keep], dates[keep]
    print(f"{X.shape[0]} entries {min(dates)} to {max(dates)} x {X.shape[1]} words",
          flush=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", countgrid.ConvergenceWarning)
        t0 = time.perf_counter()
        tg = countgrid.TimeSlicedCountingGrid(random_state=args.seed).fit(X, times=dates)
        seconds = time.perf_counter() - t0
    Z = tg.pi_.shape[-1]
    out = {"entries": int(X.shape[0]), "words": int(Z), "seconds": seconds,
           "extent": list(tg.pi_.shape[1:-1]), "periods": tg.period_labels_.tolist(),
           "n_documents": tg.n_documents_.tolist(),
           "dead_cells": [int((tg.pi_[p].max(axis=-1) < 5.0 / Z).sum())
                          for p in range(len(tg.pi_))],
           "drift": [float(d) for d in tg.drift().mean(axis=(1, 2))],
           "n_iter": tg.n_iter_.tolist()}
    print(json.dumps(out), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
