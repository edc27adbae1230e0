"""The x86-64 relocation table: formulas, field widths, range checks and precise errors."""
from __future__ import annotations

import struct

import pytest

from emu.arch.x86_64.relocations import TABLE
from emu.errors import RelocationError
from emu.binary.elf.reader import Relocation, Section, Symbol, ObjectFile
from emu.binary import relocation
from emu.binary.elf.relocatable import plan_sections
from emu.binary.relocation import PAGE, Inputs, relocate_precisely

REQUIRED = {1: "R_X86_64_64", 2: "R_X86_64_PC32", 4: "R_X86_64_PLT32", 9: "R_X86_64_GOTPCREL", 10: "R_X86_64_32",
            11: "R_X86_64_32S", 24: "R_X86_64_PC64", 25: "R_X86_64_GOTOFF64", 26: "R_X86_64_GOTPC32", 27: "R_X86_64_GOT64",
            29: "R_X86_64_GOTPC64", 41: "R_X86_64_GOTPCRELX", 42: "R_X86_64_REX_GOTPCRELX"}

S, A, P, GOT, G = 0x0100_2000, 0x10, 0x0100_0100, 0x0100_8000, 0x18
INPUTS = Inputs(S=S, A=A, P=P, GOT=GOT, G=G, Page=PAGE)

EXPECTED = {  # psABI formulas evaluated by hand
    1: S + A, 2: S + A - P, 4: S + A - P, 9: G + GOT + A - P, 10: S + A, 11: S + A, 24: S + A - P,
    25: S + A - GOT, 26: GOT + A - P, 27: G + A, 29: GOT + A - P, 41: G + GOT + A - P, 42: G + GOT + A - P,
}


@pytest.mark.parametrize("number", sorted(REQUIRED))
def test_required_types_have_psabi_names_and_formulas(number):
    recipe = TABLE[number]
    assert recipe.name == REQUIRED[number]
    assert eval(recipe.formula, {}, INPUTS._asdict()) == EXPECTED[number]     # the formula text as the psABI writes it
    encoded = bytearray(recipe.size + 4)                                      # the loader's own patch, guarded past the field
    recipe.apply(encoded, 0, *INPUTS)
    assert encoded[recipe.size:] == bytes(4)
    fmt = {8: "<q", 4: "<i" if number not in (10,) else "<I"}[recipe.size]
    assert struct.unpack_from(fmt, encoded)[0] == EXPECTED[number]


def _object(rel_type: int, offset: int = 0, addend: int = 0, symbol_index: int = 1, text_size: int = 16) -> ObjectFile:
    sections = [Section(0, "", 0, 0, 0, 1, 0, 0, b""),
                Section(1, ".text", 1, 0x6, text_size, 16, 0, 0, bytes(text_size))]
    symbols = [Symbol(0, "", 0, 0, 0, 0, 0), Symbol(1, "far_away", 0, 0, 0, 1, 0)]
    return ObjectFile("t.o", "x86_64", "0", sections, symbols, [Relocation(1, offset, rel_type, symbol_index, addend)])


def _apply(obj: ObjectFile, symbol_value: int = 0x1_0000_0000):
    """The precise loop alone, .text at 0x1000000, every symbol at `symbol_value`, GOT at 0x1008000 with G = 0."""
    image = bytearray(obj.sections[1].size)
    plan = plan_sections(obj, TABLE, frozenset(rel.type for rel in obj.relocations), [symbol_value] * len(obj.symbols),
                         0x1008000, dict.fromkeys(range(len(obj.symbols)), 0), [None, 0x1000000], [None, 0],
                         [-1, obj.sections[1].size])
    relocate_precisely(plan, image)
    return image


def test_out_of_range_names_type_section_offset_and_symbol():
    with pytest.raises(RelocationError) as error:
        _apply(_object(2, offset=4))                 # PC32 to an address 4 GiB away
    text = str(error.value)
    assert "R_X86_64_PC32" in text and ".text+0x4" in text and "far_away" in text and "out of range" in text


def test_unsigned_32_rejects_negative_and_large():
    with pytest.raises(RelocationError, match="R_X86_64_32 .*out of range"):
        _apply(_object(10))
    image = _apply(_object(10), symbol_value=0xFFFF_FFF0)    # fits zero-extended
    assert struct.unpack_from("<I", image, 0)[0] == 0xFFFF_FFF0 and image[4:] == bytes(12)


