"""Generative embeddings on pLSA and counting grids (docs/topics.md)."""
import numpy as np
import pytest
import scipy.sparse as sp

import countgrid
from countgrid import embeddings as E
from countgrid.kernels import jensen_shannon_kernel, jensen_tsallis_kernel
from countgrid.topics import PLSA

from _expected_warnings import FEW_ITERATIONS
from _synthetic import two_class_corpus

# the embeddings are of models fitted a few EM iterations, on purpose (fast)
pytestmark = FEW_ITERATIONS

PHI = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]])  # P(w|z), rows z (docs/topics.md)
X2 = np.array([[3.0, 1.0, 2.0], [1.0, 2.0, 2.0]])    # d1, d2


def spec_model():
    m = PLSA(n_components=2)
    m.components_ = PHI.copy()
    m.n_features_in_ = 3
    return m


# ------------------------------------------ docs/topics.md, "Worked example"
def test_mt_spec_example():
    T = spec_model().transform(X2)
    np.testing.assert_allclose(T[0], [0.6149874162, 0.3850125838], atol=1e-9)
    np.testing.assert_allclose(T[1], [0.2013431900, 0.7986568100], atol=1e-9)
    assert jensen_shannon_kernel(T)[0, 1] == pytest.approx(0.6013251838, abs=1e-8)
    assert jensen_tsallis_kernel(T, q=0.5)[0, 1] == pytest.approx(1.0686053773, abs=1e-8)
    assert jensen_tsallis_kernel(T, q=1.5)[0, 1] == pytest.approx(0.3536177229, abs=1e-8)


