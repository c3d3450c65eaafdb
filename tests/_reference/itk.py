"""Slow, obviously-correct NumPy references of the information-theoretic kernels
(Martins et al., JMLR 2009): one pair at a time, coordinate by coordinate.

``kb_pair_ref`` uses the closed form of docs/kernels.md in float64, which loses about
``log10(1/|q - 1|)`` digits near q = 1; ``kb_pair_hp`` evaluates the same closed form in
``np.longdouble`` with, near q = 1, the series ``(v^q - v)/(q - 1) = v ln v sum_k
((q-1) ln v)^k / (k+1)!`` (no cancellation), for testing accuracy near q = 1.
``kernel_dec`` evaluates the weighted kernels in 100-digit ``decimal`` arithmetic (no
overflow or underflow for any pair of finite floats), for measures of any masses, and
``sq_distances_dec`` the squared kernel-induced distances ``k(x, x) + k(y, y) - 2 k(x, y)``
of every kernel in the same arithmetic (the rows normalised exactly), where the
cancellation of that formula costs nothing."""
import decimal

import numpy as np

__all__ = ["log_q", "kb_pair_ref", "kb_pair_hp", "kernel_ref", "kernel_hp", "kernel_dec",
           "sq_distances_dec"]

LD = np.longdouble


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


def _g_hp(v, q):
    """(v^q - v) / (q - 1) in long double (v ln v at q = 1)."""
    lv = np.log(v)
    qm1 = LD(q) - LD(1)
    if abs(float(qm1)) < 0.05:
        t = qm1 * lv
        term, total = np.ones_like(v), np.ones_like(v)
        for k in range(2, 30):
            term = term * t / LD(k)
            total = total + term
        return v * lv * total
    return (v ** LD(q) - v) / qm1


def kb_pair_hp(x, y, q):
    """k^B_q of one pair in long double: sum over the common support of
    g(x + y) - g(x) - g(y), g(v) = (v^q - v)/(q - 1) (the linear terms cancel)."""
    m = (x > 0) & (y > 0)
    x, y = np.asarray(x, dtype=LD)[m], np.asarray(y, dtype=LD)[m]
    if q == 0:
        return LD(m.sum())
    return np.sum(_g_hp(x + y, q) - _g_hp(x, q) - _g_hp(y, q))


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


def kernel_hp(A, B, q, weighted=None):
    """kernel_ref in long double with the series near q = 1 (no exponentiated form)."""
    A = np.asarray(A, dtype=np.float64).astype(LD)
    B = A if B is None else np.asarray(B, dtype=np.float64).astype(LD)
    wa, wb = A.sum(1), B.sum(1)
    K = np.zeros((A.shape[0], B.shape[0]), dtype=LD)
    for i in range(A.shape[0]):
        for j in range(B.shape[0]):
            if wa[i] == 0 or wb[j] == 0:
                continue
            if weighted is None:
                K[i, j] = LD(2) ** -LD(q) * kb_pair_hp(A[i] / wa[i], B[j] / wb[j], q)
            elif weighted == "B":
                K[i, j] = kb_pair_hp(A[i], B[j], q)
            else:
                K[i, j] = kb_pair_hp(A[i], B[j], q) / (wa[i] + wb[j]) ** LD(q)
    return K


_DEC = decimal.Context(prec=100, Emax=10 ** 9, Emin=-10 ** 9)


def _term_dec(u, v, q):
    """(u + v)^q - u^q - v^q)/(q - 1) (q = 1: the Shannon form) in 100 digits, as
    b^q [(1 + r)^q - 1 - r^q]/(q - 1), r = a/b, a <= b: ratios far below 1e-100 (pairs
    of masses across the float range) would round 1 + r to 1, so (1 + r)^q - 1 and
    ln(1 + r) use two terms of their series there."""
    D = decimal.Decimal
    a, b = min(u, v), max(u, v)
    r = a / b
    tiny = r < D("1e-40")
    if q == 1:
        l1p = r - r * r / 2 if tiny else (1 + r).ln()
        return b * ((1 + r) * l1p - r * r.ln())
    qd = D(q)
    pw = qd * r + qd * (qd - 1) / 2 * r * r if tiny else (1 + r) ** qd - 1
    return b ** qd * (pw - r ** qd) / (qd - 1)


