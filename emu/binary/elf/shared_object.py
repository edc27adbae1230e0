"""Read an ELF shared library (ET_DYN) into the same plain data as an object, plus what loading it needs.

`SharedObject` is an `ObjectFile` (emu.binary.elf.reader): its sections, and its symbols with values
counted from their section as in a relocatable object, so every tool that reads an object's tables
(discovery without an image, `inspect`, the image store) reads a library's the same way.  Its symbols are
the full `.symtab` when the library has one (each export's local `kernels_binary` is only there), else
`.dynsym` (a stripped library).  Beside them it keeps what `ld.so` would use: the PT_LOAD segments, the
RELRO range, the dynamic section, the dynamic symbols with their raw values, and the RELA tables
DT_RELA and DT_JMPREL point at.  Sections are read without LIEF: a library is read from its headers alone.
"""
from __future__ import annotations

import struct

from ...errors import ObjectFormatError
from ...support.sha256 import sha256 as sha256_of
from .dynamic import (DF_1_PIE, DT_FLAGS_1, DT_GNU_HASH, DT_HASH, DT_JMPREL, DT_NEEDED, DT_PLTREL, DT_PLTRELSZ, DT_RELA,
                      DT_RELAENT, DT_RELASZ, DT_SYMENT, DT_SYMTAB, PT_DYNAMIC, PT_GNU_RELRO, PT_LOAD, REFUSED_TAGS,
                      AddressMap, Dynamic, ProgramHeader, Table, dynamic_strings, has_interpreter, program_headers,
                      read_dynamic, sized_table, string_at)
from .reader import (ET_DYN, MACHINES, PASS, RELA_ENTRY, SHN_LORESERVE, SHT_NOBITS, SHT_NULL, SHT_SYMTAB, ObjectFile, Section,
                     Symbol, check_header, decode_symbols, elf_type)

SHT_DYNSYM = 11
_new = tuple.__new__


class SharedObject(ObjectFile):
    """A shared library's sections and symbols (as an object's) and its dynamic structure."""

    loads: list[ProgramHeader]          # PT_LOAD, in file order
    relro: tuple[int, int] | None       # [start, end) of PT_GNU_RELRO, made read-only once relocated
    dynamic: Dynamic
    dynamic_symbols: list[Symbol]       # .dynsym with raw values (addresses from the load base 0)
    dynamic_relocations: list[Table]    # the RELA tables DT_RELA and DT_JMPREL point at
    needed: list[str]                   # DT_NEEDED, in order
    symbol_table: str                   # ".symtab" or ".dynsym": where `symbols` come from
    section_addresses: list[int]


def is_shared_library(raw: bytes) -> bool:
    """ET_DYN without a program interpreter: a library, not a PIE executable (a cheap look at the headers)."""
    return elf_type(raw) == ET_DYN and not has_interpreter(raw)


def parse_shared_object(raw: bytes, path: str = "<bytes>", sha256: str | None = None) -> SharedObject:
    machine = check_header(raw, path)
    headers = program_headers(raw, path)
    loads = [header for header in headers if header.type == PT_LOAD]
    if not loads:
        raise ObjectFormatError("a shared library without a loadable segment (PT_LOAD)", path=path)
    dynamic_header = next((header for header in headers if header.type == PT_DYNAMIC), None)
    if dynamic_header is None:
        raise ObjectFormatError("a shared library without a dynamic section (PT_DYNAMIC)", path=path)
    dynamic = read_dynamic(raw, dynamic_header, path)
    flags = dynamic.get(DT_FLAGS_1) or 0
    if flags & DF_1_PIE:
        raise ObjectFormatError(f"this is a PIE executable (DT_FLAGS_1 has DF_1_PIE), not a shared library; {PASS}", path=path)
    for tag, what in REFUSED_TAGS.items():
        if tag in dynamic.entries:
            raise ObjectFormatError(f"the dynamic section at offset {dynamic.offset:#x} has {what}, which emu does not "
                                    "apply", path=path)
    addresses = AddressMap(loads, raw, path)
    strings = dynamic_strings(dynamic, addresses)
    sections, section_addresses = _sections(raw, path)
    dynamic_symbols = _dynamic_symbols(dynamic, addresses, strings, sections, section_addresses, path)
    tables = _relocation_tables(dynamic, addresses, sections, section_addresses, len(dynamic_symbols), path)
    symtab = next((s for s in sections if s.type == SHT_SYMTAB), None)
    if symtab is not None:
        symbols = _table_symbols(symtab, sections, path)
    else:
        symbols = dynamic_symbols
    obj = SharedObject(path=path, arch=MACHINES[machine], sha256=sha256 or sha256_of(raw).hexdigest(),
                       sections=sections, symbols=_from_sections(symbols, section_addresses), relocation_tables=[])
    relro = next(((h.vaddr, h.vaddr + h.memsz) for h in headers if h.type == PT_GNU_RELRO), None)
    obj.loads, obj.relro, obj.dynamic, obj.dynamic_symbols, obj.dynamic_relocations = loads, relro, dynamic, dynamic_symbols, tables
    obj.needed = [string_at(strings, offset, "DT_NEEDED", path) for offset in dynamic.entries.get(DT_NEEDED, [])]
    obj.symbol_table = ".symtab" if symtab is not None else ".dynsym"
    obj.section_addresses = section_addresses
    return obj


