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
of dense, sparse and mixed inputs; the retrieval metrics likewise.

Every test is derandomized (reproducible in CI); COUNTGRID_PROPERTY_EXAMPLES and
COUNTGRID_PROPERTY_RANDOM (below) search deeper.  The checks are plain functions, so the
minimal examples the searches found are run as they are too (FOUND, at the end).
"""
import os
import re

import numpy as np
import pytest
import scipy.sparse as sp
import hypothesis
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from countgrid.kernels import jensen_shannon_kernel, jensen_tsallis_kernel
from countgrid.metrics import cosine_similarity
from countgrid.retrieval import idf_weights, tfidf

from _expected_warnings import FEW_ITERATIONS, LARGE_GRID
from _strategies import (CONTAINERS, CountCase, count_cases, extremes_or_between, histograms,
                         labels, measures, normal_power_of_two, points)
from _synthetic import fitted_state
from test_common import CASES, INFERENCE

# the estimators are fitted briefly to arbitrary counts: few documents on a grid too large
# for them, or counts whose tf-idf is all zero (LSI says its codes are 0)
pytestmark = [FEW_ITERATIONS, LARGE_GRID,
              pytest.mark.filterwarnings("ignore:the tf-idf matrix of X is all zero:UserWarning")]

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

def event(msg):
    """hypothesis.event inside a hypothesis test (the checkers also run on fixed examples)."""
    if hypothesis.currently_in_test_context():
        hypothesis.event(msg)


def note(msg):
    if hypothesis.currently_in_test_context():
        hypothesis.note(msg)


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


def close(a, b, rtol, floor=np.finfo(np.float64).tiny):
    """``a`` and ``b`` agree to ``rtol`` relative to the largest magnitude of ``b`` (norm-wise,
    so that entries near 0 after cancellation do not demand relative accuracy), or to
    ``floor`` if that is larger."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind not in "fc" or b.dtype.kind not in "fc":
        return np.array_equal(a, b)
    if not np.array_equal(np.where(np.isfinite(a), 0, a), np.where(np.isfinite(b), 0, b),
                          equal_nan=True):      # NaN/inf in the same places (or none)
        return False
    fa, fb = a[np.isfinite(a)].astype(np.float64), b[np.isfinite(b)].astype(np.float64)
    if fa.size == 0:
        return True
    top = max(np.abs(fb).max(), floor)
    return bool(np.all(np.abs(fa - fb) <= rtol * top))


