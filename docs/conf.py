"""Sphinx configuration of the countgrid documentation (built by tools/build_docs.sh).

The site is built offline with warnings as errors: no intersphinx (CI has no network), no
math renderer (the pages write equations as plain text), no CDN script (the theme's assets
are bundled; tests/test_docs.py checks the built HTML).
"""
import os
import sys
import warnings

import countgrid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))

project = "countgrid"
author = "countgrid developers"
copyright = "countgrid developers"
release = countgrid.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "cli_reference",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "_extra", "**.ipynb_checkpoints", "gallery/*.md5", "gallery/*.json",
                    "gallery/*.zip", "gallery/*.pickle"]

# --- Markdown pages (the existing docs/*.md, linked from the README and the code) -------
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 4          # [text](page.md#a-section) links, as on GitHub

# --- API reference ----------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = True
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_attributes_as_param_list = True
# Docstring validation of every public name the reference shows: the parameters listed
# and described exactly (PR01 missing, PR02 unknown, PR10 "a:b" without space), a
# Returns section where a function returns something (RT01), and no unknown or misplaced
# section (GL06, GL07).  Summaries and punctuation are not checked (SS0x, PR08/PR09,
# RT02): the house style writes complete sentences that numpydoc's heuristics misread.
numpydoc_validation_checks = {"PR01", "PR02", "PR10", "RT01", "GL06", "GL07"}
numpydoc_validation_exclude = {
    # The scikit-learn protocol (get_params/set_params of the shared base class): its
    # parameters are the protocol's.
    r"\.set_params$", r"\.get_params$", r"\.__init__$",
    # Named tuples: their fields are listed under Attributes, not Parameters.
    r"^countgrid\.datasets\.(Text)?Dataset$", r"^countgrid\.metrics\.RetrievalCurve$",
    # The methods of the scikit-learn protocol (fit, predict, transform, score, ...) whose
    # only parameters are the protocol's X (and y) and whose one-line docstring says what
    # they return; the class docstring documents the model.
    r"\.(fit|predict|predict_proba|predict_log_proba|decision_function|transform|score"
    r"|score_samples)$",
}

# --- Gallery: executed at build time on the bundled data --------------------------------
sphinx_gallery_conf = {
    "examples_dirs": os.path.join(HERE, "..", "examples"),
    "gallery_dirs": "gallery",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "reference_url": {"countgrid": None},
    "backreferences_dir": None,
    "show_memory": False,
    "plot_gallery": "True",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "show_signature": False,
    "capture_repr": ("_repr_html_", "__repr__"),
    # the computation-times page loads DataTables from a CDN: not written
    "write_computation_times": False,
}
os.environ.setdefault("MPLBACKEND", "Agg")
# Files the examples write for the site (the HTML map): copied to the output's root.
EXTRA = os.path.join(HERE, "_extra")
os.makedirs(EXTRA, exist_ok=True)
os.environ["COUNTGRID_DOCS_EXTRA"] = EXTRA
# The dated corpus of plot_09 (load_python_changelog) is a dataset of the repository's
# data/ folder, not of the installed package: found here whatever the installation.
os.environ.setdefault("COUNTGRID_DATA_DIR", os.path.join(HERE, os.pardir, "data"))
html_extra_path = [EXTRA]
warnings.filterwarnings("ignore", category=UserWarning,
                        message="Matplotlib is currently using agg")

# --- HTML ---------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"countgrid {release}"
html_static_path = []   # no static files of our own: the theme brings its assets
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 7,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
    # nothing fetched from the network: no version switcher, no analytics, no icon links
    "icon_links": [],
}
html_sidebars = {"quickstart": [], "choosing": [], "changelog": [], "results": []}
html_show_sourcelink = False
html_copy_source = False


# --- Rendering helpers ------------------------------------------------------------------
import re  # noqa: E402

_SHAPE = re.compile(r"shape \(([^)]*)\)")


def _escape_shapes(app, what, name, obj, options, lines):
    """``ndarray of shape (n_iter_ + 1,)``: a trailing underscore inside a shape is text,
    not a reStructuredText reference."""
    for i, line in enumerate(lines):
        if "shape (" in line:
            lines[i] = _SHAPE.sub(
                lambda m: "shape (" + re.sub(r"(\w)_(?=[\s,+*)-]|$)", r"\1\\_", m.group(1)) + ")",
                line)


_OUTSIDE = re.compile(r"\[([^\]]+)\]\(\.\./([^)#]+)(#[^)]*)?\)")


def _outside_links(app, docname, source):
    """Links from a docs page to a file outside docs/ (experiments/README.md, ...) name
    the file in the source repository: the site does not contain it."""
    source[0] = _OUTSIDE.sub(r"\1 (`\2` in the source repository)", source[0])


_CANONICAL = {}


def _canonical(env):
    """id(object) -> the name under which the reference documents it."""
    if not _CANONICAL:
        for name in list(env.domains["py"].objects):
            obj = _lookup(name)
            if obj is not None and not isinstance(obj, (int, float, str, tuple)):
                _CANONICAL.setdefault(id(obj), name)
    return _CANONICAL


def _lookup(dotted):
    """The object a dotted name denotes (the longest importable module, then attributes),
    or None."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def _resolve_alias(app, env, node, contnode):
    """``countgrid.CountingGrid`` (or ``CountingGrid`` inside ``countgrid``) is the object
    the reference documents as ``countgrid.grid.CountingGrid``: link there.  A fitted
    attribute (``stream_seed_``) is described in its class's Attributes section: plain text."""
    if node.get("refdomain") != "py":
        return None
    from sphinx.util.nodes import make_refnode

    target = node["reftarget"].lstrip("~.")
    modules = [node.get("py:module") or "", "countgrid"]
    if node.get("py:class"):
        modules.insert(0, f"{node.get('py:module')}.{node.get('py:class')}")
    for base in modules + [""]:
        full = f"{base}.{target}" if base else target
        obj = _lookup(full)
        if obj is None:
            continue
        name = _canonical(env).get(id(obj))
        if name:
            entry = env.domains["py"].objects[name]
            return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id,
                                contnode, name)
    if node.get("reftype") == "attr" and target.endswith("_"):
        return contnode
    return None


def setup(app):
    app.connect("autodoc-process-docstring", _escape_shapes)
    app.connect("source-read", _outside_links)
    app.connect("missing-reference", _resolve_alias)
