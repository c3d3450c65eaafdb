"""The co-occurrence kernels of the coherence measures (csrc/cooc through
countgrid._utils._cooc) against the literal references of tests/_reference/coherence.py:
boolean documents of CSR rows and boolean sliding windows of token sequences (both window
rules), on random inputs, int32/int64 indices, 1 and several threads, blocks, and corrupt
input."""
import numpy as np
import pytest
import scipy.sparse as sp

from countgrid._utils import _cooc
from _reference.coherence import docs_counts_ref, windows_counts_ref


def _dense_counts(D, words):
    return np.array([[D[u, v] for v in words] for u in words], dtype=np.int64)


def _relevant(n_features, words):
    rel = np.full(n_features, -1, dtype=np.int32)
    rel[words] = np.arange(len(words), dtype=np.int32)
    return rel


def _random_csr(seed, n_rows=120, n_features=40, density=0.15):
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, n_features, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.integers(1, 5, size=k)).toarray()
    X[rng.integers(0, n_rows, size=5)] = 0          # empty documents
    return sp.csr_matrix(X)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("itype", [np.int32, np.int64])
@pytest.mark.parametrize("num_threads", [1, 3])
def test_docs_match_reference(seed, itype, num_threads):
    X = _random_csr(seed)
    rng = np.random.default_rng(seed + 10)
    words = np.sort(rng.choice(X.shape[1], size=12, replace=False))
    D, n = docs_counts_ref(X.toarray(), words)
    C = _cooc.docs(X.indptr.astype(itype), X.indices.astype(itype), X.shape[1],
                   _relevant(X.shape[1], words), len(words), num_threads)
    assert C.dtype == np.int64 and n == X.shape[0]
    np.testing.assert_array_equal(C, _dense_counts(D, words))


def test_docs_do_not_depend_on_blocks_or_threads():
    X = _random_csr(5, n_rows=500, n_features=60, density=0.2)
    words = np.arange(0, 60, 3)
    rel = _relevant(60, words)
    base = _cooc.docs(X.indptr, X.indices, 60, rel, len(words), 1)
    old = _cooc.block_work(7)                       # blocks of a few rows
    try:
        for nt in (1, 2, 4):
            np.testing.assert_array_equal(_cooc.docs(X.indptr, X.indices, 60, rel,
                                                     len(words), nt), base)
    finally:
        _cooc.block_work(old)


def test_docs_count_a_column_stored_twice_once():
    indptr = np.array([0, 3, 5], dtype=np.int64)
    indices = np.array([2, 2, 0, 1, 1], dtype=np.int64)       # not canonical
    C = _cooc.docs(indptr, indices, 3, _relevant(3, [0, 1, 2]), 3, 2)
    np.testing.assert_array_equal(C, [[1, 0, 1], [0, 1, 0], [1, 0, 1]])


def test_docs_refuse_corrupt_input():
    rel = _relevant(3, [0, 1])
    with pytest.raises(ValueError, match="out of range"):
        _cooc.docs(np.array([0, 2], np.int64), np.array([0, 3], np.int64), 3, rel, 2, 1)
    with pytest.raises(ValueError, match="indptr"):
        _cooc.docs(np.array([0, 3], np.int64), np.array([0, 1], np.int64), 3, rel, 2, 1)
    bad = rel.copy()
    bad[2] = 5                                      # a relevant number >= n_relevant
    with pytest.raises(ValueError, match="out of range"):
        _cooc.docs(np.array([0, 1], np.int64), np.array([2], np.int64), 3, bad, 2, 1)
    with pytest.raises(ValueError, match="relevant has"):
        _cooc.docs(np.array([0, 1], np.int64), np.array([2], np.int64), 4, rel, 2, 1)
    with pytest.raises(ValueError, match="n_relevant"):
        _cooc.docs(np.array([0, 1], np.int64), np.array([2], np.int64), 3, rel,
                   _cooc.MAX_WORDS + 1, 1)


