"""Information-theoretic kernels on non-negative measures (Martins et al., JMLR 2009).

Gram matrices of the Jensen-Shannon kernel and of the Jensen-Tsallis q-kernels,
for probability vectors and for unnormalised measures, with their exponentiated
forms; the Boolean (``q = 0``) and linear (``q = 2``) kernels are special cases.
Definitions and conventions are those of docs/kernels.md (natural logarithms,
``0^q = 0`` for every ``q >= 0``: "Conventions").  Every kernel is positive
semi-definite for ``0 <= q <= 2`` (docs/kernels.md, "Positive semi-definiteness").

The heavy part, ``k^B_q`` between all pairs of rows, runs in C with OpenMP over
rows (vectorised log/exp for dense rows, index merging for sparse rows), in tiles
between which Ctrl-C is honoured; the symmetric case ``B=None`` computes one
triangle.  Rows with zero mass give kernel rows (and columns) of zeros.  The
numerical range (rows of any finite magnitude, q near 1, overflowing results) is
described in docs/kernels.md, "Numerical range".
"""
import math
import operator
from numbers import Real

import numpy as np
import scipy.sparse as sp

from countgrid._utils.memory import check_memory
from countgrid._utils.param_validation import Interval, Options, validate_params
from countgrid._utils.threads import effective_n_threads
from countgrid._utils.validation import asarray_or_sparse, check_matrix
from countgrid.kernels import _wrappers

__all__ = ["jensen_shannon_kernel", "jensen_tsallis_kernel", "log_q"]

_LN2 = math.log(2.0)

_WEIGHTED = {None: None, "A": "A", "normalized": "A", "B": "B", "unnormalized": "B"}
_CONSTRAINTS = {
    "q": [Interval(Real, 0, 2)],
    "weighted": [None, Options("A", "B", "normalized", "unnormalized")],
    "exponentiated": ["boolean"],
    "t": [Interval(Real, 0, None, closed="neither")],
}
#: Pair-coordinate evaluations per thread in one C call of a tiled Gram matrix: a few tens
#: of milliseconds, so that Ctrl-C is honoured quickly while the per-call overhead (the
#: element function of the tile's rows, recomputed per call) stays below about 1 %.
_TILE_WORK = 2 ** 24
_MIN_TILE = 64
#: A sparse matrix paired with a dense one is densified up to this size (or the size of
#: the dense one), see _same_format.
_DENSIFY_BYTES = 2 ** 26
_RANGE_ADVICE = ("rescale the input (weighted=None and weighted='A' are invariant to a "
                 "common scale)")


def log_q(x, q):
    """The q-logarithm ``ln_q(x) = (x^(1-q) - 1) / (1 - q)`` (``ln x`` at ``q = 1``).

    Evaluated as ``expm1((1 - q) ln x) / (1 - q)``, which is accurate for every ``q`` near 1
    (the quotient form loses about ``log10(1/|1 - q|)`` digits) and tends to ``ln x``
    continuously.

    Parameters
    ----------
    x : array-like of float >= 0
    q : float

    Returns
    -------
    ndarray or float
        Of the shape of ``x`` (float64).  ``ln_q(0)`` is ``-1/(1-q)`` for ``q < 1`` and
        ``-inf`` for ``q >= 1``.
    """
    if isinstance(q, (bool, np.bool_)) or not isinstance(q, Real):
        raise TypeError(f"q must be a real number, got {q!r}")
    q = float(q)
    if not math.isfinite(q):
        raise ValueError(f"q must be finite, got {q!r}")
    try:
        x = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"x must be an array of non-negative numbers: {exc}") from None
    if np.isnan(x).any() or (x < 0).any():
        raise ValueError("x must hold non-negative numbers (the q-logarithm is defined on "
                         "[0, inf))")
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        lx = np.log(x)
        if q == 1.0:
            return lx
        # x = 0: expm1(-inf) = -1 (q < 1) or expm1(+inf) = inf (q > 1); x = inf likewise
        return np.expm1((1.0 - q) * lx) / (1.0 - q)


def _row_max(M):
    """Largest entry of every row (0 for an empty row), in M's dtype widened to float64."""
    if M.shape[1] == 0:
        return np.zeros(M.shape[0])
    if sp.issparse(M):
        return np.asarray(M.max(axis=1).toarray(), dtype=np.float64).ravel()
    return np.asarray(M.max(axis=1), dtype=np.float64)


def _ldexp_rows(M, e, dtype):
    """``diag(2**e) M`` in ``dtype`` for a validated matrix: exact unless entries leave the
    range of dtype (below it they become subnormal or 0 and are dropped from a CSR)."""
    if sp.issparse(M):
        out = M.copy()
        out.data = np.ldexp(M.data.astype(np.float64), np.repeat(e, np.diff(M.indptr)))
        out.data = out.data.astype(dtype)
        out.eliminate_zeros()
        return out
    return np.ascontiguousarray(np.ldexp(M.astype(np.float64), e[:, None]), dtype=dtype)


