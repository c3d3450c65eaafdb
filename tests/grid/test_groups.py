"""Where groups differ (countgrid.grid.compare_groups) against a slow NumPy reference:
masses from the posteriors cell by cell, the Monroe et al. log-odds and its standard
error; symmetry, the rest as a group, planted and null differences, the errors."""
import itertools

import numpy as np
import pytest

import countgrid
from countgrid.grid import compare_groups
from _expected_warnings import FEW_ITERATIONS


def reference_masses(grid, X, members):
    """Each document's posterior over windows, each window's share spread evenly over its
    cells, summed over the group's documents: loop over corners and offsets."""
    extent = grid.pi_.shape[:-1]
    window = grid.window
    Q = np.asarray(grid.transform(X[members]), dtype=np.float64)
    out = np.zeros(extent)
    size = np.prod(window)
    for k in itertools.product(*[range(e) for e in extent]):
        q = Q[:, np.ravel_multi_index(k, extent)].sum()
        for d in itertools.product(*[range(w) for w in window]):
            cell = tuple((ki + di) % e for ki, di, e in zip(k, d, extent))
            out[cell] += q / size
    return out


def reference(grid, X, groups, a, b, level, alpha0):
    in_a = groups == a
    in_b = ~in_a if b is None else groups == b
    y_a, y_b = reference_masses(grid, X, in_a), reference_masses(grid, X, in_b)
    n_a, n_b = in_a.sum(), in_b.sum()
    p = (y_a + y_b) / (n_a + n_b)
    alpha = alpha0 * p / p.sum()
    delta = (np.log((y_a + alpha) / (n_a + alpha0 - y_a - alpha))
             - np.log((y_b + alpha) / (n_b + alpha0 - y_b - alpha)))
    std = np.sqrt(1 / (y_a + alpha) + 1 / (y_b + alpha))
    from scipy.stats import norm
    z = norm.ppf(0.5 + level / 2)
    return delta, std, (delta - z * std > 0) | (delta + z * std < 0), y_a, y_b


def planted(n=240, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.4, size=(n, 30))
    group = np.array(["red", "green", "blue"])[np.arange(n) % 3]
    X[group == "red", :8] += rng.poisson(2.0, size=((group == "red").sum(), 8))
    return X, group


@pytest.fixture(scope="module", params=[np.float32, np.float64])
def fitted(request):
    X, group = planted()
    with pytest.warns(countgrid.ConvergenceWarning):
        cg = countgrid.CountingGrid((6, 7), (2, 3), n_iter=10, random_state=0,
                                    dtype=request.param).fit(X)
    return cg, X, group


@pytest.mark.parametrize("a, b, level, alpha0", [("red", "green", 0.95, None),
                                                 ("red", None, 0.9, 5.0),
                                                 ("blue", "green", 0.99, 100.0)])
def test_matches_the_reference(fitted, a, b, level, alpha0):
    cg, X, group = fitted
    res = compare_groups(cg, X, group, a, b, level=level, prior_weight=alpha0)
    delta, std, marked, y_a, y_b = reference(cg, X, group, a, b, level,
                                             42.0 if alpha0 is None else alpha0)
    rtol = 1e-4 if cg.pi_.dtype == np.float32 else 1e-9
    np.testing.assert_allclose(res.mass_a, y_a, rtol=rtol, atol=1e-9)
    np.testing.assert_allclose(res.mass_b, y_b, rtol=rtol, atol=1e-9)
    np.testing.assert_allclose(res.delta, delta, rtol=rtol, atol=1e-6)
    np.testing.assert_allclose(res.std, std, rtol=rtol)
    close = np.abs(np.minimum(np.abs(res.low), np.abs(res.high))) < 1e-6
    assert (res.marked == marked)[~close].all()
    assert res.n_a == (group == a).sum()
    assert res.mass_a.sum() == pytest.approx(res.n_a, rel=1e-5)   # one unit per document


def test_symmetry_and_the_rest(fitted):
    cg, X, group = fitted
    ab = compare_groups(cg, X, group, "red", "green")
    ba = compare_groups(cg, X, group, "green", "red")
    np.testing.assert_allclose(ab.delta, -ba.delta, atol=1e-12)
    np.testing.assert_allclose(ab.std, ba.std)
    assert (ab.marked == ba.marked).all()
    rest = compare_groups(cg, X, group, "red")
    relabelled = np.where(group == "red", "red", "other")
    np.testing.assert_allclose(rest.delta,
                               compare_groups(cg, X, relabelled, "red", "other").delta)


def test_planted_difference_is_marked_and_a_null_one_hardly(fitted):
    cg, X, group = fitted
    res = compare_groups(cg, X, group, "red")
    assert res.marked.sum() >= 5 and (res.delta[res.marked] > 0).any()
    # where red is over-represented, its words are the cells' own
    red_cells = res.marked & (res.delta > 0)
    assert cg.pi_[red_cells][:, :8].sum(axis=-1).mean() > cg.pi_[~red_cells][:, :8].sum(
        axis=-1).mean()
    # green and blue come from one distribution: few marked cells
    null = compare_groups(cg, X, group, "green", "blue")
    assert null.marked.mean() <= 0.10


@FEW_ITERATIONS
def test_the_same_whatever_the_threads():
    X, group = planted(seed=1)
    res = [compare_groups(countgrid.CountingGrid((5, 5), (2, 2), n_iter=5, random_state=0,
                                                 num_threads=nt).fit(X), X, group, "red")
           for nt in (1, 2)]
    np.testing.assert_array_equal(res[0].delta, res[1].delta)


