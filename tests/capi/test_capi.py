"""The installed C and Cython API: the public header, the capsule table (countgrid_api.h
and the capsule of countgrid._kernels), the Cython declarations (cython_api.pxd) and the
static library declare and hold the same kernels, all generated from csrc/signatures.txt
by csrc/gen_api.py (checked fresh here when the source is at hand).  The downstream builds
are in test_downstream_*.py."""
import ctypes
import io
import os
import re

import pytest

import countgrid
from countgrid import _kernels as K

INCLUDE = countgrid.get_include()
HEADER = os.path.join(INCLUDE, "countgrid", "countgrid.h")
API_HEADER = os.path.join(INCLUDE, "countgrid", "countgrid_api.h")
PXD = os.path.join(os.path.dirname(countgrid.__file__), "cython_api.pxd")


def read(path):
    with open(path) as fh:
        return fh.read()


def strip_comments(text):
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def param_types(params):
    """'const double *in, int64_t ld' -> ['const double*', 'int64_t']"""
    out = []
    for p in params.split(","):
        p = " ".join(p.split())
        if not p or p == "void":
            continue
        p = re.sub(r"\s*\*\s*", "*", p)
        m = re.match(r"^(.*?[\s*])(\w+)$", p)
        out.append(m.group(1).strip() if m else p)
    return out


def header_functions():
    """name -> (return type, [parameter types]) of countgrid.h, in order."""
    text = strip_comments(read(HEADER))
    found = re.findall(r"^(int|const char \*)\s*(cg_\w+)\(([^;]*?)\);", text, flags=re.M)
    return {name: (ret.replace(" ", ""), param_types(params)) for ret, name, params in found}


def table_fields():
    text = strip_comments(read(API_HEADER))
    body = re.search(r"typedef struct cg_api_table \{(.*?)\} cg_api_table;", text, re.S).group(1)
    header = re.findall(r"^\s*int (\w+);", body, flags=re.M)
    funcs = re.findall(r"(int|const char \*)\s*\(\*(\w+)\)\(([^;]*?)\);", body)
    return header, {name: (ret.replace(" ", ""), param_types(params))
                    for ret, name, params in funcs}


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def abi1_aliases():
    """ABI 1 name -> its ABI 2 function, from the #defines of countgrid.h."""
    return dict(re.findall(r"^#define (cg_\w+) (cg_\w+)$", read(HEADER), flags=re.M))


def test_header_declares_the_kernels():
    funcs = header_functions()
    assert len(funcs) == 45
    assert {"cg_grid_squarem_f32", "cg_grid_squarem_f64"} <= set(funcs)
    assert {"cg_grid_mstep_anchored_f32", "cg_grid_mstep_anchored_f64"} <= set(funcs)
    assert {f"cg_grid_estep_search_csr_{f}_{i}" for f in ("f32", "f64")
            for i in ("i32", "i64")} <= set(funcs)
    assert list(funcs)[:4] == ["cg_openmp_enabled", "cg_max_threads", "cg_simd_name",
                               "cg_grid_window_sum_f32"]
    assert funcs["cg_simd_name"] == ("constchar*", [])
    assert funcs["cg_grid_window_sum_f64"][1][6] == "const double*"
    # one name order: cg_<family>_<operation>_<f32|f64>[_<i32|i64>]
    for name in funcs:
        if name not in ("cg_openmp_enabled", "cg_max_threads", "cg_simd_name"):
            assert re.fullmatch(r"cg_(grid|itk|plsa)_[a-z_]+?_f(32|64)(_i(32|64))?", name), name


