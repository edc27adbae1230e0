"""A shared library's run-time structure read from its bytes: program headers, the dynamic section, and the
tables the dynamic section points at (dynamic symbols, strings, RELA tables), each checked before use.

Everything here is what `ld.so` reads when it loads a library, read the way it reads it (by virtual address,
through the PT_LOAD segments), and refused with the file, the structure and the offset when a header lies:
a table outside every segment or past the file, a size that is not a whole number of entries, a string
offset past its table.  Nothing is allocated by a size the file states before that size is checked.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import NamedTuple

from ...errors import ObjectFormatError

PT_LOAD, PT_DYNAMIC, PT_INTERP, PT_GNU_RELRO = 1, 2, 3, 0x6474E552
PF_X, PF_W, PF_R = 1, 2, 4
MAX_PROGRAM_HEADERS = 256            # a linker writes about ten
MAX_DYNAMIC_ENTRIES = 4096

# DT_* tags read here (the ELF gABI, and the GNU extensions a linker writes)
DT_NULL, DT_NEEDED, DT_PLTRELSZ, DT_PLTGOT, DT_HASH, DT_STRTAB, DT_SYMTAB, DT_RELA, DT_RELASZ, DT_RELAENT = range(10)
DT_STRSZ, DT_SYMENT, DT_INIT, DT_FINI, DT_SONAME, DT_RPATH = 10, 11, 12, 13, 14, 15
DT_REL, DT_PLTREL, DT_TEXTREL, DT_JMPREL = 17, 20, 22, 23
DT_INIT_ARRAY, DT_FINI_ARRAY, DT_INIT_ARRAYSZ, DT_FINI_ARRAYSZ, DT_RUNPATH = 25, 26, 27, 28, 29
DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ, DT_RELR = 32, 33, 36
DT_FLAGS_1, DT_GNU_HASH = 0x6FFFFFFB, 0x6FFFFEF5
DF_1_PIE = 0x0800_0000

# Tags whose relocations emu does not apply: the library is refused, by name, rather than run half relocated.
REFUSED_TAGS = {DT_REL: "DT_REL (relocations without addends; x86-64 and AArch64 libraries use RELA)",
                DT_RELR: "DT_RELR (packed relative relocations, -z pack-relative-relocs)"}


class ProgramHeader(NamedTuple):
    index: int
    type: int
    flags: int           # PF_* bits
    offset: int
    vaddr: int
    filesz: int
    memsz: int


class Table(NamedTuple):
    """A table the dynamic section points at: its name in messages, its address, and its bytes."""

    name: str
    address: int
    data: bytes


@dataclass
class Dynamic:
    """The dynamic section's entries that matter to loading: tag -> values, in file order."""

    offset: int                                  # where the section's entries start in the file
    entries: dict[int, list[int]] = field(default_factory=dict)

    def get(self, tag: int) -> int | None:
        values = self.entries.get(tag)
        return values[0] if values else None


def program_headers(raw: bytes, path: str) -> list[ProgramHeader]:
    """Every program header, checked to lie inside the file (the ELF identity is checked already)."""
    phoff, = struct.unpack_from("<Q", raw, 32)
    phentsize, phnum = struct.unpack_from("<HH", raw, 54)
    if not phnum:
        raise ObjectFormatError("a shared library without program headers (e_phnum 0): nothing says what to load", path=path)
    if phentsize != 56:
        raise ObjectFormatError(f"program header entry size is {phentsize}, expected 56", path=path)
    if phnum > MAX_PROGRAM_HEADERS:
        raise ObjectFormatError(f"{phnum} program headers; emu reads at most {MAX_PROGRAM_HEADERS}", path=path)
    if phoff + 56 * phnum > len(raw):
        raise ObjectFormatError(f"program header table at offset {phoff:#x} ({phnum} entries) runs past the end of the "
                                f"file ({len(raw)} bytes)", path=path)
    return [ProgramHeader(index, kind, flags, offset, vaddr, filesz, memsz)
            for index, (kind, flags, offset, vaddr, _, filesz, memsz, _) in
            enumerate(struct.iter_unpack("<IIQQQQQQ", raw[phoff:phoff + 56 * phnum]))]


