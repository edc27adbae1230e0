"""ObjectFile as data: symbol lookup by name, and relocations kept as packed RELA tables."""
from __future__ import annotations

import struct

import pytest
from conftest import DSL480, fixture

from emu.binary.elf.reader import SHF_ALLOC, ObjectFile, Relocation, Section, Symbol, load_object

LOCAL, GLOBAL, WEAK = 0, 1, 2


def _with_symbols(*symbols: Symbol) -> ObjectFile:
    return ObjectFile("t.o", "x86_64", "0" * 64, [Section(0, "", 0, 0, 0, 1, 0, 0, b"")], list(symbols))


def test_symbol_prefers_a_global_or_weak_binding_else_the_first_local():
    first, other, bound, later_local = (Symbol(1, "a", 0x10, 0, 1, LOCAL, 1), Symbol(2, "a", 0x20, 0, 1, LOCAL, 1),
                                        Symbol(3, "a", 0x30, 0, 1, GLOBAL, 1), Symbol(4, "a", 0x40, 0, 1, LOCAL, 1))
    assert _with_symbols(first, other).symbol("a") is first
    assert _with_symbols(first, bound, later_local).symbol("a") is bound
    weak, strong = Symbol(1, "b", 1, 0, 1, WEAK, 1), Symbol(2, "b", 2, 0, 1, GLOBAL, 1)
    assert _with_symbols(weak, strong).symbol("b") is strong            # the last bound one, as before
    assert _with_symbols(Symbol(0, "", 0, 0, 0, 0, 0)).symbol("") is None
    assert _with_symbols(first).symbol("missing") is None


def test_relocation_records_are_the_rela_entries_of_loaded_sections():
    obj = load_object(fixture("aarch64", "carveout_25"))
    expected = []
    for section in obj.sections:
        if section.type == 4 and obj.sections[section.info].flags & SHF_ALLOC:    # SHT_RELA against a loaded section
            for offset, info, addend in struct.iter_unpack("<QQq", section.data):
                expected.append(Relocation(section.info, offset, info & 0xFFFFFFFF, info >> 32, addend))
    assert expected and obj.relocations == expected


def test_records_given_directly_become_tables_in_order():
    records = [Relocation(1, 0, 2, 1, -4), Relocation(1, 8, 1, 2, 0), Relocation(3, 0, 1, 1, 16), Relocation(1, 16, 4, 1, -4)]
    obj = ObjectFile("t.o", "x86_64", "0" * 64, [], [], records)
    assert [index for index, _ in obj.relocation_tables] == [1, 3, 1]
    rebuilt = ObjectFile("t.o", "x86_64", "0" * 64, [], [], relocation_tables=obj.relocation_tables)
    assert rebuilt.relocations == records


@pytest.mark.parametrize("path", sorted(str(p) for p in DSL480.rglob("*.o")), ids=lambda p: "/".join(p.split("/")[-2:]))
def test_export_from_the_image_is_the_export_from_the_symbols(path):
    """The loader describes an export from its laid-out image's symbol maps; inspect from the symbol table (which
    has no addresses: the GPU binary's is the laid-out image's)."""
    import dataclasses
    from emu.dsl.exports import discover
    from emu.binary.elf.relocatable import build_image
    obj = load_object(path)
    image = build_image(obj)
    laid_out, = discover(obj, image)
    assert laid_out.binary == image.data_symbols["kernels_binary"]
    assert [dataclasses.replace(laid_out, binary=None)] == discover(obj)


def test_names_at_reads_suffix_shared_and_out_of_range_offsets():
    """Linkers share suffixes: a name may start inside another; past the table it is empty."""
    from emu.binary.elf.reader import _names_at
    table = b"\0kernels_kernel_a\0b\0"
    assert _names_at(table, [0, 1, 9, 16, 18, 40]) == ["", "kernels_kernel_a", "kernel_a", "a", "b", ""]
    assert _names_at(b"\0caf\xc3\xa9\0", [1, 4]) == ["café", "é"]
