"""The house rules of emu's package layout (docs/architecture.md), read from the source:

- only the public surface sits at emu's top level; every other module lives in the package of its layer;
- no module is over 400 lines;
- the binary layer and the emulator import nothing of the CUDA model, the DSL, the stubs, the run or the
  command line (the emulator is handed a binding table and a dispatcher instead);
- the binary layer, the emulator and the trace contract depend on neither the CUDA model nor the DSL's
  conventions, not even through another module.
"""
from __future__ import annotations

from tests.test_import_graph import ROOT, _graph, _modules

PUBLIC_SURFACE = {"emu", "emu.__main__", "emu.api", "emu.errors"}
MAX_LINES = 400
LOWER = ("emu.binary", "emu.emulator")
UPPER = ("emu.cuda", "emu.dsl", "emu.stubs", "emu.run", "emu.commands")
INDEPENDENT = ("emu.binary", "emu.emulator", "emu.run.trace", "emu.run.state")
FORBIDDEN = ("emu.cuda", "emu.dsl")


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == package or module.startswith(package + ".") for package in packages)


def _closure(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module `start` imports, directly or through others."""
    seen, todo = set(), [start]
    while todo:
        for other in graph[todo.pop()]:
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return seen


def test_only_the_public_surface_sits_at_the_top_level():
    top = {name for name, path in _modules().items() if name.startswith("emu") and path.parent == ROOT / "emu"}
    assert top <= PUBLIC_SURFACE, f"modules at emu's top level: {sorted(top - PUBLIC_SURFACE)}"


def test_no_module_is_over_the_line_limit():
    long = {name: lines for name, path in _modules().items() if name.startswith("emu")
            and (lines := len(path.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_the_binary_layer_and_the_emulator_import_no_upper_layer():
    graph = _graph(deferred=True)
    assert {"emu.binary.relocation", "emu.emulator.machine"} <= graph.keys()
    assert sorted((module, target) for module, targets in graph.items() if _within(module, LOWER)
                  for target in targets if _within(target, UPPER)) == []


def test_the_binary_layer_the_emulator_and_the_trace_contract_reach_no_cuda_and_no_dsl():
    graph = _graph(deferred=True)
    assert {"emu.run.trace", "emu.run.state"} <= graph.keys()
    reached = {name: sorted(m for m in _closure(graph, name) if _within(m, FORBIDDEN))
               for name in graph if _within(name, INDEPENDENT)}
    assert {name: found for name, found in reached.items() if found} == {}


def test_the_layer_checks_see_what_they_forbid():
    graph = {"emu.binary.x": {"emu.arch"}, "emu.arch": {"emu.cuda.runtime"}, "emu.cuda.runtime": set()}
    assert _closure(graph, "emu.binary.x") == {"emu.arch", "emu.cuda.runtime"}
    assert _within("emu.cuda.runtime", FORBIDDEN) and not _within("emu.cudax", FORBIDDEN)
