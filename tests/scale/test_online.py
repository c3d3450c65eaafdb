"""Stepwise (online) EM: partial_fit against a NumPy reference, step sizes, behaviour."""
import numpy as np
import pytest

import countgrid
from countgrid._engine.em_loop import minibatch_rho

from _reference.grid import accumulate_ref, estep_ref, histograms_ref, mstep_ref
from _reference.plsa import docs_ref, words_ref
from _scale_data import grid_corpus


@pytest.fixture(scope="module")
def X():
    return grid_corpus(n_docs=240)


def test_minibatch_rho():
    assert minibatch_rho(0, 10.0, 0.7) == 1.0
    assert minibatch_rho(1, 10.0, 0.7) == pytest.approx(11 ** -0.7)
    assert minibatch_rho(90, 10.0, 0.5) == pytest.approx(0.1)


def _stepwise_grid_ref(batches, pi, extent, window, rho, floor, total, offset, decay,
                       start=0, stats=None):
    """Stepwise EM of docs/scale.md written out with the slow references."""
    for t, C in enumerate(batches, start=start):
        h, logh = histograms_ref(pi, extent, window)
        q, _ = estep_ref(C, logh, None, floor)
        n_b = accumulate_ref(C, q) * (total / C.shape[0])
        r = 1.0 if stats is None else (offset + t) ** -decay
        stats = n_b if stats is None else (1 - r) * stats + r * n_b
        pi = mstep_ref(stats, h, pi, extent, window, rho, 1e-10)
    return pi, stats


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-9), (np.float32, 2e-4)])
@pytest.mark.parametrize("threads", [1, 2])
def test_grid_partial_fit_matches_reference(X, dtype, tol, threads):
    extent, window = (6, 6), (2, 2)
    cg = countgrid.CountingGrid(extent, window, batch_size=60, total_samples=240,
                                random_state=0, dtype=dtype, num_threads=threads,
                                pseudocount=0.01, posterior_floor=0.0)
    cg.partial_fit(X[:120])
    cg.partial_fit(X[120:180])
    start = countgrid.CountingGrid(extent, window, random_state=0, dtype=np.float64)
    pi0 = start._initial_pi(None, extent, X.shape[1], np.dtype(np.float64),
                            np.random.default_rng(0))
    dense = X.toarray()
    pi, _ = _stepwise_grid_ref([dense[:60], dense[60:120], dense[120:180]], pi0, extent,
                               window, 0.01, 0.0, 240, 10.0, 0.7)
    got = cg.pi_.reshape(36, -1).T
    assert cg.n_batch_iter_ == 3
    assert np.max(np.abs(got - pi)) / np.max(pi) < tol


def test_grid_online_fit_improves_and_is_reproducible(X):
    kw = dict(extent=(6, 6), window=(2, 2), n_iter=6, tol=0, random_state=2,
              learning_method="online", batch_size=40)
    a = countgrid.CountingGrid(**kw).fit(X)
    b = countgrid.CountingGrid(**dict(kw, num_threads=1)).fit(X)
    np.testing.assert_array_equal(a.pi_, b.pi_)
    assert a.n_batch_iter_ == 6 * 6 and a.n_iter_ == 6
    same_passes = countgrid.CountingGrid(**dict(kw, learning_method="batch")).fit(X)
    batch = countgrid.CountingGrid(**dict(kw, n_iter=60, learning_method="batch")).fit(X)
    # six passes of minibatches beat six batch iterations (36 M-steps against 6) and get
    # within 2% of 60 batch iterations' log-likelihood
    assert a.score(X) > same_passes.score(X)
    assert a.score(X) > batch.score(X) * 1.02


def test_grid_partial_fit_continues_and_checks_features(X):
    cg = countgrid.CountingGrid((6, 6), (2, 2), batch_size=80, total_samples=240,
                                random_state=0)
    scores = []
    for _ in range(4):
        cg.partial_fit(X)
        scores.append(cg.score(X))
    assert scores[-1] > scores[0]
    assert len(cg.log_likelihood_) == 4 and cg.n_batch_iter_ == 12
    with pytest.raises(ValueError, match="features"):
        cg.partial_fit(X[:, :10])
    assert cg.n_batch_iter_ == 12          # the failed call changed nothing


def test_plsa_partial_fit_matches_reference(X):
    K = 3
    model = countgrid.PLSA(K, batch_size=100, total_samples=200, random_state=0,
                           smoothing=0.0, fold_in_iter=30, fold_in_tol=0.0)
    model.partial_fit(X[:200])
    dense = X[:200].toarray()
    ref_start = countgrid.PLSA(K, random_state=0)
    from countgrid.streaming._blocks import Blocks
    from countgrid._utils.counts import Counts
    data = Blocks(X[:200], lambda M, name, nf: Counts(M, np.float64))
    _, phi = ref_start._initial(np.random.default_rng(0), data, K, np.float64)
    stats = None
    for t, C in enumerate([dense[:100], dense[100:]]):
        theta = np.full((C.shape[0], K), 1.0 / K)
        for _ in range(30):
            theta, _ = docs_ref(C, theta, phi)
        acc = words_ref(C, theta, phi) * (200 / C.shape[0])
        r = 1.0 if stats is None else (10.0 + t) ** -0.7
        stats = acc if stats is None else (1 - r) * stats + r * acc
        phi = stats / stats.sum(axis=0)
    np.testing.assert_allclose(model.components_.T, phi, rtol=1e-9, atol=1e-12)


def test_plsa_online_fit(X):
    kw = dict(n_components=4, n_iter=5, tol=0, random_state=0)
    online = countgrid.PLSA(**kw, learning_method="online", batch_size=60).fit(X)
    batch = countgrid.PLSA(**dict(kw, n_iter=1)).fit(X)
    assert online.doc_topic_.shape == (X.shape[0], 4)
    assert online.score(X) > batch.score(X)
    assert online.n_batch_iter_ == 5 * 4
