"""Objects whose code shares one content-chosen slot still each run their own code.

The machine keeps every object's code mapped at a slot chosen by its bytes (emu.binary.elf.relocatable),
so that objects alternating in one emulator keep their translated code.  Two objects can
share a slot; then loading one rewrites the other's code there, and Unicorn must not run
a translation made from the other's bytes (the machine drops those of the bytes that
differ); their read-only data shares the read-only slot paired with it.  carveout_25 (one kernel) and
two_kernels_carveout_50 (two) differ in their loaders' code: a stale translation would run
one object's calls for the other.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from emu.cache import loaded as images
from emu.binary.elf import relocatable as layout
from emu.arch import architecture
from emu.dsl.entries import EntrySpec
from emu.dsl.exports import discover
from emu.binary.elf.relocatable import PERM_R, PERM_X
from emu.emulator.mapping import changed_ranges
from emu.binary import memory_map
from emu.binary.memory_map import (CODE_SLOT_TABLE, CODE_SLOTS_BASE, HOST_BASE, RODATA_PER_CODE, RODATA_SLOTS_BASE, STUB_BASE,
                            code_slot_size, rodata_slot_address)
from emu.binary.elf.reader import parse_object, read_object_bytes
from emu.binary.image import LoadedBinary
from emu.emulator import machine as machines
from emu.emulator.machine import Machine, machine_for
from emu.run import session as run
from emu.run.session import run_object

FIXTURES = Path(__file__).parent.parent / "fixtures" / "cutlass-dsl-4.8.0"
LOADERS = [EntrySpec(name="cuda_load"), EntrySpec(name="cuda_load_to_device")]


def _calls(run) -> list[tuple]:
    return [(call.entry, call.symbol, call.args, call.outputs, call.ret, call.caller) for call in run.calls]


def _in_the_slot_of(first: Path, second: Path, tmp_path: Path, monkeypatch) -> tuple[str, LoadedBinary]:
    """A copy of `second` laid out in `first`'s code slot (and so its read-only slot), cached as its image."""
    first_image, _ = images.load_image(str(first))
    first_code = {s.perms: s for s in first_image.segments}[PERM_R | PERM_X]
    copy = tmp_path / second.name
    shutil.copyfile(second, copy)
    raw = read_object_bytes(str(copy), copy.stat().st_size)
    with monkeypatch.context() as patch:
        patch.setattr(layout, "_code_slot", lambda *_, **__: first_code.address)
        obj = parse_object(raw, str(copy), "0" * 64)
        image = layout.build_image(obj)
    sites = architecture(obj.arch).cpu.extension_sites(image)
    if sites:
        image.extras["vector_sites"] = sites
    code = {s.perms: s for s in image.segments}[PERM_R | PERM_X]
    assert code.address == first_code.address and code.data != first_code.data
    rodata, first_rodata = ({s.perms: s for s in i.segments}[PERM_R] for i in (image, first_image))
    assert rodata.address == first_rodata.address and rodata.data != first_rodata.data
    stat = copy.stat()
    monkeypatch.setitem(images._CACHE, (str(copy), stat.st_size, stat.st_mtime_ns), (image, discover(obj, image)))
    return str(copy), image


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_objects_sharing_a_code_slot_run_their_own_code(arch, tmp_path, monkeypatch):
    """In one emulator (as when every emulator machine_for may make holds other code there): rewritten, never stale."""
    first, second = FIXTURES / arch / "carveout_25.o", FIXTURES / arch / "two_kernels_carveout_50.o"
    expected = {path: _calls(run_object(str(path), entries=LOADERS)) for path in (first, second)}
    assert expected[first] != expected[second]
    copy, _ = _in_the_slot_of(first, second, tmp_path, monkeypatch)
    machine = Machine(architecture(arch))
    monkeypatch.setattr(run, "machine_for", lambda _arch, _image=None: machine)
    for _ in range(3):
        assert _calls(run_object(str(first), entries=LOADERS)) == expected[first]
        assert _calls(run_object(copy, entries=LOADERS)) == expected[second]
    assert machine.mapping.rewrites > 0                # the slot was rewritten: this test proves the rewrite rule


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_objects_sharing_a_slot_get_emulators_of_their_own(arch, tmp_path, monkeypatch):
    """machine_for gives an object whose slot holds another object's code the next emulator, so neither rewrites the
    other's code (and drops its translations) on every switch; past MAX_OBJECT_MACHINES the first one rewrites."""
    first, second = FIXTURES / arch / "carveout_25.o", FIXTURES / arch / "two_kernels_carveout_50.o"
    expected = {path: _calls(run_object(str(path), entries=LOADERS)) for path in (first, second)}
    copy, image = _in_the_slot_of(first, second, tmp_path, monkeypatch)
    cpu = architecture(arch)
    monkeypatch.setattr(machines, "_MACHINES", {})
    for _ in range(3):
        assert _calls(run_object(str(first), entries=LOADERS)) == expected[first]
        assert _calls(run_object(copy, entries=LOADERS)) == expected[second]
    first_image = images.load_image(str(first))[0]
    assert machine_for(cpu, first_image) is machine_for(cpu) is not machine_for(cpu, image)
    assert all(machine.mapping.rewrites == 0 for machine in machines._MACHINES[arch])      # nothing rewritten
    monkeypatch.setattr(machines, "_MACHINES", {})
    monkeypatch.setattr(machines, "MAX_OBJECT_MACHINES", 1)
    for _ in range(2):
        assert _calls(run_object(str(first), entries=LOADERS)) == expected[first]
        assert _calls(run_object(copy, entries=LOADERS)) == expected[second]
    assert machine_for(cpu, image) is machine_for(cpu) and machine_for(cpu).mapping.rewrites > 0


