"""The import graph of the package (docs/architecture.md): its modules' import statements,
at module level or inside functions, form no circle; countgrid.io imports no estimator;
no module imports one of the package's own modules from inside a function (which would
hide an edge of the graph); the front door (maps, text, cli, plotting) sits above the
model families and their private engine, which reach none of it."""
import ast
import importlib.util
import os
import re

import pytest

import countgrid
from countgrid import io

PACKAGE_DIR = os.path.dirname(os.path.abspath(countgrid.__file__))


def module_files():
    """{module name: path} of every Python and Cython source of the installed package."""
    out = {}
    for root, _, files in os.walk(PACKAGE_DIR):
        for name in files:
            if not name.endswith((".py", ".pyx")):
                continue
            rel = os.path.relpath(os.path.join(root, name), os.path.dirname(PACKAGE_DIR))
            parts = rel[: rel.rindex(".")].split(os.sep)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = os.path.join(root, name)
    return out


def is_module(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _python_imports(path, module):
    """(target module, inside a function?) of every import statement of a .py file."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                       ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((alias.name, nested) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.rsplit(".", child.level - 1)[0] if child.level > 1 \
                        else package
                    base = f"{anchor}.{base}" if base else anchor
                for alias in child.names:
                    sub = f"{base}.{alias.name}"
                    found.append((sub if is_module(sub) else base, nested))
            elif isinstance(child, ast.Call) and _dynamic_import(child):
                # importlib.import_module("countgrid.x") / __import__: an edge all the same
                found.append((child.args[0].value, nested))
            visit(child, nested)

    visit(tree, False)
    return found


def _dynamic_import(call):
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return (name in ("import_module", "__import__") and call.args
            and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str))


def _cython_imports(path):
    """Python-level imports of a .pyx file (cimports are compile-time and not edges)."""
    found = []
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^(\s*)(?:from\s+([\w.]+)\s+import\s+(.+)|import\s+([\w.]+))", line)
        if not m or line.lstrip().startswith(("cimport", "from cython")):
            continue
        if m.group(4):
            found.append((m.group(4), bool(m.group(1))))
            continue
        for name in m.group(3).split(","):
            sub = f"{m.group(2)}.{name.strip().split(' as ')[0]}"
            found.append((sub if is_module(sub) else m.group(2), bool(m.group(1))))
    return found


@pytest.fixture(scope="module")
def graph():
    files = module_files()
    edges, nested = {}, []
    for module, path in files.items():
        imports = (_python_imports(path, module) if path.endswith(".py")
                   else _cython_imports(path))
        own = [(target, inside) for target, inside in imports
               if target == "countgrid" or target.startswith("countgrid.")]
        edges[module] = {target for target, _ in own if target != module}
        nested += [(module, target) for target, inside in own if inside]
    return edges, nested


def test_the_graph_is_read(graph):
    edges, _ = graph
    assert len(edges) > 40
    assert "countgrid.grid._counting_grid" in edges["countgrid.grid._classifiers"]
    assert "countgrid._base" in edges["countgrid.rap._rap"]


def test_no_import_cycle(graph):
    edges, _ = graph
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []
    counter = [0]

    def strongconnect(v):  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in edges:
                continue
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            strongconnect(v)
    assert cycles == []


def test_io_imports_no_estimator(graph):
    edges, _ = graph
    estimator_modules = {cls.__module__ for cls in io.registered().values()}
    seen, todo = set(), ["countgrid.io"]
    while todo:
        module = todo.pop()
        for target in edges.get(module, ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    # only leaf helpers: the checked .npz reader, the schema checks, the memory rule and
    # the atomic writer (docs/security.md), none of which imports further
    assert seen <= {"countgrid._version", "countgrid._utils.npz", "countgrid._utils.fitted",
                    "countgrid._utils.memory", "countgrid._utils.atomic"}, seen
    assert not seen & estimator_modules


def test_no_function_level_import_of_the_package(graph):
    _, nested = graph
    assert nested == []


def test_every_estimator_registers_itself():
    names = set(io.registered())
    assert {"CountingGrid", "PLSA", "RAP", "ZIPGTM", "HistogramGMM", "LSI"} <= names
    assert "ITKernelClassifier" not in names          # declared saveable=False
    assert not any(name.startswith("_") for name in names)


#: The front door (docs/architecture.md): built on the model families, never below them.
FRONT_DOOR = ("countgrid.maps", "countgrid.text", "countgrid.cli", "countgrid.plotting",
              "countgrid.external")
#: The model families.
FAMILIES = ("countgrid.grid", "countgrid.topics", "countgrid.rap", "countgrid.gtm",
            "countgrid.mixture", "countgrid.kernels")


def _in(module, packages):
    return any(module == p or module.startswith(p + ".") for p in packages)


#: The private engine the families stand on (docs/architecture.md).
ENGINE = ("countgrid._utils", "countgrid._engine", "countgrid.streaming")


def model_layer(edges):
    """The families' modules, the private engine packages and the private modules at the
    top of the package (``countgrid._base``, ``countgrid.streaming._blocks``, ...)."""
    return sorted(m for m in edges
                  if _in(m, FAMILIES + ENGINE)
                  or (m.count(".") == 1 and m.split(".")[1].startswith("_")))


#: What each private package may import of the package: the rule of each floor.
FLOOR_RULES = {
    "countgrid._utils": ("countgrid._utils", "countgrid.exceptions", "countgrid._kernels"),
    "countgrid._engine": ("countgrid._engine", "countgrid._utils", "countgrid._base",
                          "countgrid.exceptions"),
    "countgrid.streaming": ("countgrid.streaming", "countgrid._utils", "countgrid.io",
                            "countgrid.exceptions"),
}


@pytest.mark.parametrize("package", sorted(FLOOR_RULES))
def test_private_floors_import_only_below(graph, package):
    edges, _ = graph
    members = [m for m in edges if _in(m, (package,))]
    assert len(members) >= 3
    wrong = [f"{m} -> {t}" for m in members for t in edges[m]
             if not _in(t, FLOOR_RULES[package])]
    assert wrong == []


#: The top of src/countgrid/: public modules, the 0.1.0 shims, the ABI-named extension
#: and its .pxd, and a few private modules every floor shares.
TOP_LEVEL = {
    "public": {"__init__.py", "exceptions.py", "io.py", "metrics.py", "retrieval.py",
               "datasets.py", "embeddings.py", "cython_api.pyx", "cython_api.pxd",
               "py.typed"},
    "0.1.0 shims": {"counting_grid.py", "classifiers.py", "label_embedding.py", "plsa.py",
                    "itk_classifier.py", "zip_gtm.py", "histogram_gmm.py"},
    "private": {"_version.py", "_config.py", "_base.py", "_kernels.pyx", "_common.pxd",
                "_cdecl.pxd"},
}


def test_the_top_of_the_package_is_tidy():
    allowed = set().union(*TOP_LEVEL.values())
    sources = {name for name in os.listdir(PACKAGE_DIR)
               if os.path.isfile(os.path.join(PACKAGE_DIR, name))
               and name.endswith((".py", ".pyx", ".pxd", ".typed"))}
    assert sources - allowed == set()
    private_packages = {name for name in os.listdir(PACKAGE_DIR)
                        if name.startswith("_") and name != "__pycache__"
                        and os.path.isdir(os.path.join(PACKAGE_DIR, name))}
    assert private_packages == {"_utils", "_engine"}


def test_the_layers_are_read(graph):
    edges, _ = graph
    layer = model_layer(edges)
    assert {"countgrid.grid._counting_grid", "countgrid.grid._wrappers",
            "countgrid.topics._plsa", "countgrid.rap._rap", "countgrid.gtm._zip_gtm",
            "countgrid.mixture._histogram_gmm", "countgrid.kernels._classifier",
            "countgrid._base", "countgrid.streaming._blocks", "countgrid._engine.em_loop"} <= set(layer)
    assert not any(_in(m, FRONT_DOOR) for m in layer)
    # the front door does stand on the models: the rule below is not vacuous
    assert "countgrid.grid" in edges["countgrid.maps._data"]
    assert "countgrid.grid._display" in edges["countgrid.maps"]


def test_the_models_reach_no_front_door_module(graph):
    """No model module imports the front door, directly or through another module (such
    as countgrid.streaming, which the fits read row chunks with), at module level or
    inside a function."""
    edges, _ = graph
    wrong = []
    for start in model_layer(edges):
        parent, todo = {start: None}, [start]
        while todo:
            module = todo.pop()
            for target in edges.get(module, ()):
                if target in parent:
                    continue
                parent[target] = module
                if _in(target, FRONT_DOOR):
                    path, at = [], target
                    while at is not None:
                        path.append(at)
                        at = parent[at]
                    wrong.append(" -> ".join(reversed(path)))
                else:
                    todo.append(target)
    assert wrong == []


def test_hidden_imports_are_edges(tmp_path):
    """The reader sees imports inside functions and importlib calls, so a lazy import of
    the front door by a model module cannot slip past the rules above."""
    pkg = tmp_path / "countgrid" / "grid"
    pkg.mkdir(parents=True)
    source = pkg / "_lazy.py"
    source.write_text("import importlib\n"
                      "from countgrid import _base\n"
                      "def draw(grid):\n"
                      "    from countgrid.maps import write_html\n"
                      "    importlib.import_module('countgrid.text')\n"
                      "    return __import__('countgrid.cli')\n", encoding="utf-8")
    found = _python_imports(str(source), "countgrid.grid._lazy")
    assert ("countgrid._base", False) in found
    assert ("countgrid.maps", True) in found
    assert ("countgrid.text", True) in found
    assert ("countgrid.cli", True) in found