def test_abi1_names_are_aliases():
    aliases = abi1_aliases()
    funcs = header_functions()
    assert len(aliases) == 20
    assert aliases["cg_window_sum_f64"] == "cg_grid_window_sum_f64"
    assert aliases["cg_estep_csr_f32_i32"] == "cg_grid_estep_csr_f32_i32"
    assert aliases["cg_jt_gram_csr_f64_i64"] == "cg_itk_jt_gram_csr_f64_i64"
    assert set(aliases.values()) <= set(funcs)
    assert int(re.search(r"#define CG_ABI_VERSION (\d+)", read(HEADER)).group(1)) == 2


def test_generated_files_are_fresh():
    """The installed header, capsule table and Cython API are what csrc/gen_api.py makes
    of csrc/signatures.txt today (skipped without the source tree)."""
    gen = os.path.join(ROOT, "csrc", "gen_api.py")
    needed = [gen, os.path.join(ROOT, "csrc", "signatures.txt"),
              os.path.join(ROOT, "src", "countgrid", "_version.py")]
    if not all(os.path.isfile(path) for path in needed):
        pytest.skip("the source tree is not available (tests of an installed copy)")
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_api", gen)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = module.outputs(ROOT)
    installed = {"src/countgrid/include/countgrid/countgrid.h": HEADER,
                 "src/countgrid/include/countgrid/countgrid_api.h": API_HEADER,
                 "src/countgrid/cython_api.pxd": PXD}
    for rel, path in installed.items():
        assert read(path) == expected[rel], f"{path} is stale: rebuild (pip install .)"


def test_version_macros_match_package():
    text = read(HEADER)
    macros = dict(re.findall(r"#define (CG_\w+) (\S+)", text))
    version = ".".join(macros[f"CG_VERSION_{k}"] for k in ("MAJOR", "MINOR", "PATCH"))
    assert countgrid.__version__.startswith(version)
    assert macros["CG_VERSION_STRING"] == f'"{version}"'
    assert int(macros["CG_ABI_VERSION"]) == K.abi_version
    assert K.version_info == tuple(int(x) for x in version.split("."))


def test_capsule_table_mirrors_header():
    """One function pointer per countgrid.h function, same order, same types;
    the frozen leading fields first."""
    header, funcs = table_fields()
    assert header == ["abi_version", "size", "version_major", "version_minor",
                      "version_patch"]
    expected = {name[3:]: sig for name, sig in header_functions().items()}
    assert list(funcs) == list(expected)
    assert funcs == expected


def test_api_names_macros_cover_every_function():
    text = read(API_HEADER)
    macros = dict(re.findall(r"#define (cg_\w+) \(cg_api->(\w+)\)", text))
    assert macros == {name: name[3:] for name in header_functions()}


class _Header(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int) for name in
                ("abi_version", "size", "version_major", "version_minor", "version_patch")]


def capsule_table():
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    n = len(header_functions())

    class Table(ctypes.Structure):
        _fields_ = [("head", _Header), ("funcs", ctypes.c_void_p * n)]

    return Table.from_address(get(K._C_API, b"countgrid._C_API"))


def test_capsule_contents():
    assert type(K._C_API).__name__ == "PyCapsule"
    assert "countgrid._C_API" in repr(K._C_API)
    t = capsule_table()
    assert t.head.abi_version == K.abi_version
    assert t.head.size == ctypes.sizeof(t)
    assert (t.head.version_major, t.head.version_minor, t.head.version_patch) == K.version_info
    assert all(t.funcs), "a NULL function pointer in the capsule table"
    assert len(set(t.funcs)) == len(t.funcs)


def test_capsule_points_to_the_kernels():
    """Each pointer is the exported kernel of the same name, and calling one
    through the table works."""
    try:
        lib = ctypes.CDLL(K.__file__)
        addrs = [ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
                 for name in header_functions()]
    except (OSError, AttributeError):
        pytest.skip("kernel symbols are not exported by the extension on this platform")
    t = capsule_table()
    assert list(t.funcs) == addrs
    index = list(header_functions()).index("cg_openmp_enabled")
    openmp_enabled = ctypes.CFUNCTYPE(ctypes.c_int)(t.funcs[index])
    assert bool(openmp_enabled()) is K.openmp_enabled()


