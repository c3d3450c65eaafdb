"""countgrid.grid.stability: the restarts it fits, their alignment onto the first, and the
summaries against values recomputed here from the grids themselves (docs/counting_grids.md,
"Stability across restarts")."""
import numpy as np
import pytest

import countgrid
from countgrid.grid import GridStability, align, stability
from _expected_warnings import FEW_ITERATIONS, LARGE_GRID

PARAMS = dict(extent=(8, 8), window=(3, 3), n_iter=12, window_schedule=None)


def _corpus(seed=0, n_docs=150, n_words=40, n_topics=4):
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(np.full(n_words, 0.1), size=n_topics)
    return np.stack([rng.multinomial(50, phi[i % n_topics]) for i in range(n_docs)])


def _corner_in_reference(alignment, corner, window, extent):
    """The corner of a window of the restart in the reference's frame, written out."""
    out = [0] * len(extent)
    for d, (src, flip) in enumerate(zip(alignment.axes, alignment.flips)):
        i = int(corner[src])
        if flip:
            i = extent[d] - i - window[src]
        out[d] = (i + alignment.shift[d]) % extent[d]
    return out


@FEW_ITERATIONS
@LARGE_GRID
def test_summaries_are_those_of_the_restarts():
    X = _corpus()
    s = stability(X, 3, random_state=7, n_regions=4, num_threads=1, **PARAMS)
    assert isinstance(s, GridStability) and "n_restarts=3" in repr(s)
    seeds = np.random.default_rng(7).integers(0, 2**31 - 1, size=3).tolist()
    assert s.seeds == seeds
    grids = [countgrid.CountingGrid(**PARAMS, random_state=seed, num_threads=1).fit(X)
             for seed in seeds]
    np.testing.assert_array_equal(s.reference.pi_, grids[0].pi_)
    # pairwise similarities: every two restarts aligned onto each other
    for i in range(3):
        assert s.similarity[i, i] == 1.0
        for j in range(i + 1, 3):
            want = align(grids[j], grids[i]).similarity
            assert s.similarity[i, j] == s.similarity[j, i] == pytest.approx(want, rel=1e-12)
    off = s.similarity[~np.eye(3, dtype=bool)]
    assert s.mean_similarity == pytest.approx(off.mean())
    # cell stability: each reference cell against the cells aligned onto it
    cells = np.mean([align(g, grids[0]).cell_similarity for g in grids[1:]], axis=0)
    np.testing.assert_allclose(s.cell_stability, cells, rtol=1e-12)
    assert s.cell_stability.mean() == pytest.approx(s.similarity[0, 1:].mean(), rel=1e-12)
    # placements, written out document by document
    ref = grids[0].positions(X)
    for r in (1, 2):
        a = s.alignments[r]
        pos = grids[r].positions(X)
        close = []
        for t in range(X.shape[0]):
            moved = _corner_in_reference(a, pos[t], (3, 3), (8, 8))
            d = [min(abs(moved[k] - ref[t][k]), 8 - abs(moved[k] - ref[t][k]))
                 for k in range(2)]
            close.append(max(d) <= 1)
        assert s.placement_agreement[r - 1] == pytest.approx(np.mean(close))
        assert s.positions[r].tolist() == [_corner_in_reference(a, p, (3, 3), (8, 8))
                                           for p in pos]
    np.testing.assert_array_equal(s.positions[0], ref)
    assert s.document_agreement.mean() == pytest.approx(s.placement_agreement.mean())
    # consensus and regions
    aligned = [grids[0].pi_.astype(np.float64)] + [s.alignments[r].aligned for r in (1, 2)]
    np.testing.assert_allclose(s.consensus, np.mean(aligned, axis=0), rtol=1e-12)
    sizes = np.bincount(s.regions.ravel(), minlength=4)
    assert np.dot(s.region_stability, sizes) / sizes.sum() == pytest.approx(
        s.cell_stability.mean())
    assert s.region_agreement.shape == (4,)


@FEW_ITERATIONS
@LARGE_GRID
def test_structured_corpus_is_stable_and_threads_change_nothing():
    X = _corpus(seed=1)
    one = stability(X, 3, random_state=0, num_threads=1, **PARAMS)
    two = stability(X, 3, random_state=0, num_threads=2, **PARAMS)
    np.testing.assert_array_equal(one.similarity, two.similarity)
    np.testing.assert_array_equal(one.document_agreement, two.document_agreement)
    # four clean topics: the restarts agree on the words and on most places
    noise = stability(np.random.default_rng(2).poisson(1.2, size=X.shape), 3,
                      random_state=0, num_threads=1, **PARAMS)
    # a flat map's cells all look alike: high raw similarity, none beyond chance
    assert one.mean_adjusted_similarity > 0.5 > noise.mean_adjusted_similarity
    assert np.mean(one.placement_agreement) > np.mean(noise.placement_agreement)
    chance = one.chance_similarity
    np.testing.assert_allclose(one.adjusted_similarity,
                               (one.similarity - chance) / (1 - chance))


def test_errors_name_their_argument():
    X = _corpus(seed=3)
    with pytest.raises(ValueError, match="n_restarts must be at least 2"):
        stability(X, 1, **PARAMS)
    with pytest.raises(TypeError, match="n_restarts must be an int"):
        stability(X, 2.0, **PARAMS)
    with pytest.raises(ValueError, match="n_regions must be between 1 and the 64 cells"):
        stability(X, 2, n_regions=65, **{**PARAMS, "n_iter": 1})
    with pytest.raises(TypeError, match="n_regions must be an int"):
        stability(X, 2, n_regions="4", **PARAMS)
    with pytest.raises(ValueError, match="window"):
        stability(X, 2, extent=(4, 4), window=(5, 5))
