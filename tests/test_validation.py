"""Bad input gives a clear ValueError / TypeError naming the argument, never a crash."""
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid import CountingGrid

from _expected_warnings import FEW_ITERATIONS

EXTENT, WINDOW = (4, 4), (2, 2)


def _X(n=20, m=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.0, size=(n, m)).astype(np.float64)
    X[:, 0] += 1  # no empty documents
    return sp.csr_matrix(X)


def _cg(**kw):
    base = dict(n_iter=2, tol=0, random_state=0, num_threads=1)
    base.update(kw)
    return CountingGrid(EXTENT, WINDOW, **base)


@pytest.fixture(scope="module")
def fitted():
    return _cg().fit(_X())


METHODS = ["transform", "score_samples", "score", "positions"]


# ------------------------------------------------------------------ values
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("value,match", [(-1.0, "non-negative"), (np.nan, "NaN"),
                                         (np.inf, "infinity"), (-np.inf, "NaN or inf")])
def test_bad_values_in_fit_and_inference(fitted, sparse, value, match):
    X = _X().toarray()
    X[3, 2] = value
    Xb = sp.csr_matrix(X) if sparse else X
    with pytest.raises(ValueError, match=match) as exc:
        _cg().fit(Xb)
    assert "X" in str(exc.value)
    for meth in METHODS:
        with pytest.raises(ValueError, match=match):
            getattr(fitted, meth)(Xb)


@pytest.mark.parametrize("n_features", [7, 9])
@pytest.mark.parametrize("meth", METHODS)
@pytest.mark.parametrize("sparse", [False, True])
def test_wrong_n_features(fitted, n_features, meth, sparse):
    X = np.ones((3, n_features))
    Xb = sp.csr_matrix(X) if sparse else X
    with pytest.raises(ValueError, match=r"X has %d features.*8" % n_features):
        getattr(fitted, meth)(Xb)


# ------------------------------------------------------------- grid params
@pytest.mark.parametrize("extent,window,exc,match", [
    ((4, 4), (5, 2), ValueError, "larger than the grid extent"),
    ((3,), (4,), ValueError, "larger than the grid extent"),
    ((4, 4), (2,), ValueError, "window"),
    ((4,), (2, 2), ValueError, "window"),
    ((4, 4, 4), (2, 2), ValueError, "window"),
    ((4.0, 4), (2, 2), TypeError, "extent"),
    ((4.5, 4), (2, 2), TypeError, "extent"),
    ((4, 4), (2.0, 2), TypeError, "window"),
    ("44", (2, 2), ValueError, "extent"),   # a str: only "auto" is allowed
    ((True, 4), (1, 1), TypeError, "extent"),
    (None, (2, 2), TypeError, "extent"),
    ((4, 4), None, TypeError, "window"),
    ((0, 4), (1, 1), ValueError, "extent"),
    ((-4, 4), (1, 1), ValueError, "extent"),
    ((4, 4), (0, 2), ValueError, "window"),
    ((4, 4), (-1, 2), ValueError, "window"),
    ((), (), ValueError, "extent"),
])
def test_bad_grid(extent, window, exc, match):
    with pytest.raises(exc, match=match):
        CountingGrid(extent, window, n_iter=1, num_threads=1).fit(_X())


@FEW_ITERATIONS
def test_int_extent_is_refused_and_numpy_ints_are_accepted():
    # a bare int once made a silent ring of cells (tests/grid/test_grid_shapes.py)
    with pytest.raises(ValueError, match=r"pass \(6, 6\) for a 6x6 grid or \(6,\)"):
        CountingGrid(6, 3, n_iter=1, num_threads=1, random_state=0).fit(_X())
    cg = CountingGrid((6,), (3,), n_iter=1, num_threads=1, random_state=0).fit(_X())
    assert cg.pi_.shape == (6, 8)
    cg = CountingGrid(np.array([4, 4]), (np.int64(2), np.int32(2)), n_iter=1, num_threads=1,
                      random_state=0).fit(_X())
    assert cg.pi_.shape == (4, 4, 8)