def assert_close(a, b, rtol, what, floor=np.finfo(np.float64).tiny):
    assert close(a, b, rtol, floor), (f"{what}: not equal to rtol={rtol:g}\n{np.asarray(a)!r}\n"
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
        k = draw(st.one_of(st.just(0), extremes_or_between(-300, 300)), label="target exponent")
        target = np.random.default_rng(seed).normal(size=n) * 10.0 ** k
    query = draw(count_cases(max_rows=8, n_features=case.values.shape[1]), label="query")
    return case, y, target, query


def check_fit_and_inference(name, case, y, target, query, perm):
    """Fit refuses with a clear error naming an argument, or gives finite fitted arrays and
    inference outputs with the invariants of check_output, permutation-equivariant in the
    query rows (``perm``)."""
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
    for method in inference_methods(est):
        try:
            out = infer(est, method, query.X)
        except (ValueError, MemoryError) as exc:
            note(f"{method} raised {exc!r}")
            assert names_an_argument(exc, argument_names(est)), f"unclear error: {exc!r}"
            continue
        if out is None:
            continue
        check_output(est, method, out, query.values.shape[0])
        permuted = infer(est, method, query.make(query.values[perm]))
        # a float32 grid's dense (BLAS) products may round a row differently at another
        # place in the block: float32 rounding, not float64's
        rtol = 1e-5 if name in _FLOAT32_GRIDS else 1e-12
        assert_close(permuted, out[perm], rtol, f"{method} of permuted rows")


@pytest.mark.parametrize("name", _COUNT_ESTIMATORS)
@_settings(30)
@given(data=st.data())
def test_estimator_fit_and_inference_invariants(name, data):
    case, y, target, query = data.draw(fit_inputs(name), label="inputs")
    perm = data.draw(st.permutations(range(query.values.shape[0])), label="query permutation")
    check_fit_and_inference(name, case, y, target, query, np.asarray(perm))


def fitted_or_error(name, X, y, target):
    """The fitted estimator, or the exception class its fit raised."""
    est = make_estimator(name)
    try:
        return fit_estimator(name, est, X, y, target)
    except (ValueError, TypeError, MemoryError) as exc:
        event(f"fit refused: {type(exc).__name__}: {re.sub(r'[0-9]+', '#', str(exc))[:40]}")
        assert names_an_argument(exc, argument_names(est)), f"unclear error: {exc!r}"
        return type(exc)


def outputs_or_errors(est, Q):
    out = {}
    for method in inference_methods(est):
        try:
            value = infer(est, method, Q)
        except (ValueError, MemoryError) as exc:
            value = type(exc)
        if value is not None:
            out[method] = value
    return out


def assert_same_model(est, ref, rtol, what):
    """Same fitted attributes: arrays to ``rtol`` of their largest entry or of 1 (fitted
    parameters are O(1) or scale with the counts; a coefficient that is 0 up to rounding
    may differ by rounding), everything else equal."""
    a, b = fitted_state(est), fitted_state(ref)
    assert a.keys() == b.keys(), what
    for key in a:
        va, vb = a[key], b[key]
        va = va.toarray() if sp.issparse(va) else va        # a stored training matrix
        vb = vb.toarray() if sp.issparse(vb) else vb
        if isinstance(va, np.ndarray):
            assert va.dtype == vb.dtype or rtol > 1e-9, f"{what}: {key} {va.dtype} {vb.dtype}"
            assert_close(va, vb, rtol, f"{what}: fitted {key}", floor=1.0)
        elif isinstance(va, float):
            assert_close(va, vb, rtol, f"{what}: fitted {key}", floor=1.0)
        elif not hasattr(va, "get_params"):
            assert type(va) is type(vb) and va == vb, f"{what}: fitted {key} {va!r} {vb!r}"


#: inference outputs in [0, 1] or [-1, 1] whatever the counts (probabilities, posterior-mean
#: coordinates of the unit latent square): compared to ``rtol`` of 1 at least, since entries
#: that are small by cancellation (the mean of a symmetric posterior) carry rounding of 1
_BOUNDED_OUTPUTS = {("ZIPGTM", "transform"), ("PLSA", "transform"),
                    ("MixtureOfTopics", "transform"), ("CountingGrid", "transform"),
                    ("CountingGridPosterior", "transform")}


def assert_same_outputs(out, ref, rtol, what, name=None):
    assert out.keys() == ref.keys(), what
    for method in out:
        if isinstance(ref[method], type):
            assert out[method] is ref[method], f"{what}: {method} {out[method]} {ref[method]}"
        else:
            assert not isinstance(out[method], type), f"{what}: {method} raised {out[method]}"
            bounded = method == "predict_proba" or (name, method) in _BOUNDED_OUTPUTS
            assert_close(out[method], ref[method], rtol, f"{what}: {method}",
                         floor=1.0 if bounded else np.finfo(np.float64).tiny)


#: Same-dtype containers agree to 1e-12 except where the dense path is a different
#: computation: ZIPGTM's dense E/M-steps go through BLAS in another summation order than the
#: sparse C kernels, and its IRLS M-step amplifies that to ~1e-10 in a few iterations
#: (docs/zip_gtm.md, "Determinism"); float32 counts give a float32 model, whose rounding
#: is carried on the same way.
# the grids work in float32 by default (docs/choosing.md, "Defaults"): the dense (BLAS) and
# sparse paths agree to float32 rounding, not float64's
_FLOAT32_GRIDS = ("CountingGrid", "CountingGridClassifier", "CountingGridRegressor",
                  "GenerativeCountingGridClassifier")
_CONTAINER_RTOL = {"ZIPGTM": {"float32": 1e-4}.get,
                   **{name: (lambda dtype, default: 1e-4) for name in _FLOAT32_GRIDS}}


def check_same_in_every_container(name, case, y, target, query):
    """The same values give the same model and outputs in every container and scipy.sparse
    format (to 1e-12 of the largest entry: dense inputs may take BLAS paths), and float32
    values the model of the float64 ones loosely."""
    ref = fitted_or_error(name, case.X, y, target)
    if isinstance(ref, type):
        event("refused")
        for container in CONTAINERS:
            assert fitted_or_error(name, case.make(case.values, container), y, target) is ref
        return
    event("fitted")
    ref_out = outputs_or_errors(ref, query.X)
    for container in CONTAINERS:
        est = fitted_or_error(name, case.make(case.values, container), y, target)
        what = f"{container} of {case.dtype}"
        assert not isinstance(est, type), f"{what} refused, ndarray fitted"
        rtol = _CONTAINER_RTOL[name](case.dtype, 1e-8) if name in _CONTAINER_RTOL else 1e-12
        assert_same_model(est, ref, rtol, what)
        assert_same_outputs(outputs_or_errors(est, query.make(query.values, container)),
                            ref_out, rtol, what, name)
    # float32: the same counts rounded to float32 (not beyond its range), a loose match
    with np.errstate(over="ignore"):    # counts beyond float32's range: left out below
        values32 = case.values.astype(np.float32)
    if case.dtype != "float32" and np.isfinite(values32).all() and (
            values32[case.values > 0] > np.finfo(np.float32).tiny).all():
        event("float32 compared")
        est = fitted_or_error(name, case.make(values32, dtype="float32"), y, target)
        assert not isinstance(est, type), "float32 refused, float64 fitted"
        assert_same_model(est, ref, 1e-4, "float32")
        assert_same_outputs(outputs_or_errors(est, query.X), ref_out, 1e-4, "float32", name)


@pytest.mark.parametrize("name", _COUNT_ESTIMATORS)
@_settings(8)
@given(data=st.data())
def test_estimator_same_result_in_every_container(name, data):
    case, y, target, query = data.draw(fit_inputs(name, containers=("ndarray",), min_rows=3),
                                       label="inputs")
    check_same_in_every_container(name, case, y, target, query)


# ---------------------------------------------------------------------------------------
# determinism: the same seed gives the same model, whatever the thread count

#: estimators whose dense input may take BLAS matrix products, whose last bits may depend on
#: the thread count (docs/counting_grids.md and docs/zip_gtm.md, "Determinism"): with dense
#: input they are compared to 1e-10, with sparse input bit for bit like every other
_BLAS_WITH_DENSE = {"CountingGrid", "LayeredCountingGrid", "TimeSlicedCountingGrid",
                    "CountingGridClassifier", "CountingGridRegressor",
                    "GenerativeCountingGridClassifier", "CountingGridPosterior",
                    "CountingGridFESS", "ZIPGTM"}


def assert_identical(est, ref, what):
    assert_same_model(est, ref, 0.0, what)


@pytest.mark.parametrize("name", _COUNT_ESTIMATORS)
@_settings(5)
@given(data=st.data())
def test_determinism_seed_and_threads(name, data):
    """Fitting twice with the same random_state gives the same bits; so does num_threads=2
    against 1 (docs: counting_grids.md, rap.md, zip_gtm.md, topics PLSA num_threads, the
    kernels' "Input, memory and interrupts"), but for the BLAS paths of dense input."""
    case, y, target, query = data.draw(
        fit_inputs(name, containers=("ndarray", "csr_matrix"), dtypes=("int64", "float64"),
                   min_rows=2), label="inputs")
    first = fitted_or_error(name, case.X, y, target)
    assume(not isinstance(first, type))
    second = fitted_or_error(name, case.X, y, target)
    assert_identical(second, first, "second fit")
    out = outputs_or_errors(first, query.X)
    assert_same_outputs(outputs_or_errors(second, query.X), out, 0.0, "second fit", name)
    if "num_threads" not in first.get_params(deep=False):
        return
    est = make_estimator(name, num_threads=2)
    threaded = fit_estimator(name, est, case.X, y, target)
    # inference threads too: the fitted twin with num_threads=2
    out2 = outputs_or_errors(threaded, query.X)
    if name in _BLAS_WITH_DENSE and case.container == "ndarray":
        event("dense input, BLAS: compared to 1e-10")
        assert_same_model(threaded, first, 1e-10, "num_threads=2")
        assert_same_outputs(out2, out, 1e-10, "num_threads=2", name)
    else:
        assert_identical(threaded, first, "num_threads=2")
        assert_same_outputs(out2, out, 0.0, "num_threads=2", name)


# ---------------------------------------------------------------------------------------
# HistogramGMM: fitted to histograms (weights and bin centres), evaluated at points


def _gmm(domain):
    return make_estimator("HistogramGMM").set_params(domain=domain)


@_settings(40)
@given(data=st.data())
def test_histogram_gmm_invariants(data):
    """fit refuses clearly or gives finite parameters (weights_ summing to 1, symmetric
    positive-definite covariances), and the same bits again for the weights scaled by any
    power of two that keeps them normal floats (they are normalised; 2**0: determinism);
    predict_proba, predict and score_samples keep their invariants at any point,
    permutation-equivariant."""
    weights, centres, domain = data.draw(histograms(), label="histogram")
    est = _gmm(domain)
    names = argument_names(est, "weights", "bin_centers")
    try:
        est.fit(weights, centres)
    except (ValueError, TypeError, MemoryError) as exc:
        event(f"fit refused: {re.sub(r'[0-9]+', '#', str(exc))[:40]}")
        assert names_an_argument(exc, names), f"unclear error: {exc!r}"
        return
    event(f"fitted {domain}")
    assert_fitted_finite(est)
    np.testing.assert_allclose(est.weights_.sum(), 1.0, atol=1e-12)
    assert (est.weights_ >= 0).all()
    covs = est.covariances_
    assert_close(covs, np.swapaxes(covs, 1, 2), 1e-14, "symmetric covariances")
    assert (np.linalg.eigvalsh(covs) > 0).all()
    positive = weights[weights > 0]
    lo, hi = np.frexp(positive.min())[1], np.frexp(positive.max())[1]
    e2 = data.draw(extremes_or_between(-1021 - lo, 1024 - hi), label="power of two")
    assert_identical(_gmm(domain).fit(np.ldexp(weights, e2), centres), est,
                     f"weights * 2**{e2}")
    P = points(data.draw, est.n_dims_)
    perm = np.asarray(data.draw(st.permutations(range(P.shape[0])), label="permutation"))
    for method in ("predict_proba", "predict", "score_samples"):
        out = getattr(est, method)(P)
        check_output(est, method, out, P.shape[0])
        if method == "predict":
            assert ((out >= 0) & (out < est.n_components)).all()
        assert_close(getattr(est, method)(P[perm]), out[perm], 1e-12, f"{method} permuted")


# ---------------------------------------------------------------------------------------
# pLSA folding-in depends on the counts through n(d,w)/n(d) only (docs/topics.md,
# "Folding-in": P(z|d) = sum_w n(d,w) P(z|d,w) / n(d)); the log-likelihood
# sum_w n(d,w) log sum_z P(z|d) P(w|z) is then linear in the counts.  (Counting grids are
# not scale invariant: their posteriors sharpen with the counts.)


def check_plsa_scale(X, Q, scale):
    """transform(diag(scale) Q) == transform(Q) and score_samples(diag(scale) Q) ==
    scale * score_samples(Q) for a PLSA fitted to X (powers of two: exact but for the
    rounding of the folding-in iterations)."""
    model = make_estimator("PLSA")
    try:
        model.fit(X)
    except ValueError as exc:
        assert names_an_argument(exc, {"X"}), exc
        return
    theta, ll = model.transform(Q), model.score_samples(Q)
    theta_k = model.transform(Q * scale[:, None])
    assert np.isfinite(theta_k).all(), f"transform of documents * {scale}: {theta_k!r}"
    assert_close(theta_k, theta, 1e-12, f"transform of documents * {scale}")
    ll_k = model.score_samples(Q * scale[:, None])
    for d in range(Q.shape[0]):
        assert_close(ll_k[d], scale[d] * ll[d], 1e-12, f"score_samples of document {d} "
                     f"* {scale[d]:g}")


@_settings(30)
@given(data=st.data())
def test_plsa_fold_in_is_invariant_to_document_scale(data):
    """check_plsa_scale for some documents scaled by 2**k, for every k that keeps the counts
    normal floats and the documents within MAX_DOCUMENT_LENGTH (1e300)."""
    X = data.draw(count_cases(min_rows=2, dtypes=("float64",), scaled=False), label="X").values
    Q = data.draw(count_cases(max_rows=6, n_features=X.shape[1], dtypes=("float64",),
                              scaled=False), label="query").values
    assume(Q.any())
    lo = np.frexp(Q[Q > 0].min())[1]
    hi = np.frexp(Q.sum(axis=1).max())[1]
    k = data.draw(extremes_or_between(-1021 - lo, 996 - hi), label="k")    # 2**996 < 1e300
    rows = data.draw(st.lists(st.integers(0, Q.shape[0] - 1), unique=True), label="rows")
    scale = np.ones(Q.shape[0])
    scale[rows] = 2.0 ** k                                  # some documents, not all
    check_plsa_scale(X, Q, scale)


# ---------------------------------------------------------------------------------------
# Examples the searches above found (minimal, as hypothesis shrank them), kept so that they
# are checked on every run whatever the derandomized draws are.

def check_refits_identical(name, X, n_fits, y=None, target=None):
    """``n_fits`` fits with the same random_state give the same bits."""
    first = fitted_or_error(name, X, y, target)
    for i in range(1, n_fits):
        assert_identical(fitted_or_error(name, X, y, target), first, f"fit {i + 1}")


def _case(values, dtype="float64", container="ndarray", exponent=0):
    return CountCase(np.asarray(values, dtype=np.float64), dtype, container, exponent)


FOUND = {
    # PLSA folding-in of a document whose counts over P(w|z) overflow: n(d,w)/s_dw
    # (csrc/common/rowops_impl.h, cg_row_dot_axpy) is inf, P(z|d) then NaN: the LLR/TOP
    # shift_ of the training minima was NaN
    "LLREmbedding: shift_ NaN for counts 1e150": lambda: check_fit_and_inference(
        "LLREmbedding", _case([[1e150, 0], [0, 3e150]], exponent=150), np.array([-1, 2]),
        None, _case([[0, 0]], "int32"), np.array([0])),
    "PLSA: transform NaN for documents * 2**989": lambda: check_plsa_scale(
        np.array([[0.0, 1, 1], [0, 1, 0]]), np.array([[1.0, 0, 0], [3, 3, 1]]),
        np.full(2, 2.0 ** 989)),
    # k^A_q = k^B_q / (w_x + w_y)^q for 1 < q < 3/2 (the expm1 form of k^B_q, whose linear
    # terms cancel only in exact arithmetic) of a measure far lighter than the heaviest of
    # its mass group (_GROUP_SPAN, src/countgrid/kernels/_it_kernels.py): k^A(x, x) is
    # ln_q 2 = 0.5877 for every x, computed -3.8e8
    "kernels: k^A_q(x, x) at q=1.49 with a row 1e50 times lighter": lambda: check_gram(
        _case([[1e-50], [1.0]]), dict(q=1.49, weighted="A", exponentiated=False, t=1.0)),
    # pairs of measures whose masses differ beyond the float range are set to 0, but for
    # small q k^A_q is about (w_light/w_heavy)^q / (1 - q), not small (0.9986 here):
    # the Gram matrix has an eigenvalue -0.41
    "kernels: k^A_q at q=1e-6 of measures 1e600 apart": lambda: check_gram(
        _case([[1e-300], [1e300], [1.0]]), dict(q=1e-6, weighted="A", exponentiated=False,
                                                t=1.0)),
    # a light measure paired with a heavy one is computed on the heavy one's scale: k^B_q is
    # exact to rounding of k(heavy, heavy) only, different in K(A, B) and K(B, A); here
    # K(B, A) comes out beyond the float32 range (float64: -5.1e32, exact 1.1e14) while
    # K(A, B) is returned
    "kernels: k^B_q(A, B) returned but K(B, A) refused as beyond float32": lambda: (
        check_kernel_pair(_case([[0.6369617]], "float32"),
                          _case([[7.00649232e-45], [2.69786725e+36]], "float32"),
                          dict(q=1.375, weighted="B", exponentiated=False, t=1.0))),
    # pairs far apart in mass are summed in the log domain; ln b and ln(a/b) were taken of
    # the entries as they are, so after a common rescaling by 2**-5 k^A_q (invariant to it)
    # differed in the last bits (found by CI's hypothesis 6.155.2 at 2**-1021)
    "kernels: k^A_q of measures 1e321 apart changes bits when both are rescaled": lambda: (
        check_kernel_scaling(
            _case([[4.2802451904395165e+27, 0.0, 8.1323691306956936e+26],
                   [8.7522825370197192e-294, 9.4170615552988634e-294,
                    2.6186401585393727e-294]]),
            dict(q=0.25, weighted="A", exponentiated=False, t=1.0), [0, 0], -5)),
    # LSI: ARPACK (scipy.sparse.linalg.svds) with a fixed start vector returns either of
    # two bases of a tied top singular value (3, 3 here) from run to run in one process
    "LSI: the same seed gives two different bases (tied singular values)": lambda: (
        check_refits_identical("LSI", np.array(
            [[0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0], [0] * 12, [0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0],
             [0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], [0] * 12,
             [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]]),
            n_fits=20)),
    # ZIPGTM's PCA start takes the singular vectors of LAPACK (dense) or ARPACK (sparse)
    # without fixing their signs: the map of dense counts is the mirror of the CSR one
    "ZIPGTM: dense and CSR counts give mirrored maps": lambda: check_same_in_every_container(
        "ZIPGTM", _case([[1, 0, 0], [3, 3, 1], [1, 2, 1]], "int32"), None, None,
        _case([[0, 0, 0]], "int32")),
}


@pytest.mark.parametrize("example", sorted(FOUND))
def test_found_examples(example):
    FOUND[example]()


# ---------------------------------------------------------------------------------------
# Information-theoretic kernels (docs/kernels.md)

Q_VALUES = st.one_of(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 1 - 1e-7, 1 + 1e-7]),
                     st.floats(0.0, 2.0))


