"""AArch64 relocations against what GNU ld wrote for the same object.

tests/data/aarch64/refs.o uses every type in emu's AArch64 table against absolute
symbols placed at the edges of each range; refs.expected.json holds the bytes ld
produced when linking it (see that folder's README.md).  Each relocation is recomputed
here with emu's recipe from the .o's original bytes and must equal the linked bytes.
The out-of-range cases go through the precise loop (`relocate_precisely`), so they check the error a user
sees: the type, section, offset and symbol.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from emu.arch.aarch64.relocations import TABLE
from emu.errors import RelocationError
from emu.binary.elf.reader import load_object
from emu.binary.elf.relocatable import plan_sections
from emu.binary.relocation import PAGE, Inputs, relocate_generated, relocate_precisely
from tests import oracles

DATA = Path(__file__).parent.parent / "data" / "aarch64"
EXPECTED = json.loads((DATA / "refs.expected.json").read_text())
REFS = load_object(DATA / "refs.o")
SECTION_INDEX = {section.name: section.index for section in REFS.sections}

# Every type the brief asks for; the task's exports use 260, 275, 277, 282, 283, 286 and 299.
REQUIRED = {257, 258, 259, 260, 261, 262, 263, 264, 265, 266, 267, 268, 269, 273, 274, 275, 276, 277, 278,
            279, 280, 282, 283, 284, 285, 286, 299, 311, 312}


def _case_id(rel) -> str:
    return f"{TABLE[rel.type].name.removeprefix('R_AARCH64_')}@{REFS.section_name(rel.section)}+{rel.offset:#x}"


def test_every_table_type_has_a_linker_reference():
    assert set(TABLE) == REQUIRED
    assert {rel.type for rel in REFS.relocations} == set(TABLE)


@pytest.mark.oracle(oracles.LD)
@pytest.mark.parametrize("rel", REFS.relocations, ids=_case_id)
def test_matches_gnu_ld(rel):
    recipe = TABLE[rel.type]
    section = REFS.sections[rel.section]
    linked = bytes.fromhex(EXPECTED["sections"][section.name]["linked"])
    symbol = REFS.symbols[rel.symbol].name
    slot = EXPECTED["got_slots"].get(symbol, 0)
    inputs = Inputs(S=EXPECTED["symbols"][symbol], A=rel.addend,
                    P=EXPECTED["sections"][section.name]["address"] + rel.offset,
                    GOT=slot, G=0, Page=PAGE)
    patched = bytearray(section.data[rel.offset:rel.offset + recipe.size])
    recipe.apply(patched, 0, *inputs)
    assert patched.hex() == linked[rel.offset:rel.offset + recipe.size].hex()


@pytest.mark.oracle(oracles.LD)
def test_bulk_loop_matches_gnu_ld():
    """The loader's generated loop (every type in one function) patches what ld wrote, field for field."""
    patched = sorted({rel.section for rel in REFS.relocations})
    offsets, image = {}, bytearray()
    for index in patched:
        offsets[index] = len(image)
        image += REFS.sections[index].data
    count = len(REFS.sections)
    base, start, limit = [None] * count, [None] * count, [-1] * count
    for index in patched:
        name = REFS.sections[index].name
        base[index], start[index], limit[index] = EXPECTED["sections"][name]["address"], offsets[index], REFS.sections[index].size
    names = [symbol.name for symbol in REFS.symbols]
    addresses = [EXPECTED["symbols"].get(name, 0) for name in names]
    got_offsets = {index: EXPECTED["got_slots"][name] for index, name in enumerate(names) if name in EXPECTED["got_slots"]}
    plan = plan_sections(REFS, TABLE, frozenset(TABLE), addresses, 0, got_offsets, base, start, limit)
    assert relocate_generated(plan, image)
    for rel in REFS.relocations:
        size = TABLE[rel.type].size
        linked = bytes.fromhex(EXPECTED["sections"][REFS.section_name(rel.section)]["linked"])
        at = offsets[rel.section] + rel.offset
        assert image[at:at + size].hex() == linked[rel.offset:rel.offset + size].hex(), _case_id(rel)


# -- out of range: range.o is `bl far_call; adrp x0, far_page; ldr x1, [x0, :lo12:odd_quad]; ret`
TEXT_BASE = 0x0100_0000


