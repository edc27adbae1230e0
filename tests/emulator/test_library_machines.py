"""Each shared library runs in an emulator of its own (emu.emulator.machine.machine_for), up to
`MAX_LIBRARY_MACHINES` per architecture: every library lays out at the one library base, so libraries and
objects run in turn in one emulator would swap each other's mapping and translated code on every run.
Past the bound the emulator used longest ago is handed to the next library, whose mapping replaces the old.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from emu.arch import architecture
from emu.cache import loaded as images
from emu.dsl.entries import EntrySpec
from emu.emulator import machine as machines
from emu.emulator.machine import Machine, machine_for
from emu.run import session as run
from emu.run.session import run_object

SHARED = Path(__file__).parents[1] / "data" / "shared"
OBJECTS = Path(__file__).parents[1] / "fixtures" / "realworld"
LOADERS = [EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device")]


def _calls(result) -> list[tuple]:
    return [(c.entry, c.symbol, c.args, c.outputs, c.ret, c.caller) for c in result.calls]


def _expected(path: str, monkeypatch) -> list[tuple]:
    """The calls of `path`'s loaders in an emulator of its own, fresh."""
    fresh = Machine(architecture(images.load_image(path)[0].arch))
    with monkeypatch.context() as patch:
        patch.setattr(run, "machine_for", lambda _arch, _image=None: fresh)
        return _run(path)


def _run(path: str) -> list[tuple]:
    return _calls(run_object(path, entries=LOADERS, export="mixed" if "toys481" in path else None))


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_a_library_has_an_emulator_of_its_own_and_objects_keep_theirs(arch):
    obj = images.load_image(str(OBJECTS / arch / "export_add_one.o"))[0]
    dyn = images.load_image(str(SHARED / arch / "export_add_one.dyn.so"))[0]
    static = images.load_image(str(SHARED / arch / "export_add_one.static.so"))[0]
    cpu = architecture(arch)
    assert machine_for(cpu, obj) is machine_for(cpu) is machine_for(cpu, None)
    assert machine_for(cpu, dyn) is machine_for(cpu, dyn)
    assert len({id(machine_for(cpu)), id(machine_for(cpu, dyn)), id(machine_for(cpu, static))}) == 3


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_libraries_past_the_bound_take_over_the_emulator_used_longest_ago(arch, monkeypatch):
    paths = [str(SHARED / arch / name) for name in ("export_add_one.dyn.so", "export_add_one.static.so", "toys481.dyn.so")]
    paths.insert(1, str(OBJECTS / arch / "export_add_one.o"))
    expected = {path: _expected(path, monkeypatch) for path in paths}
    monkeypatch.setattr(machines, "MAX_LIBRARY_MACHINES", 2)
    monkeypatch.setattr(machines, "_LIBRARY_MACHINES", {})
    for _ in range(3):
        for path in paths:
            assert _run(path) == expected[path]
            assert len(machines._LIBRARY_MACHINES[arch]) <= 2
    assert list(machines._LIBRARY_MACHINES[arch]) == [images.load_image(p)[0].sha256 for p in (paths[2], paths[3])]
