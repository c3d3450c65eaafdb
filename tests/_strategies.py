"""hypothesis strategies for count matrices in every dtype and container (tests/test_properties.py).

A drawn :class:`CountCase` holds the values (float64, exact copies of what the container
holds), the dtype, the container (dense ndarray, list of lists or a scipy.sparse format)
and the power of ten the Poisson-like counts were scaled by.  ``case.make(values)`` builds
another matrix (e.g. rows permuted) in the same dtype and container.
"""
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from hypothesis import strategies as st

DTYPES = ("int32", "int64", "uint8", "bool", "float32", "float64")

#: every container a count matrix may come in
CONTAINERS = {
    "ndarray": lambda A: A,
    "list": lambda A: A.tolist(),
    "csr_matrix": sp.csr_matrix,
    "csc_matrix": sp.csc_matrix,
    "coo_matrix": sp.coo_matrix,
    "dia_matrix": sp.dia_matrix,
    "bsr_matrix": sp.bsr_matrix,
    "lil_matrix": sp.lil_matrix,
    "dok_matrix": sp.dok_matrix,
    "csr_array": sp.csr_array,
    "coo_array": sp.coo_array,
}

#: powers of ten the counts may be scaled by, per dtype: floats over (most of) their
#: range, integers as far as 20 x 10**k fits the type
EXPONENTS = {"float64": (-300, 250), "float32": (-44, 36), "int64": (0, 17),
             "int32": (0, 8), "uint8": (0, 1), "bool": (0, 0)}


def extremes_or_between(lo, hi):
    """An integer in [lo, hi]: one of the two ends a third of the time (where the float
    range ends), else anything between."""
    return st.one_of(st.sampled_from([lo, hi]), st.integers(lo, hi), st.integers(lo, hi))


def in_container(values, dtype, container):
    """``values`` (float64 ndarray) cast to ``dtype`` and put in ``container``."""
    A = np.asarray(values).astype(dtype)
    return CONTAINERS[container](A)


@dataclass
class CountCase:
    values: np.ndarray      # float64, exactly the values the container holds
    dtype: str
    container: str
    exponent: int           # the counts were multiplied by 10**exponent

    @property
    def X(self):
        return self.make(self.values)

    def make(self, values, container=None, dtype=None):
        return in_container(values, dtype or self.dtype, container or self.container)

    def __repr__(self):     # what hypothesis prints for a falsifying example
        return (f"CountCase(dtype={self.dtype}, container={self.container}, "
                f"exponent={self.exponent}, shape={self.values.shape},\n"
                f"values=np.{np.array_repr(self.values, max_line_width=100)})")


def poisson_counts(draw, n_rows, n_features):
    """Poisson-like small counts of shape (n_rows, n_features), float64, with some rows and
    columns forced to zero."""
    seed = draw(st.integers(0, 2 ** 32 - 1), label="seed")
    rate = draw(st.sampled_from([0.2, 1.0, 3.0]), label="rate")
    rng = np.random.default_rng(seed)
    C = np.minimum(rng.poisson(rate, (n_rows, n_features)), 20).astype(np.float64)
    if n_rows > 1 and draw(st.booleans(), label="zero rows"):
        C[rng.random(n_rows) < 0.2] = 0
    if n_features > 1 and draw(st.booleans(), label="zero columns"):
        C[:, rng.random(n_features) < 0.2] = 0
    return C


@st.composite
def count_cases(draw, min_rows=1, max_rows=30, min_features=1, max_features=15,
                n_features=None, dtypes=DTYPES, containers=tuple(CONTAINERS), scaled=True):
    """A :class:`CountCase`: Poisson-like counts of a random shape, dtype, container and
    scale (a power of ten over the dtype's range, its ends often, 10**0 half of the
    time)."""
    n_rows = draw(st.integers(min_rows, max_rows), label="n_rows")
    if n_features is None:
        n_features = draw(st.integers(min_features, max_features), label="n_features")
    dtype = draw(st.sampled_from(dtypes), label="dtype")
    container = draw(st.sampled_from(containers), label="container")
    exponent = 0
    if scaled:
        lo, hi = EXPONENTS[dtype]
        exponent = draw(st.one_of(st.just(0), extremes_or_between(lo, hi)), label="exponent")
    C = poisson_counts(draw, n_rows, n_features)
    if dtype == "bool":
        C = (C > 0).astype(np.float64)
    values = (C * 10.0 ** exponent).astype(dtype).astype(np.float64)
    return CountCase(values, dtype, container, exponent)


def labels(draw, n, max_classes=3):
    """Class labels for ``n`` rows: ints or strings of 1 to ``max_classes`` classes (every
    class present when there are enough rows)."""
    # two classes most often; one class (which classifiers refuse) now and then
    n_classes = draw(st.sampled_from([c for c in (2, 3, 2, 1) if c <= max_classes]),
                     label="n_classes")
    codes = np.array(draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n),
                          label="codes"), dtype=np.int64)
    codes[:n_classes] = np.arange(n_classes)[:n]
    kind = draw(st.sampled_from(["int", "str"]), label="label kind")
    if kind == "str":
        return np.array(["ham", "spam", "eggs"])[codes]
    return codes * 3 - 1


