"""Property tests (hypothesis) over every public estimator, the IT kernels and the retrieval
metrics: the randomized complement of the hostile suite (tests/hostile), which walks fixed
bad inputs.  Inputs are generated valid and edge cases: shapes down to one row and one
feature (zero rows or features must be refused), all-zero rows and columns, every dtype
(int32, int64, uint8, bool, float32, float64), every container (ndarray, list of lists,
every scipy.sparse format) and counts scaled by powers of ten across the float range.

The invariants: fit either refuses with a ValueError/TypeError/MemoryError naming an
argument or returns a model whose fitted float arrays are finite; inference gives the right
number of rows, finite values, probabilities that sum to 1, predictions among classes_;
the same values in every container give the same model and outputs; row-wise inference is
permutation-equivariant; the same seed gives the same model whatever the thread count
(where docs promise it).  The kernels: symmetry, the bounds and special cases of
docs/kernels.md, invariance to the rescalings the definitions are invariant to, agreement
of dense, sparse and mixed inputs.  Every test is derandomized (reproducible in CI).
"""
import os
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, assume, event, given, note, settings
from hypothesis import strategies as st

from _strategies import CONTAINERS, count_cases, labels
from _synthetic import fitted_state
from test_common import CASES, INFERENCE

pytestmark = [pytest.mark.filterwarnings("ignore::countgrid.exceptions.ConvergenceWarning")]

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


#: A deeper search than CI's: COUNTGRID_PROPERTY_EXAMPLES=k runs k times the examples of
#: every test (still derandomized: a failure found so is reproduced with the same k);
#: COUNTGRID_PROPERTY_RANDOM=1 draws new examples (reproduce with pytest's --hypothesis-seed).
_SCALE = float(os.environ.get("COUNTGRID_PROPERTY_EXAMPLES", "1"))
_DERANDOMIZE = os.environ.get("COUNTGRID_PROPERTY_RANDOM", "0") in ("", "0")


def _settings(n):
    return settings(max_examples=max(1, int(n * _SCALE)), deadline=None,
                    derandomize=_DERANDOMIZE, suppress_health_check=_HEALTH)


# ---------------------------------------------------------------------------------------
# helpers

_COUNT_ESTIMATORS = sorted(n for n in CASES if CASES[n][1] != "histogram")


def names_an_argument(exc, names):
    """True when the message of ``exc`` contains one of ``names`` as a word."""
    msg = str(exc)
    return any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", msg)
               for n in names)


def argument_names(est, *extra):
    return {"X", "y", *extra} | set(est.get_params(deep=False))


def make_estimator(name, num_threads=1):
    """A small instance from CASES.  One thread unless asked: on a shared 2-core machine an
    OpenMP team of 2 on these tiny problems is up to 100 times slower (threads waiting for
    each other); the thread count is a property of its own (test_determinism)."""
    est = CASES[name][0]()
    if "num_threads" in est.get_params(deep=False):
        est.set_params(num_threads=num_threads)
    return est


def fit_estimator(name, est, X, y, target):
    kind = CASES[name][1]
    if kind == "classes":
        return est.fit(X, y)
    if kind == "real":
        return est.fit(X, target)
    return est.fit(X)


def inference_methods(est):
    return [m for m in INFERENCE if hasattr(est, m)]


def infer(est, method, Q):
    """The output of ``est.method(Q)`` as a dense ndarray (None when the fitted estimator
    does not offer the method, e.g. decision_function of a k-NN ITKernelClassifier)."""
    try:
        out = getattr(est, method)(Q)
    except AttributeError:
        return None
    if sp.issparse(out):
        assert np.isfinite(out.data).all(), f"{method} returned a sparse matrix with NaN/inf"
        return out.toarray()
    return np.asarray(out)


def float_arrays(est):
    """(name, array) of every fitted float array of ``est`` and the estimators it holds."""
    out = []
    for key, value in fitted_state(est).items():
        if sp.issparse(value):
            value = value.data
        if isinstance(value, np.ndarray) and value.dtype.kind in "fc":
            out.append((key, value))
        elif isinstance(value, float):
            out.append((key, np.array(value)))
    return out


def assert_fitted_finite(est):
    for key, value in float_arrays(est):
        assert np.isfinite(value).all(), f"fitted {key} holds NaN/inf: {value!r}"


