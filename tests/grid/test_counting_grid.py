"""Properties of the CountingGrid estimator (EM, likelihoods, posteriors, inputs).

Conventions checked here: ``score_samples`` / ``log_likelihood_`` are the
*exact* log-likelihood with the uniform prior ``1/L`` (or ``prior_`` when
learned), i.e. ``logsumexp_k sum_z c_z log h_k(z) - log L`` (docs/counting_grids.md,
"Likelihood conventions"), multinomial coefficient omitted.
"""
import copy

import numpy as np
import pytest
import scipy.sparse as sp


import countgrid  # noqa: E402
from countgrid import CountingGrid  # noqa: E402
from _expected_warnings import FEW_ITERATIONS, LARGE_GRID  # noqa: E402
from _synthetic import (brute_log_likelihood, draw_corpus, mixture_of_unigrams_loglik,  # noqa: E402
                        reference_em_step, true_grid, window_means)

GRIDS = {
    1: ((12,), (3,)),
    2: ((6, 6), (3, 3)),
    3: ((4, 4, 3), (2, 2, 2)),
}


def corpus(extent, window, n_docs=60, n_features=20, doc_length=30, seed=0, sparse=True):
    rng = np.random.default_rng(seed)
    pi = true_grid(extent, n_features, rng)
    X, pos = draw_corpus(pi, window, n_docs, doc_length, rng, sparse=sparse)
    return X, pos, pi


def rel_close(a, b, rtol):
    return abs(a - b) <= rtol * max(abs(a), abs(b))


# ---------------------------------------------------------------- EM monotone
@pytest.mark.parametrize("D", [1, 2, 3])
def test_em_never_decreases_exact_loglik(D):
    extent, window = GRIDS[D]
    X, _, _ = corpus(extent, window, seed=D)
    rng = np.random.default_rng(100 + D)
    init = 1.0 + rng.random(tuple(extent) + (X.shape[1],))
    init /= init.sum(axis=-1, keepdims=True)
    cg = CountingGrid(extent, window, n_iter=25, tol=0, pseudocount=0.0, posterior_floor=0.0,
                      dtype=np.float64, num_threads=1).fit(X, init_pi=init)
    ll = cg.log_likelihood_
    assert ll.dtype == np.float64
    assert ll.shape == (25,) and cg.n_iter_ == 25 and not cg.converged_
    assert np.all(np.isfinite(ll))
    # also the step from the initial grid (not recorded in log_likelihood_)
    ll0 = brute_log_likelihood(init, window, X)[0].sum()
    seq = np.concatenate([[ll0], ll])
    drops = np.diff(seq)
    assert np.all(drops >= -1e-8 * np.abs(seq[:-1])), drops.min()
    # EM actually made progress
    assert seq[-1] > seq[0] + 1.0


