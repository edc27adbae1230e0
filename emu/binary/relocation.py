"""Relocations as data: a recipe per psABI type, one plan per object, and `relocate`.

Each architecture module provides a table `{number: Recipe}`.  A recipe holds its
psABI formula as written in the spec ("S + A - P") and a field that says how the value
is stored (a data word, or bits of an instruction) with its range check.

A format's layout (emu.binary.elf.relocatable for ET_REL) gathers what one binary's
relocation needs into a `RelocationPlan` and calls `relocate(plan, image)`.  The plan
addresses every place by its virtual address P: each RELA table comes with the P of its
r_offset 0 (`Places`), and where each address range sits in the image buffer
(`Window`) gives the byte to patch.  So the static relocations of an object (r_offset
counts from its section) and the dynamic ones of a shared library (r_offset is an
address) share the recipes and the loops.  `relocate` runs one generated loop for the
set of types the binary uses, every formula and field inline; the loop gives up on
anything unusual, and the precise loop then applies the recipes one by one, so that
anything the table lacks, or a value that does not fit, is a RelocationError naming the
type, section, offset and symbol: never a warning.
"""
from __future__ import annotations

import bisect
import re
import struct
from dataclasses import dataclass, field
from functools import cached_property, partial
from operator import and_
from typing import Callable, NamedTuple

from ..errors import RelocationError
from ..support.hotpath import generated_function
from .elf.reader import RELA_ENTRY, SHN_COMMON, ObjectFile


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


class Places(NamedTuple):
    """One RELA table with its places as virtual addresses: an entry patches P = base + r_offset.

    An ET_REL section's table has its section's address as base and may patch that
    section only; a shared library's r_offset is an address already (base: where it is loaded).
    """

    entries: bytes                       # packed Elf64_Rela (RELA_ENTRY)
    base: int                            # P of r_offset 0
    start: int                           # [start, end): the addresses its relocations may patch (empty: none)
    end: int
    section: int                         # errors name a place as this section's name + r_offset
    refusal: str | None = None           # why none of them may patch (e.g. "patches a NOBITS section")


class Window(NamedTuple):
    """Where an address range sits in the image buffer: [address, address + size) at `offset`."""

    address: int
    size: int
    offset: int


@dataclass
class RelocationPlan:
    """What relocating one laid-out binary needs; symbol lists are indexed by symbol number."""

    obj: ObjectFile                      # its names for error messages (sections, symbols), path and arch
    table: dict[int, Recipe]             # the architecture's recipes by psABI number
    kinds: frozenset[int]                # the relocation types the binary uses
    symbol_address: list                 # S by symbol index; None: the symbol has no address
    got_base: int                        # GOT
    got_offset: dict[int, int]           # G by symbol index, for the symbols with a GOT slot
    places: list[Places]                 # every RELA table, in order, its places as addresses
    windows: list[Window]                # the buffer's address ranges (no two overlap)

    def address_of(self, symbol: int) -> int:
        """S for one symbol, or the RelocationError that says why it has none."""
        S = self.symbol_address[symbol]
        if S is None:
            obj = self.obj
            entry = obj.symbols[symbol]
            where = "a COMMON symbol" if entry.shndx == SHN_COMMON else f"in the non-loaded section {obj.section_name(entry.shndx)}"
            raise RelocationError(f"a relocation refers to {obj.symbol_label(symbol)}, {where}, which emu does not lay out", path=obj.path)
        return S

    def shifts(self) -> list[int | None]:
        """Per table, what turns its places into buffer offsets (P - shift), from the window that holds its
        whole range: None where no window does, 0 where it may patch nothing."""
        windows = sorted(self.windows)
        starts = [window.address for window in windows]
        shifts: list[int | None] = []
        for places in self.places:
            shift = 0 if places.end <= places.start else None
            if shift is None:
                index = bisect.bisect_right(starts, places.start) - 1
                if index >= 0 and places.end <= windows[index].address + windows[index].size:
                    shift = windows[index].address - windows[index].offset
            shifts.append(shift)
        return shifts