def _probabilities(M):
    """Rows rescaled to sum 1 (zero rows stay 0).

    Each row is first multiplied by the power of two that brings its largest entry into
    [0.5, 1) (exact), then summed and divided by the sum, so no row sum overflows (entries
    up to the largest float) or underflows (subnormal entries): any finite non-negative
    row with a positive entry gives the probability vector of that row rescaled to sum 1.
    """
    mx = _row_max(M)
    ok = mx > 0
    e = -np.frexp(mx)[1]                      # mx * 2**e in [0.5, 1); 0 for zero rows
    S = _ldexp_rows(M, e, np.float64)
    mass = np.asarray(S.sum(axis=1), dtype=np.float64).ravel()    # in [0.5, n_features)
    inv = np.divide(1.0, mass, out=np.zeros_like(mass), where=ok)
    if sp.issparse(S):
        S.data *= np.repeat(inv, np.diff(S.indptr))
        S.data = S.data.astype(M.dtype)
        S.eliminate_zeros()
        return S
    S *= inv[:, None]
    return np.ascontiguousarray(S, dtype=M.dtype)


def _global_exponent(A, B):
    """The power of two ``e`` with ``2**e * max(A, B)`` in [0.5, 1) (0 for all-zero input)."""
    top = _row_max(A).max(initial=0.0)
    if B is not None:
        top = max(top, _row_max(B).max(initial=0.0))
    return 0 if top == 0 else -math.frexp(top)[1]


def _times_pow2(M, e):
    """``2**e * M`` for a validated matrix (exact unless entries leave the normal range)."""
    if e == 0:
        return M
    return _ldexp_rows(M, np.full(M.shape[0], e), M.dtype)


def _log2_masses(M, shift=0):
    """``log2`` of the row sums of ``2**shift * M`` (-inf for zero rows), without overflow
    or underflow.  The integer exponents are combined before the one rounding, so a common
    power-of-two rescaling of ``M`` that ``shift`` undoes changes no bit."""
    mx = _row_max(M)
    e = -np.frexp(mx)[1]
    total = np.asarray(_ldexp_rows(M, e, np.float64).sum(axis=1), dtype=np.float64).ravel()
    with np.errstate(divide="ignore"):
        return np.log2(total) + (shift - e)


def _log_scaled(v, shift):
    """``ln(2**shift * v)`` for positive float64 ``v`` of any magnitude: the log of the
    mantissa plus the (exact, integer) exponent, so it does not depend on how a common
    power of two is split between ``v`` and ``shift``."""
    mant, ex = np.frexp(v)
    return np.log(mant) + (ex + shift) * _LN2


#: Weighted kernels (docs/kernels.md, "Numerical range"): rows are grouped by the log2 of
#: their mass in groups of this span, and a pair of rows in groups at most one apart (mass
#: ratio below 2**(2 * span)) is computed by the C kernel on the common power-of-two scale
#: of its two groups; farther pairs by _far_log_kb.  The C kernel's closed form forms
#: x_d + y_d, so a pair of mass ratio R is accurate to about R ulp (a light measure on its
#: heavy partner's scale), and for 1 < q < 3/2 a measure 2**k below the scale loses about
#: 2**(k (q - 1)) ulp (the linear terms of its expm1 form cancel): both stay below ~1e-11
#: for ratios below 2**16 in float64.
_GROUP_SPAN = 8
#: float32 input whose masses span more than this factor (log2) is computed in float64
#: (the R-ulp loss above is 1e-6 at R = 16 in float32); below it, in float32 as before.
_FLOAT32_SPAN = 4
#: Pair-coordinates of one chunk of _far_log_kb: bounds its temporary arrays.
_FAR_CHUNK = 2 ** 16


def _rows(M, idx):
    if idx is None:
        return M
    return M[idx]


def _block_ka(sub_a, sub_b, q, nt):
    """k^A_q between the rows of sub_a and sub_b (None: sub_a with itself) on one common
    power-of-two scale that brings their largest entry into [0.5, 1)."""
    e = _global_exponent(sub_a, sub_b)
    sub_a = _times_pow2(sub_a, e)
    sub_b = None if sub_b is None else _times_pow2(sub_b, e)
    ma = np.asarray(sub_a.sum(axis=1), dtype=np.float64).ravel()
    mb = ma if sub_b is None else np.asarray(sub_b.sum(axis=1), dtype=np.float64).ravel()
    Ks = _kernel_b(sub_a, sub_b, q, nt).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        Ks /= np.power(ma[:, None] + mb[None, :], q)     # zero rows: masked later
    return Ks


def _to_b(K, la, lb, q, shift):
    """k^B_q = k^A_q * 2**(q log2(w_x + w_y)), in place, from the log2 masses of the rows
    scaled by ``2**shift`` (entries beyond the float range become inf: _finish names
    them)."""
    with np.errstate(over="ignore", invalid="ignore"):
        scale = np.exp2(q * (np.logaddexp2(la[:, None], lb[None, :]) - shift))
        np.multiply(K, scale, out=K, where=K != 0)
    return K


