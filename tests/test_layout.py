"""Section layout: permissions follow section flags, NOBITS is zero-filled, stubs are distinct."""
from __future__ import annotations

from conftest import fixture

from emu.layout import PERM_R, PERM_W, PERM_X, build_image
from emu.memory_map import STUB_BASE, STUB_SLOT
from emu.objfile import load_object


def test_segments_follow_section_flags():
    obj = load_object(fixture("x86_64", "carveout_25"))
    image = build_image(obj)
    perms = [segment.perms for segment in image.segments]
    assert perms == [PERM_R | PERM_X, PERM_R, PERM_R | PERM_W]
    lbss = next(s for s in obj.sections if s.name == ".lbss")
    address = image.data_symbols["kernels_kernel_cutlass_rotate_tensorptrf32gmemalign16o1281_0"]
    rw = image.segments[2]
    assert lbss.type == 8 and rw.address <= address < rw.address + len(rw.data)
    assert rw.data[address - rw.address:address - rw.address + 8] == bytes(8)


def test_every_undefined_symbol_gets_its_own_stub_slot():
    obj = load_object(fixture("x86_64", "carveout_25"))
    image = build_image(obj)
    undefined = sorted(s.name for s in obj.symbols if not s.defined and s.name and s.name != "_GLOBAL_OFFSET_TABLE_")
    assert image.stub_symbols[1:] == undefined
    assert image.locate(STUB_BASE + STUB_SLOT * 1) == f"{undefined[0]} (stub)"


def test_locate_names_function_and_offset():
    image = build_image(load_object(fixture("x86_64", "carveout_25")))
    start = image.functions["carveout_25_cuda_load"]
    assert image.locate(start + 0x38) == "carveout_25_cuda_load+0x38"