def _relocate(addresses: dict[str, int]) -> bytes:
    obj = load_object(DATA / "range.o")
    text = next(section for section in obj.sections if section.name == ".text")
    image = bytearray(text.data)
    defaults = {"far_call": TEXT_BASE + 0x100, "far_page": TEXT_BASE + 0x2000, "odd_quad": TEXT_BASE + 0x2008}
    defaults.update(addresses)
    count = len(obj.sections)
    address, offset, limit = [None] * count, [None] * count, [-1] * count
    address[text.index], offset[text.index], limit[text.index] = TEXT_BASE, 0, text.size
    plan = plan_sections(obj, TABLE, frozenset(rel.type for rel in obj.relocations),
                         [defaults.get(symbol.name, 0) for symbol in obj.symbols], 0, {}, address, offset, limit)
    relocate_precisely(plan, image)
    return bytes(image)


def test_range_object_relocates_in_range():
    image = _relocate({})
    assert image[:4] == (0x94000000 | 0x40).to_bytes(4, "little")                  # bl +0x100
    assert image[4:8] == (0x90000000 | (2 << 29)).to_bytes(4, "little")            # adrp x0, +2 pages (immlo = 2)
    assert image[8:12] == (0xF9400001 | (1 << 10)).to_bytes(4, "little")           # ldr x1, [x0, #8]


@pytest.mark.parametrize("addresses, name, offset, symbol", [
    ({"far_call": TEXT_BASE + (128 << 20)}, "R_AARCH64_CALL26", 0x0, "far_call"),        # one past +128 MiB - 4
    ({"far_call": TEXT_BASE - (128 << 20) - 4}, "R_AARCH64_CALL26", 0x0, "far_call"),
    ({"far_call": TEXT_BASE + 0x102}, "R_AARCH64_CALL26", 0x0, "far_call"),              # not a whole instruction
    ({"far_page": TEXT_BASE + (4 << 30)}, "R_AARCH64_ADR_PREL_PG_HI21", 0x4, "far_page"),
    ({"far_page": TEXT_BASE - (4 << 30) - 0x1000}, "R_AARCH64_ADR_PREL_PG_HI21", 0x4, "far_page"),
    ({"odd_quad": TEXT_BASE + 0x2004}, "R_AARCH64_LDST64_ABS_LO12_NC", 0x8, "odd_quad"),  # misaligned
])
def test_out_of_range_names_type_section_offset_symbol(addresses, name, offset, symbol):
    with pytest.raises(RelocationError) as raised:
        _relocate(addresses)
    message = str(raised.value)
    assert name in message and f".text+{offset:#x}" in message and symbol in message


def _adrp(pages: int) -> bytes:
    """adrp x0 with a signed 21-bit page count: immlo in bits 29-30, immhi in bits 5-23."""
    imm = pages & 0x1F_FFFF
    return (0x90000000 | ((imm & 3) << 29) | ((imm >> 2) << 5)).to_bytes(4, "little")


def test_range_limits_are_inclusive_where_the_psabi_says():
    """At the last reachable address each field holds the extreme value, not a wrapped one."""
    image = _relocate({"far_call": TEXT_BASE + (128 << 20) - 4, "far_page": TEXT_BASE + (4 << 30) - 0x1000})
    assert image[:4] == (0x94000000 | 0x1FF_FFFF).to_bytes(4, "little")            # bl +128 MiB - 4 (imm26 max)
    assert image[4:8] == _adrp((1 << 20) - 1)                                       # adrp +4 GiB - 1 page
    image = _relocate({"far_call": TEXT_BASE - (128 << 20), "far_page": TEXT_BASE - (4 << 30)})
    assert image[:4] == (0x94000000 | 0x200_0000).to_bytes(4, "little")            # bl -128 MiB (imm26 min)
    assert image[4:8] == _adrp(-(1 << 20))                                          # adrp -4 GiB


@pytest.mark.parametrize("number, size_log2", [(278, 0), (284, 1), (285, 2), (286, 3), (299, 4), (312, 3)])
def test_scaled_lo12_checks_alignment(number, size_log2):
    recipe = TABLE[number]

    def encode(value: int) -> bytes:     # S (LO12 forms) or GOT (the GOT form) such that the formula gives `value`
        word = bytearray((0xF9400000).to_bytes(4, "little"))
        recipe.apply(word, 0, *Inputs(S=value, A=0, P=0, GOT=value, G=0, Page=PAGE))
        return bytes(word)
    assert encode(0xFF0) == (0xF9400000 | ((0xFF0 >> size_log2) << 10)).to_bytes(4, "little")
    if size_log2:
        with pytest.raises(Exception, match="aligned"):
            encode(0xFF0 + (1 << (size_log2 - 1)))