def test_fs_spec_example_and_identities():
    m = spec_model()
    FS = E.fisher_score(m, X2)
    assert sp.issparse(FS) and FS.shape == (2, 6)
    np.testing.assert_allclose(FS.toarray()[0].reshape(3, 2),
                               [[3.933885, 2.462807], [2.578550, 1.614300],
                                [4.204952, 2.632508]], atol=2e-6)
    # dl/dP(w|z) = n(d,w) P(z|d) / P(w|d)
    theta = m.transform(X2)
    pwd = theta @ PHI
    ref = (X2 / pwd)[:, :, None] * theta[:, None, :]
    np.testing.assert_allclose(FS.toarray().reshape(2, 3, 2), ref, rtol=1e-12)
    # reductions
    np.testing.assert_allclose(E.fisher_score(m, X2, "topics"), ref.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(E.fisher_score(m, X2, "words").toarray(), ref.sum(axis=2),
                               rtol=1e-12)
    lengths = X2.sum(axis=1)
    np.testing.assert_allclose(E.fisher_score(m, X2, normalize_length=True).toarray(),
                               FS.toarray() / lengths[:, None], rtol=1e-12)


def test_fess_spec_example_and_identity():
    m = spec_model()
    A, B, Ent = E.fess_terms(m, X2)
    np.testing.assert_allclose(Ent.toarray()[0].reshape(3, 2),
                               [[0.235883, 0.615676], [0.341509, 0.351145],
                                [0.655749, 0.372820]], atol=2e-6)
    np.testing.assert_allclose(A.toarray()[0].reshape(3, 2),
                               [[0.982183, 0.567082], [0.830003, 0.583072],
                                [0.968226, 0.806852]], atol=2e-6)
    np.testing.assert_allclose(B.toarray()[0].reshape(3, 2),
                               [[1.338730, 0.235070], [0.250714, 0.462245],
                                [0.204425, 1.507605]], atol=2e-6)
    F = A.sum(axis=1).A1 + B.sum(axis=1).A1 - Ent.sum(axis=1).A1
    assert F[0] == pytest.approx(6.1634247240, abs=1e-9)
    np.testing.assert_allclose(F, -m.score_samples(X2), atol=1e-9)


def test_fess_identity_random_model_all_reductions():
    X, y = two_class_corpus(1, W=15)
    m = PLSA(n_components=4, random_state=0, n_iter=30).fit(X)
    ell = m.score_samples(X)
    for reduce in ("none", "words", "topics"):
        A, B, Ent = E.fess_terms(m, X, reduce)
        F = (np.asarray(A.sum(axis=1)).ravel() + np.asarray(B.sum(axis=1)).ravel()
             - np.asarray(Ent.sum(axis=1)).ravel())
        np.testing.assert_allclose(F, -ell, rtol=1e-9, atol=1e-9)
        for M in (A, B, Ent):
            assert (M.data if sp.issparse(M) else M).min() >= 0


def test_fs_matches_finite_differences():
    X, _ = two_class_corpus(2, D=6, W=8)
    m = PLSA(n_components=3)
    # a well-conditioned P(w|z) (no entries near 0, where differences cannot resolve l)
    m.components_ = np.random.default_rng(0).dirichlet(np.full(8, 3.0), size=3)
    m.n_features_in_ = 8
    Xd = X.toarray()
    theta = m.transform(X)
    FS = E.fisher_score(m, X).toarray().reshape(6, 8, 3)

    def ell(phi):  # l(d) with P(z|d) held at the folding-in value
        return (Xd * np.log(theta @ phi, where=Xd > 0, out=np.zeros_like(Xd))).sum(axis=1)

    phi0 = np.asarray(m.components_, dtype=np.float64)
    for z in range(3):
        for w in range(8):
            h = 1e-5 * phi0[z, w]  # relative step: the entries are not perturbed below 0
            up, dn = phi0.copy(), phi0.copy()
            up[z, w] += h
            dn[z, w] -= h
            np.testing.assert_allclose((ell(up) - ell(dn)) / (2 * h), FS[:, w, z],
                                       rtol=1e-6, atol=1e-8)


def test_posterior_divergence_against_dense_reference():
    X, _ = two_class_corpus(3, D=10, W=7)
    m = PLSA(n_components=3, random_state=1, n_iter=30).fit(X)
    s = np.array([5.0, 11.0, 2.5])
    PD = E.posterior_divergence(m, X, s)
    assert PD.shape == (10, 9) and PD.min() >= 0
    Xd, phi, theta = X.toarray(), m.components_, m.transform(X)
    for d in range(10):
        r = Xd[d][:, None] * (theta[d][None, :] * phi.T) / (theta[d] @ phi)[:, None]  # (W, Z)
        new = (phi.T * s + r) / (s + r.sum(axis=0))
        kl = (new * np.log(new / phi.T)).sum(axis=0)
        np.testing.assert_allclose(PD[d, :3], kl, rtol=1e-8, atol=1e-14)
    A, B, Ent = E.fess_terms(m, X, "topics")
    np.testing.assert_allclose(PD[:, 3:6], A + B, rtol=1e-12)
    np.testing.assert_allclose(PD[:, 6:], Ent, rtol=1e-12)


# ------------------------------------------------------------ transformers
PLSA_KW = dict(n_components=3, n_iter=20, random_state=0)


@pytest.mark.parametrize("cls,dims", [
    (countgrid.MixtureOfTopics, lambda Z, W: Z),
    (countgrid.FisherScore, lambda Z, W: Z * W),
    (countgrid.FreeEnergyScoreSpace, lambda Z, W: 3 * Z * W),
    (countgrid.PosteriorDivergence, lambda Z, W: 3 * Z),
])
@pytest.mark.parametrize("mode,n_models", [("per_class", 2), ("1", 2), ("whole_data", 1),
                                           (2, 1)])
def test_unsigned_shapes_and_nonnegativity(cls, dims, mode, n_models):
    X, y = two_class_corpus(4, W=15)
    emb = cls(mode=mode, **PLSA_KW).fit(X, y)
    assert len(emb.models_) == n_models
    out = emb.transform(X[:7])
    assert out.shape == (7, n_models * dims(3, X.shape[1]))
    vals = out.toarray() if sp.issparse(out) else out
    assert np.isfinite(vals).all() and vals.min() >= 0
    if cls is countgrid.MixtureOfTopics:
        np.testing.assert_allclose(vals.reshape(7, n_models, 3).sum(axis=2), 1.0, atol=1e-12)
    assert np.isfinite(np.asarray(jensen_tsallis_kernel(out, q=1.5))).all()
    assert emb.block_sizes_ == (dims(3, X.shape[1]),) * n_models


@pytest.mark.parametrize("emb", [
    countgrid.FisherScore(include_topic_prior=True, **PLSA_KW),
    countgrid.FisherScore(reduce="words", **PLSA_KW),
    countgrid.FreeEnergyScoreSpace(reduce="topics", **PLSA_KW),
    countgrid.TOPEmbedding(**PLSA_KW),
    countgrid.LLREmbedding(positivize="split", reduce="words", **PLSA_KW),
    countgrid.TOPEmbedding(positivize=None, **PLSA_KW),
    countgrid.CountingGridPosterior(extent=(4, 4), window=(2, 2), n_iter=5, random_state=0),
    countgrid.CountingGridFESS(extent=(3, 5), window=(2, 2), n_iter=5, random_state=0),
    countgrid.CountingGridFESS(extent=(4, 4), window=(2, 2), mode=2, reduce="features",
                               n_iter=5, random_state=0),
], ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_block_sizes_tile_the_embedding(emb, n_classes):
    X, _ = two_class_corpus(6, D=45, W=15)
    y = np.arange(45) % n_classes
    out = emb.fit(X, y).transform(X[:5])
    sizes = emb.block_sizes_
    assert sum(sizes) == out.shape[1]
    models = len(emb.models_) // (2 if isinstance(emb, (E.TOPEmbedding, E.LLREmbedding)) else 1)
    assert len(sizes) == models and len(set(sizes)) == 1
    if getattr(emb, "positivize", None) == "split":  # each block is [pos, neg] of its own
        raw = np.hstack([np.asarray(b.toarray() if sp.issparse(b) else b)
                         for b in emb._raw_blocks(X[:5])])
        vals = out.toarray() if sp.issparse(out) else out
        w = sizes[0] // 2
        for b in range(len(sizes)):
            pos = vals[:, 2 * w * b:2 * w * b + w]
            neg = vals[:, 2 * w * b + w:2 * w * (b + 1)]
            np.testing.assert_array_equal(pos - neg, raw[:, w * b:w * (b + 1)])


def test_fs_topic_prior_block_matches_finite_differences():
    """dl/dP(z) in the symmetric form P(d,w) = sum_z P(z) P(d|z) P(w|z) (docs/topics.md)."""
    X, y = two_class_corpus(7, D=30, W=10)
    emb = countgrid.FisherScore(mode="whole_data", include_topic_prior=True, **PLSA_KW)
    out = emb.fit(X, y).transform(X[:4]).toarray()
    model, prior = emb.models_[0], emb.topic_prior_[0]
    assert emb.topic_prior_.shape == (1, 3) and prior.sum() == pytest.approx(1.0)
    # P(z) = sum_d n(d) P(z|d) / N over the training documents (folding-in P(z|d))
    lengths = np.asarray(X.sum(axis=1)).ravel()
    np.testing.assert_allclose(prior, lengths @ model.transform(X) / lengths.sum(), rtol=1e-9)
    theta = model.transform(X[:4])
    phi = np.asarray(model.components_, dtype=np.float64)
    Xd = X[:4].toarray()
    pdz = theta / prior[None, :]  # P(d|z) up to the factor P(d), which cancels in l(d)

    def ell(pz):
        pdw = (pdz * pz[None, :]) @ phi
        return (Xd * np.log(pdw, where=Xd > 0, out=np.zeros_like(Xd))).sum(axis=1)

    for z in range(3):
        h = 1e-6
        up, dn = prior.copy(), prior.copy()
        up[z] += h
        dn[z] -= h
        np.testing.assert_allclose((ell(up) - ell(dn)) / (2 * h), out[:, z], rtol=1e-6,
                                   atol=1e-6)
    # the rest of the vector is the plain P(w|z) score; length normalisation divides by n(d)
    np.testing.assert_allclose(out[:, 3:], E.fisher_score(model, X[:4]).toarray(), rtol=1e-12)
    normed = countgrid.FisherScore(mode="whole_data", include_topic_prior=True,
                                   normalize_length=True, **PLSA_KW).fit(X).transform(X[:4])
    np.testing.assert_allclose(normed.toarray()[:, :3], out[:, :3] / lengths[:4, None],
                               rtol=1e-9)


def test_per_class_models_use_their_class_only():
    X, y = two_class_corpus(5, W=15)
    emb = countgrid.MixtureOfTopics(mode="per_class", **PLSA_KW).fit(X, y)
    rng = np.random.default_rng(0)
    for c, model in enumerate(emb.models_):
        # the embeddings fit plain EM with the 0.2 smoothing (not PLSA's defaults)
        ref = PLSA(n_components=3, n_iter=20, tempered=False, smoothing=1e-10,
                   random_state=model.random_state).fit(X[y == c])
        np.testing.assert_allclose(model.components_, ref.components_)
    del rng
    whole = countgrid.MixtureOfTopics(mode="whole_data", **PLSA_KW).fit(X)  # y not needed
    assert whole.transform(X).shape == (X.shape[0], 3)
    with pytest.raises(ValueError, match="labels"):
        countgrid.MixtureOfTopics(mode="per_class").fit(X)
    with pytest.raises(ValueError, match="mode"):
        countgrid.MixtureOfTopics(mode="3").fit(X, y)
    with pytest.raises(ValueError, match="reduce"):
        countgrid.FisherScore(reduce="all").fit(X, y)


@pytest.mark.parametrize("reduce,extra", [("none", 0), ("topics", 0)])
def test_fess_reduce_dims(reduce, extra):
    X, y = two_class_corpus(6, W=15)
    out = countgrid.FreeEnergyScoreSpace(reduce=reduce, **PLSA_KW).fit_transform(X, y)
    per = {"none": 3 * 3 * X.shape[1], "topics": 9}[reduce]
    assert out.shape == (X.shape[0], 2 * per + extra)


def test_top_invariant_identical_class_models():
    X, y = two_class_corpus(7, W=15)
    top = countgrid.TOPEmbedding(reduce="none", positivize=None, **PLSA_KW).fit(X, y)
    top.models_ = [top.models_[0], top.models_[0]]
    top.log_priors_ = np.array([[np.log(0.5), np.log(0.5)]])
    raw = top.transform(X).toarray()
    dim = 3 * X.shape[1]
    np.testing.assert_allclose(raw[:, 0], 0.0, atol=1e-12)
    np.testing.assert_allclose(raw[:, 1:1 + dim], -raw[:, 1 + dim:], rtol=0, atol=0)
    assert raw[:, 1:1 + dim].min() >= 0


@pytest.mark.parametrize("cls", [countgrid.TOPEmbedding, countgrid.LLREmbedding])
def test_signed_embeddings(cls):
    X, y = two_class_corpus(8, W=15)
    raw = cls(positivize=None, **PLSA_KW).fit(X, y)
    r = raw.transform(X)
    assert r.shape == (X.shape[0], 1 + 2 * 3)
    l_pos, l_neg = raw.models_[0].score_samples(X), raw.models_[1].score_samples(X)
    v = l_pos - l_neg
    if cls is countgrid.TOPEmbedding:
        v = v + np.log(np.mean(y == 1)) - np.log(np.mean(y == 0))
    np.testing.assert_allclose(r[:, 0], v, rtol=1e-12)
    assert r[:, 1:4].min() >= 0 and r[:, 4:].max() <= 0
    split = cls(positivize="split", **PLSA_KW).fit(X, y).transform(X)
    np.testing.assert_allclose(split[:, :7] - split[:, 7:], r, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="per_class"):
        cls(mode="whole_data").fit(X, y)
    with pytest.raises(ValueError, match="positivize"):
        cls(positivize="exp").fit(X, y)


def test_shift_uses_training_minima_only():
    X, y = two_class_corpus(9, D=60, W=15)
    train, test = np.arange(40), np.arange(40, 60)
    top = countgrid.TOPEmbedding(**PLSA_KW).fit(X[train], y[train])
    raw = countgrid.TOPEmbedding(positivize=None, **PLSA_KW).fit(X[train], y[train])
    np.testing.assert_allclose(top.shift_, raw.transform(X[train]).min(axis=0), rtol=1e-12)
    shift_before = top.shift_.copy()
    tr, te = top.transform(X[train]), top.transform(X[test])
    np.testing.assert_array_equal(top.shift_, shift_before)  # transform does not refit
    np.testing.assert_allclose(tr.min(axis=0), 0.0, atol=1e-12)
    assert te.min() >= 0
    np.testing.assert_allclose(te, np.maximum(raw.transform(X[test]) - shift_before, 0),
                               rtol=1e-12)


def test_top_multiclass_one_vs_rest():
    X, _ = two_class_corpus(10, D=45, W=15)
    y = np.arange(45) % 3
    top = countgrid.LLREmbedding(**PLSA_KW).fit(X, y)
    assert len(top.models_) == 6 and top.log_priors_.shape == (3, 2)
    assert top.transform(X).shape == (45, 3 * 7)


def test_embedding_kernels_psd():
    X, y = two_class_corpus(11, W=15)
    for emb in (countgrid.FreeEnergyScoreSpace(reduce="topics", **PLSA_KW),
                countgrid.TOPEmbedding(**PLSA_KW)):
        out = emb.fit_transform(X, y)
        for q in (0.5, 1.0, 1.5, 2.0):
            K = jensen_tsallis_kernel(out, q=q)
            assert np.linalg.eigvalsh((K + K.T) / 2).min() > -1e-8 * np.abs(K).max()


def test_embeddings_save_load(tmp_path):
    X, y = two_class_corpus(12, W=15)
    for emb in (countgrid.PosteriorDivergence(**PLSA_KW), countgrid.TOPEmbedding(**PLSA_KW),
                countgrid.FisherScore(mode="2", reduce="words", **PLSA_KW),
                countgrid.FisherScore(include_topic_prior=True, **PLSA_KW)):
        emb.fit(X, y)
        path = tmp_path / f"{type(emb).__name__}.npz"
        emb.save(path)
        back = countgrid.load(path)
        out, ref = back.transform(X), emb.transform(X)
        if sp.issparse(out):
            out, ref = out.toarray(), ref.toarray()
        np.testing.assert_array_equal(out, ref)
        assert back.block_sizes_ == emb.block_sizes_


# ------------------------------------------------------------ counting grids
CG_KW = dict(extent=(5, 5), window=(2, 2), n_iter=8, random_state=0)


def test_cg_fess_sums_to_negative_loglik_exact_posterior():
    X, y = two_class_corpus(13, W=15)
    cg = countgrid.CountingGrid((5, 5), (2, 2), n_iter=8, posterior_floor=0.0,
                                dtype=np.float64, random_state=0).fit(X)
    T = E.cg_fess_terms(cg, X)
    L = 25
    F = T[:, :L].sum(axis=1) + T[:, L:2 * L].sum(axis=1) - T[:, 2 * L:].sum(axis=1)
    np.testing.assert_allclose(F, -cg.score_samples(X), rtol=1e-9, atol=1e-9)
    assert T.min() >= 0
    Tf = E.cg_fess_terms(cg, X, "features")
    assert Tf.shape == (X.shape[0], X.shape[1] + 2) and Tf.min() >= 0
    np.testing.assert_allclose(Tf[:, :-2].sum(axis=1), T[:, :L].sum(axis=1), rtol=1e-10)
    np.testing.assert_allclose(Tf[:, -2] - Tf[:, -1], T[:, L:2 * L].sum(1) - T[:, 2 * L:].sum(1),
                               rtol=1e-10, atol=1e-12)


def test_cg_fess_is_a_bound_with_floor():
    X, _ = two_class_corpus(14, W=15)
    cg = countgrid.CountingGrid((5, 5), (2, 2), n_iter=8, posterior_floor=0.01,
                                random_state=0).fit(X)
    T = E.cg_fess_terms(cg, X)
    L = 25
    F = T[:, :L].sum(axis=1) + T[:, L:2 * L].sum(axis=1) - T[:, 2 * L:].sum(axis=1)
    gap = F + cg.score_samples(X)
    assert gap.min() >= -1e-10 and gap.max() > 1e-6


@pytest.mark.parametrize("mode,n_models", [("per_class", 2), ("whole_data", 1)])
def test_cg_embeddings_shapes(mode, n_models):
    X, y = two_class_corpus(15, W=15)
    post = countgrid.CountingGridPosterior(mode=mode, **CG_KW).fit(X, y)
    Q = post.transform(X)
    assert Q.shape == (X.shape[0], 25 * n_models)
    np.testing.assert_allclose(Q.reshape(-1, n_models, 25).sum(axis=2), 1.0, atol=1e-10)
    fess = countgrid.CountingGridFESS(mode=mode, reduce="features", **CG_KW).fit(X, y)
    assert fess.transform(X).shape == (X.shape[0], (X.shape[1] + 2) * n_models)
    assert fess.transform(X).min() >= 0
    with pytest.raises(ValueError, match="reduce"):
        countgrid.CountingGridFESS(reduce="none", **CG_KW).fit(X, y)


# ------------------------------------------ FESS rounding (issue 12): clipped at 0
def _fess_trigger(model, max_count=40):
    """Single-word documents whose folded-in P(z|d) rounds above 1 under a one-topic model
    (P(z|d) is updated multiplicatively from 1: fl(fl(n / P(w|z)) P(w|z)) / n > 1)."""
    W = model.components_.shape[1]
    docs = np.array([[n * (j == w) for j in range(W)] for w in range(W)
                     for n in range(1, max_count + 1)], dtype=np.float64)
    return docs[model.transform(docs)[:, 0] > 1.0]


def test_fess_terms_clip_rounding_below_zero():
    # constructed: P(w|z) = 21/2000 and a count of 3 give fl(fl(3 / 0.0105) 0.0105) > 3, so
    # folding-in ends at P(z|d) = 1 + 2.2e-16 and B = -3 ln P(z|d) = -6.7e-16 unclipped
    m = PLSA(n_components=1)
    m.components_ = np.array([[21 / 2000, 1979 / 2000]])
    m.n_features_in_ = 2
    doc = np.array([[3.0, 0.0]])
    theta = m.transform(doc)[0, 0]
    assert theta == np.nextafter(1.0, 2.0)             # the construction holds
    assert -3.0 * np.log(theta) < 0                     # what B held before the clip
    for reduce in ("none", "words", "topics"):
        for block in E.fess_terms(m, doc, reduce):
            dense = block.toarray() if sp.issparse(block) else block
            assert (dense >= 0).all(), reduce
    A, B, Ent = E.fess_terms(m, doc)
    assert B.nnz == 0 and Ent.nnz == 0                  # q = 1: no mixing cost, no entropy
    np.testing.assert_allclose(A.toarray(), [[-3 * np.log(21 / 2000), 0.0]], rtol=1e-15)


def test_fess_rounding_does_not_stop_the_jt_classifier():
    rng = np.random.default_rng(0)
    X = rng.poisson(rng.uniform(0.5, 6.0, 12), (40, 12)).astype(np.float64)
    y = np.arange(40) % 2
    clf = countgrid.ITKernelClassifier(
        countgrid.FreeEnergyScoreSpace(mode="whole_data", n_components=1, random_state=0),
        kernel="jt", classifier="knn", n_neighbors=1).fit(X, y)
    docs = _fess_trigger(clf.embedding_.models_[0])
    assert len(docs) > 0                                # the rounding case is there
    assert clf.embedding_.transform(docs).min() >= 0
    assert clf.predict(docs).shape == (len(docs),)
