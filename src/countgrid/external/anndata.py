"""scanpy-style functions on an ``AnnData`` (docs/text.md, "Cells and genes"):
:func:`counting_grid`, :func:`plsa` and :func:`zip_gtm` fit the estimator on the cells'
raw counts and write what it gives where scverse tools look:

- ``obsm["X_<key>"]``: each cell's position (a counting grid: the centre of its most
  probable window, ``CountingGrid.positions(anchor="center")``; ZIP-GTM: the
  posterior-mean map coordinates, ``transform``; pLSA: the topic proportions,
  ``transform``), and for a counting grid ``obsm["X_<key>_posterior"]``, the
  ``top_k`` largest posterior entries of each cell as a sparse matrix;
- ``varm["<key>"]``: per feature, the model's distributions (a grid's ``pi_`` as
  features x cells of the grid, pLSA's ``components_.T``, ZIP-GTM's rates ``.T``);
- ``uns["<key>"]``: the estimator's parameters, its log-likelihood and, for a grid, its
  extent and window.

Nothing of anndata is imported here: the functions take any object with ``X``,
``layers``, ``obsm``, ``varm``, ``uns`` and ``n_obs``/``n_vars`` (an in-memory AnnData).
The counts are ``layers["counts"]`` when present (scanpy keeps the raw counts there once
``X`` is normalised), else ``X``, or the ``layer`` named.
"""
import numpy as np
import scipy.sparse as sp

from countgrid._utils.docs import fill_doc
from countgrid._utils.threads import effective_n_threads
from countgrid.grid import CountingGrid
from countgrid.grid._posteriors import largest_posteriors
from countgrid.gtm import ZIPGTM
from countgrid.topics import PLSA

__all__ = ["counting_grid", "plsa", "zip_gtm", "counts_of", "top_k_posteriors"]

#: The parameters every function of this module documents alike (countgrid._utils.docs).
_DOCS = dict(
    adata="adata : AnnData\n    In memory; cells x features.",
    layer="layer : str, optional\n    The raw counts (default: ``layers[\"counts\"]`` when "
          "present, else ``X``).",
    copy="copy : bool, default=False\n    Write into a copy of ``adata`` and return it with the "
         "model.")

#: Cells whose posteriors are computed at once (a dense block of cells x grid positions).
POSTERIOR_BLOCK = 4096


def counts_of(adata, layer=None):
    """The raw counts of ``adata``: ``layers[layer]``, else ``layers["counts"]`` when
    present, else ``X``.

    Parameters
    ----------
    adata : AnnData
    layer : str, optional

    Returns
    -------
    scipy.sparse.csr_matrix or ndarray
        The counts (a dense ``X`` stays dense).

    Raises
    ------
    TypeError
        When ``adata`` is not AnnData-like.
    ValueError
        When ``layer`` is not one of its layers.
    """
    for attr in ("X", "layers", "obsm", "varm", "uns"):
        if not hasattr(adata, attr):
            raise TypeError(f"adata must be an AnnData (with X, layers, obsm, varm, uns), got "
                            f"{type(adata).__name__}")
    layers = list(adata.layers.keys())
    if layer is not None:
        if not isinstance(layer, str):
            raise TypeError(f"layer must be a str, got {type(layer).__name__}")
        if layer not in layers:
            raise ValueError(f"layer={layer!r} is not a layer of adata; it has "
                             f"{layers or 'none'} (None reads 'counts' or X)")
        X = adata.layers[layer]
    else:
        X = adata.layers["counts"] if "counts" in layers else adata.X
    if X is None:
        raise ValueError("adata.X is None: pass layer= naming the raw counts")
    return sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X)


def _check_key(key):
    if not isinstance(key, str) or not key:
        raise TypeError(f"key_added must be a non-empty str, got {key!r}")
    return key


def _fit_and_write(adata, layer, key_added, copy, estimator, outputs):
    """Fit ``estimator`` on the raw counts of ``adata`` and write ``outputs(model, X,
    key)``, ``{(slot, name): value}``, into ``adata`` (or a copy); the functions' return."""
    key = _check_key(key_added)
    X = counts_of(adata, layer)
    target = adata.copy() if copy else adata
    model = estimator.fit(X)
    for (slot, name), value in outputs(model, X, key).items():
        getattr(target, slot)[name] = value
    return (target, model) if copy else model


def _uns(estimator, extra=None):
    # what .h5ad can store: no None, sequences as lists
    params = {k: list(v) if isinstance(v, tuple) else v
              for k, v in estimator.get_params().items()
              if isinstance(v, (bool, int, float, str, tuple))}
    out = {"params": params}
    if hasattr(estimator, "log_likelihood_"):
        out["log_likelihood"] = float(np.ravel(estimator.log_likelihood_)[-1])
    out.update(extra or {})
    return out