def _weighted_kernel(A, B, q, weighted, nt):
    """k^A_q or k^B_q = (w_x + w_y)^q k^A_q on validated, matched A and B (float64).

    k^A_q is invariant to a common rescaling of both measures.  Rows are grouped by mass
    (groups spanning a factor ``2**_GROUP_SPAN``); the pairs of two groups at most one
    apart are computed by the C kernel after multiplying both by one power of two that
    brings their largest entry into [0.5, 1), so that no mass, kernel value or
    denominator ``(w_x + w_y)^q`` overflows or underflows.  Pairs of rows farther apart
    in mass are computed term by term in the log domain (_far_log_kb), where neither the
    ratio of the masses nor its q-th power can under- or overflow.  When all masses lie
    within two groups this is one C call, as for rows of similar masses (real data).
    Masses and logs are taken on the scale that brings the largest entry into [0.5, 1)
    (integer exponents are added before rounding), so the groups and every k^A_q value are
    the same bits after a common power-of-two rescaling of A and B.
    docs/kernels.md, "Numerical range".
    """
    symmetric = B is None
    shift = _global_exponent(A, B)
    la = _log2_masses(A, shift)
    lb = la if symmetric else _log2_masses(B, shift)
    n_a, n_b = la.shape[0], lb.shape[0]
    oka, okb = np.isfinite(la), np.isfinite(lb)
    if not oka.any() or not okb.any():
        return np.zeros((n_a, n_b))
    lo = min(la[oka].min(), lb[okb].min())
    hi = max(la[oka].max(), lb[okb].max())
    if A.dtype == np.float32 and hi - lo >= _FLOAT32_SPAN:
        A = A.astype(np.float64)                     # exact
        B = None if symmetric else B.astype(np.float64)
    if hi - lo < 2 * _GROUP_SPAN:
        K = _block_ka(A, B, q, nt)
        return _to_b(K, la, lb, q, shift) if weighted == "B" else K
    ga = np.full(n_a, -1, dtype=np.int64)
    ga[oka] = np.floor((la[oka] - lo) / _GROUP_SPAN)
    if symmetric:
        gb = ga
    else:
        gb = np.full(n_b, -1, dtype=np.int64)
        gb[okb] = np.floor((lb[okb] - lo) / _GROUP_SPAN)
    K = np.zeros((n_a, n_b))
    for gi in np.unique(ga[oka]):
        ia = np.flatnonzero(ga == gi)
        for gj in range(gi if symmetric else max(gi - 1, 0), gi + 2):   # zero rows: -1
            jb = np.flatnonzero(gb == gj)
            if jb.size == 0:
                continue
            diagonal = symmetric and gi == gj
            Ks = _block_ka(_rows(A, ia), None if diagonal else _rows(A if symmetric else B, jb),
                           q, nt)
            if weighted == "B":
                Ks = _to_b(Ks, la[ia], lb[jb], q, shift)
            K[np.ix_(ia, jb)] = Ks
            if symmetric and not diagonal:
                K[np.ix_(jb, ia)] = Ks.T
    Bs = A if symmetric else B
    for i in np.flatnonzero(oka):
        far = okb & (np.abs(gb - ga[i]) > 1)
        if symmetric:
            far[:i] = False
        jb = np.flatnonzero(far)
        if jb.size == 0:
            continue
        lk = _far_log_kb(_row_support(A, i), Bs, jb, q, shift)
        if weighted == "A":
            lk -= q * _LN2 * np.logaddexp2(la[i], lb[jb])
        else:
            lk -= q * _LN2 * shift
        with np.errstate(over="ignore", under="ignore"):
            K[i, jb] = np.exp(lk)
        if symmetric:
            K[jb, i] = K[i, jb]
    return K


def _row_support(M, i):
    """Columns and values (float64) of the positive entries of row i."""
    if sp.issparse(M):
        lo, hi = M.indptr[i], M.indptr[i + 1]
        cols, vals = M.indices[lo:hi], M.data[lo:hi]
        keep = vals > 0
        return cols[keep], vals[keep].astype(np.float64)
    cols = np.flatnonzero(M[i] > 0)
    return cols, M[i, cols].astype(np.float64)


def _log_ratio(a, b):
    """``ln(a/b)`` for positive float64 ``a``, ``b`` whose ratio may be below the float
    range: mantissas and the integer exponent difference, so the same bits for ``2**c a``
    and ``2**c b``."""
    ma, ea = np.frexp(a)
    mb, eb = np.frexp(b)
    return (np.log(ma) - np.log(mb)) + (ea - eb) * _LN2