# ------------------------------------------------- likelihood conventions
@pytest.mark.parametrize("learn_prior", [False, True])
@pytest.mark.parametrize("D", [1, 2, 3])
def test_score_samples_matches_brute_force(D, learn_prior):
    extent, window = GRIDS[D]
    X, _, _ = corpus(extent, window, seed=10 + D)
    cg = CountingGrid(extent, window, n_iter=8, tol=0, learn_prior=learn_prior,
                      random_state=3, num_threads=1, dtype=np.float64).fit(X)
    s = cg.score_samples(X)
    assert s.shape == (X.shape[0],) and s.dtype == np.float64
    # the training history ends with the score of the training data
    assert rel_close(cg.log_likelihood_[-1], cg.score(X), 1e-9)
    assert rel_close(cg.score(X), float(np.sum(s)), 1e-12)
    # h_ are the window means of pi_
    assert cg.pi_.shape == tuple(extent) + (X.shape[1],)
    np.testing.assert_allclose(cg.pi_.sum(axis=-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(cg.h_, window_means(cg.pi_, window), rtol=1e-10, atol=1e-15)
    # brute force from pi_ alone (np.roll window means, logsumexp - log L)
    log_prior = np.log(cg.prior_).ravel() if learn_prior else None
    ref, _ = brute_log_likelihood(cg.pi_, window, X, log_prior=log_prior)
    np.testing.assert_allclose(s, ref, rtol=1e-9)


def test_worked_example_spec_section_10():
    z1 = np.array([[0.9, 0.8, 0.5], [0.7, 0.5, 0.2], [0.4, 0.2, 0.1]])
    pi = np.stack([z1, 1 - z1], axis=-1)
    cg = CountingGrid((3, 3), (2, 2), n_iter=1, tol=0, pseudocount=0.0, posterior_floor=0.0,
                      num_threads=1).fit(sp.csr_matrix([[2, 1]]), init_pi=pi)
    # overwrite with the worked example's grid (what a loaded model would be)
    cg.pi_ = pi
    cg.h_ = window_means(pi, (2, 2))
    np.testing.assert_allclose(cg.h_[..., 0], [[0.725, 0.5, 0.575], [0.45, 0.25, 0.35],
                                               [0.575, 0.4, 0.475]], atol=1e-12)
    c = sp.csr_matrix([[2.0, 1.0]])
    np.testing.assert_allclose(cg.score_samples(c), [-2.194323], atol=1e-6)
    q = cg.transform(c).reshape(3, 3)
    np.testing.assert_allclose(q, [[0.144128, 0.124638, 0.140108],
                                   [0.111052, 0.046739, 0.079394],
                                   [0.140108, 0.095722, 0.118110]], atol=1e-6)


# ---------------------------------------------------------------- posteriors
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_transform_positions_and_empty_document(dtype):
    extent, window = (6, 6), (3, 3)
    X, _, _ = corpus(extent, window, seed=5)
    cg = CountingGrid(extent, window, n_iter=10, tol=0, dtype=dtype, random_state=0,
                      num_threads=1).fit(X)
    L = 36
    Xe = sp.vstack([X[:10], sp.csr_matrix((1, X.shape[1])), X[10:20]]).tocsr()
    Q = cg.transform(Xe)
    assert Q.shape == (21, L)
    assert Q.dtype == dtype
    eps = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, rtol=eps)
    assert (Q >= 0).all()
    # floor respected
    assert Q.min() >= cg.posterior_floor_ * (1 - 1e-3)
    # empty document: uniform posterior, log-likelihood log sum_k (1/L) * 1 = 0
    np.testing.assert_allclose(Q[10], np.full(L, 1.0 / L), rtol=eps)
    s = cg.score_samples(Xe)
    assert s[10] == pytest.approx(0.0, abs=1e-12)
    assert np.all(s[np.arange(21) != 10] < 0)
    # positions = unravel(argmax(transform))
    P = cg.positions(Xe)
    assert P.shape == (21, 2) and P.dtype == np.int64
    expect = np.stack(np.unravel_index(np.argmax(Q, axis=1), extent), axis=1)
    np.testing.assert_array_equal(P, expect)
    assert ((P >= 0) & (P < np.array(extent))).all()
    # posteriors agree with the brute force (floored and renormalised)
    if dtype == np.float64:
        _, qref = brute_log_likelihood(cg.pi_, window, Xe)
        qref = np.maximum(qref, cg.posterior_floor_)
        qref /= qref.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(Q, qref, rtol=1e-8, atol=1e-14)


@FEW_ITERATIONS
def test_positions_find_true_neighbourhoods():
    """Documents drawn from the same true window end up close on the learned grid."""
    extent, window = (8, 8), (3, 3)
    rng = np.random.default_rng(11)
    pi = true_grid(extent, 30, rng)
    X, pos = draw_corpus(pi, window, 240, 60, rng)
    cg = CountingGrid(extent, window, n_iter=40, random_state=0, num_threads=1).fit(X)
    P = cg.positions(X)

    def tdist(a, b, E):
        d = np.abs(a[:, None, :] - b[None, :, :])
        d = np.minimum(d, np.array(E) - d)
        return np.sqrt((d ** 2).sum(-1))

    true_d = tdist(pos, pos, extent)
    learned_d = tdist(P, P, extent)
    iu = np.triu_indices(len(pos), 1)
    same = true_d[iu] == 0
    far = true_d[iu] >= 3
    assert same.sum() > 20 and far.sum() > 1000
    # pairs from the same true window are much closer than far-apart pairs
    assert learned_d[iu][same].mean() < 0.5 * learned_d[iu][far].mean()


# ------------------------------------------------------- thread determinism
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["sparse", "dense"])
def test_same_seed_bit_identical_across_threads(dtype, kind):
    extent, window = (8, 8), (3, 3)
    rng = np.random.default_rng(7)
    pi = true_grid(extent, 40, rng)
    # dense: every document has many distinct words (density >= 25 %: BLAS path)
    X, _ = draw_corpus(pi, window, 120, 200 if kind == "dense" else 30, rng,
                       sparse=kind == "sparse")
    if kind == "dense":
        assert np.count_nonzero(X) / X.size >= 0.25
    models = [CountingGrid(extent, window, n_iter=12, tol=0, dtype=dtype, random_state=42,
                           num_threads=nt).fit(X) for nt in (1, 2)]
    a, b = models
    assert a.pi_.dtype == dtype
    assert np.array_equal(a.pi_, b.pi_)
    assert np.array_equal(a.h_, b.h_)
    assert np.array_equal(a.log_likelihood_, b.log_likelihood_)
    assert np.array_equal(a.transform(X), b.transform(X))
    # and a different seed gives a different grid
    c = CountingGrid(extent, window, n_iter=12, tol=0, dtype=dtype, random_state=43,
                     num_threads=1).fit(X)
    assert not np.array_equal(a.pi_, c.pi_)


