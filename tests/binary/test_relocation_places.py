"""Relocations are planned by address: each place is a virtual address P inside the laid-out segments, and
the buffer byte it patches follows from P through the windows, whether r_offset counts from a section
(ET_REL) or is an address already (a shared library's dynamic relocations)."""
from __future__ import annotations

import struct

import pytest
from conftest import DSL480

from emu.arch.x86_64.relocations import TABLE
from emu.binary.elf import relocatable
from emu.binary.elf.reader import RELA_ENTRY, ObjectFile, Section, Symbol, load_object
from emu.binary.relocation import Places, RelocationPlan, Window, relocate_generated, relocate_precisely
from emu.errors import RelocationError


@pytest.mark.parametrize("host", ["x86_64", "aarch64"])
def test_every_place_is_an_address_inside_a_segment_and_patches_the_byte_there(host, monkeypatch):
    planned = []
    real = relocatable.relocate
    monkeypatch.setattr(relocatable, "relocate", lambda plan, image: planned.append((plan, image)) or real(plan, image))
    obj = load_object(DSL480 / host / "carveout_25.o")
    binary = relocatable.build_image(obj)
    (plan, buffer), = planned
    assert [places.entries for places in plan.places] == [entries for _, entries in obj.relocation_tables]
    checked = 0
    for places, shift in zip(plan.places, plan.shifts()):
        assert places.base == places.start        # an ET_REL table patches its own section, from its address
        for offset, kind, _, _ in RELA_ENTRY.iter_unpack(places.entries):
            P, size = places.base + offset, plan.table[kind].size
            segment = next(s for s in binary.segments if s.address <= P and P + size <= s.address + len(s.data))
            assert places.start <= P and P + size <= places.end
            assert segment.data[P - segment.address:P - segment.address + size] == buffer[P - shift:P - shift + size]
            checked += 1
    assert checked == len(obj.relocations) > 0


def _dynamic_plan(r_offset: int, window_size: int = 16) -> RelocationPlan:
    """One R_X86_64_64 whose r_offset is an address (base 0) of [0x40_0000, 0x40_0010), with a window of
    `window_size` bytes there held at buffer offset 8."""
    obj = ObjectFile("lib.so", "x86_64", "0" * 64, [Section(0, "", 0, 0, 0, 1, 0, 0, b""),
                                                    Section(1, ".data", 1, 3, 16, 8, 0, 0, bytes(16))],
                     [Symbol(0, "", 0, 0, 0, 0, 0), Symbol(1, "target", 0, 0, 1, 1, 1)])
    entries = RELA_ENTRY.pack(r_offset, 1, 1, 0x20)
    return RelocationPlan(obj, TABLE, frozenset({1}), [None, 0x1234_5678_9000], 0, {},
                          [Places(entries, 0, 0x40_0000, 0x40_0010, 1)], [Window(0x40_0000, window_size, 8)])


def test_a_place_given_as_an_address_goes_through_the_same_loops():
    for loop in (relocate_generated, relocate_precisely):
        buffer = bytearray(24)
        loop(_dynamic_plan(0x40_0008), buffer)
        assert struct.unpack_from("<Q", buffer, 16)[0] == 0x1234_5678_9020 and buffer[:16] == bytes(16), loop.__name__


@pytest.mark.parametrize("r_offset, window_size, problem", [
    (0x3F_FFF8, 16, r"patches 0x3ffff8, before the section \(0x400000\)"),
    (0x40_000C, 16, r"patches 8 bytes past the end of the section \(0x10 bytes\)"),
    (0x40_0000, 8, r"patches 0x400000, which no segment holds"),
])
def test_a_place_outside_its_range_or_the_buffer_is_refused_by_both_loops(r_offset, window_size, problem):
    assert not relocate_generated(_dynamic_plan(r_offset, window_size), bytearray(24))
    with pytest.raises(RelocationError, match=rf"R_X86_64_64 at \.data\+{r_offset:#x} against target {problem}"):
        relocate_precisely(_dynamic_plan(r_offset, window_size), bytearray(24))
