"""The package's shape: no import cycle (lazy imports inside functions count too) and no wing that
reaches up to a wing above it. The layers, bottom up:

    0  triaudit (the version), core,       plain helpers: arguments, datasheets, errors, files;
       corners                             what each corner is (its steps, time model, figures, checks)
    1  results                             reading result files into one table
    1.5 store                              the results store: the table of many runs in Parquet,
                                           read by DuckDB (it stores what results reads, and judge
                                           and report read it: between the two)
    2  runner, doctor, peers, plan, judge  a run; the machine's checks; peer outputs; plans; verdicts
    3  report, soak                        the report's page and sections; the soak and its verdict
    4  fleet                               whole-node runs and Slurm
    5  commands                            the command line, one module per subcommand
"""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "triaudit"
LAYER = {
    "core": 0,
    "corners": 0,
    "results": 1,
    "store": 1.5,
    "runner": 2,
    "doctor": 2,
    "peers": 2,
    "plan": 2,
    "judge": 2,
    "report": 3,
    "soak": 3,
    "fleet": 4,
    "commands": 5,
}


def module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """Every triaudit module `path` imports, at any depth of its code."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.startswith("triaudit"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                out.add(sub if sub in modules else node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("triaudit"))
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            raise AssertionError(f"{path}: relative import (the package uses absolute ones)")
    return {m for m in out if m in modules}


def graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in PKG.rglob("*.py")}
    return {m: imports_of(p, set(files)) - {m} for m, p in files.items()}


def wing(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_no_import_cycle():
    g = graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(g[m]):
            if state.get(n) == 1:
                cycle = stack[stack.index(n) :] + [n]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(g):
        if m not in state:
            visit(m)


def test_no_wing_reaches_up():
    g = graph()
    up = []
    for m, deps in g.items():
        if m == "triaudit.__main__":  # `python -m triaudit`: the entry point, above everything
            continue
        for d in deps:
            a, b = LAYER.get(wing(m), 0), LAYER.get(wing(d), 0)
            if b > a or (b == a and wing(m) != wing(d) and a > 0):
                up.append(f"{m} -> {d}")
    assert not up, "imports that reach up or sideways:\n  " + "\n  ".join(sorted(up))


def test_every_module_is_in_a_wing():
    flat = [
        m for m in graph() if m.count(".") == 1 and m.split(".")[1] not in LAYER and m not in ("triaudit.__main__",)
    ]
    assert not flat, f"modules outside the wings: {flat}"
