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
    size: int                                     # bytes of the patched field
    calc: Callable[[Inputs], int]
    patch: Callable[[bytearray, int, int], None]  # (image, field offset, value): writes the field in place
    uses_got: bool = False

    def encode(self, old: bytes, value: int) -> bytes:
        """The field's new bytes, given its old ones (for tests and tools; the loader patches in place)."""
        buffer = bytearray(old)
        self.patch(buffer, 0, value)
        return bytes(buffer)


def _checked(value: int, bits: int, signed: bool) -> int:
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if not low <= value <= high:
        raise FieldOverflow(f"value {value:#x} does not fit a {'signed' if signed else 'unsigned'} {bits}-bit field")
    return value & ((1 << bits) - 1)


def word(bits: int, signed: bool | None) -> Callable[[bytearray, int, int], None]:
    """A little-endian data field; signed=None accepts either interpretation (like R_X86_64_32 vs 32S)."""
    fmt = {64: "<Q", 32: "<I", 16: "<H"}[bits]
    pack_into, mask = struct.pack_into, (1 << bits) - 1

    def patch(image: bytearray, offset: int, value: int) -> None:
        if signed is None:
            if not -(1 << (bits - 1)) <= value < (1 << bits):
                raise FieldOverflow(f"value {value:#x} does not fit a {bits}-bit field")
            pack_into(fmt, image, offset, value & mask)
        elif bits == 64:
            pack_into(fmt, image, offset, value & mask)
        else:
            pack_into(fmt, image, offset, _checked(value, bits, signed))

    return patch


def instruction_field(bits: int, shift: int, signed: bool, scale: int = 0, check: bool = True,
                      align: int = 0, place: Callable[[int, int], int] | None = None) -> Callable[[bytearray, int, int], None]:
    """A field inside a 32-bit little-endian instruction word.

    The value is shifted right by `scale` (after an alignment check on its low bits),
    range-checked in `bits` bits unless `check` is False (the psABI's _NC forms), and
    placed at `shift`, or by `place(insn, field)` for split fields such as ADRP's.
    """
    mask = (1 << bits) - 1
    pack_into, unpack_from = struct.pack_into, struct.unpack_from

    def patch(image: bytearray, offset: int, value: int) -> None:
        if align and value & ((1 << align) - 1):
            raise FieldOverflow(f"value {value:#x} is not {1 << align}-byte aligned")
        scaled = value >> scale
        field = _checked(scaled, bits, signed) if check else scaled & mask
        insn, = unpack_from("<I", image, offset)
        insn = place(insn, field) if place else (insn & ~(mask << shift)) | (field << shift)
        pack_into("<I", image, offset, insn & 0xFFFFFFFF)

    return patch


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
        inputs = new(Inputs, (S, addend, section_base[index] + offset, got_base,
                              got_slot(symbol) - got_base if recipe.uses_got else 0, page))
        try:
            recipe.patch(image, section_offset[index] + offset, recipe.calc(inputs))
        except FieldOverflow as error:
            raise RelocationError(f"relocation {recipe.name} {where(rel)} is out of range: {error}", path=obj.path) from None
