"""Sphinx configuration of certa's documentation site.

Build: ``python -m sphinx -W --keep-going -b html docs docs/_build/html`` (needs ``pip install ".[docs]"``).
The gallery scripts in ``examples/`` run during the build; their output and figures go into the pages.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

# The site documents the checkout it is built from, even when an older certa is installed.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import certa

project = "certa"
author = "the certa developers"
copyright = "the certa developers (Apache-2.0)"
release = certa.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "img/README*"]

# API reference: one page per public name, generated from the docstrings at build time.
autosummary_generate = True
autodoc_default_options = {"members": True}
autodoc_inherit_docstrings = False  # no stdlib / scikit-learn docstrings (their own markup) on overrides
autodoc_typehints = "none"  # the numpydoc "Parameters" sections already give the types
numpydoc_show_class_members = False  # members are listed by the class template instead
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# The design and benchmark write-ups in docs/*.md are Markdown (GitHub renders them too).
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3
# Those pages link to files outside the site (benchmarks/results/*.md, scripts) that GitHub shows;
# Sphinx cannot resolve them, which is not an error of the site. Their headings may skip a level
# (a generated "#####" table title under "###"), which GitHub renders as written.
suppress_warnings = ["myst.xref_missing", "myst.header"]

# The tutorial and the examples gallery: every tutorial/plot_*.py and examples/plot_*.py runs at build time
# (bundled data only, no downloads); their pages are generated into docs/tutorial and docs/auto_examples.
sphinx_gallery_conf = {
    "examples_dirs": ["../tutorial", "../examples"],
    "gallery_dirs": ["tutorial", "auto_examples"],
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "plot_gallery": "True",
    "show_memory": False,
    "write_computation_times": False,  # (else docs/sg_execution_times.rst joins the glob toctree of index.rst)
}
os.environ.setdefault("MPLBACKEND", "Agg")

html_theme = "pydata_sphinx_theme"
html_title = f"certa {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_show_sourcelink = False


def _skip_member(app, what, name, obj, skip, options):
    """Document what certa defines (also inherited from certa's private bases, e.g. ``fit``), not what
    scikit-learn or Python define (``get_params``, ``with_traceback``), nor the generated ``set_*_request``."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    if what == "class":
        fn = getattr(obj, "fget", obj)
        module = getattr(fn, "__module__", None) or getattr(getattr(fn, "__objclass__", None), "__module__", None)
        if module is not None and not module.startswith("certa"):
            return True
    return None


class CliHelp(SphinxDirective):
    """``.. certa-cli-help:: [COMMAND]``: the ``--help`` text of ``certa`` or one of its commands, as argparse prints it."""

    optional_arguments = 1

    def run(self) -> list[nodes.Node]:
        from certa.cli import build_parser

        parser = build_parser()
        if self.arguments:
            commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
            parser = commands[self.arguments[0]]
        old = os.environ.get("COLUMNS")
        os.environ["COLUMNS"] = "100"  # argparse wraps at the terminal width: fix it for the page
        try:
            text = parser.format_help()
        finally:
            if old is None:
                del os.environ["COLUMNS"]
            else:
                os.environ["COLUMNS"] = old
        return [nodes.literal_block(text, text, language="text")]


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
    app.add_directive("certa-cli-help", CliHelp)
