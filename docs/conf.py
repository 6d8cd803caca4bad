"""Sphinx configuration of swath's documentation.

Sphinx, as Dask, xarray and Zarr build theirs: numpydoc reads the docstrings (the
package writes numpy-style ones), sphinx-click generates the command-line reference from
the click commands, and myst-parser reads the pages, which are Markdown so that they
read the same on GitHub. The examples in the pages run in the tests
(tests/test_docs.py), not here: the build only renders.
"""

from __future__ import annotations

import swath

project = "swath"
author = "the swath developers"
copyright = "the swath developers"
version = release = swath.__version__

extensions = [
    "sphinx.ext.autodoc",
    "numpydoc",
    "sphinx_click",
    "myst_parser",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
# options stay as typed: no "--top-k" turned into an en dash, no curly quotes in commands
smartquotes = False
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# the API reference: signatures as written, members in source order, no autosummary
# tables of class members (the classes' own docstrings list what matters)
autodoc_member_order = "bysource"
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_xref_param_type = False

# every cross-reference must resolve (with -W, a typo fails the build), but for the
# internal modules and helpers the docstrings name, which the reference leaves out
nitpicky = True
nitpick_ignore = [
    ("py:data", "FORMATS"),
    ("py:func", "blast_max_evalue"),
    ("py:func", "iter_records"),
    ("py:func", "swath.statistics.search_evalue"),
    ("py:meth", "from_file"),
    ("py:class", "swath.results.alignments.AlignedRows"),
    ("py:mod", "swath.results.alignments"),
    ("py:mod", "swath.results.uclust"),
]

html_theme = "pydata_sphinx_theme"
html_title = f"swath {version}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