def _far_log_kb(support, Y, jb, q, shift=0):
    """``ln k^B_q(2**shift x, 2**shift y)`` for one measure x (``support``: its positive
    entries) and the rows ``jb`` of Y (-inf where they share no coordinate), for any
    masses.

    Per common coordinate, with ``a <= b`` the two entries and ``r = a/b``,
    ``(a + b)^q - a^q - b^q = (q - 1) b^q r^m psi(r)``, ``m = min(q, 1)``, where
    ``psi = (1 + r) expm1((q - 1) log1p r) / ((q - 1) r) * w - expm1(z)/|q - 1|``,
    ``z = |q - 1| ln r <= 0``, ``w = 1`` (q >= 1) or ``e^z`` (q < 1); at q = 1 the limits
    ``(1 + r) log1p(r)/r - ln r``.  Both terms of psi are >= 0 (no cancellation) and of
    moderate size, so each term is ``exp(q ln b + m ln r + ln psi)`` and the sum over
    coordinates is taken in the log domain: ratios, powers and masses beyond the float
    range (e.g. ``(1e-300/1e300)^q``, not small for small q) stay exact.
    """
    cols, u = support
    out = np.full(jb.size, -np.inf)
    if cols.size == 0:
        return out
    step = max(1, _FAR_CHUNK // cols.size)
    m = min(q, 1.0)
    mu = abs(q - 1.0)
    for c0 in range(0, jb.size, step):
        rows = jb[c0:c0 + step]
        if sp.issparse(Y):
            V = np.asarray(Y[rows][:, cols].toarray(), dtype=np.float64)
        else:
            V = np.asarray(Y[np.ix_(rows, cols)], dtype=np.float64)
        ok = V > 0
        V = np.where(ok, V, 1.0)
        a, b = np.minimum(u, V), np.maximum(u, V)
        with np.errstate(under="ignore"):
            r = a / b
        lnb = _log_scaled(b, shift)
        normal = r >= np.finfo(np.float64).tiny
        lnr = np.where(normal, np.log(np.where(normal, r, 1.0)), _log_ratio(a, b))
        rc = np.maximum(r, 1e-300)          # (1 + r) log1p(r)/r -> 1 as r -> 0
        if q == 1.0:
            psi = (1.0 + rc) * np.log1p(rc) / rc - lnr
        else:
            g1 = (1.0 + rc) * np.expm1((q - 1.0) * np.log1p(rc)) / ((q - 1.0) * rc)
            z = mu * lnr
            if q < 1.0:
                g1 *= np.exp(z)
            psi = g1 - np.expm1(z) / mu
        L = q * lnb + m * lnr + np.log(psi)
        L[~ok] = -np.inf
        top = L.max(axis=1)
        fin = np.isfinite(top)
        top = np.where(fin, top, 0.0)
        total = np.exp(L - top[:, None]).sum(axis=1)
        with np.errstate(divide="ignore"):
            out[c0:c0 + step] = np.where(fin, top + np.log(total), -np.inf)
    return out


def _support_counts(A, B):
    """``#{d : a_d > 0 and b_d > 0}`` for every pair of rows: k^B_0 = k^A_0 = k_JT,0."""
    Ab = (A > 0).astype(np.float64)
    Bb = Ab if B is None else (B > 0).astype(np.float64)
    return _dense(Ab @ Bb.T).astype(np.float64, copy=False)


def _kernel_b(A, B, q, nt):
    """k^B_q between the rows of A and B (B None: A with itself), both of the same
    format and dtype."""
    symmetric = B is None
    if q == 2.0:  # linear kernel, 2 <x, y>
        K = _dense(A @ (A if symmetric else B).T) * 2
        return (K + K.T) / 2 if symmetric else K
    n, m = A.shape[0], (A if symmetric else B).shape[0]
    if sp.issparse(A):
        Bc = A if symmetric else B
        work = 1.0 + A.nnz / max(n, 1) + Bc.nnz / max(m, 1)
        rows, cols = _tile_shape(n, m, work, nt, symmetric)
        empty = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, A.dtype)
        return _wrappers.jt_gram_csr(*_csr_arrays(A),
                                      *(empty if symmetric else _csr_arrays(Bc)),
                                      A.shape[1], q, symmetric, nt, rows, cols)
    rows, cols = _tile_shape(n, m, float(max(A.shape[1], 1)), nt, symmetric)
    return _wrappers.jt_gram_dense(A, A if symmetric else B, q, symmetric, nt, rows, cols)


def _tile_shape(n, m, work_per_pair, nt, symmetric):
    """Tiles of about ``_TILE_WORK * nt`` pair-coordinate evaluations, square (and at least
    ``_MIN_TILE`` on a side) unless the matrix is smaller; one tile when it all fits."""
    budget = _TILE_WORK * max(nt, 1)
    if n * m * work_per_pair <= budget:
        edge = max(n, m, 1)
        return edge, edge
    edge = max(_MIN_TILE, 8 * nt, int(math.sqrt(budget / work_per_pair)))
    if symmetric:
        return edge, edge
    rows = min(n, edge)
    cols = min(m, max(edge, int(budget / (rows * work_per_pair))))
    return max(rows, 1), max(cols, 1)


def _dense(M):
    return np.asarray(M.toarray()) if sp.issparse(M) else np.asarray(M)


def _csr_arrays(M):
    """indptr, indices (int64) and data of a canonical CSR matrix."""
    return (np.ascontiguousarray(M.indptr, dtype=np.int64),
            np.ascontiguousarray(M.indices, dtype=np.int64), np.ascontiguousarray(M.data))