# ------------------------------------------------------------- torus rolling
@pytest.mark.parametrize("D,shift", [(1, (5,)), (2, (2, 5)), (2, (-1, 3)), (3, (1, 3, 2))])
def test_rolling_the_grid(D, shift):
    extent, window = GRIDS[D]
    X, _, _ = corpus(extent, window, seed=20 + D)
    cg = CountingGrid(extent, window, n_iter=6, tol=0, random_state=1, num_threads=1).fit(X)
    axes = tuple(range(D))
    rolled = copy.deepcopy(cg)
    rolled.pi_ = np.roll(cg.pi_, shift, axis=axes)
    rolled.h_ = np.roll(cg.h_, shift, axis=axes)
    np.testing.assert_allclose(rolled.score_samples(X), cg.score_samples(X), rtol=1e-10)
    Q = cg.transform(X).reshape((-1,) + tuple(extent))
    Qr = rolled.transform(X).reshape((-1,) + tuple(extent))
    np.testing.assert_allclose(Qr, np.roll(Q, shift, axis=tuple(a + 1 for a in axes)),
                               rtol=1e-10, atol=1e-15)
    # rolled positions are the positions shifted on the torus
    np.testing.assert_array_equal(rolled.positions(X),
                                  (cg.positions(X) + np.array(shift)) % np.array(extent))


# ------------------------------------------------------------- learning
@FEW_ITERATIONS
def test_fit_recovers_structure_beats_baselines():
    extent, window = (8, 8), (3, 3)
    rng = np.random.default_rng(1)
    pi = true_grid(extent, 30, rng)
    Xtr, _ = draw_corpus(pi, window, 300, 40, rng)
    Xte, _ = draw_corpus(pi, window, 100, 40, rng)
    tokens = Xte.sum()
    cg = CountingGrid(extent, window, n_iter=60, random_state=0, num_threads=1).fit(Xtr)
    cg_ll = cg.score(Xte) / tokens
    # a random grid
    rnd = copy.deepcopy(cg)
    rnd.pi_ = 1.0 + np.random.default_rng(5).random(cg.pi_.shape)
    rnd.pi_ /= rnd.pi_.sum(axis=-1, keepdims=True)
    rnd.h_ = window_means(rnd.pi_, window)
    rnd_ll = rnd.score(Xte) / tokens
    # mixtures of unigrams with 1 and kappa = L / |W| ~ 7 components
    uni_ll = mixture_of_unigrams_loglik(Xtr, Xte, 1, np.random.default_rng(0)) / tokens
    mou_ll = mixture_of_unigrams_loglik(Xtr, Xte, 7, np.random.default_rng(0)) / tokens
    true_ll = brute_log_likelihood(pi, window, Xte)[0].sum() / tokens
    assert cg_ll > rnd_ll + 0.2
    assert cg_ll > uni_ll + 0.2
    assert cg_ll > mou_ll
    # and it cannot be (much) better than the truth on held-out data
    assert cg_ll < true_ll + 0.02
    assert cg_ll > true_ll - 0.15


