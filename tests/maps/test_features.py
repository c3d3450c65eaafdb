"""Colour by a feature (issue 28; docs/map.md, "Colour by a feature"): the share of a term
in each document as a colouring, in Python and on the command line."""
import numpy as np
import pytest
import scipy.sparse as sp

from countgrid import maps


def test_feature_shares_against_a_loop():
    X = np.array([[1, 3, 0], [0, 0, 0], [2, 2, 4]], dtype=float)
    out = maps.feature_shares(sp.csr_matrix(X), ["a", "b", "c"], ["b", "c"])
    assert list(out) == ["b share", "c share"]
    for name, j in (("b share", 1), ("c share", 2)):
        for t in range(3):
            want = X[t, j] / X[t].sum() if X[t].sum() else np.nan
            np.testing.assert_equal(out[name][t], want)
    np.testing.assert_array_equal(maps.feature_shares(X, ["a", "b", "c"], ["a"])["a share"],
                                  [0.25, np.nan, 0.25])


@pytest.mark.parametrize("features, error, match", [
    (["z"], ValueError, "'z' is not a feature"),
    ("a", TypeError, "features must be a list"),
    ([1], TypeError, "is not a feature name"),
])
def test_feature_shares_refusals(features, error, match):
    with pytest.raises(error, match=match):
        maps.feature_shares(np.ones((2, 3)), ["a", "b", "c"], features)
    with pytest.raises(ValueError, match="columns but feature_names"):
        maps.feature_shares(np.ones((2, 3)), ["a", "b"], ["a"])


def test_the_map_colours_by_a_feature(fitted):
    X, words = fitted["X"], fitted["words"]
    shares = maps.feature_shares(X, words, [words[3]])
    data = maps.map_data(fitted["grid"], X, feature_names=words, metadata=shares,
                         color_by=f"{words[3]} share")
    col = data["colorings"][0]
    assert col["name"] == f"{words[3]} share" and col["kind"] == "continuous"
    # the cells where the word is most probable have its largest mean share
    best = np.argmax(np.asarray(fitted["grid"].pi_).reshape(-1, len(words))[:, 3])
    assert col["values"][best] > np.nanmedian(col["values"])