# ------------------------------------------------------------- shapes/types
@pytest.mark.parametrize("X,exc,match", [
    (np.zeros((0, 5)), ValueError, "0 sample"),
    (np.zeros((5, 0)), ValueError, "0 feature"),
    (sp.csr_matrix((0, 5)), ValueError, "0 sample"),
    (sp.csr_matrix((5, 0)), ValueError, "0 feature"),
    (np.zeros((5, 5)), ValueError, "empty"),
    (sp.csr_matrix((5, 5)), ValueError, "empty"),
    (np.array([["a", "b"], ["c", "d"]]), TypeError, "X"),
    (np.array([[1, 2], [3, None]], dtype=object), ValueError, "X contains NaN"),
    (np.array([[1, 2], [3, {}]], dtype=object), TypeError, "X"),
    (np.array([[1, 2], [3, 4]], dtype=complex), ValueError, "Complex data not supported: X"),
    (sp.csr_matrix(np.array([[1, 2], [3, 4]], dtype=complex)), ValueError,
     "Complex data not supported: X"),
    (np.array([1.0, 2.0, 3.0]), ValueError, "2-D"),
    (np.ones((2, 3, 4)), ValueError, "2-D"),
    (np.float64(3.0), ValueError, "2-D"),
    ("abc", TypeError, "X"),
    (b"abc", TypeError, "X"),
    ([[1, 2], [3]], TypeError, "X"),
])
def test_bad_X_in_fit(X, exc, match):
    with pytest.raises(exc, match=match):
        _cg().fit(X)


@pytest.mark.parametrize("X,exc", [
    (np.zeros((0, 8)), ValueError),
    (np.ones(8), ValueError),
    (np.ones((2, 8, 1)), ValueError),
    (np.full((2, 8), "a"), TypeError),
    (np.ones((2, 8), dtype=complex), ValueError),
])
@pytest.mark.parametrize("meth", METHODS)
def test_bad_X_in_inference(fitted, X, exc, meth):
    with pytest.raises(exc, match="X"):
        getattr(fitted, meth)(X)


def test_bool_and_int_and_list_inputs_are_counts(fitted):
    """Non-float real inputs are accepted as counts (results as for floats)."""
    X = (_X().toarray() > 0)
    ref = fitted.score_samples(sp.csr_matrix(X.astype(np.float64)))
    np.testing.assert_allclose(fitted.score_samples(sp.csr_matrix(X)), ref, rtol=1e-12)
    np.testing.assert_allclose(fitted.score_samples(sp.csr_matrix(X.astype(np.uint8))), ref,
                               rtol=1e-12)
    # dense bool / nested lists (these take the dense path: another summation order, so
    # equal to the model's precision, float32 by default)
    rtol = 1e-9 if fitted.pi_.dtype == np.float64 else 1e-6
    np.testing.assert_allclose(fitted.score_samples(X), ref, rtol=rtol)
    np.testing.assert_allclose(fitted.score_samples(X.astype(int).tolist()), ref, rtol=rtol)


# ---------------------------------------------------------- corrupt sparse
def _corrupt(kind):
    A = sp.csr_matrix(np.array([[1.0, 0, 2, 0], [0, 3, 0, 1], [1, 1, 0, 0]]))
    if kind == "index_too_large":
        A.indices[0] = 4
    elif kind == "index_huge":
        A.indices[1] = 10 ** 6
    elif kind == "index_negative":
        A.indices[0] = -1
    elif kind == "indptr_short":
        A.indptr = A.indptr[:-1].copy()
    elif kind == "indptr_long":
        A.indptr = np.append(A.indptr, A.indptr[-1])
    elif kind == "indptr_decreasing":
        A.indptr = np.array([0, 3, 2, 6], dtype=A.indptr.dtype)
    elif kind == "indptr_not_from_zero":
        A.indptr = A.indptr + 1
    elif kind == "indptr_past_end":
        A.indptr[-1] = 100
    elif kind == "data_short":
        A.data = A.data[:-1].copy()
    else:
        raise AssertionError(kind)
    return A