def test_tolerance_stops_early():
    X, _, _ = corpus((6, 6), (3, 3), seed=2)
    cg = CountingGrid((6, 6), (3, 3), n_iter=200, tol=1e-3, min_iter=5, random_state=0,
                      num_threads=1).fit(X)
    assert cg.converged_
    assert 5 <= cg.n_iter_ < 200
    assert cg.log_likelihood_.shape == (cg.n_iter_,)
    f = cg.log_likelihood_ / X.sum()
    assert (f[-1] - f[-2]) / abs(0.5 * (f[-1] + f[-2])) < 1e-3
    # tol=0 runs exactly n_iter iterations
    cg0 = CountingGrid((6, 6), (3, 3), n_iter=7, tol=0, random_state=0, num_threads=1).fit(X)
    assert cg0.n_iter_ == 7 and cg0.log_likelihood_.shape == (7,) and not cg0.converged_


def test_window_schedule_runs_and_matters():
    extent = (10, 10)
    X, _, _ = corpus(extent, (3, 3), n_docs=80, seed=4)
    base = dict(n_iter=10, tol=0, random_state=0, num_threads=1)
    a = CountingGrid(extent, (3, 3), window_schedule=[(4, 4)], **base, dtype=np.float64).fit(X)
    b = CountingGrid(extent, (3, 3), **base, dtype=np.float64).fit(X)
    c = CountingGrid(extent, (3, 3), window_schedule=[((5, 5), 3), (4, 4)], **base, dtype=np.float64).fit(X)
    for m in (a, c):
        assert m.pi_.shape == extent + (X.shape[1],)
        np.testing.assert_allclose(m.pi_.sum(axis=-1), 1.0, rtol=1e-12)
        assert m.log_likelihood_.shape == (10,) and m.n_iter_ == 10
        # the reported history belongs to the target window
        assert rel_close(m.log_likelihood_[-1], m.score(X), 1e-9)
        np.testing.assert_allclose(m.h_, window_means(m.pi_, (3, 3)), rtol=1e-10)
    assert not np.allclose(a.pi_, b.pi_)
    assert not np.allclose(a.pi_, c.pi_)


def test_window_schedule_equals_chained_fits():
    """A schedule [(4, 4), 3 iterations] = fit with (4, 4), then refit from its pi_."""
    extent = (8, 8)
    X, _, _ = corpus(extent, (3, 3), n_docs=50, seed=9)
    kw = dict(tol=0, pseudocount=0.01, random_state=0, num_threads=1)
    sched = CountingGrid(extent, (3, 3), n_iter=4, window_schedule=[((4, 4), 3)], **kw).fit(X)
    first = CountingGrid(extent, (4, 4), n_iter=3, **kw).fit(X)
    second = CountingGrid(extent, (3, 3), n_iter=4, **kw).fit(X, init_pi=first.pi_)
    np.testing.assert_allclose(sched.pi_, second.pi_, rtol=1e-10, atol=1e-300)


def test_learn_prior():
    extent, window = (6, 6), (3, 3)
    X, _, _ = corpus(extent, window, seed=6)
    cg = CountingGrid(extent, window, n_iter=10, tol=0, learn_prior=True, random_state=0,
                      num_threads=1, dtype=np.float64).fit(X)
    assert cg.prior_.shape == extent
    assert cg.prior_.sum() == pytest.approx(1.0, rel=1e-10)
    assert (cg.prior_ > 0).all()
    assert cg.prior_.std() > 1e-3  # not the uniform prior
    # refitting without learn_prior removes it
    cg.set_params(learn_prior=False).fit(X)
    assert not hasattr(cg, "prior_")
    plain = CountingGrid(extent, window, n_iter=10, tol=0, random_state=0, num_threads=1, dtype=np.float64).fit(X)
    assert not hasattr(plain, "prior_")


def test_learned_prior_is_eq10_sum_of_posteriors():
    """One EM step from init_pi: prior_ ∝ sum_t q_t(k) (draft eq. 10)."""
    extent, window = (6, 6), (2, 3)
    X, _, _ = corpus(extent, window, seed=8)
    rng = np.random.default_rng(3)
    init = 1.0 + rng.random(extent + (X.shape[1],))
    cg = CountingGrid(extent, window, n_iter=1, tol=0, learn_prior=True, posterior_floor=0.0,
                      num_threads=1, dtype=np.float64).fit(X, init_pi=init)
    init = init / init.sum(axis=-1, keepdims=True)
    _, q = brute_log_likelihood(init, window, X)
    expect = q.sum(axis=0)
    expect /= expect.sum()
    np.testing.assert_allclose(cg.prior_.ravel(), expect, rtol=1e-8, atol=1e-12)