def test_cython_api_declarations_mirror_header():
    text = read(PXD)
    decls = re.findall(r"^cdef (int|const char \*)\s*(\w+)\(([^)]*)\) noexcept nogil$",
                       text, flags=re.M)
    got = {name: (ret.replace(" ", ""), param_types(params)) for ret, name, params in decls}
    assert got.pop("abi_version") == ("int", [])
    funcs = header_functions()
    expected = {name[3:]: sig for name, sig in funcs.items()}
    expected.update({alias[3:]: funcs[name] for alias, name in abi1_aliases().items()})
    assert got == expected


def test_cython_api_constants_match_header():
    text = read(PXD)
    enum = dict(re.findall(r"^    (CG_\w+) = (-?\d+)", text, flags=re.M))
    header = read(HEADER)
    for name, value in enum.items():
        m = (re.search(rf"#define {name} (-?\d+)", header)
             or re.search(rf"\b{name} = (-?\d+)", header))
        assert m is not None, name
        assert int(m.group(1)) == int(value), name
    assert {"CG_OK", "CG_ERR_ARGUMENT", "CG_ERR_ALLOC", "CG_ERR_INDEX", "CG_ABI_VERSION",
            "CG_MAX_DIM"} <= set(enum)


def test_cython_api_exports_every_function():
    import countgrid.cython_api as capi

    expected = {name[3:] for name in list(header_functions()) + list(abi1_aliases())}
    assert set(capi.__pyx_capi__) == expected | {"abi_version"}


def test_public_header_files_shipped():
    for name in ("countgrid.h", "countgrid_api.h"):
        assert os.path.isfile(os.path.join(INCLUDE, "countgrid", name))
    assert os.path.isfile(PXD)


def test_static_library_present():
    libdir = countgrid.get_library_dir()
    assert os.path.isabs(libdir)
    names = os.listdir(libdir) if os.path.isdir(libdir) else []
    assert {"libcountgrid.a", "countgrid.lib"} & set(names), (
        f"no static library in {libdir}: {names} (rebuild or reinstall)")
    info = countgrid.show_config(file=io.StringIO())
    assert info["static_library"] and os.path.dirname(info["static_library"]) == libdir
    assert info["link_args"] == countgrid.get_link_args()


def test_static_library_holds_the_kernels():
    path = os.path.join(countgrid.get_library_dir(), "libcountgrid.a")
    if not os.path.isfile(path):
        pytest.skip("not a Unix archive")
    data = open(path, "rb").read()
    assert data.startswith(b"!<arch>\n")
    for name in header_functions():
        assert name.encode() + b"\0" in data, name


def test_link_args():
    args = countgrid.get_link_args()
    assert isinstance(args, list) and all(isinstance(a, str) for a in args)
    if os.name == "posix" and not K.openmp_enabled():
        assert not any("openmp" in a or a == "-lomp" for a in args)
    if os.name == "posix" and K.openmp_enabled():
        assert "-fopenmp" in args or "-lomp" in args


def test_docs_show_the_tested_setup_lines():
    """docs/c_api.md gives the downstream setup.py lines the downstream tests
    build with (module name aside)."""
    docs = os.path.join(ROOT, "docs", "c_api.md")
    if not os.path.isfile(docs):
        pytest.skip("docs/ not available (tests run from an installed copy)")
    from _downstream import SETUP_CAPSULE, SETUP_CYTHON, SETUP_STATIC

    def norm(text):
        return " ".join(text.split())

    text = norm(read(docs))
    for setup_py, name in [(SETUP_CYTHON, "cg_downstream_cy"),
                           (SETUP_CAPSULE, "cg_downstream_capsule"),
                           (SETUP_STATIC, "cg_downstream_static")]:
        assert norm(setup_py.replace(name, "mymod")) in text, name