CORRUPT = ["index_too_large", "index_huge", "index_negative", "indptr_short", "indptr_long",
           "indptr_decreasing", "indptr_not_from_zero", "indptr_past_end", "data_short"]


@pytest.mark.parametrize("kind", CORRUPT)
def test_corrupt_csr_in_fit(kind):
    with pytest.raises(ValueError, match="X"):
        CountingGrid((3, 3), (2, 2), n_iter=2, num_threads=1).fit(_corrupt(kind))


@FEW_ITERATIONS
@pytest.mark.parametrize("kind", CORRUPT)
@pytest.mark.parametrize("meth", METHODS)
def test_corrupt_csr_in_inference(kind, meth):
    A = sp.csr_matrix(np.array([[1.0, 0, 2, 0], [0, 3, 0, 1], [1, 1, 0, 0]]))
    cg = CountingGrid((3, 3), (2, 2), n_iter=2, num_threads=1, random_state=0).fit(A)
    with pytest.raises(ValueError, match="X"):
        getattr(cg, meth)(_corrupt(kind))


_CSC_SCRIPT = textwrap.dedent("""
    import numpy as np, scipy.sparse as sp
    from countgrid import CountingGrid
    A = np.array([[1.0, 0, 2, 0], [0, 3, 0, 1], [1, 1, 0, 0]])
    B = sp.csc_matrix(A)
    kind = {kind!r}
    if kind == "row_index_too_large":
        B.indices[0] = 100
    elif kind == "row_index_negative":
        B.indices[0] = -7
    elif kind == "indptr_decreasing":
        B.indptr[1] = B.indptr[2] + 1
    elif kind == "indptr_short":
        B.indptr = B.indptr[:-1].copy()
    try:
        CountingGrid((3, 3), (2, 2), n_iter=2, num_threads=1, random_state=0).fit(B)
        print("RESULT fitted")
    except ValueError as exc:
        print("RESULT ValueError", exc)
""")


@pytest.mark.parametrize("kind", ["row_index_too_large", "row_index_negative",
                                  "indptr_decreasing", "indptr_short"])
def test_corrupt_csc_raises_instead_of_crashing(kind):
    """Run in a subprocess: corrupt CSC input must raise ValueError, not
    segfault (or silently fit on garbage)."""
    # The child imports countgrid exactly as this process did (installed
    # package, or PYTHONPATH=src after build_ext --inplace), never the source
    # tree on its own: the tests also run against installed wheels.
    proc = subprocess.run([sys.executable, "-c", _CSC_SCRIPT.format(kind=kind)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"crashed with return code {proc.returncode}: {proc.stderr[-500:]}"
    assert "RESULT ValueError" in proc.stdout, proc.stdout


# ---------------------------------------------------------------- params
@pytest.mark.parametrize("dtype,exc", [
    (np.int32, ValueError), (np.float16, ValueError), (np.longdouble, ValueError),
    (np.complex128, ValueError), ("foo", TypeError), (3, TypeError), (object, ValueError),
])
def test_bad_dtype_param(dtype, exc):
    with pytest.raises(exc, match="dtype"):
        _cg(dtype=dtype).fit(_X())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, "float32", "f8", np.dtype("float32")])
def test_good_dtype_param(dtype):
    cg = _cg(dtype=dtype).fit(_X())
    assert cg.pi_.dtype == np.dtype(dtype)


