"""The ELF relocatable format (ET_REL): lay out an object's loadable sections, build its GOT and stub table,
relocate it.

The result is a `LoadedBinary` (emu.binary.image): plain bytes and addresses, no emulator.
Segments follow section flags the way a linker would: executable sections (RX),
read-only data and the GOT (R), writable data and zero-filled NOBITS (RW); each class
has a fixed region (see memory_map) so an emulator maps them once for every object.
"""
from __future__ import annotations

import struct
import zlib
from itertools import compress

from ...arch import architecture
from ...errors import ObjectFormatError
from ..image import PERM_R, PERM_W, PERM_X, LoadedBinary, Segment
from ..memory_map import (CODE_BASE, CODE_SLOT_TABLE, DATA_BASE, REGION_SIZE, RODATA_BASE, RODATA_PER_CODE, STUB_SLOTS,
                          code_slot_size, page_up, rodata_slot_address, stub_address)
from .reader import (ET_REL, SHF_ALLOC, SHF_EXECINSTR, SHF_WRITE, SHN_ABS, SHN_UNDEF, SHT_NOBITS, STT_FUNC, STT_SECTION,
                     ObjectFile, elf_type, parse_object)
from ..relocation import Places, RelocationPlan, Recipe, Window, relocate

REGION_BASE = {PERM_R | PERM_X: CODE_BASE, PERM_R: RODATA_BASE, PERM_R | PERM_W: DATA_BASE}
_PERM_NAMES = {PERM_R | PERM_X: "executable", PERM_R: "read-only", PERM_R | PERM_W: "writable"}
GOT_SYMBOL = "_GLOBAL_OFFSET_TABLE_"


class ElfRelocatable:
    """The format of the objects `export_to_c` writes: the first entry of emu.binary.formats' registry."""

    name = "elf-relocatable"

    @staticmethod
    def accepts(raw: bytes) -> bool:
        return elf_type(raw) == ET_REL

    @staticmethod
    def load(raw: bytes, path: str, sha256: str) -> LoadedBinary:
        return build_image(parse_object(raw, path, sha256))


