"""One small fit and the inference methods of every model family, on tiny data, with two
threads: the workload that tools/sanitize.sh (AddressSanitizer + UBSan) and
tools/memcheck.py (valgrind) run through the C kernels and the Cython wrappers
(docs/robustness.md).  Small enough for valgrind (~50x slower): a few seconds natively.

Usage: python tools/smoke_fits.py [FAMILY ...]    (default: every family)
Families: grid, topics, kernels, rap, gtm, mixture.  Exits non-zero if an output is not
finite or has the wrong shape; prints one line per family.
"""
import argparse
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

NT = 2  # several threads, so that the OpenMP paths run


def _data(dtype=np.float64, sparse=True):
    rng = np.random.default_rng(0)
    rates = np.r_[np.full(6, 3.0), np.full(6, 0.3)]
    X = np.vstack([rng.poisson(rates, (12, 12)), rng.poisson(rates[::-1], (12, 12))])
    X[0] = 0                          # an empty document
    X[:, 5] = 0                       # an unused word
    y = np.repeat([0, 1], 12)
    X = X.astype(dtype)
    return (sp.csr_matrix(X) if sparse else X), y


def _finite(name, *arrays):
    for a in arrays:
        a = a.toarray() if sp.issparse(a) else np.asarray(a)
        if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
            raise AssertionError(f"{name}: non-finite output")


def grid():
    import countgrid
    for dtype in (np.float32, np.float64):
        for sparse in (True, False):
            X, y = _data(dtype, sparse)
            cg = countgrid.CountingGrid((4, 4), (2, 2), n_iter=3, min_iter=1, dtype=dtype,
                                        num_threads=NT, random_state=0).fit(X)
            q = cg.transform(X)
            assert q.shape == (X.shape[0], 16), q.shape
            _finite("CountingGrid", q, cg.score_samples(X))
            # the coarse-to-fine E-step (its kernel, both branches of its guard)
            fast = countgrid.CountingGrid((9, 7), (2, 2), n_iter=4, tol=0, dtype=dtype,
                                          window_schedule=None, num_threads=NT,
                                          random_state=0, estep="coarse-to-fine",
                                          estep_params={"exact_iter": 1, "min_mass": 0.5})
            _finite("CountingGrid coarse-to-fine", fast.fit(X).pi_)
            # extrapolated EM (cg_grid_squarem) after progressive fitting
            relaxed = countgrid.CountingGrid((4, 4), (2, 2), n_iter=6, tol=0, dtype=dtype,
                                             window_schedule=None, num_threads=NT,
                                             random_state=0, accelerate=True, subsample=0.5)
            _finite("CountingGrid accelerate", relaxed.fit(X).pi_)
    X, y = _data()
    kw = dict(n_iter=3, num_threads=NT, random_state=0)
    for est in (countgrid.CountingGridClassifier((4, 4), (2, 2), **kw),
                countgrid.GenerativeCountingGridClassifier((3, 3), (2, 2), **kw)):
        est.fit(X, y)
        _finite(type(est).__name__, est.predict_proba(X))
    reg = countgrid.CountingGridRegressor((4, 4), (2, 2), **kw).fit(X, y * 1.5)
    _finite("CountingGridRegressor", reg.predict(X))
    for cls in (countgrid.CountingGridPosterior, countgrid.CountingGridFESS):
        emb = cls(extent=(3, 3), window=(2, 2), n_iter=3, num_threads=NT,
                  random_state=0).fit(X, y)
        _finite(cls.__name__, emb.transform(X))
    cg = countgrid.CountingGrid((4, 4), (2, 2), n_iter=3, num_threads=NT,
                                random_state=0).fit(X)
    _finite("embed_labels", countgrid.embed_labels(cg.transform(X), y, (4, 4), (2, 2),
                                                   num_threads=NT))


