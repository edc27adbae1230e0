"""Relocations as data: a recipe per psABI type, and the loops that apply them.

Each architecture module provides a table `{number: Recipe}`.  A recipe holds its
psABI formula as written in the spec ("S + A - P") and a field that says how the value
is stored (a data word, or bits of an instruction) with its range check.  From the two,
each recipe compiles a straight-line `apply` function, and `relocate_in_bulk` compiles
one loop per set of types an object uses, with every formula and field inline.  The
bulk loop gives up on anything unusual; `apply_relocations` then applies the recipes
one by one, and anything the table lacks, or a value that does not fit, is a
RelocationError naming the type, section, offset and symbol: never a warning.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

from .errors import RelocationError
from .objfile import RELA_ENTRY


class Inputs(NamedTuple):
    """The quantities a psABI formula may use."""

    S: int      # the symbol's address (its stub for an undefined symbol)
    A: int      # the addend
    P: int      # the address of the field being patched
    GOT: int    # the GOT's base address
    G: int      # the offset of the symbol's GOT slot from GOT
    Page: Callable[[int], int]


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


@dataclass(frozen=True)
class Field:
    """How a value is stored: source lines that read `value` and write `image` at `at`."""

    lines: tuple[str, ...]
    names: dict = field(default_factory=dict)     # what the lines refer to besides the struct helpers


def word(bits: int, signed: bool | None) -> Field:
    """A little-endian data field; signed=None accepts either interpretation (like R_X86_64_32 vs 32S).

    64-bit fields are not range-checked: address arithmetic wraps, as in a linker.
    """
    fmt = {64: "<Q", 32: "<I", 16: "<H"}[bits]
    mask = (1 << bits) - 1
    lines = []
    if bits != 64:
        low, high = _bounds(bits, signed)
        lines.append(f"if not {low} <= value <= {high}: raise _range_error(value, {bits}, {signed})")
    lines.append(f"pack_into({fmt!r}, image, at, value & {mask:#x})")
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
    lines.append("insn, = unpack_from('<I', image, at)")
    if place is not None:
        lines.append(f"insn = place(insn, scaled & {mask:#x})")
    else:
        lines.append(f"insn = (insn & {~(mask << shift) & 0xFFFFFFFF:#x}) | ((scaled & {mask:#x}) << {shift})")
    lines.append("pack_into('<I', image, at, insn & 0xFFFFFFFF)")
    return Field(tuple(lines), {"place": place} if place is not None else {})


def _compile(name: str, signature: str, prologue: list[str], body: tuple[str, ...], names: dict) -> Callable:
    """A function built from emu's own recipe text (never from object data)."""
    source = f"def {name}({signature}):\n" + "".join(f"    {line}\n" for line in (*prologue, *body))
    namespace = {"pack_into": struct.pack_into, "unpack_from": struct.unpack_from, "FieldOverflow": FieldOverflow,
                 "_range_error": _range_error, **names}
    exec(compile(source, f"<relocation {name}>", "exec"), namespace)
    return namespace[name]


@dataclass(frozen=True)
class Recipe:
    name: str
    size: int                 # bytes of the patched field
    formula: str              # the psABI formula over S, A, P, GOT, G and Page(x)
    field: Field
    uses_got: bool = False

    def __post_init__(self) -> None:
        value = [f"value = {self.formula}"]
        # apply(image, at, S, A, P, GOT, G, Page): the loader's one call per relocation
        object.__setattr__(self, "apply", _compile("apply", "image, at, S, A, P, GOT, G, Page", value, self.field.lines, self.field.names))
        object.__setattr__(self, "calc", _compile("calc", "i", ["S, A, P, GOT, G, Page = i"], (f"return {self.formula}",), {}))
        object.__setattr__(self, "patch", _compile("patch", "image, at, value", [], self.field.lines, self.field.names))

    def encode(self, old: bytes, value: int) -> bytes:
        """The field's new bytes, given its old ones (for tests and tools; the loader patches in place)."""
        buffer = bytearray(old)
        self.patch(buffer, 0, value)
        return bytes(buffer)


def apply_relocations(obj, image: bytearray, section_base: dict[int, int], section_offset: dict[int, int],
                      symbol_address: Callable[[int], int], got_base: int, got_slot: Callable[[int], int],
                      table: dict[int, Recipe], page: Callable[[int], int], image_base: int) -> None:
    """Patch `image` (the laid-out object) for every relocation of `obj`."""
    def where(rel) -> str:     # built only for error messages: the hot loop never formats
        return f"at {obj.section_name(rel.section)}+{rel.offset:#x} against {obj.symbol_label(rel.symbol)}"

    sections = obj.sections
    facts = _facts(table)
    current = -1                        # relocations come grouped by section: its facts are looked up once
    limit = base = start = 0
    for rel in obj.relocations:
        index, offset, kind, symbol, addend = rel
        try:
            apply, size, uses_got = facts[kind]
        except KeyError:
            raise RelocationError(f"unsupported relocation type {kind} {where(rel)}; emu's table for {obj.arch} does not implement it", path=obj.path) from None
        if index != current:
            section = sections[index]
            if section.type == 8:  # NOBITS
                raise RelocationError(f"relocation {table[kind].name} {where(rel)} patches a NOBITS section", path=obj.path)
            # a section that is not laid out has size 0 here: the size check below names it
            current, limit = index, section.size if index in section_base else 0
            base, start = section_base.get(index, 0), section_offset.get(index, 0)
        if offset + size > limit:
            raise RelocationError(f"relocation {table[kind].name} {where(rel)} patches {size} bytes past the end of the section ({limit:#x} bytes)", path=obj.path)
        S = symbol_address(symbol)
        try:
            apply(image, start + offset, S, addend, base + offset, got_base, got_slot(symbol) - got_base if uses_got else 0, page)
        except FieldOverflow as error:
            raise RelocationError(f"relocation {table[kind].name} {where(rel)} is out of range: {error}", path=obj.path) from None


