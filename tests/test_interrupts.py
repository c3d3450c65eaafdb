"""Ctrl-C during a fit leaves the estimator unfitted or at its last complete EM update, and
says which (countgrid._base._transactional; docs/architecture.md, "Interrupted fits").

The interrupt is injected deterministically (a KeyboardInterrupt raised from inside the
E-step after a given number of updates), and once for real (SIGINT from a timer thread)."""
import os
import signal
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid.grid import _em
from countgrid.topics import _plsa

from _expected_warnings import FEW_ITERATIONS
from _synthetic import draw_corpus, true_grid

pytestmark = FEW_ITERATIONS


@pytest.fixture(scope="module")
def corpus():
    rng = np.random.default_rng(0)
    X, _ = draw_corpus(true_grid((8, 8), 30, rng), (3, 3), 120, 40, rng)
    return X


def _interrupt_at_call(monkeypatch, module, name, call):
    real = getattr(module, name)
    calls = {"n": 0}

    def wrapped(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == call:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapped)


@pytest.mark.parametrize("learn_prior", [False, True])
@pytest.mark.parametrize("call", [1, 2, 5])
def test_counting_grid_keeps_its_last_complete_update(monkeypatch, corpus, call, learn_prior):
    params = dict(extent=(8, 8), window=(3, 3), random_state=0, tol=0.0, min_iter=0,
                  learn_prior=learn_prior)
    cg = countgrid.CountingGrid(n_iter=20, **params)
    _interrupt_at_call(monkeypatch, _em, "blocked_estep", call)
    with pytest.raises(KeyboardInterrupt) as info:
        cg.fit(corpus)
    note = " ".join(getattr(info.value, "__notes__", []))
    monkeypatch.undo()
    done = call - 1
    if done == 0:
        assert not hasattr(cg, "pi_") and "unfitted" in note
        return
    assert f"after {done} EM updates" in note
    assert cg.n_iter_ == done
    reference = countgrid.CountingGrid(n_iter=done, **params).fit(corpus)
    np.testing.assert_array_equal(cg.pi_, reference.pi_)
    np.testing.assert_array_equal(cg.h_, reference.h_)
    if learn_prior:
        np.testing.assert_array_equal(cg.prior_, reference.prior_)
    np.testing.assert_array_equal(cg.transform(corpus), reference.transform(corpus))


def test_counting_grid_interrupted_in_a_schedule_stage(monkeypatch, corpus):
    cg = countgrid.CountingGrid((8, 8), (3, 3), window_schedule=[((5, 5), 4)], n_iter=10,
                                random_state=0, tol=0.0, min_iter=0)
    _interrupt_at_call(monkeypatch, _em, "blocked_estep", 3)
    with pytest.raises(KeyboardInterrupt) as info:
        cg.fit(corpus)
    assert "window (5, 5) stage" in " ".join(info.value.__notes__)
    assert cg.n_iter_ == 2 and np.isfinite(cg.transform(corpus)).all()


def test_a_refit_interrupted_at_once_does_not_keep_the_old_model(monkeypatch, corpus):
    cg = countgrid.CountingGrid((8, 8), (3, 3), n_iter=3, random_state=0).fit(corpus)
    _interrupt_at_call(monkeypatch, _em, "blocked_estep", 1)
    with pytest.raises(KeyboardInterrupt):
        cg.fit(corpus[:50])
    assert not hasattr(cg, "pi_") and not hasattr(cg, "n_features_in_")


@pytest.mark.parametrize("call", [1, 3])
def test_plsa_keeps_its_last_complete_update(monkeypatch, corpus, call):
    params = dict(n_components=4, random_state=0, tol=0.0, tempered=False)
    model = countgrid.PLSA(n_iter=20, **params)
    _interrupt_at_call(monkeypatch, _plsa.PLSA, "_step", call)
    with pytest.raises(KeyboardInterrupt) as info:
        model.fit(corpus)
    monkeypatch.undo()
    done = call - 1
    if done == 0:
        assert not hasattr(model, "components_")
        return
    assert f"after {done} EM updates" in " ".join(info.value.__notes__)
    reference = countgrid.PLSA(n_iter=done, **params).fit(corpus)
    np.testing.assert_array_equal(model.components_, reference.components_)
    np.testing.assert_array_equal(model.doc_topic_, reference.doc_topic_)


def test_plsa_interrupted_while_tempering_is_unfitted(monkeypatch, corpus):
    """Tempered EM (the default in memory) checkpoints only in its last phase: stopped
    while choosing beta, the model is left unfitted."""
    model = countgrid.PLSA(n_components=4, n_iter=20, random_state=0, tempered=True)
    _interrupt_at_call(monkeypatch, _plsa.PLSA, "_step", 3)
    with pytest.raises(KeyboardInterrupt):
        model.fit(corpus)
    assert not hasattr(model, "components_") and not hasattr(model, "beta_")


def test_embedding_interrupted_is_unfitted(monkeypatch, corpus):
    y = np.arange(corpus.shape[0]) % 2
    emb = countgrid.MixtureOfTopics(n_components=3, n_iter=10, random_state=0)
    _interrupt_at_call(monkeypatch, _plsa.PLSA, "_step", 15)  # inside the second model
    with pytest.raises(KeyboardInterrupt):
        emb.fit(corpus, y)
    assert not hasattr(emb, "models_") and not hasattr(emb, "classes_")


def test_real_sigint_during_a_counting_grid_fit(corpus):
    """SIGINT from another thread: honoured within a fraction of the fit's time, and the
    estimator is either unfitted or a usable model of its last complete update."""
    X = sp.vstack([corpus] * 20, format="csr")
    cg = countgrid.CountingGrid((24, 24), (4, 4), n_iter=400, tol=0.0, min_iter=0,
                                random_state=0, num_threads=1)
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            cg.fit(X)
    finally:
        timer.cancel()
    elapsed = time.perf_counter() - start
    assert elapsed < 30
    if hasattr(cg, "pi_"):
        assert 1 <= cg.n_iter_ < 400
        q = cg.transform(X[:5])
        np.testing.assert_allclose(q.sum(axis=1), 1.0, rtol=1e-6)