# One policy (countgrid._utils.param_validation): a value of a type no constraint accepts is a
# TypeError, an accepted type out of range a ValueError; both name the parameter.
@pytest.mark.parametrize("kw,exc,match", [
    (dict(pseudocount=-1.0), ValueError, "pseudocount"),
    (dict(pseudocount=np.nan), ValueError, "pseudocount"),
    (dict(pseudocount=np.inf), ValueError, "pseudocount"),
    (dict(pseudocount="x"), ValueError, "pseudocount"),
    (dict(pseudocount=None), TypeError, "pseudocount"),
    (dict(posterior_floor=-1e-3), ValueError, "posterior_floor"),
    (dict(posterior_floor=1.0 / 16), ValueError, "posterior_floor"),
    (dict(posterior_floor=0.5), ValueError, "posterior_floor"),
    (dict(posterior_floor=np.nan), ValueError, "posterior_floor"),
    (dict(posterior_floor="x"), ValueError, "posterior_floor"),
    (dict(n_iter=0), ValueError, "n_iter"),
    (dict(n_iter=-3), ValueError, "n_iter"),
    (dict(n_iter=1.5), TypeError, "n_iter"),
    (dict(n_iter=True), TypeError, "n_iter"),
    (dict(n_iter="10"), TypeError, "n_iter"),
    (dict(min_iter=-1), ValueError, "min_iter"),
    (dict(tol=-1e-3), ValueError, "tol"),
    (dict(tol=np.nan), ValueError, "tol"),
    (dict(tol=np.inf), ValueError, "tol"),
    (dict(tol="a"), TypeError, "tol"),
    (dict(tol=None), TypeError, "tol"),
    (dict(num_threads=0), ValueError, "num_threads"),
    (dict(num_threads=1.5), TypeError, "num_threads"),
    (dict(num_threads="2"), TypeError, "num_threads"),
    (dict(num_threads=True), TypeError, "num_threads"),
    (dict(random_state="x"), TypeError, "random_state"),
    (dict(random_state=1.5), TypeError, "random_state"),
    (dict(window_schedule=[(5, 5)]), ValueError, "window_schedule"),
    (dict(window_schedule=[(2,)]), ValueError, "window_schedule"),
    (dict(window_schedule=[((2, 2), 0)]), ValueError, "window_schedule"),
])
def test_bad_params(kw, exc, match):
    with pytest.raises(exc, match=match):
        _cg(**kw).fit(_X())


def test_param_errors_at_inference_num_threads(fitted):
    import copy

    bad = copy.deepcopy(fitted)
    bad.num_threads = 0
    with pytest.raises(ValueError, match="num_threads"):
        bad.transform(_X())


def test_negative_num_threads_counts_back_from_cores():
    cg = _cg(num_threads=-1).fit(_X())
    ref = _cg(num_threads=1).fit(_X())
    assert np.array_equal(cg.pi_, ref.pi_)


# ---------------------------------------------------------------- not fitted
@pytest.mark.parametrize("meth", METHODS)
def test_not_fitted(meth):
    with pytest.raises(countgrid.NotFittedError) as exc:
        getattr(CountingGrid(EXTENT, WINDOW), meth)(_X())
    assert isinstance(exc.value, ValueError)
    assert "fit" in str(exc.value)


@pytest.mark.parametrize("cls", ["CountingGridClassifier", "CountingGridRegressor",
                                 "GenerativeCountingGridClassifier"])
def test_not_fitted_predictors(cls):
    est = getattr(countgrid, cls)(EXTENT, WINDOW)
    with pytest.raises(countgrid.NotFittedError):
        est.predict(_X())


# ---------------------------------------------------------------- dtypes
@pytest.mark.parametrize("model_dtype,input_dtype", [(np.float32, np.float64),
                                                     (np.float64, np.float32),
                                                     (np.float32, np.int64)])
def test_mismatched_dtypes_are_cast(model_dtype, input_dtype):
    X = _X()
    cg = _cg(dtype=model_dtype).fit(X)
    Xi = X.astype(input_dtype)
    Q = cg.transform(Xi)
    assert Q.dtype == model_dtype
    np.testing.assert_allclose(Q, cg.transform(X.astype(model_dtype)), rtol=1e-6, atol=1e-7)
    s = cg.score_samples(Xi)
    assert s.dtype == np.float64
    np.testing.assert_allclose(s, cg.score_samples(X.astype(model_dtype)), rtol=1e-6)
    np.testing.assert_array_equal(cg.positions(Xi), cg.positions(X.astype(model_dtype)))


def test_float_counts_are_accepted():
    X = _X() * 0.5
    cg = _cg().fit(X)
    assert np.isfinite(cg.log_likelihood_).all()


