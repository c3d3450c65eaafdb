"""The picture of :func:`countgrid.metrics.topic_diagnostics`: coherence against
exclusivity, one point per topic (docs/diagnostics.md, "The diagnostics table")."""
from numbers import Integral

import numpy as np

from countgrid._utils.param_validation import Interval, Options, validate_call_params
from countgrid.metrics import TopicDiagnostics
from countgrid.plotting._pictures import _axes, _mpl

#: The columns that can be put on an axis.
_AXES = ("exclusivity", "frex", "coherence", "effective_words", "document_entropy",
         "corpus_distance", "uniform_distance", "share")


@validate_call_params({"x": [Options(*_AXES)], "y": [Options(*_AXES)],
                       "n_labels": [Interval(Integral, 0, None, closed="left")],
                       "n_words": [Interval(Integral, 1, None, closed="left")]})
def plot_topic_quality(diagnostics, feature_names=None, ax=None, x="exclusivity",
                       y="coherence", n_labels=20, n_words=3):
    """Each topic as a point, coherence against exclusivity (stm's ``topicQuality``).

    Topics up and to the right are both coherent and distinct from the others; a point's
    area is the topic's share of the tokens.  The ``n_labels`` largest topics are labelled
    with their number and first ``n_words`` top words.

    Parameters
    ----------
    diagnostics : TopicDiagnostics
        The result of :func:`countgrid.metrics.topic_diagnostics`.
    feature_names : sequence of str, optional
        The vocabulary, to label topics by words (default: word indices).
    ax : matplotlib.axes.Axes, optional
    x, y : str, default="exclusivity", "coherence"
        The columns on the axes: "exclusivity", "frex", "coherence", "effective_words",
        "document_entropy", "corpus_distance", "uniform_distance" or "share".
    n_labels : int, default=20
        Topics labelled, largest share first (0: none).
    n_words : int, default=3
        Top words in a label.

    Returns
    -------
    matplotlib.axes.Axes
        One scatter collection, its offsets the ``(x, y)`` of the topics.

    Raises
    ------
    TypeError
        If ``diagnostics`` is not a ``TopicDiagnostics``.

    Examples
    --------
    >>> import numpy as np, countgrid
    >>> from countgrid.metrics import topic_diagnostics
    >>> from countgrid.plotting import plot_topic_quality
    >>> X = np.random.default_rng(0).poisson(1.0, size=(60, 12))
    >>> d = topic_diagnostics(countgrid.PLSA(3, random_state=0).fit(X), X, n_words=4)
    >>> ax = plot_topic_quality(d)
    >>> ax.collections[0].get_offsets().shape
    (3, 2)
    """
    if not isinstance(diagnostics, TopicDiagnostics):
        raise TypeError(f"diagnostics must be the TopicDiagnostics of "
                        f"countgrid.metrics.topic_diagnostics, got "
                        f"{type(diagnostics).__name__}")
    _mpl()
    own_figure = ax is None
    ax = _axes(ax, (7.0, 5.0))
    xs = np.asarray(diagnostics[x], dtype=np.float64)
    ys = np.asarray(diagnostics[y], dtype=np.float64)
    share = np.nan_to_num(np.asarray(diagnostics["share"], dtype=np.float64))
    sizes = 12.0 + 900.0 * share / max(float(share.max()), 1e-300)
    ax.scatter(xs, ys, s=sizes, c="#4c72b0", alpha=0.55, edgecolors="#1f3b66",
               linewidths=0.6)
    axis_names = {"coherence": f"coherence ({diagnostics['coherence_measure']})",
                  "frex": f"FREX (weight {diagnostics['frex_weight']:g})"}
    ax.set_xlabel(axis_names.get(x, x.replace("_", " ")))
    ax.set_ylabel(axis_names.get(y, y.replace("_", " ")))
    ax.grid(True, color="0.92")
    ax.set_title(f"{len(xs)} {diagnostics['topics']}s: {y} against {x} "
                 f"(area: share of tokens)", fontsize=10)
    ax.margins(x=0.12 if n_labels else 0.05, y=0.08)   # room for the labels
    ax.autoscale_view()
    if own_figure:
        ax.figure.tight_layout()       # the final layout: labels are placed in it
    top = diagnostics["top_words"]
    names = None if feature_names is None else [str(w) for w in feature_names]
    placed, renderer = [], None
    x0, x1 = ax.get_xlim()
    for k in np.argsort(-share, kind="stable")[:n_labels]:
        if not (np.isfinite(xs[k]) and np.isfinite(ys[k])):
            continue
        words = top[k, :n_words]
        text = " ".join(names[w] for w in words) if names is not None else \
            " ".join(map(str, words))
        # right of its point, or left of it in the right third of the axes
        dx = -4 if (xs[k] - x0) > 0.66 * (x1 - x0) else 4
        style = dict(textcoords="offset points", fontsize=7.5, color="0.15",
                     ha="right" if dx < 0 else "left")
        label = ax.annotate(f"{k}: {text}", (xs[k], ys[k]), xytext=(dx, 3), **style)
        renderer = renderer or ax.figure.canvas.get_renderer()
        dy = 3
        for step in range(1, 7):       # over an earlier label: 9 points down, up, ...
            if not any(label.get_window_extent(renderer).overlaps(b) for b in placed):
                break
            dy = 3 - 9 * ((step + 1) // 2) * (1 if step % 2 else -1)
            label.set_position((dx, dy))
        if dy != 3:                    # a moved label points at its topic
            label.remove()
            label = ax.annotate(f"{k}: {text}", (xs[k], ys[k]), xytext=(dx, dy), **style,
                                arrowprops=dict(arrowstyle="-", color="0.6", lw=0.5,
                                                shrinkA=0, shrinkB=4))
        placed.append(label.get_window_extent(renderer))
    return ax
