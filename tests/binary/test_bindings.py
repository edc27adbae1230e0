"""The binding table: imports at their slots; a defined function a stub answers at a slot after them, its
first bytes a jump there, in a copy (tests/emulator/test_defined_stubs.py runs one)."""
from __future__ import annotations

from conftest import fixture

from emu.arch import architecture
from emu.binary.bindings import bind
from emu.binary.elf.reader import load_object
from emu.binary.elf.relocatable import build_image
from emu.binary.memory_map import stub_address


def test_an_export_that_defines_no_modelled_function_is_mapped_as_it_is():
    binary = build_image(load_object(fixture("x86_64", "carveout_25")))
    bindings = bind(binary, lambda symbol: symbol.startswith("_cuda"))
    assert bindings.binary is binary and bindings.symbols == tuple(binary.stub_symbols)
    assert bindings.by_address() == {stub_address(slot): name for slot, name in enumerate(binary.stub_symbols) if slot}


def test_a_bound_function_jumps_to_its_slot_after_the_imports_in_a_copy():
    binary = build_image(load_object(fixture("aarch64", "carveout_25")))
    name = "carveout_25_cuda_init"
    has_model = {name}.__contains__
    bindings = bind(binary, has_model)
    assert bind(binary, has_model).binary is bindings.binary         # worked out once per binary and predicate
    slot = len(binary.stub_symbols)
    assert bindings.symbols == (*binary.stub_symbols, name) and bindings.binary.stub_symbols == list(bindings.symbols)
    address = binary.functions[name]
    jump = architecture("aarch64").cpu.jump_code(address, stub_address(slot))
    assert bindings.binary.read(address, len(jump)) == jump and binary.read(address, len(jump)) != jump
    assert bindings.binary.locate(stub_address(slot)) == f"{name} (stub)"
    code = next(s for s in binary.segments if s.perms & 4)
    patched = next(s for s in bindings.binary.segments if s.perms & 4)
    start = address - code.address
    assert patched.data[:start] == code.data[:start] and patched.data[start + len(jump):] == code.data[start + len(jump):]