@st.composite
def kernel_params(draw):
    q = draw(Q_VALUES, label="q")
    weighted = draw(st.sampled_from([None, "A", "B"]), label="weighted")
    exponentiated = weighted is None and draw(st.booleans(), label="exponentiated")
    t = draw(st.one_of(st.just(1.0), st.floats(0.01, 10.0)), label="t") if exponentiated \
        else 1.0
    return dict(q=q, weighted=weighted, exponentiated=exponentiated, t=t)


def gram(A, B=None, num_threads=1, **params):
    """The Gram matrix, or None when the value leaves the output dtype's range, which
    only k^B_q of huge measures and exp(-t T_q) may (docs/kernels.md, "Numerical range")."""
    try:
        return jensen_tsallis_kernel(A, B, num_threads=num_threads, **params)
    except ValueError as exc:
        assert "exceeds the range" in str(exc) and (
            params.get("weighted") == "B" or params.get("exponentiated")), repr(exc)
        event("kernel beyond the dtype's range")
        return None


def out_dtype(*cases):
    """float32 when every input is a float32 array or sparse matrix (lists are float64)."""
    f32 = all(c.dtype == "float32" and c.container != "list" for c in cases)
    return np.dtype(np.float32 if f32 else np.float64)


def kernel_rtol(dtype):
    return 2e-5 if dtype == np.float32 else 1e-11