@pytest.mark.parametrize("kw, error, match", [
    (dict(groups=np.array(["red"] * 5)), ValueError, "one label per document"),
    (dict(a="purple"), ValueError, "a='purple' is not a label"),
    (dict(b="red"), ValueError, "same group"),
    (dict(b="purple"), ValueError, "b='purple' is not a label"),
    (dict(level=1.0), ValueError, "level"),
    (dict(level=True), ValueError, "level"),
    (dict(prior_weight=0), ValueError, "prior_weight"),
    (dict(prior_weight=float("nan")), ValueError, "prior_weight"),
    # a list is not one label: numpy's unnamed broadcast error before
    (dict(a=["red"]), TypeError, r"a must be one label of groups, got a list of shape \(1,\)"),
    (dict(b=np.array(["green", "blue"])), TypeError, "b must be one label of groups"),
    # an int beyond float's range is a Real: numpy's unnamed isfinite TypeError before
    (dict(prior_weight=10**400), ValueError,
     "prior_weight must be a positive number within the range of a float"),
    (dict(prior_weight=-10**400), ValueError, "prior_weight"),
])
def test_errors(fitted, kw, error, match):
    cg, X, group = fitted
    args = dict(groups=group, a="red", b="green")
    args.update(kw)
    with pytest.raises(error, match=match):
        compare_groups(cg, X, args.pop("groups"), **args)


def test_everyone_in_a_is_refused(fitted):
    cg, X, group = fitted
    with pytest.raises(ValueError, match="nothing to compare"):
        compare_groups(cg, X, np.full(len(group), "red"), "red")
    with pytest.raises(ValueError):
        compare_groups(cg, X[:, :5], group, "red")


@pytest.mark.parametrize("alpha0", [None, 2.5])
def test_regions_sum_the_cells_masses(fitted, alpha0):
    """With labels, each region's mass is its cells' (the reference's) summed, and the
    same statistics follow, with the number of regions as the default prior weight."""
    from countgrid.grid import regions
    cg, X, group = fitted
    labels = regions(cg, 4)
    res = compare_groups(cg, X, group, "red", None, labels=labels, prior_weight=alpha0)
    y_a = reference_masses(cg, X, group == "red")
    y_b = reference_masses(cg, X, group != "red")
    ya = np.array([y_a[labels == r].sum() for r in range(4)])
    yb = np.array([y_b[labels == r].sum() for r in range(4)])
    n_a, n_b = (group == "red").sum(), (group != "red").sum()
    a0 = 4.0 if alpha0 is None else alpha0
    p = (ya + yb) / (n_a + n_b)
    al = a0 * p / p.sum()
    delta = (np.log((ya + al) / (n_a + a0 - ya - al))
             - np.log((yb + al) / (n_b + a0 - yb - al)))
    rtol, atol = (1e-5, 1e-5) if cg.pi_.dtype == np.float32 else (1e-9, 1e-12)
    np.testing.assert_allclose(res.delta, delta, rtol=rtol, atol=atol)
    np.testing.assert_allclose(res.mass_a, ya, rtol=rtol)
    assert res.delta.shape == (4,) and res.prior_weight == a0
    assert res.marked.any()                    # red's words: its region stands out
    with pytest.raises(ValueError, match="labels must be non-negative ints"):
        compare_groups(cg, X, group, "red", labels=labels[:2])


def test_a_huge_int_prior_weight_is_its_float(fitted):
    """prior_weight=10**30, a valid Real beyond int64, is 1e30 (numpy's isfinite refused
    it with an unnamed TypeError)."""
    cg, X, group = fitted
    res = compare_groups(cg, X, group, "red", "green", prior_weight=10**30)
    ref = compare_groups(cg, X, group, "red", "green", prior_weight=1e30)
    np.testing.assert_array_equal(res.delta, ref.delta)
    assert res.prior_weight == 1e30


@pytest.mark.parametrize("level", [1 - 1e-16, 1 - 2**-53, 1e-300])
def test_levels_at_the_ends_give_finite_intervals(fitted, level):
    """z = -ndtri((1 - level) / 2): ndtri(0.5 + level / 2) rounded to ndtri(1) = inf for
    a level within 1e-16 of 1, and the intervals were infinite."""
    from scipy.stats import norm
    cg, X, group = fitted
    res = compare_groups(cg, X, group, "red", "green", level=level)
    assert np.isfinite(res.low).all() and np.isfinite(res.high).all()
    z = norm.isf((1 - level) / 2)
    np.testing.assert_allclose(res.high - res.delta, z * res.std, rtol=1e-12)


def test_labels_need_two_regions_none_skipped(fitted):
    """One region holds all of each group's mass, and a skipped region number none: their
    log-odds were NaN (a RuntimeWarning only); both are refused, naming labels."""
    cg, X, group = fitted
    with pytest.raises(ValueError, match="labels has one region: comparing the groups over "
                                         "regions needs at least two"):
        compare_groups(cg, X, group, "red", labels=np.zeros(cg.pi_.shape[:-1], int))
    gap = (np.arange(42).reshape(6, 7) % 2) * 2            # regions 0 and 2
    with pytest.raises(ValueError, match="labels skips region 1"):
        compare_groups(cg, X, group, "red", labels=gap)
    two = compare_groups(cg, X, group, "red", labels=gap // 2)
    assert two.delta.shape == (2,) and np.isfinite(two.delta).all()
