# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Thin Cython wrappers of the co-occurrence kernels (csrc/cooc, linked into this module):
the counts behind the coherence measures (countgrid._utils.coherence,
countgrid.metrics.topic_coherence).

Private.  The caller maps the words that matter (the union of the topics' top words) to
``0 .. n_relevant - 1`` and checks the memory; the wrappers check every length and the
index pointers, and the kernels every index.  Both run in blocks of documents (texts) of
about ``block_work()`` stored entries (tokens), with ``check_interrupt()`` between blocks;
the counts are integers summed over the blocks, so they do not depend on the blocking or
on the thread count.
"""
import numpy as np
from libc.stdint cimport int32_t, int64_t

cimport countgrid._utils._cdecl as ck
from countgrid._common cimport (check_indptr, check_interrupt, check_status, index_t,
                               swap_block_setting)

# stored entries (tokens) per block between two interrupt checks
cdef Py_ssize_t _block_work = 1 << 24

#: The largest number of relevant words the kernels take.
MAX_WORDS = int(ck.CG_COOC_MAX_WORDS)


def block_work(work=None):
    """Entries (tokens) per block between interrupt checks; set it (for tests) and get the
    old value back."""
    return swap_block_setting(&_block_work, work, "work")


cdef Py_ssize_t _block_size(Py_ssize_t n_relevant, int num_threads):
    """Work of one block: at least _block_work, and many times the per-call cost of
    clearing and summing the threads' triangles."""
    cdef Py_ssize_t tri = n_relevant * (n_relevant + 1) // 2
    return max(_block_work, 4 * tri * max(1, num_threads))


cdef list _blocks(const int64_t[::1] starts, Py_ssize_t work):
    """Boundaries of blocks of consecutive rows (texts) of about ``work`` entries, from the
    row starts ``starts`` (n + 1 values)."""
    cdef Py_ssize_t i, n = starts.shape[0] - 1, start = 0
    out = []
    for i in range(n):
        if starts[i + 1] - starts[start] >= work and i + 1 < n:
            out.append((start, i + 1))
            start = i + 1
    out.append((start, n))
    return out


def _check_relevant(Py_ssize_t n_relevant):
    if n_relevant < 0 or n_relevant > MAX_WORDS:
        raise ValueError(f"n_relevant must lie in [0, {MAX_WORDS}], got {n_relevant}")


def docs(const index_t[::1] indptr, const index_t[::1] indices, int64_t n_features,
         const int32_t[::1] relevant, Py_ssize_t n_relevant, int num_threads=0):
    """Boolean-document counts ``(n_relevant, n_relevant)`` int64 of a CSR matrix: the
    diagonal the documents holding each word, the rest those holding both."""
    cdef int64_t n_rows = indptr.shape[0] - 1
    cdef Py_ssize_t r0, r1
    cdef int status = 0
    _check_relevant(n_relevant)
    if relevant.shape[0] != n_features:
        raise ValueError(f"docs: relevant has {relevant.shape[0]} entries for {n_features} "
                         "features")
    check_indptr(indptr, indices.shape[0], "docs")
    out = np.zeros((n_relevant, n_relevant), dtype=np.int64)
    if n_rows == 0 or n_relevant == 0:
        return out
    cdef int64_t[:, ::1] counts = out
    cdef const index_t *ip = &indices[0] if indices.shape[0] > 0 else NULL
    cdef const int32_t *rp = &relevant[0] if n_features > 0 else NULL
    starts = np.asarray(indptr, dtype=np.int64)
    for r0, r1 in _blocks(starts, _block_size(n_relevant, num_threads)):
        with nogil:
            status = ck.docs(r1 - r0, &indptr[r0], ip, indices.shape[0], n_features, rp,
                             n_relevant, &counts[0, 0], n_relevant, num_threads)
        check_status(status, "docs")
        check_interrupt()
    return out


def windows(const int64_t[::1] offsets, const int32_t[::1] tokens, int64_t window, int rule,
            Py_ssize_t n_relevant, int num_threads=0):
    """Boolean-sliding-window counts ``(n_relevant, n_relevant)`` int64 of the texts
    ``tokens[offsets[i]:offsets[i + 1]]`` and the number of windows (rule 0: a word is in
    a window when one of its tokens is; rule 1: gensim's incremental update)."""
    cdef int64_t n_texts = offsets.shape[0] - 1
    cdef int64_t n_win = 0
    cdef Py_ssize_t t0, t1
    cdef int status = 0
    _check_relevant(n_relevant)
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    if rule not in (0, 1):
        raise ValueError(f"rule must be 0 or 1, got {rule}")
    check_indptr(offsets, tokens.shape[0], "windows")
    out = np.zeros((n_relevant, n_relevant), dtype=np.int64)
    if n_texts == 0:
        return out, 0
    cdef int64_t[:, ::1] counts = out
    cdef int64_t dummy = 0
    cdef int64_t *cp = &counts[0, 0] if n_relevant > 0 else &dummy
    cdef const int32_t *tp = &tokens[0] if tokens.shape[0] > 0 else NULL
    for t0, t1 in _blocks(offsets, _block_size(n_relevant, num_threads)):
        with nogil:
            status = ck.cg_cooc_windows(t1 - t0, &offsets[t0], tp, tokens.shape[0], window,
                                        rule, n_relevant, cp, max(n_relevant, 1), &n_win,
                                        num_threads)
        check_status(status, "windows")
        check_interrupt()
    return out, int(n_win)