def relocate(plan: RelocationPlan, image: bytearray) -> None:
    """Patch `image` for every relocation of `plan`, or raise the RelocationError of the first at fault.

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
    # Per table, in r_offset terms: where its entry 0 is in the buffer, the lowest r_offset and the end.
    tables = [(places.entries, places.base, None if shift is None else places.base - shift,
               places.start - places.base, places.end - places.base) for places, shift in zip(plan.places, plan.shifts())]
    below = any(places.start > places.base for places in plan.places)    # an r_offset may fall below its range
    numbers = tuple(sorted(kinds))
    key = (below, *numbers, *map(table.__getitem__, numbers))
    loop = _LOOPS.get(key)
    if loop is None:
        if len(_LOOPS) >= _LOOPS_MAX:
            _LOOPS.clear()
        loop = _LOOPS[key] = _generated_loop(table, kinds, below)
    try:
        loop(tables, image, plan.symbol_address, plan.got_base, plan.got_offset, PAGE)
    except Exception:     # noqa: BLE001 - every failure is diagnosed by the precise loop
        return False
    return True


def relocate_precisely(plan: RelocationPlan, image: bytearray) -> None:
    """Apply the recipes one by one, checking each relocation; the first at fault raises its exact error."""
    obj, table = plan.obj, plan.table

    def at(section: int, offset: int, symbol: int) -> str:     # built only for error messages
        return f"at {obj.section_name(section)}+{offset:#x} against {obj.symbol_label(symbol)}"

    for places, shift in zip(plan.places, plan.shifts()):
        base, start, end = places.base, places.start, places.end
        for offset, kind, symbol, addend in RELA_ENTRY.iter_unpack(places.entries):
            recipe = table.get(kind)
            if recipe is None:
                raise RelocationError(f"unsupported relocation type {kind} {at(places.section, offset, symbol)}; emu's table for {obj.arch} does not implement it", path=obj.path)
            name = recipe.name
            if places.refusal is not None:
                raise RelocationError(f"relocation {name} {at(places.section, offset, symbol)} {places.refusal}", path=obj.path)
            P = base + offset
            if P < start:
                raise RelocationError(f"relocation {name} {at(places.section, offset, symbol)} patches {P:#x}, before the section ({start:#x})", path=obj.path)
            if P + recipe.size > end:
                raise RelocationError(f"relocation {name} {at(places.section, offset, symbol)} patches {recipe.size} bytes past the end of the section ({max(end - start, 0):#x} bytes)", path=obj.path)
            if shift is None:
                raise RelocationError(f"relocation {name} {at(places.section, offset, symbol)} patches {P:#x}, which no segment holds", path=obj.path)
            S = plan.address_of(symbol)
            G = plan.got_offset[symbol] if recipe.uses_got else 0
            try:
                recipe.apply(image, P - shift, S, addend, P, plan.got_base, G, PAGE)
            except FieldOverflow as error:
                raise RelocationError(f"relocation {name} {at(places.section, offset, symbol)} is out of range: {error}", path=obj.path) from None


_LOOPS: dict[tuple, Callable] = {}     # (below, types..., their recipes...) -> the generated loop
_LOOPS_MAX = 256


class _GiveUp(Exception):
    """A relocation the generated loop leaves to the precise loop (which names the problem)."""


def _generated_loop(table: dict[int, Recipe], kinds: frozenset[int], below: bool) -> Callable:
    """One loop over a binary's RELA tables with a branch per type in `kinds`, formulas and fields inline;
    with `below`, each relocation is also checked against the lowest r_offset of its table.

    Generated (see hotpath) because a Python call per relocation, into a recipe's own
    function, costs more than the formula: an object has hundreds of relocations.
    """
    lines = ["for entries, base, delta, low, limit in tables:",
             "    for offset, kind, symbol, A in iter_unpack(entries):",
             "        at = offset + delta"]        # delta None (no window holds it): fails, and the precise loop names it
    branch = "if"
    names = {**_FIELD_NAMES, "_GiveUp": _GiveUp, "iter_unpack": RELA_ENTRY.iter_unpack}
    for kind in table:                       # the table's order: only the types this object uses
        if kind not in kinds:
            continue
        recipe = table[kind]
        lines.append(f"        {branch} kind == {kind}:")
        lines.append(f"            if offset + {recipe.size} > limit{' or offset < low' if below else ''}: raise _GiveUp")
        uses = recipe.inputs
        if "S" in uses:              # None + ... fails by itself; a formula without S must still refuse S = None
            lines.append("            S = symbol_address[symbol]")
        else:
            lines.append("            if symbol_address[symbol] is None: raise _GiveUp")
        if "P" in uses:
            lines.append("            P = base + offset")
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
    parameters = ("tables", "image", "symbol_address", "GOT", "got_offset", "Page")
    return generated_function("relocate", parameters, lines, names, f"relocation loop {sorted(kinds)}")