def close(a, b, rtol):
    """``a`` and ``b`` agree to ``rtol`` relative to the largest magnitude of ``b`` (norm-wise,
    so that entries near 0 after cancellation do not demand relative accuracy)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind not in "fc" or b.dtype.kind not in "fc":
        return np.array_equal(a, b)
    if not (np.isfinite(a) == np.isfinite(b)).all() or (a[~np.isfinite(a)]
                                                         != b[~np.isfinite(b)]).any():
        return False
    fa, fb = a[np.isfinite(a)].astype(np.float64), b[np.isfinite(b)].astype(np.float64)
    if fa.size == 0:
        return True
    top = max(np.abs(fb).max(), np.finfo(np.float64).tiny)
    return bool(np.all(np.abs(fa - fb) <= rtol * top))


def assert_close(a, b, rtol, what):
    assert close(a, b, rtol), (f"{what}: not equal to rtol={rtol:g}\n{np.asarray(a)!r}\n"
                               f"{np.asarray(b)!r}")


def check_output(est, method, out, n_rows):
    """The invariants of one inference output on ``n_rows`` query rows."""
    assert out.shape[0] == n_rows, f"{method} gave {out.shape[0]} rows for {n_rows}"
    if method == "score_samples" and type(est).__name__ == "HistogramGMM":
        # "-inf only where the density underflows float64" (HistogramGMM.score_samples)
        assert out.ndim == 1 and not np.isnan(out).any() and (out < np.inf).all(), out
        return
    if method == "predict" and hasattr(est, "classes_"):
        assert out.ndim == 1
        assert np.isin(out, est.classes_).all(), f"predictions {out} not in {est.classes_}"
        return
    assert out.dtype.kind in "fiu", f"{method} returned dtype {out.dtype}"
    assert np.isfinite(out).all(), f"{method} returned NaN/inf: {out!r}"
    if method in ("predict", "score_samples"):
        assert out.ndim == 1, f"{method} returned shape {out.shape}"
    elif method == "predict_proba":
        assert out.ndim == 2
        if hasattr(est, "classes_"):
            assert out.shape[1] == len(est.classes_)
        tol = 1e-5 if out.dtype == np.float32 else 1e-9
        assert (out >= 0).all() and (out <= 1 + tol).all(), out
        np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=tol * out.shape[1])
    else:
        assert out.ndim == 2, f"{method} returned shape {out.shape}"


# ---------------------------------------------------------------------------------------
# estimators: fit refuses clearly or returns a finite model; inference invariants


@st.composite
def fit_inputs(draw, name, **kwargs):
    """(X case, y, regression target, query case) for estimator ``name``."""
    case = draw(count_cases(**kwargs), label="X")
    n = case.values.shape[0]
    y = labels(draw, n) if CASES[name][1] == "classes" else None
    target = None
    if CASES[name][1] == "real":
        seed = draw(st.integers(0, 2 ** 32 - 1), label="target seed")
        k = draw(st.one_of(st.just(0), st.integers(-300, 300)), label="target exponent")
        target = np.random.default_rng(seed).normal(size=n) * 10.0 ** k
    query = draw(count_cases(max_rows=8, n_features=case.values.shape[1]), label="query")
    return case, y, target, query


@pytest.mark.parametrize("name", _COUNT_ESTIMATORS)
@_settings(25)
@given(data=st.data())
def test_estimator_fit_and_inference_invariants(name, data):
    """Fit refuses with a clear error naming an argument, or gives finite fitted arrays and
    inference outputs with the invariants of check_output, permutation-equivariant in the
    query rows."""
    case, y, target, query = data.draw(fit_inputs(name), label="inputs")
    est = make_estimator(name)
    try:
        fit_estimator(name, est, case.X, y, target)
    except (ValueError, TypeError, MemoryError) as exc:
        event(f"fit refused: {type(exc).__name__}: {re.sub(r'[0-9]+', '#', str(exc))[:40]}")
        note(f"fit raised {exc!r}")
        assert names_an_argument(exc, argument_names(est)), f"unclear error: {exc!r}"
        return
    event("fitted")
    assert_fitted_finite(est)
    n_q = query.values.shape[0]
    perm = np.asarray(data.draw(st.permutations(range(n_q)), label="query permutation"))
    for method in inference_methods(est):
        try:
            out = infer(est, method, query.X)
        except (ValueError, MemoryError) as exc:
            note(f"{method} raised {exc!r}")
            assert names_an_argument(exc, argument_names(est)), f"unclear error: {exc!r}"
            continue
        if out is None:
            continue
        check_output(est, method, out, n_q)
        permuted = infer(est, method, query.make(query.values[perm]))
        assert_close(permuted, out[perm], 1e-12, f"{method} of permuted rows")
