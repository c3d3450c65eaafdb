"""Common checks of every public estimator (the shared rules of countgrid._base, as
scikit-learn's estimator_checks): declared parameter constraints, clone / get_params /
set_params, the error policy for bad parameters, NotFittedError before fit, X and y of the
wrong shape refused in scikit-learn's words, save / load round trips, the dtype rule, and
scikit-learn's own check_estimator.  Each estimator's own answers to hostile input are the
hostile suite's (tests/hostile)."""
import warnings
from numbers import Integral, Real

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid import io
from countgrid._utils.param_validation import GridShape, Interval, Options, make_constraint
from countgrid.exceptions import ConvergenceWarning, NotFittedError

from _expected_warnings import FEW_ITERATIONS
from _synthetic import fitted_state

pytestmark = FEW_ITERATIONS

_PLSA = dict(n_components=2, n_iter=5, random_state=0)
_CG = dict(extent=(3, 3), window=(2, 2), n_iter=3, random_state=0)

# name -> (factory of a small unfitted instance, what fit needs besides X)
CASES = {
    "CountingGrid": (lambda: countgrid.CountingGrid((4, 4), (2, 2), n_iter=3, random_state=0),
                     None),
    # float64: the property tests compare dense (BLAS) and sparse paths on counts up to
    # 1e8, where float32 scores round by whole nats
    "LayeredCountingGrid": (lambda: countgrid.LayeredCountingGrid(
        (4, 4), (2, 2), n_layers=2, n_iter=3, random_state=0, dtype=np.float64), None),
    "TimeSlicedCountingGrid": (lambda: countgrid.TimeSlicedCountingGrid(
        (4, 4), (2, 2), n_iter=3, random_state=0, dtype=np.float64), None),
    "CountingGridClassifier": (lambda: countgrid.CountingGridClassifier(
        (4, 4), (2, 2), n_iter=3, random_state=0), "classes"),
    "CountingGridRegressor": (lambda: countgrid.CountingGridRegressor(
        (4, 4), (2, 2), n_iter=3, random_state=0), "real"),
    "GenerativeCountingGridClassifier": (lambda: countgrid.GenerativeCountingGridClassifier(
        (3, 3), (2, 2), n_iter=3, random_state=0), "classes"),
    "PLSA": (lambda: countgrid.PLSA(**_PLSA), None),
    "ZIPGTM": (lambda: countgrid.ZIPGTM((3, 3), n_basis=4, n_iter=3, random_state=0), None),
    "RAP": (lambda: countgrid.RAP(3, n_epochs=1, random_state=0), None),
    "LSI": (lambda: countgrid.LSI(1, random_state=0), None),
    "MixtureOfTopics": (lambda: countgrid.MixtureOfTopics(**_PLSA), "classes"),
    "FisherScore": (lambda: countgrid.FisherScore(**_PLSA), "classes"),
    "TOPEmbedding": (lambda: countgrid.TOPEmbedding(**_PLSA), "classes"),
    "LLREmbedding": (lambda: countgrid.LLREmbedding(**_PLSA), "classes"),
    "FreeEnergyScoreSpace": (lambda: countgrid.FreeEnergyScoreSpace(**_PLSA), "classes"),
    "PosteriorDivergence": (lambda: countgrid.PosteriorDivergence(**_PLSA), "classes"),
    "CountingGridPosterior": (lambda: countgrid.CountingGridPosterior(**_CG), "classes"),
    "CountingGridFESS": (lambda: countgrid.CountingGridFESS(**_CG), "classes"),
    "HistogramGMM": (lambda: countgrid.HistogramGMM(2, n_iter=5, random_state=0), "histogram"),
    "ITKernelClassifier": (lambda: countgrid.ITKernelClassifier(kernel="js", classifier="knn"),
                           "classes"),
}
INFERENCE = ("transform", "predict", "predict_proba", "score_samples", "decision_function")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    rates = np.r_[np.full(6, 3.0), np.full(6, 0.3)]
    X = np.vstack([rng.poisson(rates, (20, 12)), rng.poisson(rates[::-1], (20, 12))])
    y = np.repeat([0, 1], 20)
    s = np.r_[rng.normal(-1, 0.5, (300, 2)), rng.normal(1, 0.5, (300, 2))]
    edges = np.linspace(-3, 3, 13)
    W, _, _ = np.histogram2d(s[:, 0], s[:, 1], bins=[edges, edges])
    centres = (edges[:-1] + edges[1:]) / 2
    return {"X": sp.csr_matrix(X.astype(np.float64)), "y": y,
            "histogram": (W, [centres, centres])}


