"""How the benchmark scripts find countgrid: the installed package (whichever Python runs
them, so one script measures two versions side by side, see run_all.py), else ../src of
this checkout after `python setup.py build_ext --inplace`."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

try:
    import countgrid  # noqa: F401
except ImportError:
    sys.path.insert(0, SRC)
    os.environ["PYTHONPATH"] = os.pathsep.join([SRC] + [p for p in [os.environ.get(
        "PYTHONPATH")] if p])
    import countgrid  # noqa: F401

try:
    from countgrid._utils.threads import effective_n_threads
except ImportError:  # countgrid 0.1, measured by run_all.py --python for before/after ratios
    from countgrid._utils.validation import resolve_num_threads as effective_n_threads  # noqa: F401
