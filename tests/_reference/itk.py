"""Slow, obviously-correct NumPy references of the information-theoretic kernels
(Martins et al., JMLR 2009): one pair at a time, coordinate by coordinate."""
import numpy as np

__all__ = ["log_q", "kb_pair_ref", "kernel_ref"]


def log_q(x, q):
    """The q-logarithm ``(x^(1-q) - 1) / (1 - q)`` (``ln x`` at ``q = 1``)."""
    x = float(x)
    if q == 1:
        return float(np.log(x))
    return (x ** (1.0 - q) - 1.0) / (1.0 - q)


def kb_pair_ref(x, y, q):
    """k^B_q of one pair, coordinate by coordinate on the common support."""
    m = (x > 0) & (y > 0)
    x, y = x[m].astype(np.float64), y[m].astype(np.float64)
    s = x + y
    if q == 0:
        return float(m.sum())
    if q == 1:
        return float(np.sum(s * np.log(s) - x * np.log(x) - y * np.log(y)))
    if q == 2:
        return float(np.sum(2 * x * y))
    return float(np.sum(s ** q - x ** q - y ** q) / (q - 1))


def kernel_ref(A, B, q, weighted=None, exponentiated=False, t=1.0):
    A = np.asarray(A, dtype=np.float64)
    B = A if B is None else np.asarray(B, dtype=np.float64)
    wa, wb = A.sum(1), B.sum(1)
    K = np.zeros((A.shape[0], B.shape[0]))
    for i in range(A.shape[0]):
        for j in range(B.shape[0]):
            if wa[i] == 0 or wb[j] == 0:
                continue
            if weighted is None:
                p, r = A[i] / wa[i], B[j] / wb[j]
                k = 2.0 ** -q * kb_pair_ref(p, r, q)
                K[i, j] = np.exp(-t * (log_q(2.0, q) - k)) if exponentiated else k
            elif weighted == "B":
                K[i, j] = kb_pair_ref(A[i], B[j], q)
            else:
                K[i, j] = kb_pair_ref(A[i], B[j], q) / (wa[i] + wb[j]) ** q
    return K
