"""The Rate Adapting Poisson harmonium (Gehler, Holub & Welling, ICML 2006)."""
import math
import time
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from countgrid._utils import progress as _progress
from countgrid._base import BaseEstimator, TransformerMixin
from countgrid.streaming._blocks import Blocks
from countgrid._utils.counts import Counts
from countgrid._utils.docs import fill_doc
from countgrid._utils.fitted import array, scalar
from countgrid._utils.memory import check_memory
from countgrid._utils.param_validation import Interval, Options, validate_params
from countgrid._utils.threads import effective_n_threads, limit_blas_threads
from countgrid._utils.validation import check_is_fitted, check_random_state, resolve_dtype
from countgrid.rap import _wrappers
from countgrid.streaming import is_chunk_source

#: Visible log-rates ``a_i + sum_j W_ij h_j`` are clipped at this value before
#: ``exp`` when sampling or reconstructing, so a Poisson rate never exceeds
#: ``exp(30) ~ 1.07e13``: no overflow, and the Poisson sampler stays fast.
MAX_LOGRATE = float(_wrappers.max_lograte)

#: Rows per random stream: the partition of a minibatch into blocks of this
#: many rows (not the thread count) fixes every random number.
BLOCK_ROWS = 8

#: Largest number of binomial trials of a hidden unit (the binomial sampler
#: works by inversion in double precision, in at most ``M_j`` steps).
MAX_TRIALS = int(_wrappers.max_trials)

#: Largest ``cd_steps``: Gibbs steps of CD-k per minibatch update (the paper uses 1), each
#: as costly as the update itself.  The kernels count them in a C int; 2**40 raised an
#: OverflowError.
MAX_CD_STEPS = 10_000

#: Largest count RAP accepts: ``exp(MAX_LOGRATE) ~ 1.07e13``.  The model's Poisson rates
#: are capped there, so larger counts lie outside what it can generate; they would also
#: make the CD gradient ``x h^T`` (eq. 10) overflow.  Every method taking counts refuses
#: larger values with a ValueError (rescale the counts).
MAX_COUNT = math.exp(MAX_LOGRATE)

#: The parameters of the inference methods that take counts (countgrid._utils.docs).
_COUNTS_PARAMETERS_DOC = """Parameters
----------
X : {array-like, sparse matrix} of shape (n_samples, n_features)
    Non-negative counts, at most :data:`MAX_COUNT`."""

_KEY_BATCH, _KEY_SHUFFLE, _KEY_SAMPLE = 0, 1, 2

#: ``learning_rate="auto"`` is ``AUTO_RATE * min(1, AUTO_UNITS / K) / m**2`` with ``m``
#: the mean non-zero count of the training data and ``K`` the hidden units (see
#: :func:`auto_learning_rate` and docs/rap.md, "Defaults").
AUTO_RATE = 0.09
AUTO_UNITS = 50


def auto_learning_rate(mean_nonzero_count, n_components=AUTO_UNITS):
    """The step size of ``learning_rate="auto"``:
    ``AUTO_RATE * min(1, AUTO_UNITS / K) / m**2`` for data whose non-zero counts average
    ``m`` and a model of ``K`` hidden units.

    Why ``1 / m**2``: multiplying every count by ``s`` leaves the hidden inputs ``W^T x``
    unchanged if ``W`` is divided by ``s``, while the CD gradient of ``W`` (``x h^T``,
    eq. 10) is multiplied by ``s``; the step that keeps the same relative change of
    ``W`` is therefore divided by ``s**2``.  Why ``1 / K`` beyond 50 units: a step
    changes every visible log-rate ``a_i + sum_j W_ij h_j`` by a sum over the ``K``
    hidden units.  The constants were calibrated on validation splits of the training
    documents of reuters_r8 and news20_full (``m`` = 1.52 and 1.50; best rates
    0.02-0.04 with 20 epochs at K = 50; at K = 200 0.0097 beat 0.0195); test queries
    were never used (docs/rap.md, "Defaults").  Document length is deliberately left
    out: news20's documents are 1.8 times longer than Reuters' and wanted the same or a
    larger step.

    Parameters
    ----------
    mean_nonzero_count : float
        Sum of the counts over the number of non-zero counts (> 0).
    n_components : int, default=AUTO_UNITS
        Hidden units ``K`` (>= 1).

    Returns
    -------
    float
    """
    try:
        m = float(mean_nonzero_count)
    except (TypeError, ValueError):
        raise TypeError(f"mean_nonzero_count must be a positive finite number, got "
                        f"{type(mean_nonzero_count).__name__}") from None
    if not (math.isfinite(m) and m > 0):
        raise ValueError(f"mean_nonzero_count must be a positive finite number, got {m!r}")
    if (isinstance(n_components, (bool, np.bool_)) or not isinstance(n_components, Integral)
            or n_components < 1):
        raise ValueError(f"n_components must be an int >= 1, got {n_components!r}")
    return AUTO_RATE * min(1.0, AUTO_UNITS / int(n_components)) / (m * m)


def _sigmoid(u):
    out = np.empty_like(u)
    pos = u >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-u[pos]))
    e = np.exp(u[~pos])
    out[~pos] = e / (1.0 + e)
    return out


