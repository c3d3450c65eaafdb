"""Counts beyond text (issue 28; docs/text.md, "Cells and genes"): 10x Genomics folders,
the transposed MatrixMarket file and AnnData's .h5ad, read into corpora of cells, against
the matrices the tests wrote."""
import gzip
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import countgrid
from countgrid.text import read_10x, read_corpus, read_h5ad
from countgrid.text._cells import unique_names


def cells_and_genes(n_cells=30, n_genes=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.7, size=(n_cells, n_genes)).astype(np.float64)
    X[:, 3] = 0                                   # a gene seen nowhere
    genes = [f"G{j}" for j in range(n_genes)]
    genes[7] = "G2"                               # a repeated gene symbol, as in 10x files
    barcodes = [f"AAAC{k:04d}-1" for k in range(n_cells)]
    return X, genes, barcodes


def write_10x(folder, X, genes, barcodes, gz=True, v2=False):
    os.makedirs(folder, exist_ok=True)
    op = (lambda p, m: gzip.open(p + ".gz", m)) if gz else open
    with op(os.path.join(folder, "matrix.mtx"), "wb") as fh:
        scipy.io.mmwrite(fh, sp.coo_matrix(X.T))          # features x cells
    name = "genes.tsv" if v2 else "features.tsv"
    with op(os.path.join(folder, name), "wb") as fh:
        for j, g in enumerate(genes):
            row = [f"ENSG{j:05d}", g] + ([] if v2 else ["Gene Expression"])
            fh.write(("\t".join(row) + "\n").encode())
    with op(os.path.join(folder, "barcodes.tsv"), "wb") as fh:
        fh.write("".join(b + "\n" for b in barcodes).encode())
    return folder


@pytest.mark.parametrize("gz, v2", [(True, False), (False, False), (True, True)])
def test_a_10x_folder_is_a_corpus_of_cells(tmp_path, gz, v2):
    X, genes, barcodes = cells_and_genes()
    folder = write_10x(str(tmp_path / "filtered_feature_bc_matrix"), X, genes, barcodes,
                       gz=gz, v2=v2)
    for corpus in (read_corpus(folder), read_10x(folder), read_corpus(folder, format="10x")):
        np.testing.assert_array_equal(corpus.counts.toarray(), X)
        assert list(corpus.ids) == barcodes
        assert list(corpus.vocabulary) == unique_names(genes)
        assert corpus.vocabulary[7] == "G2-1"
        np.testing.assert_array_equal(corpus.metadata["n_counts"], X.sum(axis=1))
        # as every counts reader: a cell's snippet is its most frequent features
        assert corpus.snippets[0].split()[0] == corpus.vocabulary[np.argmax(X[0])]


def test_a_10x_folder_that_does_not_match_is_refused(tmp_path):
    X, genes, barcodes = cells_and_genes()
    folder = write_10x(str(tmp_path / "m"), X, genes, barcodes[:-1])
    with pytest.raises(ValueError, match="30 cells|29 cells"):
        read_10x(folder)
    with pytest.raises(FileNotFoundError, match="not a 10x folder"):
        read_10x(str(tmp_path))
    os.makedirs(tmp_path / "text")
    (tmp_path / "text" / "a.txt").write_text("hello world")
    with pytest.raises(ValueError, match="format='10x'"):
        read_corpus(str(tmp_path / "text" / "a.txt"), format="10x")


def test_negative_or_normalised_values(tmp_path):
    X, genes, barcodes = cells_and_genes()
    folder = write_10x(str(tmp_path / "neg"), -X, genes, barcodes)
    with pytest.raises(ValueError, match="negative"):
        read_10x(folder)
    folder = write_10x(str(tmp_path / "log"), np.log1p(X), genes, barcodes)
    with pytest.warns(UserWarning, match="not integers"):
        read_10x(folder)


