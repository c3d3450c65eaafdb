"""Topic coherence equals gensim's CoherenceModel (the exactness anchor of issue 27) to
1e-10 on a slice of the bundled 20 Newsgroups texts: u_mass on boolean documents, c_uci,
c_npmi and c_v on boolean documents (gensim's sliding window wider than every text) and on
gensim's default sliding windows (10 and 110 tokens, window_rule="gensim").  gensim is in
the test extra (pyproject.toml), so CI runs these; ``processes=1`` keeps gensim on its
serial accumulator (its parallel one counts the windows of short texts differently)."""
import logging
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from countgrid.datasets import load_news20_3class, load_news20_3class_texts
from countgrid.metrics import topic_coherence

gensim = pytest.importorskip("gensim")
from gensim.corpora import Dictionary  # noqa: E402
from gensim.models import CoherenceModel  # noqa: E402

logging.getLogger("gensim").setLevel(logging.WARNING)

N_DOCS = 600        # the slice: gensim's sliding windows take ~1 s per measure on it
TOL = 1e-10


@pytest.fixture(scope="module")
def corpus():
    """The slice as str tokens, token ids (-1: not in the vocabulary), counts and a gensim
    dictionary of the vocabulary; topics: top words of the slice's frequent words drawn
    at random and a few with rare words."""
    vocab = [str(w) for w in load_news20_3class().feature_names]
    index = {w: i for i, w in enumerate(vocab)}
    tokens = [t.split() for t in load_news20_3class_texts().texts[:N_DOCS]]
    ids = [np.array([index.get(w, -1) for w in t], dtype=np.int64) for t in tokens]
    X = sp.lil_matrix((len(ids), len(vocab)))
    for d, a in enumerate(ids):
        words, counts = np.unique(a[a >= 0], return_counts=True)
        X[d, words] = counts
    X = X.tocsr()
    df = np.asarray((X > 0).sum(axis=0)).ravel()
    rng = np.random.default_rng(0)
    frequent = np.argsort(-df, kind="stable")[:200]
    rare = np.flatnonzero((df >= 1) & (df <= 3))
    topics = [rng.choice(frequent, size=10, replace=False) for _ in range(12)]
    topics += [np.concatenate([rng.choice(frequent, size=7, replace=False),
                               rng.choice(rare, size=3, replace=False)]) for _ in range(3)]
    topics = np.array(topics)
    return dict(vocab=vocab, tokens=tokens, ids=ids, X=X, topics=topics,
                dictionary=Dictionary([vocab]),
                max_len=max(len(t) for t in tokens))


def _gensim(corpus, measure, **kw):
    words = [[corpus["vocab"][i] for i in t] for t in corpus["topics"]]
    if measure == "u_mass":
        kw["corpus"] = [corpus["dictionary"].doc2bow(t) for t in corpus["tokens"]]
    else:
        kw["texts"] = corpus["tokens"]
    cm = CoherenceModel(topics=words, dictionary=corpus["dictionary"], coherence=measure,
                        topn=corpus["topics"].shape[1], processes=1, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        per_topic = np.array(cm.get_coherence_per_topic(), dtype=np.float64)
    return per_topic, cm.aggregate_measures(per_topic)


def _assert_equal_to_gensim(ours, theirs):
    per_topic, mean = theirs
    assert np.isfinite(per_topic).all()
    np.testing.assert_allclose(ours.per_topic, per_topic, rtol=0, atol=TOL)
    assert abs(ours.mean - mean) <= TOL


@pytest.mark.parametrize("num_threads", [1, 2])
def test_u_mass_on_boolean_documents(corpus, num_threads):
    ours = topic_coherence(corpus["topics"], corpus["X"], measure="u_mass",
                           num_threads=num_threads)
    assert ours.n_documents == N_DOCS
    _assert_equal_to_gensim(ours, _gensim(corpus, "u_mass"))


@pytest.mark.parametrize("measure", ["c_uci", "c_npmi", "c_v"])
def test_boolean_documents(corpus, measure):
    # gensim has no boolean-document estimate for these: a sliding window wider than every
    # text makes each text one window, which is one boolean document
    theirs = _gensim(corpus, measure, window_size=corpus["max_len"] + 1)
    _assert_equal_to_gensim(topic_coherence(corpus["topics"], corpus["X"], measure=measure),
                            theirs)
    _assert_equal_to_gensim(topic_coherence(corpus["topics"], texts=corpus["ids"],
                                            measure=measure, num_threads=2), theirs)


@pytest.mark.parametrize("measure, window", [("c_uci", 10), ("c_npmi", 10), ("c_v", 110)])
def test_gensim_sliding_windows(corpus, measure, window):
    theirs = _gensim(corpus, measure)                   # gensim's default window size
    ours = topic_coherence(corpus["topics"], texts=corpus["ids"], measure=measure,
                           window=window, window_rule="gensim", num_threads=2)
    _assert_equal_to_gensim(ours, theirs)
    # the same with str tokens and words
    named = topic_coherence([[corpus["vocab"][i] for i in t] for t in corpus["topics"]],
                            texts=corpus["tokens"], measure=measure, window=window,
                            window_rule="gensim", vocabulary=corpus["vocab"])
    np.testing.assert_array_equal(named.per_topic, ours.per_topic)
    # Röder et al.'s boolean windows count words repeated within a window, gensim's not
    exact = topic_coherence(corpus["topics"], texts=corpus["ids"], measure=measure,
                            window=window)
    assert exact.n_documents == ours.n_documents
    assert np.abs(exact.per_topic - ours.per_topic).max() > 1e-6


def test_words_missing_from_the_reference(corpus):
    """A top word the reference never holds: UMass as gensim (0 for the pairs conditioned
    on it); NPMI undefined where gensim gives a non-finite number."""
    X = corpus["X"].tolil()
    missing = corpus["topics"][0, 4]
    X[:, missing] = 0
    X = X.tocsr()
    # the same reference for gensim: the word's tokens dropped from the texts
    tokens = [[w for w in t if w != corpus["vocab"][missing]] for t in corpus["tokens"]]
    reduced = dict(corpus, tokens=tokens)
    with pytest.warns(RuntimeWarning, match="never occur"):
        ours = topic_coherence(corpus["topics"], X, measure="u_mass")
    _assert_equal_to_gensim(ours, _gensim(reduced, "u_mass"))
    with pytest.warns(RuntimeWarning, match="never occur"):
        ours = topic_coherence(corpus["topics"], X, measure="c_npmi")
    per_topic, _ = _gensim(reduced, "c_npmi", window_size=corpus["max_len"] + 1)
    np.testing.assert_array_equal(ours.undefined, ~np.isfinite(per_topic))
    assert ours.undefined[0] and ours.undefined.sum() == np.isin(corpus["topics"],
                                                                 missing).any(axis=1).sum()
    np.testing.assert_allclose(ours.per_topic[~ours.undefined],
                               per_topic[~ours.undefined], rtol=0, atol=TOL)


def test_gensim_is_in_the_test_extra():
    """CI installs the test extra: these tests must run there, not skip."""
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    tomllib = pytest.importorskip("tomllib", reason="tomllib needs Python 3.11")
    if not pyproject.is_file():
        pytest.skip("not a source checkout")
    extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
    assert any(req.startswith("gensim") for req in extras["test"])
