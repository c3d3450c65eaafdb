"""Regions of a fitted grid (countgrid.grid.regions, region_words): the contiguity
constrained Ward merges against a brute-force NumPy reference, the torus adjacency, the
nesting of resolutions, planted structure, and the errors."""
import itertools

import numpy as np
import pytest

import countgrid
from countgrid.exceptions import NotFittedError
from countgrid.grid import region_words, regions
from countgrid.grid._regions import (_hellinger_coordinates, cut_tree, torus_edges,
                                     ward_merges)
from _expected_warnings import FEW_ITERATIONS


def reference_edges(extent):
    cells = list(itertools.product(*[range(e) for e in extent]))
    index = {c: i for i, c in enumerate(cells)}
    out = set()
    for c in cells:
        for axis in range(len(extent)):
            for step in (-1, 1):
                d = list(c)
                d[axis] = (d[axis] + step) % extent[axis]
                a, b = index[c], index[tuple(d)]
                if a != b:
                    out.add((min(a, b), max(a, b)))
    return sorted(out)


@pytest.mark.parametrize("extent", [(3, 4), (1, 5), (2, 2), (2, 3, 4), (5,), (1, 1)])
def test_torus_edges_are_the_neighbours_across_the_wrap(extent):
    assert [tuple(e) for e in torus_edges(extent)] == reference_edges(extent)


def reference_ward(F, edges, weights):
    """Brute force: every step recomputes the cost of every touching pair of clusters
    from their members."""
    clusters = {i: [i] for i in range(F.shape[0])}
    merges = []

    def touching(a, b):
        A, B = set(clusters[a]), set(clusters[b])
        return any((u in A and v in B) or (u in B and v in A) for u, v in edges)

    while True:
        best = None
        for a, b in itertools.combinations(sorted(clusters), 2):
            if not touching(a, b):
                continue
            wa, wb = weights[clusters[a]].sum(), weights[clusters[b]].sum()
            ca = weights[clusters[a]] @ F[clusters[a]] / wa
            cb = weights[clusters[b]] @ F[clusters[b]] / wb
            cost = wa * wb / (wa + wb) * np.sum((ca - cb) ** 2)
            if best is None or cost < best[0]:
                best = (cost, a, b)
        if best is None:
            return np.array(merges, dtype=np.int64).reshape(-1, 2)
        _, a, b = best
        clusters[a] += clusters.pop(b)
        merges.append((a, b))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("extent", [(3, 4), (2, 2, 3), (6,)])
def test_ward_merges_match_the_reference(seed, extent):
    rng = np.random.default_rng(seed)
    n = int(np.prod(extent))
    F = rng.normal(size=(n, 3))
    weights = rng.uniform(0.5, 2.0, size=n)
    edges = torus_edges(extent)
    got = ward_merges(F, edges, weights)
    assert got.shape == (n - 1, 2)
    np.testing.assert_array_equal(got, reference_ward(F, [tuple(e) for e in edges], weights))


def test_cut_tree_nests_and_numbers_by_size():
    rng = np.random.default_rng(0)
    extent = (5, 6)
    merges = ward_merges(rng.normal(size=(30, 4)), torus_edges(extent))
    previous = None
    for k in (1, 2, 5, 11, 30):
        labels = cut_tree(merges, 30, k)
        sizes = np.bincount(labels)
        assert sizes.size == k and (np.diff(sizes) <= 0).all()
        if previous is not None:      # each coarser region is a union of finer ones
            for r in range(previous.max() + 1):
                assert np.unique(labels[previous == r]).size >= 1
            for r in range(k):
                assert np.unique(previous[labels == r]).size == 1
        previous = labels


def connected_on_torus(mask):
    cells = list(zip(*np.nonzero(mask)))
    seen, todo = {cells[0]}, [cells[0]]
    while todo:
        c = todo.pop()
        for axis in range(mask.ndim):
            for step in (-1, 1):
                d = list(c)
                d[axis] = (d[axis] + step) % mask.shape[axis]
                d = tuple(d)
                if mask[d] and d not in seen:
                    seen.add(d)
                    todo.append(d)
    return len(seen) == len(cells)


