"""The memory-check tools of docs/robustness.md stay usable between the CI runs that use
them: the workload of tools/smoke_fits.py runs natively, and tools/memcheck.py's verdict
blames countgrid exactly when countgrid code is at work in an error's stack (its
self-test with deliberate errors runs with the tool itself, in CI)."""
import importlib.util
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parent.parent / "tools"


def _tool(name):
    path = TOOLS / f"{name}.py"
    if not path.is_file():
        pytest.skip(f"tools/{name}.py not available (not a source checkout)")
    spec = importlib.util.spec_from_file_location(f"_cg_tool_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_smoke_fits_run_every_family(capsys):
    smoke = _tool("smoke_fits")
    assert set(smoke.FAMILIES) == {"grid", "topics", "kernels", "rap", "gtm", "mixture"}
    assert smoke.main([]) == 0
    out = capsys.readouterr().out
    assert all(f"{name}: ok" in out for name in smoke.FAMILIES)


def test_smoke_fits_rejects_an_unknown_family():
    smoke = _tool("smoke_fits")
    with pytest.raises(SystemExit):
        smoke.main(["no_such_family"])


ROOT = "/site-packages/countgrid"
ERROR = """<error><kind>{kind}</kind><what>w</what><stack>{frames}</stack>{aux}</error>"""


def _frame(fn, obj):
    return f"<frame><fn>{fn}</fn><obj>{obj}</obj></frame>"


def _error(kind, stack, aux_stack=None):
    frames = "".join(_frame(fn, obj) for fn, obj in stack)
    aux = ("<auxwhat>a</auxwhat><stack>" + "".join(_frame(fn, obj) for fn, obj in aux_stack)
           + "</stack>") if aux_stack else ""
    return ET.fromstring(ERROR.format(kind=kind, frames=frames, aux=aux))


OURS = ROOT + "/grid/_wrappers.cpython-311-x86_64-linux-gnu.so"
PY = "/usr/lib/libpython3.11.so.1.0"
EVAL = ("_PyEval_EvalFrameDefault", PY)


@pytest.mark.parametrize("stack, aux, expected", [
    # our kernel reads out of bounds
    ([("cg_grid_estep_csr_f64_i32", OURS), EVAL], None, True),
    # a NumPy call made by our wrapper
    ([("memcpy", "/lib/libc.so.6"), ("PyArray_NewCopy", "/np/_multiarray_umath.so"),
      ("__pyx_pw_estep", OURS), EVAL], None, True),
    # the interpreter's own noise while Python code called by our module init runs
    ([("maybe_small_long", PY), EVAL, ("PyInit__kernels", OURS)], None, False),
    # nothing of ours
    ([("strncmp", "/lib/ld-linux-x86-64.so.2"), ("dlopen", "/lib/libc.so.6")], None, False),
    # NumPy reads past a block that our code allocated
    ([("PyArray_Sum", "/np/_multiarray_umath.so"), EVAL],
     [("malloc", "vgpreload_memcheck"), ("cg_alloc", OURS), EVAL], True),
])
def test_memcheck_blames_countgrid_only_when_its_code_is_at_work(stack, aux, expected):
    memcheck = _tool("memcheck")
    assert memcheck.ours(_error("InvalidRead", stack, aux), ROOT) is expected


def test_memcheck_fatal_kinds():
    memcheck = _tool("memcheck")
    assert {"InvalidRead", "InvalidWrite", "UninitCondition", "UninitValue",
            "Leak_DefinitelyLost", "InvalidFree"} <= memcheck.FATAL
    assert "Leak_PossiblyLost" not in memcheck.FATAL