def lnq2(q):
    """ln_q(2) = expm1((1 - q) ln 2) / (1 - q), accurate near q = 1."""
    return np.log(2.0) if q == 1 else np.expm1((1 - q) * np.log(2.0)) / (1 - q)


def probability_rows(V):
    """Rows of V divided by their sums (exactly rescaled first: any magnitude)."""
    V = np.asarray(V, dtype=np.float64)
    top = np.abs(V).max(axis=1, initial=0.0)
    S = np.ldexp(V, -np.frexp(top)[1][:, None])
    mass = S.sum(axis=1, keepdims=True)
    return np.divide(S, mass, out=np.zeros_like(S), where=mass > 0)


def expected_diagonal(V, q, weighted, exponentiated, t):
    """k(x, x) of docs/kernels.md: ln_q(2) sum_d p_d^q for k_JT,q and k^A_q (q = 0: the
    support size), (2 w)^q times that for k^B_q, exp(-t ln_q(2) (1 - sum_d p_d^q)) for
    the exponentiated kernel; 0 for rows of zero mass."""
    P = probability_rows(V)
    s = (P > 0).sum(axis=1) if q == 0 else (P ** q).sum(axis=1)
    if q == 0 and not exponentiated:
        d = s.astype(np.float64)
    elif exponentiated:
        d = np.exp(-t * lnq2(q) * (1 - s))
    else:
        d = lnq2(q) * s
        if weighted == "B":
            top = np.abs(V).max(axis=1, initial=0.0)
            e = np.frexp(top)[1]
            mass = np.ldexp(V, -e[:, None]).sum(axis=1)
            with np.errstate(divide="ignore", over="ignore"):
                d = d * np.exp2(q * (1 + np.log2(mass) + e))
    return np.where(np.abs(V).max(axis=1, initial=0.0) > 0, d, 0.0)