def build_image(obj: ObjectFile) -> LoadedBinary:
    """Lay out and relocate a parsed object."""
    arch = architecture(obj.arch)
    groups = {PERM_R | PERM_X: [], PERM_R: [], PERM_R | PERM_W: []}
    for section in obj.sections:
        flags = section.flags
        if flags & SHF_ALLOC and section.size:
            if flags & SHF_WRITE:
                groups[PERM_R | PERM_W].append(section)      # W+X sections map RW
            else:
                groups[PERM_R | PERM_X if flags & SHF_EXECINSTR else PERM_R].append(section)

    table = arch.relocations
    # Each RELA table as 32-bit words (per entry: offset (2 words), type, symbol, addend (2)), read in C below.
    words = [(index, memoryview(entries).cast("I")) for index, entries in obj.relocation_tables]
    kinds = frozenset().union(*[entries[2::6] for _, entries in words])        # the relocation types used
    got_kinds = frozenset(kind for kind in kinds if kind in table and table[kind].uses_got)
    got_symbols = _got_symbols(words, got_kinds) if got_kinds else []
    section_base: dict[int, int] = {}       # section index -> address
    section_offset: dict[int, int] = {}     # section index -> offset in the packed image buffer
    segment_plan = []                       # (address, size, perms, buffer offset)
    packed = 0
    got_base = 0
    got_size = 16 + 8 * max(len(got_symbols), 1)           # its alignment and slots
    offsets = {perms: _offsets(sections) for perms, sections in groups.items()}    # in each class, from its start
    slot = _code_slot(obj, groups, offsets, words, bool(got_kinds), got_size)
    for perms, sections in groups.items():
        placed = offsets[perms]
        # every region and slot starts aligned past any section's alignment it takes: offsets from the start hold
        start = _region_base(perms, placed[-1], slot, got_size if perms == PERM_R else 0)
        for section, offset in zip(sections, placed):
            section_base[section.index] = start + offset
            section_offset[section.index] = packed + offset
        cursor = start + placed[-1]
        if perms == PERM_R:
            cursor = (cursor + 15) & ~15
            got_base = cursor
            got_offset = packed + cursor - start
            cursor += 8 * max(len(got_symbols), 1)
        size = page_up(cursor) - start
        if size > REGION_SIZE:
            names = ", ".join(s.name for s in sections)
            raise ObjectFormatError(f"the {_PERM_NAMES[perms]} sections ({names}) need {size:#x} bytes, more than emu maps for them ({REGION_SIZE:#x})", path=obj.path)
        if size:
            segment_plan.append((start, size, perms, packed))
            packed += size

    # One pass over the symbols: the undefined ones get stubs, the defined ones addresses.
    symbols = obj.symbols
    undefined: dict[str, None] = {}
    functions: dict[str, int] = {}
    data_symbols: dict[str, int] = {}
    sizes: dict[str, int] = {}
    duplicates: dict[str, list[int]] = {}    # a name defined more than once (locals of linked inputs) -> each address
    addresses: list = []                    # symbol index -> S; a name for an undefined symbol until stubs exist
    for _, name, value, size, kind, _, shndx in symbols:
        if shndx == SHN_UNDEF:
            addresses.append(name)
            if name and name != GOT_SYMBOL:
                undefined[name] = None
        elif shndx in section_base:
            address = section_base[shndx]
            if kind != STT_SECTION:
                address += value
                if name:
                    named = functions if kind == STT_FUNC else data_symbols
                    if name in named:
                        duplicates.setdefault(name, [named[name]]).append(address)
                    named[name] = address
                    sizes[name] = size
            addresses.append(address)
        else:
            addresses.append(value if shndx == SHN_ABS else None)     # None: no address (COMMON, not laid out)
    if len(undefined) + 1 > STUB_SLOTS:
        raise ObjectFormatError(f"{len(undefined)} undefined symbols; emu provides at most {STUB_SLOTS - 1} stubs", path=obj.path)
    stub_symbols = [""] + sorted(undefined)
    stub_of = {name: stub_address(slot) for slot, name in enumerate(stub_symbols)}
    stub_of[GOT_SYMBOL], stub_of[""] = got_base, 0          # symbol 0 (no symbol) has S = 0
    addresses = [stub_of[S] if S.__class__ is str else S for S in addresses]

    count = len(obj.sections)
    address_by_section, offset_by_section = [None] * count, [None] * count
    for index, base in section_base.items():
        address_by_section[index], offset_by_section[index] = base, section_offset[index]
    section_limit = [-1] * count            # bytes a relocation may patch: none outside laid-out PROGBITS
    image = bytearray(packed)
    for section in obj.sections:
        index = section.index
        if index in section_offset and section.type != SHT_NOBITS:
            offset = section_offset[index]
            image[offset:offset + len(section.data)] = section.data[:section.size]   # never resize the buffer
            section_limit[index] = section.size
    plan = plan_sections(obj, table, kinds, addresses, got_base, {index: 8 * slot for slot, index in enumerate(got_symbols)},
                         address_by_section, offset_by_section, section_limit)
    if got_symbols:                          # address arithmetic wraps
        struct.pack_into(f"<{len(got_symbols)}Q", image, got_offset,
                         *[plan.address_of(index) & 0xFFFF_FFFF_FFFF_FFFF for index in got_symbols])
    relocate(plan, image)

    view = memoryview(image)
    segments = [Segment(start, bytes(view[offset:offset + size]), perms) for start, size, perms, offset in segment_plan]
    return LoadedBinary(path=obj.path, arch=obj.arch, sha256=obj.sha256, format=ElfRelocatable.name, segments=segments,
                        functions=functions, data_symbols=data_symbols, sizes=sizes, stub_symbols=stub_symbols,
                        got_base=got_base, obj=obj, duplicates=duplicates)


def plan_sections(obj: ObjectFile, table: dict[int, Recipe], kinds: frozenset[int], symbol_address: list, got_base: int,
                  got_offset: dict[int, int], section_address: list, section_offset: list,
                  section_limit: list) -> RelocationPlan:
    """The relocation plan of an object whose sections are laid out: per section index its address (None: not
    laid out), its offset in the image buffer and the bytes a relocation may patch (-1: none).

    A section's RELA table patches that section: its places are the section's address plus r_offset, and
    the section is the window of the buffer they fall in.
    """
    sections = obj.sections
    places, windows = [], []
    for index, entries in obj.relocation_tables:
        base, limit = section_address[index], section_limit[index]
        if base is None:
            base, limit = 0, 0
        elif limit > 0:
            windows.append(Window(base, limit, section_offset[index]))
        refusal = "patches a NOBITS section" if sections[index].type == SHT_NOBITS else None
        places.append(Places(entries, base, base, base + max(limit, 0), index, refusal))
    return RelocationPlan(obj, table, kinds, symbol_address, got_base, got_offset, places, windows)


