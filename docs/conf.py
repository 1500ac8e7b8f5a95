"""Sphinx configuration of the dpbounds documentation.

Build (warnings are errors):  python -m sphinx -W --keep-going -b html docs docs/_build/html
The pages are Markdown (MyST); the API reference comes from the numpydoc docstrings; the
ufunc list and the command-line help are generated at build time from the package itself
(``docs/_ext/dpbounds_docs.py``), so they cannot drift from the code.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
# Document the checkout's in-place build when it has one (python setup.py build_ext --inplace);
# otherwise the installed package (pip install ".[docs]").  A checkout without compiled modules
# must not shadow the installed package: its dpbounds/__init__ would fail on the missing _ufuncs.
_SRC = HERE.parent / "src"
if any((_SRC / "dpbounds").glob("_ufuncs.*.so")) or any((_SRC / "dpbounds").glob("_ufuncs.*.pyd")):
    sys.path.insert(0, str(_SRC))

import dpbounds  # noqa: E402  (after the path set-up above)

project = "dpbounds"
author = "the dpbounds developers"
copyright = "the dpbounds developers"
version = release = dpbounds.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "dpbounds_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# MyST: $...$ and $$...$$ math, ::: fences, anchors for the section links between pages.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
myst_dmath_double_inline = True

# The API reference: one page per public name, numpydoc sections.
autosummary_generate = False
autosummary_imported_members = True
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_typehints = "none"        # the signatures and the Parameters sections already say it
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()

intersphinx_mapping: dict[str, tuple[str, None]] = {}

# MathJax served with the site (readable offline, and in the headless-browser test) when
# sphinx-mathjax-offline is installed (the docs extra installs it); otherwise from its CDN.
if importlib.util.find_spec("sphinx-mathjax-offline") is not None:
    extensions.append("sphinx-mathjax-offline")

html_theme = "furo"
html_title = f"dpbounds {release}"
# docs/_static/dpbounds.css: wide tables and long code lines wrap inside the content column
html_static_path = ["_static"]
html_css_files = ["dpbounds.css"]
html_show_sourcelink = False

nitpicky = False
