"""The ELF shared-library format (ET_DYN): a library's PT_LOAD segments at one base, its dynamic relocations
applied, its imports bound to stub slots; the result is a `LoadedBinary` like an object's.

The library is laid out as `ld.so` maps it: every PT_LOAD at base + p_vaddr (its real offsets, so
PC-relative code and data keep their distances), zero-filled past p_filesz, with its own permissions, and
the GNU_RELRO pages read-only once relocated.  The base puts the lowest page at `LIBRARY_BASE`, inside the
fixed regions (emu.binary.memory_map), so the whole library must fit `LIBRARY_SPAN`; a larger span is
refused before anything is allocated.  The dynamic relocations (DT_RELA, DT_JMPREL) run through the same
relocation plans and loops as an object's (emu.binary.relocation), with each architecture's
`dynamic_relocations` table; any other type is refused by name.  An undefined dynamic symbol gets a stub
slot, as an object's undefined symbol does, so a PLT call to `cudaFuncSetAttribute` reaches the stub
machinery (and stops as a missing stub when nothing models it).  What dlopen runs before and after the
loaders (DT_INIT, DT_INIT_ARRAY, DT_FINI, DT_FINI_ARRAY) is not run; each is listed with the reason
(`extras["initializers"]`, see `initializers`).
"""
from __future__ import annotations

import struct
from operator import itemgetter

from ...arch import architecture
from ...errors import ObjectFormatError, RelocationError
from ..image import PERM_R, PERM_W, PERM_X, LoadedBinary, Segment
from ..memory_map import CODE_BASE, CODE_SLOTS_BASE, PAGE, STUB_SLOTS, page_up, stub_address
from ..relocation import Places, RelocationPlan, Window, relocate
from .dynamic import (DT_FINI, DT_FINI_ARRAY, DT_FINI_ARRAYSZ, DT_INIT, DT_INIT_ARRAY, DT_INIT_ARRAYSZ, DT_PLTGOT,
                      DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ, PF_W, PF_X)
from .reader import SHF_ALLOC, SHN_ABS, SHN_LORESERVE, SHN_UNDEF, STT_FUNC, STT_SECTION, ObjectFile
from .shared_object import SharedObject, is_shared_library, parse_shared_object

LIBRARY_BASE = CODE_BASE                       # where the library's lowest page goes
LIBRARY_SPAN = CODE_SLOTS_BASE - CODE_BASE     # 48 MiB: the fixed regions, below the objects' code slots


class ElfShared:
    """Shared libraries linked from DSL exports: the second entry of emu.binary.formats' registry."""

    name = "elf-shared"

    @staticmethod
    def accepts(raw: bytes) -> bool:
        return is_shared_library(raw)

    @staticmethod
    def load(raw: bytes, path: str, sha256: str) -> LoadedBinary:
        return build_shared_image(parse_shared_object(raw, path, sha256), raw)


def build_shared_image(obj: SharedObject, raw: bytes) -> LoadedBinary:
    """Lay out, relocate and bind a library parsed from `raw`."""
    low, high = _span(obj, len(raw))
    base = LIBRARY_BASE - low
    image = bytearray(high - low)
    for load in obj.loads:
        image[load.vaddr - low:load.vaddr - low + load.filesz] = raw[load.offset:load.offset + load.filesz]
    stub_symbols = [""] + sorted({s.name for s in obj.dynamic_symbols if s.shndx == SHN_UNDEF and s.name})
    if len(stub_symbols) > STUB_SLOTS:
        raise ObjectFormatError(f"{len(stub_symbols) - 1} undefined dynamic symbols; emu provides at most "
                                f"{STUB_SLOTS - 1} stubs", path=obj.path)
    stub_of = {name: stub_address(slot) for slot, name in enumerate(stub_symbols)}
    addresses = [base] + [_address(symbol, base, stub_of) for symbol in obj.dynamic_symbols[1:]]   # symbol 0: B
    _relocate(obj, base, low, high, addresses, image)
    functions, data_symbols, sizes, duplicates = _defined(obj, base)
    segments = [Segment(base + start, bytes(image[start - low:end - low]), perms) for start, end, perms in _pages(obj)]
    pltgot = obj.dynamic.get(DT_PLTGOT)
    binary = LoadedBinary(path=obj.path, arch=obj.arch, sha256=obj.sha256, format=ElfShared.name, segments=segments,
                          functions=functions, data_symbols=data_symbols, sizes=sizes, stub_symbols=stub_symbols,
                          got_base=base + pltgot if pltgot else 0, obj=obj, duplicates=duplicates)
    binary.extras["library"] = {"base": base, "needed": obj.needed, "symbol_table": obj.symbol_table,
                                "initializers": initializers(obj, base, image, low, binary)}
    return binary