def fit(est, name, data, X=None):
    kind = CASES[name][1]
    if kind == "histogram":
        return est.fit(*data["histogram"])
    X = data["X"] if X is None else X
    if kind == "classes":
        return est.fit(X, data["y"])
    if kind == "real":
        return est.fit(X, data["y"] * 1.5 + 0.25)
    return est.fit(X)


def query(name, data):
    if CASES[name][1] == "histogram":
        return np.array([[0.0, 0.0], [1.0, -1.0]])
    return data["X"][:7]


def outputs(est, name, data):
    out = {}
    for method in INFERENCE:
        if hasattr(est, method):
            try:
                value = getattr(est, method)(query(name, data))
            except AttributeError:      # decision_function of a k-NN ITKernelClassifier
                continue
            out[method] = value.toarray() if sp.issparse(value) else np.asarray(value)
    return out


def test_every_public_estimator_is_covered():
    public = {name for name in countgrid.__all__
              if isinstance(getattr(countgrid, name), type)
              and issubclass(getattr(countgrid, name), countgrid._base.BaseEstimator)}
    assert set(io.registered()) | {"ITKernelClassifier"} == public == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_constraints_cover_every_parameter(name):
    est = CASES[name][0]()
    assert set(type(est)._parameter_constraints) == set(est.get_params(deep=False))
    est._validate_params()                  # the defaults and the test values are valid


@pytest.mark.parametrize("name", sorted(CASES))
def test_clone_get_set_params(name, data):
    sklearn_base = pytest.importorskip("sklearn.base")
    est = CASES[name][0]()
    params = est.get_params(deep=False)
    assert set(params) == set(type(est)._get_param_names())
    fit(est, name, data)
    twin = sklearn_base.clone(est)
    assert type(twin) is type(est)
    assert twin.get_params(deep=False).keys() == params.keys()
    assert not fitted_state(twin)
    key = sorted(params)[0]
    assert twin.set_params(**{key: params[key]}) is twin
    with pytest.raises(ValueError, match="no_such_parameter"):
        twin.set_params(no_such_parameter=1)
    assert repr(twin).startswith(f"{name}(")


@pytest.mark.parametrize("name", sorted(CASES))
def test_not_fitted_error(name, data):
    est = CASES[name][0]()
    methods = [m for m in INFERENCE if hasattr(est, m)]
    assert methods
    for method in methods:
        with pytest.raises(NotFittedError):
            getattr(est, method)(query(name, data))


_ON_X = sorted(n for n in CASES if CASES[n][1] != "histogram")      # HistogramGMM: points
_SCORED = sorted(n for n in CASES if CASES[n][1] in ("classes", "real")
                 and hasattr(CASES[n][0](), "score"))


@pytest.mark.parametrize("name", _ON_X)
def test_x_of_the_wrong_shape_is_refused_in_scikit_learns_words(name, data):
    """fit and every inference method check X as scikit-learn does, with its messages
    (ITKernelClassifier too, which check_estimator cannot drive): a 1-D X, no samples, no
    features; n_features_in_ is set by fit."""
    est = fit(CASES[name][0](), name, data)
    X = data["X"].toarray()
    assert est.n_features_in_ == X.shape[1]
    methods = [m for m in INFERENCE if hasattr(est, m)]
    assert methods
    for method in methods:
        with pytest.raises(ValueError, match="Expected a 2-D array for X"):
            getattr(est, method)(X[0])
        with pytest.raises(ValueError, match=r"Found array with 0 sample\(s\)"):
            getattr(est, method)(X[:0])
    four = dict(data, y=np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match=r"X has 0 feature\(s\)"):
        fit(CASES[name][0](), name, four, np.zeros((4, 0)))
    with pytest.raises(ValueError, match="Expected a 2-D array for X"):
        fit(CASES[name][0](), name, four, np.ones(4))


@pytest.mark.parametrize("name", _ON_X)
def test_a_wrong_number_of_features_is_named_with_the_estimator(name, data):
    est = fit(CASES[name][0](), name, data)
    X = data["X"].toarray()
    for method in (m for m in INFERENCE if hasattr(est, m)):
        with pytest.raises(ValueError, match=f"X has 3 features, but {name} is expecting "
                                             f"{X.shape[1]} features as input"):
            getattr(est, method)(X[:, :3])


@pytest.mark.parametrize("name", _SCORED)
def test_score_checks_y_as_fit_does(name, data):
    """Issue 30: score's y is checked as fit's (it said "operands could not be
    broadcast")."""
    est = fit(CASES[name][0](), name, data)
    X = data["X"]
    y = data["y"] if CASES[name][1] == "classes" else data["y"] * 1.5 + 0.25
    n = X.shape[0]
    with pytest.raises(ValueError, match=f"y has {n - 1} entries but X has {n} samples"):
        est.score(X, y[:-1])
    with pytest.raises(ValueError, match="y should be a 1d array"):
        est.score(X, np.c_[y, y])