def test_a_features_by_cells_mtx_with_a_vocabulary(tmp_path):
    X, genes, _ = cells_and_genes()
    genes = unique_names(genes)
    path = tmp_path / "m.mtx"
    scipy.io.mmwrite(str(path), sp.coo_matrix(X.T))          # terms x documents
    (tmp_path / "genes.txt").write_text("\n".join(genes) + "\n")
    corpus = read_corpus(str(path), vocab=str(tmp_path / "genes.txt"), transpose=True)
    np.testing.assert_array_equal(corpus.counts.toarray(), X)
    assert list(corpus.vocabulary) == genes
    # not told: documents x terms, and the vocabulary does not fit
    with pytest.raises(ValueError, match="holds 12 terms, but .* has 30"):
        read_corpus(str(path), vocab=str(tmp_path / "genes.txt"))
    with pytest.raises(ValueError, match="transpose=True applies to MatrixMarket"):
        read_corpus(str(tmp_path / "genes.txt"), transpose=True)
    with pytest.raises(TypeError, match="transpose must be a bool"):
        read_corpus(str(path), transpose="yes")


def test_unique_names_as_scanpy():
    assert unique_names(["a", "b", "a", "a", "a-1"]) == ["a", "b", "a-2", "a-3", "a-1"]
    assert unique_names([]) == []


@pytest.fixture
def h5ad(tmp_path):
    anndata = pytest.importorskip("anndata")
    pd = pytest.importorskip("pandas")
    X, genes, barcodes = cells_and_genes()
    obs = pd.DataFrame({"cell_type": pd.Categorical(["T", "B", "NK"] * 10),
                        "n_genes": (X > 0).sum(axis=1).astype(np.int64),
                        "score": np.r_[np.nan, np.linspace(0, 1, 29)]},
                        index=barcodes)
    var = pd.DataFrame(index=unique_names(genes))
    return anndata, X, obs, var, tmp_path


@pytest.mark.parametrize("backed", [True, False])
@pytest.mark.parametrize("where", ["X-sparse", "X-dense", "layer-counts"])
def test_an_h5ad_written_by_anndata(h5ad, where, backed, monkeypatch):
    anndata, X, obs, var, tmp_path = h5ad
    monkeypatch.setattr(countgrid.text._cells, "H5AD_BLOCK_CELLS", 7)   # several blocks
    if where == "layer-counts":        # X normalised, the raw counts in a layer (scanpy's way)
        adata = anndata.AnnData(X=np.log1p(X), obs=obs, var=var,
                                layers={"counts": sp.csr_matrix(X)})
    else:
        adata = anndata.AnnData(X=sp.csr_matrix(X) if where == "X-sparse" else X, obs=obs,
                                var=var)
    path = str(tmp_path / "cells.h5ad")
    adata.write_h5ad(path)
    corpus = read_h5ad(path, backed=backed)
    np.testing.assert_array_equal(corpus.counts.toarray(), X)
    assert list(corpus.vocabulary) == list(var.index)
    assert list(corpus.ids) == list(obs.index)
    assert list(corpus.metadata["cell_type"]) == ["T", "B", "NK"] * 10
    np.testing.assert_array_equal(corpus.metadata["n_genes"], obs["n_genes"].to_numpy(float))
    assert np.isnan(corpus.metadata["score"][0])
    if backed:           # the default of read_corpus
        np.testing.assert_array_equal(read_corpus(path).counts.toarray(), X)


def test_h5ad_raw_and_its_hints(h5ad):
    anndata, X, obs, var, tmp_path = h5ad
    scaled = (X - X.mean(axis=0)) / (X.std(axis=0) + 1)        # scanpy's scale: negatives
    adata = anndata.AnnData(X=scaled, obs=obs, var=var)
    adata.raw = anndata.AnnData(X=sp.csr_matrix(X), obs=obs, var=var)
    path = str(tmp_path / "scaled.h5ad")
    adata.write_h5ad(path)
    with pytest.raises(ValueError, match=r"\(X\) holds negative values \(scaled data\?\).*"
                                         r"layers: none, and a .raw \(layer='raw'\)"):
        read_corpus(path)
    corpus = read_corpus(path, layer="raw")
    np.testing.assert_array_equal(corpus.counts.toarray(), X)
    with pytest.raises(ValueError, match="layer= applies to .h5ad input"):
        read_corpus(write_mtx(tmp_path, X), layer="raw")


