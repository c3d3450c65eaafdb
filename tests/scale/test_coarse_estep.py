"""The coarse-to-fine E-step (estep="coarse-to-fine"; docs/scale.md, "A coarse-to-fine
E-step"): the kernel against a NumPy reference, and the estimator's option."""
import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.grid import _wrappers
from countgrid.grid._em import (NEGLIGIBLE_POSTERIOR, EStepSearch, GridStatistics,
                                 block_statistics, grid_counts)

from _reference.grid import accumulate_topk_ref, histograms_ref, topk_posterior_ref


def search_ref(C, logh, grid_shape, stride, keep, min_mass, k, log_prior=None, floor=0.0):
    """The search by hand on dense float64 counts: (idx, val, loglik, scored, full)."""
    E1, E2 = grid_shape
    S = C @ logh + (0.0 if log_prior is None else log_prior)
    n, L = S.shape
    rows, cols = np.arange(0, E1, stride), np.arange(0, E2, stride)
    lattice = S.reshape(n, E1, E2)[:, ::stride, ::stride].reshape(n, -1)
    best = np.argsort(-lattice, axis=1, kind="stable")[:, :keep]
    w = np.exp(lattice - lattice.max(axis=1, keepdims=True))
    kept = np.take_along_axis(w, best, axis=1).sum(axis=1) / w.sum(axis=1)
    boxes = np.zeros((n, E1, E2), dtype=bool)
    r0, c0 = rows[best // len(cols)], cols[best % len(cols)]
    doc = np.arange(n)[:, None]
    for dr in range(-(stride - 1), stride):
        for dc in range(-(stride - 1), stride):
            boxes[doc, (r0 + dr) % E1, (c0 + dc) % E2] = True
    mask = boxes.copy()
    mask[:, ::stride, ::stride] = True
    mask = mask.reshape(n, L)
    full = kept < min_mass
    mask[full] = True
    top = np.where(mask, S, -np.inf).max(axis=1, keepdims=True)
    q = np.where(mask, np.exp(S - top), 0.0)
    loglik = np.log(q.sum(axis=1)) + top[:, 0] - (np.log(L) if log_prior is None else 0.0)
    q /= q.sum(axis=1, keepdims=True)
    if floor > 0:
        floored = np.maximum(q, floor)
        floored /= floored.sum(axis=1, keepdims=True)
        q[full] = floored[full]
    idx, val = topk_posterior_ref(q, k)
    scored = np.where(full, L, boxes.reshape(n, L).sum(axis=1)) + lattice.shape[1]
    return idx, val, loglik, scored, full, kept


def track_ref(C, logh, grid_shape, stride, keep, min_mass, k, hint, log_prior=None,
              floor=0.0):
    """Tracking by hand (docs/scale.md, "Tracking"): rows whose hint is a position are
    scored on the box around it and the check lattice (stride 2 s), kept when the box holds
    min_mass of that posterior and its top is inside the box, off its edge; the others
    searched (search_ref).  Returns (idx, val, loglik, scored, tracked, new hints)."""
    E1, E2 = grid_shape
    S = C @ logh + (0.0 if log_prior is None else log_prior)
    n, L = S.shape
    idx, val, loglik, scored, _, _ = search_ref(C, logh, grid_shape, stride, keep,
                                                min_mass, k, log_prior, floor)
    check = np.zeros((E1, E2), dtype=bool)
    check[::stride, ::stride][::2, ::2] = True
    span = [min(2 * stride - 1, e) for e in grid_shape]
    tracked = np.zeros(n, dtype=bool)
    for t in range(n):
        if not 0 <= hint[t] < L:
            continue
        hr, hc = divmod(int(hint[t]), E2)
        box = np.zeros((E1, E2), dtype=bool)
        starts = [(hr - (stride - 1)) % E1 if span[0] < E1 else 0,
                  (hc - (stride - 1)) % E2 if span[1] < E2 else 0]
        for dr in range(span[0]):
            for dc in range(span[1]):
                box[(starts[0] + dr) % E1, (starts[1] + dc) % E2] = True
        box, mask = box.ravel(), (box | check).ravel()
        scored[t] += mask.sum() + (check.ravel() & box).sum()
        top_at = int(np.argmax(np.where(mask, S[t], -np.inf)))   # the first on ties
        top = S[t, top_at]
        w = np.where(mask, np.exp(S[t] - top), 0.0)
        offsets = [((top_at // E2) - starts[0]) % E1, ((top_at % E2) - starts[1]) % E2]
        edge = any(sp_ < e and o in (0, sp_ - 1)
                   for sp_, e, o in zip(span, grid_shape, offsets))
        if box[top_at] and not edge and w[box].sum() >= min_mass * w.sum():
            tracked[t] = True
            loglik[t] = np.log(w.sum()) + top - (np.log(L) if log_prior is None else 0.0)
            i, v = topk_posterior_ref((w / w.sum())[None], k)
            idx[t], val[t] = i[0], v[0]
            scored[t] = mask.sum() + (check.ravel() & box).sum()
    new_hint = idx[np.arange(n), np.argmax(val, axis=1)]
    return idx, val, loglik, scored, tracked, new_hint


def problem(grid_shape, dtype, n_docs=60, n_words=40, seed=0, prior=False):
    rng = np.random.default_rng(seed)
    L = grid_shape[0] * grid_shape[1]
    pi = rng.dirichlet(np.full(n_words, 0.3), size=L).T.copy()
    window = tuple(min(2, e) for e in grid_shape)
    _, logh = histograms_ref(pi, grid_shape, window)
    C = sp.random(n_docs, n_words, density=0.3, random_state=rng, format="csr") * 5
    C.data = np.ceil(C.data)
    C = C.astype(dtype)
    log_prior = np.log(rng.dirichlet(np.ones(L))) if prior else None
    return C, logh, log_prior


def run_kernel(C, logh, log_prior, grid_shape, stride, keep, min_mass, k, threads, dtype,
               floor=0.0, hint=None):
    n = C.shape[0]
    idx = np.empty((n, k), np.int32)
    val = np.empty((n, k), dtype)
    loglik, scored = np.empty(n), np.empty(n, np.int64)
    _wrappers.estep_search_csr(C.indptr, C.indices, C.data, 0, n, grid_shape,
                               logh.astype(dtype),
                               None if log_prior is None else log_prior.astype(dtype),
                               floor, stride, keep, min_mass, idx, val, loglik, scored,
                               threads, None, hint)
    return idx, val, loglik, scored


CASES = [((12, 15), 3, 4), ((7, 9), 2, 3), ((1, 20), 3, 2), ((4, 4), 3, 2),
         ((10, 10), 1, 1), ((16, 16), 4, 2)]


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 1e-4)])
@pytest.mark.parametrize("grid_shape,stride,keep", CASES)
@pytest.mark.parametrize("guard,prior", [("off", False), ("median", True),
                                         ("median", False)])
def test_kernel_matches_reference(dtype, tol, grid_shape, stride, keep, guard, prior):
    C, logh, log_prior = problem(grid_shape, dtype, prior=prior)
    L = grid_shape[0] * grid_shape[1]
    k = min(8, L)
    floor = 1e-9
    min_mass = 0.0
    if guard == "median":       # about half the documents scanned in full
        kept = np.sort(search_ref(C.toarray().astype(np.float64), logh, grid_shape, stride,
                                  keep, 0.0, k, log_prior)[-1])
        # the middle of the widest gap between the 20th and 80th percentile, so that no
        # document lies where rounding decides
        lo, hi = int(0.2 * len(kept)), int(0.8 * len(kept))
        gap = lo + int(np.argmax(np.diff(kept[lo:hi + 1])))
        min_mass = float(kept[gap] + kept[gap + 1]) / 2
    got = run_kernel(C, logh, log_prior, grid_shape, stride, keep, min_mass, k, 1, dtype,
                     floor)
    # same bits on two threads
    again = run_kernel(C, logh, log_prior, grid_shape, stride, keep, min_mass, k, 2, dtype,
                       floor)
    for a, b in zip(got, again):
        assert np.array_equal(a, b)
    idx, val, loglik, scored = got
    r_idx, r_val, r_loglik, r_scored, full, kept = search_ref(
        C.toarray().astype(np.float64), logh, grid_shape, stride, keep, min_mass, k,
        log_prior, floor)
    # the guard's decisions, away from its boundary (where rounding may decide)
    clear = np.abs(kept - min_mass) > 1e-5
    assert clear.mean() > 0.8 or min_mass >= 1.0
    np.testing.assert_array_equal(scored[clear], r_scored[clear])
    np.testing.assert_array_equal(idx[clear], r_idx[clear])
    np.testing.assert_allclose(val[clear], r_val[clear], atol=tol)
    np.testing.assert_allclose(loglik[clear], r_loglik[clear], rtol=tol)
    if guard == "median" and kept.min() < 1.0:
        assert full.any() and not full.all()      # both branches ran
    # the log-likelihood over the positions scored is at most the exact one
    exact = np.logaddexp.reduce(C.toarray() @ logh + (
        -np.log(L) if log_prior is None else log_prior), axis=1)
    assert (loglik <= exact + 1e-6 * np.abs(exact)).all()


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 1e-4)])
@pytest.mark.parametrize("grid_shape,stride,keep", CASES)
@pytest.mark.parametrize("prior", [False, True])
def test_tracking_matches_reference(dtype, tol, grid_shape, stride, keep, prior):
    """Hints at the rows' positions (tracked), next to them, far away, or none (-1, L):
    the kernel's sets of positions, posteriors and new hints are the reference's, the
    same bits on 1 and 2 threads."""
    C, logh, log_prior = problem(grid_shape, dtype, prior=prior, n_docs=80)
    L = grid_shape[0] * grid_shape[1]
    k = min(8, L)
    exact_map = np.argmax(C.toarray() @ logh + (0 if log_prior is None else log_prior),
                          axis=1)
    rng = np.random.default_rng(4)
    hint = np.where(rng.random(80) < 0.5, exact_map,
                    exact_map + rng.integers(-2, 3, 80) * grid_shape[1]
                    + rng.integers(-2, 3, 80)) % L
    hint[:6] = [-1, L, -5, 0, L - 1, (exact_map[5] + L // 2) % L]
    hint = hint.astype(np.int32)
    ref = track_ref(C.toarray().astype(np.float64), logh, grid_shape, stride, keep, 0.9,
                    k, hint, log_prior)
    runs = []
    for threads in (1, 2):
        h = hint.copy()
        runs.append(run_kernel(C, logh, log_prior, grid_shape, stride, keep, 0.9, k,
                               threads, dtype, hint=h) + (h,))
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)
    idx, val, loglik, scored, new_hint = runs[0]
    r_idx, r_val, r_loglik, r_scored, tracked, r_hint = ref
    # a 1x1 box is all edge (stride 1 never tracks); a box as wide as the grid has none
    if stride > 1 and any(2 * stride - 1 < e for e in grid_shape):
        assert tracked.any() and (~tracked[6:]).any()          # both ways ran
    np.testing.assert_array_equal(scored, r_scored)
    np.testing.assert_array_equal(idx, r_idx)
    np.testing.assert_allclose(val, r_val, atol=tol)
    np.testing.assert_allclose(loglik, r_loglik, rtol=tol)
    np.testing.assert_array_equal(new_hint, r_hint)


def test_tracking_keeps_the_search_where_it_settles():
    """Hints from the search itself: the next E-step under the same logh tracks most rows
    at a fraction of the positions, and places each row where the search did or at a
    better position the search's boxes missed."""
    C, logh, _ = problem((20, 20), np.float64, n_docs=200)
    S = C.toarray() @ logh
    hint = np.full(200, -1, np.int32)
    first = run_kernel(C, logh, None, (20, 20), 3, 4, 0.99, 16, 2, np.float64, hint=hint)
    placed = hint.copy()
    second = run_kernel(C, logh, None, (20, 20), 3, 4, 0.99, 16, 2, np.float64, hint=hint)
    rows = np.arange(200)
    assert (S[rows, hint] >= S[rows, placed]).all()
    assert (hint == placed).mean() > 0.95
    tracked = second[3] < first[3]
    assert tracked.mean() > 0.5 and second[3].sum() < 0.6 * first[3].sum()


def test_tracking_refuses_a_short_hint():
    C, logh, _ = problem((6, 6), np.float64)
    n = C.shape[0]
    with pytest.raises(ValueError, match="hint"):
        _wrappers.estep_search_csr(C.indptr, C.indices, C.data, 0, n, (6, 6), logh, None,
                                   0.0, 3, 4, 0.9, np.empty((n, 4), np.int32),
                                   np.empty((n, 4)), np.empty(n), None, 1, None,
                                   np.zeros(n - 1, np.int32))


def test_scores_are_the_full_scans():
    """Every position scored holds the exact E-step's score: with stride 1 the lattice is
    the grid, so the posterior is the exact one, bit for bit after normalisation of its
    top-k (the same row kernels, the same order of terms)."""
    for dtype in (np.float32, np.float64):
        C, logh, _ = problem((9, 11), dtype)
        n, L = C.shape[0], 99
        idx, val, loglik, scored = run_kernel(C, logh, None, (9, 11), 1, 1, 0.0, L, 2,
                                              dtype)
        q = np.empty((n, L), dtype)
        exact_ll = np.empty(n)
        _wrappers.estep_csr(C.indptr, C.indices, C.data, 0, n, logh.astype(dtype), None,
                            0.0, q, exact_ll, 2)
        dense = np.zeros((n, L), dtype)
        np.put_along_axis(dense, idx, val, axis=1)
        np.testing.assert_allclose(dense, q, rtol=1e-5 if dtype == np.float32 else 1e-12,
                                   atol=1e-30)
        np.testing.assert_allclose(loglik, exact_ll, rtol=1e-6)


def test_fewer_scored_positions_than_k_pad_with_zeros():
    C, logh, _ = problem((6, 6), np.float64)
    idx, val, _, _ = run_kernel(C, logh, None, (6, 6), 3, 1, 0.0, 36, 1, np.float64)
    for row_idx, row_val in zip(idx, val):
        assert len(set(row_idx)) == 36                # every position once
        assert row_val.sum() == pytest.approx(1.0)
        assert np.all(np.diff(row_idx) > 0)           # ascending positions


def test_kernel_refuses_bad_input():
    C, logh, _ = problem((6, 6), np.float64)
    n = C.shape[0]
    idx, val = np.empty((n, 4), np.int32), np.empty((n, 4))
    ll = np.empty(n)
    args = (C.indptr, C.indices, C.data, 0, n)
    with pytest.raises(ValueError, match="grid_shape"):
        _wrappers.estep_search_csr(*args, (5, 6), logh, None, 0.0, 3, 4, 0.9, idx, val, ll)
    with pytest.raises(ValueError, match="stride"):
        _wrappers.estep_search_csr(*args, (6, 6), logh, None, 0.0, 0, 4, 0.9, idx, val, ll)
    with pytest.raises(ValueError, match="min_mass"):
        _wrappers.estep_search_csr(*args, (6, 6), logh, None, 0.0, 3, 4, 1.5, idx, val, ll)
    bad = C.copy()
    bad.indices = bad.indices.copy()
    bad.indices[3] = 10_000
    with pytest.raises(Exception, match="out of range|index"):
        _wrappers.estep_search_csr(bad.indptr, bad.indices, bad.data, 0, n, (6, 6), logh,
                                   None, 0.0, 3, 4, 0.9, idx, val, ll)


@pytest.mark.parametrize("dense_input", [False, True])
@pytest.mark.parametrize("learn_prior", [False, True])
def test_block_statistics_with_search(dense_input, learn_prior):
    dtype = np.float64
    C, logh, log_prior = problem((8, 8), dtype, prior=learn_prior, n_docs=80)
    X = C.toarray() if dense_input else C
    counts = grid_counts(X, np.dtype(dtype))
    search = EStepSearch((8, 8), 2, 2, 0.5, 10)
    stats = GridStatistics(C.shape[1], 64, np.dtype(dtype), learn_prior)
    block_statistics(counts, logh, log_prior, 0.0, 2, stats, search=search)
    idx, val, loglik, scored, full, _ = search_ref(C.toarray(), logh, (8, 8), 2, 2, 0.5, 10,
                                                   log_prior)
    # positions below NEGLIGIBLE_POSTERIOR are left out of the statistics (some are here)
    negligible = (val > 0) & (val < NEGLIGIBLE_POSTERIOR)
    assert negligible.any()
    val = np.where(negligible, 0.0, val)
    np.testing.assert_allclose(stats.n, accumulate_topk_ref(C.toarray(), idx, val, 64),
                               rtol=1e-10, atol=1e-12)
    assert stats.log_likelihood == pytest.approx(loglik.sum(), rel=1e-12)
    assert stats.n_scored == scored.sum()
    assert stats.n_full == full.sum()
    if learn_prior:
        expected = np.zeros(64)
        np.add.at(expected, idx.ravel(), val.ravel())
        np.testing.assert_allclose(stats.qsum, expected, rtol=1e-12)


@pytest.fixture(scope="module")
def corpus():
    from _scale_data import grid_corpus
    return grid_corpus(n_docs=300, n_words=60, extent=(12, 12), window=(3, 3), length=40)


def test_fit_coarse_to_fine_close_to_exact(corpus):
    kw = dict(extent=(12, 12), window=(3, 3), n_iter=30, tol=0, random_state=0,
              window_schedule=None, dtype=np.float64)
    exact = countgrid.CountingGrid(**kw).fit(corpus)
    fast = countgrid.CountingGrid(**kw, estep="coarse-to-fine",
                                  estep_params={"exact_iter": 5}).fit(corpus)
    scored = np.array(fast._estep_scored)
    assert (scored[:5] == 1.0).all()                   # the exact iterations
    assert scored[5:, 0].max() < 0.8                   # then fewer positions
    # the same model to within a small loss of fit
    assert fast.score(corpus) == pytest.approx(exact.score(corpus), rel=0.01)
    # the same seed, the same model whatever the thread count
    again = countgrid.CountingGrid(**kw, estep="coarse-to-fine", num_threads=1,
                                   estep_params={"exact_iter": 5}).fit(corpus)
    np.testing.assert_array_equal(again.pi_, fast.pi_)


def test_fit_tracking_scores_fewer_positions(corpus):
    """Tracking against the search alone (the default): fewer positions scored after the
    first search pass, the same fit; in-memory and chunked (each document tracked by its
    row across chunks) and 1 or 2 threads give the same bits; a new stage starts afresh."""
    from countgrid.streaming import CSRChunks
    kw = dict(extent=(12, 12), window=(3, 3), n_iter=30, tol=0, random_state=0,
              window_schedule=[((5, 5), 4)], dtype=np.float64, estep="coarse-to-fine")
    plain = countgrid.CountingGrid(**kw, estep_params={"exact_iter": 5})
    tracked = countgrid.CountingGrid(**kw, estep_params={"exact_iter": 5, "track": True})
    plain.fit(corpus), tracked.fit(corpus)
    p, t = np.array(plain._estep_scored)[:, 0], np.array(tracked._estep_scored)[:, 0]
    first_search = 6              # the stage's first searching pass has no hints yet
    np.testing.assert_array_equal(t[:first_search], p[:first_search])
    assert t[first_search:].max() < 0.6 * p[first_search:].min()
    assert tracked.score(corpus) == pytest.approx(plain.score(corpus), rel=1e-3)
    one = countgrid.CountingGrid(**kw, estep_params={"exact_iter": 5, "track": True},
                                 num_threads=1)
    np.testing.assert_array_equal(one.fit(corpus).pi_, tracked.pi_)
    # chunks sum their statistics in another order (1e-12); tracked by the wrong rows, the
    # positions scored would differ
    chunked = countgrid.CountingGrid(**kw, estep_params={"exact_iter": 5, "track": True})
    chunked.fit(CSRChunks([corpus[:110], corpus[110:]]))
    np.testing.assert_array_equal(chunked._estep_scored, tracked._estep_scored)
    np.testing.assert_allclose(chunked.pi_, tracked.pi_, rtol=1e-9)


def test_fit_dense_input_and_ring(corpus):
    dense = corpus.toarray()
    model = countgrid.CountingGrid((12, 12), (3, 3), n_iter=8, tol=0,
                                   window_schedule=None, random_state=0,
                                   estep="coarse-to-fine",
                                   estep_params={"exact_iter": 2}).fit(dense)
    assert np.isfinite(model.log_likelihood_).all()
    ring = countgrid.CountingGrid((30,), (3,), n_iter=8, tol=0, window_schedule=None,
                                  random_state=0, estep="coarse-to-fine",
                                  estep_params={"exact_iter": 2}).fit(corpus)
    assert np.array(ring._estep_scored)[2:, 0].min() < 1.0


@pytest.mark.parametrize("params,message", [
    ({"strid": 2}, "unknown keys"),
    ({"stride": 0}, "stride"),
    ({"keep": 1.5}, "keep"),
    ({"min_mass": 2.0}, "min_mass"),
    ({"exact_iter": -1}, "exact_iter"),
    ({"track": "yes"}, "track"),
    ({"track": 1}, "track"),
])
def test_estep_params_checked(corpus, params, message):
    with pytest.raises(ValueError, match=message):
        countgrid.CountingGrid((6, 6), (2, 2), n_iter=2, estep="coarse-to-fine",
                               estep_params=params).fit(corpus)


def test_estep_refusals(corpus):
    with pytest.raises(ValueError, match="estep"):
        countgrid.CountingGrid((6, 6), (2, 2), estep="fast").fit(corpus)
    with pytest.raises(ValueError, match="dimensions"):
        countgrid.CountingGrid((4, 4, 4), (2, 2, 2), n_iter=2,
                               estep="coarse-to-fine").fit(corpus)
    with pytest.raises(ValueError, match="batch"):
        countgrid.CountingGrid((6, 6), (2, 2), n_iter=2, learning_method="online",
                               estep="coarse-to-fine").fit(corpus)
    with pytest.raises(ValueError, match="partial_fit"):
        countgrid.CountingGrid((6, 6), (2, 2), estep="coarse-to-fine").partial_fit(corpus)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_lattice_given_is_the_lattice_built(dtype):
    """run_em builds logh's lattice columns once per E-step (search_lattice) and every
    kernel call reads them: the same bits as a call that builds its own."""
    C, logh, log_prior = problem((10, 14), dtype, prior=True)
    logh = logh.astype(dtype)
    n = C.shape[0]
    lattice = _wrappers.search_lattice(logh, (10, 14), 3)
    np.testing.assert_array_equal(lattice, logh.reshape(-1, 10, 14)[:, ::3, ::3]
                                  .reshape(logh.shape[0], -1))
    outs = []
    for given in (None, lattice):
        idx, val = np.empty((n, 12), np.int32), np.empty((n, 12), dtype)
        ll, sc = np.empty(n), np.empty(n, np.int64)
        _wrappers.estep_search_csr(C.indptr, C.indices, C.data, 0, n, (10, 14), logh,
                                   log_prior.astype(dtype), 0.0, 3, 4, 0.6, idx, val, ll, sc,
                                   2, given)
        outs.append((idx, val, ll, sc))
    for a, b in zip(*outs):
        assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="lattice"):
        _wrappers.estep_search_csr(C.indptr, C.indices, C.data, 0, n, (10, 14), logh, None,
                                   0.0, 3, 4, 0.6, idx, val, ll, sc, 2, lattice[:, :-1].copy())


def test_model_file_keeps_the_estep(tmp_path, corpus):
    from countgrid import io
    model = countgrid.CountingGrid((8, 8), (2, 2), n_iter=4, tol=0, window_schedule=None,
                                   random_state=0, estep="coarse-to-fine",
                                   estep_params={"exact_iter": 1, "stride": 2}).fit(corpus)
    io.save(model, tmp_path / "m.npz")
    loaded = io.load(tmp_path / "m.npz")
    assert loaded.get_params()["estep"] == "coarse-to-fine"
    assert loaded.get_params()["estep_params"] == {"exact_iter": 1, "stride": 2}
    np.testing.assert_array_equal(loaded.pi_, model.pi_)
    assert io._decode(io._encode({"min_mass": 0.5})) == {"min_mass": 0.5}
    for bad in ({"__dict__": [1, 2]}, {"__dict__": {}, "extra": 1}):
        with pytest.raises(ValueError, match="malformed encoded dict"):
            io._decode(bad)
    with pytest.raises(TypeError, match="keys"):
        io._encode({1: 2})
