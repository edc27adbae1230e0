"""The segments without a slot (a shared library's, laid out at its fixed base) are held, inaccessible, while
other binaries run, as slots are: a library run between objects keeps its mapping and its translated code.

Held code must never run stale: a binary whose segment takes a held region's place with other bytes (same
address, size and permissions) gets its own bytes and Unicorn forgets what it translated from the old
ones; a segment overlapping a held region otherwise unmaps it.  The synthetic images here put a function
that returns a constant at one address: a stale translation would return another binary's constant.
"""
from __future__ import annotations

import struct
from pathlib import Path

import pytest

from emu.arch import architecture
from emu.binary.image import PERM_R, PERM_W, PERM_X, LoadedBinary, Segment
from emu.binary.memory_map import CODE_SLOTS_BASE, DATA_BASE, PAGE
from emu.cache import loaded as images
from emu.dsl.entries import EntrySpec
from emu.emulator.machine import Machine
from emu.run import session as run
from emu.run.session import run_object

SHARED = Path(__file__).parents[1] / "data" / "shared"
OBJECTS = Path(__file__).parents[1] / "fixtures" / "realworld"
LOADERS = [EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device")]
LIBRARY_CODE = 0x0100_1000


def _returns(arch: str, value: int) -> bytes:
    """A function that returns `value`: mov eax, imm32; ret (x86-64) or movz w0, #imm16; ret (AArch64)."""
    if arch == "x86_64":
        return b"\xb8" + struct.pack("<I", value) + b"\xc3"
    return struct.pack("<II", 0x52800000 | value << 5, 0xD65F03C0)


def _image(arch: str, code_at: int, value: int, code_size: int = PAGE, pages: tuple[int, ...] = ()) -> LoadedBinary:
    """A binary whose code at `code_at` returns `value`, with a read-only page below it and a writable one above,
    or, with `pages`, read-only pages at those addresses as well."""
    code = _returns(arch, value).ljust(code_size, b"\0")
    segments = [Segment(code_at, code, PERM_R | PERM_X)]
    if code_at < CODE_SLOTS_BASE:
        segments += [Segment(code_at - PAGE, bytes(PAGE), PERM_R), Segment(code_at + code_size, bytes(PAGE), PERM_R | PERM_W)]
    else:
        segments.append(Segment(DATA_BASE, bytes(PAGE), PERM_R | PERM_W))
    segments += [Segment(address, bytes(PAGE), PERM_R) for address in pages]
    return LoadedBinary(path=f"synthetic-{value}", arch=arch, sha256="0" * 64, format="synthetic", segments=segments,
                        functions={"f": code_at}, data_symbols={}, sizes={}, stub_symbols=[""], got_base=0, obj=None)


def _run(machine: Machine, image: LoadedBinary) -> int:
    machine.load(image, {})
    outcome = machine.call(image.functions["f"], [])
    assert outcome.fault is None, outcome.fault
    return outcome.returned


def _regions(machine: Machine) -> dict[int, tuple[int, int]]:
    return {begin: (end + 1 - begin, perms) for begin, end, perms in machine.uc.mem_regions()}


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_a_held_region_is_reused_and_rewritten_never_run_stale(arch):
    machine = Machine(architecture(arch))
    one, two, slotted = _image(arch, LIBRARY_CODE, 1), _image(arch, LIBRARY_CODE, 2), _image(arch, CODE_SLOTS_BASE, 3)
    assert _run(machine, one) == 1
    region = machine.mapping._mapped[LIBRARY_CODE][0]
    assert _run(machine, slotted) == 3
    assert _regions(machine)[LIBRARY_CODE] == (PAGE, 0)           # held: mapped, inaccessible
    assert _run(machine, one) == 1
    assert machine.mapping._mapped[LIBRARY_CODE][0] is region       # the same mapping, its translations kept
    for _ in range(3):
        assert _run(machine, slotted) == 3
        assert _run(machine, two) == 2                           # rewritten in the held region: not 1
        assert machine.mapping._mapped[LIBRARY_CODE][0] is region
        assert _run(machine, slotted) == 3
        assert _run(machine, one) == 1


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_a_region_overlapped_by_another_layout_is_unmapped(arch):
    machine = Machine(architecture(arch))
    small, large = _image(arch, LIBRARY_CODE, 1), _image(arch, LIBRARY_CODE, 2, code_size=2 * PAGE)
    elsewhere = _image(arch, LIBRARY_CODE + 0x10_0000, 4, pages=(LIBRARY_CODE - PAGE,))   # takes small's read-only page
    for _ in range(2):
        assert _run(machine, small) == 1
        assert _run(machine, large) == 2
        assert _regions(machine)[LIBRARY_CODE] == (2 * PAGE, PERM_R | PERM_X)
        assert _run(machine, elsewhere) == 4
        assert _regions(machine)[LIBRARY_CODE] == (2 * PAGE, 0)             # large's code: held
        assert _regions(machine)[LIBRARY_CODE - PAGE] == (PAGE, PERM_R)     # elsewhere's page, mapped anew
    assert set(machine.mapping._active_regions) == {s.address for s in elsewhere.segments}


def test_held_regions_are_bounded(monkeypatch):
    from emu.emulator import mapping as image_mapping
    monkeypatch.setattr(image_mapping, "MAX_HELD_SLOTS", 4)
    machine = Machine(architecture("x86_64"))
    for value in range(6):                  # each at its own address: nothing overlaps, every region could be held
        assert _run(machine, _image("x86_64", LIBRARY_CODE + value * 0x10_0000, value)) == value
        assert len(machine.mapping._mapped) <= 4
    assert _run(machine, _image("x86_64", LIBRARY_CODE, 9)) == 9


def _calls(result) -> list[tuple]:
    return [(c.entry, c.symbol, c.args, c.outputs, c.ret, c.caller) for c in result.calls]


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_libraries_and_objects_in_turn_run_as_each_alone(arch, monkeypatch):
    """A .o, a library, another .o, the other library (whose layout overlaps the first's): each run's calls are
    those of its run in a fresh emulator, and a library's regions stay mapped, inaccessible, while an object runs."""
    paths = [str(OBJECTS / arch / "export_add_one.o"), str(SHARED / arch / "export_add_one.dyn.so"),
             str(OBJECTS / arch / "elementwise_add.o"), str(SHARED / arch / "export_add_one.static.so")]
    expected = {}
    for path in paths:
        fresh = Machine(architecture(arch))
        monkeypatch.setattr(run, "machine_for", lambda _arch, _image=None, machine=fresh: machine)
        expected[path] = _calls(run_object(path, entries=LOADERS))
    assert expected[paths[1]] and expected[paths[1]] != expected[paths[3]]
    machine = Machine(architecture(arch))
    monkeypatch.setattr(run, "machine_for", lambda _arch, _image=None: machine)
    library = None                                  # the library run last
    for _ in range(3):
        for path in paths:
            assert _calls(run_object(path, entries=LOADERS)) == expected[path]
            if path.endswith(".so"):
                library = images.load_image(path)[0]
            elif library is not None:
                regions = _regions(machine)
                assert all(regions[s.address] == (len(s.data), 0) for s in library.segments)
