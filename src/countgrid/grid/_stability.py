"""Stability of a counting grid across restarts (docs/counting_grids.md, "Stability across
restarts"): fit the same corpus with several seeds, align every fit onto the first
(:func:`countgrid.grid.align`) and measure how reproducible the cells' words and the
documents' places are."""
import math
from numbers import Integral

import numpy as np

from countgrid._utils.memory import check_memory
from countgrid._utils.results import ResultDict
from countgrid._utils.validation import check_random_state
from countgrid.grid._align import align, chance_similarity
from countgrid.grid._counting_grid import CountingGrid
from countgrid.grid._regions import regions as grid_regions

__all__ = ["GridStability", "stability"]


class GridStability(ResultDict):
    """The result of :func:`stability`: a dict whose keys are also attributes.

    Keys (``R`` restarts, restart 0 the reference whose frame everything is given in):
    ``reference`` (the fitted :class:`CountingGrid` of restart 0), ``seeds`` (the
    ``random_state`` of each fit), ``alignments`` (the :class:`GridAlignment` of each
    restart onto the reference, ``None`` for the reference itself), ``similarity`` (R x R:
    the mean Bhattacharyya coefficient of the paired window distributions ``h_`` of every
    two restarts after aligning them; 1 on the diagonal), ``mean_similarity`` (its mean
    off the diagonal), ``chance_similarity`` (R x R: the mean coefficient of two windows
    drawn at random, one from each), ``adjusted_similarity`` (``(similarity - chance) /
    (1 - chance)``: 0 for maps no more alike than random windows, 1 for the same map) and
    ``mean_adjusted_similarity``, ``cell_stability`` (shape ``extent``: each reference
    window position's mean coefficient with the windows aligned onto it),
    ``placement_agreement`` (R - 1 fractions: the documents that restart r places within
    half a window of the reference's place for them, after alignment),
    ``document_agreement`` (per document, the fraction of the other restarts that place it
    so), ``consensus`` (the mean of the aligned restarts' ``pi_``, shape ``extent +
    (n_words,)``), ``positions`` (shape ``(R, n_documents, n_dims)``: every restart's MAP
    window position of each document, in the reference's frame), and with regions ``regions`` (the reference's region labels),
    ``region_stability`` (the mean cell stability of each region) and
    ``region_agreement`` (the mean document agreement of the documents the reference
    places in each region; NaN for a region holding none).
    """

    def __repr__(self):
        return (f"GridStability(n_restarts={len(self['seeds'])}, "
                f"mean_similarity={self['mean_similarity']:.4f}, "
                f"placement_agreement={np.mean(self['placement_agreement']):.4f})")


def _torus_distance(p, q, extent):
    d = np.abs(np.asarray(p) - np.asarray(q))
    return np.minimum(d, np.asarray(extent) - d)