def topics():
    import countgrid
    for dtype in (np.float32, np.float64):
        for sparse in (True, False):
            X, y = _data(dtype, sparse)
            plsa = countgrid.PLSA(3, n_iter=5, fold_in_iter=20, dtype=dtype, num_threads=NT,
                                  random_state=0).fit(X)
            theta = plsa.transform(X)
            assert theta.shape == (X.shape[0], 3)
            _finite("PLSA", theta, plsa.score_samples(X))
    X, y = _data()
    kw = dict(n_components=2, n_iter=5, num_threads=NT, random_state=0)
    for cls in (countgrid.MixtureOfTopics, countgrid.FisherScore, countgrid.TOPEmbedding,
                countgrid.LLREmbedding, countgrid.FreeEnergyScoreSpace,
                countgrid.PosteriorDivergence):
        est = cls(**kw).fit(X, y)
        _finite(cls.__name__, est.predict_proba(X) if hasattr(est, "predict_proba")
                else est.transform(X))
    _finite("LSI", countgrid.LSI(2, random_state=0).fit(X).transform(X))


def kernels():
    import countgrid
    from countgrid import kernels as K
    for dtype in (np.float32, np.float64):
        for sparse in (True, False):
            X, y = _data(dtype, sparse)
            A, B = X[:9], X[9:]
            for q in (0.0, 0.5, 1.0, 1.0 + 1e-7, 1.5, 2.0):
                _finite("jensen_tsallis_kernel", K.jensen_tsallis_kernel(A, B, q=q,
                                                                         num_threads=NT))
            _finite("jensen_tsallis_kernel weighted",
                    K.jensen_tsallis_kernel(A, q=1.5, weighted="A", num_threads=NT),
                    K.jensen_tsallis_kernel(A, B, q=0.7, weighted="B", num_threads=NT))
            _finite("jensen_shannon_kernel", K.jensen_shannon_kernel(A, num_threads=NT),
                    K.jensen_shannon_kernel(A, B, blocks=[6, 6], num_threads=NT))
    X, y = _data()
    for kernel, classifier in (("jt", "svm"), ("js", "knn")):
        clf = countgrid.ITKernelClassifier(kernel=kernel, classifier=classifier,
                                           num_threads=NT).fit(X, y)
        assert clf.predict(X).shape == (X.shape[0],)
        if classifier == "svm":
            _finite("ITKernelClassifier", clf.decision_function(X))


def rap():
    import countgrid
    for dtype in (np.float32, np.float64):
        for sparse in (True, False):
            X, y = _data(dtype, sparse)
            for method in ("cd", "mean_field"):
                r = countgrid.RAP(3, n_epochs=2, batch_size=8, method=method, dtype=dtype,
                                  num_threads=NT, random_state=0).fit(X)
                h = r.transform(X)
                assert h.shape == (X.shape[0], 3)
                _finite("RAP", h)


def gtm():
    import countgrid
    for sparse in (True, False):
        X, y = _data(np.float64, sparse)
        for zi in (True, False):
            g = countgrid.ZIPGTM((3, 3), n_basis=4, n_iter=3, zero_inflation=zi,
                                 num_threads=NT, random_state=0).fit(X)
            z = g.transform(X)
            assert z.shape[0] == X.shape[0]
            _finite("ZIPGTM", z, g.score_samples(X))


def mixture():
    import countgrid
    rng = np.random.default_rng(0)
    s = np.r_[rng.normal(-1, 0.5, (200, 2)), rng.normal(1, 0.5, (200, 2))]
    edges = np.linspace(-3, 3, 9)
    W, _, _ = np.histogram2d(s[:, 0], s[:, 1], bins=[edges, edges])
    centres = (edges[:-1] + edges[1:]) / 2
    for domain in ("euclidean", "circular"):
        gmm = countgrid.HistogramGMM(2, domain=domain, n_iter=5, random_state=0)
        gmm.fit(W, [centres, centres])
        pts = np.array([[0.0, 0.0], [1.0, -1.0], [50.0, 50.0]])
        _finite("HistogramGMM", gmm.predict_proba(pts), gmm.score_samples(pts))


FAMILIES = {"grid": grid, "topics": topics, "kernels": kernels, "rap": rap, "gtm": gtm,
            "mixture": mixture}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("families", nargs="*", choices=[[]] + sorted(FAMILIES),
                        help="families to run (default: all)")
    names = parser.parse_args(argv).families or list(FAMILIES)
    warnings.simplefilter("ignore")  # ConvergenceWarning of 3-iteration fits
    for name in names:
        start = time.perf_counter()
        FAMILIES[name]()
        print(f"{name}: ok ({time.perf_counter() - start:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
