"""Two corpora on one map (countgrid.maps._versus.combine_corpora; docs/map.md, "Two
corpora") without a browser: the second corpus is checked under its own name, and a
Corpus over other words than the map's is refused (test_versus_browser.py: the page)."""
import numpy as np
import pytest
import scipy.sparse as sp

from countgrid.maps import map_data
from countgrid.maps._versus import combine_corpora
from countgrid.text import Corpus


def _first(X):
    return dict(X=X, titles=None, snippets=None, links=None, ids=None, metadata=None)


@pytest.mark.parametrize("bad, message", [
    (lambda X: X[:, :5], "versus has 5 features, but the map's grid is expecting 36"),
    (lambda X: np.hstack([X, X[:, :1]]), "versus has 37 features"),
    (lambda X: np.where(np.arange(X.size).reshape(X.shape) == 7, np.nan, X),
     "versus contains NaN"),
    (lambda X: X[:0], "versus is empty"),
    (lambda X: sp.csr_matrix((np.ones(1), np.array([99]), np.array([0, 1])), shape=(1, 36)),
     "versus is a corrupt sparse matrix"),
])
def test_the_second_corpus_is_checked_under_its_own_name(fitted, bad, message):
    """versus was checked under the name X: "X has 5 features" blamed the map's own
    documents."""
    X = fitted["X"]
    with pytest.raises(ValueError, match=message):
        combine_corpora(_first(X), bad(X), ("a", "b"), 36)
    with pytest.raises(ValueError, match=message):
        map_data(fitted["grid"], X, versus=bad(X))


def test_a_corpus_over_other_words_is_refused(fitted):
    """A versus Corpus whose words differ from the map's, here the same words reversed,
    was put on the grid column by column; given the map's words, it is refused."""
    X, words = fitted["X"], fitted["words"]
    other = Corpus(sp.csr_matrix(X), words[::-1])
    with pytest.raises(ValueError, match=r"versus: the Corpus's vocabulary differs from the "
                                         r"map's \(column 0 is 'w2_11', the map's 'w0_0'\)"):
        combine_corpora(_first(X), other, ("a", "b"), 36, vocabulary=words)
    with pytest.raises(ValueError, match="vocabulary differs .*35 words, the map's 36"):
        combine_corpora(_first(X), Corpus(sp.csr_matrix(X[:, :35]), words[:35]), ("a", "b"),
                        36, vocabulary=words)
    by_column = {w: j for j, w in enumerate(words)}      # CountVectorizer.vocabulary_
    with pytest.raises(ValueError, match="vocabulary differs"):
        combine_corpora(_first(X), other, ("a", "b"), 36, vocabulary=by_column)
    same = Corpus(sp.csr_matrix(X), list(words))
    for vocabulary in (words, by_column, np.asarray(words), None):
        both = combine_corpora(_first(X), same, ("a", "b"), 36, vocabulary=vocabulary)
        assert both["X"].shape == (2 * X.shape[0], 36)
    # a count matrix has no words to compare: taken as over the map's
    assert combine_corpora(_first(X), X, ("a", "b"), 36, vocabulary=words)["X"].shape[0] \
        == 2 * X.shape[0]
