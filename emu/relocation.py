"""Relocations as data: a recipe per psABI type, and the one loop that applies them.

Each architecture module provides a table `{number: Recipe}`.  A recipe computes the
value from the usual psABI quantities and an encoder writes it into its field with a
range check.  Anything the table lacks, or a value that does not fit, is a
RelocationError naming the type, section, offset and symbol: never a warning.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Callable, NamedTuple

from .errors import RelocationError


class Inputs(NamedTuple):
    """The quantities a psABI formula may use."""

    S: int      # the symbol's address (its stub for an undefined symbol)
    A: int      # the addend
    P: int      # the address of the field being patched
    GOT: int    # the GOT's base address
    G: int      # the offset of the symbol's GOT slot from GOT
    Page: Callable[[int], int]


class FieldOverflow(Exception):
    """Raised by an encoder when the value does not fit its field."""


@dataclass(frozen=True)
class Recipe:
    name: str
    size: int                               # bytes of the patched field
    calc: Callable[[Inputs], int]
    encode: Callable[[bytes, int], bytes]   # (old field bytes, value) -> new field bytes
    uses_got: bool = False


def _checked(value: int, bits: int, signed: bool) -> int:
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if not low <= value <= high:
        raise FieldOverflow(f"value {value:#x} does not fit a {'signed' if signed else 'unsigned'} {bits}-bit field")
    return value & ((1 << bits) - 1)


def word(bits: int, signed: bool | None) -> Callable[[bytes, int], bytes]:
    """A little-endian data field; signed=None accepts either interpretation (like R_X86_64_32 vs 32S)."""
    fmt = {64: "<Q", 32: "<I", 16: "<H"}[bits]

    def encode(_old: bytes, value: int) -> bytes:
        if signed is None:
            if not -(1 << (bits - 1)) <= value < (1 << bits):
                raise FieldOverflow(f"value {value:#x} does not fit a {bits}-bit field")
            return struct.pack(fmt, value & ((1 << bits) - 1))
        if bits == 64:
            return struct.pack(fmt, value & ((1 << 64) - 1))
        return struct.pack(fmt, _checked(value, bits, signed))

    return encode


def instruction_field(bits: int, shift: int, signed: bool, scale: int = 0, check: bool = True,
                      align: int = 0, place: Callable[[int, int], int] | None = None) -> Callable[[bytes, int], bytes]:
    """A field inside a 32-bit little-endian instruction word.

    The value is shifted right by `scale` (after an alignment check on its low bits),
    range-checked in `bits` bits unless `check` is False (the psABI's _NC forms), and
    placed at `shift`, or by `place(insn, field)` for split fields such as ADRP's.
    """
    mask = (1 << bits) - 1

    def encode(old: bytes, value: int) -> bytes:
        if align and value & ((1 << align) - 1):
            raise FieldOverflow(f"value {value:#x} is not {1 << align}-byte aligned")
        scaled = value >> scale
        field = _checked(scaled, bits, signed) if check else scaled & mask
        insn, = struct.unpack("<I", old)
        insn = place(insn, field) if place else (insn & ~(mask << shift)) | (field << shift)
        return struct.pack("<I", insn & 0xFFFFFFFF)

    return encode


def apply_relocations(obj, image: bytearray, section_base: dict[int, int], section_offset: dict[int, int],
                      symbol_address: Callable[[int], int], got_base: int, got_slot: Callable[[int], int],
                      table: dict[int, Recipe], page: Callable[[int], int], image_base: int) -> None:
    """Patch `image` (the laid-out object) for every relocation of `obj`."""
    def where(rel) -> str:     # built only for error messages: the hot loop never formats
        return f"at {obj.section_name(rel.section)}+{rel.offset:#x} against {obj.symbol_label(rel.symbol)}"

    sections = obj.sections
    addresses: dict[int, int] = {}      # symbol index -> S, resolved once per symbol
    new = tuple.__new__
    for rel in obj.relocations:
        index, offset, kind, symbol, addend = rel
        recipe = table.get(kind)
        if recipe is None:
            raise RelocationError(f"unsupported relocation type {kind} {where(rel)}; emu's table for {obj.arch} does not implement it", path=obj.path)
        section = sections[index]
        size = recipe.size
        if offset + size > section.size:
            raise RelocationError(f"relocation {recipe.name} {where(rel)} patches {size} bytes past the end of the section ({section.size:#x} bytes)", path=obj.path)
        if section.type == 8:  # NOBITS
            raise RelocationError(f"relocation {recipe.name} {where(rel)} patches a NOBITS section", path=obj.path)
        S = addresses.get(symbol)
        if S is None:
            S = addresses[symbol] = symbol_address(symbol)
        start = section_offset[index] + offset
        inputs = new(Inputs, (S, addend, section_base[index] + offset, got_base,
                              got_slot(symbol) - got_base if recipe.uses_got else 0, page))
        try:
            image[start:start + size] = recipe.encode(image[start:start + size], recipe.calc(inputs))
        except FieldOverflow as error:
            raise RelocationError(f"relocation {recipe.name} {where(rel)} is out of range: {error}", path=obj.path) from None
