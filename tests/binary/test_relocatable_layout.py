"""Section layout: permissions follow section flags, NOBITS is zero-filled, stubs are distinct."""
from __future__ import annotations

import os

import pytest
from conftest import ROOT, fixture

from emu.binary import relocation
from emu.errors import RelocationError
from emu.binary.elf.relocatable import PERM_R, PERM_W, PERM_X, build_image
from emu.binary.memory_map import STUB_BASE, STUB_RETURN, STUB_SLOT
from emu.binary.elf.reader import load_object


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
    assert image.locate(STUB_RETURN + 7) == "stub entry path"


ALL_OBJECTS = sorted(str(path) for path in (ROOT / "tests").rglob("*.o"))


@pytest.mark.parametrize("path", ALL_OBJECTS, ids=lambda path: os.path.relpath(path, ROOT / "tests"))
def test_bulk_relocation_matches_the_one_by_one_loop(path, monkeypatch):
    """The generated bulk loop handles every committed object itself, byte for byte as the reference loop.

    An object the loader refuses (refs.o: its symbols sit at GNU ld's addresses) is
    refused with the same message either way.
    """
    obj = load_object(path)
    try:
        reference = _built_one_by_one(obj, monkeypatch)
    except RelocationError as error:
        with pytest.raises(RelocationError) as bulk_error:
            build_image(obj)
        assert str(bulk_error.value) == str(error)
        return
    gave_up = []
    monkeypatch.setattr(relocation, "relocate_precisely", lambda *args: gave_up.append(args))
    image = build_image(obj)
    assert not gave_up
    assert image.segments == reference.segments


def _built_one_by_one(obj, monkeypatch):
    with monkeypatch.context() as patched:
        patched.setattr(relocation, "relocate_generated", lambda plan, image: False)
        return build_image(obj)
