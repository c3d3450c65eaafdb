"""Corrupt sparse structures handed straight to every private Cython wrapper of a C kernel
that takes CSR/CSC arrays (docs/robustness.md).

The estimators validate their input before any kernel sees it (countgrid._utils.sparse), but the
C layer must trust nothing it did not check: an index or index pointer out of range, a
decreasing or negative index pointer, arrays of different lengths must give an exception,
never a read or write outside the arrays.  Each case runs in a fork()ed child (the parent
never runs a kernel, so the children's OpenMP is sound), so one crash does not hide the
next; run under AddressSanitizer (tools/sanitize.sh) a silent out-of-bounds read is a
crash too.

Usage: python tools/fuzz_wrappers.py [-v]
Prints one line per wrapper and corruption class: ok (raised), silent (returned although
the structure is invalid: a wrong answer, listed but not fatal) or CRASH (killed by a signal
or a sanitizer).  Exit status 1 if anything crashed.
"""
import argparse
import collections
import inspect
import itertools
import os
import sys

import numpy as np
import scipy.sparse as sp

EXPECTED = (ValueError, TypeError, IndexError, OverflowError, MemoryError)
NT = 2


def _csr(rng, n, d, itype, dtype):
    A = sp.random(n, d, density=0.4, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.integers(1, 5, k)).astype(dtype)
    return A.indptr.astype(itype), A.indices.astype(itype), A.data.astype(dtype)