def _sections(raw: bytes, path: str) -> tuple[list[Section], list[int]]:
    """The section headers (bounds checked by check_header) with their names, and each one's address."""
    shoff, = struct.unpack_from("<Q", raw, 40)
    shnum, shstrndx = struct.unpack_from("<HH", raw, 60)
    headers = list(struct.iter_unpack("<IIQQQQIIQQ", raw[shoff:shoff + 64 * shnum]))
    names = b""
    if 0 < shstrndx < len(headers):
        _, _, _, _, offset, size, _, _, _, _ = headers[shstrndx]
        names = raw[offset:offset + size]
    sections, section_addresses = [], []
    for index, (name, kind, flags, address, offset, size, link, info, align, _) in enumerate(headers):
        label = _name(names, name) or f"section[{index}]"
        if kind not in (SHT_NOBITS, SHT_NULL) and offset + size > len(raw):
            raise ObjectFormatError(f"section {label} (offset {offset:#x}, size {size:#x}) runs past the end of the file "
                                    f"({len(raw)} bytes)", path=path)
        if align > 1 << 16 or align & (align - 1):
            raise ObjectFormatError(f"section {label} has an invalid alignment {align}", path=path)
        data = b"" if kind in (SHT_NOBITS, SHT_NULL) else raw[offset:offset + size]
        sections.append(_new(Section, (index, label if name or index else "", kind, flags, size, align or 1, link, info, data)))
        section_addresses.append(address)
    return sections, section_addresses


def _name(names: bytes, offset: int) -> str:
    end = names.find(b"\0", offset) if offset < len(names) else -1
    return names[offset:end].decode("utf-8", "replace") if end >= 0 else ""


def _checked_symbols(data: bytes, strings: bytes, sections: list[Section], table: str, path: str) -> list[Symbol]:
    """Symbol entries decoded, after checking that every name lies inside its string table."""
    if len(data) % 24:
        raise ObjectFormatError(f"{table} is {len(data):#x} bytes, not a whole number of 24-byte symbols", path=path)
    if data:
        names = memoryview(data).cast("I")[0::6]
        if max(names) >= max(len(strings), 1):
            number = next(i for i, offset in enumerate(names) if offset >= max(len(strings), 1))
            raise ObjectFormatError(f"symbol {number} of {table} (offset {24 * number:#x} in the table) names string "
                                    f"offset {names[number]:#x}, outside its string table ({len(strings):#x} bytes)", path=path)
    return decode_symbols(data, strings, max(len(sections), 1), path)


def _table_symbols(symtab: Section, sections: list[Section], path: str) -> list[Symbol]:
    if not 0 < symtab.link < len(sections):
        raise ObjectFormatError(f"section {symtab.name} links to string table index {symtab.link}, which does not exist", path=path)
    return _checked_symbols(symtab.data, sections[symtab.link].data, sections, symtab.name, path)