@st.composite
def histograms(draw):
    """``(weights, bin_centers, domain)`` for HistogramGMM: 1 to 3 axes of 1 to 8 bins,
    Poisson-like weights (zeros allowed) scaled by a power of ten in 1e-300..1e250, bin
    centres as per-axis arrays or in full, with a random offset and spacing."""
    n_dims = draw(st.integers(1, 3), label="n_dims")
    shape = tuple(draw(st.lists(st.integers(1, 8), min_size=n_dims, max_size=n_dims),
                       label="bins per axis"))
    seed = draw(st.integers(0, 2 ** 32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    k = draw(st.one_of(st.just(0), extremes_or_between(-300, 250)), label="weight exponent")
    weights = rng.poisson(draw(st.sampled_from([0.5, 3.0]), label="rate"), shape) * 10.0 ** k
    domain = draw(st.sampled_from(["euclidean", "symmetric", "circular"]), label="domain")
    spacing = 10.0 ** draw(st.one_of(st.just(0), st.integers(-100, 100)), label="spacing")
    if domain == "circular":
        spacing = min(spacing, 2 * np.pi / 8)
    axes = [np.sort(rng.uniform(0, 2 * np.pi)
                    + spacing * (np.arange(n) + rng.uniform(-0.2, 0.2, n))) for n in shape]
    if draw(st.booleans(), label="centres in full"):
        centres = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)
    else:
        centres = axes
    return weights, centres, domain


def points(draw, n_dims, max_rows=8):
    """Query points: standard normal, some scaled by powers of ten up to 1e300."""
    n = draw(st.integers(1, max_rows), label="n_points")
    seed = draw(st.integers(0, 2 ** 32 - 1), label="points seed")
    k = draw(st.one_of(st.just(0), extremes_or_between(-300, 300)), label="points exponent")
    return np.random.default_rng(seed).normal(size=(n, n_dims)) * 10.0 ** k


#: powers of ten the rows of a measure may be scaled by: every magnitude down to the
#: subnormal numbers
ROW_EXPONENTS = {"float64": (-320, 307), "float32": (-44, 37)}


@st.composite
def measures(draw, n_features=None, min_rows=0, max_rows=8, max_features=8,
             dtypes=("float32", "float64"), containers=tuple(CONTAINERS), any_magnitude=True,
             signed=False):
    """A :class:`CountCase` of non-negative (``signed``: real) rows for the kernels and
    metrics: 0 rows or features included, zeros, zero rows, every row scaled by its own
    power of ten (``any_magnitude``: across the dtype's range, subnormal numbers
    included).  ``exponent`` is None."""
    n_rows = draw(st.integers(min_rows, max_rows), label="n_rows")
    if n_features is None:
        n_features = draw(st.integers(0, max_features), label="n_features")
    dtype = draw(st.sampled_from(dtypes), label="dtype")
    container = draw(st.sampled_from(containers), label="container")
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    density = draw(st.sampled_from([1.0, 0.6, 0.3]), label="density")
    V = rng.random((n_rows, n_features)) * (rng.random((n_rows, n_features)) < density)
    if draw(st.booleans(), label="small integers"):
        V = np.ceil(V * 5)
    if n_rows > 1 and draw(st.booleans(), label="zero rows"):
        V[rng.random(n_rows) < 0.3] = 0
    if signed:
        V *= rng.choice([-1.0, 1.0], size=V.shape)
    if any_magnitude and draw(st.booleans(), label="rows of any magnitude"):
        lo, hi = ROW_EXPONENTS[dtype]
        exps = draw(st.lists(extremes_or_between(lo, hi), min_size=n_rows, max_size=n_rows),
                    label="row exponents")
        V = V * 10.0 ** np.array(exps, dtype=np.float64)[:, None]
    values = V.astype(dtype).astype(np.float64)
    if n_rows == 0 and container == "list":
        container = "ndarray"           # [] has no second axis
    return CountCase(values, dtype, container, None)


def normal_power_of_two(draw, values, dtype, label):
    """An exponent k such that ``values * 2**k`` is exact in ``dtype``: no entry overflows,
    and downwards (k < 0) every non-zero entry stays a normal number.  0 when ``values`` is
    all zero."""
    positive = np.abs(values[values != 0])
    if positive.size == 0:
        return 0
    info = np.finfo(dtype)
    lo = np.frexp(positive.min())[1]
    hi = np.frexp(positive.max())[1]
    return draw(extremes_or_between(min(0, info.minexp + 1 - lo), info.maxexp - hi),
                label=label)