def check_gram(case, params):
    """K(A): exactly symmetric, of the documented dtype, finite for rows of any magnitude,
    non-negative (to rounding), positive semi-definite (Cauchy-Schwarz and eigenvalues),
    zero rows and columns for rows of zero mass, the diagonal of docs/kernels.md; q = 0
    counts the common support, q = 1 lies in [0, ln 2]; the JS kernel is the q = 1 kernel."""
    K = gram(case.X, **params)
    if K is None:
        return
    V, n = case.values, case.values.shape[0]
    dtype = out_dtype(case)
    rtol = kernel_rtol(dtype)
    assert K.shape == (n, n) and K.dtype == dtype, (K.shape, K.dtype)
    assert np.isfinite(K).all(), K
    np.testing.assert_array_equal(K, K.T)
    assert (K >= -rtol * np.abs(K).max(initial=0)).all(), K
    zero = ~(V > 0).any(axis=1)
    assert (K[zero] == 0).all() and (K[:, zero] == 0).all()
    K64 = K.astype(np.float64)
    d = np.diag(K64)
    # entries that are subnormal numbers of the output dtype are exact to its spacing only
    sub = 4 * float(np.finfo(dtype).smallest_subnormal)
    expected = expected_diagonal(V, **params)
    assert (np.abs(d - expected) <= rtol * np.abs(expected) + sub).all(), (
        f"diagonal\n{d!r}\nexpected\n{expected!r}")
    # |K_ij| <= sqrt(K_ii K_jj), to rounding of the largest entry (a light measure paired
    # with a heavy one is computed on the heavy one's scale)
    root = np.sqrt(d + sub)
    slack = 4 * rtol * np.abs(K64).max(initial=0.0) + sub
    assert (K64 <= np.outer(root, root) * (1 + 4 * rtol) + slack).all(), (
        f"Cauchy-Schwarz (positive semi-definite)\n{K64!r}")
    if n:
        top = float(np.abs(K64).max())
        if 0 < top < np.sqrt(np.finfo(np.float64).max / n):     # top ** 2 * n is finite
            assert np.linalg.eigvalsh(K64 / top).min() >= -10 * n * rtol
    if params["q"] == 0 and not params["exponentiated"]:
        support = (V > 0).astype(np.float64)
        np.testing.assert_array_equal(K, support @ support.T)
    if params["q"] == 1 and params["weighted"] is None and not params["exponentiated"]:
        assert (K64 <= np.log(2) * (1 + rtol)).all()
        np.testing.assert_array_equal(jensen_shannon_kernel(case.X, num_threads=1), K)


