"""Slow, literal reference of grid alignment (countgrid.grid.align): every axis map and
every translation written out, the Bhattacharyya coefficient of every pair of cells summed
in Python floats."""
import itertools
import math

import numpy as np

__all__ = ["align_ref"]


def align_ref(pi_a, pi_b, flips=True, transpose=True):
    """``(best_score_per_candidate, candidates, best_candidate, best_shift)`` of the
    alignment of ``pi_a`` onto ``pi_b`` (arrays of shape extent + (n_words,)): the score
    of ``(axes, flips, shift)`` is the mean over the cells ``k`` of ``b`` of
    ``sum_w sqrt(a_{src(k), w} b_{k, w})`` with ``src(k)`` the cell of ``a`` that lands on
    ``k``: coordinate ``axes[d]`` of ``src`` is ``j_d = k_d - shift_d (mod E_d)``, reversed
    (``E_d - 1 - j_d``) where ``flips[d]``."""
    A = pi_a / pi_a.sum(axis=-1, keepdims=True)
    B = pi_b / pi_b.sum(axis=-1, keepdims=True)
    ext_a, ext = A.shape[:-1], B.shape[:-1]
    n = len(ext)
    cands = []
    for p in itertools.permutations(range(n)):
        if any(ext_a[p[d]] != ext[d] for d in range(n)):
            continue
        if not transpose and p != tuple(range(n)):
            continue
        for f in (itertools.product((False, True), repeat=n) if flips else [(False,) * n]):
            cands.append((p, tuple(f)))
    cells = list(itertools.product(*[range(e) for e in ext]))
    best_scores, best = [], (-1.0, None, None)
    for c, (p, f) in enumerate(cands):
        top = -1.0
        for shift in cells:
            total = 0.0
            for k in cells:
                src = [0] * n
                for d in range(n):
                    j = (k[d] - shift[d]) % ext[d]
                    src[p[d]] = ext[d] - 1 - j if f[d] else j
                total += sum(math.sqrt(x * y) for x, y in zip(A[tuple(src)], B[k]))
            total /= len(cells)
            if total > top + 1e-12:
                top = total
                if total > best[0] + 1e-12:
                    best = (total, c, shift)
        best_scores.append(top)
    return np.array(best_scores), cands, best[1], best[2]
