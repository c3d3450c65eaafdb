"""The ``countgrid`` command line (docs/cli.md).

``countgrid vectorize``  raw text -> a corpus file (counts, vocabulary, titles, metadata)
``countgrid fit``        documents -> a model file (counting grid, pLSA, RAP or ZIP-GTM)
``countgrid transform``  documents -> positions / topic proportions / codes (CSV)
``countgrid top-words``  the most probable words of each cell, topic or unit (TSV)
``countgrid plot``       pictures (PNG, SVG, PDF)
``countgrid html``       the interactive offline map of a counting grid (one HTML file)
``countgrid evaluate``   cross-validated accuracy given a label column
``countgrid demo``       the whole workflow on bundled 20 Newsgroups posts
``countgrid info``       the build and runtime configuration
"""
from countgrid.cli._args import UsageError
from countgrid.cli._main import build_parser, main
from countgrid.cli._split import stratified_split

__all__ = ["main", "build_parser", "stratified_split", "UsageError"]