def _offsets(sections) -> list[int]:
    """Where each section starts, laid out in order from an aligned start, then where the last one ends."""
    offsets, end = [], 0
    for section in sections:
        offsets.append((end + section.align - 1) & ~(section.align - 1))
        end = offsets[-1] + section.size
    return offsets + [end]


def _code_slot(obj: ObjectFile, groups: dict[int, list], offsets: dict[int, list[int]], words: list,
               uses_got: bool, got_size: int) -> int | None:
    """The address of the slot of an object whose code fits one, chosen by what its relocated code is made of;
    None for larger code.

    Unicorn keeps translated code per address: objects whose code lives at different
    addresses can alternate in one emulator without invalidating each other's
    translations.  The slot comes from the code as compiled, its relocations and where
    each symbol they name sits in its class of sections (and the GOT, when they use
    one), so it is the same in every process (and in the persistent image store), and
    exports compiled alike (one DSL release, kernels of one shape) share a slot, where
    their relocated code is the same bytes: a new object reuses what Unicorn translated
    for the last.  Two objects with different code in one slot still run correctly (the
    machine drops the translations of the bytes that differ).  The class is the first whose
    slots hold the code (its size and its sections' alignment) and the read-only data with
    the GOT (`got_size` bytes), else the first that holds the code (its read-only data then
    goes to the fixed region, see _region_base).
    """
    code = groups[PERM_R | PERM_X]
    if not code:
        return None
    extent, align = offsets[PERM_R | PERM_X][-1], max(section.align for section in code)
    classes = [(size, count, first) for size, count, first in CODE_SLOT_TABLE if extent <= size and align <= size]
    if not classes:
        return None
    rodata = offsets[PERM_R][-1] + got_size
    size, count, first = next((c for c in classes if rodata <= c[0] * RODATA_PER_CODE), classes[0])
    shape = zlib.crc32(b"".join(section.data for section in code))
    placed = {}                                   # section index -> (class, offset in the class)
    for perms, sections in groups.items():
        placed.update((section.index, (perms, offset)) for section, offset in zip(sections, offsets[perms]))
        if perms == PERM_R and uses_got:
            placed[-1] = (perms, offsets[perms][-1])     # where the GOT follows
    code_indices = {section.index for section in code}
    symbols, named = obj.symbols, set()
    for index, entries in words:                  # `words`: each RELA table as 32-bit words
        shape = zlib.crc32(entries, shape)
        if index in code_indices:
            named.update(entries[3::6])
    places: list[int] = []                        # per symbol the code names: its class, its section's offset, its own
    for index in sorted(named):
        if index < len(symbols):
            symbol = symbols[index]
            places += [*placed.get(symbol.shndx, (0, 0)), symbol.value]
    places += placed.get(-1, ())
    return first + size * (zlib.crc32(struct.pack(f"<{len(places)}Q", *places), shape) % count)


def _region_base(perms: int, extent: int, slot: int | None, extra: int) -> int:
    """Where a permission class starts: the object's slot for its code and read-only data, else the fixed region.

    Read-only data (`extent` bytes laid out, and the GOT, `extra` bytes) goes to the read-only slot paired
    with the code's when it fits: objects alternating in one emulator then each keep their mapping,
    where one shared region had to be unmapped and mapped again whenever the next object's
    size differed, and code and data keep the same distance, so objects compiled alike
    still get the same relocated code.
    """
    if slot is not None:
        if perms == PERM_R | PERM_X:
            return slot
        if perms == PERM_R and extent + extra <= code_slot_size(slot) * RODATA_PER_CODE:
            return rodata_slot_address(slot)
    return REGION_BASE[perms]


def _got_symbols(words: list, kinds: frozenset[int]) -> list[int]:
    """Symbol indexes that relocations of `kinds` give a GOT slot, in first-use order (one slot per symbol)."""
    used: dict[int, None] = {}
    for _, entries in words:                           # per entry: offset (2 words), type, symbol, addend (2)
        used.update(dict.fromkeys(compress(entries[3::6], map(kinds.__contains__, entries[2::6]))))
    return list(used)
