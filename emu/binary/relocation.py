"""Relocations as data: a recipe per psABI type, one plan per object, and `relocate`.

Each architecture module provides a table `{number: Recipe}`.  A recipe holds its
psABI formula as written in the spec ("S + A - P") and a field that says how the value
is stored (a data word, or bits of an instruction) with its range check.

`layout.build_image` gathers what one object's relocation needs into a
`RelocationPlan` (the formula inputs of every symbol and section) and calls
`relocate(plan, image)`.  That runs one generated loop for the set of types the object
uses, every formula and field inline; the loop gives up on anything unusual, and the
precise loop then applies the recipes one by one, so that anything the table lacks, or
a value that does not fit, is a RelocationError naming the type, section, offset and
symbol: never a warning.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from functools import cached_property, partial
from operator import and_
from typing import Callable, NamedTuple

from ..errors import RelocationError
from ..support.hotpath import generated_function
from .elf.reader import RELA_ENTRY, SHN_COMMON, SHT_NOBITS, ObjectFile


class Inputs(NamedTuple):
    """The quantities a psABI formula may use: the one list of them (generated code takes these names)."""

    S: int      # the symbol's address (its stub for an undefined symbol)
    A: int      # the addend
    P: int      # the address of the field being patched
    GOT: int    # the GOT's base address
    G: int      # the offset of the symbol's GOT slot from GOT
    Page: Callable[[int], int]


FORMULA_INPUTS = Inputs._fields
# Page(x) of the psABIs, x & ~0xFFF, as a C-level callable: formulas call it twice per ADRP.
PAGE = partial(and_, ~0xFFF)


class FieldOverflow(Exception):
    """Raised by a field when the value does not fit it."""


def _range_error(value: int, bits: int, signed: bool | None) -> FieldOverflow:
    kind = "" if signed is None else ("signed " if signed else "unsigned ")
    return FieldOverflow(f"value {value:#x} does not fit a {kind}{bits}-bit field")


def _bounds(bits: int, signed: bool | None) -> tuple[int, int]:
    """[low, high] a value may take; signed=None accepts either interpretation."""
    if signed is None:
        return -(1 << (bits - 1)), (1 << bits) - 1
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


# What every field's lines may use besides their own `names`.
# Each format's own pack_into / unpack_from (a call through struct.pack_into looks its format up first).
_FIELD_NAMES = {"pack_u64": struct.Struct("<Q").pack_into, "pack_u32": struct.Struct("<I").pack_into,
                "pack_u16": struct.Struct("<H").pack_into, "unpack_u32": struct.Struct("<I").unpack_from,
                "FieldOverflow": FieldOverflow, "_range_error": _range_error}


@dataclass(frozen=True)
class Field:
    """How a value is stored: source lines that read `value` and write `image` at `at`."""

    lines: tuple[str, ...]
    names: dict = field(default_factory=dict)     # what the lines refer to besides _FIELD_NAMES


def word(bits: int, signed: bool | None) -> Field:
    """A little-endian data field; signed=None accepts either interpretation (like R_X86_64_32 vs 32S).

    64-bit fields are not range-checked: address arithmetic wraps, as in a linker.
    """
    pack = {64: "pack_u64", 32: "pack_u32", 16: "pack_u16"}[bits]
    mask = (1 << bits) - 1
    lines = []
    if bits != 64:
        low, high = _bounds(bits, signed)
        lines.append(f"if not {low} <= value <= {high}: raise _range_error(value, {bits}, {signed})")
    lines.append(f"{pack}(image, at, value & {mask:#x})")
    return Field(tuple(lines))


def instruction_field(bits: int, shift: int, signed: bool, scale: int = 0, check: bool = True,
                      align: int = 0, place: Callable[[int, int], int] | None = None) -> Field:
    """A field inside a 32-bit little-endian instruction word.

    The value must have its low `align` bits clear, is shifted right by `scale`,
    range-checked in `bits` bits unless `check` is False (the psABI's _NC forms), and
    placed at `shift`, or by `place(insn, field)` for split fields such as ADRP's.
    """
    mask = (1 << bits) - 1
    lines = []
    if align:
        lines.append(f"if value & {(1 << align) - 1}: raise FieldOverflow(f'value {{value:#x}} is not {1 << align}-byte aligned')")
    lines.append(f"scaled = value >> {scale}")
    if check:
        low, high = _bounds(bits, signed)
        lines.append(f"if not {low} <= scaled <= {high}: raise _range_error(scaled, {bits}, {signed})")
    lines.append("insn, = unpack_u32(image, at)")
    if place is not None:
        lines.append(f"insn = place(insn, scaled & {mask:#x})")
    else:
        lines.append(f"insn = (insn & {~(mask << shift) & 0xFFFFFFFF:#x}) | ((scaled & {mask:#x}) << {shift})")
    lines.append("pack_u32(image, at, insn & 0xFFFFFFFF)")
    return Field(tuple(lines), {"place": place} if place is not None else {})


@dataclass(frozen=True, eq=False)      # compared and hashed by identity: the loop cache is keyed by recipes
class Recipe:
    name: str
    size: int                 # bytes of the patched field
    formula: str              # the psABI formula over FORMULA_INPUTS
    field: Field
    uses_got: bool = False

    @cached_property
    def inputs(self) -> frozenset[str]:
        """The formula inputs the formula reads (refusing any name that is not one)."""
        used = frozenset(compile(self.formula, f"<{self.name} formula>", "eval").co_names)
        if not used <= set(FORMULA_INPUTS):
            raise ValueError(f"{self.name}: formula {self.formula!r} uses {sorted(used - set(FORMULA_INPUTS))}, not formula inputs")
        return used

    # Compiled on first use, not when the architecture tables are imported: a run whose
    # image comes from the store never relocates.  Generated, not interpreted, because
    # a recipe is formula text plus field lines (see hotpath).
    @cached_property
    def apply(self) -> Callable:
        """apply(image, at, S, A, P, GOT, G, Page): patch one field (the precise loop's call per relocation)."""
        return generated_function("apply", ("image", "at", *FORMULA_INPUTS), (f"value = {self.formula}", *self.field.lines),
                                  {**_FIELD_NAMES, **self.field.names}, f"relocation {self.name}")


@dataclass
class RelocationPlan:
    """What relocating one laid-out object needs; every list is indexed by symbol or section number."""

    obj: ObjectFile                      # its RELA tables, and its names for error messages
    table: dict[int, Recipe]             # the architecture's recipes by psABI number
    kinds: frozenset[int]                # the relocation types the object uses
    symbol_address: list                 # S by symbol index; None: the symbol has no address
    got_base: int                        # GOT
    got_offset: dict[int, int]           # G by symbol index, for the symbols with a GOT slot
    section_address: list                # where each section is laid out (None: it is not)
    section_offset: list                 # where each section starts in the image buffer
    section_limit: list                  # bytes a relocation may patch: -1 for a section not laid out, or NOBITS

    def address_of(self, symbol: int) -> int:
        """S for one symbol, or the RelocationError that says why it has none."""
        S = self.symbol_address[symbol]
        if S is None:
            obj = self.obj
            entry = obj.symbols[symbol]
            where = "a COMMON symbol" if entry.shndx == SHN_COMMON else f"in the non-loaded section {obj.section_name(entry.shndx)}"
            raise RelocationError(f"a relocation refers to {obj.symbol_label(symbol)}, {where}, which emu does not lay out", path=obj.path)
        return S


def relocate(plan: RelocationPlan, image: bytearray) -> None:
    """Patch `image` for every relocation of `plan.obj`, or raise the RelocationError of the first at fault.

    The generated loop does the work; whatever makes it give up, the precise loop
    diagnoses.  Re-applying after a partial generated run is safe: formulas read only
    the plan, and fields overwrite their bits.
    """
    if not relocate_generated(plan, image):
        relocate_precisely(plan, image)


def relocate_generated(plan: RelocationPlan, image: bytearray) -> bool:
    """Patch `image` in one generated loop; False if anything needs the precise loop."""
    table, kinds = plan.table, plan.kinds
    if not kinds <= table.keys():
        return False          # a type emu lacks: the precise loop names it (and no loop is compiled per junk type)
    key = tuple(sorted(kinds))
    key += tuple(map(table.__getitem__, key))
    loop = _LOOPS.get(key)
    if loop is None:
        if len(_LOOPS) >= _LOOPS_MAX:
            _LOOPS.clear()
        loop = _LOOPS[key] = _generated_loop(table, kinds)
    try:
        loop(plan.obj.relocation_tables, image, plan.symbol_address, plan.section_address, plan.section_offset,
             plan.section_limit, plan.got_base, plan.got_offset, PAGE)
    except Exception:     # noqa: BLE001 - every failure is diagnosed by the precise loop
        return False
    return True


def relocate_precisely(plan: RelocationPlan, image: bytearray) -> None:
    """Apply the recipes one by one, checking each relocation; the first at fault raises its exact error."""
    obj, table = plan.obj, plan.table

    def where(rel) -> str:     # built only for error messages
        return f"at {obj.section_name(rel.section)}+{rel.offset:#x} against {obj.symbol_label(rel.symbol)}"

    for rel in obj.relocations:
        index, offset, kind, symbol, addend = rel
        recipe = table.get(kind)
        if recipe is None:
            raise RelocationError(f"unsupported relocation type {kind} {where(rel)}; emu's table for {obj.arch} does not implement it", path=obj.path)
        if obj.sections[index].type == SHT_NOBITS:
            raise RelocationError(f"relocation {recipe.name} {where(rel)} patches a NOBITS section", path=obj.path)
        limit = max(plan.section_limit[index], 0)          # a section not laid out: the size check names it
        if offset + recipe.size > limit:
            raise RelocationError(f"relocation {recipe.name} {where(rel)} patches {recipe.size} bytes past the end of the section ({limit:#x} bytes)", path=obj.path)
        S = plan.address_of(symbol)
        G = plan.got_offset[symbol] if recipe.uses_got else 0
        try:
            recipe.apply(image, plan.section_offset[index] + offset, S, addend, plan.section_address[index] + offset,
                         plan.got_base, G, PAGE)
        except FieldOverflow as error:
            raise RelocationError(f"relocation {recipe.name} {where(rel)} is out of range: {error}", path=obj.path) from None


_LOOPS: dict[tuple, Callable] = {}     # (types..., their recipes...) -> the generated loop
_LOOPS_MAX = 256


class _GiveUp(Exception):
    """A relocation the generated loop leaves to the precise loop (which names the problem)."""


def _generated_loop(table: dict[int, Recipe], kinds: frozenset[int]) -> Callable:
    """One loop over an object's RELA tables with a branch per type in `kinds`, formulas and fields inline.

    Generated (see hotpath) because a Python call per relocation, into a recipe's own
    function, costs more than the formula: an object has hundreds of relocations.
    """
    lines = ["for index, entries in tables:",
             "    base, start, limit = section_address[index], section_offset[index], section_limit[index]",
             "    for offset, kind, symbol, A in iter_unpack(entries):",
             "        at = start + offset"]
    branch = "if"
    names = {**_FIELD_NAMES, "_GiveUp": _GiveUp, "iter_unpack": RELA_ENTRY.iter_unpack}
    for kind in table:                       # the table's order: only the types this object uses
        if kind not in kinds:
            continue
        recipe = table[kind]
        lines.append(f"        {branch} kind == {kind}:")
        lines.append(f"            if offset + {recipe.size} > limit: raise _GiveUp")     # limit -1: not laid out
        uses = recipe.inputs
        if "S" in uses:              # None + ... fails by itself; a formula without S must still refuse S = None
            lines.append("            S = symbol_address[symbol]")
        else:
            lines.append("            if symbol_address[symbol] is None: raise _GiveUp")
        if "P" in uses:
            lines.append("            P = base + offset")   # reached only past the limit check: the section is laid out
        if recipe.uses_got:
            lines.append("            G = got_offset[symbol]")
        elif "G" in uses:
            lines.append("            G = 0")
        lines.append(f"            value = {recipe.formula}")
        field_lines = recipe.field.lines
        for name, value in recipe.field.names.items():      # each type's helpers under their own names
            alias = f"{name}_{kind}"
            names[alias] = value
            field_lines = tuple(re.sub(rf"\b{name}\b", alias, line) for line in field_lines)
        lines.extend(f"            {line}" for line in field_lines)
        branch = "elif"
    lines.extend(["        else:", "            raise _GiveUp"] if branch == "elif" else ["        raise _GiveUp"])
    parameters = ("tables", "image", "symbol_address", "section_address", "section_offset", "section_limit",
                  "GOT", "got_offset", "Page")
    return generated_function("relocate", parameters, lines, names, f"relocation loop {sorted(kinds)}")