def planted_grid(extent=(8, 8), bands=4, words_per_band=5, window=(1, 1)):
    """A grid whose columns form ``bands`` bands, each with words of its own."""
    Z = bands * words_per_band
    pi = np.full(extent + (Z,), 1e-3)
    width = extent[1] // bands
    for band in range(bands):
        pi[:, band * width:(band + 1) * width,
           band * words_per_band:(band + 1) * words_per_band] = 1.0
    pi /= pi.sum(axis=-1, keepdims=True)
    cg = countgrid.CountingGrid(extent, window)
    cg.pi_ = pi
    cg.n_features_in_ = Z
    return cg, width


def test_planted_bands_are_found_at_every_resolution():
    cg, width = planted_grid()
    labels = regions(cg, [2, 4])
    for k, level in zip((2, 4), labels):
        assert np.unique(level).size == k
        for r in range(k):
            assert connected_on_torus(level == r)
    # four bands: each band one region, whole columns
    fine = labels[1]
    assert all(np.unique(fine[:, c]).size == 1 for c in range(8))
    assert np.unique(fine[0].reshape(4, width), axis=1).shape == (4, 1)
    assert np.unique(fine[0]).size == 4


def test_region_words_name_the_planted_bands():
    cg, width = planted_grid()
    labels = regions(cg, 4)
    words = region_words(cg, labels, n_words=5)
    for r in range(4):
        band = int(np.flatnonzero(labels[0] == r)[0]) // width
        assert sorted(words[r].tolist()) == list(range(band * 5, band * 5 + 5))
    names = np.array([f"w{i}" for i in range(20)])
    assert region_words(cg, labels, 2, feature_names=names).dtype.kind == "U"


@pytest.mark.parametrize("weighting", ["relevance", "probability", "lift"])
def test_region_words_match_a_numpy_reference(weighting, fitted):
    labels = regions(fitted, 5)
    pi = np.asarray(fitted.pi_, dtype=np.float64).reshape(-1, fitted.pi_.shape[-1])
    means = np.stack([pi[labels.ravel() == r].mean(axis=0) for r in range(5)])
    p = pi.mean(axis=0)
    f = {"relevance": p ** (countgrid.grid.RELEVANCE_LAMBDA - 1), "probability": 1.0,
         "lift": 1.0 / p}[weighting]
    score = means * f
    expected = np.argsort(-score, axis=1, kind="stable")[:, :4]
    np.testing.assert_array_equal(region_words(fitted, labels, 4, weighting=weighting),
                                  expected)


@pytest.fixture(scope="module")
def fitted():
    X = np.random.default_rng(1).poisson(0.6, size=(120, 60))
    X[:60, :20] += 2
    X[60:, 40:] += 2
    with pytest.warns(countgrid.ConvergenceWarning):
        return countgrid.CountingGrid((10, 12), (3, 3), n_iter=8, random_state=0,
                                      num_threads=1).fit(X)


def test_regions_of_a_fitted_grid_are_contiguous_and_nested(fitted):
    labels = regions(fitted, [3, 7, 20])
    assert labels.shape == (3, 10, 12) and labels.dtype == np.int64
    for level, k in zip(labels, (3, 7, 20)):
        assert np.unique(level).size == k
        for r in range(k):
            assert connected_on_torus(level == r)
    for coarse, fine in ((labels[0], labels[1]), (labels[1], labels[2])):
        for r in range(fine.max() + 1):
            assert np.unique(coarse[fine == r]).size == 1


def test_one_level_and_extremes(fitted):
    assert regions(fitted, 1).tolist() == np.zeros((10, 12), int).tolist()
    every = regions(fitted, 120)
    assert sorted(every.ravel().tolist()) == list(range(120))
    np.testing.assert_array_equal(regions(fitted, (7,))[0], regions(fitted, 7))


@FEW_ITERATIONS
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_regions_agree_across_thread_counts(dtype):
    X = np.random.default_rng(2).poisson(0.8, size=(80, 40))
    cgs = [countgrid.CountingGrid((8, 8), (2, 2), n_iter=5, random_state=0, dtype=dtype,
                                  num_threads=nt).fit(X) for nt in (1, 2)]
    np.testing.assert_array_equal(cgs[0].pi_, cgs[1].pi_)
    np.testing.assert_array_equal(regions(cgs[0], [4, 9]), regions(cgs[1], [4, 9]))


