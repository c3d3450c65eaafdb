"""Information-theoretic kernels on non-negative measures (Martins et al., JMLR 2009).

Gram matrices of the Jensen-Shannon kernel and of the Jensen-Tsallis q-kernels,
for probability vectors and for unnormalised measures, with their exponentiated
forms; the Boolean (``q = 0``) and linear (``q = 2``) kernels are special cases.
Definitions and conventions are those of docs/kernels.md (natural logarithms,
``0^q = 0`` for every ``q >= 0``: "Conventions").  Every kernel is positive
semi-definite for ``0 <= q <= 2`` (docs/kernels.md, "Positive semi-definiteness").

The heavy part, ``k^B_q`` between all pairs of rows, runs in C with OpenMP over
rows (vectorised log/exp for dense rows, index merging for sparse rows); the
symmetric case ``B=None`` computes one triangle.  Rows with zero mass give
kernel rows (and columns) of zeros.
"""
import numbers
import operator

import numpy as np
import scipy.sparse as sp

from countgrid._threads import effective_n_threads
from countgrid._validation import check_matrix
from countgrid.kernels import _itkernels

__all__ = ["jensen_shannon_kernel", "jensen_tsallis_kernel", "log_q"]

_WEIGHTED = {None: None, "A": "A", "normalized": "A", "B": "B", "unnormalized": "B"}


def log_q(x, q):
    """The q-logarithm ``ln_q(x) = (x^(1-q) - 1) / (1 - q)`` (``ln x`` at ``q = 1``)."""
    x = np.asarray(x, dtype=np.float64)
    if abs(q - 1.0) < 1e-8:
        return np.log(x)
    return (np.power(x, 1.0 - q) - 1.0) / (1.0 - q)


def _masses(M):
    return np.asarray(M.sum(axis=1), dtype=np.float64).ravel()


def _normalise_rows(M, mass):
    scale = np.divide(1.0, mass, out=np.zeros_like(mass), where=mass > 0).astype(M.dtype)
    if sp.issparse(M):
        out = M.copy()
        out.data *= np.repeat(scale, np.diff(out.indptr))
        return out
    return np.ascontiguousarray(M * scale[:, None])


def _kernel_b(A, B, q, nt):
    """k^B_q between the rows of A and B (B None: A with itself)."""
    symmetric = B is None
    if q == 0.0:  # Boolean kernel: size of the common support
        Ab = (A > 0).astype(A.dtype)
        Bb = Ab if symmetric else (B > 0).astype(A.dtype)
        return _dense(Ab @ Bb.T)
    if q == 2.0:  # linear kernel, 2 <x, y>
        K = _dense(A @ (A if symmetric else B).T) * 2
        return (K + K.T) / 2 if symmetric else K
    if sp.issparse(A):
        Bc = A if symmetric else B
        return _itkernels.jt_gram_csr(*_csr_arrays(A), *_csr_arrays(Bc), A.shape[1], q,
                                      symmetric, nt)
    return _itkernels.jt_gram_dense(A, A if symmetric else B, q, symmetric, nt)


def _dense(M):
    return np.asarray(M.todense()) if sp.issparse(M) else np.asarray(M)


def _csr_arrays(M):
    """indptr, indices (int64) and data of a canonical CSR matrix."""
    return M.indptr.astype(np.int64), M.indices.astype(np.int64), M.data


