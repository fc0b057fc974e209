"""The benchmark scripts the docs cite exist, with the subcommands they cite (issue 27's layout)."""
from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
#: one-off diagnoses retired in issue 27: the docs keep their results and name the commit that ran them
RETIRED = {"adaptive_fiesta_recheck.py", "adaptive_tolerance_diagnosis.py", "fiesta_loop_exact.py",
           "progressive_lemma_trace.py"}
AREAS = ("adaptive", "progressive", "quantification", "reliability", "stats", "jkfold", "integrations", "screen")
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "docs").rglob("*.rst")),
        *sorted((ROOT / "certa").rglob("*.py")), *sorted((ROOT / "examples").rglob("*.py")),
        *sorted(p for p in (ROOT / "tests").glob("*.py") if p.name != Path(__file__).name)]


def _area(name: str):
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(f"certa_bench_area_{name}", BENCH / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # an area script imports only _common until a subcommand runs
    finally:
        sys.path.remove(str(BENCH))
    return module


@pytest.mark.parametrize("area", AREAS)
def test_every_subcommand_has_a_module_with_main(area):
    commands = _area(area).COMMANDS
    assert commands
    for module, help_ in commands.values():
        assert help_
        path = BENCH.joinpath(*module.split(".")).with_suffix(".py")
        assert path.is_file(), path
        assert re.search(r"^def main\(argv", path.read_text(encoding="utf-8"), re.MULTILINE), path


def test_docs_cite_existing_scripts_and_subcommands():
    commands = {a: set(_area(a).COMMANDS) for a in AREAS}
    commands["peers"] = {"pool", "run", "report"}
    cited, bad = 0, []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in re.finditer(r"benchmarks/([A-Za-z0-9_]+\.py)", text):
            cited += 1
            script = m.group(1)
            if script in RETIRED:
                near = text[max(0, m.start() - 400):m.end() + 400]
                if "retired" not in near or not re.search(r"\b[0-9a-f]{7}\b", near):
                    bad.append(f"{doc.name}: {script} cited without 'retired' and the commit that ran it")
            elif not (BENCH / script).is_file():
                bad.append(f"{doc.name}: {script} does not exist")
        for m in re.finditer(r"(?<![\w/.-])(" + "|".join(commands) + r")\.py ([a-z][a-z0-9-]*)", text):
            area, command = m.groups()
            if command not in commands[area]:
                bad.append(f"{doc.name}: {area}.py has no subcommand {command!r}")
    assert cited > 50
    assert not bad, bad


def test_run_subcommand_passes_the_arguments_and_the_results_dir(tmp_path, monkeypatch):
    sys.path.insert(0, str(BENCH))
    try:
        import _common
    finally:
        sys.path.remove(str(BENCH))
    monkeypatch.setattr(_common, "RESULTS", _common.RESULTS)
    monkeypatch.delenv("CERTA_BENCH_RESULTS", raising=False)
    mod = tmp_path / "fake_bench_section.py"
    mod.write_text("import _common\n"
                   "def main(argv):\n"
                   "    main.seen = (list(argv), _common.RESULTS)\n"
                   "    return 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    status = _common.run_subcommand("x.py", "doc", {"go": ("fake_bench_section", "help")},
                                    ["--results", str(out), "go", "--runs", "5", "--results-like", "x"])
    import fake_bench_section

    assert status == 3
    assert fake_bench_section.main.seen == (["--runs", "5", "--results-like", "x"], out.resolve())
    assert out.is_dir()
    assert os.environ["CERTA_BENCH_RESULTS"] == str(out.resolve())
    with pytest.raises(SystemExit):
        _common.run_subcommand("x.py", "doc", {"go": ("fake_bench_section", "help")}, ["nope"])