def _dynamic_symbols(dynamic: Dynamic, addresses: AddressMap, strings: bytes, sections: list[Section],
                     section_addresses: list[int], path: str) -> list[Symbol]:
    """.dynsym, found where DT_SYMTAB says, its length from its section header, DT_HASH or DT_GNU_HASH."""
    start = dynamic.get(DT_SYMTAB)
    if start is None:
        raise ObjectFormatError(f"the dynamic section at offset {dynamic.offset:#x} has no DT_SYMTAB", path=path)
    if (dynamic.get(DT_SYMENT) or 24) != 24:
        raise ObjectFormatError(f"DT_SYMENT is {dynamic.get(DT_SYMENT)}, expected 24", path=path)
    header = next((s for s, a in zip(sections, section_addresses) if s.type == SHT_DYNSYM and a == start), None)
    count = header.size // 24 if header is not None else _hashed_count(dynamic, addresses, path)
    return _checked_symbols(addresses.bytes_at(start, 24 * count, "the dynamic symbol table (DT_SYMTAB)"), strings,
                            sections, "the dynamic symbol table (DT_SYMTAB)", path)


def _hashed_count(dynamic: Dynamic, addresses: AddressMap, path: str) -> int:
    """How many dynamic symbols a library without section headers has: DT_HASH's nchain, or past DT_GNU_HASH's
    last chain."""
    if dynamic.get(DT_HASH) is not None:
        return struct.unpack("<I", addresses.bytes_at(dynamic.get(DT_HASH) + 4, 4, "DT_HASH"))[0]
    start = dynamic.get(DT_GNU_HASH)
    if start is None:
        raise ObjectFormatError("no .dynsym section header, DT_HASH or DT_GNU_HASH: nothing says how many dynamic "
                                "symbols the library has", path=path)
    buckets, first, blooms, _ = struct.unpack("<IIII", addresses.bytes_at(start, 16, "DT_GNU_HASH"))
    chains = start + 16 + 8 * blooms + 4 * buckets
    last = max(struct.unpack(f"<{buckets}I", addresses.bytes_at(start + 16 + 8 * blooms, 4 * buckets, "DT_GNU_HASH")), default=0)
    if last < first:
        return first
    for index in range(last, last + (1 << 16)):
        chain, = struct.unpack("<I", addresses.bytes_at(chains + 4 * (index - first), 4, "DT_GNU_HASH chain"))
        if chain & 1:
            return index + 1
    raise ObjectFormatError(f"DT_GNU_HASH at {start:#x} has a chain without an end", path=path)


def _relocation_tables(dynamic: Dynamic, addresses: AddressMap, sections: list[Section], section_addresses: list[int],
                       symbols: int, path: str) -> list[Table]:
    """The RELA tables of DT_RELA and DT_JMPREL, each named by the section that holds it, symbol indexes checked."""
    if (dynamic.get(DT_RELAENT) or 24) != 24:
        raise ObjectFormatError(f"DT_RELAENT is {dynamic.get(DT_RELAENT)}, expected 24", path=path)
    if dynamic.get(DT_JMPREL) is not None and (dynamic.get(DT_PLTREL) or DT_RELA) != DT_RELA:
        raise ObjectFormatError(f"DT_PLTREL is {dynamic.get(DT_PLTREL)}: the PLT relocations are not RELA", path=path)
    named = {address: section.name for section, address in zip(sections, section_addresses) if address and section.name}
    tables = []
    for start_tag, size_tag, tag_name in ((DT_RELA, DT_RELASZ, "DT_RELA"), (DT_JMPREL, DT_PLTRELSZ, "DT_JMPREL")):
        table = sized_table(dynamic, addresses, start_tag, size_tag, 24, f"the relocation table {tag_name}")
        if table is None or not table.data:
            continue
        table = table._replace(name=named.get(table.address, tag_name))
        if max(memoryview(table.data).cast("I")[3::6]) >= symbols:
            for number, (offset, _, symbol, _) in enumerate(RELA_ENTRY.iter_unpack(table.data)):
                if symbol >= symbols:
                    raise ObjectFormatError(f"relocation {number} in {table.name} (entry offset {24 * number:#x}, r_offset "
                                            f"{offset:#x}) names symbol index {symbol}; the dynamic symbol table has "
                                            f"{symbols}", path=path)
        tables.append(table)
    return tables


def _from_sections(symbols: list[Symbol], section_addresses: list[int]) -> list[Symbol]:
    """Symbols with values counted from their section's start, as in a relocatable object."""
    count = min(len(section_addresses), SHN_LORESERVE)
    return [_new(Symbol, (index, name, value - section_addresses[shndx] if 0 < shndx < count else value, size, kind,
                          binding, shndx)) for index, name, value, size, kind, binding, shndx in symbols]
