"""The layout shows the architecture (issue 27): rooms with one job each, imports that go one way.

Checked on the source, so that a change that breaks the layering fails here and not in review:
every ``from``/``import`` of a certa module, at module level or inside a function, counts.
"""
from __future__ import annotations

import ast
import pathlib
from collections import defaultdict

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "certa"

#: Each room's layer: a room may import only rooms of a lower layer (and itself). The same order
#: is drawn in docs/design.md.
LAYER = {
    "engine": 0, "stats": 0, "datasets": 0, "learners": 0,
    "strategies": 1, "quantification": 1,
    "planning": 2, "analysis": 2,
    "reporting": 3,
    "search": 4,
    "integrations": 5, "demo": 5, "userfiles": 5,
    "__init__": 6,   # the public names (certa.X)
    "cli": 7,
    "__main__": 8,
}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, pathlib.Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py")}


def _imports() -> dict[str, set[str]]:
    """Module -> the certa modules it imports (``from . import x`` counts ``x`` when it is a module)."""
    mods = _modules()
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    hit = full if full in mods else target
                    if hit in mods and hit != name:
                        edges[name].add(hit)
            elif isinstance(node, ast.Import):
                edges[name].update(a.name for a in node.names if a.name in mods and a.name != name)
    return edges


def _room(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def test_at_most_six_top_level_modules_beside_the_packages():
    top = sorted(p.name for p in ROOT.glob("*.py"))
    assert len(top) <= 6, top


def test_every_room_is_in_the_layer_table_and_says_what_it_is_for():
    rooms = {p.parent.name for p in ROOT.glob("*/__init__.py")} | {p.stem for p in ROOT.glob("*.py")}
    assert rooms <= set(LAYER), sorted(rooms - set(LAYER))
    for init in ROOT.glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and "import" in doc.lower(), f"{init.parent.name}/__init__.py: say what the room is for and may import"


def test_imports_go_down_the_layers_only():
    upward = sorted(f"{a} -> {b}" for a, bs in _imports().items() for b in bs
                    if _room(a) != _room(b) and LAYER[_room(b)] >= LAYER[_room(a)])
    assert upward == []


def test_no_import_cycle_between_modules():
    edges = _imports()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:   # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in _modules():
        if v not in index:
            visit(v)
    assert cycles == []


@pytest.mark.parametrize("path", sorted(ROOT.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_over_700_lines(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 700


def test_the_checks_see_a_known_import():
    # guards the parser itself: the fronts import the engine's runner, the CLI imports the fronts
    edges = _imports()
    assert "certa.engine.runner" in edges["certa.search.bandit"]
    assert any(_room(b) == "search" for b in edges["certa.cli"])
