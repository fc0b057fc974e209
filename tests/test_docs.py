"""The documentation site covers the public API, the gallery runs every example, and the README table stays short.

These check the sources of the site (docs/, examples/, tutorial/, README.md) without building it; CI builds
the site itself with warnings as errors (.ci/run).
"""
import argparse
import ast
import importlib
import re
from pathlib import Path

import pytest

import certa
from certa.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
API = DOCS / "api" / "index.rst"
SUBPACKAGES = ["certa.engine", "certa.strategies", "certa.search", "certa.stats", "certa.quantification",
               "certa.datasets", "certa.learners"] + sorted(  # and each integration (they import their tool lazily)
    f"certa.integrations.{p.stem}" for p in (ROOT / "certa" / "integrations").glob("[!_]*.py"))
MAX_WORDS = 40  # per README benchmark-table cell


def _api_entries(text: str) -> dict[str, object]:
    """Documented name ("module.name") -> the object it resolves to, from the API page's directives."""
    entries: dict[str, object] = {}
    module = None
    in_autosummary = False
    for line in text.splitlines():
        if m := re.match(r"\.\. currentmodule:: (\S+)", line):
            module, in_autosummary = m.group(1), False
        elif line.startswith(".. autosummary::"):
            in_autosummary = True
        elif m := re.match(r"\.\. autodata:: (\S+)", line):
            in_autosummary = False
            entries[f"{module}.{m.group(1)}"] = _resolve(module, m.group(1))
        elif in_autosummary and (m := re.match(r"   ([A-Za-z_][\w.]*)$", line)):
            entries[f"{module}.{m.group(1)}"] = _resolve(module, m.group(1))
        elif line and not line.startswith(" "):
            in_autosummary = False
    return entries


def _resolve(module: str, dotted: str) -> object:
    obj = importlib.import_module(module)
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def test_api_reference_lists_every_public_name():
    entries = _api_entries(API.read_text(encoding="utf-8"))
    documented = {id(obj) for obj in entries.values()}
    missing = [f"certa.{n}" for n in certa.__all__ if f"certa.{n}" not in entries]
    for name in SUBPACKAGES:
        module = importlib.import_module(name)
        for n in module.__all__:
            obj = getattr(module, n)
            # a name documented under another path (certa.Selection for certa.engine.Selection) counts, but a
            # constant (a tuple) must be documented under its own module: equal tuples are not the same name
            if f"{name}.{n}" not in entries and (isinstance(obj, (tuple, str, int, float)) or id(obj) not in documented):
                missing.append(f"{name}.{n}")
    assert not missing, f"public names missing from docs/api/index.rst (add them to a section there): {missing}"


def _gallery_conf() -> dict:
    """``sphinx_gallery_conf`` of docs/conf.py, read without importing Sphinx."""
    tree = ast.parse((DOCS / "conf.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "sphinx_gallery_conf" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("docs/conf.py defines no sphinx_gallery_conf")


def _gallery_scripts() -> list[Path]:
    conf = _gallery_conf()
    return [p for d in conf["examples_dirs"] for p in sorted((DOCS / d).resolve().glob("*.py"))]


def test_every_example_is_in_the_gallery_and_runs_at_build_time():
    conf = _gallery_conf()
    dirs = {(DOCS / d).resolve() for d in conf["examples_dirs"]}
    assert {ROOT / "examples", ROOT / "tutorial"} <= dirs
    assert conf.get("plot_gallery", "True") in (True, "True") and conf["abort_on_example_error"] is True
    scripts = _gallery_scripts()
    examples = [p for p in scripts if p.parent == ROOT / "examples"]
    assert len(examples) >= 6
    for path in scripts:
        # sphinx-gallery runs a script only if its path matches filename_pattern, and lists it only with a title
        assert re.search(conf["filename_pattern"], "/" + path.name), f"{path.name} would be shown but not run"
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        assert doc, f"{path.name} has no docstring (sphinx-gallery needs one with a title)"
        title, underline = doc.splitlines()[:2]
        assert title.strip() and set(underline.strip()) == {"="} and len(underline.strip()) >= len(title.strip()), \
            f"{path.name}: the docstring must start with a title underlined with '='"
    for d in dirs:
        assert (d / "README.rst").exists() or (d / "README.txt").exists(), f"{d} has no gallery header"


@pytest.mark.parametrize("path", _gallery_scripts(), ids=lambda p: p.name)
def test_examples_use_bundled_data_only(path):
    code = path.read_text(encoding="utf-8")
    for pattern in (r"\bfetch_\w+\(", r"urlopen|urlretrieve|requests\.get|https?://", r"load_dataset\("):
        assert not re.search(pattern, code), f"{path.name} downloads (matches {pattern!r})"


def test_cli_page_shows_every_command():
    page = (DOCS / "user_guide" / "cli.rst").read_text(encoding="utf-8")
    shown = set(re.findall(r"^\.\. certa-cli-help:: (\S+)$", page, re.MULTILINE))
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) <= shown, f"commands without a section in cli.rst: {set(sub.choices) - shown}"


def _readme_table() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Benchmarks", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    assert len(rows) >= 3, "the README has no benchmark table"
    return [[c.strip() for c in re.split(r"(?<!\\)\|", row.strip()[1:-1])] for row in rows[2:]]


def _slug(heading: str) -> str:
    """GitHub's and myst's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_readme_benchmark_table_has_short_rows_linking_to_their_detail():
    detail = (DOCS / "benchmarks" / "index.md").read_text(encoding="utf-8")
    anchors = {_slug(h) for h in re.findall(r"^#+ (.+)$", detail, re.MULTILINE)}
    for cells in _readme_table():
        for cell in cells:
            n = len(re.sub(r"\]\([^)]*\)", "]", cell).split())  # a link's target is not words
            assert n <= MAX_WORDS, f"README benchmark cell of {n} words (at most {MAX_WORDS}): {cell[:80]}..."
        links = re.findall(r"\]\(([^)#]+)(?:#([^)]+))?\)", cells[-1])
        assert links, f"README benchmark row without a link to its detail: {cells[0]}"
        for target, anchor in links:
            assert (ROOT / target).exists(), f"README links to a missing file: {target}"
            if target == "docs/benchmarks/index.md" and anchor:
                assert anchor in anchors, f"README links to a missing section: #{anchor}"


def test_py_typed_is_package_data():
    assert (ROOT / "certa" / "py.typed").exists()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^"certa" = \[[^\]]*"py\.typed"', pyproject, re.MULTILINE)