# ---------------------------------------------------------------- init_pi
def test_init_pi_one_em_step_matches_reference():
    extent, window = (5, 6), (2, 3)
    X, _, _ = corpus(extent, window, seed=12)
    rng = np.random.default_rng(4)
    init = 1.0 + rng.random(extent + (X.shape[1],))
    cg = CountingGrid(extent, window, n_iter=1, tol=0, num_threads=1,
                      random_state=0, dtype=np.float64).fit(X, init_pi=init)
    L = 30
    rho = X.sum(axis=1).mean() / (2.5 * L)
    assert cg.pseudocount_ == pytest.approx(rho, rel=1e-12)
    assert cg.posterior_floor_ == pytest.approx(1.0 / (1e7 * L), rel=1e-12)
    init_n = init / init.sum(axis=-1, keepdims=True)
    expect, _ = reference_em_step(init_n, window, X, rho, cg.posterior_floor_)
    np.testing.assert_allclose(cg.pi_, expect, rtol=1e-9)
    # random_state is irrelevant when init_pi is given; (L, Z) shape is accepted too
    other = CountingGrid(extent, window, n_iter=1, tol=0, num_threads=1,
                         random_state=123, dtype=np.float64).fit(X, init_pi=init.reshape(L, -1))
    assert np.array_equal(other.pi_, cg.pi_)
    # a different init gives a different result
    init2 = 1.0 + np.random.default_rng(5).random(init.shape)
    cg2 = CountingGrid(extent, window, n_iter=1, tol=0, num_threads=1, dtype=np.float64).fit(X, init_pi=init2)
    assert not np.allclose(cg2.pi_, cg.pi_)


@pytest.mark.parametrize("bad", ["shape", "zero", "negative", "nan", "inf", "transposed"])
def test_invalid_init_pi_raises(bad):
    extent, window = (4, 4), (2, 2)
    X, _, _ = corpus(extent, window, n_docs=10, n_features=5, seed=1)
    init = np.ones(extent + (5,))
    if bad == "shape":
        init = np.ones(extent + (6,))
    elif bad == "zero":
        init[0, 0, 0] = 0.0
    elif bad == "negative":
        init[1, 2, 3] = -0.5
    elif bad == "nan":
        init[1, 2, 3] = np.nan
    elif bad == "inf":
        init[1, 2, 3] = np.inf
    elif bad == "transposed":
        init = np.ones((5, 16))
    with pytest.raises(ValueError, match="init_pi"):
        CountingGrid(extent, window, n_iter=1, num_threads=1).fit(X, init_pi=init)


# ---------------------------------------------------------- float32 / float64
def test_float32_and_float64_agree():
    extent, window = (6, 6), (3, 3)
    X, _, _ = corpus(extent, window, n_docs=80, seed=14)
    rng = np.random.default_rng(2)
    init = 1.0 + rng.random(extent + (X.shape[1],))
    fits = {dt: CountingGrid(extent, window, n_iter=10, tol=0, dtype=dt, num_threads=1)
            .fit(X, init_pi=init) for dt in (np.float32, np.float64)}
    a, b = fits[np.float32], fits[np.float64]
    assert a.pi_.dtype == np.float32 and a.h_.dtype == np.float32
    assert b.pi_.dtype == np.float64
    assert a.log_likelihood_.dtype == np.float64
    np.testing.assert_allclose(a.log_likelihood_, b.log_likelihood_, rtol=1e-3)
    assert rel_close(a.score(X), b.score(X), 1e-3)
    np.testing.assert_allclose(a.pi_, b.pi_, rtol=2e-2, atol=1e-4)


# ---------------------------------------------------------- input formats
def _csr_int64(X):
    X = sp.csr_matrix(X, copy=True)
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    return X


INPUTS = {
    "csr_int32": lambda X: sp.csr_matrix(X),
    "csr_int64": _csr_int64,
    "csc": lambda X: sp.csc_matrix(X),
    "coo": lambda X: sp.coo_matrix(X),
    "csr_array_float": lambda X: sp.csr_array(X.astype(np.float64)),
    "csr_unsorted_duplicates": None,  # built below
    "dense": lambda X: X.toarray(),
    "dense_list": lambda X: X.toarray().tolist(),
}


