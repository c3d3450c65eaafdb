"""Slow, literal references of the topic coherence measures (Röder, Both & Hinneburg, WSDM
2015; Mimno et al., EMNLP 2011 for UMass) as gensim 4.x defines them
(gensim/topic_coherence/{segmentation,probability_estimation,direct_confirmation_measure,
indirect_confirmation_measure}.py): every boolean document and every sliding window
written out, every segment and confirmation a scalar loop in Python floats.

A topic is a list of word indices; ``D[u][v]`` (a dict) the number of documents (windows)
holding both words and ``D[u][u]`` those holding ``u``; ``n`` the number of documents
(windows)."""
import math

import numpy as np

__all__ = ["docs_counts_ref", "windows_counts_ref", "u_mass_ref", "uci_ref", "npmi_ref",
           "c_v_ref", "coherence_ref", "EPSILON"]

#: gensim's direct_confirmation_measure.EPSILON (Röder et al.'s epsilon).
EPSILON = 1e-12


def _count_sets(sets, words):
    """Counts ``{(u, v): k}`` over the word sets (one per document or window)."""
    D = {(u, v): 0 for u in words for v in words}
    for s in sets:
        present = [u for u in words if u in s]
        for u in present:
            for v in present:
                D[u, v] += 1
    return D


def docs_counts_ref(X, words):
    """Boolean documents: each row of the dense matrix ``X`` is the set of its columns with
    a non-zero value.  Returns ``(D, n_documents)``."""
    X = np.asarray(X)
    sets = [set(np.flatnonzero(row).tolist()) for row in X]
    return _count_sets(sets, list(words)), X.shape[0]


def _windows_boolean(text, window):
    """The windows of one text as sets of tokens: gensim's utils.iter_windows with
    ignore_below_size=False (a text shorter than the window, even an empty one, is one
    window)."""
    n = len(text)
    if n < window:
        return [set(text)]
    return [set(text[s:s + window]) for s in range(n - window + 1)]


def _windows_gensim(text, window, words):
    """The windows of one text as gensim 4.x's WordOccurrenceAccumulator sees them: the
    flags of the first window's words, then per step ``uniq[leaving token] = False`` and
    ``uniq[entering token] = True`` (text_analysis.py, ``_slide_window``)."""
    n = len(text)
    if n <= window:
        return [set(text)]
    out = []
    flags = set(text[:window])
    out.append(set(flags))
    for s in range(1, n - window + 1):
        flags.discard(text[s - 1])
        flags.add(text[s - 1 + window])
        out.append(set(flags))
    return out


def windows_counts_ref(texts, words, window, rule="boolean"):
    """Boolean sliding windows over token-id lists (negative ids: other words).  ``rule``:
    "boolean" (a word is in a window when one of its tokens is) or "gensim".  Returns
    ``(D, n_windows)``."""
    words = list(words)
    sets = []
    for text in texts:
        text = [int(t) for t in text]
        sets += (_windows_boolean(text, window) if rule == "boolean"
                 else _windows_gensim(text, window, words))
    return _count_sets(sets, words), len(sets)


def u_mass_ref(topic, D, n, eps=EPSILON):
    """UMass: segmentation S_one_pre (each word with each word ranked above it), the log
    conditional probability log((P(w', w*) + eps) / P(w*)); a pair whose w* never occurs
    contributes 0 (gensim catches the division by zero).  The mean over the pairs."""
    sims = []
    for i in range(1, len(topic)):
        for j in range(i):
            wp, ws = topic[i], topic[j]
            if D[ws, ws] == 0:
                sims.append(0.0)
                continue
            sims.append(math.log((D[wp, ws] / n + eps) / (D[ws, ws] / n)))
    return sum(sims) / len(sims)


def _pmi(u, v, D, n, eps):
    return math.log((D[u, v] / n + eps) / ((D[u, u] / n) * (D[v, v] / n)))


def _npmi(u, v, D, n, eps):
    return _pmi(u, v, D, n, eps) / -math.log(D[u, v] / n + eps)


def uci_ref(topic, D, n, eps=EPSILON):
    """UCI: segmentation S_one_one (ordered pairs of distinct words), PMI; the mean."""
    sims = [_pmi(u, v, D, n, eps) for u in topic for v in topic if u != v]
    return sum(sims) / len(sims)


def npmi_ref(topic, D, n, eps=EPSILON):
    """NPMI: segmentation S_one_one, the normalised PMI log(...) / -log(P(w', w*) + eps)
    (Bouma 2009); the mean."""
    sims = [_npmi(u, v, D, n, eps) for u in topic for v in topic if u != v]
    return sum(sims) / len(sims)


def c_v_ref(topic, D, n, eps=EPSILON, gamma=1):
    """C_V: segmentation S_one_set (each word against the whole topic), the context vector
    of a word set W' over the topic's words, v(W')_j = sum_{w in W'} NPMI(w, w_j)^gamma,
    and the cosine of v({w}) and v(W); the mean over the topic's words."""
    def vector(segment):
        return [sum(_npmi(w, wj, D, n, eps) ** gamma for w in segment) for wj in topic]

    def cos(a, b):
        return (sum(x * y for x, y in zip(a, b))
                / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))))

    whole = vector(topic)
    sims = [cos(vector([w]), whole) for w in topic]
    return sum(sims) / len(sims)


def coherence_ref(topics, D, n, measure, eps=EPSILON, gamma=1):
    """Per-topic values of ``measure`` for topics whose words all occur (else None)."""
    f = {"u_mass": u_mass_ref, "c_uci": uci_ref, "c_npmi": npmi_ref,
         "c_v": lambda t, D, n, eps: c_v_ref(t, D, n, eps, gamma)}[measure]
    out = []
    for topic in topics:
        topic = [int(w) for w in topic]
        if measure != "u_mass" and any(D[w, w] == 0 for w in topic):
            out.append(None)
        else:
            out.append(f(topic, D, n, eps))
    return out