#: public callables that need no fitted model
_NO_FIT_NEEDED = {"fit", "partial_fit", "fit_transform", "fit_predict", "get_params",
                  "set_params", "save", "load", "get_metadata_routing", "set_output"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_public_method_and_property_needs_a_fitted_model(name, data, tmp_path):
    """Issue 30: PLSA.n_parameters before fit was an AttributeError (it read components_
    without check_is_fitted).  Every public method and property that is not about fitting
    or parameters raises NotFittedError on an unfitted estimator."""
    import inspect

    est = CASES[name][0]()
    args = {"X": query(name, data), "y": data["y"], "n_samples": 10, "path": tmp_path / "m",
            "points": np.zeros((3, 2))}
    if name == "HistogramGMM":
        args.update(weights=data["histogram"][0], bin_centers=data["histogram"][1])
    checked = []
    for attr in dir(type(est)):
        if attr.startswith("_") or attr in _NO_FIT_NEEDED:
            continue
        static = inspect.getattr_static(type(est), attr)
        if isinstance(static, property):
            with pytest.raises(NotFittedError):
                getattr(est, attr)
            checked.append(attr)
            continue
        try:
            method = getattr(est, attr)
        except NotFittedError:
            checked.append(attr)
            continue
        except AttributeError:     # available only for some parameters (decision_function)
            continue
        if not callable(method):
            continue
        required = [p for p in inspect.signature(method).parameters.values()
                    if p.default is inspect.Parameter.empty
                    and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        with pytest.raises(NotFittedError):
            method(*(args.get(p.name, args["X"]) for p in required))
        checked.append(attr)
    assert checked


def _bad_values(constraints):
    """(value, expected exception) pairs that the constraints reject."""
    specs = [make_constraint(c) for c in constraints]
    out = [(object(), TypeError)]
    for c in specs:
        if isinstance(c, Interval):
            step = 1 if c.kind is Integral else 0.5
            if c.left is not None:
                out.append((c.left - step, ValueError))
            if c.right is not None:
                out.append((c.right + step, ValueError))
            if c.kind is Real:
                out.append((float("nan"), ValueError))
        elif isinstance(c, Options):
            if isinstance(c.values[0], str):
                out.append(("no-such-option", ValueError))
        elif isinstance(c, GridShape):
            out.append(((0,) * (c.ndim or 2), ValueError))
        elif str(c).startswith("numpy.float32"):
            out.append((np.int32, ValueError))
        elif str(c).startswith("None or a non-zero int"):
            out.append((0, ValueError))
    return [(v, e) for v, e in out if not any(c.is_satisfied_by(v) for c in specs)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_parameters_raise_the_policy_exception(name, data):
    cls = type(CASES[name][0]())
    checked = 0
    for param, constraints in cls._parameter_constraints.items():
        for value, exc in _bad_values(constraints):
            est = CASES[name][0]().set_params(**{param: value})
            with pytest.raises(exc, match=param):
                fit(est, name, data)
            checked += 1
    assert checked >= len(cls._parameter_constraints)


def _other_valid_value(constraints, value):
    """A valid value different from ``value`` (None when none is easy to build)."""
    for c in (make_constraint(c) for c in constraints):
        candidates = []
        if isinstance(c, Options):
            candidates = [v for v in c.values if v != value]
        elif isinstance(c, Interval) and isinstance(value, (int, float)) \
                and not isinstance(value, bool):
            candidates = [value + 1, value * 2, value / 2] if c.kind is Real else [value + 1]
        elif str(c) == "a bool" or c.description.startswith("an instance of 'bool'"):
            candidates = [not value]
        candidates = [v for v in candidates if c.is_satisfied_by(v)]
        if candidates:
            return candidates[0]
    if isinstance(value, bool):
        return not value
    return None


@pytest.mark.parametrize("name", sorted(CASES))
def test_set_params_after_fit_never_silently_changes_inference(name, data):
    """A parameter that inference reads (``_inference_params``) changed after fit is refused
    with a ValueError naming it; any other parameter change leaves every inference output
    bit-identical (it only matters to the next fit), but for the documented options of
    inference (``_inference_options``)."""
    est = fit(CASES[name][0](), name, data)
    reference = outputs(est, name, data)
    cls = type(est)
    changed = 0
    for param, constraints in cls._parameter_constraints.items():
        old = getattr(est, param)
        new = _other_valid_value(constraints, old)
        if new is None or param in cls._inference_options:
            continue
        est.set_params(**{param: new})
        changed += 1
        if param in cls._inference_params:
            with pytest.raises(ValueError, match=param):
                outputs(est, name, data)
        else:
            after = outputs(est, name, data)
            assert after.keys() == reference.keys()
            for method in after:
                np.testing.assert_array_equal(after[method], reference[method],
                                              err_msg=f"{param}={new!r} changed {method}")
        est.set_params(**{param: old})
    assert changed or not cls._parameter_constraints
    for method, value in outputs(est, name, data).items():   # set back: accepted again
        np.testing.assert_array_equal(value, reference[method])


@pytest.mark.parametrize("name", sorted(CASES))
def test_save_load_round_trip(name, data, tmp_path):
    est = fit(CASES[name][0](), name, data)
    path = tmp_path / "model.npz"
    if name == "ITKernelClassifier":
        with pytest.raises(TypeError, match="not a saveable"):
            est.save(path)
        return
    est.save(path)
    loaded = type(est).load(path)
    assert type(loaded) is type(est)
    assert loaded.get_params(deep=False).keys() == est.get_params(deep=False).keys()
    a, b = fitted_state(est), fitted_state(loaded)
    assert a.keys() == b.keys() and a
    for key in a:
        if isinstance(a[key], np.ndarray):
            assert a[key].dtype == b[key].dtype and np.array_equal(a[key], b[key]), key
        else:
            assert type(a[key]) is type(b[key]) and a[key] == b[key], key
    out_a, out_b = outputs(est, name, data), outputs(loaded, name, data)
    assert out_a.keys() == out_b.keys() and out_a
    for method in out_a:
        np.testing.assert_array_equal(out_a[method], out_b[method], err_msg=method)
    other = "PLSA" if name != "PLSA" else "RAP"
    with pytest.raises(TypeError, match=f"not a {other}"):
        type(fit(CASES[other][0](), other, data)).load(path)


def _float_arrays(est):
    return [v for v in fitted_state(est).values()
            if isinstance(v, np.ndarray) and v.dtype.kind == "f"]


@pytest.mark.parametrize("name", sorted(n for n in CASES if "dtype" in CASES[n][0]().get_params()))
def test_dtype_rule(name, data):
    """dtype fixes the working precision; None follows float32/float64 input."""
    X32 = data["X"].astype(np.float32)
    est64 = fit(CASES[name][0]().set_params(dtype=np.float64), name, data, X32)
    assert not any(a.dtype == np.float32 for a in _float_arrays(est64))
    est32 = fit(CASES[name][0]().set_params(dtype=np.float32), name, data)
    assert any(a.dtype == np.float32 for a in _float_arrays(est32))
    follow = fit(CASES[name][0]().set_params(dtype=None), name, data, X32)
    assert [a.dtype for a in _float_arrays(follow)] == [a.dtype for a in _float_arrays(est32)]


def test_convergence_warning_names_the_estimator(data):
    with pytest.warns(ConvergenceWarning, match="PLSA did not converge in 2 iterations"):
        countgrid.PLSA(2, n_iter=2, random_state=0).fit(data["X"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        countgrid.PLSA(2, n_iter=500, tol=1e-3, random_state=0).fit(data["X"])


# scikit-learn's check_estimator.  An estimator declares the checks it fails, each with the
# reason, in _sklearn_expected_failed_checks; every other check passes and must keep passing
# (an expected failure that passes fails the run: xfail_strict in pyproject.toml).
def _expected_failed(estimator):
    return dict(type(estimator)._sklearn_expected_failed_checks)


def _sklearn_cases():
    # HistogramGMM is fitted to a histogram (weights, bin centres), not to X; the
    # ITKernelClassifier wraps an embedding and a scikit-learn SVC and is checked through
    # scikit-learn's model selection in tests/kernels/test_itk_classifier.py
    return [CASES[n][0]() for n in sorted(CASES)
            if CASES[n][1] != "histogram" and n != "ITKernelClassifier"]


def test_only_zipgtm_declares_sklearn_failures():
    declared = {name for name, (make, _) in CASES.items()
                if type(make())._sklearn_expected_failed_checks}
    assert declared == {"ZIPGTM"}


try:
    from sklearn.utils.estimator_checks import parametrize_with_checks
except ImportError:  # pragma: no cover - scikit-learn is a test dependency
    parametrize_with_checks = None

if parametrize_with_checks is not None:
    # countgrid's estimators follow scikit-learn's API without inheriting from its
    # BaseEstimator (scikit-learn is optional): its checks say so once per estimator while
    # they are collected, here
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", r"Estimator \w+ does not inherit from "
                                r"`sklearn\.base\.BaseEstimator`", UserWarning)
        _sklearn_checks = parametrize_with_checks(_sklearn_cases(),
                                                  expected_failed_checks=_expected_failed)

    @_sklearn_checks
    def test_sklearn_check_estimator(estimator, check):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            check(estimator)