def test_unknown_type_is_an_error_not_a_warning():
    with pytest.raises(RelocationError) as error:
        _apply(_object(3, offset=8))                  # R_X86_64_GOT32 is deliberately unimplemented
    assert "unsupported relocation type 3" in str(error.value) and ".text+0x8" in str(error.value)


def test_unknown_type_through_the_loader_compiles_no_loop():
    """A type emu lacks is named by the precise loop; hostile types do not fill the generated loop cache."""
    from emu.binary.elf.relocatable import build_image
    before = len(relocation._LOOPS)
    with pytest.raises(RelocationError, match=r"unsupported relocation type 3 at \.text\+0x8"):
        build_image(_object(3, offset=8))
    assert len(relocation._LOOPS) == before


def test_relocation_past_section_end_is_an_error():
    with pytest.raises(RelocationError, match="past the end of the section"):
        _apply(_object(1, offset=12))                 # an 8-byte field at 12 of a 16-byte section


def test_relocation_in_an_empty_loaded_section_is_an_error():
    """A zero-size SHF_ALLOC section is not laid out; a relocation in it is refused, not a KeyError (fuzz seed 8)."""
    from emu.binary.elf.relocatable import build_image
    obj = _object(2, text_size=0)
    obj.sections.append(Section(2, ".data", 1, 0x3, 16, 8, 0, 0, bytes(16)))
    with pytest.raises(RelocationError, match=r"R_X86_64_PC32 at \.text\+0x0 .*past the end of the section \(0x0 bytes\)"):
        build_image(obj)


@pytest.mark.parametrize("number", sorted(TABLE))
def test_bulk_loop_patches_each_type_as_the_one_by_one_loop(number, monkeypatch):
    """Every x86-64 type through the generated loop, byte for byte as its recipe applied alone."""
    from emu.binary.elf import relocatable as layout
    generated = relocation.relocate_generated
    obj = _object(number, offset=4, addend=-4)
    obj.symbols[1] = Symbol(1, "near", 0x20, 0, 2, 1, 1)                # a function in .text: every field fits
    obj.sections[1] = obj.sections[1]._replace(data=bytes(range(16)))
    outcomes = []
    for bulk in (True, False):
        monkeypatch.setattr(relocation, "relocate_generated", generated if bulk else (lambda plan, image: False))
        try:
            outcomes.append(layout.build_image(obj).segments)
        except RelocationError as error:           # R_X86_64_16 of a code address: out of range either way
            outcomes.append(str(error))
    assert outcomes[0] == outcomes[1]


def test_symbol_without_an_address_is_refused_even_where_the_formula_ignores_s():
    """GOTPC64 (GOT + A - P) never reads S, yet a COMMON symbol is still an error, in the bulk loop too."""
    from emu.binary.elf.relocatable import build_image
    obj = _object(29)
    obj.symbols[1] = Symbol(1, "common_thing", 8, 8, 1, 1, 0xFFF2)
    with pytest.raises(RelocationError, match="refers to common_thing, a COMMON symbol"):
        build_image(obj)


def test_real_object_got_base_and_got64_slots(tmp_path):
    """`lea -7(%rip)` + GOTPC64 (addend 9) must yield the GOT base exactly, and GOT64 the slot offset."""
    from emu.binary.elf.relocatable import build_image
    from emu.binary.elf.reader import load_object
    from conftest import fixture
    obj = load_object(fixture("x86_64", "carveout_25"))
    image = build_image(obj)
    text = next(s for s in obj.sections if s.name == ".ltext")
    base = next(seg for seg in image.segments if seg.perms & 4).address
    data = next(seg for seg in image.segments if seg.perms & 4).data
    seen = set()
    for rel in obj.relocations:
        if rel.section != text.index:
            continue
        field = struct.unpack_from("<q", data, rel.offset)[0]
        if rel.type == 29:      # GOTPC64 at P: GOT + A - P (A = 9 reaches back to the lea -7(%rip) before it)
            assert field == image.got_base - (base + rel.offset) + rel.addend
        if rel.type == 27:      # GOT64: slot offset from GOT base; the slot holds the symbol's address
            slot = image.got_base + field - rel.addend
            holder = next(seg for seg in image.segments if seg.address <= slot < seg.address + len(seg.data))
            held = struct.unpack_from("<Q", holder.data, slot - holder.address)[0]
            name = obj.symbols[rel.symbol].name
            assert held in (image.functions.get(name), image.data_symbols.get(name)) or \
                image.locate(held) == f"{name} (stub)", (rel, name, hex(held))
        seen.add(rel.type)
    assert {27, 29} <= seen, seen