def _same_format(A, B):
    """A sparse/dense pair in one format: the sparse one densified when that costs no more
    memory than the dense one already takes (or _DENSIFY_BYTES), so that the result is the
    all-dense result bit for bit; else the dense one converted to CSR (the same result up
    to rounding)."""
    if B is None or sp.issparse(A) == sp.issparse(B):
        return A, B
    a_sparse = sp.issparse(A)
    S, Dn = (A, B) if a_sparse else (B, A)
    dense_bytes = S.shape[0] * S.shape[1] * S.dtype.itemsize
    if dense_bytes <= max(Dn.nbytes, _DENSIFY_BYTES):
        check_memory(dense_bytes, f"densifying the sparse {'A' if a_sparse else 'B'} of "
                     f"shape {S.shape}", "pass both matrices sparse")
        S = np.ascontiguousarray(S.toarray())
    else:
        Dn = sp.csr_matrix(Dn)
        Dn.sort_indices()
    return (S, Dn) if a_sparse else (Dn, S)


def jensen_tsallis_kernel(A, B=None, q=1.5, weighted=None, exponentiated=False, t=1.0, *,
                          blocks=None, block_weights=None, num_threads=None):
    """Jensen-Tsallis q-kernel Gram matrix between the rows of A and B.

    Parameters
    ----------
    A : {array-like, sparse matrix} of shape (n_samples_A, n_features)
        Non-negative rows (histograms, embeddings), dense or any scipy.sparse format.
        float32 input (A and B both float32) gives a float32 Gram matrix, anything else
        float64.
    B : {array-like, sparse matrix} of shape (n_samples_B, n_features), optional
        Second set of rows, dense or sparse whatever A is; ``None`` computes the
        symmetric ``K(A, A)`` from one triangle (exactly symmetric).
    q : float in [0, 2], default=1.5
        Entropic index.  ``q = 1`` is the Jensen-Shannon kernel, ``q = 0`` the
        Boolean kernel (size of the common support), ``q = 2`` the linear kernel.
        The kernel is continuous in ``q`` and computed accurately for every ``q``,
        including very near 1 (docs/kernels.md, "Numerical range").
    weighted : {None, "A", "B"}, default=None
        ``None``: rows are L1-normalised to probability vectors and
        ``k_JT,q(p1, p2) = ln_q(2) - T_q(p1, p2)`` (docs/kernels.md, "Kernels on
        probability vectors").  For unnormalised measures with masses ``w1, w2``
        (docs/kernels.md, "Weighted kernels"): ``"B"`` (alias ``"unnormalized"``) is
        ``k^B_q = 1/(q-1) sum_d [(x_d + y_d)^q - x_d^q - y_d^q]`` and ``"A"``
        (alias ``"normalized"``) is ``k^A_q = k^B_q / (w1 + w2)^q``.
    exponentiated : bool, default=False
        Return ``exp(-t T_q(p1, p2))`` instead (probability vectors only,
        ``weighted=None``; docs/kernels.md, "Exponentiated kernels").
    t : float > 0, default=1.0
        Scale of the exponentiated kernel.
    blocks : sequence of int, optional
        Widths of consecutive column blocks (summing to ``n_features``), e.g. the
        ``block_sizes_`` of a per-class embedding.  The kernel is then computed on each
        block separately (each block normalised on its own) and summed,
        ``K = sum_i w_i k(A_i, B_i)`` (docs/topics.md, "Block structure and per-block
        kernel sums"); a sum of positive semi-definite kernels stays positive
        semi-definite.  None: one kernel on the whole rows.
    block_weights : sequence of float >= 0, optional
        The weights ``w_i`` (default 1 for every block); needs ``blocks``.
    num_threads : int, optional
        OpenMP threads (None = all cores; see countgrid._utils.threads.effective_n_threads).

    Returns
    -------
    K : ndarray of shape (n_samples_A, n_samples_B)
        Rows or columns of zero-mass inputs (of a zero-mass block, with ``blocks``)
        are 0.

    Raises
    ------
    TypeError
        For non-numeric input or a parameter of the wrong type.
    ValueError
        For negative, NaN or infinite entries, a corrupt sparse matrix, mismatched
        feature counts, a parameter out of range, or kernel values beyond the range of
        the output dtype (``weighted="B"`` on huge measures, ``exponentiated`` with a
        huge ``t`` at ``q < 1``).
    MemoryError
        When the Gram matrix does not fit in the available memory (before allocating).

    Examples
    --------
    >>> import numpy as np
    >>> from countgrid.kernels import jensen_tsallis_kernel
    >>> P = np.array([[0.5, 0.5, 0.0], [0.25, 0.25, 0.5]])
    >>> round(float(jensen_tsallis_kernel(P, q=1.5)[0, 1]), 10)
    0.2417819582
    """
    validate_params(_CONSTRAINTS, {"q": q, "weighted": weighted,
                                   "exponentiated": exponentiated, "t": t},
                    "jensen_tsallis_kernel")
    weighted = _WEIGHTED[weighted]
    if exponentiated and weighted is not None:
        raise ValueError("exponentiated kernels are defined for probability vectors only: "
                         "use weighted=None")
    q, t = float(q), float(t)
    nt = effective_n_threads(num_threads)
    A = check_matrix(asarray_or_sparse(A, "A"), "A", nonnegative=True)
    if B is not None:
        B = check_matrix(asarray_or_sparse(B, "B"), "B", nonnegative=True)
        if B.shape[1] != A.shape[1]:
            raise ValueError(f"A has {A.shape[1]} features but B has {B.shape[1]}")
        if B.dtype != A.dtype:
            dtype = np.promote_types(A.dtype, B.dtype)
            A, B = A.astype(dtype), B.astype(dtype)
    bounds, weights = _check_blocks(blocks, block_weights, A.shape[1])
    n_a, n_b = A.shape[0], (A if B is None else B).shape[0]
    itemsize = A.dtype.itemsize
    # the Gram matrix, float64 working copies and (blocks) the running sum
    per_entry = itemsize + 16 + (8 if bounds is not None else 0)
    inputs = sum(M.shape[0] * M.shape[1] * 8 for M in (A, B)
                 if M is not None and not sp.issparse(M))
    check_memory(n_a * n_b * per_entry + inputs,
                 f"a {n_a} x {n_b} kernel Gram matrix ({A.dtype})",
                 "compute it for fewer rows at a time (slices of A), or pass float32 "
                 "input to halve it")
    A, B = _same_format(A, B)
    if bounds is None:
        return _jt_gram(A, B, q, weighted, exponentiated, t, nt)
    K = None
    for (start, stop), w in zip(bounds, weights):
        Kb = _jt_gram(_columns(A, start, stop), None if B is None else _columns(B, start, stop),
                      q, weighted, exponentiated, t, nt)
        Kb = Kb.astype(np.float64) * w
        K = Kb if K is None else K + Kb
    return _finish(K, A.dtype, "the weighted block sum")


