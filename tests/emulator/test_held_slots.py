"""An emulator holds at most `MAX_HELD_SLOTS` code and read-only slots each: the one used longest ago is unmapped.

Each slot is a Unicorn memory region, and every change to Unicorn's memory map costs time in
proportion to the regions mapped, so `check` of a large directory must not keep them all.  Objects
whose slots were unmapped run again exactly as before (their code is mapped and translated anew).
"""
from __future__ import annotations

from pathlib import Path

from emu.emulator import mapping as image_mapping
from emu.cache import loaded as images
from emu.run import session as run
from emu.arch import architecture
from emu.dsl.entries import EntrySpec
from emu.binary.elf.relocatable import PERM_R, PERM_X
from emu.emulator.machine import Machine
from emu.run.session import run_object

FIXTURES = Path(__file__).parent.parent / "fixtures" / "cutlass-dsl-4.8.0" / "x86_64"
LOADERS = [EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device")]
NAMES = ("carveout_25", "two_kernels", "pdl", "cooperative")


def _calls(result) -> list[tuple]:
    return [(c.entry, c.symbol, c.args, c.outputs, c.ret, c.caller) for c in result.calls]


def test_slots_past_the_bound_are_unmapped_and_their_objects_still_run(monkeypatch):
    paths = [str(FIXTURES / f"{name}.o") for name in NAMES]
    expected = {path: _calls(run_object(path, entries=LOADERS)) for path in paths}
    slots = {path: {s.perms: s.address for s in images.load_image(path)[0].segments} for path in paths}
    assert len({slot[PERM_R | PERM_X] for slot in slots.values()}) == len(paths)        # four different code slots
    machine = Machine(architecture("x86_64"))
    monkeypatch.setattr(run, "machine_for", lambda _arch, _image=None: machine)
    monkeypatch.setattr(image_mapping, "MAX_HELD_SLOTS", 2)
    for _ in range(2):
        for path in paths:
            assert _calls(run_object(path, entries=LOADERS)) == expected[path]
            mapped = {begin for begin, _end, _perms in machine.uc.mem_regions()}
            assert len(machine.mapping._code_slots) <= 2 and len(machine.mapping._rodata_slots) <= 2
            assert slots[path][PERM_R | PERM_X] in mapped and slots[path][PERM_R] in mapped
    last_two = {slots[path][PERM_R | PERM_X] for path in paths[-2:]}
    assert set(machine.mapping._code_slots) == last_two
    assert slots[paths[0]][PERM_R | PERM_X] not in {begin for begin, _end, _perms in machine.uc.mem_regions()}
