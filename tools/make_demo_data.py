"""Build the bundled demo corpus ``src/countgrid/data/news20_3class.npz``.

The source is ``news20_different.npz`` (20 Newsgroups, bydate split, the
three well separated groups alt.atheism, rec.sport.baseball and sci.space;
see ``data/README.md``).  The vocabulary is pruned to a compact,
label-free selection:

1. drop English stop words, Usenet boiler-plate (``writes``, ``edu``,
   ``article``, ...), contraction fragments (``don``, ``isn``) and words of
   fewer than three letters;
2. drop words that occur in fewer than ``--min-df`` documents or in more than
   ``--max-df`` of them;
3. keep the ``--n-words`` most frequent remaining words by document frequency
   (ties broken alphabetically);
4. drop documents left empty.

No labels are used to choose the words, so a train/test split of the bundled
file is not optimistically biased by the vocabulary.  The result is written
with ``numpy.savez_compressed`` and holds only plain arrays (readable with
``allow_pickle=False``).

It also writes the raw texts of the same posts, ``src/countgrid/data/news20_3class_texts.npz``
(each cut after ``--max-chars`` characters at a word boundary), for the text-to-map demo of
``countgrid demo`` (:func:`countgrid.datasets.load_news20_3class_texts`).

Usage::

    python tools/make_demo_data.py [--source PATH] [--output PATH] [--n-words 2500]
        [--texts-output PATH] [--max-chars 2000]
"""
import argparse
import os
import sys

import numpy as np
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "data"))
from repo_data import data_path  # noqa: E402  (data/repo_data.py)

DEFAULT_OUTPUT = os.path.join(HERE, os.pardir, "src", "countgrid", "data", "news20_3class.npz")
DEFAULT_TEXTS_OUTPUT = os.path.join(HERE, os.pardir, "src", "countgrid", "data",
                                    "news20_3class_texts.npz")

# A small English stop list (function words and very common verbs/adverbs).
STOP_WORDS = frozenset("""
a about above across after afterwards again against all almost alone along already also
although always am among amongst an and another any anyhow anyone anything anyway anywhere are
around as at back be became because become becomes becoming been before beforehand behind being
below beside besides between beyond both but by can cannot could did do does doing done down
during each eg either else elsewhere enough etc even ever every everyone everything everywhere
except few first for former formerly from further get gets getting give given gives go goes going
gone got had has have having he hence her here hereafter hereby herein hers herself him himself
his how however i ie if in indeed into is it its itself just last latter least less let lets
like likely made make makes many may maybe me meanwhile might mine more moreover most mostly
much must my myself namely neither never nevertheless next no nobody none noone nor not nothing
now nowhere of off often on once one only onto or other others otherwise our ours ourselves out
over own per perhaps please put quite rather re really said same say says see seem seemed
seeming seems several she should since so some somehow someone something sometime sometimes
somewhere still such than that the their theirs them themselves then thence there thereafter
thereby therefore therein thereupon these they thing things this those though through
throughout thru thus to together too toward towards under until up upon us use used uses using
very via was way we well were what whatever when whence whenever where whereafter whereas
whereby wherein whereupon wherever whether which while whither who whoever whole whom whose
why will with within without would yet you your yours yourself yourselves
able actually already anybody certainly clearly come comes coming did didn different doesn
don going got isn ll ve wasn weren wouldn couldn shouldn haven hasn hadn aren won ain
know knows knew think thinks thought want wants wanted look looks looking lot lots sure
""".split())

# Usenet and e-mail boiler-plate that survives header removal (quoted attributions,
# addresses, signatures, dates).
USENET_WORDS = frozenset("""
writes wrote article articles edu com org net gov mil uucp ac uk ca de apr mar may jun
jan feb reply replies posting posted post posts mail email e-mail message messages news
newsgroup newsgroups subject re fax phone tel internet cs dept university univ inc
""".split())