def _check_blocks(blocks, block_weights, n_features):
    """Validate ``blocks`` / ``block_weights``: ``[(start, stop), ...]`` and the weights.

    Returns ``(None, None)`` when ``blocks`` is None.
    """
    if blocks is None:
        if block_weights is not None:
            raise ValueError("block_weights needs blocks")
        return None, None
    if isinstance(blocks, (str, bytes)) or not hasattr(blocks, "__iter__"):
        raise TypeError(f"blocks must be a sequence of ints (block widths), got {blocks!r}")
    try:
        sizes = [operator.index(b) for b in blocks]
    except TypeError:
        raise TypeError(f"blocks must be a sequence of ints (block widths), got {blocks!r}") \
            from None
    if not sizes or min(sizes) < 1 or sum(sizes) != n_features:
        raise ValueError(f"blocks must be positive widths summing to n_features = "
                         f"{n_features}, got {sizes} (sum {sum(sizes)})")
    if block_weights is None:
        weights = np.ones(len(sizes))
    else:
        try:
            weights = np.asarray(block_weights, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"block_weights must be a sequence of floats, got "
                            f"{block_weights!r}") from None
        if weights.shape != (len(sizes),):
            raise ValueError(f"block_weights must have one weight per block ({len(sizes)}), "
                             f"got shape {weights.shape}")
        if not np.all(np.isfinite(weights)) or weights.min() < 0:
            raise ValueError(f"block_weights must be finite and >= 0, got {weights}")
    stops = np.cumsum(sizes)
    return list(zip((stops - sizes).tolist(), stops.tolist())), weights


def _columns(M, start, stop):
    """Columns [start, stop) of a validated matrix (canonical CSR or C-contiguous)."""
    if sp.issparse(M):
        return M[:, start:stop].tocsr()
    return np.ascontiguousarray(M[:, start:stop])


def _finish(K, dtype, what):
    """``K`` (float64) in ``dtype``, or a ValueError if it leaves that dtype's range."""
    # two read-only passes instead of an |K| temporary the size of the Gram matrix
    top = max(float(K.max(initial=0.0)), -float(K.min(initial=0.0)))
    with np.errstate(over="ignore"):    # a top beyond dtype's range rounds to inf: named below
        top = np.asarray(top, dtype=dtype)
    if not np.isfinite(top):
        advice = _RANGE_ADVICE + (" or use float64" if np.dtype(dtype) == np.float32 else "")
        raise ValueError(f"{what} exceeds the range of {np.dtype(dtype)}: {advice}")
    return K.astype(dtype, copy=False)


def _jt_gram(A, B, q, weighted, exponentiated, t, nt):
    """The kernel on validated, dtype- and format-matched A and B (B None: symmetric)."""
    dtype = A.dtype
    ok_a = _row_max(A) > 0
    ok_b = ok_a if B is None else _row_max(B) > 0
    if q == 0.0:
        # the Boolean kernel counts the common support; every weighting gives the count
        # (docs/kernels.md, "Special cases")
        K = _support_counts(A, B)
    elif weighted is None:
        A = _probabilities(A)
        B = None if B is None else _probabilities(B)
        # k_JT,q = 2^-q k^B_q on probability vectors (docs/kernels.md), in the output dtype
        # (as 0.1.0: no float64 round trip of the Gram matrix unless exponentiated)
        K = _kernel_b(A, B, q, nt)
        K *= K.dtype.type(2.0 ** -q)
        if exponentiated:
            K = K.astype(np.float64)
    else:
        K = _weighted_kernel(A, B, q, weighted, nt)
    what = "the kernel"
    if exponentiated:       # exp(-t T_q), T_q = ln_q 2 - k_JT,q
        K -= float(log_q(2.0, q))
        K *= t
        with np.errstate(over="ignore"):
            np.exp(K, out=K)
        what = f"exp(-t T_q) with t={t!r} and q={q!r}"
    elif weighted == "B":
        what = "k^B_q of these measures"
    K[~ok_a, :] = 0
    K[:, ~ok_b] = 0
    return _finish(K, dtype, what)