def corruptions(indptr, indices, data, n_cols):
    """(name, indptr, indices, data) of one valid and several corrupt structures."""
    yield "valid", indptr, indices, data
    a = indices.copy(); a[len(a) // 2] = n_cols
    yield "index = n_cols", indptr, a, data
    a = indices.copy(); a[0] = -1
    yield "index = -1", indptr, a, data
    a = indices.copy(); a[-1] = np.iinfo(a.dtype).max
    yield "index = max", indptr, a, data
    b = indptr.copy(); b[-1] = len(indices) + 3
    yield "indptr[-1] > nnz", b, indices, data
    b = indptr.copy(); b[1], b[2] = b[2] + 2, b[1]
    yield "indptr decreasing", b, indices, data
    b = indptr.copy(); b[1] = -5
    yield "indptr negative", b, indices, data
    yield "data shorter", indptr, indices, data[:-1].copy()
    yield "indices shorter", indptr, indices[:-1].copy(), data


def _call(f, **kwargs):
    """A thunk calling the wrapper ``f`` with the keyword arguments it takes: wrappers gain
    parameters (``n_features``, tiles) as they are hardened, and the cases stay valid."""
    names = inspect.signature(f).parameters
    missing = [n for n, p in names.items() if n not in kwargs and p.default is p.empty]
    if missing:
        raise SystemExit(f"fuzz_wrappers: {f.__name__} needs {missing}: update the cases")
    args = {k: v for k, v in kwargs.items() if k in names}
    return lambda: f(**args)


def cases():
    """(wrapper, corruption, itype, dtype, thunk) for every wrapper taking CSR/CSC."""
    from countgrid._utils import _cooc as C
    from countgrid.grid import _wrappers as G
    from countgrid.gtm import _wrappers as M
    from countgrid.kernels import _wrappers as I
    from countgrid.rap import _wrappers as R
    from countgrid.topics import _wrappers as P

    rng = np.random.default_rng(0)
    n, d, L, K = 7, 6, 9, 3
    for itype, dtype in itertools.product([np.int32, np.int64], [np.float32, np.float64]):
        ip0, ix0, dv0 = _csr(rng, n, d, itype, dtype)
        logh = np.ascontiguousarray(np.log(rng.dirichlet(np.ones(d), L).T), dtype=dtype)
        phi = np.ascontiguousarray(rng.dirichlet(np.ones(d), K).T, dtype=dtype)
        W = rng.normal(size=(d, K)).astype(dtype)
        for name, ip, ix, dv in corruptions(ip0, ix0, dv0, d):
            csr = dict(indptr=ip, indices=ix, data=dv, num_threads=NT)
            yield ("grid.estep_csr", name, itype, dtype, _call(
                G.estep_csr, **csr, row_start=0, row_end=n, logh=logh, log_prior=None,
                floor=1e-4, q=np.empty((n, L), dtype), loglik=np.empty(n)))
            # (ip, ix, dv) as CSC: n columns over d rows.  A row index past row_end is by
            # contract an entry of a later block of rows, skipped: not a corruption here.
            if name not in ("index = n_cols", "index = max"):
                yield ("grid.accumulate_csc", name, itype, dtype, _call(
                    G.accumulate_csc, **csr, cursor=ip[:-1].copy(), row_start=0, row_end=d,
                    q=np.full((d, L), 0.1, dtype), n=np.zeros((n, L), dtype)))
            yield ("plsa.docs", name, itype, dtype, _call(
                P.plsa_docs, **csr, phi=phi, phib=None, theta=np.full((n, K), 1 / K, dtype),
                n_iter=5, tol=1e-6, loglik=np.empty(n)))
            yield ("plsa.words", name, itype, dtype, _call(
                P.plsa_words, **csr, theta=np.full((d, K), 1 / K, dtype),
                phib=np.ones((n, K), dtype), acc=np.zeros((n, K), dtype)))
            yield ("gtm.estep_csr", name, itype, dtype, _call(
                M.estep_csr, **csr, n_features=d, base=np.zeros(K),
                log_mix=np.full(K, -np.log(K)), log_fact=np.zeros(n),
                deltaT=np.zeros((d, K)), etaT=np.zeros((d, K))))
            yield ("gtm.accumulate_csc", name, itype, dtype, _call(
                M.accumulate_csc, **csr, resp=np.full((d, K), 1 / K)))
            yield ("rap.project", name, itype, dtype, _call(
                R.project, **csr, rows=None, W=W, n=n, n_features=d))
            if dtype is np.float64 and name != "data shorter":     # no values read
                rel = np.full(d, -1, np.int32)
                rel[::2] = np.arange(len(rel[::2]), dtype=np.int32)
                yield ("cooc.docs", name, itype, dtype, _call(
                    C.docs, indptr=ip, indices=ix, n_features=d, relevant=rel,
                    n_relevant=len(rel[::2]), num_threads=NT))
                if itype is np.int64 and name not in ("index = -1", "index = max"):
                    # (ip, ix) as texts of tokens: a negative token is another word, valid
                    yield ("cooc.windows", name, itype, dtype, _call(
                        C.windows, offsets=ip, tokens=ix.astype(np.int32), window=3, rule=0,
                        n_relevant=d, num_threads=NT))
            if itype is np.int64:   # these wrappers take int64 structures only
                for symmetric in (False, True):
                    yield ("itk.jt_gram_csr" + (" sym" if symmetric else ""), name, itype,
                           dtype, _call(I.jt_gram_csr, xptr=ip, xind=ix, xval=dv,
                                        yptr=ip if symmetric else ip0,
                                        yind=ix if symmetric else ix0,
                                        yval=dv if symmetric else dv0, D=d, q=1.5,
                                        symmetric=symmetric, num_threads=NT, tile_rows=4,
                                        tile_cols=4))
                yield ("rap.hidden", name, itype, dtype, _call(
                    R.hidden, **csr, rows=None, W=W, beta=np.zeros(K, dtype),
                    ntrials=np.full(K, 2, dtype), n=n, n_features=d, gens=None,
                    block_rows=1))


def run_case(thunk):
    """In a fork()ed child: 0 raised an expected exception, 10 returned, 11 raised another
    exception; a crash shows as a signal or the sanitizer's exit status."""
    pid = os.fork()
    if pid == 0:
        code = 10
        try:
            thunk()
        except EXPECTED:
            code = 0
        except BaseException:  # noqa: BLE001 - any other exception is reported
            code = 11
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return status


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per case")
    args = parser.parse_args(argv)
    results = collections.defaultdict(collections.Counter)
    crashes = []
    for wrapper, name, itype, dtype, thunk in cases():
        status = run_case(thunk)
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        valid = name == "valid"
        if code == 0:
            outcome = "raised" if not valid else "REJECTED VALID"
        elif code == 10:
            outcome = "returned" if valid else "silent"
        elif code == 11:
            outcome = "other exception"
        else:
            outcome = "CRASH"
            crashes.append((wrapper, name, itype.__name__, dtype.__name__))
        results[(wrapper, name)][outcome] += 1
        if args.verbose:
            print(f"{wrapper:22s} {name:18s} {itype.__name__:5s} {dtype.__name__:7s} {outcome}",
                  flush=True)
    bad = 0
    for (wrapper, name), outcomes in results.items():
        summary = ", ".join(f"{k} x{v}" for k, v in sorted(outcomes.items()))
        print(f"{wrapper:22s} {name:18s} {summary}")
        bad += sum(v for k, v in outcomes.items() if k in ("CRASH", "REJECTED VALID",
                                                           "other exception"))
    silent = sum(o["silent"] for o in results.values())
    print(f"fuzz_wrappers: {sum(sum(o.values()) for o in results.values())} cases, "
          f"{len(crashes)} crashes, {silent} silent returns on invalid structures")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
