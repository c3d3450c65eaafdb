"""Adapters to other ecosystems, above the model families: :mod:`countgrid.external.anndata`
fits the models on an ``AnnData`` and writes the results where scverse tools look for
them (docs/text.md, "Cells and genes")."""
