"""Topic coherence: countgrid.metrics.topic_coherence vs gensim's CoherenceModel, same run.

    python benchmarks/bench_coherence.py [--docs 100000] [--words 20000] [--topics 50]
                                         [--top 10] [--length 150] [--threads N]
                                         [--measures u_mass c_npmi c_v c_npmi-doc]

Data: a synthetic corpus drawn from an LDA-like model (``--topics`` topics over
``--words`` words with Zipf-shaped Dirichlet weights, documents of Poisson(``--length``)
tokens from a mix of two or three topics), written as str tokens for gensim and as token
ids / a CSR count matrix for countgrid; the topics scored are the generating topics' ``--top``
most probable words.  Each measure runs as gensim's defaults make it:

* ``u_mass``: boolean documents (gensim from the bag-of-words corpus, countgrid from X);
* ``c_npmi``: boolean sliding windows of 10 tokens;
* ``c_v``: boolean sliding windows of 110 tokens;
* ``c_npmi-doc``: boolean documents (gensim: a window wider than every text).

countgrid runs the windows with ``window_rule="gensim"`` (the numbers gensim gives; the
largest difference is printed) and with Röder et al.'s ``"boolean"`` rule.  Times are
wall-clock seconds of the coherence call alone (inputs prepared before), the best of
``--repeat`` runs for countgrid and one run for gensim (``processes=1``: its serial
accumulator; its parallel one counts the windows of short texts differently).  countgrid
is also timed from the str tokens (the word lookup included).  Prints the CPU model and
``countgrid.show_config()`` first, as run_all.py does.
"""
import argparse
import logging
import os
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _countgrid_import import countgrid  # noqa: E402
from countgrid.metrics import topic_coherence  # noqa: E402
from run_all import cpu_model  # noqa: E402

WINDOWS = {"u_mass": None, "c_npmi": 10, "c_v": 110, "c_npmi-doc": None}


def synthetic(n_docs, n_words, n_topics, length, seed=0):
    """(token ids per document, topic-word matrix): LDA-like, Zipf-shaped topics."""
    rng = np.random.default_rng(seed)
    base = 1.0 / np.arange(1, n_words + 1) ** 1.1
    phi = np.stack([rng.dirichlet(0.05 + 50.0 * base[rng.permutation(n_words)])
                    for _ in range(n_topics)])
    cdf = np.cumsum(phi, axis=1)
    cdf[:, -1] = 1.0
    lengths = rng.poisson(length, size=n_docs)
    mixes = rng.integers(0, n_topics, size=(n_docs, 3))
    doc = np.repeat(np.arange(n_docs), lengths)
    z = mixes[doc, rng.integers(0, 3, size=doc.size)]
    u = rng.random(doc.size)
    flat = np.empty(doc.size, dtype=np.int64)
    for k in range(n_topics):
        at = z == k
        flat[at] = np.searchsorted(cdf[k], u[at])
    return np.split(flat, np.cumsum(lengths)[:-1]), phi


def counts(texts, n_words):
    rows = np.repeat(np.arange(len(texts)), [t.size for t in texts])
    X = sp.csr_matrix((np.ones(rows.size), (rows, np.concatenate(texts))),
                      shape=(len(texts), n_words))
    X.sum_duplicates()
    return X


def best(f, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--words", type=int, default=20_000)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--length", type=int, default=150)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--measures", nargs="+", default=list(WINDOWS), choices=list(WINDOWS))
    ap.add_argument("--no-gensim", action="store_true", help="countgrid only")
    args = ap.parse_args(argv)

    print(f"# CPU: {cpu_model()}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f}, {time.strftime('%Y-%m-%d %H:%M')}")
    countgrid.show_config()
    t0 = time.perf_counter()
    ids, phi = synthetic(args.docs, args.words, args.topics, args.length)
    X = counts(ids, args.words)
    top = np.argsort(-phi, axis=1, kind="stable")[:, :args.top]
    vocab = [f"w{i}" for i in range(args.words)]
    tokens = [[vocab[i] for i in t.tolist()] for t in ids]
    max_len = max(t.size for t in ids)
    print(f"\nsynthetic corpus: {X.shape[0]} documents, {X.shape[1]} words, "
          f"{int(X.sum())} tokens ({X.nnz} non-zeros), {args.topics} topics x {args.top} top "
          f"words, threads {args.threads or 'default'}; prepared in "
          f"{time.perf_counter() - t0:.1f} s")

    gensim_ok = not args.no_gensim
    if gensim_ok:
        try:
            from gensim.corpora import Dictionary
            from gensim.models import CoherenceModel
        except ImportError:
            print("gensim is not installed (pip install gensim): countgrid only")
            gensim_ok = False
    if gensim_ok:
        logging.getLogger("gensim").setLevel(logging.WARNING)
        dictionary = Dictionary([vocab])
        bow = [dictionary.doc2bow(t) for t in tokens]
        words = [[vocab[i] for i in row] for row in top]

    rows = []
    for name in args.measures:
        measure = "c_npmi" if name == "c_npmi-doc" else name
        window = WINDOWS[name]
        kw = dict(measure=measure, num_threads=args.threads)
        if window is None:
            t_ours, ours = best(lambda: topic_coherence(top, X, **kw), args.repeat)
            t_exact, t_str = None, None
        else:
            t_ours, ours = best(lambda: topic_coherence(top, texts=ids, window=window,
                                                        window_rule="gensim", **kw),
                                args.repeat)
            t_exact, _ = best(lambda: topic_coherence(top, texts=ids, window=window, **kw),
                              args.repeat)
            t_str, _ = best(lambda: topic_coherence(words_of(top, vocab), texts=tokens,
                                                    window=window, window_rule="gensim",
                                                    vocabulary=vocab, **kw), 1)
        t_gensim, diff = None, None
        if gensim_ok:
            if name == "u_mass":
                g = dict(corpus=bow)
            else:
                g = dict(texts=tokens, window_size=window if window else max_len + 1)
            t1 = time.perf_counter()
            cm = CoherenceModel(topics=words, dictionary=dictionary, coherence=measure,
                                topn=args.top, processes=1, **g)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                theirs = np.array(cm.get_coherence_per_topic())
            t_gensim = time.perf_counter() - t1
            diff = float(np.nanmax(np.abs(theirs - ours.per_topic)))
        rows.append((name, window, ours.mean, t_ours, t_exact, t_str, t_gensim, diff))

    print("\n| measure | window | mean | countgrid s | boolean rule s | from str tokens s "
          "| gensim s | gensim / countgrid | max abs diff |")
    print("|---|---|---|---|---|---|---|---|---|")
    fmt = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
    for name, window, mean, t_ours, t_exact, t_str, t_gensim, diff in rows:
        ratio = "-" if t_gensim is None else f"{t_gensim / t_ours:.0f}x"
        print(f"| {name} | {window or 'document'} | {mean:.6f} | {t_ours:.3f} | "
              f"{fmt(t_exact)} | {fmt(t_str)} | {fmt(t_gensim)} | {ratio} | "
              f"{'-' if diff is None else f'{diff:.1e}'} |")


def words_of(top, vocab):
    return [[vocab[i] for i in row] for row in top]


if __name__ == "__main__":
    main()