def stability(X, n_restarts=5, *, random_state=0, n_regions=None, **params):
    """How reproducible a counting grid of ``X`` is across restarts with other seeds.

    Fits ``CountingGrid(**params, random_state=seed_r)`` for ``r = 0 .. n_restarts - 1``
    (seeds drawn from ``random_state``), aligns every fit onto the first with
    :func:`align` (translations, reversed and swapped axes of the torus) and reports:

    * ``similarity``: for every two restarts, the mean over window positions of the
      Bhattacharyya coefficient ``sum_w sqrt(p_w q_w)`` of the paired windows' word
      distributions ``h_`` after aligning one onto the other (1: the same map), and
      ``mean_similarity``; and
      ``adjusted_similarity``, the same measured against chance (two cells drawn at
      random), which a flat map, whose cells all look alike, does not pass;
    * ``cell_stability``: per window position of the reference, that coefficient
      averaged over the other restarts (1: every restart has the same words there);
    * ``placement_agreement``: per restart, the fraction of documents it places (window
      position, MAP) within half a window of where the reference places them, its
      position carried into the reference's frame by the alignment (torus distance
      ``<= window // 2`` on every axis); ``document_agreement`` per document;
    * ``consensus``: the mean of the aligned ``pi_``, a map of what the restarts share;
    * with ``n_regions``, the reference's regions (:func:`regions`) and their mean cell
      stability and document agreement.

    The fits run one after the other, each with the grid's threads (``num_threads`` in
    ``params``): the kernels already use every core, so parallel fits would compete for
    the same ones.  The result is the same whatever the number of threads (the fits are).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_documents, n_features)
        The documents (counts).
    n_restarts : int >= 2, default=5
    random_state : int or None, default=0
        Seeds the restarts' seeds.
    n_regions : int, optional
        Also summarise by this many regions of the reference grid.
    **params
        Parameters of :class:`CountingGrid` (``extent``, ``window``, ``n_iter``, ...;
        default: its defaults).  ``random_state`` is set per restart.

    Returns
    -------
    GridStability

    Raises
    ------
    ValueError
        If ``n_restarts < 2`` or ``n_regions`` exceeds the cells; any error of
        :class:`CountingGrid` on its parameters or on ``X``.
    TypeError
        If ``n_restarts`` or ``n_regions`` is not an int.

    Examples
    --------
    >>> import numpy as np
    >>> from countgrid.grid import stability
    >>> X = np.random.default_rng(0).poisson(1.0, size=(60, 15))
    >>> s = stability(X, 3, extent=(6, 6), window=(2, 2), n_iter=5)
    >>> s.similarity.shape, s.cell_stability.shape, len(s.placement_agreement)
    ((3, 3), (6, 6), 2)
    """
    for name, value in (("n_restarts", n_restarts), ("n_regions", n_regions)):
        if value is not None and (not isinstance(value, Integral) or isinstance(value, bool)):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if n_restarts < 2:
        raise ValueError(f"n_restarts must be at least 2 (stability compares restarts), got "
                         f"{n_restarts}")
    extent = params.get("extent", "auto")
    # before any fit when the extent is given (else once the first fit sized it)
    given = None if isinstance(extent, str) else math.prod(np.atleast_1d(extent))
    if n_regions is not None and (n_regions < 1 or (given is not None and n_regions > given)):
        cells = "the cells" if given is None else f"the {given} cells"
        raise ValueError(f"n_regions must be between 1 and {cells}, got {n_regions}")
    seeds = [int(s) for s in check_random_state(random_state).integers(
        0, 2**31 - 1, size=int(n_restarts))]
    grids = []
    for seed in seeds:
        g = CountingGrid(**params, random_state=seed).fit(X)
        if not grids:
            n_cells, V = math.prod(g.pi_.shape[:-1]), g.pi_.shape[-1]
            check_memory(8 * n_cells * V * (n_restarts + 2),
                         f"{n_restarts} grids of {n_cells} cells x {V} words",
                         "fewer restarts or a smaller grid")
            if n_regions is not None and not 1 <= n_regions <= n_cells:
                raise ValueError(f"n_regions must be between 1 and the {n_cells} cells, "
                                 f"got {n_regions}")
        grids.append(g)
    reference = grids[0]
    extent, window = tuple(reference.pi_.shape[:-1]), tuple(int(w) for w in reference.window)
    half = np.asarray(window) // 2
    positions = [g.positions(X) for g in grids]
    alignments, agreement = [None], []
    consensus = np.array(reference.pi_, dtype=np.float64)
    cells = np.zeros(extent)
    agree = np.zeros(positions[0].shape[0])
    placed = [positions[0]]
    for r in range(1, len(grids)):
        a = align(grids[r], grids[0])
        alignments.append(a)
        consensus += a.aligned
        cells += a.cell_similarity
        moved = a.positions(positions[r], grids[r].window)
        placed.append(moved)
        close = (_torus_distance(moved, positions[0], extent) <= half).all(axis=1)
        agreement.append(float(close.mean()))
        agree += close
    R = len(grids)
    similarity, chance = np.eye(R), np.zeros((R, R))
    for i in range(R):
        chance[i, i] = chance_similarity(grids[i], grids[i])
        for j in range(i + 1, R):
            a = alignments[j] if i == 0 else align(grids[j], grids[i])
            similarity[i, j] = similarity[j, i] = a.similarity
            chance[i, j] = chance[j, i] = a.chance_similarity
    adjusted = (similarity - chance) / (1.0 - chance)
    off = ~np.eye(R, dtype=bool)
    out = GridStability(
        reference=reference, seeds=seeds, alignments=alignments, similarity=similarity,
        mean_similarity=float(similarity[off].mean()), chance_similarity=chance,
        adjusted_similarity=adjusted, mean_adjusted_similarity=float(adjusted[off].mean()),
        cell_stability=cells / (R - 1), placement_agreement=np.asarray(agreement),
        document_agreement=agree / (R - 1), consensus=consensus / R,
        positions=np.stack(placed))
    if n_regions is not None:
        labels = grid_regions(reference, int(n_regions))
        flat = labels.ravel()
        size = np.bincount(flat, minlength=int(n_regions))
        out["regions"] = labels
        out["region_stability"] = np.bincount(flat, weights=out["cell_stability"].ravel(),
                                              minlength=int(n_regions)) / size
        centre = (positions[0] + half) % np.asarray(extent)
        doc_region = labels[tuple(centre.T)]
        count = np.bincount(doc_region, minlength=int(n_regions))
        total = np.bincount(doc_region, weights=out["document_agreement"],
                            minlength=int(n_regions))
        with np.errstate(invalid="ignore", divide="ignore"):
            out["region_agreement"] = np.where(count > 0, total / np.maximum(count, 1),
                                               np.nan)
    return out