def write_mtx(folder, X):
    path = str(folder / "x.mtx")
    scipy.io.mmwrite(path, sp.coo_matrix(X))
    return path


def test_h5ad_refusals(h5ad):
    anndata, X, obs, var, tmp_path = h5ad
    path = str(tmp_path / "cells.h5ad")
    anndata.AnnData(X=sp.csr_matrix(X), obs=obs, var=var).write_h5ad(path)
    with pytest.raises(ValueError, match="layer='raw' is not a layer"):
        read_h5ad(path, layer="raw")
    with pytest.raises(TypeError, match="layer must be a str"):
        read_h5ad(path, layer=1)
    bad = tmp_path / "not.h5ad"
    bad.write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 100)
    with pytest.raises(ValueError, match="not a readable .h5ad file"):
        read_corpus(str(bad))


def test_a_grid_of_cells_from_the_command_line(tmp_path):
    """A 10x folder is an input of the command line (detected from the folder)."""
    X, genes, barcodes = cells_and_genes(n_cells=60, n_genes=15)
    folder = write_10x(str(tmp_path / "pbmc"), X, genes, barcodes)
    out = tmp_path / "model.npz"
    run = subprocess.run([sys.executable, "-m", "countgrid.cli", "fit", folder, "-o", str(out),
                          "--grid", "6x6", "--window", "2x2"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    model = countgrid.load(out)
    assert model.pi_.shape == (6, 6, 15)
    # the map coloured by one gene's share in each cell (the model keeps its corpus)
    page = tmp_path / "map.html"
    run = subprocess.run([sys.executable, "-m", "countgrid.cli", "html", str(out), "-o",
                          str(page), "--feature", "G5", "--feature", "G2-1"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    data = countgrid.maps.map_data(model, corpus=countgrid.text.read_10x(folder),
                                   metadata=countgrid.maps.feature_shares(
                                       X, unique_names(genes), ["G5", "G2-1"]))
    assert [c["name"] for c in data["colorings"]][-2:] == ["G5 share", "G2-1 share"]
    assert "G5 share" in page.read_text(encoding="utf-8")     # a small map: plain JSON
    run = subprocess.run([sys.executable, "-m", "countgrid.cli", "html", str(out), "-o",
                          str(page), "--feature", "nope"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 2 and "--feature: features: 'nope' is not a feature" in run.stderr


@pytest.mark.parametrize("header, match", [
    ("1000000 1000000 2000000000", "declares 2000000000 entries but holds only"),
    ("3 3 -1", "negative sizes"),
    ("3 x 3", "is not numbers"),
    ("3 3", "size line"),
])
def test_a_matrix_market_file_is_checked_before_it_is_read(tmp_path, header, match):
    path = tmp_path / "bomb.mtx"
    path.write_text(f"%%MatrixMarket matrix coordinate integer general\n{header}\n1 1 1\n")
    with pytest.raises(ValueError, match=match):
        read_corpus(str(path))
    folder = tmp_path / "tenx"
    folder.mkdir()
    (folder / "matrix.mtx").write_text(path.read_text())
    (folder / "barcodes.tsv").write_text("A\n")
    with pytest.raises(ValueError, match=match):
        read_10x(str(folder))


def test_a_gzipped_bomb_is_refused_by_its_memory(tmp_path, monkeypatch):
    path = tmp_path / "bomb.mtx.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("%%MatrixMarket matrix coordinate integer general\n"
                 "100000000 100000000 900000000000\n1 1 1\n")
    with pytest.raises(MemoryError, match="900000000000 entries"):
        read_corpus(str(path), format="mtx")