def test_input_not_modified():
    X = _X()
    X.data[0] = 0.0  # an explicit zero
    Xc = X.copy()
    cg = _cg().fit(X)
    cg.transform(X)
    assert np.array_equal(X.data, Xc.data) and np.array_equal(X.indices, Xc.indices)
    assert np.array_equal(X.indptr, Xc.indptr)
    Xd = _X(seed=3).toarray()
    Xdc = Xd.copy()
    cg.score_samples(sp.csr_matrix(Xd))
    assert np.array_equal(Xd, Xdc)


# ---------------------------------------------------------------- embed / classifiers
def test_embed_labels_validation():
    Q = np.full((3, 16), 1 / 16)
    with pytest.raises(ValueError, match="posteriors"):
        countgrid.embed_labels(Q[:, :15], [0, 1, 0], EXTENT, WINDOW)
    with pytest.raises(ValueError, match="posteriors"):
        countgrid.embed_labels(-Q, [0, 1, 0], EXTENT, WINDOW)
    with pytest.raises(TypeError, match="posteriors"):
        countgrid.embed_labels(np.ones((3, 16), dtype=int), [0, 1, 0], EXTENT, WINDOW)
    with pytest.raises(ValueError, match="y"):
        countgrid.embed_labels(Q, [0, 1], EXTENT, WINDOW)
    with pytest.raises(ValueError, match="classes"):
        countgrid.embed_labels(Q, [0, 1, 2], EXTENT, WINDOW, classes=[0, 1])
    with pytest.raises(ValueError, match="kind"):
        countgrid.embed_labels(Q, [0, 1, 0], EXTENT, WINDOW, kind="ordinal")
    with pytest.raises(ValueError, match="NaN"):
        countgrid.embed_labels(Q, [0.0, np.nan, 1.0], EXTENT, WINDOW, kind="continuous")
    with pytest.raises(ValueError, match="y must hold real numbers"):
        countgrid.embed_labels(Q, ["a", "b", "c"], EXTENT, WINDOW, kind="continuous")
    with pytest.raises(ValueError, match="larger"):
        countgrid.embed_labels(Q, [0, 1, 0], EXTENT, (5, 5))


@pytest.mark.parametrize("cls", [countgrid.CountingGridClassifier,
                                 countgrid.GenerativeCountingGridClassifier])
def test_classifier_label_validation(cls):
    X = _X()
    with pytest.raises(ValueError, match="y"):
        cls(EXTENT, WINDOW, n_iter=1, num_threads=1).fit(X, np.zeros(19))
    with pytest.raises(ValueError, match="class"):
        cls(EXTENT, WINDOW, n_iter=1, num_threads=1).fit(X, np.zeros(20))
    with pytest.raises(ValueError, match="y"):
        cls(EXTENT, WINDOW, n_iter=1, num_threads=1).fit(X, np.zeros((20, 2)))


def test_regressor_target_validation():
    X = _X()
    with pytest.raises(ValueError, match="y"):
        countgrid.CountingGridRegressor(EXTENT, WINDOW, n_iter=1, num_threads=1).fit(
            X, np.r_[np.zeros(19), np.nan])
    with pytest.raises(ValueError, match="y"):
        countgrid.CountingGridRegressor(EXTENT, WINDOW, n_iter=1, num_threads=1).fit(
            X, np.array(["a"] * 20))


def test_limit_blas_threads():
    import threadpoolctl

    from countgrid._utils.threads import limit_blas_threads

    with limit_blas_threads(1):
        infos = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
        assert all(i["num_threads"] == 1 for i in infos)
    before = [i["num_threads"] for i in threadpoolctl.threadpool_info()]
    with limit_blas_threads(1, active=False):
        assert [i["num_threads"] for i in threadpoolctl.threadpool_info()] == before


# ---- labels keep their type (issue 13: object ints came back as strings) ----------------
from countgrid._utils.validation import encode_labels  # noqa: E402