def test_changed_ranges_cover_every_differing_byte():
    old = bytes(300)
    new = bytearray(old)
    new[5] = new[64] = new[65] = new[299] = 1
    assert changed_ranges(old, bytes(new)) == [(0, 128), (256, 300)]
    assert changed_ranges(old, old) == []


def test_the_read_only_data_of_an_object_not_loaded_is_inaccessible():
    """Another object's read-only slot stays mapped but inaccessible: a guest's stale pointer into it faults."""
    from emu.emulator.unicorn_c import mem_read
    from emu.emulator.machine import machine_for
    first, second = FIXTURES / "x86_64" / "carveout_25.o", FIXTURES / "x86_64" / "two_kernels.o"
    rodata = {path: {s.perms: s for s in images.load_image(str(path))[0].segments}[PERM_R] for path in (first, second)}
    assert rodata[first].address != rodata[second].address
    run_object(str(first), entries=LOADERS)
    run_object(str(second), entries=LOADERS)
    uc = machine_for(architecture("x86_64")).uc
    assert mem_read(uc, rodata[second].address, 8) == rodata[second].data[:8]
    perms = {begin: perms for begin, _end, perms in uc.mem_regions()}
    assert perms[rodata[second].address] == PERM_R and perms[rodata[first].address] == 0


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_exports_compiled_alike_share_a_slot_and_their_relocated_code(arch):
    """carveout_25 and carveout_75 differ only in metadata: one slot, the same code bytes (one translation)."""
    code = {name: {s.perms: s for s in images.load_image(str(FIXTURES / arch / f"{name}.o"))[0].segments}[PERM_R | PERM_X]
            for name in ("carveout_25", "carveout_75", "two_kernels")}
    assert code["carveout_25"] == code["carveout_75"]
    assert code["two_kernels"].address != code["carveout_25"].address


def test_code_rewrites_flush_unicorns_code_buffer_now_and_then(tmp_path, monkeypatch):
    """Dropped translations keep their space in Unicorn's buffer until a flush: rewrites are counted and flushed."""
    from emu.emulator.mapping import FLUSH_AFTER_REWRITES
    from emu.emulator.machine import machine_for
    mapping = machine_for(architecture("x86_64")).mapping
    flushed = []
    monkeypatch.setattr(mapping.uc, "ctl_flush_tb", lambda: flushed.append(mapping.rewrites))
    mapping.rewrites = FLUSH_AFTER_REWRITES - 2
    mapping.drop_translations(0x1000, [(0, 64)])
    assert not flushed and mapping.rewrites == FLUSH_AFTER_REWRITES - 1
    mapping.drop_translations(0x1000, [(0, 64)])
    assert flushed and mapping.rewrites == 0


def test_every_slot_and_its_read_only_pair_stay_in_reach_and_apart():
    """Code slots follow each other from CODE_SLOTS_BASE and end within AArch64 CALL26 reach of every stub
    (+-128 MiB); each read-only pair starts past the code, ends below the host scratch area and within
    x86-64's 32-bit reach, and no two pairs overlap."""
    address = CODE_SLOTS_BASE
    for size, count, first in CODE_SLOT_TABLE:
        assert first == address and first % size == 0
        address += size * count
        last = first + size * (count - 1)
        assert code_slot_size(first) == code_slot_size(last) == size
        assert rodata_slot_address(first) % (size * RODATA_PER_CODE) == 0
    assert address - STUB_BASE <= 128 << 20
    rodata_end = rodata_slot_address(address)          # where the last class's last pair ends
    assert RODATA_SLOTS_BASE == rodata_slot_address(CODE_SLOTS_BASE) and rodata_end <= HOST_BASE <= 1 << 31
    with pytest.raises(ValueError):
        code_slot_size(address)


def test_code_too_large_for_a_small_slot_takes_a_large_one():
    """benchmarks' kernels_64 has 40 KiB of code: a 64 KiB slot, its read-only data in the pair."""
    image, _ = images.load_image(str(Path(__file__).parents[2] / "benchmarks" / "fixtures" / "kernels_64.o"))
    segments = {s.perms: s for s in image.segments}
    code = segments[PERM_R | PERM_X]
    assert 0x4000 < len(code.data) <= 0x1_0000 and code_slot_size(code.address) == 0x1_0000
    assert segments[PERM_R].address == rodata_slot_address(code.address)


def test_read_only_data_too_large_for_a_small_pair_takes_a_large_slot(monkeypatch):
    """blackwell_fmha has 8 KiB of code and 228 KiB of read-only data: under small slots of 8 KiB (pairs of
    128 KiB) both go to a large slot; under the 16 KiB ones (256 KiB pairs) both stay small."""
    path = Path(__file__).parents[1] / "fixtures" / "realworld" / "x86_64" / "blackwell_fmha.o"
    obj = parse_object(read_object_bytes(str(path), path.stat().st_size), str(path), "0" * 64)

    def slots() -> tuple[int, int]:
        segments = {s.perms: s for s in layout.build_image(obj).segments}
        return segments[PERM_R | PERM_X].address, segments[PERM_R].address

    code, rodata = slots()
    assert code < CODE_SLOT_TABLE[1][2] and rodata == rodata_slot_address(code)
    table = memory_map._laid_out(((0x2000, 16), (0x1_0000, 4)))
    monkeypatch.setattr(layout, "CODE_SLOT_TABLE", table)
    code, rodata = slots()
    assert table[1][2] <= code < table[1][2] + 4 * 0x1_0000 and code % 0x1_0000 == 0
    assert rodata == rodata_slot_address(code)
