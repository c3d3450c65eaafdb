"""A bundle of 1,000,000 documents (issue 24, "Scale"; docs/map.md, "Bundles") opens from
file:// in headless Chromium, draws its first frame under 3 s, and lists for clicked cells
exactly the documents Python ranks there.  Short synthetic documents (12 tokens over 400
words, 8 topics) on a 16 x 16 grid keep the writer to about a minute; the page's cost is
per document (titles, ids, windows), as for long ones."""
import warnings

import numpy as np
import scipy.sparse as sp

import countgrid
from countgrid.maps import map_data, rank_documents
from countgrid.maps._bundle import write_bundle_data

N = 1_000_000


def _corpus(n, seed=0):
    rng = np.random.default_rng(seed)
    V, K, length = 400, 8, 12
    topic = rng.integers(0, K, n)
    # half of a document's tokens from its topic's 50 words, half from all 400
    own = topic[:, None] * (V // K) + rng.integers(0, V // K, (n, length // 2))
    anywhere = rng.integers(0, V, (n, length - length // 2))
    words = np.concatenate([own, anywhere], axis=1).ravel()
    rows = np.repeat(np.arange(n), length)
    X = sp.csr_matrix((np.ones(words.size, np.float32), (rows, words)), shape=(n, V))
    X.sum_duplicates()
    return X, topic


def test_a_million_documents_open_and_list_as_python(open_map, tmp_path):
    X, topic = _corpus(N)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid = countgrid.CountingGrid((16, 16), (3, 3), n_iter=10, dtype=np.float32,
                                      random_state=0).fit(X[:5000])
    data = map_data(grid, X, feature_names=[f"w{j}" for j in range(X.shape[1])],
                    titles=[f"post {t} on topic {k}" for t, k in enumerate(topic)],
                    metadata={"topic": np.array([f"topic {k}" for k in range(8)])[topic]})
    index = write_bundle_data(data, tmp_path / "million", 100_000)
    assert len(list((tmp_path / "million" / "documents").iterdir())) == 10
    pg = open_map(index, width=1280, height=800, timeout=180000)
    assert pg("countgridMap.firstFrameMs") < 3000
    print(f"\n{N} documents: first frame {pg('countgridMap.firstFrameMs'):.0f} ms, documents "
          f"in {pg('countgridMap.documentsMs'):.0f} ms")
    for r, c in [(0, 0), (7, 11), (15, 3)]:
        pg("([r, c]) => countgridMap.pin(r, c)", [r, c])
        idx, scores = rank_documents(data, (r, c))
        assert len(idx) == 100
        assert pg("countgridMap.listedDocuments()") == idx.tolist()
        assert pg("countgridMap.listedScores()") == scores.tolist()
    assert pg.errors == []