def _random_texts(seed, n_texts=60, n_words=7, max_len=40):
    """Token-id texts over words 0..n_words-1 and -1 (other words), with repeats, empty
    and short texts."""
    rng = np.random.default_rng(seed)
    texts = [rng.integers(-1, n_words, size=int(rng.integers(0, max_len)))
             for _ in range(n_texts)]
    texts += [np.zeros(0, dtype=np.int64), np.array([3, 3, 3, 3]), np.array([-1, -1])]
    return texts


def _flat(texts):
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    tokens = (np.concatenate(texts) if texts else np.zeros(0)).astype(np.int32)
    return offsets, tokens


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("window", [1, 2, 3, 5, 10, 60])
@pytest.mark.parametrize("rule", ["boolean", "gensim"])
@pytest.mark.parametrize("num_threads", [1, 3])
def test_windows_match_reference(seed, window, rule, num_threads):
    texts = _random_texts(seed)
    offsets, tokens = _flat(texts)
    words = list(range(7))
    D, n = windows_counts_ref(texts, words, window, rule)
    C, n_win = _cooc.windows(offsets, tokens, window, 0 if rule == "boolean" else 1, 7,
                             num_threads)
    assert n_win == n
    np.testing.assert_array_equal(C, _dense_counts(D, words))


def test_the_rules_differ_only_on_repeated_words():
    # a b a c x x, windows of 3: a is in windows 0, 1, 2; gensim drops it after window 0
    text = [np.array([0, 1, 0, 2, -1, -1])]
    offsets, tokens = _flat(text)
    C0, n0 = _cooc.windows(offsets, tokens, 3, 0, 3, 1)
    C1, n1 = _cooc.windows(offsets, tokens, 3, 1, 3, 1)
    assert n0 == n1 == 4
    np.testing.assert_array_equal(np.diagonal(C0), [3, 2, 3])
    np.testing.assert_array_equal(np.diagonal(C1), [1, 2, 3])
    assert C0[0, 2] == 2 and C1[0, 2] == 0
    # no word repeated within a window: the same counts
    distinct = [np.array([0, 1, 2, -1, 0, 1, 2])]
    offsets, tokens = _flat(distinct)
    np.testing.assert_array_equal(_cooc.windows(offsets, tokens, 3, 0, 3, 2)[0],
                                  _cooc.windows(offsets, tokens, 3, 1, 3, 2)[0])


def test_windows_do_not_depend_on_blocks_or_threads():
    texts = _random_texts(4, n_texts=150, max_len=60)
    offsets, tokens = _flat(texts)
    base = _cooc.windows(offsets, tokens, 6, 0, 7, 1)
    old = _cooc.block_work(50)
    try:
        for nt in (1, 2, 4):
            C, n = _cooc.windows(offsets, tokens, 6, 0, 7, nt)
            assert n == base[1]
            np.testing.assert_array_equal(C, base[0])
    finally:
        _cooc.block_work(old)


def test_windows_refuse_corrupt_input():
    offsets, tokens = _flat([np.array([0, 1, 2])])
    with pytest.raises(ValueError, match="out of range"):
        _cooc.windows(offsets, tokens, 2, 0, 2, 1)             # token 2 >= n_relevant
    with pytest.raises(ValueError, match="indptr"):
        _cooc.windows(np.array([0, 5], np.int64), tokens, 2, 0, 3, 1)
    with pytest.raises(ValueError, match="window"):
        _cooc.windows(offsets, tokens, 0, 0, 3, 1)
    with pytest.raises(ValueError, match="rule"):
        _cooc.windows(offsets, tokens, 2, 2, 3, 1)


def test_no_texts_and_no_words():
    C, n = _cooc.windows(np.zeros(1, np.int64), np.zeros(0, np.int32), 3, 0, 4, 2)
    assert n == 0 and not C.any()
    C = _cooc.docs(np.zeros(1, np.int64), np.zeros(0, np.int64), 5,
                   np.full(5, -1, np.int32), 0, 2)
    assert C.shape == (0, 0)