def build(source, output, n_words=2500, min_df=5, max_df=0.5, verbose=True):
    """Build the compact corpus and write it to ``output``.

    Parameters
    ----------
    source : str
        Path of ``news20_different.npz``.
    output : str
        Destination ``.npz`` file.
    n_words : int, default=2500
        Vocabulary size kept.
    min_df : int, default=5
        Minimum document frequency of a kept word.
    max_df : float, default=0.5
        Maximum document frequency of a kept word, as a fraction of documents.
    verbose : bool, default=True

    Returns
    -------
    dict
        The arrays written.
    """
    X = sp.load_npz(source).tocsr()
    X.sum_duplicates()
    z = np.load(source, allow_pickle=False)
    y = np.asarray(z["y"])
    label_names = np.asarray(z["label_names"])
    names = np.asarray(z["feature_names"])
    split = np.asarray(z["split"]) if "split" in z.files else None
    split_names = np.asarray(z["split_names"]) if "split_names" in z.files else None
    src_desc = str(z["description"])
    n_docs = X.shape[0]

    df = np.bincount(X.indices, minlength=X.shape[1])
    ok = np.array([len(w) >= 3 and w.isalpha() and w not in STOP_WORDS and w not in USENET_WORDS
                   for w in names])
    ok &= (df >= min_df) & (df <= max_df * n_docs)
    cand = np.flatnonzero(ok)
    # Highest document frequency first, ties alphabetically (deterministic).
    order = np.lexsort((names[cand], -df[cand]))
    keep = np.sort(cand[order[:n_words]])
    # Alphabetical vocabulary makes the file easy to inspect.
    keep = keep[np.argsort(names[keep], kind="stable")]

    Xk = X[:, keep].tocsr()
    lengths = np.asarray(Xk.sum(axis=1)).ravel()
    rows = np.flatnonzero(lengths > 0)
    Xk = Xk[rows].tocsr()
    Xk.sort_indices()
    if Xk.data.max() > np.iinfo(np.uint16).max:
        raise ValueError("a count does not fit in uint16")
    description = (
        f"{len(rows)} posts x {len(keep)} words from 20 Newsgroups ({', '.join(label_names)}). "
        f"Source: news20_different.npz -- {src_desc} "
        f"Preprocessing (tools/make_demo_data.py): removed an English stop list, Usenet "
        f"boiler-plate words (writes, edu, article, ...) and words under 3 letters; kept words "
        f"in at least {min_df} documents and at most {max_df:.0%} of them, then the {len(keep)} "
        f"with the highest document frequency (no labels used); dropped "
        f"{n_docs - len(rows)} documents left empty. X is CSR (data uint16 counts, indices "
        f"uint16, indptr int32); split/split_names give the original bydate train/test split.")
    out = {
        "data": Xk.data.astype(np.uint16),
        "indices": Xk.indices.astype(np.uint16),
        "indptr": Xk.indptr.astype(np.int32),
        "shape": np.asarray(Xk.shape, dtype=np.int64),
        "format": np.asarray(b"csr"),  # makes scipy.sparse.load_npz work too
        "y": y[rows].astype(np.int8),
        "label_names": label_names.astype(str),
        "feature_names": np.array([str(w) for w in names[keep]]),
        "description": np.asarray(description),
    }
    if split is not None:
        out["split"] = split[rows].astype(np.int8)
        out["split_names"] = split_names.astype(str)
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    np.savez_compressed(output, **out)
    if verbose:
        print(description)
        print(f"wrote {output}: {os.path.getsize(output) / 1024:.0f} KiB, nnz={Xk.nnz}, "
              f"classes={np.bincount(out['y']).tolist()}")
    return out


def build_texts(source, output, max_chars=2000, verbose=True):
    """Write the texts of the posts (cut after ``max_chars`` characters at a word
    boundary) with their labels and split: the raw input of the text-to-map demo."""
    z = np.load(source, allow_pickle=False)
    blob, offsets = z["texts_utf8"], z["texts_offsets"]
    texts = []
    for i in range(len(offsets) - 1):
        text = blob[offsets[i]:offsets[i + 1]].tobytes().decode("utf-8")
        if len(text) > max_chars:
            cut = text.rfind(" ", 0, max_chars)
            text = text[:cut if cut > 0 else max_chars]
        texts.append(text)
    encoded = [t.encode("utf-8") for t in texts]
    new_offsets = np.concatenate([[0], np.cumsum([len(e) for e in encoded])]).astype(np.int64)
    description = (
        f"{len(texts)} posts from 20 Newsgroups ({', '.join(z['label_names'])}), each cut "
        f"after {max_chars} characters at a word boundary (tools/make_demo_data.py). Source: "
        f"news20_different.npz -- {z['description']}")
    out = {"texts_utf8": np.frombuffer(b"".join(encoded), dtype=np.uint8),
           "texts_offsets": new_offsets, "y": np.asarray(z["y"]).astype(np.int8),
           "label_names": np.asarray(z["label_names"]).astype(str),
           "split": np.asarray(z["split"]).astype(np.int8),
           "split_names": np.asarray(z["split_names"]).astype(str),
           "description": np.asarray(description)}
    np.savez_compressed(output, **out)
    if verbose:
        print(f"wrote {output}: {os.path.getsize(output) / 1024:.0f} KiB, {len(texts)} texts")
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--source", default=None,
                   help="news20_different.npz (default: the one in data/ of the repository)")
    p.add_argument("--output", default=os.path.normpath(DEFAULT_OUTPUT))
    p.add_argument("--n-words", type=int, default=2500)
    p.add_argument("--min-df", type=int, default=5)
    p.add_argument("--max-df", type=float, default=0.5)
    p.add_argument("--texts-output", default=os.path.normpath(DEFAULT_TEXTS_OUTPUT))
    p.add_argument("--max-chars", type=int, default=2000)
    args = p.parse_args(argv)
    args.source = args.source or data_path("news20_different.npz")
    build(args.source, args.output, args.n_words, args.min_df, args.max_df)
    build_texts(args.source, args.texts_output, args.max_chars)
    return 0


if __name__ == "__main__":
    sys.exit(main())
