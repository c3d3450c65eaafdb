"""Slow, literal references of the per-topic diagnostics (MALLET's TopicModelDiagnostics,
stm's exclusivity/FREX): every sum a Python loop over words or documents, every rank
counted by comparing with every other entry.

``phi`` is a list of topics, each a list of word probabilities summing to 1; ``theta`` a
list of documents' topic weights (summing to 1); ``lengths`` the documents' tokens;
``top`` each topic's top words; ``corpus`` the corpus's word distribution."""
import math

__all__ = ["document_columns_ref", "word_columns_ref", "exclusivity_ref", "frex_ref",
           "cell_shares_ref"]


def document_columns_ref(theta, lengths):
    """tokens, share, rank1_documents, document_entropy per topic."""
    K = len(theta[0])
    a = [[n * t / sum(row) for t in row] if n > 0 and sum(row) > 0 else [0.0] * K
         for row, n in zip(theta, lengths)]
    tokens = [sum(a[d][k] for d in range(len(a))) for k in range(K)]
    total = sum(tokens)
    rank1 = [0] * K
    for row, n in zip(theta, lengths):
        if n > 0 and sum(row) > 0:
            best = max(range(K), key=lambda k: (row[k], -k))
            rank1[best] += 1
    entropy = []
    for k in range(K):
        if tokens[k] <= 0:
            entropy.append(math.nan)
            continue
        h = 0.0
        for d in range(len(a)):
            p = a[d][k] / tokens[k]
            if p > 0:
                h -= p * math.log(p)
        entropy.append(h)
    return {"tokens": tokens, "share": [t / total for t in tokens], "rank1_documents": rank1,
            "document_entropy": entropy}


def word_columns_ref(phi, corpus):
    """effective_words, uniform_distance, corpus_distance per topic."""
    out = {"effective_words": [], "uniform_distance": [], "corpus_distance": []}
    V = len(corpus)
    for row in phi:
        out["effective_words"].append(1.0 / sum(p * p for p in row))
        out["uniform_distance"].append(sum(p * math.log(p * V) for p in row if p > 0))
        kl = 0.0
        for p, c in zip(row, corpus):
            if p > 0:
                kl = math.inf if c == 0 else kl + p * math.log(p / c)
        out["corpus_distance"].append(kl)
    return out


def _share(phi, k, w):
    """The topic's share of the word's weight; 0 for a word no topic uses."""
    total = sum(phi[j][w] for j in range(len(phi)))
    return phi[k][w] / total if total > 0 else 0.0


def exclusivity_ref(phi, top):
    return [sum(_share(phi, k, w) for w in top[k]) / len(top[k]) for k in range(len(phi))]


def _ecdf_rank(values, v):
    """R's rank(values)[i] / len(values) for an entry equal to v (ties averaged)."""
    below = sum(1 for x in values if x < v)
    equal = sum(1 for x in values if x == v)
    return (below + (equal + 1) / 2.0) / len(values)


def frex_ref(phi, top, weight):
    """stm's exclusivity(M, frexw) / M, with the topic's top words given."""
    out = []
    for k, row in enumerate(phi):
        shares = [_share(phi, k, w) for w in range(len(row))]
        total = 0.0
        for w in top[k]:
            E = _ecdf_rank(shares, shares[w])
            F = _ecdf_rank(row, row[w])
            total += 1.0 / (weight / E + (1.0 - weight) / F)
        out.append(total / len(top[k]))
    return out


def cell_shares_ref(q, extent, window):
    """P(cell c | document) of a 2-D grid: each window position k (its cells
    k + [0, window) on the torus) spreads its posterior q[k] evenly over its cells."""
    E0, E1 = extent
    W0, W1 = window
    out = [0.0] * (E0 * E1)
    for i in range(E0):
        for j in range(E1):
            for a in range(W0):
                for b in range(W1):
                    out[((i + a) % E0) * E1 + (j + b) % E1] += q[i * E1 + j] / (W0 * W1)
    return out