@_settings(60)
@given(data=st.data())
def test_kernel_gram_matrix_invariants(data):
    check_gram(data.draw(measures(), label="A"), data.draw(kernel_params(), label="params"))


def kernel_scale(A, B, params):
    """The largest k(x, x) over the rows of A and B (docs/kernels.md), the scale of the
    rounding of K(A, B): a light measure paired with a heavy one is computed on the heavy
    one's scale, so its entries are accurate to that scale only (inf when that overflows,
    the smallest normal float when it is 0)."""
    with np.errstate(over="ignore", invalid="ignore"):
        top = max(expected_diagonal(A, **params).max(initial=0.0),
                  expected_diagonal(B, **params).max(initial=0.0))
    return float(top) if top > 0 else np.finfo(np.float64).tiny


def check_kernel_pair(a, b, params):
    """K(A, B) in any containers and formats (sparse, dense, mixed, lists) is K of the dense
    arrays (to rounding: a sparse/dense pair may be computed in CSR), K(B, A).T, the same
    bits with two threads; zero rows give zero rows, K(A, A) is the symmetric K(A)."""
    # lists are float64 whatever the values were
    dense = [c.make(c.values, container="ndarray",
                    dtype="float64" if c.container == "list" else c.dtype) for c in (a, b)]
    ref = gram(*dense, **params)
    K = gram(a.X, b.X, **params)
    assert (K is None) == (ref is None), "only one of them beyond the range"
    if K is None:
        return
    dtype = out_dtype(a, b)
    rtol = kernel_rtol(dtype)
    assert K.shape == (a.values.shape[0], b.values.shape[0]) and K.dtype == dtype
    assert np.isfinite(K).all()
    # |K_ij| <= sqrt(K_ii K_jj): entries are compared to rtol of that bound
    scale = kernel_scale(a.values, b.values, params)
    assert_close(K, ref, rtol, "K(A, B) against the dense pair", floor=scale)
    KT = gram(b.X, a.X, **params)
    assert KT is not None, "K(B, A) beyond the range, K(A, B) not"
    assert_close(KT.T, K, rtol, "K(B, A).T", floor=scale)
    np.testing.assert_array_equal(gram(a.X, b.X, num_threads=2, **params), K)
    assert (K[~(a.values > 0).any(axis=1)] == 0).all()
    assert (K[:, ~(b.values > 0).any(axis=1)] == 0).all()
    KA = gram(a.X, **params)
    if KA is not None:
        assert_close(gram(a.X, a.X, **params), KA, kernel_rtol(KA.dtype), "K(A, A) and K(A)",
                     floor=kernel_scale(a.values, a.values, params))