def relocate_in_bulk(tables: list[tuple[int, bytes]], image: bytearray, addresses: list, section_base: list,
                     section_offset: list, section_limit: list, got_base: int, got_offsets: dict[int, int],
                     table: dict[int, Recipe], page: Callable[[int], int], kinds: frozenset[int] | None = None) -> bool:
    """Patch `image` for every relocation in one generated loop; False if one needs `apply_relocations`.

    `tables` are an object's RELA tables, (patched section index, packed entries).  The
    per-section lists are indexed by section number (None / -1 for a section that is
    not laid out or is NOBITS); `addresses` gives S per symbol index (None: it has none).
    The loop has one branch per relocation type the object uses, with the recipe's
    formula and field written inline: no Python call per relocation.  Anything unusual
    (an unknown type, a field past its section, a value out of range) makes it give up,
    and the caller runs `apply_relocations`, which applies the same recipes one by one
    and raises the exact error for the first relocation at fault.  Re-applying is safe:
    formulas read only S, A, P, GOT and G, and fields overwrite their bits.
    """
    kinds = types_used(tables) if kinds is None else kinds
    if not kinds <= table.keys():
        return False          # a type emu lacks: the one-by-one loop names it (and no loop is compiled per junk type)
    key = (id(table), kinds)
    loop = _BULK.get(key)
    if loop is None or loop[0] is not table:
        if len(_BULK) >= _BULK_MAX:
            _BULK.clear()
        loop = _BULK[key] = (table, _bulk_loop(table, kinds))
    try:
        loop[1](tables, image, addresses, section_base, section_offset, section_limit, got_base, got_offsets, page)
    except Exception:     # noqa: BLE001 - every failure is diagnosed by the one-by-one loop
        return False
    return True


def types_used(tables: list[tuple[int, bytes]]) -> frozenset[int]:
    """The relocation types in an object's RELA tables (each entry's r_type word, read in C)."""
    return frozenset().union(*[memoryview(entries).cast("I")[2::6] for _, entries in tables])


_BULK: dict[tuple[int, frozenset], tuple[dict, Callable]] = {}
_BULK_MAX = 256


class _GiveUp(Exception):
    """A relocation the bulk loop leaves to `apply_relocations` (it names the problem)."""


def _bulk_loop(table: dict[int, Recipe], kinds: frozenset[int]) -> Callable:
    lines = ["for index, entries in tables:",
             "    base, start, limit = section_base[index], section_offset[index], section_limit[index]",
             "    for offset, kind, symbol, A in iter_unpack(entries):",
             "        at = start + offset"]
    branch = "if"
    names = {"_GiveUp": _GiveUp, "iter_unpack": RELA_ENTRY.iter_unpack}
    for kind in table:                       # the table's order: only the types this object uses
        if kind not in kinds:
            continue
        recipe = table[kind]
        lines.append(f"        {branch} kind == {kind}:")
        lines.append(f"            if offset + {recipe.size} > limit: raise _GiveUp")     # limit -1: not laid out
        uses = compile(recipe.formula, "<formula>", "eval").co_names
        if "S" in uses:              # None + ... fails by itself; a formula without S must still refuse S = None
            lines.append("            S = addresses[symbol]")
        else:
            lines.append("            if addresses[symbol] is None: raise _GiveUp")
        if "P" in uses:
            lines.append("            P = base + offset")   # reached only past the limit check: the section is laid out
        if recipe.uses_got:
            lines.append("            G = got_offsets[symbol]")
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
    return _compile("relocate", "tables, image, addresses, section_base, section_offset, section_limit, GOT, "
                    "got_offsets, Page", [], tuple(lines), names)


_FACTS: dict[int, tuple[dict, dict, frozenset]] = {}    # id(table) -> (table, per-type facts, GOT types)


def _table_facts(table: dict[int, Recipe]) -> tuple[dict, dict, frozenset]:
    cached = _FACTS.get(id(table))
    if cached is None or cached[0] is not table:
        cached = _FACTS[id(table)] = (table, {kind: (r.apply, r.size, r.uses_got) for kind, r in table.items()},
                                      frozenset(kind for kind, r in table.items() if r.uses_got))
    return cached


def _facts(table: dict[int, Recipe]) -> dict[int, tuple[Callable, int, bool]]:
    """What the loop needs of each recipe, as one tuple per type (attribute reads cost per relocation)."""
    return _table_facts(table)[1]


def got_types(table: dict[int, Recipe]) -> frozenset[int]:
    """The relocation types of `table` whose symbol needs a GOT slot."""
    return _table_facts(table)[2]
