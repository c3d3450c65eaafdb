"""One estimator shared between Python threads (docs/robustness.md, "Threads"): a second
fit while one runs is refused with a RuntimeError, so the model is never a mix of two fits;
inference on a fitted estimator from many threads at once gives what one thread gives."""
import threading

import numpy as np
import pytest

import countgrid
from _expected_warnings import FEW_ITERATIONS

X = np.random.default_rng(0).poisson(1.0, (120, 40))


def _fit_in_threads(make, n_threads=4):
    est = make()
    results = [None] * n_threads
    start = threading.Barrier(n_threads)

    def work(i):
        start.wait()
        try:
            est.fit(X)
            results[i] = "ok"
        except RuntimeError as exc:
            results[i] = exc
    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return est, results


@pytest.mark.parametrize("make", [
    lambda: countgrid.RAP(n_components=5, n_epochs=3, random_state=0),
    lambda: countgrid.PLSA(4, n_iter=30, random_state=0),
    lambda: countgrid.CountingGrid((8, 8), (2, 2), n_iter=10, random_state=0),
], ids=["RAP", "PLSA", "CountingGrid"])
def test_a_shared_estimator_is_fitted_by_one_thread_at_a_time(make):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", countgrid.ConvergenceWarning)
        est, results = _fit_in_threads(make)
        serial = make().fit(X)
    refused = [r for r in results if isinstance(r, RuntimeError)]
    assert results.count("ok") >= 1 and len(refused) + results.count("ok") == len(results)
    for exc in refused:
        assert "another thread is fitting this same estimator" in str(exc)
    # whatever fit won, the model is one whole fit
    for name in est._fitted_arrays:
        if hasattr(serial, name):
            a, b = getattr(est, name), getattr(serial, name)
            assert np.array_equal(np.asarray(a), np.asarray(b)), name


@FEW_ITERATIONS  # (not pytest.warns in each thread: catching warnings is process-wide)
def test_refusal_is_per_estimator_and_released():
    """Two estimators fit in two threads at once; after a fit ends the estimator can be
    fitted again from another thread; a fit that raises releases it too."""
    a, b = countgrid.PLSA(3, n_iter=5, random_state=0), countgrid.PLSA(3, n_iter=5,
                                                                       random_state=1)
    errors = []

    def fit(est, data):
        try:
            est.fit(data)
        except Exception as exc:  # noqa: BLE001 - collected
            errors.append(exc)
    threads = [threading.Thread(target=fit, args=(e, X)) for e in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    with pytest.raises(ValueError):
        a.fit(-X)
    t = threading.Thread(target=fit, args=(a, X))
    t.start()
    t.join()
    assert not errors


@pytest.mark.parametrize("method", ["transform", "score_samples"])
def test_inference_from_many_threads_matches_one(method):
    cg = countgrid.CountingGrid((6, 6), (2, 2), n_iter=3, random_state=0, num_threads=1)
    with pytest.warns(countgrid.ConvergenceWarning):
        cg.fit(X)
    expected = getattr(cg, method)(X)
    out = [None] * 6

    def work(i):
        out[i] = getattr(cg, method)(X)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(o, expected) for o in out)