def _span(obj: SharedObject, file_size: int) -> tuple[int, int]:
    """[low, high): the pages every PT_LOAD covers, each checked against the file and the others."""
    path, previous = obj.path, None
    for load in sorted(obj.loads, key=lambda h: h.vaddr):
        where = f"loadable segment {load.index} (program header {load.index}, address {load.vaddr:#x})"
        if load.filesz > load.memsz:
            raise ObjectFormatError(f"{where} has {load.filesz:#x} bytes in the file but {load.memsz:#x} in memory", path=path)
        if load.offset + load.filesz > file_size:
            raise ObjectFormatError(f"{where} reads {load.filesz:#x} bytes at offset {load.offset:#x}, past the end of "
                                    f"the file ({file_size} bytes)", path=path)
        if load.memsz > LIBRARY_SPAN:
            raise ObjectFormatError(f"{where} asks for {load.memsz:#x} bytes of memory; emu maps a library of at most "
                                    f"{LIBRARY_SPAN >> 20} MiB", path=path)
        if previous is not None and previous.vaddr + previous.memsz > load.vaddr:
            raise ObjectFormatError(f"loadable segments {previous.index} ({previous.vaddr:#x}, {previous.memsz:#x} bytes) "
                                    f"and {load.index} ({load.vaddr:#x}) overlap", path=path)
        previous = load
    low = min(load.vaddr for load in obj.loads) & ~(PAGE - 1)
    high = page_up(max(load.vaddr + load.memsz for load in obj.loads))
    if high - low > LIBRARY_SPAN:
        raise ObjectFormatError(f"the loadable segments span {high - low:#x} bytes; emu maps a library of at most "
                                f"{LIBRARY_SPAN >> 20} MiB", path=path)
    return low, high


def _address(symbol, base: int, stub_of: dict[str, int]) -> int:
    """S of a dynamic symbol: its stub for an import, else where the library defines it."""
    if symbol.shndx == SHN_UNDEF:
        return stub_of.get(symbol.name, 0)
    return symbol.value if symbol.shndx == SHN_ABS else base + symbol.value


def _relocate(obj: SharedObject, base: int, low: int, high: int, addresses: list[int], image: bytearray) -> None:
    """Apply DT_RELA and DT_JMPREL: each type checked against the architecture's dynamic table, each place
    against the segments, then one plan through emu.binary.relocation's loops."""
    arch = architecture(obj.arch)
    table = arch.dynamic_relocations
    places, kinds = [], set()
    for number, dynamic_table in enumerate(obj.dynamic_relocations):
        words = memoryview(dynamic_table.data).cast("I")
        used = set(words[2::6])
        for kind in used - table.keys():
            entry = list(words[2::6]).index(kind)
            offset, = struct.unpack_from("<Q", dynamic_table.data, 24 * entry)
            raise RelocationError(f"relocation {arch.relocation_name(kind)} at {dynamic_table.name}+{24 * entry:#x} "
                                  f"(r_offset {offset:#x}) is not one emu applies: a shared library may carry "
                                  f"{', '.join(recipe.name for recipe in table.values())} only", path=obj.path)
        _check_places(obj, dynamic_table)
        kinds |= used
        places.append(Places(dynamic_table.data, base, base + low, base + high, number))
    if not places:
        return
    names = ObjectFile(obj.path, obj.arch, obj.sha256, [_TableName(t.name) for t in obj.dynamic_relocations],
                       obj.dynamic_symbols, relocation_tables=[])
    plan = RelocationPlan(names, table, frozenset(kinds), addresses, 0, {}, places, [Window(base + low, high - low, 0)])
    relocate(plan, image)


class _TableName:
    """What the relocation plan's messages name a dynamic table by (its `section`: the table's number)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


def _check_places(obj: SharedObject, table) -> None:
    """Every r_offset patches 8 bytes inside one PT_LOAD's memory (a place between segments is refused)."""
    offsets = memoryview(table.data).cast("Q")[0::3]
    loads = sorted(obj.loads, key=lambda h: h.vaddr)
    lowest, highest = min(offsets), max(offsets)
    if any(load.vaddr <= lowest and highest + 8 <= load.vaddr + load.memsz for load in loads):
        return                                            # the usual case: one segment holds them all
    for entry, offset in enumerate(offsets):
        if not any(load.vaddr <= offset and offset + 8 <= load.vaddr + load.memsz for load in loads):
            raise RelocationError(f"relocation {entry} in {table.name} (entry offset {24 * entry:#x}) patches r_offset "
                                  f"{offset:#x}, which no loadable segment holds", path=obj.path)