@_settings(40)
@given(data=st.data())
def test_kernel_pairs_in_every_format(data):
    a = data.draw(measures(), label="A")
    b = data.draw(measures(n_features=a.values.shape[1]), label="B")
    check_kernel_pair(a, b, data.draw(kernel_params(), label="params"))


def check_kernel_scaling(case, params, row_exponents, common):
    """The rescalings the definitions are invariant to (docs/kernels.md), by powers of two
    that are exact in the dtype, change no bit: any positive row scaling for probability
    vectors (weighted=None, the exponentiated kernels) and the Boolean kernel (q = 0), a
    common scaling for k^A_q; k^B_q(cx, cy) = c^q k^B_q(x, y)."""
    K = gram(case.X, **params)
    q, weighted = params["q"], params["weighted"]
    if weighted is None or q == 0:
        scaled = np.ldexp(case.values, np.asarray(row_exponents, dtype=int)[:, None])
        np.testing.assert_array_equal(gram(case.make(scaled), **params), K)
    scaled = np.ldexp(case.values, common)
    K2 = gram(case.make(scaled), **params)
    if weighted == "B" and q != 0:
        # compared where K and K2 are normal numbers of their dtype (subnormal kernel
        # values are exact to the subnormal spacing only)
        if K is not None and K2 is not None and K.size:
            tiny = np.finfo(K.dtype).tiny
            with np.errstate(over="ignore"):
                expected = K.astype(np.float64) * np.exp2(common * q)
            ok = (np.abs(K) >= tiny) & (np.abs(expected) >= tiny) & np.isfinite(expected)
            if np.all(ok | (K == 0)):
                assert_close(K2[ok], expected[ok], kernel_rtol(K.dtype),
                             f"k^B_q of 2**{common} x",
                             floor=kernel_scale(scaled, scaled, params))
    elif K is not None:
        np.testing.assert_array_equal(K2, K)


@_settings(40)
@given(data=st.data())
def test_kernel_rescaling(data):
    case = data.draw(measures(containers=("ndarray", "csr_matrix", "coo_array")), label="A")
    rows = [normal_power_of_two(data.draw, v[None, :], case.dtype, f"row {i} exponent")
            for i, v in enumerate(case.values)]
    common = normal_power_of_two(data.draw, case.values, case.dtype, "common exponent")
    check_kernel_scaling(case, data.draw(kernel_params(), label="params"), rows, common)


@_settings(30)
@given(data=st.data())
def test_kernel_block_sums(data):
    """blocks/block_weights: the weighted sum of the kernels of the column blocks
    (docs/topics.md, "Block structure and per-block kernel sums")."""
    a = data.draw(measures(max_features=9, any_magnitude=False), label="A")
    assume(a.values.shape[1] > 0)
    b = data.draw(measures(n_features=a.values.shape[1], any_magnitude=False), label="B")
    params = data.draw(kernel_params(), label="params")
    m = a.values.shape[1]
    cuts = sorted(data.draw(st.sets(st.integers(1, m - 1), max_size=3), label="cuts")) \
        if m > 1 else []
    edges = [0, *cuts, m]
    widths = np.diff(edges).tolist()
    w = data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=len(widths),
                           max_size=len(widths)), label="block weights")
    K = gram(a.X, b.X, blocks=widths, block_weights=w, **params)
    parts = [gram(a.make(a.values[:, s:e]), b.make(b.values[:, s:e]), **params)
             for s, e in zip(edges[:-1], edges[1:])]
    if K is None or any(p is None for p in parts):
        return
    expected = sum(wi * p.astype(np.float64) for wi, p in zip(w, parts))
    assert_close(K, expected, kernel_rtol(K.dtype), "block sum",
                 floor=kernel_scale(a.values, b.values, params))


# ---------------------------------------------------------------------------------------
# retrieval metrics: cosine similarity, idf weights and tf-idf (countgrid.metrics,
# countgrid.retrieval)

