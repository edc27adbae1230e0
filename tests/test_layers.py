"""The lower layers stay below: the binary layer and the emulator import nothing of the CUDA model, the DSL,
the stubs, the run or the command line (the emulator is handed a binding table and a dispatcher instead)."""
from __future__ import annotations

from tests.test_import_graph import _graph

LOWER = ("emu.binary", "emu.emulator")
UPPER = ("emu.cuda", "emu.dsl", "emu.stubs", "emu.run", "emu.commands")


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == package or module.startswith(package + ".") for package in packages)


def test_the_binary_layer_and_the_emulator_import_no_upper_layer():
    graph = _graph(deferred=True)
    assert {"emu.binary.relocation", "emu.emulator.machine"} <= graph.keys()
    assert sorted((module, target) for module, targets in graph.items() if _within(module, LOWER)
                  for target in targets if _within(target, UPPER)) == []
