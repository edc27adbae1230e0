"""emu's import graph has no cycle: each module can be read after the ones it imports.

The graph is read from the source with `ast`: module-level imports (what Python runs
at import time), then also imports deferred into functions (a cycle there is still a
tangle).  Imports under TYPE_CHECKING never run and do not count.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Deferred cycles found by this test and left to their owners; each must still exist (the
# test fails once one is gone, so that its line goes too).  Nothing may join them.
PENDING: list[list[str]] = []


def _modules() -> dict[str, Path]:
    found = {}
    for path in [*ROOT.glob("emu/**/*.py"), *ROOT.glob("stub_models/*.py")]:
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _graph(deferred: bool) -> dict[str, set[str]]:
    """Module -> the modules it imports (a package's own modules count by name)."""
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        tree = ast.parse(path.read_text())
        skipped = (ast.ClassDef,) if deferred else (ast.FunctionDef, ast.ClassDef)
        roots = [node for node in tree.body if not isinstance(node, skipped)
                 and not (isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test))]
        if deferred:
            roots += [sub for node in tree.body if isinstance(node, ast.ClassDef) for sub in node.body]
        edges = set()
        for node in (sub for root in roots for sub in ast.walk(root)):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join(package[:len(package) - node.level + 1] + [node.module or ""]).strip(".") if node.level else node.module
                submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
                # `from . import image_store` needs the submodule, not the rest of the package's __init__
                targets = submodules if len(submodules) == len(node.names) else [base, *submodules]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges.add(target)
        graph[name] = edges
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_at_import_time():
    assert _cycles(_graph(deferred=False)) == []


def test_no_import_cycle_even_through_deferred_imports():
    graph = _graph(deferred=True)
    assert {"emu.binary.relocation", "emu.stubs.dispatch", "emu.cuda.runtime"} <= graph.keys()
    assert sorted(_cycles(graph)) == sorted(PENDING)


def test_the_check_sees_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
