"""No import circles between textgyms modules, counting imports inside functions too: a lazy
import only hides a circle until the day someone moves it to the top of the module."""

from __future__ import annotations

import ast
from pathlib import Path

import textgyms

ROOT = Path(textgyms.__file__).parent


def module_names(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package at ``root``."""
    names = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def imported(module: str, path: Path, names: dict[str, Path]) -> set[str]:
    """The package modules ``module`` imports anywhere in its file (parents of itself aside)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            targets = [base, *(f"{base}.{a.name}" for a in node.names)]
        else:
            continue
        for target in targets:
            while target and target not in names:  # `from pkg.mod import name` -> pkg.mod
                target = target.rpartition(".")[0]
            if target and target != module and not module.startswith(target + "."):
                found.add(target)
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (each one is an import circle)."""
    order, low, stack, groups = {}, {}, [], []

    def visit(v: str) -> None:
        order[v] = low[v] = len(order)
        stack.append(v)
        for w in graph[v]:
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            group = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in order:
            visit(v)
    return groups


def test_no_import_circles():
    names = module_names(ROOT)
    graph = {m: imported(m, p, names) for m, p in names.items()}
    assert circles(graph) == []


def test_the_check_finds_a_lazy_circle(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import x\n")
    (pkg / "b.py").write_text("def x():\n    from . import a\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    names = module_names(pkg)
    graph = {m: imported(m, p, names) for m, p in names.items()}
    assert circles(graph) == [["pkg.a", "pkg.b"]]
