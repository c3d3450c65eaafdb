"""The 0.1.0 module path of :func:`countgrid.embed_labels` and its helpers, kept so that code written for it
works; the code lives in :mod:`countgrid.grid`."""
from countgrid.grid._label_embedding import (embed_labels, embedding_from_stats,
                                             readout_matrix)

__all__ = ["embed_labels", "embedding_from_stats", "readout_matrix"]