def jensen_shannon_kernel(A, B=None, *, blocks=None, block_weights=None, num_threads=None):
    """Jensen-Shannon kernel ``k_JS(p, r) = ln 2 - JS(p, r)`` between the rows of A and B.

    Rows are L1-normalised first; ``JS(p, r) = H((p + r)/2) - (H(p) + H(r))/2`` in
    nats, so ``k_JS(p, p) = ln 2`` and ``k_JS = 0`` for disjoint supports.  This
    is :func:`jensen_tsallis_kernel` with ``q = 1`` (same errors).

    Parameters
    ----------
    A : {array-like, sparse matrix} of shape (n_samples_A, n_features)
        Non-negative rows, dense or any scipy.sparse format (float32 A and B give a
        float32 Gram matrix, anything else float64).
    B : {array-like, sparse matrix} of shape (n_samples_B, n_features), optional
        Second set of rows; ``None`` computes the symmetric ``K(A, A)``.
    blocks : sequence of int, optional
        Widths of consecutive column blocks: the kernel is computed on each block
        (normalised on its own) and the blocks summed, as in
        :func:`jensen_tsallis_kernel`.
    block_weights : sequence of float >= 0, optional
        Weights of the blocks (default 1 for every block); needs ``blocks``.
    num_threads : int, optional
        OpenMP threads (None = all cores).

    Returns
    -------
    K : ndarray of shape (n_samples_A, n_samples_B)
        Rows or columns of zero-mass inputs are 0.
    """
    return jensen_tsallis_kernel(A, B, q=1.0, blocks=blocks, block_weights=block_weights,
                                 num_threads=num_threads)


# ------------------------------------------------------------- kernel-induced distances
#: |delta| up to which the Jensen gap h(delta) is summed as its series (_GAP_TERMS terms
#: reach 2**-60 there); beyond, the closed forms cancel at most a factor of about 16.
_GAP_SERIES = 0.125
_GAP_TERMS = 10


def _gap_h(delta, q):
    """``h(delta) = [((1 + delta)^q + (1 - delta)^q)/2 - 1]/(q - 1)`` for ``0 <= delta <= 1``
    (at ``q = 1`` its limit ``[(1 + delta) ln(1 + delta) + (1 - delta) ln(1 - delta)]/2``),
    so that the Jensen gap of ``u -> u^q/(q - 1)`` at ``a, b >= 0`` is ``m^q h(delta)``
    with ``m = (a + b)/2`` and ``delta = |a - b|/(a + b)``; ``0^q = 0`` (``delta = 1``:
    one of ``a, b`` is 0), also at ``q = 0``.  Accurate to a few ulp for every ``delta``
    and every ``q`` in [0, 2]: no cancellation beyond a factor of about 16."""
    out = np.empty_like(delta)
    small = delta <= _GAP_SERIES
    if small.any():
        # sum_{k>=1} c_k delta^(2k): c_1 = q/2, c_{k+1} = c_k (q - 2k)(q - 2k - 1) /
        # ((2k + 1)(2k + 2)); every c_k >= 0 for 0 <= q <= 2, so nothing cancels
        coefs = [q / 2.0]
        for k in range(1, _GAP_TERMS):
            coefs.append(coefs[-1] * (q - 2 * k) * (q - 2 * k - 1) / ((2 * k + 1) * (2 * k + 2)))
        d2 = delta[small] ** 2
        s = np.full_like(d2, coefs[-1])
        for c in coefs[-2::-1]:
            s = s * d2 + c
        out[small] = s * d2
    one = delta == 1.0
    if one.any():
        # (2^(q-1) - 1)/(q - 1), ln 2 at q = 1
        out[one] = math.log(2.0) if q == 1.0 else math.expm1((q - 1.0) * math.log(2.0)) / (q - 1.0)
    mid = ~small & ~one
    if mid.any():
        d = delta[mid]
        lp, lm = np.log1p(d), np.log1p(-d)
        if abs(q - 1.0) <= 0.5:
            # [g(1 + d) + g(1 - d)]/2 with g(v) = (v^q - v)/(q - 1) = v expm1((q-1) ln v)/(q-1)
            # (v ln v at q = 1): its linear terms cancel exactly, and nothing divides by q - 1
            if q == 1.0:
                gp, gm = (1.0 + d) * lp, (1.0 - d) * lm
            else:
                gp = (1.0 + d) * np.expm1((q - 1.0) * lp) / (q - 1.0)
                gm = (1.0 - d) * np.expm1((q - 1.0) * lm) / (q - 1.0)
            out[mid] = (gp + gm) / 2.0
        else:
            out[mid] = (np.expm1(q * lp) + np.expm1(q * lm)) / (2.0 * (q - 1.0))
    return out


