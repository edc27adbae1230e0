"""Lay out an object's loadable sections, build its GOT and stub table, relocate it.

The result, an `Image`, is plain bytes and addresses: it does not depend on an
emulator, so one parsed and relocated object can be mapped into any number of runs.
Segments follow section flags the way a linker would: executable sections (RX), then
read-only data and the GOT (R), then writable data and zero-filled NOBITS (RW).
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from .arch import architecture
from .errors import ObjectFormatError, RelocationError
from .memory_map import IMAGE_BASE, IMAGE_LIMIT, STUB_SLOTS, page_up, stub_address
from .objfile import SHN_ABS, SHN_COMMON, SHN_UNDEF, SHT_NOBITS, STT_FUNC, STT_SECTION, ObjectFile
from .relocation import apply_relocations

PERM_R, PERM_W, PERM_X = 1, 2, 4
GOT_SYMBOL = "_GLOBAL_OFFSET_TABLE_"


@dataclass(frozen=True)
class Segment:
    address: int
    data: bytes
    perms: int           # PERM_* bits, the same values as Unicorn's UC_PROT_*


@dataclass
class Image:
    obj: ObjectFile
    segments: list[Segment]
    stub_symbols: list[str]                 # slot index -> undefined symbol name ('' for slot 0, the sentinel)
    functions: dict[str, int]               # defined function name -> address
    data_symbols: dict[str, int]            # defined data object name -> address
    got_base: int
    extras: dict = field(default_factory=dict)   # per-image facts other parts compute once (vector sites)
    _starts: list[int] = field(default_factory=list, repr=False)
    _names: list[str] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        located = sorted((address, name) for name, address in self.functions.items())
        self._starts = [address for address, _ in located]
        self._names = [name for _, name in located]

    def locate(self, address: int) -> str:
        """`function+0xoff` for a code address, or the stub's symbol, or a raw address."""
        from .memory_map import RETURN_SENTINEL, STUB_BASE, STUB_SLOT
        if address == RETURN_SENTINEL:
            return "entry (tail call)"      # a tail call returns straight to emu's return sentinel
        slot = (address - STUB_BASE) // STUB_SLOT
        if 0 < slot < len(self.stub_symbols) and address >= STUB_BASE:
            return f"{self.stub_symbols[slot]} (stub)"
        index = bisect.bisect_right(self._starts, address) - 1
        if index >= 0 and address < self.image_end:
            return f"{self._names[index]}+{address - self._starts[index]:#x}"
        return f"{address:#x}"

    @property
    def image_end(self) -> int:
        last = self.segments[-1] if self.segments else None
        return last.address + len(last.data) if last else IMAGE_BASE


def build_image(obj: ObjectFile) -> Image:
    arch = architecture(obj.arch)
    groups = {PERM_R | PERM_X: [], PERM_R: [], PERM_R | PERM_W: []}
    for section in obj.sections:
        if section.alloc and section.size:
            perms = PERM_R | (PERM_X if section.executable else 0) | (PERM_W if section.writable else 0)
            groups[perms & ~PERM_X if perms & PERM_W else perms].append(section)   # W+X sections map RW

    got_symbols = _got_symbols(obj, arch.relocations)
    section_base: dict[int, int] = {}
    section_offset: dict[int, int] = {}
    segment_plan = []
    cursor = IMAGE_BASE
    image_size = 0
    got_base = 0
    for perms, sections in groups.items():
        start = cursor
        for section in sections:
            cursor = (cursor + section.align - 1) & ~(section.align - 1)
            section_base[section.index] = cursor
            cursor += section.size
        if perms == PERM_R:
            cursor = (cursor + 15) & ~15
            got_base = cursor
            cursor += 8 * max(len(got_symbols), 1)
        if cursor > start:
            segment_plan.append((start, page_up(cursor) - start, perms))
            cursor = page_up(cursor)
        image_size = cursor - IMAGE_BASE
        if cursor > IMAGE_LIMIT:
            raise ObjectFormatError(f"the loadable sections need {image_size:#x} bytes, more than emu maps ({IMAGE_LIMIT - IMAGE_BASE:#x})", path=obj.path)

    undefined = sorted({s.name for s in obj.symbols if s.shndx == SHN_UNDEF and s.name and s.name != GOT_SYMBOL})
    if len(undefined) + 1 > STUB_SLOTS:
        raise ObjectFormatError(f"{len(undefined)} undefined symbols; emu provides at most {STUB_SLOTS - 1} stubs", path=obj.path)
    stub_symbols = [""] + undefined
    stub_of = {name: stub_address(slot) for slot, name in enumerate(stub_symbols) if slot}

    def symbol_address(index: int) -> int:
        symbol = obj.symbols[index]
        if symbol.shndx == SHN_UNDEF:
            if symbol.name == GOT_SYMBOL:
                return got_base
            return stub_of[symbol.name] if symbol.name else 0
        if symbol.shndx == SHN_ABS:
            return symbol.value
        if symbol.shndx == SHN_COMMON or symbol.shndx not in section_base:
            where = "a COMMON symbol" if symbol.shndx == SHN_COMMON else f"in the non-loaded section {obj.section_name(symbol.shndx)}"
            raise RelocationError(f"a relocation refers to {obj.symbol_label(index)}, {where}, which emu does not lay out", path=obj.path)
        return section_base[symbol.shndx] + (0 if symbol.type == STT_SECTION else symbol.value)

    got_index = {index: slot for slot, index in enumerate(got_symbols)}

    def got_slot(index: int) -> int:
        return got_base + 8 * got_index[index]

    image = bytearray(image_size)
    for section in obj.sections:
        if section.index in section_base and section.type != SHT_NOBITS:
            offset = section_base[section.index] - IMAGE_BASE
            image[offset:offset + section.size] = section.data
    for index in got_symbols:
        offset = got_slot(index) - IMAGE_BASE
        image[offset:offset + 8] = symbol_address(index).to_bytes(8, "little")
    offsets = {index: base - IMAGE_BASE for index, base in section_base.items()}
    apply_relocations(obj, image, section_base, offsets, symbol_address, got_base, got_slot,
                      arch.relocations, arch.page, IMAGE_BASE)

    segments = [Segment(start, bytes(image[start - IMAGE_BASE:start - IMAGE_BASE + size]), perms)
                for start, size, perms in segment_plan]
    functions, data_symbols = {}, {}
    for symbol in obj.symbols:
        if symbol.name and symbol.shndx in section_base and symbol.type != STT_SECTION:
            target = functions if symbol.type == STT_FUNC else data_symbols
            target[symbol.name] = section_base[symbol.shndx] + symbol.value
    return Image(obj, segments, stub_symbols, functions, data_symbols, got_base)


def _got_symbols(obj: ObjectFile, table) -> list[int]:
    """Symbol indexes that need a GOT slot, in first-use order (one slot per symbol)."""
    seen: dict[int, None] = {}
    for rel in obj.relocations:
        recipe = table.get(rel.type)
        if recipe is not None and recipe.uses_got:
            seen.setdefault(rel.symbol, None)
    return list(seen)