@pytest.mark.parametrize("y, kind", [
    (np.array([3, 1, 3, 1], dtype=object), "i"),
    (np.array(["b", "a", "b", "a"], dtype=object), "U"),
    (np.array([0.0, 1.0, 0.0, 1.0], dtype=object), "f"),
    (np.array([True, False, True, False], dtype=object), "b"),
    ([1, 2, 1, 2], "i"),
])
def test_object_labels_keep_their_type(y, kind):
    classes, idx = encode_labels(y)
    assert classes.dtype.kind == kind
    assert (classes[idx] == np.asarray(y)).all()


@pytest.mark.parametrize("y", [np.array([1, "a", 1, "a"], dtype=object),
                               np.array([1, None, 1, None], dtype=object),
                               np.array([1, True, 1, 2], dtype=object)])
def test_mixed_label_types_are_a_type_error(y):
    with pytest.raises(TypeError, match="several types"):
        encode_labels(y)


def test_nan_and_missing_labels():
    with pytest.raises(ValueError, match="NaN"):
        encode_labels(np.array([0.0, np.nan, 1.0]))
    with pytest.raises(ValueError, match="the target y is None"):
        encode_labels(None)


@pytest.mark.parametrize("y", [np.array([0.5, 1.5, 0.5]), np.array([0.5, 1.5, 0.5], dtype=object)])
def test_non_integer_float_labels_are_continuous(y):
    """As scikit-learn: a classifier refuses real-valued targets instead of one class each."""
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        encode_labels(y)


def test_object_arrays_of_numbers_are_counts(fitted):
    X = _X()[:4].toarray()
    np.testing.assert_array_equal(fitted.score_samples(X.astype(object)), fitted.score_samples(X))


@FEW_ITERATIONS
def test_column_vector_y_is_raveled_with_a_warning():
    from countgrid.exceptions import DataConversionWarning
    X = _X()
    y = np.arange(X.shape[0]) % 2
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        m = countgrid.CountingGridClassifier(EXTENT, WINDOW, n_iter=1, num_threads=1,
                                             random_state=0).fit(X, y[:, None])
    ref = countgrid.CountingGridClassifier(EXTENT, WINDOW, n_iter=1, num_threads=1,
                                           random_state=0).fit(X, y)
    np.testing.assert_array_equal(m.gamma_, ref.gamma_)


@FEW_ITERATIONS
def test_classifier_scores_object_int_labels(tmp_path):
    import countgrid
    rng = np.random.default_rng(0)
    X = np.vstack([rng.poisson([4, 4, 0.2, 0.2], (15, 4)), rng.poisson([0.2, 0.2, 4, 4], (15, 4))])
    y = np.array([7] * 15 + [9] * 15, dtype=object)
    for clf in (countgrid.CountingGridClassifier((3, 3), (2, 2), n_iter=5, random_state=0),
                countgrid.GenerativeCountingGridClassifier((3, 3), (2, 2), n_iter=5,
                                                           random_state=0)):
        clf.fit(X, y)
        assert clf.classes_.dtype.kind == "i" and clf.score(X, y) > 0.9
        clf.save(tmp_path / "m.npz")
        assert countgrid.load(tmp_path / "m.npz").score(X, y) == clf.score(X, y)


def test_not_fitted_error_is_sklearns_once_sklearn_is_loaded():
    code = textwrap.dedent("""
        import sys
        import countgrid
        try:
            countgrid.PLSA(2).transform([[1, 2]])
        except countgrid.NotFittedError as e:
            plain = type(e)
        assert "sklearn" not in sys.modules, "countgrid imported scikit-learn"
        from sklearn.exceptions import NotFittedError as SkNotFitted
        try:
            countgrid.PLSA(2).transform([[1, 2]])
        except SkNotFitted as e:
            assert isinstance(e, countgrid.NotFittedError) and isinstance(e, AttributeError)
        assert not issubclass(plain, SkNotFitted)
        print("ok")
    """)
    pytest.importorskip("sklearn")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