def _jensen_gap(A, B, q):
    """``sum_d [(a_d^q + b_d^q)/2 - m_d^q]/(q - 1)`` (``m = (a + b)/2``; the Shannon form at
    ``q = 1``) of every row pair ``(A[i], B[i])`` of two dense float64 arrays of entries in
    [0, 1]: a sum of non-negative terms, each accurate to a few ulp."""
    s = A + B
    mask = s > 0
    a, b, ss = A[mask], B[mask], s[mask]
    terms = np.zeros(A.shape)
    terms[mask] = np.power(ss / 2.0, q) * _gap_h(np.abs(a - b) / ss, q)
    return terms.sum(axis=1)


def _power_sums(P, q):
    """``sum_d p_d^q`` of every row with ``0^q = 0``."""
    return np.power(P, q, out=np.zeros_like(P), where=P > 0).sum(axis=1)


def _pair_sq_distances(A, B, q, weighted=None, exponentiated=False, t=1.0):
    """The squared kernel-induced distances ``k(x, x) + k(y, y) - 2 k(x, y)`` of the row
    pairs ``(x, y) = (A[i], B[i])`` for the kernels of :func:`jensen_tsallis_kernel`,
    without the cancellation of that formula (which leaves near pairs, e.g. a document and
    its duplicate, with the round-off of the three kernel values: distances of 1e-8 for
    identical rows).

    ``A``, ``B``: dense float64 arrays of the same shape, finite, non-negative rows of
    positive mass.  With ``G = sum_d J_q(x_d, y_d) >= 0`` the per-coordinate Jensen gap
    of :func:`_jensen_gap` (from the closed forms of docs/kernels.md):

    * ``weighted=None``: ``d^2 = 2 G`` on the probability vectors ``p``, ``r``;
      exponentiated, ``T(p, r) = (T(p, p) + T(r, r))/2 + G`` gives
      ``d^2 = (sqrt(E_p) - sqrt(E_r))^2 - 2 sqrt(E_p E_r) expm1(-t G)``, ``E_p = k(p, p)``;
    * ``"B"``: ``d^2 = 2^(q+1) G`` on the measures (on a common power-of-two scale);
    * ``"A"``: ``k^B(x, y) = (k^B(x, x) + k^B(y, y))/2 - 2^q G`` in
      ``k^B(x, x)/(2 w_x)^q + k^B(y, y)/(2 w_y)^q - 2 k^B(x, y)/(w_x + w_y)^q``, whose terms
      still cancel when the masses differ; identical rows give exactly 0.

    Every result depends on the values of the two rows only (not on a matrix format or
    the other rows), so identical rows give exactly 0.
    """
    weighted = _WEIGHTED[weighted]
    if weighted is None:
        P, R = _probabilities(A), _probabilities(B)
        G = _jensen_gap(P, R, q)
        if not exponentiated:
            return 2.0 * G
        lq = float(log_q(2.0, q))
        # T(p, p) = ln_q(2) (1 - sum p^q); T(r, r) - T(p, p) summed per coordinate
        pq = np.power(P, q, out=np.zeros_like(P), where=P > 0)
        rq = np.power(R, q, out=np.zeros_like(R), where=R > 0)
        t_pp = lq * (1.0 - pq.sum(axis=1))
        diff = lq * (pq - rq).sum(axis=1)
        root_p = np.exp(-t * t_pp / 2.0)
        root_r = root_p * np.exp(-t * diff / 2.0)
        return (root_p * np.expm1(-t * diff / 2.0)) ** 2 \
            - 2.0 * root_p * root_r * np.expm1(-t * G)
    # a common power of two per pair brings the larger row maximum into [0.5, 1)
    top = np.maximum(A.max(axis=1), B.max(axis=1))
    e = -np.frexp(top)[1]
    X, Y = np.ldexp(A, e[:, None]), np.ldexp(B, e[:, None])
    G = _jensen_gap(X, Y, q)
    if weighted == "B":
        # 2^(q+1) G(x, y) = 2^(q+1-qe) G(X, Y), scaled in two steps (2^(q+1-qe) alone may
        # overflow where the distance does not)
        a = q + 1.0 - q * e
        whole = np.floor(a)
        return np.ldexp(G * np.exp2(a - whole), whole.astype(np.int64))
    cq = 2.0 * math.log(2.0) if q == 1.0 else \
        2.0 * math.expm1((q - 1.0) * math.log(2.0)) / (q - 1.0)    # (2^q - 2)/(q - 1)
    kxx, kyy = cq * _power_sums(X, q), cq * _power_sums(Y, q)
    wx, wy = X.sum(axis=1), Y.sum(axis=1)
    kxy = (kxx + kyy) / 2.0 - 2.0 ** q * G
    return kxx / (2.0 * wx) ** q + kyy / (2.0 * wy) ** q - 2.0 * kxy / (wx + wy) ** q