@_settings(40)
@given(data=st.data())
def test_cosine_similarity(data):
    """cos(A, B): float64 of shape (n_a, n_b), finite, in [-1, 1], cos(B, A).T, 1 on the
    diagonal of cos(A, A) for non-zero rows and 0 for zero rows, the same in every format,
    and unchanged (up to sign) when rows are scaled by any exact power of two."""
    a = data.draw(measures(signed=True), label="A")
    b = data.draw(measures(n_features=a.values.shape[1], signed=True), label="B")
    S = cosine_similarity(a.X, b.X)
    assert S.shape == (a.values.shape[0], b.values.shape[0]) and S.dtype == np.float64
    assert np.isfinite(S).all() and (np.abs(S) <= 1 + 1e-15).all(), S
    ref = cosine_similarity(*(c.make(c.values, container="ndarray") for c in (a, b)))
    assert_close(S, ref, 1e-14, "cos in these formats and dense", floor=1.0)
    assert_close(cosine_similarity(b.X, a.X).T, S, 1e-14, "cos(B, A).T", floor=1.0)
    zero_a, zero_b = ~(a.values != 0).any(axis=1), ~(b.values != 0).any(axis=1)
    assert (S[zero_a] == 0).all() and (S[:, zero_b] == 0).all()
    d = np.diag(cosine_similarity(a.X, a.X))
    np.testing.assert_allclose(d, np.where(zero_a, 0.0, 1.0), atol=1e-15)
    k = np.array([normal_power_of_two(data.draw, v[None, :], a.dtype, f"row {i} exponent")
                  for i, v in enumerate(a.values)], dtype=int)
    sign = np.array(data.draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=len(k),
                                       max_size=len(k)), label="signs"))
    scaled = cosine_similarity(a.make(np.ldexp(a.values, k[:, None]) * sign[:, None]), b.X)
    assert_close(scaled, sign[:, None] * S, 1e-15, "cos of rescaled rows", floor=1.0)


@_settings(40)
@given(data=st.data())
def test_idf_and_tfidf(data):
    """idf: finite, in [0, log2(n_documents)], 0 for unseen words, a function of the
    support only (unchanged by any positive rescaling of the counts) and of no row order;
    tfidf: sparse iff X is, finite, non-negative, rows summing to at most log2(n), zero
    rows for empty documents, unchanged by positive row scalings (exactly for powers of
    two), equivariant under row and column permutations, the same in every format."""
    case = data.draw(count_cases(), label="X")
    V, n = case.values, case.values.shape[0]
    idf = idf_weights(case.X)
    assert idf.shape == (V.shape[1],) and np.isfinite(idf).all()
    assert (idf >= 0).all() and (idf <= np.log2(n) + 1e-12).all()
    assert (idf[~(V > 0).any(axis=0)] == 0).all()
    support = (V > 0).astype(np.float64) * data.draw(st.sampled_from([1.0, 3.0, 1e-300, 1e300]),
                                                     label="support scale")
    np.testing.assert_array_equal(idf_weights(support), idf)
    rows = np.asarray(data.draw(st.permutations(range(n)), label="row permutation"))
    cols = np.asarray(data.draw(st.permutations(range(V.shape[1])), label="column permutation"))
    np.testing.assert_array_equal(idf_weights(case.make(V[rows])), idf)
    T = tfidf(case.X)
    assert sp.issparse(T) == sp.issparse(case.X)
    Td = T.toarray() if sp.issparse(T) else np.asarray(T)
    assert Td.shape == V.shape and np.isfinite(Td).all() and (Td >= 0).all()
    assert (Td.sum(axis=1) <= np.log2(n) * (1 + 1e-12) + 1e-300).all()
    assert (Td[~(V > 0).any(axis=1)] == 0).all()
    dense = lambda M: M.toarray() if sp.issparse(M) else np.asarray(M)   # noqa: E731
    ref = dense(tfidf(case.make(V, container="ndarray")))
    assert_close(Td, ref, 1e-15, "tfidf in this format and dense", floor=1.0)
    assert_close(dense(tfidf(case.make(V[rows][:, cols]))), Td[rows][:, cols], 1e-15,
                 "tfidf of permuted rows and columns", floor=1.0)
    if case.dtype.startswith("float"):
        k = np.array([normal_power_of_two(data.draw, v[None, :], case.dtype, f"row {i}")
                      for i, v in enumerate(V)], dtype=int)
        np.testing.assert_array_equal(dense(tfidf(case.make(np.ldexp(V, k[:, None])))), Td)
    # with given weights (a query against a training corpus)
    np.testing.assert_array_equal(dense(tfidf(case.X, idf=idf)), Td)


# ---------------------------------------------------------------------------------------
# no rows or no features: every estimator's fit (and tfidf) refuses X with a ValueError
# naming it, in every container (a list cannot hold zero rows of m features)

@pytest.mark.parametrize("shape, container", [
    (shape, c) for shape in [(0, 4), (5, 0), (0, 0)] for c in sorted(CONTAINERS)
    if not (c == "list" and shape[0] == 0)])
def test_empty_counts_are_refused(shape, container):
    X = CONTAINERS[container](np.zeros(shape, dtype=np.int64))
    for name in _COUNT_ESTIMATORS:
        est = make_estimator(name)
        y = np.arange(shape[0]) % 2
        with pytest.raises(ValueError, match=r"\bX\b"):
            fit_estimator(name, est, X, y, y * 1.0)
    for function in (tfidf, idf_weights):
        with pytest.raises(ValueError, match=r"\bX\b"):
            function(X)
