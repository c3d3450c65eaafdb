"""Label embedding on a counting grid (paper section 2.3, eqs. 9-10)."""
import numpy as np

from countgrid._utils.numeric import power_of_two_scale
from countgrid._utils.threads import effective_n_threads
from countgrid.grid._torus import check_grid, grid_size, window_sums


def embedding_from_stats(M, mass, extent, window, fill, nt=0):
    """Label embedding from posterior statistics (paper eqs. 9-10).

    ``gamma(i) = sum_{k: i in W_k} M(k) / sum_{k: i in W_k} mass(k)``: the label mass of
    the windows that cover cell ``i`` over their posterior mass.  The building block of
    :func:`embed_labels`, which validates its inputs; this function does not.

    Parameters
    ----------
    M : ndarray of shape (n_outputs, L)
        Label-weighted posterior mass per window position (e.g. ``onehot(y) @ Q`` for
        posteriors ``Q`` of shape (n_samples, L)).
    mass : ndarray of shape (L,)
        Total posterior mass per window position.
    extent, window : tuple of int
        The grid's extent and window (``L = prod(extent)``).
    fill : array-like of shape (n_outputs,)
        The value of the cells that no window with posterior mass covers.
    nt : int, default=0
        OpenMP threads (``<= 0``: the OpenMP default).

    Returns
    -------
    ndarray of shape (L, n_outputs), float64
        ``gamma``, one row per cell in row-major order.
    """
    num = window_sums(M, extent, window, backward=True, num_threads=nt)
    den = window_sums(mass[None, :], extent, window, backward=True, num_threads=nt)[0]
    gamma = np.empty_like(num)
    ok = den > 0
    gamma[:, ok] = num[:, ok] / den[ok]
    gamma[:, ~ok] = np.asarray(fill, dtype=np.float64)[:, None]
    return np.ascontiguousarray(gamma.T)


def readout_matrix(gamma_flat, extent, window, nt=0):
    """Mean of a label embedding over every window: ``G(k, :) = mean_{i in W_k} gamma(i, :)``.

    Parameters
    ----------
    gamma_flat : ndarray of shape (L, n_outputs)
        The label embedding, one row per cell in row-major order (as returned by
        :func:`embedding_from_stats`).
    extent, window : tuple of int
        The grid's extent and window (``L = prod(extent)``).
    nt : int, default=0
        OpenMP threads (``<= 0``: the OpenMP default).

    Returns
    -------
    ndarray of shape (L, n_outputs), float64
        Row ``k`` is the mean of ``gamma`` over the window whose corner is position
        ``k``.

    Raises
    ------
    TypeError
        If ``gamma_flat`` is not a real array.
    ValueError
        If ``extent`` and ``window`` are not a valid grid (``1 <= window <= extent``,
        same number of dimensions), or ``gamma_flat`` is not finite or not of shape
        ``(L, n_outputs)``.
    """
    extent, window = check_grid(extent, window)
    gamma_flat = np.asarray(gamma_flat)
    L = grid_size(extent)
    if gamma_flat.dtype.kind not in "biuf":
        raise TypeError(f"gamma_flat must be a real array, got dtype {gamma_flat.dtype}")
    if gamma_flat.ndim != 2 or gamma_flat.shape[0] != L:
        raise ValueError(f"gamma_flat must have shape (L, n_outputs) = ({L}, n_outputs), one "
                         f"row per cell (an embed_labels result reshaped to (L, -1)), got "
                         f"{gamma_flat.shape}")
    if not np.isfinite(gamma_flat).all():
        raise ValueError("gamma_flat contains NaN or infinity")
    G = window_sums(gamma_flat.T, extent, window, scale=1.0 / grid_size(window), num_threads=nt)
    return np.ascontiguousarray(G.T)


def _check_posteriors(posteriors, L):
    Q = np.asarray(posteriors)
    if Q.dtype.kind != "f":
        raise TypeError(f"posteriors must be a float array, got dtype {Q.dtype}")
    if Q.ndim != 2 or Q.shape[1] != L:
        raise ValueError(f"posteriors must have shape (n_samples, {L}), got {Q.shape}")
    if not np.isfinite(Q).all() or (Q < 0).any():
        raise ValueError("posteriors must be finite and non-negative")
    return Q