def test_the_range_finder_keeps_the_geometry(fitted):
    """The merges compare 32 principal coordinates found by a randomised range finder:
    the distances between touching cells follow those of the exact coordinates."""
    F = _hellinger_coordinates(fitted, 32)
    exact = _hellinger_coordinates(fitted, 10_000)     # the exact SVD path: all of them
    edges = torus_edges((10, 12))
    approx_d = np.sum((F[edges[:, 0]] - F[edges[:, 1]]) ** 2, axis=1)
    exact_d = np.sum((exact[edges[:, 0]] - exact[edges[:, 1]]) ** 2, axis=1)
    assert np.corrcoef(approx_d, exact_d)[0, 1] > 0.99
    assert (approx_d <= exact_d * (1 + 1e-9)).all()     # a projection never lengthens


def test_deferred_histograms_give_the_same_regions(fitted, tmp_path):
    from countgrid import io
    path = tmp_path / "cg.npz"
    fitted.save(path)
    deferred = io._load(str(path), defer_derived=True)
    assert deferred._h_is_deferred()
    np.testing.assert_array_equal(regions(deferred, [3, 8]), regions(fitted, [3, 8]))


@pytest.mark.parametrize("bad, error, match", [
    (0, ValueError, "between 1 and"),
    (121, ValueError, "between 1 and"),
    (True, TypeError, "n_regions"),
    (2.5, TypeError, "n_regions"),
    ([], ValueError, "empty"),
    ([3, "x"], TypeError, "n_regions"),
    (None, TypeError, "n_regions"),
])
def test_bad_n_regions(fitted, bad, error, match):
    with pytest.raises(error, match=match):
        regions(fitted, bad)


def test_bad_labels_and_unfitted(fitted):
    with pytest.raises(ValueError, match="shape"):
        region_words(fitted, np.zeros((3, 3), int))
    with pytest.raises(ValueError, match="region numbers"):
        region_words(fitted, -np.ones((10, 12), int))
    gap = np.zeros((10, 12), int)
    gap[0, 0] = 2
    with pytest.raises(ValueError, match="skips region 1"):
        region_words(fitted, gap)
    with pytest.raises(NotFittedError):
        regions(countgrid.CountingGrid((4, 4), (2, 2)))
    with pytest.raises(ValueError, match="n_components"):
        regions(fitted, 3, n_components=0)


def test_top_words_regions_command(fitted, tmp_path, capsys):
    """`countgrid top-words MODEL --regions N`: one row per region, largest first, the
    sizes and words of regions() and region_words()."""
    from countgrid.cli import main
    path = tmp_path / "cg.npz"
    fitted.save(path)
    out = tmp_path / "regions.tsv"
    assert main(["top-words", str(path), "--regions", "5", "-n", "3", "-o", str(out),
                 "-q"]) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "region\tcells\twords"
    labels = regions(fitted, 5)
    words = region_words(fitted, labels, 3, feature_names=[f"w{i}" for i in range(60)])
    sizes = np.bincount(labels.ravel())
    for r, line in enumerate(lines[1:]):
        region, cells, text = line.split("\t")
        assert (int(region), int(cells)) == (r, sizes[r])
        assert text.split() == [w for w in words[r]]
    assert len(lines) == 6
    assert main(["top-words", str(path), "--regions", "121", "-q"]) == 2
    assert "at most 120 regions" in capsys.readouterr().err


# ---- the grid and the labels every statistic of a grid takes ---------------------------
def _statistics():
    """``name -> call(grid, X, labels)`` of the map's five statistics (small arguments)."""
    from countgrid.grid import compare_groups, region_effects, shares_by_period
    days = np.repeat(["2024-01-15", "2024-02-15"], 20)
    return {
        "regions": lambda g, X, lab: regions(g, 3),
        "region_words": lambda g, X, lab: region_words(g, lab, 3),
        "compare_groups": lambda g, X, lab: compare_groups(g, X, np.arange(40) % 2, 0, 1,
                                                           labels=lab).delta,
        "shares_by_period": lambda g, X, lab: shares_by_period(g, X, days, labels=lab).mass,
        "region_effects": lambda g, X, lab: region_effects(
            g, X, {"x": np.arange(40.0)}, lab, n_draws=2).estimate,
    }


