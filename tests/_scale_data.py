"""Small corpora drawn from a true counting grid, for the scale tests."""
import numpy as np
import scipy.sparse as sp


def grid_corpus(n_docs=300, n_words=40, extent=(6, 6), window=(2, 2), length=30, seed=0,
                empty_rows=()):
    """Documents drawn from the windows of a random grid (the generative model of
    docs/counting_grids.md), as CSR counts."""
    rng = np.random.default_rng(seed)
    L = int(np.prod(extent))
    pi = rng.dirichlet(np.full(n_words, 0.1), size=L).reshape(extent + (n_words,))
    rows = []
    for t in range(n_docs):
        k = [rng.integers(e) for e in extent]
        cells = [tuple((k[d] + o[d]) % extent[d] for d in range(len(extent)))
                 for o in np.ndindex(*window)]
        h = np.mean([pi[c] for c in cells], axis=0)
        rows.append(rng.multinomial(length, h / h.sum()))
    X = np.array(rows, dtype=np.float64)
    for t in empty_rows:
        X[t] = 0
    return sp.csr_matrix(X)