@fill_doc(parameters=_COUNTS_PARAMETERS_DOC)
class RAP(TransformerMixin, BaseEstimator):
    """Rate Adapting Poisson harmonium: Poisson visible, binomial hidden units.

    A two-layer undirected model of count vectors ``x`` (``D`` words) with
    ``K`` hidden "topic" units ``h_j in {0, ..., M_j}`` (paper section 2.1):

    * ``x_i | h ~ Poisson(exp(a_i + sum_j W_ij h_j))``                 (eq. 1)
    * ``h_j | x ~ Binomial(M_j, sigmoid(sum_i W_ij x_i - beta_j))``     (eq. 2)

    with joint ``p(x, h) ∝ exp f(x, h)`` (eq. 3) and unnormalised
    log-marginal (eq. 6)
    ``sum_i (a_i x_i - log x_i!) + sum_j M_j log(1 + exp(w_j^T x - beta_j))``.
    Here ``a_i = log lambda_i``, ``beta_j = -log(p_j / (1 - p_j))``.
    Learning is stochastic gradient ascent with momentum on the contrastive
    divergence estimate of the gradient (eq. 10, Algorithm 1), with
    Rao-Blackwellisation over ``h``: the statistics use ``M ⊙ sigmoid(.)``,
    not the sampled ``h``.  The minibatch update (hidden probabilities,
    binomial and Poisson sampling, reconstruction, sufficient statistics and
    the parameter step) runs in C with OpenMP; the dense product ``h W^T``
    goes through BLAS.  Sparse input stays sparse; the reconstruction is
    stored sparse too.

    Parameters
    ----------
    n_components : int, default=50
        Number ``K`` of hidden units (topics).
    n_trials : int or array-like of int of shape (n_components,), default=1
        Binomial trials ``M_j`` of each hidden unit (``1 <= M_j <= 1000``);
        1 gives Bernoulli hidden units.
    learning_rate : float or "auto", default="auto"
        Step size of the gradient ascent (the gradient is the minibatch
        average).  ``"auto"`` (new in 0.2; 0.1.0's default was ``1e-3``) adapts the
        step to the scale of the counts and to ``K = n_components``:
        ``0.09 * min(1, 50 / K) / m**2``, with ``m`` the mean of the non-zero counts
        of the data the model is first fitted on (:func:`auto_learning_rate`; about
        0.04 for word counts and ``K <= 50``).  The rule and its
        calibration, on training documents only: docs/rap.md, "Defaults".  The step
        used is :attr:`learning_rate_`; an explicit float is used as given.
    momentum : float, default=0.9
        Momentum ``mu`` in ``v <- mu v + learning_rate g; theta <- theta + v``.
    weight_decay : float, default=1e-4
        L2 penalty on ``W`` (added as ``-weight_decay * W`` to its gradient;
        the biases are not decayed).
    batch_size : int, default=100
        Documents per minibatch (the paper's 100).
    n_epochs : int, default=20
        Passes over the training data in :meth:`fit` (shuffled each epoch).  0.1.0's
        default was 10; with the ``"auto"`` rate, 20 epochs gained 0.022 retrieval AUC
        over 10 on news20's calibration split and lost 0.001 on Reuters'
        (docs/rap.md, "Defaults").
    method : {"cd", "mean_field"}, default="cd"
        ``"cd"``: CD-k with one sampled Gibbs chain per document (Algorithm 1).
        ``"mean_field"``: both samples replaced by their conditional means,
        ``h = M ⊙ sigmoid(.)`` and ``x = exp(a + W h)`` (paper section 2.3,
        last paragraph); the reconstruction is then dense.
    cd_steps : int in [1, MAX_CD_STEPS = 10000], default=1
        Gibbs steps ``k`` of CD-k (the paper uses 1).
    dtype : {numpy.float32, numpy.float64}, default=numpy.float64
        Working precision of the parameters and the data (random numbers,
        ``exp`` and the samplers always run in double precision).
    num_threads : int, optional
        OpenMP threads (and the BLAS thread limit during fit); None uses all
        cores, negative values count back from the number of cores.
    random_state : None, int, SeedSequence or numpy.random.Generator
        Seeds the initialisation ``W ~ N(0, 0.01^2)`` and the stream seed
        :attr:`stream_seed_`.  Every minibatch then draws from one PCG64
        stream per block of 8 rows, derived from ``stream_seed_`` and the
        update counter; with a given seed the fitted parameters are identical
        for any ``num_threads``.
    verbose : int, default=0
        Print the epoch time and the mean reconstruction log-likelihood.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        ``W^T`` (row ``j`` is the topic vector ``w_j``).
    intercept_visible_ : ndarray of shape (n_features,)
        Visible log-rates ``a_i = log lambda_i``.
    intercept_hidden_ : ndarray of shape (n_components,)
        Hidden biases ``-beta_j`` (scikit-learn's sign: added to ``x W``).
    n_trials_ : ndarray of shape (n_components,)
        ``M_j`` as floats of ``dtype``.
    learning_rate_ : float
        The step size in use: ``learning_rate`` when it is a float, else
        :attr:`auto_learning_rate_`.
    auto_learning_rate_ : float
        With ``learning_rate="auto"`` only: the rate the rule gave on the data of
        :meth:`fit` (or of the first :meth:`partial_fit`, which later calls keep).
    n_iter_ : int
        Epochs run (``fit``) or passes made (``partial_fit``).
    n_updates_ : int
        Minibatch updates made; it selects the random streams of the next one.
    stream_seed_ : int
        Entropy of the random streams.
    n_features_in_ : int

    Notes
    -----
    The parameters are not identifiable (paper eqs. 8-9): flipping the sign
    of ``w_j`` and ``beta_j`` and adding ``M_j w_j`` to ``a`` leaves eq. (6)
    unchanged; :meth:`canonical_parameters` fixes the gauge ``beta_j >= 0``.
    Log-rates are clipped at :data:`MAX_LOGRATE` (30) before ``exp`` in
    sampling, :meth:`mode` and the mean-field reconstruction, so counts above
    :data:`MAX_COUNT` ``= exp(30) ~ 1.07e13`` lie outside the model: every
    method refuses them with a ValueError.  The gradient of eq. (10) grows
    with the counts, so the step must suit their scale: ``learning_rate="auto"``
    divides it by the square of the mean non-zero count; an explicit float
    must be chosen for the data.  If a
    parameter becomes NaN or infinite, learning stops with a
    ``FloatingPointError`` naming it and the epoch; ``fit`` then leaves the
    estimator unfitted and ``partial_fit`` restores the state before the call.

    ``fit`` and ``partial_fit`` are transactional: Ctrl-C during ``fit``
    keeps the last complete epoch (the parameters of a fit with that many
    epochs) and says so; during ``partial_fit`` it keeps the state before the
    call.  Long kernel calls check for Ctrl-C between blocks of rows.  Limits
    and guarantees: ``docs/rap.md``.

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> X = np.random.default_rng(0).poisson(0.5, size=(200, 30))
    >>> rap = countgrid.RAP(n_components=5, n_epochs=2, random_state=0).fit(X)
    >>> rap.transform(X).shape
    (200, 5)
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None)],
        "n_trials": [Interval(Integral, 1, MAX_TRIALS), "array-like"],
        "learning_rate": [Interval(Real, 0, None), Options("auto")],
        "momentum": [Interval(Real, 0, 1, closed="left")],
        "weight_decay": [Interval(Real, 0, None)],
        "batch_size": [Interval(Integral, 1, None)],
        "n_epochs": [Interval(Integral, 1, None)],
        "method": [Options("cd", "mean_field")],
        "cd_steps": [Interval(Integral, 1, MAX_CD_STEPS)],
        "dtype": ["dtype", None],
        "num_threads": ["num_threads"],
        "random_state": ["random_state"],
        "verbose": ["boolean", Interval(Integral, 0, None)],
    }
    _fitted_schema = {"components_": array("float", "n_hidden", "n_features"),
                      "intercept_visible_": array("float", "n_features"),
                      "intercept_hidden_": array("float", "n_hidden"),
                      "n_trials_": array("float", "n_hidden"),
                      "auto_learning_rate_": scalar("real"), "n_iter_": scalar("int"),
                      "n_updates_": scalar("int"), "stream_seed_": scalar("int"),
                      "n_features_in_": scalar("int", bind="n_features"),
                      "velocity_components_": array("float", "n_hidden", "n_features"),
                      "velocity_visible_": array("float", "n_features"),
                      "velocity_hidden_": array("float", "n_hidden")}

    def __init__(self, n_components=50, n_trials=1, learning_rate="auto", momentum=0.9,
                 weight_decay=1e-4, batch_size=100, n_epochs=20, method="cd", cd_steps=1,
                 dtype=np.float64, num_threads=None, random_state=None, verbose=0):
        self.n_components = n_components
        self.n_trials = n_trials
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.batch_size = batch_size
        self.n_epochs = n_epochs
        self.method = method
        self.cd_steps = cd_steps
        self.dtype = dtype
        self.num_threads = num_threads
        self.random_state = random_state
        self.verbose = verbose

    @property
    def learning_rate_(self):
        """The step size in use (a float); see the Attributes of the class."""
        check_is_fitted(self, "components_")
        if isinstance(self.learning_rate, str):
            try:
                return self.auto_learning_rate_
            except AttributeError:
                raise AttributeError("this RAP was fitted with an explicit learning_rate and "
                                     "has no auto_learning_rate_ yet") from None
        return float(self.learning_rate)

    # ------------------------------------------------------------ validation
    def _resolved_params(self, X=None):
        """The validated parameters as the kernels take them."""
        self._validate_params()
        K = int(self.n_components)
        dtype = resolve_dtype(self.dtype, X)
        # the per-unit arrays, before anything of K entries is built
        check_memory(4 * 8 * K, f"RAP with {K} hidden units", "use fewer hidden units "
                     "(n_components)")
        try:
            m = np.asarray(self.n_trials)
        except Exception:          # ragged sequences and other non-arrays
            m = np.asarray(None)
        if m.ndim > 1 or m.dtype.kind not in "biuf" or m.dtype.kind == "b":
            raise TypeError(f"n_trials must be an int or a 1-D array of ints, got {self.n_trials!r}")
        m = np.broadcast_to(m, (K,)) if m.ndim == 0 else m
        if m.shape != (K,):
            raise ValueError(f"n_trials has {m.shape[0]} entries; n_components is {K}")
        if not np.all(np.isfinite(m)) or np.any(m != np.round(m)) or m.min() < 1 or m.max() > MAX_TRIALS:
            raise ValueError(f"n_trials must hold integers between 1 and {MAX_TRIALS}, "
                             f"got {self.n_trials!r}")
        return dict(
            K=K, dtype=dtype, ntrials=np.ascontiguousarray(m, dtype=dtype),
            lr=None if self.learning_rate == "auto" else float(self.learning_rate),
            momentum=float(self.momentum),
            weight_decay=float(self.weight_decay), batch_size=int(self.batch_size),
            n_epochs=int(self.n_epochs), cd_steps=int(self.cd_steps),
            num_threads=effective_n_threads(self.num_threads),
        )

    @staticmethod
    def _check_count_range(counts, name="X"):
        """Refuse counts above :data:`MAX_COUNT` (outside the model, see the Notes)."""
        values = counts.X.data if counts.is_sparse else counts.X
        if values.size and float(values.max()) > MAX_COUNT:
            raise ValueError(
                f"{name} holds counts up to {float(values.max()):.6g}; RAP models counts up "
                f"to exp({MAX_LOGRATE:g}) ~ {MAX_COUNT:.4g} (its Poisson rates are capped "
                "there, countgrid.rap.MAX_COUNT): rescale the counts")
        return counts

    def _blocks(self, X, dtype, n_features=None):
        """The validated counts of ``X`` as Blocks (one block, or a chunk source's)."""
        def make(M, name, nf):
            counts = Counts(M, dtype, n_features=n_features if nf is None else nf,
                            name=name, owner=type(self).__name__)
            return self._check_count_range(counts, name)
        return Blocks(X, make)

    def _counts(self, X, dtype, n_features=None, dense_min_density=None):
        counts = Counts(X, dtype, n_features=n_features, dense_min_density=dense_min_density,
                        owner=type(self).__name__)
        return self._check_count_range(counts)

    @staticmethod
    def _check_sizes(n_rows, D, K, itemsize, what, n_row_arrays=3, n_param_arrays=0,
                     visible=False, num_threads=1):
        """check_memory for ``n_param_arrays`` (D, K) parameter arrays, ``n_row_arrays``
        (n_rows, K) arrays and (``visible``) the scratch of the visible step: rates and
        CSR entries of one block of rows (sizes as Python ints: no overflow)."""
        n_bytes = (n_param_arrays * math.prod((D, K)) + n_row_arrays * math.prod((n_rows, K))
                   ) * itemsize
        if visible:
            rows = min(n_rows, _wrappers.visible_block_rows(D, K, BLOCK_ROWS, num_threads))
            n_bytes += math.prod((rows, D)) * (2 * itemsize + 8)
        check_memory(n_bytes, f"RAP {what} with {K} hidden units, {D} words and {n_rows} rows",
                     "use fewer hidden units (n_components), dtype=numpy.float32, or fewer "
                     "rows per call (batches)")

    # ------------------------------------------------------------ fitted state
    def _check_fitted_shapes(self):
        """The cheap consistency check of every inference call: the parameter arrays exist
        and agree in shape and dtype with each other and with ``n_features_in_``."""
        check_is_fitted(self, "components_")
        for name in ("intercept_visible_", "intercept_hidden_", "n_trials_", "n_features_in_"):
            if not hasattr(self, name):
                raise ValueError(f"this RAP has components_ but no {name}: its fitted state "
                                 "is incomplete; fit it again")
        W = self.components_
        if not isinstance(W, np.ndarray) or W.ndim != 2 or W.dtype not in (np.float32,
                                                                           np.float64):
            raise ValueError("components_ must be a 2-D float32 or float64 array, got "
                             f"{type(W).__name__} {getattr(W, 'dtype', '')} of shape "
                             f"{getattr(W, 'shape', '?')}")
        K, D = W.shape
        nfi = self.n_features_in_
        if isinstance(nfi, (bool, np.bool_)) or not isinstance(nfi, Integral) or nfi != D:
            raise ValueError(f"n_features_in_ is {nfi!r} but components_ has shape {W.shape}")
        for name, shape in (("intercept_visible_", (D,)), ("intercept_hidden_", (K,)),
                            ("n_trials_", (K,))):
            arr = getattr(self, name)
            if not isinstance(arr, np.ndarray) or arr.shape != shape or arr.dtype != W.dtype:
                raise ValueError(f"{name} must be a {W.dtype} array of shape {shape} "
                                 f"(components_ has shape {W.shape}), got "
                                 f"{getattr(arr, 'dtype', type(arr).__name__)} of shape "
                                 f"{getattr(arr, 'shape', '?')}")
        return K, D

    def _check_fitted_state(self):
        """Validate every fitted attribute against the others; raise ValueError naming the
        first inconsistent one (called by :func:`countgrid.load`).  An unfitted estimator
        passes."""
        present = [name for name in self._fitted_arrays if hasattr(self, name)]
        if not present:
            return None
        # auto_learning_rate_ exists only for learning_rate="auto" (0.1.0 files lack it)
        missing = [name for name in self._fitted_arrays if not hasattr(self, name)
                   and name != "auto_learning_rate_"]
        if missing:
            raise ValueError(f"the fitted RAP lacks {', '.join(missing)}")
        K, D = self._check_fitted_shapes()
        dtype = self.components_.dtype
        for name, shape in (("velocity_components_", (K, D)), ("velocity_visible_", (D,)),
                            ("velocity_hidden_", (K,))):
            arr = getattr(self, name)
            if not isinstance(arr, np.ndarray) or arr.shape != shape or arr.dtype != dtype:
                raise ValueError(f"{name} must be a {dtype} array of shape {shape}, got "
                                 f"{getattr(arr, 'dtype', type(arr).__name__)} of shape "
                                 f"{getattr(arr, 'shape', '?')}")
        for name in ("components_", "intercept_visible_", "intercept_hidden_",
                     "velocity_components_", "velocity_visible_", "velocity_hidden_"):
            if not np.isfinite(getattr(self, name)).all():
                raise ValueError(f"{name} contains NaN or infinity")
        m = self.n_trials_
        if not (np.isfinite(m).all() and (m == np.round(m)).all() and m.min() >= 1
                and m.max() <= MAX_TRIALS):
            raise ValueError(f"n_trials_ must hold integers between 1 and {MAX_TRIALS}")
        lr = getattr(self, "auto_learning_rate_", 0.0)
        if (isinstance(lr, (bool, np.bool_)) or not isinstance(lr, Real)
                or not (math.isfinite(lr) and lr >= 0)):
            raise ValueError(f"auto_learning_rate_ must be a finite number >= 0, got {lr!r}")
        for name, low, high in (("n_iter_", 0, None), ("n_updates_", 0, None),
                                ("stream_seed_", 0, 2**63 - 1)):
            v = getattr(self, name)
            if (isinstance(v, (bool, np.bool_)) or not isinstance(v, Integral) or v < low
                    or (high is not None and v > high)):
                raise ValueError(f"{name} must be an int >= {low}"
                                 + (f" and <= {high}" if high is not None else "")
                                 + f", got {v!r}")
        return None

    def _snapshot(self):
        """Copies of the fitted attributes (the in-place kernels update the live arrays)."""
        return {name: (getattr(self, name).copy() if isinstance(getattr(self, name), np.ndarray)
                       else getattr(self, name))
                for name in self._fitted_arrays if hasattr(self, name)}

    def _restore(self, snapshot, description):
        for name, value in snapshot.items():
            setattr(self, name, value)
        return description

    # ------------------------------------------------------------ learning
    def _initialize(self, data, p, rng):
        N, D = data.n_samples, data.n_features
        K, dtype = p["K"], p["dtype"]
        # W and its velocity, their copies at each checkpoint, the float64 draw of W
        self._check_sizes(min(N, p["batch_size"]), D, K, dtype.itemsize, "fit",
                          n_row_arrays=3, n_param_arrays=4 + 8 // dtype.itemsize,
                          visible=True, num_threads=p["num_threads"])
        # W ~ N(0, 0.01^2) drawn in float64 (float32 and float64 models share it)
        W = np.ascontiguousarray(rng.normal(0.0, 0.01, size=(D, K)), dtype=dtype)
        colsum = np.zeros(D)
        for counts in data():
            colsum += np.bincount(counts.csr.indices, weights=counts.csr.data, minlength=D)
        # log of the smoothed mean count of each word (our choice: the paper, section 2.3,
        # does not say how the parameters are initialised)
        a = np.log((colsum + 0.5) / (N + 1.0)).astype(dtype)
        self.components_ = W.T
        self.intercept_visible_ = a
        self.intercept_hidden_ = np.zeros(K, dtype=dtype)
        self.n_trials_ = p["ntrials"]
        if p["lr"] is None:
            p["lr"] = self.auto_learning_rate_ = self._auto_rate(data.n_tokens,
                                                                 data.n_nonzero, K)
        elif hasattr(self, "auto_learning_rate_"):     # a refit with an explicit rate
            del self.auto_learning_rate_
        self.velocity_components_ = np.zeros((D, K), dtype=dtype).T
        self.velocity_visible_ = np.zeros(D, dtype=dtype)
        self.velocity_hidden_ = np.zeros(K, dtype=dtype)
        self.stream_seed_ = int(rng.integers(0, 2**63 - 1))
        self.n_iter_ = 0
        self.n_updates_ = 0
        self.n_features_in_ = D

    def _state(self, dtype, copy=False):
        """Contiguous (D, K) working arrays: views of the fitted attributes when possible
        (the kernels then update them in place), or copies."""
        def c(arr):
            out = np.ascontiguousarray(arr, dtype=dtype)
            return out.copy() if copy and np.shares_memory(out, arr) else out
        W = c(self.components_.T)
        vW = c(self.velocity_components_.T)
        a, va = c(self.intercept_visible_), c(self.velocity_visible_)
        beta = c(-self.intercept_hidden_)
        vbeta = c(-self.velocity_hidden_)
        return W, a, beta, vW, va, vbeta

    def _store(self, W, a, beta, vW, va, vbeta):
        self.components_ = W.T
        self.intercept_visible_ = a
        self.intercept_hidden_ = -beta
        self.velocity_components_ = vW.T
        self.velocity_visible_ = va
        self.velocity_hidden_ = -vbeta

    @staticmethod
    def _auto_rate(total, nonzero, n_components):
        """``learning_rate="auto"`` for data with these count sum and non-zero count."""
        # non-zero counts of count data are >= 1: a smaller mean (fractional data, or no
        # data at all) is taken as 1, so the rate never exceeds AUTO_RATE
        return auto_learning_rate(max(float(total) / max(int(nonzero), 1), 1.0),
                                  n_components)

    def _gens(self, key, n_rows):
        n_blocks = (n_rows + BLOCK_ROWS - 1) // BLOCK_ROWS
        ss = np.random.SeedSequence(self.stream_seed_, spawn_key=key)
        return _wrappers.make_gens([np.random.PCG64(c) for c in ss.spawn(n_blocks)])

    def _check_finite(self, arrays, epoch, n_updates):
        for name, arr in arrays:
            if not np.isfinite(arr).all():
                raise FloatingPointError(
                    f"RAP learning diverged: {name} contains NaN or infinity in epoch {epoch} "
                    f"(after {n_updates} minibatch updates); lower learning_rate or "
                    "raise weight_decay")

    def _run_batches(self, counts, order, p, state, epoch, first_update=None):
        """One pass over the rows ``order`` in minibatches, updating ``state`` in place;
        returns the number of minibatch updates made.  ``first_update`` (default
        ``n_updates_``) numbers the first minibatch (it keys its random stream)."""
        W, a, beta, vW, va, vbeta = state
        indptr, indices, data = counts.int64_arrays
        bs = p["batch_size"]
        mean_field = self.method == "mean_field"
        work = _wrappers.workspace(min(bs, order.shape[0]), W.shape[0], W.shape[1], W.dtype,
                                      BLOCK_ROWS, p["num_threads"])
        first = self.n_updates_ if first_update is None else first_update
        n_updates = first
        for start in range(0, order.shape[0], bs):
            rows = order[start:start + bs]
            gens = None if mean_field else self._gens((_KEY_BATCH, n_updates), rows.shape[0])
            _wrappers.cd_step(indptr, indices, data, rows, counts.n_features, W, a, beta,
                                 p["ntrials"], vW, va, vbeta, p["lr"], p["momentum"],
                                 p["weight_decay"], p["cd_steps"], gens, BLOCK_ROWS,
                                 p["num_threads"], work)
            n_updates += 1
            if not (np.isfinite(a).all() and np.isfinite(beta).all()):
                self._check_finite([("intercept_visible_", a), ("intercept_hidden_", beta)],
                                   epoch, n_updates)
        self._check_finite([("components_", W), ("intercept_visible_", a),
                            ("intercept_hidden_", beta)], epoch, n_updates)
        return n_updates - first

    def fit(self, X, y=None):
        """Learn the parameters by CD (or mean-field) minibatch gradient ascent (eq. 10).

        Ctrl-C keeps the last complete epoch (see the Notes of the class).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or ChunkSource
            Non-negative counts, at most :data:`MAX_COUNT`.  Sparse input is used as
            CSR, never densified.  A :class:`countgrid.streaming.ChunkSource` is read
            chunk by chunk at every epoch (out of core); the rows are then shuffled within
            each chunk, the chunks read in order (docs/scale.md).
        y : ignored

        Returns
        -------
        self : RAP
        """
        p = self._resolved_params(None if is_chunk_source(X) else X)
        data = self._blocks(X, p["dtype"])
        rng = check_random_state(self.random_state)
        self._initialize(data, p, rng)
        state = self._state(p["dtype"])
        n_epochs = p["n_epochs"]
        # BLAS single-threaded around the CD kernels: the OpenMP threads call GEMM on
        # their own blocks of rows, and idle BLAS threads would spin on the same cores
        with limit_blas_threads(1):
            for epoch in range(1, n_epochs + 1):
                t0 = time.perf_counter()
                for index, counts in enumerate(data()):
                    # the epoch's shuffle (one per chunk of a chunk source)
                    key = (_KEY_SHUFFLE, epoch) if data.in_memory else (_KEY_SHUFFLE, epoch,
                                                                        index)
                    ss = np.random.SeedSequence(self.stream_seed_, spawn_key=key)
                    order = np.random.Generator(np.random.PCG64(ss)).permutation(
                        counts.n_samples)
                    done = self._run_batches(counts, order.astype(np.int64), p, state, epoch)
                    self.n_updates_ += done
                self._store(*state)
                self.n_iter_ = epoch
                if epoch < n_epochs:
                    snapshot = self._snapshot()
                    self._checkpoint(lambda snapshot=snapshot, epoch=epoch: self._restore(
                        snapshot, f"epoch {epoch} of {n_epochs}"))
                _progress.report("RAP", epoch, n_epochs, unit="epoch")
                if self.verbose:
                    print(f"[RAP] epoch {epoch}: {time.perf_counter() - t0:.3f} s")
        return self

    def partial_fit(self, X, y=None):
        """One pass over ``X`` in minibatches of ``batch_size``, in the given order.

        The first call initialises the model from ``X``; later calls continue
        (momentum and random streams included), so feeding a stream of
        minibatches learns online.  The pass works on copies of the parameters and
        commits them at the end: an error or Ctrl-C leaves the state before the call.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or ChunkSource
            Non-negative counts, at most :data:`MAX_COUNT`; a chunk source is read chunk
            by chunk, in order.
        y : ignored

        Returns
        -------
        self : RAP
        """
        p = self._resolved_params(None if is_chunk_source(X) else X)
        first = not hasattr(self, "components_")
        auto = False
        if not first:
            self._check_fitted_state()
            if self.dtype is None:          # a continued model keeps its precision
                p["dtype"] = np.dtype(self.components_.dtype)
            if self.components_.shape[0] != p["K"]:
                raise ValueError(f"n_components is {p['K']} but the model has "
                                 f"{self.components_.shape[0]} components")
            if p["lr"] is None and hasattr(self, "auto_learning_rate_"):
                p["lr"] = self.auto_learning_rate_  # "auto" keeps the rate of the first call
            auto = p["lr"] is None    # a model fitted with a float, now "auto": rate of X
        data = self._blocks(X, p["dtype"], n_features=None if first else self.n_features_in_)
        if not first and auto:   # the totals of the first pass over X (countgrid.streaming._blocks)
            p["lr"] = self._auto_rate(data.n_tokens, data.n_nonzero, p["K"])
        if first:
            self._initialize(data, p, check_random_state(self.random_state))
        else:
            self._check_sizes(min(data.n_samples, p["batch_size"]), data.n_features,
                              p["K"], p["dtype"].itemsize, "partial_fit", n_param_arrays=2,
                              visible=True, num_threads=p["num_threads"])
        p["ntrials"] = np.ascontiguousarray(self.n_trials_, dtype=p["dtype"])
        state = self._state(p["dtype"], copy=not first)
        done = 0
        with limit_blas_threads(1):
            for counts in data():
                done += self._run_batches(counts, np.arange(counts.n_samples, dtype=np.int64),
                                          p, state, self.n_iter_ + 1,
                                          first_update=self.n_updates_ + done)
        # commit: nothing above changed the fitted attributes (but a first call's start)
        self._store(*state)
        if not first and auto:
            self.auto_learning_rate_ = p["lr"]
        self.n_trials_ = p["ntrials"]
        self.n_updates_ += done
        self.n_iter_ += 1
        return self

    # ------------------------------------------------------------ inference
    def _fitted(self, X, dense_min_density=None):
        """Validated counts of X for the fitted model, W as (D, K), the thread count."""
        self._check_fitted_shapes()
        nt = effective_n_threads(self.num_threads)
        counts = self._counts(X, self.components_.dtype, n_features=self.n_features_in_,
                              dense_min_density=dense_min_density)
        W = np.ascontiguousarray(self.components_.T)
        return counts, W, nt

    @staticmethod
    def _finite(out, method):
        if not np.isfinite(out).all():
            raise ValueError(f"RAP.{method} overflows {out.dtype} for this X: the counts "
                             "times the weights exceed the floating-point range (use "
                             "dtype=numpy.float64, or rescale the counts)")
        return out

    def transform(self, X):
        """Latent coordinates ``X W`` (the paper's ``h~ = W x``, section 2.1).

        Compare them with the cosine (:func:`countgrid.metrics.cosine_similarity`).

        {parameters}

        Returns
        -------
        H : ndarray of shape (n_samples, n_components), dtype of the model
        """
        counts, W, nt = self._fitted(X, dense_min_density=0.0)
        self._check_sizes(counts.n_samples, counts.n_features, W.shape[1], W.dtype.itemsize,
                          "transform", n_row_arrays=1)
        if not counts.is_sparse:
            with limit_blas_threads(nt), np.errstate(over="ignore", invalid="ignore"):
                H = counts.X @ W
            return self._finite(H, "transform")
        Xs = counts.csr
        return self._finite(_wrappers.project(Xs.indptr, Xs.indices, Xs.data, None, W,
                                                 Xs.shape[0], Xs.shape[1], nt), "transform")

    def expected_hidden(self, X):
        """``E[h | x] = M ⊙ sigmoid(X W - beta)`` (eq. 2).

        {parameters}

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        U = self.transform(X)
        return self.n_trials_ * _sigmoid(U + self.intercept_hidden_)

    def score_samples(self, X):
        """Unnormalised log-marginal ``log p(x) + log Z`` of each row (eq. 6).

        ``sum_i (a_i x_i - log x_i!) + sum_j M_j log(1 + exp(w_j^T x - beta_j))``,
        in float64.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        counts, W, nt = self._fitted(X)
        self._check_sizes(counts.n_samples, counts.n_features, W.shape[1], 8, "score_samples",
                          n_row_arrays=4)
        Xs = counts.csr
        U = _wrappers.project(Xs.indptr, Xs.indices, Xs.data, None, W, Xs.shape[0],
                                 Xs.shape[1], nt)
        with np.errstate(over="ignore", invalid="ignore"):
            U = U.astype(np.float64) + self.intercept_hidden_.astype(np.float64)
            hidden = np.logaddexp(0.0, U) @ self.n_trials_.astype(np.float64)
            visible = Xs.astype(np.float64) @ self.intercept_visible_.astype(np.float64)
            visible -= counts.log_factorials
            out = visible + hidden
        return self._finite(out, "score_samples")

    def free_energy(self, X):
        """Free energy ``F(x) = -score_samples(x)`` (``p(x) = exp(-F(x)) / Z``, eq. 6).

        {parameters}

        Returns
        -------
        ndarray of shape (n_samples,)
            ``F(x)`` of each row, in float64.
        """
        return -self.score_samples(X)

    def canonical_parameters(self):
        """``(W, a, beta)`` in the gauge ``beta_j >= 0`` (eqs. 8-9), as float64 copies.

        Units with ``beta_j < 0`` are flipped: ``a <- a + M_j w_j``,
        ``w_j <- -w_j``, ``beta_j <- -beta_j``; eq. (6) is unchanged.

        Returns
        -------
        W : ndarray of shape (n_features, n_components)
        a : ndarray of shape (n_features,)
        beta : ndarray of shape (n_components,)
        """
        self._check_fitted_shapes()
        W = self.components_.T.astype(np.float64)
        a = self.intercept_visible_.astype(np.float64)
        beta = -self.intercept_hidden_.astype(np.float64)
        S = beta < 0
        a = a + W[:, S] @ self.n_trials_[S].astype(np.float64)
        W[:, S] *= -1
        beta[S] *= -1
        return W, a, beta

    def sample(self, X, n_steps=1, random_state=None):
        """Run one Gibbs chain (eqs. 2 then 1) from each row of ``X`` for ``n_steps`` sweeps.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_chains, n_features)
            Starting visible states (counts, at most :data:`MAX_COUNT`).
        n_steps : int, default=1
        random_state : None, int, SeedSequence or Generator
            Seeds the chains (one PCG64 stream per block of 8 rows); the
            result does not depend on ``num_threads``.

        Returns
        -------
        X_new : scipy.sparse.csr_matrix of shape (n_chains, n_features)
            Visible samples after the last sweep (dtype of the model).
        H : ndarray of shape (n_chains, n_components)
            The hidden samples that generated them.
        """
        validate_params({"n_steps": [Interval(Integral, 1, None)],
                         "random_state": ["random_state"]},
                        {"n_steps": n_steps, "random_state": random_state}, "RAP.sample")
        counts, W, nt = self._fitted(X)
        n, D = counts.n_samples, counts.n_features
        self._check_sizes(n, D, W.shape[1], W.dtype.itemsize, "sample", n_row_arrays=2,
                          visible=True, num_threads=nt)
        rng = check_random_state(random_state)
        seed = int(rng.integers(0, 2**63 - 1))
        ss = np.random.SeedSequence(seed)
        gens = _wrappers.make_gens(
            [np.random.PCG64(c) for c in ss.spawn((n + BLOCK_ROWS - 1) // BLOCK_ROWS)])
        beta = np.ascontiguousarray(-self.intercept_hidden_)
        a = np.ascontiguousarray(self.intercept_visible_)
        M = np.ascontiguousarray(self.n_trials_)
        (indptr, indices, data), rows = counts.int64_arrays, None
        with limit_blas_threads(1):
            for _ in range(n_steps):
                _, H = _wrappers.hidden(indptr, indices, data, rows, W, beta, M, n, D, gens,
                                           BLOCK_ROWS, nt)
                indptr, indices, data = _wrappers.visible(H, W, a, gens, BLOCK_ROWS, nt)
        return sp.csr_matrix((data, indices, indptr), shape=(n, D)), H

    def mode(self, X, n_iter=20):
        """Iterate the mode equations (4)-(5) from ``X`` to a joint local mode.

        ``h_j = min(M_j, floor((M_j + 1) sigmoid(w_j^T x - beta_j)))`` and
        ``x_i = floor(exp(min(a_i + sum_j W_ij h_j, 30)))``, alternated
        ``n_iter`` times or until nothing changes.  Works on dense float64
        arrays of ``X``'s shape.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Starting visible states (non-negative counts, at most :data:`MAX_COUNT`).
        n_iter : int >= 1, default=20
            Most alternations of the two equations.

        Returns
        -------
        X_mode : ndarray of shape (n_samples, n_features)
            Visible mode (float64 holding integers).
        H_mode : ndarray of shape (n_samples, n_components)
            Hidden mode (float64 holding integers in ``[0, M_j]``).

        Raises
        ------
        MemoryError
            When the dense iterates do not fit in the available memory (before
            allocating; the message advises fewer rows per call).
        """
        validate_params({"n_iter": [Interval(Integral, 1, None)]}, {"n_iter": n_iter},
                        "RAP.mode")
        counts, W, nt = self._fitted(X)
        n, D = counts.n_samples, counts.n_features
        check_memory(4 * 8 * math.prod((n, D)),
                     f"RAP.mode on {n} rows of {D} words (dense float64 iterates)",
                     "pass fewer rows per call")
        M = self.n_trials_.astype(np.float64)
        W64 = W.astype(np.float64)
        a = self.intercept_visible_.astype(np.float64)
        b = self.intercept_hidden_.astype(np.float64)
        x = counts.csr.astype(np.float64).toarray()
        h = None
        with np.errstate(over="ignore"):      # x W may overflow to inf: sigmoid(inf) = 1
            for _ in range(n_iter):
                h_new = np.minimum(M, np.floor((M + 1.0) * _sigmoid(x @ W64 + b)))
                x_new = np.floor(np.exp(np.minimum(a + h_new @ W64.T, MAX_LOGRATE)))
                done = h is not None and np.array_equal(h_new, h) and np.array_equal(x_new, x)
                x, h = x_new, h_new
                if done:
                    break
        return x, h
