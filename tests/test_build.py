"""Build / runtime configuration of the compiled package."""
import io
import os
import re

import numpy as np
import pytest

import countgrid
from countgrid import _kernels
from countgrid._utils.threads import cpu_count, effective_n_threads

from _expected_warnings import FEW_ITERATIONS


def test_openmp_enabled():
    if os.environ.get("COUNTGRID_ALLOW_SERIAL") == "1":
        pytest.skip("serial build explicitly allowed")
    assert _kernels.openmp_enabled() is True


def test_max_threads_positive():
    n = _kernels.max_threads()
    assert isinstance(n, int) and n >= 1
    if not _kernels.openmp_enabled():
        assert n == 1


def test_show_config_prints_and_returns_dict():
    buf = io.StringIO()
    info = countgrid.show_config(file=buf)
    assert isinstance(info, dict)
    for key in ("countgrid", "openmp", "threads", "numpy", "python", "blas", "abi_version",
                "include_dir", "static_library", "link_args"):
        assert key in info
    assert info["openmp"] is _kernels.openmp_enabled()
    assert info["threads"] == effective_n_threads(None)
    assert info["countgrid"] == countgrid.__version__
    text = buf.getvalue()
    assert countgrid.__version__ in text
    assert "OpenMP" in text
    assert ("enabled" in text) == info["openmp"]


def test_show_config_default_stdout(capsys):
    info = countgrid.show_config()
    out = capsys.readouterr().out
    assert "countgrid" in out and "OpenMP" in out
    assert "openmp" in info


def test_get_include_has_header():
    inc = countgrid.get_include()
    assert os.path.isabs(inc) and os.path.isdir(inc)
    header = os.path.join(inc, "countgrid", "countgrid.h")
    assert os.path.isfile(header)
    text = open(header).read()
    # the header declares the kernels the extension is built from
    assert "cg_estep_csr_f64_i64" in text
    m = re.search(r"#define\s+CG_ABI_VERSION\s+(\d+)", text)
    assert m is not None and int(m.group(1)) == _kernels.abi_version


def test_version_string():
    v = countgrid.__version__
    assert isinstance(v, str)
    assert re.match(r"^\d+\.\d+(\.\d+)?([.+-]?\w+)*$", v)


def test_public_api():
    for name in countgrid.__all__:
        assert hasattr(countgrid, name), name
    assert issubclass(countgrid.NotFittedError, ValueError)


def test_num_threads_rule(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert effective_n_threads(None) == min(_kernels.max_threads(), cpu_count())
    assert effective_n_threads(1) == 1
    assert effective_n_threads(3) == 3
    assert effective_n_threads(-1) == cpu_count()
    assert effective_n_threads(-cpu_count() - 5) == 1
    with pytest.raises(ValueError, match="num_threads"):
        effective_n_threads(0)
    with pytest.raises(TypeError, match="num_threads"):
        effective_n_threads(1.5)
    with pytest.raises(TypeError, match="num_threads"):
        effective_n_threads(True)
    with pytest.warns(RuntimeWarning, match="capped"):
        assert effective_n_threads(10**6) == max(4 * cpu_count(), 64)


def test_cpu_count_is_bounded_by_the_affinity_mask():
    n = cpu_count()
    assert 1 <= n <= (os.cpu_count() or 1)
    if hasattr(os, "sched_getaffinity"):
        assert n <= len(os.sched_getaffinity(0))


@FEW_ITERATIONS
def test_num_threads_none_same_result_as_explicit():
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.poisson(1.0, size=(30, 10)) + (np.arange(10) == 0))
    a = countgrid.CountingGrid((5, 5), (2, 2), n_iter=4, random_state=0,
                               num_threads=None).fit(X)
    b = countgrid.CountingGrid((5, 5), (2, 2), n_iter=4, random_state=0,
                               num_threads=effective_n_threads(None)).fit(X)
    assert np.array_equal(a.pi_, b.pi_)