@pytest.fixture(scope="module")
def small():
    X = np.random.default_rng(4).poisson(1.0, size=(40, 12))
    with pytest.warns(countgrid.ConvergenceWarning):
        grid = countgrid.CountingGrid((4, 4), (2, 2), n_iter=3, random_state=0,
                                      dtype=np.float64).fit(X)
    return grid, X, regions(grid, 3)


@FEW_ITERATIONS
@pytest.mark.parametrize("name", sorted(_statistics()))
def test_the_grid_must_be_a_counting_grid_or_a_classifier_of_one(small, name):
    """None, a file name, a fitted pLSA: a TypeError naming grid (not "This PLSA instance
    is not fitted yet"); a fitted CountingGridClassifier: its grid_, as map_data takes it;
    a GenerativeCountingGridClassifier (one grid per class): refused, naming grids_."""
    _, X, labels = small
    call = _statistics()[name]
    plsa = countgrid.PLSA(n_components=2, n_iter=2, random_state=0).fit(X)
    for bad in (None, "model.npz", plsa):
        with pytest.raises(TypeError, match="grid must be a fitted CountingGrid"):
            call(bad, X, labels)
    y = np.arange(40) % 2
    clf = countgrid.CountingGridClassifier((4, 4), (2, 2), n_iter=3, random_state=0,
                                           dtype=np.float64).fit(X, y)
    np.testing.assert_array_equal(np.asarray(call(clf, X, labels)),
                                  np.asarray(call(clf.grid_, X, labels)))
    gen = countgrid.GenerativeCountingGridClassifier((4, 4), (2, 2), n_iter=2, random_state=0)
    with pytest.raises(TypeError, match="grid: a GenerativeCountingGridClassifier .* grids_"):
        call(gen.fit(X, y), X, labels)
    with pytest.raises(NotFittedError):
        call(countgrid.CountingGridClassifier((4, 4), (2, 2)), X, labels)


@pytest.mark.parametrize("name", ["region_words", "compare_groups", "shares_by_period",
                                  "region_effects"])
@pytest.mark.parametrize("value, dtype", [(10**12, np.int64), (2**63 + 5, np.uint64),
                                          (16, np.int64)])
def test_region_numbers_beyond_the_cells_are_refused(small, name, value, dtype):
    """A grid has at most one region per cell: a cell numbered 10**12 (numpy's unnamed
    MemoryError, allocating that many regions) or 2**63 + 5 (wrapped negative: IndexError,
    OverflowError) is a ValueError naming labels."""
    grid, X, labels = small
    bad = labels.astype(dtype)
    bad[0, 0] = value
    with pytest.raises(ValueError, match=rf"labels holds region {value}, but a grid of 16 "
                                         r"cells has at most 16 regions"):
        _statistics()[name](grid, X, bad)
    every = np.arange(16).reshape(4, 4)        # the largest number a grid can have
    assert np.asarray(_statistics()[name](grid, X, every)).size


@pytest.mark.parametrize("name", sorted(_statistics()))
def test_a_window_changed_after_fit_is_refused_until_set_back(small, name):
    """set_params(window=) after fit: the statistics (and the grid's own inference) refuse
    it, naming grid and window, instead of computing with a window the grid was not
    fitted with; set back, the results are those of the grid as fitted."""
    import copy
    grid, X, labels = small
    call = _statistics()[name]
    before = np.asarray(call(grid, X, labels))
    changed = copy.deepcopy(grid).set_params(window=(3, 3))
    with pytest.raises(ValueError, match=r"grid: window was changed from \(2, 2\) to "
                                         r"\(3, 3\) after fit; fit again"):
        call(changed, X, labels)
    with pytest.raises(ValueError, match="window was changed"):
        changed.transform(X)
    changed.set_params(window=(2, 2))
    np.testing.assert_array_equal(np.asarray(call(changed, X, labels)), before)