def embed_labels(posteriors, y, extent, window, kind="discrete", classes=None, num_threads=None):
    """Embed labels on the grid with the posteriors of their documents.

    Discrete labels (paper eq. 9)::

        gamma(i, l) = sum_t sum_{k: i in W_k} q_t(k) [y_t = l]
                      / sum_t sum_{k: i in W_k} q_t(k)

    continuous targets (eq. 10) replace ``[y_t = l]`` by ``y_t``.

    Parameters
    ----------
    posteriors : ndarray of shape (n_samples, L)
        Location posteriors, e.g. ``CountingGrid.transform(X)``.
    y : array-like of shape (n_samples,) or (n_samples, n_targets)
        Class labels (``kind="discrete"``) or real targets (``"continuous"``).
    extent, window : tuple of int
        The grid's extent and window.
    kind : {"discrete", "continuous"}
    classes : array-like, optional
        Class order for the last axis (default: ``numpy.unique(y)``).
    num_threads : int, optional

    Returns
    -------
    gamma : ndarray
        ``extent + (n_classes,)`` for discrete labels (sums to 1 over
        classes); ``extent`` (or ``extent + (n_targets,)``) for continuous
        targets.  Cells that no posterior mass reaches get the uniform class
        distribution or the mean target.
    """
    if kind not in ("discrete", "continuous"):
        raise ValueError(f"kind must be 'discrete' or 'continuous', got {kind!r}")
    extent, window = check_grid(extent, window)
    L = grid_size(extent)
    Q = _check_posteriors(posteriors, L).astype(np.float64, copy=False)
    nt = effective_n_threads(num_threads)
    if y is None:
        raise ValueError("y is required: the labels or targets of the posteriors' documents")
    y = np.asarray(y)
    if y.ndim == 0 or y.ndim > 2:
        raise ValueError(f"y must be 1-D (or 2-D continuous targets), got shape {y.shape}")
    if y.shape[0] != Q.shape[0]:
        raise ValueError(f"y has {y.shape[0]} entries but posteriors has {Q.shape[0]} rows")
    mass = Q.sum(axis=0)
    if kind == "discrete":
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D for kind='discrete' (one label per document), got "
                             f"shape {y.shape}")
        if classes is None:
            try:
                classes = np.unique(y)
            except TypeError:
                raise TypeError("y holds labels of several types; use one type") from None
        else:
            classes = np.asarray(classes)
        position = {c: i for i, c in enumerate(classes.tolist())}
        if len(position) != len(classes):
            raise ValueError("classes contains duplicates")
        try:
            idx = np.array([position[v] for v in y.tolist()], dtype=np.int64)
        except KeyError as exc:
            raise ValueError(f"y contains the label {exc.args[0]!r}, which is not in classes") from None
        onehot = np.zeros((len(classes), Q.shape[0]))
        onehot[idx, np.arange(Q.shape[0])] = 1.0
        M = onehot @ Q
        fill = np.full(len(classes), 1.0 / len(classes))
        gamma = embedding_from_stats(M, mass, extent, window, fill, nt)
        return gamma.reshape(tuple(extent) + (len(classes),))
    if kind == "continuous":
        if y.dtype.kind not in "biuf":
            raise ValueError(f"y must hold real numbers for kind='continuous', got dtype "
                             f"{y.dtype}")
        Y = y.astype(np.float64).reshape(y.shape[0], -1)
        if not np.isfinite(Y).all():
            raise ValueError("y contains NaN or infinity")
        scale = power_of_two_scale(Y)
        Ys = Y * scale
        gamma = embedding_from_stats(Ys.T @ Q, mass, extent, window, Ys.mean(axis=0), nt)
        shape = tuple(extent) if y.ndim == 1 else tuple(extent) + (Y.shape[1],)
        return gamma.reshape(shape) / scale
