"""The table of defaults (docs/choosing.md, "Defaults") is the estimators' signatures, and
the command line and the demo take their defaults from them (issue 22: three sets of
defaults)."""
import argparse
import inspect
import os
import re

import numpy as np

import countgrid
from countgrid.cli import _main
from countgrid.cli._models import grid_parameters, make_estimator

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs",
                    "choosing.md")


def _table():
    text = open(DOCS, encoding="utf-8").read().split("## Defaults", 1)[1]
    rows, estimators = [], None
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[1].startswith("`"):
            continue
        if cells[0]:
            estimators = re.findall(r"`(\w+)`", cells[0])
        rows.append((estimators, cells[1].strip("`"), cells[2].strip("`")))
    return rows


def _text(value):
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    return repr(value) if not isinstance(value, float) else f"{value:g}"


def test_the_docs_table_is_the_signatures():
    rows = _table()
    assert len(rows) >= 12
    for estimators, name, shown in rows:
        for est in estimators:
            value = inspect.signature(getattr(countgrid, est)).parameters[name].default
            assert _text(value).replace("'", '"') == shown, (est, name, value, shown)


def test_the_generative_classifier_keeps_the_grid_defaults():
    """GenerativeCountingGridClassifier spells out the grid constructor's signature to add
    max_features: every shared parameter keeps grid_init's default (the table above
    lists only some of them)."""
    from countgrid.grid._counting_grid import grid_init
    shared = list(inspect.signature(grid_init).parameters.values())[1:]
    own = inspect.signature(countgrid.GenerativeCountingGridClassifier).parameters
    for p in shared:
        assert own[p.name].default is p.default or own[p.name].default == p.default, p.name
    assert list(own)[:len(shared)] == [p.name for p in shared]
    assert own["max_features"].default is None


def _args(argv):
    parser = _main.build_parser()
    return parser.parse_args(argv)


def test_the_command_line_keeps_every_default():
    args = _args(["fit", "posts/", "-o", "m.npz"])
    est = make_estimator(args, num_threads=1, n_words=500, n_docs=400)
    python = countgrid.CountingGrid(num_threads=1, random_state=0)
    assert est.get_params() == python.get_params()
    for model, cls in (("plsa", countgrid.PLSA), ("rap", countgrid.RAP),
                       ("zipgtm", countgrid.ZIPGTM)):
        est = make_estimator(_args(["fit", "x", "-o", "m.npz", "--model", model]), 1)
        assert est.get_params() == cls(num_threads=1, random_state=0).get_params(), model


def test_evaluate_and_demo_keep_the_classifier_defaults():
    for argv in (["evaluate", "x.csv", "--label-col", "y"], ["demo"]):
        args = _args(argv)
        if not hasattr(args, "coarse_window"):
            args.coarse_window = None
        params = grid_parameters(args, 500, 1000, countgrid.CountingGridClassifier)
        assert params == {}, (argv, params)


def test_every_python_value_is_accepted():
    args = _args(["fit", "x", "-o", "m.npz", "--grid", "auto", "--window", "4x4", "--tol",
                  "1e-6", "--dtype", "float64", "--n-iter", "7", "--coarse-iter", "0"])
    est = make_estimator(args, 1, n_words=100, n_docs=1000)
    assert est.tol == 1e-6 and est.dtype is np.float64 and est.n_iter == 7
    assert est.window_schedule is None and est.extent == "auto"
    args = _args(["fit", "x", "-o", "m.npz", "--coarse-iter", "3"])
    est = make_estimator(args, 1, n_words=100, n_docs=1000)   # the stages need the grid
    assert est.extent == (40, 40) and est.window_schedule == [((10, 10), 3), ((6, 6), 3)]
    args = _args(["fit", "x", "-o", "m.npz", "--float64"])
    assert make_estimator(args, 1).dtype is np.float64
    assert isinstance(argparse.ArgumentParser, type)