def top_k_posteriors(grid, X, top_k):
    """The ``top_k`` largest posterior entries of each row of ``X`` (ties: the lower
    position), computed ``POSTERIOR_BLOCK`` (4,096) rows at a time.

    Parameters
    ----------
    grid : CountingGrid
        Fitted.
    X : {array-like, sparse matrix} of shape (n, n_features)
    top_k : int
        At most the grid's number of cells L.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n, L)
        Row ``t`` holds ``q_t(k)`` at its ``top_k`` largest positions ``k`` (C order).
    """
    n = X.shape[0]
    L = int(np.prod(grid.pi_.shape[:-1]))
    k = min(int(top_k), L)
    rows, cols, vals = [], [], []
    for t0 in range(0, n, POSTERIOR_BLOCK):
        Q = np.asarray(grid.transform(X[t0:t0 + POSTERIOR_BLOCK]))
        part, v = largest_posteriors(Q, k, effective_n_threads(grid.num_threads))
        rows.append(np.repeat(np.arange(t0, t0 + Q.shape[0]), k))
        cols.append(part.ravel())
        vals.append(v.ravel())
    if not rows:
        return sp.csr_matrix((0, L))
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(n, L))


@fill_doc(**_DOCS)
def counting_grid(adata, *, layer=None, key_added="countgrid", top_k=32, copy=False,
                  **params):
    """Fit a :class:`~countgrid.CountingGrid` on the cells of ``adata``.

    Parameters
    ----------
    {adata}
    {layer}
    key_added : str, default="countgrid"
        ``obsm["X_<key>"]`` (positions, the centre of each cell's most probable window,
        (n_obs, 2) int64), ``obsm["X_<key>_posterior"]`` (the ``top_k`` largest
        posterior entries, CSR (n_obs, L) with L the grid's cells in C order),
        ``varm["<key>"]`` (``pi_`` as (n_vars, L)), ``uns["<key>"]`` (parameters,
        extent, window, log-likelihood).
    top_k : int, default=32
    {copy}
    **params
        Parameters of :class:`~countgrid.CountingGrid` (``extent``, ``window``,
        ``random_state``, ...).

    Returns
    -------
    CountingGrid or (AnnData, CountingGrid)
        The fitted grid; with ``copy=True``, the copy and the grid.
    """
    if isinstance(top_k, (bool, np.bool_)) or not isinstance(top_k, (int, np.integer)) or \
            top_k < 1:
        raise ValueError(f"top_k must be an int >= 1, got {top_k!r}")

    def outputs(grid, X, key):
        pi = np.asarray(grid.pi_)
        return {("obsm", f"X_{key}"): grid.positions(X, anchor="center"),
                ("obsm", f"X_{key}_posterior"): top_k_posteriors(grid, X, top_k),
                ("varm", key): pi.reshape(-1, pi.shape[-1]).T.copy(),
                ("uns", key): _uns(grid, {"extent": list(pi.shape[:-1]),
                                          "window": list(grid.window), "top_k": int(top_k)})}

    return _fit_and_write(adata, layer, key_added, copy, CountingGrid(**params), outputs)


@fill_doc(**_DOCS)
def plsa(adata, n_components=10, *, layer=None, key_added="plsa", copy=False, **params):
    """Fit :class:`~countgrid.PLSA` on the cells of ``adata``: ``obsm["X_<key>"]`` the
    topic proportions of each cell (``transform``), ``varm["<key>"]`` the topics'
    feature distributions (``components_.T``), ``uns["<key>"]`` the parameters.

    Parameters
    ----------
    {adata}
    n_components : int, default=10
        Topics.
    {layer}
    key_added : str, default="plsa"
    {copy}
    **params
        Parameters of :class:`~countgrid.PLSA`.

    Returns
    -------
    PLSA or (AnnData, PLSA)
        The fitted model; with ``copy=True``, the copy and the model.
    """
    return _fit_and_write(adata, layer, key_added, copy, PLSA(n_components, **params),
                          lambda model, X, key: {
                              ("obsm", f"X_{key}"): np.asarray(model.transform(X)),
                              ("varm", key): np.asarray(model.components_).T.copy(),
                              ("uns", key): _uns(model)})


@fill_doc(**_DOCS)
def zip_gtm(adata, *, layer=None, key_added="zip_gtm", copy=False, **params):
    """Fit :class:`~countgrid.ZIPGTM` on the cells of ``adata``: ``obsm["X_<key>"]`` the
    posterior-mean map coordinates of each cell (``transform``), ``varm["<key>"]`` the
    rates of every feature at the latent points (``rates().T``, (n_vars, K)),
    ``uns["<key>"]`` the parameters and the latent points; with
    ``distribution="negative_binomial"``, ``var["<key>_dispersion"]`` each feature's
    dispersion (``dispersion_``).

    Parameters
    ----------
    {adata}
    {layer}
    key_added : str, default="zip_gtm"
    {copy}
    **params
        Parameters of :class:`~countgrid.ZIPGTM`.

    Returns
    -------
    ZIPGTM or (AnnData, ZIPGTM)
        The fitted model; with ``copy=True``, the copy and the model.
    """
    def outputs(model, X, key):
        out = {("obsm", f"X_{key}"): np.asarray(model.transform(X)),
               ("varm", key): np.asarray(model.rates()).T.copy(),
               ("uns", key): _uns(model, {"latent": np.asarray(model.latent_).tolist()})}
        if hasattr(model, "dispersion_"):
            out[("var", f"{key}_dispersion")] = np.asarray(model.dispersion_)
        return out

    return _fit_and_write(adata, layer, key_added, copy, ZIPGTM(**params), outputs)