def _unsorted_duplicates(X):
    """Same counts, stored with reversed (unsorted) indices, each count split
    into two duplicate entries, plus an explicit zero per entry."""
    X = sp.csr_matrix(X)
    data, indices, indptr = [], [], [0]
    for t in range(X.shape[0]):
        s, e = X.indptr[t], X.indptr[t + 1]
        for j, v in zip(X.indices[s:e][::-1], X.data[s:e][::-1]):
            data += [v - v // 2, v // 2, 0]
            indices += [j, j, (j + 1) % X.shape[1]]
        indptr.append(len(data))
    out = sp.csr_matrix(X.shape, dtype=np.float64)
    out.data = np.array(data, dtype=np.float64)
    out.indices = np.array(indices, dtype=np.int32)
    out.indptr = np.array(indptr, dtype=np.int32)
    out.has_sorted_indices = False
    out.has_canonical_format = False
    assert out.nnz > 2 * X.nnz and np.array_equal(out.toarray(), X.toarray())
    return out


INPUTS["csr_unsorted_duplicates"] = _unsorted_duplicates


@pytest.mark.parametrize("kind", list(INPUTS))
def test_input_formats_give_the_same_model(kind):
    extent, window = (6, 6), (3, 3)
    rng = np.random.default_rng(15)
    pi = true_grid(extent, 12, rng)
    # long documents on few features: dense enough for the dense (BLAS) path
    Xs, _ = draw_corpus(pi, window, 40, 60, rng)
    Xs = sp.csr_matrix(Xs)
    conv = INPUTS[kind](Xs)
    if kind == "csr_int64":
        assert conv.indices.dtype == np.int64
    if kind == "csr_int32":
        assert conv.indices.dtype == np.int32
    kw = dict(n_iter=6, tol=0, random_state=0, num_threads=1)
    ref = CountingGrid(extent, window, **kw, dtype=np.float64).fit(Xs)
    m = CountingGrid(extent, window, **kw, dtype=np.float64).fit(conv)
    np.testing.assert_allclose(m.pi_, ref.pi_, rtol=1e-8, atol=1e-300)
    np.testing.assert_allclose(m.log_likelihood_, ref.log_likelihood_, rtol=1e-8)
    np.testing.assert_allclose(m.score_samples(conv), ref.score_samples(Xs), rtol=1e-8)
    np.testing.assert_allclose(m.transform(conv), ref.transform(Xs), rtol=1e-8, atol=1e-14)


@pytest.mark.parametrize("n_features", [7, 16])
def test_dense_input_scores_match_brute_force(n_features):
    """Dense input (the BLAS path) must compute the same as the sparse path.

    n_features == L (16 on a 4x4 grid) is the case where a wrongly transposed
    GEMM does not raise but silently computes garbage."""
    extent, window = (4, 4), (2, 2)
    rng = np.random.default_rng(16)
    pi = true_grid(extent, n_features, rng)
    Xs, _ = draw_corpus(pi, window, 20, 80, rng)
    cg = CountingGrid(extent, window, n_iter=3, tol=0, random_state=0, num_threads=1, dtype=np.float64).fit(Xs)
    Xd = Xs.toarray()
    assert np.count_nonzero(Xd) / Xd.size >= 0.25
    ref, _ = brute_log_likelihood(cg.pi_, window, Xd)
    np.testing.assert_allclose(cg.score_samples(Xd), ref, rtol=1e-9)
    np.testing.assert_allclose(cg.transform(Xd), cg.transform(Xs), rtol=1e-9, atol=1e-14)


# ---------------------------------------------------------- blocks, stability
@pytest.mark.parametrize("learn_prior", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_processing_gives_the_same_model(monkeypatch, learn_prior, dtype):
    """Documents are processed in blocks of rows; tiny blocks (7 rows, not a
    divisor of n) must give the same model as one block."""
    import countgrid.grid._em as em

    extent, window = (6, 6), (3, 3)
    X, _, _ = corpus(extent, window, n_docs=50, seed=17)
    kw = dict(n_iter=5, tol=0, random_state=0, num_threads=1, learn_prior=learn_prior,
              dtype=dtype)
    ref = CountingGrid(extent, window, **kw).fit(X)
    Q_ref, s_ref, P_ref = ref.transform(X), ref.score_samples(X), ref.positions(X)
    monkeypatch.setattr(em, "BLOCK_ELEMENTS", 7 * 36)
    assert em.block_rows(50, 36) == 7
    m = CountingGrid(extent, window, **kw).fit(X)
    # float32: the per-block accumulation order changes the rounding
    rtol = 1e-3 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(m.pi_, ref.pi_, rtol=rtol, atol=1e-30)
    np.testing.assert_allclose(m.log_likelihood_, ref.log_likelihood_, rtol=rtol)
    np.testing.assert_allclose(m.score_samples(X), s_ref, rtol=rtol)
    np.testing.assert_allclose(m.transform(X), Q_ref, rtol=rtol, atol=1e-12)
    np.testing.assert_array_equal(m.positions(X), P_ref)


def test_long_documents_are_numerically_stable():
    extent, window = (6, 6), (3, 3)
    X, _, _ = corpus(extent, window, n_docs=20, seed=18)
    cg = CountingGrid(extent, window, n_iter=5, tol=0, random_state=0, num_threads=1, dtype=np.float64).fit(X)
    big = X * 10000  # log-likelihoods around -1e6
    s = cg.score_samples(big)
    assert np.isfinite(s).all()
    ref, _ = brute_log_likelihood(cg.pi_, window, big)
    np.testing.assert_allclose(s, ref, rtol=1e-10)
    Q = cg.transform(big)
    assert np.isfinite(Q).all()
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, rtol=1e-12)
    # essentially one-hot posteriors
    assert (Q.max(axis=1) > 0.99).all()
    # and fitting on them works
    m = CountingGrid(extent, window, n_iter=3, tol=0, random_state=0, num_threads=1, dtype=np.float64).fit(big)
    assert np.isfinite(m.log_likelihood_).all() and np.isfinite(m.pi_).all()


def test_empty_document_gets_the_learned_prior():
    extent, window = (6, 6), (3, 3)
    X, _, _ = corpus(extent, window, seed=19)
    cg = CountingGrid(extent, window, n_iter=5, tol=0, learn_prior=True, random_state=0,
                      num_threads=1, dtype=np.float64).fit(X)
    E = sp.csr_matrix((2, X.shape[1]))
    Q = cg.transform(E)
    floor = cg.posterior_floor_
    expect = np.maximum(cg.prior_.ravel(), floor)
    expect /= expect.sum()
    np.testing.assert_allclose(Q, np.tile(expect, (2, 1)), rtol=1e-8)
    np.testing.assert_allclose(cg.score_samples(E), 0.0, atol=1e-12)


@pytest.mark.parametrize("extent,window", [((1,), (1,)), ((1, 1), (1, 1)), ((4, 4), (4, 4)),
                                           ((3, 1), (1, 1)), ((2, 2, 2, 2), (1, 2, 1, 2)),
                                           ((7,), (1,))])
def test_degenerate_grids(extent, window):
    X, _, _ = corpus((4,), (2,), n_docs=15, n_features=6, seed=21)
    cg = CountingGrid(extent, window, n_iter=3, tol=0, random_state=0, num_threads=1, dtype=np.float64).fit(X)
    L = int(np.prod(extent))
    assert cg.pi_.shape == tuple(extent) + (6,)
    ref, qref = brute_log_likelihood(cg.pi_, window, X)
    np.testing.assert_allclose(cg.score_samples(X), ref, rtol=1e-10)
    Q = cg.transform(X)
    assert Q.shape == (15, L)
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, rtol=1e-12)
    assert cg.positions(X).shape == (15, len(extent))
    if window == extent:
        # every window is the whole grid: all positions are equivalent
        np.testing.assert_allclose(Q, 1.0 / L, rtol=1e-10)


@FEW_ITERATIONS
@LARGE_GRID
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_loaded_h_is_derived_bit_for_bit_a_block_of_words_at_a_time(dtype, tmp_path):
    """Model files do not store h_: loading derives it from pi_ a block of words at a time
    (655 words per block on 40x40, so 3,000 words take five), exactly as the fit did."""
    X = sp.random(60, 3000, density=0.05, random_state=0, format="csr") * 5
    cg = CountingGrid((40, 40), (4, 4), n_iter=2, dtype=dtype, window_schedule=None,
                      random_state=0).fit(X)
    countgrid.io.save(cg, tmp_path / "m.npz")
    back = countgrid.io.load(tmp_path / "m.npz")
    assert back.h_.dtype == cg.h_.dtype and back.h_.flags.c_contiguous
    np.testing.assert_array_equal(back.h_, cg.h_)
