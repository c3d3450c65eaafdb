"""countgrid.external.anndata (issue 28; docs/text.md, "Cells and genes"): each function
writes the outputs of its estimator, fitted alike on the same counts, where scverse looks."""
import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.external import anndata as cga

anndata = pytest.importorskip("anndata")
pytestmark = pytest.mark.filterwarnings("ignore::countgrid.ConvergenceWarning")


def make_adata(normalised=True, n=80, Z=20, seed=0):
    rng = np.random.default_rng(seed)
    group = np.arange(n) % 2
    X = rng.poisson(0.5, (n, Z)).astype(np.float64)
    X[group == 0, :6] += rng.poisson(3, ((group == 0).sum(), 6))
    X[group == 1, 6:12] += rng.poisson(3, ((group == 1).sum(), 6))
    if normalised:       # scanpy's way: X normalised, the raw counts in a layer
        return anndata.AnnData(X=np.log1p(X), layers={"counts": sp.csr_matrix(X)}), X
    return anndata.AnnData(X=sp.csr_matrix(X)), X


GRID = dict(extent=(6, 6), window=(2, 2), n_iter=10, random_state=0)


def test_counting_grid_writes_the_grids_outputs():
    adata, X = make_adata()
    grid = cga.counting_grid(adata, top_k=5, **GRID)
    ref = countgrid.CountingGrid(**GRID).fit(sp.csr_matrix(X))
    np.testing.assert_array_equal(grid.pi_, ref.pi_)          # fitted on the counts layer
    np.testing.assert_array_equal(adata.obsm["X_countgrid"],
                                  ref.positions(X, anchor="center"))
    P = adata.obsm["X_countgrid_posterior"]
    assert sp.issparse(P) and P.shape == (80, 36) and (P.getnnz(axis=1) == 5).all()
    Q = ref.transform(sp.csr_matrix(X))
    for t in (0, 17, 79):             # the 5 largest entries of each row, exactly
        top = np.argsort(-Q[t], kind="stable")[:5]
        np.testing.assert_array_equal(np.sort(P[t].indices), np.sort(top))
        np.testing.assert_allclose(P[t, top].toarray().ravel(), Q[t, top])
    np.testing.assert_array_equal(adata.varm["countgrid"], ref.pi_.reshape(36, 20).T)
    assert adata.uns["countgrid"]["extent"] == [6, 6]
    assert adata.uns["countgrid"]["window"] == [2, 2]
    assert np.isfinite(adata.uns["countgrid"]["log_likelihood"])


def test_plsa_and_zip_gtm_write_their_outputs():
    adata, X = make_adata(normalised=False)
    model = cga.plsa(adata, 3, n_iter=20, random_state=0, key_added="topics")
    ref = countgrid.PLSA(3, n_iter=20, random_state=0).fit(sp.csr_matrix(X))
    np.testing.assert_allclose(adata.obsm["X_topics"], ref.transform(X))
    np.testing.assert_allclose(adata.varm["topics"], ref.components_.T)
    assert model.components_.shape == (3, 20)
    gtm = cga.zip_gtm(adata, grid_shape=(3, 3), n_basis=4, n_iter=5, random_state=0)
    ref = countgrid.ZIPGTM(grid_shape=(3, 3), n_basis=4, n_iter=5,
                           random_state=0).fit(sp.csr_matrix(X))
    np.testing.assert_allclose(adata.obsm["X_zip_gtm"], ref.transform(X))
    np.testing.assert_allclose(adata.varm["zip_gtm"], ref.rates().T)
    assert len(adata.uns["zip_gtm"]["latent"]) == 9 and gtm.latent_.shape == (9, 2)
    assert "zip_gtm_dispersion" not in adata.var


def test_a_negative_binomial_writes_its_dispersions(tmp_path):
    adata, X = make_adata(normalised=False)
    params = dict(grid_shape=(3, 3), n_basis=4, n_iter=5, random_state=0,
                  zero_inflation=False, distribution="negative_binomial")
    cga.zip_gtm(adata, key_added="nb", **params)
    ref = countgrid.ZIPGTM(**params).fit(sp.csr_matrix(X))
    np.testing.assert_allclose(adata.var["nb_dispersion"].to_numpy(), ref.dispersion_)
    np.testing.assert_allclose(adata.obsm["X_nb"], ref.transform(X))
    assert adata.uns["nb"]["params"]["distribution"] == "negative_binomial"
    adata.write_h5ad(tmp_path / "nb.h5ad")                       # h5ad-writable
    back = anndata.read_h5ad(tmp_path / "nb.h5ad")
    np.testing.assert_array_equal(back.var["nb_dispersion"].to_numpy(),
                                  adata.var["nb_dispersion"].to_numpy())


def test_copy_leaves_adata_alone():
    adata, _ = make_adata()
    out, grid = cga.counting_grid(adata, copy=True, **GRID)
    assert "X_countgrid" in out.obsm and "X_countgrid" not in adata.obsm
    assert isinstance(grid, countgrid.CountingGrid)


def test_refusals():
    adata, _ = make_adata()
    with pytest.raises(ValueError, match="layer='raw' is not a layer"):
        cga.counting_grid(adata, layer="raw", **GRID)
    with pytest.raises(TypeError, match="adata must be an AnnData"):
        cga.plsa(np.ones((3, 3)), 2)
    with pytest.raises(ValueError, match="top_k must be an int"):
        cga.counting_grid(adata, top_k=0, **GRID)
    with pytest.raises(TypeError, match="key_added"):
        cga.plsa(adata, 2, key_added="")


def test_the_results_write_to_h5ad_and_read_back(tmp_path):
    adata, _ = make_adata()
    cga.counting_grid(adata, top_k=4, **GRID)
    cga.plsa(adata, 2, n_iter=5, random_state=0)
    cga.zip_gtm(adata, grid_shape=(2, 2), n_basis=4, n_iter=3, random_state=0)
    path = tmp_path / "out.h5ad"
    adata.write_h5ad(path)
    back = anndata.read_h5ad(path)
    for key in ("X_countgrid", "X_plsa", "X_zip_gtm"):
        np.testing.assert_array_equal(back.obsm[key], adata.obsm[key])
    assert (back.obsm["X_countgrid_posterior"] != adata.obsm["X_countgrid_posterior"]).nnz == 0
    assert list(back.uns["countgrid"]["extent"]) == [6, 6]
