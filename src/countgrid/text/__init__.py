"""Text in: the corpus object, its readers and term selection.

:class:`Corpus` keeps documents as counts with what a map of them needs (vocabulary, ids,
titles, snippets, links, metadata) and saves without pickle; :func:`read_corpus` builds
one from a folder of ``.txt`` files, a text/CSV/TSV/JSONL file, stdin or pre-vectorised
counts (``.npz``, MatrixMarket, UCI bag-of-words); :func:`read_documents` returns the raw
texts and fields before vectorising; :func:`select_by_resolving_power` selects terms;
:func:`cap_document_lengths` scales very long documents down;
:func:`load_python_changelog` is a dated corpus of the repository's ``data/`` folder.
Vectorising raw text uses scikit-learn's ``CountVectorizer`` (``pip install
countgrid[text]``).  The user's page: docs/text.md.
"""
from countgrid.text._changelog import load_python_changelog
from countgrid.text._corpus import Corpus
from countgrid.text._lengths import cap_document_lengths
from countgrid.text._cells import read_10x, read_h5ad
from countgrid.text._readers import FORMATS, read_corpus, read_documents
from countgrid.text._selection import select_by_resolving_power

__all__ = ["Corpus", "FORMATS", "read_corpus", "read_documents", "read_10x", "read_h5ad",
           "select_by_resolving_power",
           "cap_document_lengths", "load_python_changelog"]