def kernel_dec(A, B, q, weighted):
    """k^A_q (weighted="A") or k^B_q ("B") of every pair in 100-digit decimal arithmetic
    from the exact values of the float entries; returns Decimals (an object array)."""
    A = np.asarray(A)
    B = A if B is None else np.asarray(B)
    D = decimal.Decimal
    K = np.empty((A.shape[0], B.shape[0]), dtype=object)
    with decimal.localcontext(_DEC):
        ra = [[D(float(v)) for v in row] for row in A]
        rb = [[D(float(v)) for v in row] for row in B]
        for i, x in enumerate(ra):
            wx = sum(x, D(0))
            for j, y in enumerate(rb):
                wy = sum(y, D(0))
                total = D(0)
                if wx > 0 and wy > 0:
                    for u, v in zip(x, y):
                        if u > 0 and v > 0:
                            total += 1 if q == 0 else _term_dec(u, v, q)
                    if weighted == "A" and q != 0:
                        total /= (wx + wy) ** D(q)
                K[i, j] = total
    return K


def relative_error_dec(K, R, tiny):
    """Largest ``|K - R| / |R|`` over the entries (entries of the reference below ``tiny``,
    the smallest normal number of K's dtype, count as ``|K - R| / tiny``)."""
    worst = 0.0
    with decimal.localcontext(_DEC):
        for k, r in zip(np.asarray(K, dtype=np.float64).ravel(), R.ravel()):
            err = abs(decimal.Decimal(float(k)) - r)
            worst = max(worst, float(err / max(abs(r), decimal.Decimal(float(tiny)))))
    return worst


def _kb_dec(x, y, q):
    """k^B_q of two rows of Decimals (common support)."""
    total = decimal.Decimal(0)
    for u, v in zip(x, y):
        if u > 0 and v > 0:
            total += 1 if q == 0 else _term_dec(u, v, q)
    return total


def _log_q_dec(q):
    D = decimal.Decimal
    if q == 1:
        return D(2).ln()
    return (D(2) ** (1 - D(q)) - 1) / (1 - D(q))


def sq_distances_dec(A, B, kernel, q=1.0, weighted=None, exponentiated=False, t=1.0):
    """``k(x, x) + k(y, y) - 2 k(x, y)`` of every pair of rows of A and B, in 100-digit
    decimal arithmetic from the exact values of the float entries, for ``kernel`` in
    {"linear", "js", "jt"} with the conventions of docs/kernels.md (rows of zero mass give
    kernel values 0); returns Decimals (an object array)."""
    D = decimal.Decimal
    A, B = np.asarray(A), np.asarray(B)
    q = 1.0 if kernel == "js" else q
    out = np.empty((A.shape[0], B.shape[0]), dtype=object)
    with decimal.localcontext(_DEC):
        ra = [[D(float(v)) for v in row] for row in A]
        rb = [[D(float(v)) for v in row] for row in B]

        def k(x, y):
            if kernel == "linear":
                return sum((u * v for u, v in zip(x, y)), D(0))
            wx, wy = sum(x, D(0)), sum(y, D(0))
            if wx == 0 or wy == 0:
                return D(0)
            if weighted is None:
                p, r = [u / wx for u in x], [v / wy for v in y]
                kjt = _kb_dec(p, r, q) / D(2) ** D(q)
                if exponentiated:
                    return (-D(t) * (_log_q_dec(q) - kjt)).exp()
                return kjt
            kb = _kb_dec(x, y, q)
            if weighted in ("A", "normalized") and q != 0:
                return kb / (wx + wy) ** D(q)
            return kb

        self_a, self_b = [k(x, x) for x in ra], [k(y, y) for y in rb]
        for i, x in enumerate(ra):
            for j, y in enumerate(rb):
                out[i, j] = self_a[i] + self_b[j] - 2 * k(x, y)
    return out
