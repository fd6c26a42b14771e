"""Sphinx configuration of the skdptune documentation.

Build (from the repository root): ``python -m sphinx -W -b html docs docs/_build/html``.
The API reference documents the package in this checkout (the repository root comes first on
``sys.path``), and the gallery runs every script in ``examples/`` with the same package.
"""

import inspect
import os
import sys
from pathlib import Path

# Small diffprivlib fits run several times slower with threaded BLAS on a few shared cores
# (scipy's L-BFGS-B most of all), and the gallery's examples run in this process: one thread.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import matplotlib  # noqa: E402
import scipy.optimize  # noqa: E402, F401  (loads scipy's BLAS before the limit below)
import sklearn.linear_model  # noqa: E402, F401
from threadpoolctl import threadpool_limits  # noqa: E402

matplotlib.use("Agg")
threadpool_limits(1)  # BLAS libraries loaded before this file ran

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS))  # _gallery_order
# Gallery examples run inside this process; their joblib workers (if any) import skdptune too.
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])

import skdptune  # noqa: E402
from skdptune import PrivateGridSearchCV, PrivateRandomizedSearchCV  # noqa: E402

project = "skdptune"
author = "the skdptune developers"
copyright = "the skdptune developers"
release = version = skdptune.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "**/.ipynb_checkpoints", "README.md"]
default_role = "literal"

# -- API reference ----------------------------------------------------------------------------
autosummary_generate = True
# scikit-learn generates set_{method}_request on every estimator whose methods take
# sample_weight (Ridge's fit and score, GaussianNB's partial_fit); they are scikit-learn's,
# documented there.
autodoc_default_options = {"inherited-members": False,
                           "exclude-members": "set_fit_request,set_score_request,"
                                              "set_partial_fit_request"}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True

# -- Markdown pages (the user guide's faults, audit, benchmark and differences pages) --------
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# -- Gallery ----------------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    # Run every script, not only plot_*.py (the quickstart is one of them).
    "filename_pattern": r".*\.py$",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "_gallery_order.GalleryOrder",
    "abort_on_example_error": True,
    "image_scrapers": ("matplotlib",),
    "download_all_examples": False,
    "show_memory": False,
    "remove_config_comments": True,
    # "Examples using X" on the API pages.
    "doc_module": ("skdptune",),
    "backreferences_dir": "generated/backreferences",
    "reference_url": {"skdptune": None},
}

# -- HTML -------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"skdptune {version}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_prev_next": False,
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"index": [], "install": []}
html_static_path = []
html_show_sourcelink = False


# -- Values read from the objects at build time -----------------------------------------------
def _default(cls, name):
    return inspect.signature(cls).parameters[name].default


_DEFAULTS = {
    "grid_selector": _default(PrivateGridSearchCV, "selector"),
    "grid_n_partitions": _default(PrivateGridSearchCV, "n_partitions"),
    "grid_selection_share": _default(PrivateGridSearchCV, "selection_share"),
    "grid_score_share": _default(PrivateGridSearchCV, "score_share"),
    "grid_partition_scaling": _default(PrivateGridSearchCV, "partition_scaling"),
    "random_distribution": _default(PrivateRandomizedSearchCV, "distribution"),
}
rst_epilog = "\n".join(
    f".. |default_{name}| replace:: ``{value!r}``" for name, value in _DEFAULTS.items())


def _write_generated_tables(app):
    """Tables of the partition scaling rules and the refit gate's allowlist, from the code."""
    from skdptune.partition_scaling import RULES
    from skdptune.gate import ALLOWED

    out = DOCS / "generated"
    out.mkdir(exist_ok=True)

    def row(*cells):
        return "   * - " + "\n     - ".join(cells)

    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 30 15 15 40", "",
             row("class", "parameter", "scaling", "why")]
    # The library's own entries: a gallery example may have registered a class of its own.
    built_in = {"diffprivlib", "sklearn", "skdptune"}
    for cls, rules in RULES.items():
        if cls.__module__.split(".")[0] not in built_in:
            continue
        for name, rule in rules.items():
            lines.append(row(f"``{cls.__module__.split('.')[0]}.{cls.__name__}``",
                             f"``{name}``", f"``{rule.scaling}``", rule.why))
    _write_if_changed(out / "partition_scaling_rules.rst.inc", "\n".join(lines) + "\n")

    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 30 12 20 38", "",
             row("class", "kind", "must be declared", "why it may be released")]
    for cls, rule in ALLOWED.items():
        if cls.__module__.split(".")[0] not in built_in:
            continue
        declared = ", ".join(f"``{name}``" for name in rule.declared) or "-"
        lines.append(row(f"``{cls.__module__.split('.')[0]}.{cls.__name__}``",
                         f"``{rule.kind}``", declared, rule.why))
    _write_if_changed(out / "gate_allowlist.rst.inc", "\n".join(lines) + "\n")


def _write_if_changed(path, text):
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _doc_comment_of_re_exported_data(app, what, name, obj, options, lines):
    """A public module re-exports its constants from a private one (``skdptune.gate.ALLOWED``
    from ``skdptune/_gate.py``), where their ``#:`` comment is: show that comment."""
    if what != "data" or not name.startswith("skdptune."):
        return
    from sphinx.pycode import ModuleAnalyzer

    public, attribute = name.rsplit(".", 1)
    if ("", attribute) in ModuleAnalyzer.for_module(public).find_attr_docs():
        return  # documented where it is defined
    package, _, module = public.rpartition(".")
    comment = ModuleAnalyzer.for_module(f"{package}._{module}").find_attr_docs().get(
        ("", attribute))
    if comment is None:
        raise ValueError(f"{name} has no #: comment in {package}._{module}")
    lines[:] = list(comment)


def setup(app):
    app.connect("builder-inited", _write_generated_tables)
    app.connect("autodoc-process-docstring", _doc_comment_of_re_exported_data)
