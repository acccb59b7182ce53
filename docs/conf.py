"""Sphinx configuration of the mpvi documentation (``tox -e docs``; README: the docs command).

The site is built with warnings as errors (``-W``).  Tutorials are MyST notebooks
(``tutorials/*.md``) executed by myst-nb at build time; their outputs are cached in
``_build/.jupyter_cache`` (jupyter-cache) and re-executed only when a cell changes.  The
catalogues under ``reference/generated/`` are written at every build from mpvi's
registries (``_ext/mpvi_catalogues.py``); mathematics is rendered to MathML at build time
(``_ext/mpvi_mathml.py``), so the pages need neither JavaScript nor a network.
"""
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import mpvi  # noqa: E402

project = "mpvi"
author = "the mpvi developers"
copyright = "2026, the mpvi developers"
release = version = mpvi.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_nb",
    "mpvi_mathml",
    "mpvi_catalogues",
]

exclude_patterns = ["_build", "**.ipynb_checkpoints", "report-overview.png"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}
root_doc = "index"

# furo: a maintained, self-contained theme (its CSS and JS ship with it; no web fonts or
# CDN), readable at a glance and with a light and a dark scheme.
html_theme = "furo"
html_title = f"mpvi {release}"
html_static_path = ["_static"]
# _static/mpvi.css: long lines and table cells wrap, so that nothing is cut at 1280 px
html_css_files = ["mpvi.css"]
html_last_updated_fmt = None
html_copy_source = False
html_show_sourcelink = False
html_math_renderer = "mathml"

# autodoc + numpydoc: the API pages come from the docstrings
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_typehints = "none"            # numpydoc's Parameters sections carry the types
autodoc_member_order = "bysource"
autosummary_generate = False
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# MyST and myst-nb
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = os.environ.get("MPVI_DOCS_EXECUTE", "cache")
nb_execution_cache_path = str(HERE / "_build" / ".jupyter_cache")
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True
nb_kernel_rgx_aliases = {".*": "python3"}

nitpicky = False
suppress_warnings = ["myst.header"]