def jensen_tsallis_kernel(A, B=None, q=1.5, weighted=None, exponentiated=False, t=1.0, *,
                          blocks=None, block_weights=None, num_threads=None):
    """Jensen-Tsallis q-kernel Gram matrix between the rows of A and B.

    Parameters
    ----------
    A : {array-like, sparse matrix} of shape (n_samples_A, n_features)
        Non-negative rows (histograms, embeddings).  float32 input gives a
        float32 Gram matrix, anything else float64.
    B : {array-like, sparse matrix} of shape (n_samples_B, n_features), optional
        Second set of rows; ``None`` computes the symmetric ``K(A, A)`` from one
        triangle (exactly symmetric).
    q : float in [0, 2], default=1.5
        Entropic index.  ``q = 1`` is the Jensen-Shannon kernel, ``q = 0`` the
        Boolean kernel (size of the common support), ``q = 2`` the linear kernel.
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
        OpenMP threads (None = all cores).

    Returns
    -------
    K : ndarray of shape (n_samples_A, n_samples_B)
        Rows or columns of zero-mass inputs (of a zero-mass block, with ``blocks``)
        are 0.

    Examples
    --------
    >>> import numpy as np
    >>> from countgrid.kernels import jensen_tsallis_kernel
    >>> P = np.array([[0.5, 0.5, 0.0], [0.25, 0.25, 0.5]])
    >>> round(float(jensen_tsallis_kernel(P, q=1.5)[0, 1]), 10)
    0.2417819582
    """
    if isinstance(q, bool) or not isinstance(q, numbers.Real) or not 0.0 <= q <= 2.0:
        raise ValueError(f"q must be a float in [0, 2] (the kernels are positive definite "
                         f"there), got {q!r}")
    if weighted not in _WEIGHTED:
        raise ValueError(f"weighted must be None, 'A' ('normalized') or 'B' ('unnormalized'), "
                         f"got {weighted!r}")
    weighted = _WEIGHTED[weighted]
    if exponentiated and weighted is not None:
        raise ValueError("exponentiated kernels are defined for probability vectors only: "
                         "use weighted=None")
    if isinstance(t, bool) or not isinstance(t, numbers.Real) or not (t > 0 and np.isfinite(t)):
        raise ValueError(f"t must be a finite float > 0, got {t!r}")
    q = float(q)
    if abs(q - 1.0) < 1e-8:
        q = 1.0
    nt = effective_n_threads(num_threads)
    A = check_matrix(A, "A", nonnegative=True)
    if B is not None:
        B = check_matrix(B, "B", nonnegative=True)
        if B.shape[1] != A.shape[1]:
            raise ValueError(f"A has {A.shape[1]} features but B has {B.shape[1]}")
        if B.dtype != A.dtype:
            dtype = np.promote_types(A.dtype, B.dtype)
            A, B = A.astype(dtype), B.astype(dtype)
    bounds, weights = _check_blocks(blocks, block_weights, A.shape[1])
    if bounds is None:
        return _jt_gram(A, B, q, weighted, exponentiated, t, nt)
    K = None
    for (start, stop), w in zip(bounds, weights):
        Kb = _jt_gram(_columns(A, start, stop), None if B is None else _columns(B, start, stop),
                      q, weighted, exponentiated, t, nt)
        Kb *= Kb.dtype.type(w)
        K = Kb if K is None else K + Kb
    return K


def _check_blocks(blocks, block_weights, n_features):
    """Validate ``blocks`` / ``block_weights``: ``[(start, stop), ...]`` and the weights.

    Returns ``(None, None)`` when ``blocks`` is None.
    """
    if blocks is None:
        if block_weights is not None:
            raise ValueError("block_weights needs blocks")
        return None, None
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
        weights = np.asarray(block_weights, dtype=np.float64)
        if weights.shape != (len(sizes),):
            raise ValueError(f"block_weights must have one weight per block ({len(sizes)}), "
                             f"got shape {weights.shape}")
        if not np.all(np.isfinite(weights)) or weights.min() < 0:
            raise ValueError(f"block_weights must be finite and >= 0, got {weights}")
    stops = np.cumsum(sizes)
    return list(zip((stops - sizes).tolist(), stops.tolist())), weights


def _columns(M, start, stop):
    if sp.issparse(M):
        return M[:, start:stop].tocsr()
    return np.ascontiguousarray(M[:, start:stop])


def _jt_gram(A, B, q, weighted, exponentiated, t, nt):
    """The kernel on validated, dtype-matched A and B (B None: symmetric)."""
    mass_a = _masses(A)
    mass_b = mass_a if B is None else _masses(B)
    if weighted is None:
        A = _normalise_rows(A, mass_a)
        B = None if B is None else _normalise_rows(B, mass_b)
    K = np.asarray(_kernel_b(A, B, q, nt), dtype=A.dtype)
    ok_a, ok_b = mass_a > 0, mass_b > 0
    if weighted is None:
        K = K * K.dtype.type(2.0 ** -q)  # k_JT,q = 2^-q k^B_q on probability vectors
        if exponentiated:
            T = log_q(2.0, q) - K.astype(np.float64)
            K = np.exp(-t * T).astype(K.dtype)
    elif weighted == "A":
        total = mass_a[:, None] + mass_b[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            K = (K / np.power(total, q)).astype(K.dtype)
    K[~ok_a, :] = 0
    K[:, ~ok_b] = 0
    return K


def jensen_shannon_kernel(A, B=None, *, blocks=None, block_weights=None, num_threads=None):
    """Jensen-Shannon kernel ``k_JS(p, r) = ln 2 - JS(p, r)`` between the rows of A and B.

    Rows are L1-normalised first; ``JS(p, r) = H((p + r)/2) - (H(p) + H(r))/2`` in
    nats, so ``k_JS(p, p) = ln 2`` and ``k_JS = 0`` for disjoint supports.  This
    is :func:`jensen_tsallis_kernel` with ``q = 1``; see there for the parameters.

    Returns
    -------
    K : ndarray of shape (n_samples_A, n_samples_B)
    """
    return jensen_tsallis_kernel(A, B, q=1.0, blocks=blocks, block_weights=block_weights,
                                 num_threads=num_threads)