def _defined(obj: SharedObject, base: int) -> tuple[dict, dict, dict, dict]:
    """The library's defined symbols by name (functions, data objects), their sizes, and names defined twice."""
    functions: dict[str, int] = {}
    data_symbols: dict[str, int] = {}
    sizes: dict[str, int] = {}
    duplicates: dict[str, list[int]] = {}
    sections, section_addresses = obj.sections, obj.section_addresses
    count = len(sections)
    for _, name, value, size, kind, _, shndx in obj.symbols:
        if not name or kind == STT_SECTION or not 0 < shndx < min(count, SHN_LORESERVE) or not sections[shndx].flags & SHF_ALLOC:
            continue
        address = base + section_addresses[shndx] + value
        named = functions if kind == STT_FUNC else data_symbols
        if name in named:
            duplicates.setdefault(name, [named[name]]).append(address)
        named[name] = address
        sizes[name] = size
    return functions, data_symbols, sizes, duplicates


def _pages(obj: SharedObject) -> list[tuple[int, int, int]]:
    """[start, end, perms) of every run of pages, from the load base 0: each PT_LOAD's pages with its
    permissions, GNU_RELRO's pages read-only, runs of one permission merged; pages two segments with
    different permissions share are refused (emu maps each page with one set)."""
    runs = []
    for load in obj.loads:
        if not load.memsz:
            continue                  # maps nothing
        perms = PERM_R | (PERM_W if load.flags & PF_W else 0) | (PERM_X if load.flags & PF_X else 0)
        runs.append((load.vaddr & ~(PAGE - 1), page_up(load.vaddr + load.memsz), perms, load.index))
    if obj.relro is not None:
        start, end = obj.relro[0] & ~(PAGE - 1), obj.relro[1] & ~(PAGE - 1)      # as glibc's _dl_protect_relro
        split = []
        for low, high, perms, index in runs:
            cuts = sorted({low, high, min(max(start, low), high), min(max(end, low), high)})
            split += [(a, b, perms & ~PERM_W if start <= a and b <= end else perms, index) for a, b in zip(cuts, cuts[1:])]
        runs = split
    merged: list[list[int]] = []
    for low, high, perms, index in sorted(runs, key=itemgetter(0)):
        if merged and low < merged[-1][1] and perms != merged[-1][2]:
            raise ObjectFormatError(f"loadable segment {index} shares the page at {low:#x} with segment {merged[-1][3]}, with "
                                    "other permissions; emu maps each page with one set", path=obj.path)
        if merged and low <= merged[-1][1] and perms == merged[-1][2]:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high, perms, index])
    return [(low, high, perms) for low, high, perms, _ in merged]


_RUN_REASON = ("not run: emu runs the export's loaders, not what dlopen runs before them; in a library linked from "
               "DSL exports these are the C runtime's (_init, frame_dummy), which do nothing a loader observes")
_FINI_REASON = "not run: dlclose runs it, after the loaders"


def initializers(obj: SharedObject, base: int, image: bytearray, low: int, binary: LoadedBinary) -> list[dict]:
    """What dlopen and dlclose would run, each with where it is, the function that starts there (None in a stripped
    library), and why emu does not run it."""
    found = []
    for tag, label, reason in ((DT_INIT, "DT_INIT", _RUN_REASON), (DT_FINI, "DT_FINI", _FINI_REASON)):
        if obj.dynamic.get(tag) is not None:
            found.append((label, base + obj.dynamic.get(tag), reason))
    for start, size, label, reason in ((DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ, "DT_PREINIT_ARRAY", _RUN_REASON),
                                       (DT_INIT_ARRAY, DT_INIT_ARRAYSZ, "DT_INIT_ARRAY", _RUN_REASON),
                                       (DT_FINI_ARRAY, DT_FINI_ARRAYSZ, "DT_FINI_ARRAY", _FINI_REASON)):
        address, length = obj.dynamic.get(start), obj.dynamic.get(size) or 0
        if address is None:
            continue
        offset = address - low
        if length % 8 or offset < 0 or offset + length > len(image):
            raise ObjectFormatError(f"{label} at {address:#x} ({length:#x} bytes) is not a whole array of addresses "
                                    "inside the loadable segments", path=obj.path)
        for number, (pointer,) in enumerate(struct.iter_unpack("<Q", image[offset:offset + length])):
            found.append((f"{label}[{number}]", pointer, reason))
    starts = {address: name for name, address in binary.functions.items()}
    return [{"entry": label, "address": address, "function": starts.get(address), "run": False, "reason": reason}
            for label, address, reason in found]