@FEW_ITERATIONS
def test_function_arguments_are_validated_like_parameters():
    from countgrid.embeddings import fisher_score
    from countgrid.plotting import text_word_grid

    cg = CountingGrid((4, 4), (2, 2), n_iter=2, random_state=0, num_threads=1).fit(_X())
    names = [f"w{i}" for i in range(8)]
    with pytest.raises(ValueError, match="'n_words' parameter of text_word_grid"):
        text_word_grid(cg, names, n_words=0)
    with pytest.raises(TypeError, match="'n_words' parameter of text_word_grid"):
        text_word_grid(cg, names, n_words=2.7)
    with pytest.raises(TypeError, match="grid must be a counting grid"):
        text_word_grid(countgrid.PLSA(2), names)
    with pytest.raises(TypeError, match="'model' parameter of fisher_score"):
        fisher_score(cg, _X())
    plsa = countgrid.PLSA(2, n_iter=2, random_state=0).fit(_X())
    with pytest.raises(TypeError, match="'normalize_length' parameter of fisher_score"):
        fisher_score(plsa, _X(), normalize_length="no")


@FEW_ITERATIONS
@pytest.mark.parametrize("make", [lambda: countgrid.PLSA(2, n_iter=2, random_state=0),
                                  lambda: CountingGrid((3, 3), (2, 2), n_iter=2, num_threads=1,
                                                       dtype=np.float64, random_state=0)])
def test_documents_beyond_max_length_are_refused(make):
    from countgrid.topics import MAX_DOCUMENT_LENGTH

    X = _X().toarray()
    model = make().fit(X)
    huge = X * (2 * MAX_DOCUMENT_LENGTH / X.sum(axis=1).max())
    with pytest.raises(ValueError, match="X has a document of total count .* beyond "
                                         "MAX_DOCUMENT_LENGTH"):
        make().fit(huge)
    with pytest.raises(ValueError, match="MAX_DOCUMENT_LENGTH"):
        model.score_samples(huge)
    ok = X * (0.5 * MAX_DOCUMENT_LENGTH / X.sum(axis=1).max())
    assert np.isfinite(model.score_samples(ok)).all()


def test_load_names_a_path_of_the_wrong_type():
    with pytest.raises(TypeError, match="path must be a file name"):
        countgrid.io.load(None)


@pytest.mark.parametrize("sparse", [False, True])
def test_float32_grids_refuse_counts_beyond_float32(sparse):
    X = _X() * 1e300
    X = X if sparse else X.toarray()
    # with a ValueError only: the cast that finds them does not also warn of an overflow
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match="X holds values too large for float32 .* "
                                             "dtype=numpy.float64"):
            CountingGrid((3, 3), (2, 2), n_iter=2, num_threads=1, random_state=0).fit(X)


@FEW_ITERATIONS
@pytest.mark.parametrize("scale", [1.0, 2.0**1000, 1e300, 1e-320])
def test_regressor_score_is_scale_free(scale):
    X = _X()
    y = np.linspace(1.0, 3.0, X.shape[0])
    m = countgrid.CountingGridRegressor(EXTENT, WINDOW, n_iter=2, num_threads=1,
                                        random_state=0).fit(X, y)
    ref = m.score(X, y)
    ms = countgrid.CountingGridRegressor(EXTENT, WINDOW, n_iter=2, num_threads=1,
                                         random_state=0).fit(X, y * scale)
    assert np.isfinite(ms.score(X, y * scale))
    if scale < 1e-300:   # subnormal targets and predictions keep ~10 bits: close, not equal
        assert abs(ms.score(X, y * scale) - ref) < 0.01
    else:   # a float32 grid (the default): the targets' embedding keeps ~24 bits
        np.testing.assert_allclose(ms.score(X, y * scale), ref, rtol=1e-4)


def test_integer_parameters_beyond_int64_are_refused():
    with pytest.raises(ValueError, match="'cd_steps' parameter of RAP .* beyond 2\\*\\*63 - 1"):
        countgrid.RAP(2, cd_steps=10**30).fit(_X())
    with pytest.raises(ValueError, match="'n_iter' parameter of PLSA"):
        countgrid.PLSA(2, n_iter=2**63).fit(_X())
