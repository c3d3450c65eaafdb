"""The per-topic numbers of :func:`countgrid.metrics.topic_diagnostics` (docs/diagnostics.md,
"The diagnostics table"), from a topic-word matrix and document-topic weights.

Word-side numbers follow MALLET's ``TopicModelDiagnostics`` (effective number of words,
distances from the uniform and the corpus distribution, exclusivity) and the R package
stm's ``exclusivity`` (FREX, Bischof & Airoldi, ICML 2012; Roberts et al. 2014); the
document-side numbers (tokens, documents of rank 1, document entropy) are accumulated one
block of documents at a time, so memory stays O(block x topics).
"""
import numpy as np

#: Entries of a (topics x words) block sorted at once by :func:`frex`.
_SORT_BLOCK = 1 << 22


def topic_word_matrix(weights, name):
    """``weights`` as a finite, non-empty 2-D (topics x words) float64 array."""
    W = np.asarray(weights, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] < 1 or W.shape[1] < 1:
        raise ValueError(f"{name} must be a non-empty 2-D (topics x words) matrix, got "
                         f"shape {W.shape}")
    if not np.isfinite(W).all():
        raise ValueError(f"{name} contains NaN or infinity")
    return W


def normalized_rows(weights, name):
    """``weights`` (topics x words, non-negative, positive row sums) as float64 rows that
    sum to 1."""
    W = topic_word_matrix(weights, name)
    sums = W.sum(axis=1)
    if (W < 0).any() or not (sums > 0).all():
        raise ValueError(f"{name} must be non-negative with a positive sum in every row "
                         f"(topic-word weights)")
    return W / sums[:, None]


def _entropy_rows(P):
    """Shannon entropy (nats) of every row of a row-stochastic matrix."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(P > 0, P * np.log(P), 0.0)
    return -terms.sum(axis=1)


def word_statistics(phi, corpus):
    """``effective_words`` (``1 / sum_w phi_w^2``), ``uniform_distance``
    (``KL(phi || uniform) = log V - H(phi)``) and ``corpus_distance`` (``KL(phi || corpus)``,
    ``inf`` when a topic gives weight to a word the corpus never uses) of every row of
    ``phi`` (topics x words, rows summing to 1); ``corpus`` is the corpus's word
    distribution."""
    H = _entropy_rows(phi)
    effective = 1.0 / np.einsum("kw,kw->k", phi, phi)
    uniform = np.log(phi.shape[1]) - H
    with np.errstate(divide="ignore"):
        log_corpus = np.log(corpus)
    cross = np.zeros(phi.shape[0])
    used = phi > 0
    for k in range(phi.shape[0]):               # -sum phi log corpus over the used words
        lc = log_corpus[used[k]]
        cross[k] = -np.inf if np.isneginf(lc).any() else float(phi[k, used[k]] @ lc)
    return {"effective_words": effective, "uniform_distance": uniform,
            "corpus_distance": -H - cross}


def shares(phi):
    """``phi[k, w] / sum_k' phi[k', w]``, each topic's share of a word's weight (what
    exclusivity and FREX read); 0 for a word no topic uses."""
    total = phi.sum(axis=0)
    return phi / np.where(total > 0, total, 1.0)[None, :]


def exclusivity(share, top):
    """MALLET's exclusivity: the mean over a topic's top words of its :func:`shares`
    ``phi[k, w] / sum_k' phi[k', w]`` (1: the word belongs to this topic only)."""
    return np.take_along_axis(share, top, axis=1).mean(axis=1)


def _mean_ranks(rows, values):
    """The average rank (1-based, ties averaged, as R's ``rank``) of each ``values[k, j]``
    among the entries of ``rows[k]`` divided by the row's length."""
    s = np.sort(rows, axis=1)
    out = np.empty(values.shape)
    for k in range(rows.shape[0]):
        lo = np.searchsorted(s[k], values[k], side="left")
        hi = np.searchsorted(s[k], values[k], side="right")
        out[k] = (lo + hi + 1) / 2.0
    return out / rows.shape[1]


def frex(phi, share, top, weight):
    """FREX of the top words, averaged per topic: ``1 / (weight / E + (1 - weight) / F)``
    with ``E`` and ``F`` the empirical CDFs, within the topic, of the word's exclusivity
    ``share[k, w]`` (:func:`shares`) and of its probability ``phi[k, w]`` (stm's
    ``exclusivity(model, M, frexw)`` divided by ``M``)."""
    out = np.empty(phi.shape[0])
    step = max(1, _SORT_BLOCK // phi.shape[1])
    for k0 in range(0, phi.shape[0], step):
        k1 = min(phi.shape[0], k0 + step)
        t = top[k0:k1]
        E = _mean_ranks(share[k0:k1], np.take_along_axis(share[k0:k1], t, axis=1))
        F = _mean_ranks(phi[k0:k1], np.take_along_axis(phi[k0:k1], t, axis=1))
        out[k0:k1] = (1.0 / (weight / E + (1.0 - weight) / F)).mean(axis=1)
    return out


class DocumentTotals:
    """Per-topic sums over blocks of documents: the expected tokens ``T_k = sum_d a_dk``
    with ``a_dk = n_d theta_dk`` (``n_d`` the document's tokens, ``theta_d`` its topic
    weights, normalised to sum 1), ``S_k = sum_d a_dk log a_dk`` for the entropy of the
    topic's distribution over documents, and the documents whose largest weight is the
    topic's (ties: the lower topic; empty documents count nowhere)."""

    def __init__(self, n_topics):
        self.tokens = np.zeros(n_topics)
        self.a_log_a = np.zeros(n_topics)
        self.rank1 = np.zeros(n_topics, dtype=np.int64)

    def add(self, theta, lengths):
        """Add a block: ``theta`` (documents x topics, non-negative), ``lengths`` (tokens
        of each document)."""
        theta = np.asarray(theta, dtype=np.float64)
        lengths = np.asarray(lengths, dtype=np.float64)
        sums = theta.sum(axis=1)
        keep = (lengths > 0) & (sums > 0)
        if not keep.any():
            return
        theta, lengths, sums = theta[keep], lengths[keep], sums[keep]
        a = theta * (lengths / sums)[:, None]
        self.tokens += a.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.a_log_a += np.where(a > 0, a * np.log(a), 0.0).sum(axis=0)
        self.rank1 += np.bincount(theta.argmax(axis=1), minlength=self.rank1.size)

    def result(self):
        """``tokens``, ``share`` (of all tokens), ``rank1_documents`` and
        ``document_entropy`` (nats; ``log T - S / T``, NaN for a topic of no tokens)."""
        total = self.tokens.sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            entropy = np.where(self.tokens > 0,
                               np.log(self.tokens) - self.a_log_a / self.tokens, np.nan)
            share = self.tokens / total if total > 0 else np.full_like(self.tokens, np.nan)
        return {"tokens": self.tokens, "share": share, "rank1_documents": self.rank1,
                "document_entropy": np.maximum(entropy, 0.0)}