def has_interpreter(raw: bytes) -> bool:
    """Whether an ET_DYN file names a program interpreter (a PIE executable); a cheap look, no checks."""
    phoff, = struct.unpack_from("<Q", raw, 32)
    phentsize, phnum = struct.unpack_from("<HH", raw, 54)
    if phentsize != 56 or phoff + 56 * phnum > len(raw):
        return False                       # the load says what is wrong with them
    return any(struct.unpack_from("<I", raw, phoff + 56 * index)[0] == PT_INTERP
               for index in range(min(phnum, MAX_PROGRAM_HEADERS)))


class AddressMap:
    """Virtual addresses to file offsets through the PT_LOAD segments, as the loader maps them."""

    def __init__(self, loads: list[ProgramHeader], raw: bytes, path: str):
        self.loads, self.raw, self.path = loads, raw, path

    def bytes_at(self, address: int, size: int, what: str) -> bytes:
        """`size` bytes of the file at virtual `address`, all inside one segment's file bytes, or the error naming `what`."""
        for load in self.loads:
            if load.vaddr <= address and address + size <= load.vaddr + load.filesz:
                offset = load.offset + address - load.vaddr
                return self.raw[offset:offset + size]
        raise ObjectFormatError(f"{what} at address {address:#x} ({size:#x} bytes) is not inside the file bytes of "
                                "any loadable segment", path=self.path)


def read_dynamic(raw: bytes, header: ProgramHeader, path: str) -> Dynamic:
    """The PT_DYNAMIC segment's entries up to DT_NULL, checked to lie in the file."""
    offset, size = header.offset, header.filesz
    if size % 16 or offset + size > len(raw):
        raise ObjectFormatError(f"the dynamic section (program header {header.index}, offset {offset:#x}, {size:#x} bytes) "
                                + ("is not a whole number of 16-byte entries" if size % 16 else
                                   f"runs past the end of the file ({len(raw)} bytes)"), path=path)
    dynamic = Dynamic(offset)
    for number, (tag, value) in enumerate(struct.iter_unpack("<qQ", raw[offset:offset + size])):
        if tag == DT_NULL:
            return dynamic
        if number >= MAX_DYNAMIC_ENTRIES:
            break
        dynamic.entries.setdefault(tag, []).append(value)
    raise ObjectFormatError(f"the dynamic section at offset {offset:#x} has no DT_NULL entry within its "
                            f"{min(size // 16, MAX_DYNAMIC_ENTRIES)} entries", path=path)


def sized_table(dynamic: Dynamic, addresses: AddressMap, start_tag: int, size_tag: int, entry: int, name: str) -> Table | None:
    """The table at DT_<start_tag> of DT_<size_tag> bytes (whole `entry`-byte entries), or None when absent."""
    start, size = dynamic.get(start_tag), dynamic.get(size_tag)
    if start is None and not size:
        return None
    if start is None or size is None:
        raise ObjectFormatError(f"the dynamic section at offset {dynamic.offset:#x} gives {name} "
                                + ("a size but no address" if start is None else "an address but no size"), path=addresses.path)
    if size % entry:
        raise ObjectFormatError(f"{name} at address {start:#x} is {size:#x} bytes, not a whole number of {entry}-byte "
                                "entries", path=addresses.path)
    return Table(name, start, addresses.bytes_at(start, size, name))


def dynamic_strings(dynamic: Dynamic, addresses: AddressMap) -> bytes:
    """The dynamic string table (DT_STRTAB, DT_STRSZ)."""
    table = sized_table(dynamic, addresses, DT_STRTAB, DT_STRSZ, 1, "the dynamic string table (DT_STRTAB)")
    return table.data if table is not None else b""


def string_at(strings: bytes, offset: int, what: str, path: str) -> str:
    """The NUL-terminated string at `offset` of a string table, or the error that names `what` asked for it."""
    end = strings.find(b"\0", offset) if offset < len(strings) else -1
    if end < 0:
        raise ObjectFormatError(f"{what} names string offset {offset:#x}, outside the dynamic string table "
                                f"({len(strings):#x} bytes)", path=path)
    return strings[offset:end].decode("utf-8", "replace")
