"""certa/strategies imports only the engine and the statistics below it, and its modules
import each other one way: the public modules the private ones, never the reverse (issue 27)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOM = Path(__file__).resolve().parents[1] / "certa" / "strategies"
ALLOWED = ("certa.engine", "certa.stats", "certa.strategies")


def imports_of(path: Path) -> set[str]:
    """Every certa module ``path`` imports, at module level or inside a function (relative ones resolved)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = ["certa", "strategies"][: 3 - node.level] if node.level <= 2 else []
                parts = base + (node.module.split(".") if node.module else [])
                names = [".".join(parts)] if node.module else [".".join(parts + [a.name]) for a in node.names]
            else:
                names = [node.module or ""]
            out.update(n for n in names if n.startswith("certa"))
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("certa"))
    return out


MODULES = {f"certa.strategies.{p.stem}": imports_of(p) for p in sorted(ROOM.glob("*.py")) if p.stem != "__init__"}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_strategies_import_only_the_engine_and_stats(module):
    upward = sorted(m for m in MODULES[module] if not m.startswith(ALLOWED))
    assert not upward, f"{module} imports {upward}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.rsplit(".", 1)[1].startswith("_")))
def test_private_modules_import_no_public_strategy_module(module):
    public = sorted(m for m in MODULES[module]
                    if m.startswith("certa.strategies.") and not m.split(".")[2].startswith("_"))
    assert not public, f"{module} imports {public}"


def test_no_import_cycle_between_strategy_modules():
    graph = {m: {t for t in deps if t in MODULES} for m, deps in MODULES.items()}
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for t in sorted(graph[m]):
            assert state.get(t) != 1, "import cycle: " + " -> ".join(path + [m, t])
            if t not in state:
                visit(t, path + [m])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])
